"""Live figures per instance, read from Cantata's own event log (so any process can show them)."""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any

from cantata.store import Store


@dataclass
class LiveFigures:
    queued: int = 0  # agents waiting for a slot now
    running: int = 0  # agents generating now
    finished: int = 0  # calls finished in the window
    failed: int = 0
    tokens_per_s: float | None = None  # completion tokens / generation time
    first_token_s: float | None = None  # median time from a slot to the first token
    cached_share: float | None = None  # prompt tokens served from the prefix cache
    # The circuit breaker as last told (breaker.py as_json); None: nothing told in the window.
    circuit: dict[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


async def live_figures(store: Store, *, since_wall: float, user_id: str | None = None) -> dict[str, LiveFigures]:
    """Each instance's figures over everyone's calls, or over one user's (`user_id`)."""
    figures: dict[str, LiveFigures] = {}
    state: dict[tuple[int, str], tuple[str, str]] = {}  # (turn, agent) -> (instance, latest state)
    firsts: dict[str, list[float]] = {}
    totals: dict[str, list[float]] = {}  # instance -> [completion, generation_s, prompt, cached]
    for event in await store.instance_events(since_wall=since_wall, user_id=user_id):
        data = event.data
        instance = data.get("instance")
        key = (event.turn_id, event.agent)
        if not instance:  # e.g. a shortcut answered after the agent had queued: it used no instance
            if event.type in ("agent_finished", "agent_failed", "agent_skipped"):
                state.pop(key, None)
            continue
        fig = figures.setdefault(instance, LiveFigures())
        if event.type == "instance_circuit":
            fig.circuit = _circuit_now(data)
            continue
        if event.type in ("agent_queued", "agent_started"):
            if event.turn_status == "running":
                state[key] = (instance, event.type)
            continue
        state.pop(key, None)
        if event.type == "agent_failed":
            fig.failed += 1
            continue
        fig.finished += 1
        total = totals.setdefault(instance, [0.0, 0.0, 0.0, 0.0])
        total[0] += data.get("completion_tokens") or 0
        total[1] += data.get("generation_s") or 0.0
        total[2] += data.get("prompt_tokens") or 0
        total[3] += data.get("cached_tokens") or 0
        if data.get("first_token_s") is not None:
            firsts.setdefault(instance, []).append(data["first_token_s"])
    for instance, kind in state.values():
        fig = figures[instance]
        if kind == "agent_queued":
            fig.queued += 1
        else:
            fig.running += 1
    for instance, (completion, generation, prompt, cached) in totals.items():
        fig = figures[instance]
        fig.tokens_per_s = round(completion / generation, 1) if generation > 0 else None
        fig.cached_share = round(cached / prompt, 3) if prompt > 0 else None
    for instance, values in firsts.items():
        figures[instance].first_token_s = round(statistics.median(values), 3)
    return figures


def _circuit_now(told: dict[str, Any]) -> dict[str, Any]:
    """The breaker's state as told, brought up to now: open past its cool-down is half-open."""
    circuit = {key: told.get(key) for key in ("state", "failures", "reason", "probe_at")}
    if circuit["state"] == "open" and (circuit["probe_at"] or 0) <= time.time():
        circuit["state"] = "half_open"
    return circuit
