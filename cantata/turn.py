"""What a turn produced: per-agent results and the delivered replies, as `cantata run --json`
prints them and the server publishes them (`TurnResult.model_json_schema()` is that shape).

`AgentResult` is a plain dataclass that pydantic validates, serializes and describes as
part of `TurnResult`, not a BaseModel: the scheduler fills it in as its agent runs, a
dozen attribute writes per agent, and a BaseModel's `__setattr__` made those writes the
largest cost of a turn's result objects (about 4 us per node, bench in the commit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeGuard, get_args

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, TypeAdapter

AgentStatus = Literal["pending", "ok", "failed", "skipped"]
TurnStatus = Literal["ok", "degraded", "failed"]
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

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
