"""Request and response bodies (pydantic), OpenAI-shaped where OpenAI defines them.

Kept apart from the engine's types: the server converts at the service boundary, so the
wire format changes only here."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cantata.planner.plan import Plan
from cantata.turn import TurnQuality

# -- errors ------------------------------------------------------------------------------


class ErrorDetail(BaseModel):
    message: str = Field(description="What is wrong and where, in one line.")
    type: str = Field(description="OpenAI's error type for the status, e.g. not_found_error.")
    code: str | None = Field(None, description="A stable code, e.g. model_not_found, or the error's class.")


class ErrorResponse(BaseModel):
    """Every error the server answers, whatever the status: OpenAI's shape."""

    error: ErrorDetail


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
    """What an OpenAI response carries besides the reply, in its `cantata` field: both
    replies, each in a field of its own, whatever `message.content` shows."""

    turn_id: int
    turn: int
    session: str
    status: str
    early: str | None
    merged: str | None = Field(description="The final agent's reply; null if it failed.")
    early_agent: str | None
    final_agent: str | None
    agents: list[AgentSummary]
    quality: TurnQuality = Field(description="Whether the replies came from Cantata's repairs (see /api/turns).")
    approvals: list[int] = Field(
        default_factory=list,
        description="A `waiting` turn's pending approvals: decide them at /api/approvals/{id} and it resumes.",
    )


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


# -- OpenAI: chat completion chunks (a turn as a stream) -----------------------------------
# Serialised with `exclude_unset`: a chunk holds what its builder set, so a progress chunk
# has an empty delta and no `usage`, and `finish_reason` is null until the last chunk.

Phase = Literal["early", "separator", "merged"]


class DeltaMessage(BaseModel):
    role: Literal["assistant"] | None = None
    content: str | None = None


class ChunkChoice(BaseModel):
    index: int
    delta: DeltaMessage
    finish_reason: Literal["stop"] | None


class TextInfo(BaseModel):
    """Which reply a chunk's text belongs to. `separator` is the blank line a plain client
    sees between the early and the merged reply; a client that draws each reply apart
    skips it, and never has to split text."""

    phase: Phase


class TurnStartInfo(BaseModel):
    event: Literal["turn_started"]
    session: str
    turn_id: int
    done: int
    total: int


class ProgressInfo(BaseModel):
    """An agent's progress: what happened, and how many of the turn's agents are done."""

    event: str
    agent: str | None
    at_s: float
    done: int
    total: int
    data: dict[str, Any] | None = Field(None, description="A conflict's details.")


class TurnErrorInfo(BaseModel):
    error: str | None
    session: str
    turn_id: int


class StatusData(BaseModel):
    description: str
    done: bool


class StatusEvent(BaseModel):
    """Open WebUI's status line (with `X-Cantata-Status-Events: 1`)."""

    type: Literal["status"]
    data: StatusData


ChunkInfo = TurnStartInfo | TextInfo | ProgressInfo | CantataTurnInfo | TurnErrorInfo


class ChatCompletionChunk(BaseModel):
    id: str
    object: Literal["chat.completion.chunk"]
    created: int
    model: str
    choices: list[ChunkChoice]
    usage: Usage | None = None
    cantata: ChunkInfo | None = Field(
        None, description="The phase of the chunk's text, the agents' progress, and at the end the turn."
    )
    event: StatusEvent | None = None


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
    scales: dict[str, tuple[float, float]] = Field(
        default_factory=dict,
        description="The numbers of its output that lie on a bounded scale, by field path (e.g. `openness`): (low, high).",
    )


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
    reply: str | None = Field(description="The last reply delivered.")
    early: str | None = Field(None, description="The early reply, if the turn delivered one.")
    merged: str | None = Field(None, description="The merged (final) reply, if the turn delivered one.")


class SessionDetail(SessionSummary):
    turn_list: list[TurnSummary]


class Delivery(BaseModel):
    agent: str | None
    text: str
    at_s: float | None = Field(description="Seconds from the turn's start.")


class Retry(BaseModel):
    at_s: float
    kind: Literal["retry", "repair", "regenerate"]
    error: str | None


class ToolMark(BaseModel):
    """One tool call as the timeline marks it in its agent's lane (times from the turn's start)."""

    at_s: float = Field(description="When it started, or began to wait for a person.")
    finished_s: float | None
    iteration: int
    step: int
    index: int
    tool: str | None
    arguments: Any
    status: str = Field(description="started, waiting (for a person), ok, error, unknown or denied.")
    result: str | None = Field(description="What the model read (untrusted text, capped).")
    error: str | None
    duration_s: float | None
    approval: int | None = Field(description="Its approval's id, if its tool has `approve: true`.")
    approval_status: Literal["pending", "approved", "denied"] | None
    reason: str | None = Field(description="The reason the person gave with the decision, if any.")


