"""Server-sent events: every stored event the caller may see (event_stream.py says how
replay and the live tail fit together)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header
from fastapi.responses import StreamingResponse

from cantata.server.auth import Caller
from cantata.server.deps import ServiceDep
from cantata.server.errors import HTTPError

router = APIRouter(prefix="/api", tags=["events"])
SSE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/event-stream": {}}, "description": "Server-sent events, `id:` the store's seq."}
}


def _after(last_event_id: str | None, after: int | None) -> int:
    if last_event_id is None:
        return after or 0
    try:
        return int(last_event_id)
    except ValueError:
        raise HTTPError(400, f"Last-Event-ID must be an event id (an integer), not '{last_event_id}'") from None


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
