"""Server-sent events over the store: every stored event a caller may see, each with
`id:` = its sequence number in the store. A client that reconnects with `Last-Event-ID`
gets what it missed from the store, then the live tail; the store is the single source,
so replay and live can neither overlap nor leave a gap."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping

from cantata.events import Dropped, Event, EventBus
from cantata.store import Store

HEARTBEAT_S = 15.0
REPLAY_PAGE = 1000


def frame(event: Event) -> str:
    data = json.dumps(event.as_dict(), ensure_ascii=False, separators=(",", ":"))
    return f"id: {event.seq}\nevent: {event.type}\ndata: {data}\n\n"


async def event_stream(
    bus: EventBus,
    store: Store,
    seq: int,
    *,
    owners: Mapping[int, str],
    user_id: str | None,
    turn_id: int | None,
    follow: bool = True,
    stopping: asyncio.Event,
) -> AsyncIterator[str]:
    """The store's events after `seq`, then the live tail, as SSE text. The subscription
    is opened before the replay, so an event committed in between is in one or the other
    (and a duplicate is recognised by its seq); a subscriber that falls behind is dropped
    by the bus and catches up from the store the same way. `owners` maps the turns this
    server runs to their users: a live event carries no user, so the filter places it.
    The live tail ends once `stopping` is set (shutdown): a client reconnects with
    `Last-Event-ID`, to the successor, and misses nothing, while an open stream would hold the
    shutdown for its whole grace."""

    def match(event: Event) -> bool:
        if not event.persisted:
            return False
        if turn_id is not None:
            return event.turn_id == turn_id
        return user_id is None or owners.get(event.turn_id) == user_id

    yield "retry: 1000\n\n"
    subscription = bus.subscribe(match=match)
    try:
        while True:
            while True:  # replay from the store
                batch = await store.events_after(seq, user_id=user_id, turn_id=turn_id, limit=REPLAY_PAGE)
                for stored in batch:
                    seq = stored.stored_seq
                    yield frame(stored)
                    if turn_id is not None and stored.type == "turn_delivered":
                        return  # a turn's stream ends with the turn
                if len(batch) < REPLAY_PAGE:
                    break
            if not follow:
                return
            while True:  # live
                try:
                    item = await _next_or_stop(subscription, stopping)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                except StopAsyncIteration:
                    item = Dropped(seq)
                if item is None:
                    return
                if isinstance(item, Dropped):
                    subscription = bus.subscribe(match=match)
                    break  # back to the store for what was missed
                if item.seq is None or item.seq <= seq:
                    continue
                seq = item.seq
                yield frame(item)
                if turn_id is not None and item.type == "turn_delivered":
                    return
    finally:
        subscription.close()


async def _next_or_stop(
    subscription: AsyncIterator[Event | Dropped], stopping: asyncio.Event
) -> Event | Dropped | None:
    """The next live item, or None once `stopping` is set; TimeoutError after a heartbeat's silence."""
    item = asyncio.ensure_future(anext(subscription))
    stop = asyncio.ensure_future(stopping.wait())
    try:
        done, _ = await asyncio.wait({item, stop}, timeout=HEARTBEAT_S, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (item, stop):
            task.cancel()
    if item in done:
        return item.result()
    if stop in done:
        return None
    raise TimeoutError