class TurnAgent(BaseModel):
    """One agent of a turn as the timeline draws it (times in seconds from the turn's start)."""

    model_config = ConfigDict(extra="allow")
    name: str
    status: str
    instance: str | None
    queued_s: float | None
    started_s: float | None
    finished_s: float | None
    attempts: int
    retries: list[Retry]
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    finish_reason: str | None = Field(
        description='Why its last model call ended: "stop", "length" (cut at max_tokens), ...; none for functions.'
    )
    quality: list[str] = Field(description="What Cantata's own checks repaired in its reply; empty if nothing.")
    output: Any
    error: str | None
    reads: list[str]
    deliver: str | None
    kind: Literal["model", "function"]
    tool_calls: list[ToolMark] = Field(default_factory=list, description="Its tool loop's calls, in order.")


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
    early: Delivery | None
    final: Delivery | None
    agents: list[TurnAgent]
    conflicts: list[dict[str, Any]]
    quality: TurnQuality
    started_at: float | None
    finished_at: float | None


class ToolCallInfo(BaseModel):
    """One call of an agent's tool loop, as recorded."""

    step: int = Field(description="The loop's step (model call) that asked for it, from 1.")
    index: int = Field(description="Its place among that step's calls, from 0.")
    id: str
    tool: str
    arguments: Any
    status: str = Field(description="ok, error, unknown (interrupted with side effects: not repeated) or started.")
    result: str | None = Field(description="What the model read (untrusted text, capped).")
    error: str | None
    duration_s: float | None
    bytes: int = Field(description="Of the result as the tool returned it, before the cap.")
    iteration: int


class BlackboardEntry(BaseModel):
    agent: str
    status: str
    output: Any
    error: str | None
    tool_calls: list[ToolCallInfo] = Field(default_factory=list, description="The calls its tool loop made.")


class Blackboard(BaseModel):
    turn_id: int
    pipeline: str
    entries: list[BlackboardEntry]
    conflicts: list[dict[str, Any]]


class InstanceHealth(BaseModel):
    reachable: bool | None = Field(description="null: this server has not used the instance yet.")
    error: str | None = None
    note: str | None = None
    serving: str | None = Field(None, description="The model the instance says it serves.")


class InstanceLive(BaseModel):
    queued: int = Field(0, description="Agents waiting for a slot now.")
    running: int = Field(0, description="Agents generating now.")
    finished: int = 0
    failed: int = 0
    tokens_per_s: float | None = Field(None, description="Completion tokens / generation time.")
    first_token_s: float | None = Field(None, description="Median time from a slot to the first token.")
    cached_share: float | None = Field(None, description="Share of prompt tokens served from the prefix cache.")


class InstancePoint(BaseModel):
    at: float = Field(description="Unix time: the end of its step.")
    queued: int = Field(description="The most agents waiting for a slot at once during the step.")
    running: int = Field(description="The most agents generating at once during the step.")


class InstanceHistory(BaseModel):
    """An instance's recent load from the event log (the caller's own calls, or everyone's
    for an admin), each step's peak so a call shorter than a step shows: what the
    dashboard's chart starts from."""

    name: str
    step_s: float
    points: list[InstancePoint] = Field(description="Oldest first; the last one is now.")


class InstanceServer(BaseModel):
    """What a vLLM or llama-server instance reports on its own /metrics."""

    requests_running: float | None = None
    requests_waiting: float | None = None
    kv_cache_usage: float | None = Field(None, description="0..1")
    prefix_cache_hit_rate: float | None = Field(None, description="Hits / queries since the server started.")


class InstanceCircuit(BaseModel):
    """The instance's circuit breaker: closed, calls go through; open, they fail fast after
    repeated failures; half_open, the cool-down is over and one call may probe."""

    state: Literal["closed", "open", "half_open"] = "closed"
    failures: int = Field(0, description="Failed calls in a row.")
    reason: str | None = Field(None, description="The last failure.")
    probe_at: float | None = Field(None, description="When a probe may go (Unix time); null when closed.")


