"""Events: every state change of a turn, appended to the store and published in process.

The terminal view, the SSE stream, the dashboard, resume and the benchmarks all read
these. Token events are published live but not persisted one by one: the finished
event carries the whole text, and a row per token would dominate the store's writes.

Two ways to follow them:
- `listen(fn)`: a synchronous callback, called at once for every event (the terminal
  view, a turn's streaming reply). It must be quick.
- `subscribe()`: a bounded queue, for consumers that may be slow (an SSE client). Events
  arrive in publish order, persisted ones only once committed, so each carries its store
  sequence number (`seq`). A subscriber that falls `max_queue` events behind gets a
  `Dropped` marker and no more events: it replays what it missed from the store
  (`Store.events_after(dropped.after_seq)`), then subscribes again. Memory stays bounded
  however slow a client is.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, get_args

from cantata.errors import StoreError, get_logger

EventType = Literal[
    "turn_started",
    "turn_resumed",
    "agent_queued",
    "agent_started",
    "agent_token",
    "agent_retry",
    "agent_finished",
    "agent_failed",
    "agent_skipped",
    "conflict",
    "tool_started",  # a call of an agent's tool loop began (tool_loop.py)
    "tool_finished",  # ...and ended: its status, result or error, duration and bytes
    "approval_requested",  # a call waits for a person: approval id, tool, arguments (tool_loop.py)
    "approval_decided",  # ...who approved or denied it, and why (runtime.py)
    "turn_waiting",  # the turn paused for its pending approvals; it resumes (turn_resumed) once decided
    "loop_iteration",
    "loop_finished",
    "early_delivered",
    "turn_delivered",
    "instance_circuit",  # an instance's circuit breaker changed state (breaker.py), told by the call that saw it
]

# Token deltas are live only; everything else goes to the store.
PERSISTED: frozenset[str] = frozenset(get_args(EventType)) - {"agent_token"}


@dataclass(slots=True)
class Event:
    """A state change of a turn, as published live and as read back from the store."""

    type: EventType
    turn_id: int
    session_id: str
    at_s: float  # seconds since the turn started (monotonic clock)
    agent: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    wall: float = field(default_factory=time.time)
    user_id: str = ""
    # The store's sequence number: set once committed (and on every event read back from
    # the store); None until then, and for live-only events (tokens).
    seq: int | None = None

    @property
    def persisted(self) -> bool:
        return self.type in PERSISTED

    @property
    def stored_seq(self) -> int:
        """`seq` of an event read back from the store, where it is always set."""
        if self.seq is None:
            raise StoreError(f"event {self.type} of turn {self.turn_id} has no sequence number: it was never stored")
        return self.seq

    def as_dict(self) -> dict[str, Any]:
        """The event as JSON data (SSE, the API), live or stored alike. `at_s` is kept as
        measured and stored so; it is rounded to the microsecond here, where it is shown."""
        return {
            "seq": self.seq,
            "type": self.type,
            "turn_id": self.turn_id,
            "session_id": self.session_id,
            "at_s": round(self.at_s, 6),
            "agent": self.agent,
            "data": self.data,
            "wall": self.wall,
        }


Listener = Callable[[Event], None]
Match = Callable[[Event], bool]

DEFAULT_MAX_QUEUE = 1000


@dataclass(frozen=True)
class Dropped:
    """The subscriber fell behind and was dropped: replay from the store after `after_seq`
    (the last stored event it was given; None if it was given none)."""

    after_seq: int | None


class Subscription:
    """A bounded queue of one subscriber's events; iterate it with `async for`."""

    def __init__(self, bus: Subscribers, *, max_queue: int, match: Match | None) -> None:
        self._bus = bus
        self._max = max_queue
        self._match = match
        self._queue: asyncio.Queue[Event | Dropped] = asyncio.Queue()
        self._last_seq: int | None = None  # of the last persisted event queued
        self.dropped = False

    def offer(self, event: Event) -> None:
        if self.dropped or (self._match is not None and not self._match(event)):
            return
        if self._queue.qsize() >= self._max:
            self.dropped = True
            self._queue.put_nowait(Dropped(self._last_seq))
            self._bus.unsubscribe(self)
            return
        if event.seq is not None:
            self._last_seq = event.seq
        self._queue.put_nowait(event)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Event | Dropped:
        if self.dropped and self._queue.empty():
            raise StopAsyncIteration
        return await self._queue.get()

    def close(self) -> None:
        self._bus.unsubscribe(self)


class EventSink(Protocol):
    """What the bus needs of a store: record an event, and say when recorded ones are
    committed (their `seq` set). Every Store is one; the bus knows nothing else of it."""

    def record_event(self, event: Event) -> None: ...

    def on_commit(self, callback: Callable[[list[Event]], None]) -> None: ...


class Subscribers:
    """What hands subscriptions their events, each at most `max_queue` behind: the bus, or
    the store's tail (store/event_feed.py)."""

    def __init__(self) -> None:
        self._subscribers: list[Subscription] = []

    def subscribe(self, *, max_queue: int = DEFAULT_MAX_QUEUE, match: Match | None = None) -> Subscription:
        """Events from now on (and matching `match`), at most `max_queue` behind."""
        subscription = Subscription(self, max_queue=max_queue, match=match)
        self._subscribers.append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self._subscribers:
            self._subscribers.remove(subscription)


class EventBus(Subscribers):
    """Publishes events to listeners (synchronously, in order) and to bounded subscribers.

    With a store attached (`attach`), every event is recorded in it first, and persisted
    events reach subscribers once committed: an outbox holds events, in publish order,
    until the oldest one is stored.
    """

    def __init__(self) -> None:
        super().__init__()
        self._listeners: list[Listener] = []
        self._store: EventSink | None = None
        self._outbox: deque[Event] = deque()

    def attach(self, store: EventSink) -> None:
        self._store = store
        store.on_commit(lambda _events: self._release())

    def listen(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def unsubscribe(self, subscription: Subscription) -> None:
        super().unsubscribe(subscription)
        if not self._subscribers:
            self._outbox.clear()

    def publish(self, event: Event) -> None:
        if self._store is not None:
            self._store.record_event(event)
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:  # a broken view (a closed terminal, say) must not stop the turn
                get_logger("cantata").exception("an event listener failed on %s", event.type)
        if self._subscribers:
            self._outbox.append(event)
            self._release()

    def _release(self) -> None:
        """Hand subscribers every event up to the oldest one not yet stored."""
        outbox = self._outbox
        waits_for_store = self._store is not None
        while outbox:
            event = outbox[0]
            if waits_for_store and event.seq is None and event.persisted:
                return
            outbox.popleft()
            for subscription in list(self._subscribers):
                subscription.offer(event)
