"""A turn a worker runs (`cantata serve --workers queue`): the server stores it and queues it
(cantata/turn_queue.py), then follows its events in the store and builds its result from
what the worker stored, so that a client sees it as it would see a turn run here.

Its events come through the server's event feed (store/event_feed.py: on PostgreSQL a tail
of the events table woken by LISTEN/NOTIFY), as other streams' do.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from cantata.errors import TurnAbandoned
from cantata.events import Event
from cantata.loader import Pipeline
from cantata.store import Store, TurnRow
from cantata.store.event_feed import EventFeed, follow
from cantata.turn import AgentResult, Delivery, TurnResult, is_agent_status, turn_quality

POLL_S = 0.05  # how often a delivered turn's status is asked for, until it is stored

_ENDED = {"agent_finished": "ok", "agent_failed": "failed", "agent_skipped": "skipped"}
# What ends a turn's run by a worker: delivered, or paused until people decide its approvals
# (a decision queues it again: server/service.py).
_ENDS = frozenset({"turn_delivered", "turn_waiting"})


async def follow_turn(feed: EventFeed, store: Store, turn_id: int) -> AsyncIterator[Event]:
    """The turn's stored events in order, as any process commits them, until it is delivered
    or paused for approvals, and its status stored (the merged reply is stored with it, in the
    same commit or the next). A turn the queue gave up on (its final event says why) raises
    TurnAbandoned at the end."""
    reason = None
    async for event in follow(feed, store, 0, turn_id=turn_id, ends=_ENDS):
        if event is not None:  # None: a heartbeat's silence
            yield event
            reason = event.data.get("reason") if event.type == "turn_delivered" else None
    while (turn := await store.get_turn(turn_id)) is None or turn.status == "running":
        await asyncio.sleep(POLL_S)
    if reason:
        raise TurnAbandoned(str(reason))


async def stored_result(store: Store, pipeline: Pipeline, turn: TurnRow) -> TurnResult:
    """A finished turn's result as its runner returned it, read back from the store: outputs
    from the blackboard, timings, instances and token counts from the events."""
    events, entries = await asyncio.gather(store.events(turn.id), store.entries(turn.id))
    agents = {name: AgentResult(name=name) for name in pipeline.order}
    early: Delivery | None = None
    conflicts: list[dict[str, Any]] = []
    approvals: list[int] = []
    delivered_s = 0.0
    for event in events:
        result = agents.get(event.agent or "")
        data = event.data
        if event.type == "early_delivered" and event.agent:
            early = Delivery(agent=event.agent, text=str(data.get("text", "")), at_s=event.at_s)
        elif event.type == "conflict":
            conflicts.append(data)
        elif event.type == "turn_delivered":
            delivered_s = event.at_s
        elif event.type == "turn_waiting":  # the last pause's approvals (a resumed turn may pause again)
            approvals = [int(a) for a in data.get("approvals") or []]
        elif result is not None and event.type == "agent_started" and result.started_s is None:
            result.started_s = event.at_s
        elif result is not None and event.type in _ENDED:
            result.finished_s = event.at_s
            result.instance = data.get("instance", result.instance)
            result.error = data.get("error", data.get("reason"))
            result.attempts = int(data.get("attempts", result.attempts))
            result.finish_reason = data.get("finish_reason")
            for field in ("prompt_tokens", "cached_tokens", "completion_tokens"):
                setattr(result, field, int(data.get(field) or 0))
            result.quality = list(data.get("quality") or [])
    for name, entry in entries.items():
        if name in agents and is_agent_status(entry.status):
            agents[name].status, agents[name].output = entry.status, entry.output
            agents[name].error = entry.error
    final_agent = pipeline.deliverer("final")
    final_text = dict(turn.replies).get(final_agent.name) if final_agent is not None else None
    final = None
    if final_agent is not None and final_text is not None:
        final = Delivery(agent=final_agent.name, text=final_text, at_s=delivered_s)
    status = turn.status if turn.status in ("ok", "degraded", "waiting") else "failed"
    return TurnResult(
        pipeline=pipeline.name,
        user=turn.user_id,
        session=turn.session_id,
        turn=turn.number,
        turn_id=turn.id,
        status=status,
        early=early,
        final=final,
        agents=list(agents.values()),
        conflicts=conflicts,
        approvals=approvals if status == "waiting" else [],
        quality=turn_quality(
            {r.name: r.quality for r in agents.values() if r.status == "ok" and r.quality},
            [d.agent for d in (early, final) if d is not None],
        ),
    )