class InstanceReplica(BaseModel):
    """One server of an instance with several `urls`; its calls are routed by load and affinity."""

    name: str = Field(description="NAME#i: the instance's name and the replica's place in its urls.")
    url: str
    queued_now: int | None = Field(None, description="Calls waiting for its slots now (admin keys only).")
    running_now: int | None = Field(None, description="Calls generating on it now (admin keys only).")
    circuit: InstanceCircuit = Field(default_factory=InstanceCircuit, description="Its own circuit breaker.")
    health: InstanceHealth | None = Field(None, description="With ?check=true: reachable, error.")
    server: InstanceServer | None = Field(None, description="With ?check=true and an admin key: its metrics.")


class InstanceInfo(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    backend: str
    model: str | None
    url: str | None
    serves: list[str]
    max_concurrency: int
    queued_now: int = Field(description="Calls waiting for a slot now (a non-admin key: its user's only).")
    running_now: int = Field(description="Calls generating now (a non-admin key: its user's only).")
    live: InstanceLive = Field(description="The last hour's calls on this instance (a non-admin key: its user's).")
    circuit: InstanceCircuit = Field(default_factory=InstanceCircuit, description="Its circuit breaker now.")
    health: InstanceHealth | None = Field(None, description="With ?check=true: reachable, error.")
    server: InstanceServer | None = Field(
        None, description="With ?check=true and an admin key: the server's own metrics, if any."
    )
    replicas: list[InstanceReplica] | None = Field(
        None,
        description="With urls: each replica. The instance's circuit is then its replica's nearest to serving, "
        "and its health reachable while any replica is.",
    )


class Memory(BaseModel):
    user: str
    memory: dict[str, Any] = Field(description="Each memory agent's latest output, by pipeline and agent.")
    sessions: int


class ExportedMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    agent: str | None
    content: str


class ExportedEntry(BaseModel):
    model_config = ConfigDict(extra="allow")
    status: str
    output: Any
    error: str | None
    agent: str | None = Field(None, description="In `earlier_iterations` only.")
    iteration: int | None = Field(None, description="In `earlier_iterations` only.")


class ExportedTurn(BaseModel):
    model_config = ConfigDict(extra="allow")
    turn: int
    status: str
    messages: list[ExportedMessage]
    blackboard: dict[str, ExportedEntry] = Field(description="Each agent's entry (a looped agent's last).")
    earlier_iterations: list[ExportedEntry] | None = Field(None, description="A loop's earlier entries, if any.")
    tool_calls: list[dict[str, Any]] | None = Field(
        None, description="The calls of the agents' tool loops (agent, step, tool, arguments, result...), if any."
    )
    approvals: list[dict[str, Any]] | None = Field(
        None, description="Its tool calls that needed a person's approval, and what was decided, if any."
    )


class ExportedSession(BaseModel):
    model_config = ConfigDict(extra="allow")
    session: str
    pipeline: str
    created_at: float | None
    summary: str
    turns: list[ExportedTurn]


class MemoryExport(BaseModel):
    """Everything stored about one user (GDPR-style export)."""

    model_config = ConfigDict(extra="allow")
    user: str
    sessions: list[ExportedSession]


class ApprovalInfo(BaseModel):
    """A tool call that waits (or waited) for a person: what would be called, with which arguments."""

    id: int
    turn_id: int
    session: str
    user: str
    pipeline: str
    agent: str
    iteration: int
    step: int = Field(description="The tool loop's step that asked for the call, from 1.")
    index: int = Field(description="The call's place among that step's calls, from 0.")
    call_id: str
    tool: str
    arguments: Any = Field(description="As the model sent them (untrusted).")
    status: Literal["pending", "approved", "denied"]
    reason: str | None = Field(description="Why it was decided so, if the person said.")
    decided_by: str | None = Field(description="The user whose key decided it.")
    created_at: float
    decided_at: float | None


class ApprovalDecision(BaseModel):
    """A person's decision on a pending approval: the call runs, or the model reads the denial."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["approve", "deny"]
    reason: str | None = Field(None, max_length=2000, description="Told to the model with a denial.")


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


class PlanResponse(BaseModel):
    plan: Plan
    launch: str = Field(description="The vLLM command lines, one per instance.")
    instances_yaml: str = Field(description="The instances config for `cantata serve --config`.")


class Health(BaseModel):
    """Only that the server is up: anyone may ask, so it tells nothing else (turns in flight
    are in /metrics, for admins; the auth mode in /api/whoami)."""

    status: Literal["ok"] = "ok"


class WhoAmI(BaseModel):
    user: str
    admin: bool
    auth: Literal["keys", "open"]
