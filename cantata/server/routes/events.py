"""Server-sent events: every stored event the caller may see (event_stream.py says how
replay and the live tail fit together)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header
from fastapi.responses import StreamingResponse

from cantata.server.auth import Caller
from cantata.server.deps import ServiceDep
from cantata.server.errors import HTTPError
from cantata.server.ids import MAX_ID, storable

router = APIRouter(prefix="/api", tags=["events"])
SSE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/event-stream": {}}, "description": "Server-sent events, `id:` the store's seq."}
}


def _after(last_event_id: str | None, after: int | None) -> int:
    """Where a stream starts: after Last-Event-ID (a client reconnecting), else after `after`.
    A position beyond what the store can hold is a 400 here, not an overflow mid-stream."""
    if last_event_id is not None:
        given = last_event_id.strip()
        if not re.fullmatch(r"[0-9]{1,19}", given) or not storable(int(given)):
            raise HTTPError(400, f"Last-Event-ID must be an event id (0 to {MAX_ID}), not '{given[:40]}'")
        return int(given)
    if after is not None and not storable(after):
        raise HTTPError(400, f"after must be an event id (0 to {MAX_ID}), not {str(after)[:40]}")
    return after or 0


def _response(stream: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(
        stream, media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )


@router.get("/events", response_class=StreamingResponse, responses=SSE)
async def events(
    service: ServiceDep,
    caller: Caller,
    user: str | None = None,
    after: int | None = None,
    follow: bool = True,
    last_event_id: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    """Every event of the caller's turns (an admin: everyone's, or one user's with ?user=);
    with `follow=false`, only what is stored, then the stream ends."""
    who = service.event_filter(caller, user)
    return _response(service.events(_after(last_event_id, after), user_id=who, turn_id=None, follow=follow))


@router.get("/turns/{turn_id}/events", response_class=StreamingResponse, responses=SSE)
async def turn_events(
    service: ServiceDep,
    turn_id: int,
    caller: Caller,
    after: int | None = None,
    last_event_id: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    """One turn's events, from the start (or after Last-Event-ID), ending with the turn."""
    await service.turn(caller, turn_id)
    return _response(service.events(_after(last_event_id, after), user_id=None, turn_id=turn_id))
