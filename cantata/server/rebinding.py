"""An open server (loopback, no API keys yet) answers only requests meant for it: a web page
that rebinds its own name to 127.0.0.1 would otherwise reach it from the browser, with the
local user's full rights, and so would any other site's page that posts to it. So, in open
mode and on every route: the Host must be a loopback name (else 421) and an Origin, when a
browser sends one, a loopback page's (else 403). With keys in force neither is checked: such
a page has no key, and a loopback server behind a reverse proxy must keep its names."""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from cantata.server.auth import Auth, is_loopback
from cantata.server.errors import error_response


class LoopbackOnly:
    """Pure ASGI (as BodyLimit), so that a streamed reply passes through untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            auth: Auth = scope["app"].state.auth
            refusal = _refusal(Headers(scope=scope)) if await auth.mode() == "open" else None
            if refusal is not None:
                status, message, code = refusal
                await error_response(status, message, code)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _refusal(headers: Headers) -> tuple[int, str, str] | None:
    host = headers.get("host")
    if host is not None and not _loopback_name(host):
        return (
            421,
            f"the Host '{host}' is not a loopback name: an open server answers only those",
            "misdirected_request",
        )
    origin = headers.get("origin")
    if origin is not None and not _loopback_page(origin):
        return 403, f"a page of '{origin}' may not call an open server: only its own pages may", "foreign_origin"
    return None


def _loopback_name(host: str) -> bool:
    """`host[:port]` names a loopback address (`[::1]:8000` included)."""
    try:
        name = urlsplit(f"//{host}").hostname
    except ValueError:  # a malformed port or bracket
        return False
    return name is not None and is_loopback(name)


def _loopback_page(origin: str) -> bool:
    """A page served from a loopback name ("null", a sandboxed or local file's page, is not)."""
    try:
        parts = urlsplit(origin)
        name = parts.hostname
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and name is not None and is_loopback(name)
