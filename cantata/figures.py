"""Live figures per instance, read from Cantata's own event log (so any process can show them)."""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from cantata.breaker import STATE_VALUES
from cantata.store import Store

CLOSED: dict[str, Any] = {"state": "closed", "failures": 0, "reason": None, "probe_at": None}


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
    # Of an instance with replicas: each replica's breaker as last told, by replica name.
    replicas: dict[str, dict[str, Any]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        figures = asdict(self)
        del figures["replicas"]  # reported with each replica, not among the instance's figures
        return figures


def serving_circuit(circuits: list[dict[str, Any]]) -> dict[str, Any]:
    """The circuit of an instance with replicas: its replica's nearest to serving (it serves
    while any of them does)."""
    return min(circuits, key=lambda c: STATE_VALUES[c["state"]], default=CLOSED)


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
            if data.get("replica"):
                fig.replicas[data["replica"]] = _circuit_now(data)
            else:
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


@dataclass(frozen=True)
class LoadPoint:
    at: float  # Unix time: the end of its step
    queued: int  # the most agents waiting at once during the step
    running: int  # the most generating at once during the step


# A call still waiting when a history starts was queued at most this long before it.
LOOKBACK_S = 3600.0


async def load_history(
    store: Store, instances: list[str], *, until: float, seconds: float, points: int, user_id: str | None
) -> dict[str, list[LoadPoint]]:
    """Each instance's load over the `seconds` before `until`, in `points` even steps: the
    most agents queued and running at once in each (a peak, so a call shorter than a step
    still shows), from the event log, of one user's calls or everyone's. Calls are counted
    as `live_figures` counts them now, so a chart it starts goes on with those."""
    start = until - seconds
    changes: list[tuple[float, tuple[int, str], str, int, int]] = []  # when, call, instance, queued +/-, running +/-
    state: dict[tuple[int, str], tuple[str, int, int, str]] = {}  # call -> (instance, q, r, its turn's status)
    for event in await store.instance_events(since_wall=start - LOOKBACK_S, user_id=user_id):
        call = (event.turn_id, event.agent)
        instance: str = event.data.get("instance") or ""
        if event.type in ("agent_queued", "agent_started") and instance:
            now = (1, 0) if event.type == "agent_queued" else (0, 1)
        elif event.type in ("agent_finished", "agent_failed", "agent_skipped"):
            now = (0, 0)
        else:
            continue
        before = state.pop(call, None)
        if before is not None:
            changes.append((event.wall, call, before[0], -before[1], -before[2]))
        if now != (0, 0):
            state[call] = (instance, *now, event.turn_status)
            changes.append((event.wall, call, instance, *now))
    # Never finished, in a turn that is over: cut by a crash, never really waiting.
    cut = {call for call, (_, _, _, turn_status) in state.items() if turn_status != "running"}
    changes = sorted((c for c in changes if c[1] not in cut), key=lambda change: change[0])
    level = {name: [0, 0] for name in instances}
    applied = 0

    def apply_until(at: float, peak: dict[str, list[int]]) -> None:
        nonlocal applied
        while applied < len(changes) and changes[applied][0] <= at:
            _, _, instance, queued, running = changes[applied]
            applied += 1
            if instance in level:
                counts = level[instance]
                counts[0] += queued
                counts[1] += running
                if instance in peak:
                    peak[instance] = [max(p, c) for p, c in zip(peak[instance], counts, strict=True)]

    apply_until(start, {})  # the load when the history starts: no step's peak
    history: dict[str, list[LoadPoint]] = {name: [] for name in instances}
    for i in range(1, points + 1):
        at = start + seconds * i / points
        peak = {name: list(counts) for name, counts in level.items()}
        apply_until(at, peak)
        for name, (queued, running) in peak.items():
            history[name].append(LoadPoint(at, queued, running))
    return history
