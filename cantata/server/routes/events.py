"""Server-sent events: every stored event the caller may see, each with `id:` = its
sequence number in the store. A client that reconnects with `Last-Event-ID` gets what it
missed from the store, then the live tail; the store is the single source, so replay and
live can neither overlap nor leave a gap."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, Request
from fastapi.responses import StreamingResponse

from cantata.events import Dropped, Event
from cantata.server.auth import Caller
from cantata.server.errors import HTTPError
from cantata.server.service import Service

router = APIRouter(prefix="/api", tags=["events"])
HEARTBEAT_S = 15.0
REPLAY_PAGE = 1000


def _after(last_event_id: str | None, after: int | None) -> int:
    if last_event_id is None:
        return after or 0
    try:
        return int(last_event_id)
    except ValueError:
        raise HTTPError(400, f"Last-Event-ID must be an event id (an integer), not '{last_event_id}'") from None


def _frame(event: Event) -> str:
    data = json.dumps(event.as_dict(), ensure_ascii=False, separators=(",", ":"))
    return f"id: {event.seq}\nevent: {event.type}\ndata: {data}\n\n"


async def _stream(
    service: Service, seq: int, *, user_id: str | None, turn_id: int | None, follow: bool = True
) -> AsyncIterator[str]:
    """The store's events after `seq`, then the live tail. The subscription is opened
    before the replay, so an event committed in between is in one or the other (and a
    duplicate is recognised by its seq); a subscriber that falls behind is dropped by
    the bus and catches up from the store the same way."""

    def match(event: Event) -> bool:
        if not event.persisted:
            return False
        if turn_id is not None:
            return event.turn_id == turn_id
        return user_id is None or service.owners.get(event.turn_id) == user_id

    bus, store = service.runtime.bus, service.store
    yield "retry: 1000\n\n"
    subscription = bus.subscribe(match=match)
    try:
        while True:
            while True:  # replay from the store
                batch = await store.events_after(seq, user_id=user_id, turn_id=turn_id, limit=REPLAY_PAGE)
                for stored in batch:
                    assert stored.seq is not None  # read back from the store, so numbered
                    seq = stored.seq
                    yield _frame(stored)
                    if turn_id is not None and stored.type == "turn_delivered":
                        return  # a turn's stream ends with the turn
                if len(batch) < REPLAY_PAGE:
                    break
            if not follow:
                return
            while True:  # live
                try:
                    item = await asyncio.wait_for(anext(subscription), timeout=HEARTBEAT_S)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                except StopAsyncIteration:
                    item = Dropped(seq)
                if isinstance(item, Dropped):
                    subscription = bus.subscribe(match=match)
                    break  # back to the store for what was missed
                if item.seq is None or item.seq <= seq:
                    continue
                seq = item.seq
                yield _frame(item)
                if turn_id is not None and item.type == "turn_delivered":
                    return
    finally:
        subscription.close()


def _response(stream: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(
        stream, media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )


@router.get("/events", response_class=StreamingResponse, responses={200: {"content": {"text/event-stream": {}}}})
async def events(
    request: Request,
    caller: Caller,
    user: str | None = None,
    after: int | None = None,
    follow: bool = True,
    last_event_id: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    """Every event of the caller's turns (an admin: everyone's, or one user's with ?user=);
    with `follow=false`, only what is stored, then the stream ends."""
    service: Service = request.app.state.service
    who = service.event_filter(caller, user)
    return _response(_stream(service, _after(last_event_id, after), user_id=who, turn_id=None, follow=follow))


@router.get(
    "/turns/{turn_id}/events", response_class=StreamingResponse, responses={200: {"content": {"text/event-stream": {}}}}
)
async def turn_events(
    request: Request,
    turn_id: int,
    caller: Caller,
    after: int | None = None,
    last_event_id: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    """One turn's events, from the start (or after Last-Event-ID), ending with the turn."""
    service: Service = request.app.state.service
    await service.turn(caller, turn_id)
    return _response(_stream(service, _after(last_event_id, after), user_id=None, turn_id=turn_id))
