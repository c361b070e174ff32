"""Request and response bodies (pydantic), OpenAI-shaped where OpenAI defines them.

Kept apart from the engine's types: the server converts at the service boundary, so the
wire format changes only here."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# -- OpenAI: models -----------------------------------------------------------------------


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "cantata"
    description: str = ""


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


# -- OpenAI: chat completions -------------------------------------------------------------


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(p.text or "" for p in self.content if p.type == "text")


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatRequest(BaseModel):
    # Sampling options (temperature, max_tokens, ...) are accepted and ignored: each role's
    # settings come from its pipeline, not from the client.
    model_config = ConfigDict(extra="allow")
    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: str | None = None


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    prompt_tokens_details: dict[str, int] | None = None


class AgentSummary(BaseModel):
    name: str
    status: str
    instance: str | None
    started_s: float | None
    finished_s: float | None
    attempts: int
    error: str | None


class CantataTurnInfo(BaseModel):
    """What an OpenAI response carries besides the reply, in its `cantata` field."""

    turn_id: int
    turn: int
    session: str
    status: str
    early: str | None
    early_agent: str | None
    final_agent: str | None
    agents: list[AgentSummary]


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class Choice(BaseModel):
    index: int = 0
    message: AssistantMessage
    finish_reason: str = "stop"


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: Usage
    cantata: CantataTurnInfo


# -- REST ---------------------------------------------------------------------------------


class AgentNode(BaseModel):
    name: str
    kind: Literal["model", "function"]
    model: str | None
    instance: str | None
    reads: list[str]
    required: list[str]
    deliver: str | None
    priority: int


class PipelineInfo(BaseModel):
    name: str
    description: str
    agents: list[AgentNode]
    edges: list[tuple[str, str]] = Field(description="(from, to): `to` reads what `from` wrote.")
    order: list[str]
    critical_path: list[str] = Field(description="The longest chain of reads, early agent first.")


class SessionSummary(BaseModel):
    id: str
    user: str
    pipeline: str
    created_at: float | None = None
    turns: int
    summary: str = ""


class TurnSummary(BaseModel):
    turn_id: int
    number: int
    session: str
    status: str
    started_at: float | None
    finished_at: float | None
    message: str
    reply: str | None


class SessionDetail(SessionSummary):
    turn_list: list[TurnSummary]


class TurnDetail(BaseModel):
    """The same shape as `cantata run --json`, plus ids the API links by."""

    model_config = ConfigDict(extra="allow")
    turn_id: int
    pipeline: str
    user: str
    session: str
    turn: int
    status: str
    message: str
    early: dict[str, Any] | None
    final: dict[str, Any] | None
    agents: list[dict[str, Any]]
    conflicts: list[dict[str, Any]]
    started_at: float | None
    finished_at: float | None


class BlackboardEntry(BaseModel):
    agent: str
    status: str
    output: Any
    error: str | None


class Blackboard(BaseModel):
    turn_id: int
    entries: list[BlackboardEntry]
    conflicts: list[dict[str, Any]]


class InstanceInfo(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    backend: str
    model: str | None
    url: str | None
    serves: list[str]
    max_concurrency: int
    queued_now: int
    running_now: int
    live: dict[str, Any]
    health: dict[str, Any] | None = Field(None, description="With ?check=true: reachable, error.")
    server: dict[str, Any] | None = Field(None, description="With ?check=true: the server's own metrics, if any.")


class Memory(BaseModel):
    user: str
    memory: dict[str, Any] = Field(description="Each memory agent's latest output, by pipeline and agent.")
    sessions: int


class Deleted(BaseModel):
    user: str
    sessions_deleted: int


class PlanRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pipeline: str
    hardware: str
    models: list[str] = Field(default_factory=list, description="[ROLE=]NAME[:QUANT], as `cantata plan --model`.")
    context: int | None = Field(None, gt=0)
    concurrency: int = Field(1, gt=0)


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    version: str
    turns_running: int
    auth: Literal["keys", "open"]


class WhoAmI(BaseModel):
    user: str
    admin: bool
    auth: Literal["keys", "open"]
