"""Events: every state change of a turn, appended to the store and published in process.

The terminal view, the SSE stream, the dashboard, resume and the benchmarks all read
these. Token events are published live but not persisted one by one: the finished
event carries the whole text, and a row per token would dominate the store's writes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

EventType = Literal[
    "turn_started",
    "agent_queued",
    "agent_started",
    "agent_token",
    "agent_retry",
    "agent_finished",
    "agent_failed",
    "agent_skipped",
    "conflict",
    "early_delivered",
    "turn_delivered",
]

# Token deltas are live only; everything else goes to the store.
PERSISTED: frozenset[str] = frozenset(get_args(EventType)) - {"agent_token"}


@dataclass(slots=True)
class Event:
    type: EventType
    turn_id: int
    session_id: str
    at_s: float  # seconds since the turn started (monotonic clock)
    agent: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    wall: float = field(default_factory=time.time)

    def as_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "turn_id": self.turn_id,
            "session_id": self.session_id,
            "at_s": round(self.at_s, 6),
            "agent": self.agent,
            "data": self.data,
            "wall": self.wall,
        }


Listener = Callable[[Event], None]


class EventBus:
    """Publishes events to listeners (synchronously, in order) and to async subscribers."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._queues: list[asyncio.Queue[Event]] = []

    def listen(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def subscribe(self) -> asyncio.Queue[Event]:
        queue: asyncio.Queue[Event] = asyncio.Queue()
        self._queues.append(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[Event]) -> None:
        if queue in self._queues:
            self._queues.remove(queue)

    def publish(self, event: Event) -> None:
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:  # a broken view (a closed terminal, say) must not stop the turn
                logging.getLogger("cantata").exception("an event listener failed on %s", event.type)
        for queue in self._queues:
            queue.put_nowait(event)
