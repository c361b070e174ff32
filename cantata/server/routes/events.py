"""Server-sent events: every stored event the caller may see, each with `id:` = its
sequence number in the store. A client that reconnects with `Last-Event-ID` gets what it
missed from the store, then the live tail; the store is the single source, so replay and
live can neither overlap nor leave a gap."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, Request
from fastapi.responses import StreamingResponse

from cantata.server import reads
from cantata.server.auth import Caller
from cantata.server.errors import HTTPError
from cantata.server.service import Service

router = APIRouter(prefix="/api", tags=["events"])
POLL_S = 0.2
HEARTBEAT_S = 15.0


def _after(last_event_id: str | None, after: int | None) -> int:
    if last_event_id is None:
        return after or 0
    try:
        return int(last_event_id)
    except ValueError:
        raise HTTPError(400, f"Last-Event-ID must be an event id (an integer), not '{last_event_id}'") from None


async def _stream(
    request: Request, service: Service, seq: int, *, user_id: str | None, turn_id: int | None
) -> AsyncIterator[str]:
    yield "retry: 1000\n\n"
    quiet_since = time.monotonic()
    while True:
        batch = await reads.events_after(service.store, seq, user_id=user_id, turn_id=turn_id)
        for event in batch:
            seq = event.seq
            data = json.dumps(event.as_json(), ensure_ascii=False, separators=(",", ":"))
            yield f"id: {event.seq}\nevent: {event.type}\ndata: {data}\n\n"
            if turn_id is not None and event.type == "turn_delivered":
                return  # a turn's stream ends with the turn
        if batch:
            quiet_since = time.monotonic()
            continue
        if time.monotonic() - quiet_since > HEARTBEAT_S:
            yield ": keep-alive\n\n"
            quiet_since = time.monotonic()
        if await request.is_disconnected():
            return
        await asyncio.sleep(POLL_S)


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
    last_event_id: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    """Every event of the caller's turns (an admin: everyone's, or one user's with ?user=)."""
    service: Service = request.app.state.service
    who = service.visible_user(caller, user)
    return _response(_stream(request, service, _after(last_event_id, after), user_id=who, turn_id=None))


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
    return _response(_stream(request, service, _after(last_event_id, after), user_id=None, turn_id=turn_id))
