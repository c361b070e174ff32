"""What a turn produced: per-agent results and the delivered replies, as `cantata run --json`
prints them and the server publishes them (`TurnResult.model_json_schema()` is that shape).

`AgentResult` is a plain dataclass that pydantic validates, serializes and describes as
part of `TurnResult`, not a BaseModel: the scheduler fills it in as its agent runs, a
dozen attribute writes per agent, and a BaseModel's `__setattr__` made those writes the
largest cost of a turn's result objects (about 4 us per node, bench in the commit).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Annotated, Any, Literal, TypeGuard, get_args

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, TypeAdapter

AgentStatus = Literal["pending", "ok", "failed", "skipped"]
# waiting: paused until a person approves or denies a tool call (tool_loop.py); not finished
TurnStatus = Literal["ok", "degraded", "failed", "waiting"]
_AGENT_STATUSES = frozenset(get_args(AgentStatus))


def is_agent_status(value: str) -> TypeGuard[AgentStatus]:
    """Whether a status read back (a stored entry's) is one an agent can have."""
    return value in _AGENT_STATUSES


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


# Seconds since the turn started, printed to the microsecond.
Seconds = Annotated[float, PlainSerializer(_round, return_type=float)]
MaybeSeconds = Annotated[float | None, PlainSerializer(_round, return_type=float | None)]


@dataclass
class AgentResult:
    name: str
    status: AgentStatus = "pending"
    instance: Annotated[
        str | None, Field(description="The instance that served the model call; none for functions.")
    ] = None
    started_s: MaybeSeconds = None
    finished_s: MaybeSeconds = None
    attempts: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: Annotated[
        str | None,
        Field(
            description='Why the last model call ended: "stop", "length" (cut at max_tokens), ...; none for functions.'
        ),
    ] = None
    output: Any = None
    error: str | None = None
    quality: Annotated[
        list[str],
        Field(
            description="What Cantata's own checks repaired in the reply (an echo of the prompt's headings "
            "cut, a repeated sentence cut to its first occurrence); empty when the reply needed no repair."
        ),
    ] = dataclass_field(default_factory=list)
    tool_calls: Annotated[
        list[dict[str, Any]],
        Field(
            description="The calls of the agent's tool loop, in order: step, index, tool, arguments, status "
            "(ok, error, unknown), result or error, duration_s, bytes."
        ),
    ] = dataclass_field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = _AGENT_RESULT.dump_python(self, mode="json")
        return data


_AGENT_RESULT = TypeAdapter(AgentResult)


class Delivery(BaseModel):
    model_config = ConfigDict(frozen=True)

    agent: str
    text: str
    at_s: Seconds

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class TurnQuality(BaseModel):
    """Whether the turn's replies are the model's own text or came from Cantata's repairs."""

    model_config = ConfigDict(frozen=True)

    repaired: dict[str, list[str]] = Field(
        default_factory=dict, description="The agents whose reply was repaired, with what was repaired."
    )
    replies_repaired: bool = Field(
        False, description="Every reply delivered to the person (early, final) came from such a repair."
    )
    note: str | None = Field(None, description="One line saying so; none when nothing was repaired.")


def turn_quality(repaired: dict[str, list[str]], delivered: list[str]) -> TurnQuality:
    """The turn's quality note from its agents' notes (`repaired`: only agents that have
    any) and the agents whose replies were delivered."""
    if not repaired:
        return TurnQuality()
    every = bool(delivered) and all(name in repaired for name in delivered)
    names = ", ".join(repaired)
    note = (
        f"every reply of this turn was repaired by Cantata's checks ({names}): the model echoed its "
        "prompt or repeated itself, so these replies say more about the model than about the pipeline"
        if every
        else f"Cantata's checks repaired the replies of {names}"
    )
    return TurnQuality(repaired=repaired, replies_repaired=every, note=note)


class TurnResult(BaseModel):
    pipeline: str
    user: str
    session: str
    turn: int = Field(description="The turn's number in its session, from 1.")
    turn_id: int = Field(exclude=True, description="The stored turn's id (for resume); not printed.")
    status: TurnStatus
    early: Delivery | None
    final: Delivery | None
    agents: list[AgentResult]
    conflicts: list[dict[str, Any]] = Field(default_factory=list)
    quality: TurnQuality = Field(default_factory=TurnQuality)
    approvals: list[int] = Field(
        default_factory=list,
        description="A waiting turn's pending approvals, by id: what would be called is in /api/approvals.",
    )

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
