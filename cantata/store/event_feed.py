"""Following the stored events live, whichever process commits them: `follow()`.

`follow()` gives the stored events after a sequence number, then each one committed later,
once and in order, from a feed:
- the runtime's bus (`EventBus`) where the process that follows runs the turns (SQLite):
  events reach it as they are committed, with no read per event;
- `StoreTail` where several processes share the database (PostgreSQL): it reads the events
  table after the last event it read whenever the table may have grown: a commit of this
  process (the store's on_commit), a notification of another's (`Store.notifications`, a
  LISTEN on a connection of its own), and every BACKSTOP_S in case a notification was
  missed (its connection lost, while it is made again). One read per wake-up serves every
  follower of the process.

On both, sequence numbers follow the order of commits (queries.insert_events, and a lock on
PostgreSQL), so a follower that has seen N misses nothing by asking for what is after N,
and `Last-Event-ID` holds across servers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Protocol

from cantata.errors import StoreError, get_logger
from cantata.events import DEFAULT_MAX_QUEUE, Dropped, Event, EventBus, Match, Subscribers, Subscription
from cantata.store.base import Store
from cantata.store.protocols import Notifications

BACKSTOP_S = 1.0  # how stale a follower may get when a notification is lost
PAGE = 1000  # events read at once
HEARTBEAT_S = 15.0  # silence after which `follow` says so (a stream's keep-alive)

log = get_logger("cantata.store")


class EventFeed(Protocol):
    """Stored events as they are committed, to bounded subscriptions (events.Subscription)."""

    def subscribe(self, *, max_queue: int = DEFAULT_MAX_QUEUE, match: Match | None = None) -> Subscription: ...


class StoreTail(Subscribers):
    """The events table followed from its end: every event any process commits, in order of
    sequence number, offered to the subscriptions whose `match` takes it (a new one may also
    get some committed just before it: `follow` skips them by their seq). `start` it before
    the first subscription, `close` it after the last."""

    def __init__(self, store: Store, notifications: Notifications | None, *, backstop_s: float = BACKSTOP_S) -> None:
        super().__init__()
        self._store = store
        self._notifications = notifications
        self._backstop_s = backstop_s
        self._cursor = 0  # the last sequence number read, or passed while nobody followed
        self._wanted = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._failing = False

    async def start(self) -> None:
        self._cursor = await self._store.last_event_seq()
        self._store.on_commit(lambda events: self.wake(events[-1].seq if events else None))
        self._tasks = [asyncio.create_task(self._read_on_wake()), asyncio.create_task(self._backstop())]
        if self._notifications is not None:
            self._tasks.append(asyncio.create_task(self._notifications(self.wake)))

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    def wake(self, seq: int | None = None) -> None:
        """Events up to `seq` (or some, if None) may have been committed: read what is new."""
        if not self._subscribers:
            # Nobody to give them to: no read, the cursor moves past them (a follower who
            # comes later replays its own past, and is not handed this backlog).
            self._cursor = max(self._cursor, seq or 0)
        elif seq is None or seq > self._cursor:
            self._wanted.set()

    async def _backstop(self) -> None:
        while True:
            await asyncio.sleep(self._backstop_s)
            self.wake()

    async def _read_on_wake(self) -> None:
        while True:
            await self._wanted.wait()
            self._wanted.clear()  # wake-ups from now on ask for another read
            try:
                await self._read()
            except StoreError as exc:  # the database is away: the backstop tries again
                if not self._failing:
                    log.warning("cannot read the events table to follow it: %s", exc)
                self._failing = True
            else:
                self._failing = False

    async def _read(self) -> None:
        while self._subscribers:
            batch = await self._store.events_after(self._cursor, limit=PAGE)
            for event in batch:
                self._cursor = event.stored_seq
                for subscription in list(self._subscribers):
                    subscription.offer(event)
            if len(batch) < PAGE:
                return


@contextlib.asynccontextmanager
async def event_feed(store: Store, bus: EventBus) -> AsyncIterator[EventFeed]:
    """The feed a follower of `store` needs: the bus (SQLite), or a started StoreTail,
    closed on exit (PostgreSQL, whose events other processes commit too)."""
    notifications = store.notifications()
    if notifications is None:
        yield bus
        return
    tail = StoreTail(store, notifications)
    await tail.start()
    try:
        yield tail
    finally:
        await tail.close()


async def follow(
    feed: EventFeed,
    store: Store,
    seq: int,
    *,
    user_id: str | None = None,
    turn_id: int | None = None,
    live: bool = True,
    stopping: asyncio.Event | None = None,
    heartbeat_s: float = HEARTBEAT_S,
    ends: frozenset[str] = frozenset({"turn_delivered"}),
) -> AsyncGenerator[Event | None]:
    """The stored events after `seq` (of `user_id`'s turns, or of turn `turn_id`), then with
    `live` each one committed later, once and in order; None after `heartbeat_s` of silence.
    A turn's events end with its `turn_delivered` (or another of `ends`); the live tail ends
    once `stopping` is set.

    The subscription is opened before the store is read, so an event committed in between is
    in one or the other (a duplicate is known by its seq); a subscription that falls behind
    is dropped by its feed and the store read again the same way."""

    def match(event: Event) -> bool:
        if not event.persisted:
            return False
        if turn_id is not None:
            return event.turn_id == turn_id
        return user_id is None or event.user_id == user_id

    stop = stopping or asyncio.Event()
    subscription = feed.subscribe(match=match)
    try:
        while True:
            while True:  # from the store
                batch = await store.events_after(seq, user_id=user_id, turn_id=turn_id, limit=PAGE)
                for stored in batch:
                    seq = stored.stored_seq
                    yield stored
                    if turn_id is not None and stored.type in ends:
                        return
                if len(batch) < PAGE:
                    break
            if not live:
                return
            while True:  # live
                try:
                    item = await _next_or_stop(subscription, stop, heartbeat_s)
                except TimeoutError:
                    yield None
                    continue
                except StopAsyncIteration:
                    item = Dropped(seq)
                if item is None:
                    return
                if isinstance(item, Dropped):
                    subscription = feed.subscribe(match=match)
                    break  # back to the store for what was missed
                if item.seq is None or item.seq <= seq:
                    continue
                seq = item.seq
                yield item
                if turn_id is not None and item.type in ends:
                    return
    finally:
        subscription.close()


async def _next_or_stop(
    subscription: Subscription, stopping: asyncio.Event, heartbeat_s: float
) -> Event | Dropped | None:
    """The next live item, or None once `stopping` is set; TimeoutError after `heartbeat_s` of silence."""
    item = asyncio.ensure_future(anext(subscription))
    stop = asyncio.ensure_future(stopping.wait())
    try:
        done, _ = await asyncio.wait({item, stop}, timeout=heartbeat_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (item, stop):
            task.cancel()
    if item in done:
        return item.result()
    if stop in done:
        return None
    raise TimeoutError
