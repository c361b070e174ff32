"""`/mcp` on `cantata serve`: Cantata's MCP tools (mcp_server.py) over streamable HTTP,
behind the server's API keys: each request's key says whose turns its calls run, as for
any route (no key, or a bad one, is the server's 401).

A router like any application's (cantata/applications.py offers it when the `mcp` extra is
installed): a route for the endpoint, and a lifespan that runs the SDK's session manager
inside the app's own (so the Service exists). Stateless and answering in JSON: every
request stands alone, so any server over a shared PostgreSQL can answer any call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import Any

from fastapi import APIRouter, FastAPI
from mcp.server import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from opentelemetry import context as trace_context
from starlette.datastructures import Headers
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from cantata.mcp_server import mcp_server
from cantata.server.auth import Auth
from cantata.server.errors import HTTPError, error_response
from cantata.server.keys import Principal
from cantata.server.service import Service

PATH = "/mcp"
PRINCIPAL = "cantata.principal"  # the caller, in the request's ASGI scope, for the tool handlers
TRACE = "cantata.trace"  # the request's trace context (its span), there too


class Endpoint:
    """The ASGI app at /mcp: the caller's key first, in the server's one error shape; then
    the SDK's transport, which answers the MCP methods (POST, GET, DELETE) itself."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = scope["app"].state
        auth: Auth = state.auth
        try:
            principal = await auth.principal(Headers(scope=scope).get("authorization"))
        except HTTPError as exc:
            await error_response(exc.status, exc.message, exc.code)(scope, receive, send)
            return
        scope[PRINCIPAL] = principal
        # The SDK runs the call in a task of its session manager's, outside this request's context.
        scope[TRACE] = trace_context.get_current()
        manager: StreamableHTTPSessionManager = state.mcp
        await manager.handle_request(scope, receive, _ErrorShape(scope, receive, send))


class _ErrorShape:
    """`send`, except that a refusal the SDK's transport answers in plain text (a bad
    Content-Type, a body over its limit) leaves in the server's one JSON error shape, its
    text the message. Its JSON answers (JSON-RPC errors among them) pass as they are."""

    def __init__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.scope, self.receive, self.send = scope, receive, send
        self._refusal: int | None = None  # the status of a refusal being held back
        self._text = b""

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] >= 400 and not _json(message):
            self._refusal = message["status"]
            return
        if self._refusal is None or message["type"] != "http.response.body":
            await self.send(message)
            return
        self._text += message.get("body", b"")
        if not message.get("more_body", False):
            said = self._text.decode("utf-8", "replace").strip() or HTTPStatus(self._refusal).phrase
            await error_response(self._refusal, said)(self.scope, self.receive, self.send)


def _json(start: Message) -> bool:
    content_type = Headers(raw=start.get("headers", [])).get("content-type", "")
    return content_type.startswith("application/json")


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    service: Service = app.state.service
    server = mcp_server(service, principal_of=_caller, trace_of=_request_trace)
    # No security_settings: an open server's Host and Origin are checked for every route (rebinding.py).
    manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True)
    app.state.mcp = manager
    async with manager.run():
        yield


def _caller(ctx: ServerRequestContext[Any, Any]) -> Principal:
    """The key's user: the HTTP request a call came in is the context's `request`."""
    assert ctx.request is not None  # on HTTP, always
    principal: Principal = ctx.request.scope[PRINCIPAL]
    return principal


def _request_trace(ctx: ServerRequestContext[Any, Any]) -> trace_context.Context | None:
    assert ctx.request is not None
    found: trace_context.Context | None = ctx.request.scope.get(TRACE)
    return found


router = APIRouter(lifespan=lifespan)
# A Starlette route (an ASGI app), not FastAPI's, and so not in /openapi.json: MCP describes
# itself (tools/list), and its JSON-RPC bodies are no REST resource.
router.routes.append(Route(PATH, endpoint=Endpoint()))
