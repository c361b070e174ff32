"""The OpenAI-compatible endpoints: each pipeline is a model."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Response
from fastapi.responses import StreamingResponse

from cantata.server.auth import Caller
from cantata.server.deps import ServiceDep
from cantata.server.errors import HTTPError, error_responses
from cantata.server.openai_shapes import completion
from cantata.server.protocol import ChatCompletion, ChatRequest, ModelList
from cantata.server.streaming import ChatStream

router = APIRouter(prefix="/v1", tags=["openai"])


@router.get("/models", response_model=ModelList)
async def models(service: ServiceDep, caller: Caller) -> ModelList:
    return service.models()


def _turn_input(body: ChatRequest) -> tuple[str, list[tuple[str, str]]]:
    """The new message (the last user message) and the history before it, as pairs of
    (user message, what the assistant answered)."""
    last = max((i for i, m in enumerate(body.messages) if m.role == "user"), default=None)
    if last is None:
        raise HTTPError(400, "messages: there is no user message to answer", code="no_user_message")
    pairs: list[tuple[str, str]] = []
    for message in body.messages[:last]:
        if message.role == "user":
            pairs.append((message.text(), ""))
        elif message.role == "assistant" and pairs:
            asked, said = pairs[-1]
            pairs[-1] = (asked, (said + "\n" + message.text()).strip())
    return body.messages[last].text(), pairs


# A stream's `data:` lines are ChatCompletionChunk objects (declared here for /openapi.json).
STREAM: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {
            "text/event-stream": {"schema": {"$ref": "#/components/schemas/ChatCompletionChunk"}},
        },
        "description": "The completion, or with `stream: true` its chunks as server-sent events.",
    },
    **error_responses(400, 404, 409, 502, 503, 504),
}


@router.post("/chat/completions", response_model=ChatCompletion, responses=STREAM)
async def chat_completions(
    service: ServiceDep,
    body: ChatRequest,
    caller: Caller,
    response: Response,
    x_cantata_session: Annotated[str | None, Header()] = None,
    x_cantata_busy: Annotated[str | None, Header()] = None,
    x_cantata_status_events: Annotated[str | None, Header()] = None,
) -> ChatCompletion | StreamingResponse:
    pipeline = service.pipeline(body.model)
    message, history = _turn_input(body)
    if x_cantata_busy not in (None, "wait", "reject"):
        raise HTTPError(400, "X-Cantata-Busy must be 'wait' or 'reject'", code="invalid_header")
    handle = await service.start_turn(
        caller,
        pipeline,
        message,
        session_id=x_cantata_session or None,
        history=history,
        reject_if_busy=x_cantata_busy == "reject",
    )
    started = await handle.wait_started()
    headers = {"X-Cantata-Session": started.session_id, "X-Cantata-Turn": str(started.turn_id)}
    if body.stream:
        stream = ChatStream(handle, model=body.model, started=started, status_events=bool(x_cantata_status_events))
        headers |= {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream.__aiter__(), media_type="text/event-stream", headers=headers)
    result = await service.wait(handle)
    response.headers.update(headers)
    return completion(result, model=body.model)
