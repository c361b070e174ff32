"""Server-sent events over the store: every stored event a caller may see, each with
`id:` = its sequence number in the store. A client that reconnects with `Last-Event-ID`
gets what it missed from the store, then the live tail (`event_feed.follow`), whichever
process committed them; the store is the single source, so replay and live can neither
overlap nor leave a gap."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import aclosing

from cantata.events import Event
from cantata.store import Store
from cantata.store.event_feed import EventFeed, follow


def frame(event: Event) -> str:
    data = json.dumps(event.as_dict(), ensure_ascii=False, separators=(",", ":"))
    return f"id: {event.seq}\nevent: {event.type}\ndata: {data}\n\n"


async def event_stream(
    feed: EventFeed,
    store: Store,
    seq: int,
    *,
    user_id: str | None,
    turn_id: int | None,
    follow_live: bool = True,
    stopping: asyncio.Event,
) -> AsyncIterator[str]:
    """The store's events after `seq`, then the live tail, as SSE text. The live tail ends
    once `stopping` is set (shutdown): a client reconnects with `Last-Event-ID`, to the
    successor, and misses nothing, while an open stream would hold the shutdown for its
    whole grace."""
    yield "retry: 1000\n\n"
    events = follow(feed, store, seq, user_id=user_id, turn_id=turn_id, live=follow_live, stopping=stopping)
    async with aclosing(events):  # its subscription is closed when the client goes, not later
        async for event in events:
            yield ": keep-alive\n\n" if event is None else frame(event)
