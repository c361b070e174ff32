"""A stored turn, rebuilt from its events and blackboard: the shape of `cantata run --json`
plus what the timeline draws (time queued, retries, deliveries, replies cut or repaired, and
each tool call, with its approval if it needed one)."""

from __future__ import annotations

from typing import Any

from cantata.events import Event
from cantata.loader import Pipeline
from cantata.store import EntryRow, TurnRow
from cantata.turn import turn_quality


def turn_detail(
    row: TurnRow, events: list[Event], entries: dict[str, EntryRow], pipeline: Pipeline | None
) -> dict[str, Any]:
    names = list(pipeline.order) if pipeline is not None else []
    for name in [*entries, *(e.agent for e in events if e.agent)]:
        if name and name not in names:
            names.append(name)
    agents: dict[str, dict[str, Any]] = {name: _blank(name) for name in names}
    early: dict[str, Any] | None = None
    conflicts: list[dict[str, Any]] = []
    for event in events:
        agent = agents.get(event.agent or "")
        if event.type == "conflict":
            conflicts.append(event.data)
        if event.type == "early_delivered":
            early = {"agent": event.agent, "text": event.data.get("text", ""), "at_s": event.at_s}
        if agent is None:
            continue
        if event.type == "agent_queued":
            agent["queued_s"] = event.at_s
            agent["instance"] = event.data.get("instance")
        elif event.type == "agent_started":
            agent["started_s"] = event.at_s
            agent["attempts"] += 1 if agent["attempts"] == 0 else 0
            agent["instance"] = event.data.get("instance") or agent["instance"]
        elif event.type == "agent_retry":
            agent["attempts"] += 1
            kind = "repair" if event.data.get("repair") else "regenerate" if event.data.get("regenerate") else "retry"
            agent["retries"].append({"at_s": event.at_s, "kind": kind, "error": event.data.get("error")})
        elif event.type in ("agent_finished", "agent_failed", "agent_skipped"):
            agent["finished_s"] = event.at_s
            agent["status"] = {"agent_finished": "ok", "agent_failed": "failed", "agent_skipped": "skipped"}[event.type]
            for key in ("prompt_tokens", "cached_tokens", "completion_tokens"):
                agent[key] = event.data.get(key) or agent[key]
            agent["finish_reason"] = event.data.get("finish_reason")  # a failed one too: cut, say
            agent["quality"] = list(event.data.get("quality") or [])
            if "attempts" in event.data:
                agent["attempts"] = event.data["attempts"]
            if event.data.get("error") or event.data.get("reason"):
                agent["error"] = event.data.get("error") or event.data.get("reason")
    for name, marks in _tool_marks(events).items():
        if name in agents:
            agents[name]["tool_calls"] = marks
    for name, entry in entries.items():
        agent = agents[name]
        agent["status"], agent["output"] = entry.status, entry.output
        agent["error"] = entry.error or agent["error"]
    final: dict[str, Any] | None = None
    final_spec = pipeline.deliverer("final") if pipeline is not None else None
    for who, text in row.replies:
        if final_spec is not None and who == final_spec.name:
            final = {"agent": who, "text": text, "at_s": agents.get(who, {}).get("finished_s")}
    if pipeline is not None:
        for name in names:
            spec = pipeline.agents.get(name)
            if spec is not None:
                agents[name]["reads"] = list(spec.reads)
                agents[name]["deliver"] = spec.deliver
                agents[name]["kind"] = "function" if spec.is_function else "model"
    return {
        "turn_id": row.id,
        "pipeline": row.pipeline,
        "user": row.user_id,
        "session": row.session_id,
        "turn": row.number,
        "status": row.status,
        "message": row.message,
        "early": early,
        "final": final,
        "agents": list(agents.values()),
        "conflicts": conflicts,
        "quality": turn_quality(
            {a["name"]: a["quality"] for a in agents.values() if a["status"] == "ok" and a["quality"]},
            [d["agent"] for d in (early, final) if d is not None],
        ),
        "started_at": row.started_at,
        "finished_at": row.finished_at,
    }


def _tool_marks(events: list[Event]) -> dict[str, list[dict[str, Any]]]:
    """Each agent's tool calls as its events tell them, by agent: when each started (or began
    to wait for a person), what it called, and how it ended."""
    calls: dict[tuple[str, int, int, int], dict[str, Any]] = {}
    by_approval: dict[int, dict[str, Any]] = {}
    for event in events:
        if event.agent is None or event.type not in _TOOL_EVENTS:
            continue
        data = event.data
        if event.type == "approval_decided":
            decided = by_approval.get(data.get("approval", -1))
            if decided is not None:
                decided["approval_status"], decided["reason"] = data.get("status"), data.get("reason")
            continue
        key = (event.agent, data.get("iteration", 0), data.get("step", 0), data.get("index", 0))
        call = calls.setdefault(key, _blank_call(event, key))
        if event.type == "approval_requested":
            call.update(status="waiting", approval=data.get("approval"), approval_status="pending")
            by_approval[data.get("approval", -1)] = call
        elif event.type == "tool_started":
            call["status"] = "started"
        else:  # tool_finished
            call.update({k: data.get(k) for k in ("status", "result", "error", "duration_s")}, finished_s=event.at_s)
    marks: dict[str, list[dict[str, Any]]] = {}
    for (agent, *_), call in sorted(calls.items()):
        marks.setdefault(agent, []).append(call)
    return marks


_TOOL_EVENTS = frozenset({"tool_started", "tool_finished", "approval_requested", "approval_decided"})


def _blank_call(event: Event, key: tuple[str, int, int, int]) -> dict[str, Any]:
    _, iteration, step, index = key
    return {
        "at_s": event.at_s,
        "finished_s": None,
        "iteration": iteration,
        "step": step,
        "index": index,
        "tool": event.data.get("tool"),
        "arguments": event.data.get("arguments"),
        "status": "started",
        "result": None,
        "error": None,
        "duration_s": None,
        "approval": None,
        "approval_status": None,
        "reason": None,
    }


def _blank(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "status": "pending",
        "instance": None,
        "queued_s": None,
        "started_s": None,
        "finished_s": None,
        "attempts": 0,
        "retries": [],
        "prompt_tokens": 0,
        "cached_tokens": 0,
        "completion_tokens": 0,
        "finish_reason": None,
        "quality": [],
        "output": None,
        "error": None,
        "reads": [],
        "deliver": None,
        "kind": "model",
        "tool_calls": [],
    }
