"""What a turn produced: per-agent results and the delivered replies, as `cantata run --json`
prints them and the server publishes them (pydantic models, so their JSON Schema is the API's).

The scheduler fills an `AgentResult` in as the agent runs, so results are mutable and
assignment is not validated: the scheduler writes only values of the declared types.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

AgentStatus = Literal["pending", "ok", "failed", "skipped"]
TurnStatus = Literal["ok", "degraded", "failed"]


class AgentResult(BaseModel):
    name: str
    status: AgentStatus = "pending"
    instance: str | None = Field(None, description="The instance that served the model call; None for functions.")
    started_s: float | None = Field(None, description="Seconds since the turn started.")
    finished_s: float | None = None
    attempts: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    output: Any = None
    error: str | None = None

    @field_serializer("started_s", "finished_s")
    def _seconds(self, value: float | None) -> float | None:
        return _round(value)

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class Delivery(BaseModel):
    model_config = ConfigDict(frozen=True)

    agent: str
    text: str
    at_s: float = Field(description="Seconds since the turn started.")

    @field_serializer("at_s")
    def _seconds(self, value: float) -> float | None:
        return _round(value)

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


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
