"""What a turn produced: per-agent results and the delivered replies, as `cantata run --json` prints them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

AgentStatus = Literal["pending", "ok", "failed", "skipped"]
TurnStatus = Literal["ok", "degraded", "failed"]


@dataclass
class AgentResult:
    name: str
    status: AgentStatus = "pending"
    instance: str | None = None
    started_s: float | None = None
    finished_s: float | None = None
    attempts: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None  # of the last model call: "stop", "length" (cut at max_tokens), ...
    output: Any = None
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "instance": self.instance,
            "started_s": _round(self.started_s),
            "finished_s": _round(self.finished_s),
            "attempts": self.attempts,
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "completion_tokens": self.completion_tokens,
            "finish_reason": self.finish_reason,
            "output": self.output,
            "error": self.error,
        }


@dataclass(frozen=True)
class Delivery:
    agent: str
    text: str
    at_s: float

    def as_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "text": self.text, "at_s": _round(self.at_s)}


@dataclass
class TurnResult:
    pipeline: str
    user: str
    session: str
    turn: int
    turn_id: int
    status: TurnStatus
    early: Delivery | None
    final: Delivery | None
    agents: list[AgentResult]
    conflicts: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "pipeline": self.pipeline,
            "user": self.user,
            "session": self.session,
            "turn": self.turn,
            "status": self.status,
            "early": self.early.as_json() if self.early else None,
            "final": self.final.as_json() if self.final else None,
            "agents": [a.as_json() for a in self.agents],
            "conflicts": self.conflicts,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
