"""Server-sent events: every stored event the caller may see (event_stream.py says how
replay and the live tail fit together)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query
from fastapi.responses import StreamingResponse
from pydantic import Field

from cantata.server.auth import Caller
from cantata.server.deps import ServiceDep
from cantata.server.errors import error_responses
from cantata.server.ids import MAX_ID

router = APIRouter(prefix="/api", tags=["events"])
SSE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/event-stream": {}}, "description": "Server-sent events, `id:` the store's seq."},
    **error_responses(404),
}


# A position is an event id the store can hold (ids.py): bounded here, so that the schema
# says so and one beyond it is a 422 before it reaches a query, not an overflow mid-stream.
Position = Annotated[int, Field(ge=0, le=MAX_ID)]
LastEventId = Annotated[Position | None, Header(description="Where a reconnecting client resumes: after this id.")]
After = Annotated[Position | None, Query(description="Start after this event id (Last-Event-ID, when sent, wins).")]


def _after(last_event_id: int | None, after: int | None) -> int:
    """Where a stream starts: after Last-Event-ID (a client reconnecting), else after `after`."""
    return last_event_id if last_event_id is not None else after or 0


def _response(stream: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(
        stream, media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )


@router.get("/events", response_class=StreamingResponse, responses=SSE)
async def events(
    service: ServiceDep,
    caller: Caller,
    user: str | None = None,
    after: After = None,
    follow: bool = True,
    last_event_id: LastEventId = None,
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
    after: After = None,
    last_event_id: LastEventId = None,
) -> StreamingResponse:
    """One turn's events, from the start (or after Last-Event-ID), ending with the turn."""
    await service.turn(caller, turn_id)
    return _response(service.events(_after(last_event_id, after), user_id=None, turn_id=turn_id))
