"""Every error leaves the server in OpenAI's shape, `{"error": {"message", "type", "code"}}`
(protocol.ErrorResponse), with the status the error carries. Never a traceback: an
unexpected exception is logged here and answered with a one-line 500. A 405 says in `Allow`
which methods the path has."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.routing import compile_path

from cantata.errors import CantataError, get_logger
from cantata.server.protocol import ErrorResponse

log = get_logger("cantata.server")

# OpenAI's error types, by status.
_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "invalid_request_error",
    421: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
    503: "service_unavailable_error",
}


# What each status means here, for /openapi.json (error_responses, openapi.py).
MEANINGS = {
    400: "A parameter or the body is wrong in a way its schema cannot say (the message says what).",
    401: "With API keys in force: no key, a malformed Authorization header, or an unknown or revoked key.",
    403: "The route needs an admin key; or, on an open server, the request comes from another site's page (Origin).",
    404: "No such resource, or one the key may not see.",
    409: (
        "The session is busy with a turn (X-Cantata-Busy: reject) or one waiting for an approval, or belongs"
        " to another pipeline; or the approval was decided already."
    ),
    413: "The request body is over the server's limit.",
    421: "On an open server (loopback, no API keys), the Host is not a loopback name (DNS rebinding).",
    422: "A parameter or the body does not match its schema.",
    502: "A model instance answered with an error.",
    503: "A model instance does not answer, or generated code cannot be sandboxed here.",
    504: "A model instance timed out.",
}


def error_doc(status: int) -> dict[str, Any]:
    """A status in /openapi.json: what it means, and the one error body, as JSON whatever
    the route's own media type (openapi.py adds ErrorResponse to the schemas)."""
    schema = {"$ref": f"#/components/schemas/{ErrorResponse.__name__}"}
    return {"description": MEANINGS[status], "content": {"application/json": {"schema": schema}}}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` for a route that answers these statuses."""
    return {status: error_doc(status) for status in statuses}


class HTTPError(CantataError):
    """An error the server itself raises (unknown resource, bad key, busy session)."""

    def __init__(self, status: int, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def error_body(status: int, message: str, code: str | None = None) -> dict[str, dict[str, str | None]]:
    kind = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "code": code}}


def error_response(
    status: int, message: str, code: str | None = None, *, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    headers = {**(headers or {}), **({"WWW-Authenticate": "Bearer"} if status == 401 else {})}
    return JSONResponse(error_body(status, message, code), status_code=status, headers=headers or None)


_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def api_methods(request: Request) -> set[str]:
    """The methods /openapi.json lists for the request's path (none: not an API path)."""
    methods: set[str] = set()
    for template, item in request.app.openapi().get("paths", {}).items():
        if compile_path(template)[0].match(request.url.path):
            methods |= {method.upper() for method in item if method in _METHODS}
    return methods


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(CantataError)
    async def cantata_error(request: Request, exc: CantataError) -> JSONResponse:
        code = exc.code if isinstance(exc, HTTPError) else type(exc).__name__
        return error_response(exc.status, exc.message, code)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        # The dashboard's static files take every path no route takes, so a method an API
        # path lacks reaches them: their 404 or 405 becomes the path's 405, with its `Allow`.
        status, message, headers = exc.status_code, str(exc.detail), dict(exc.headers or {})
        if status in (404, 405):
            methods = api_methods(request)
            if methods and request.method not in methods:
                status, message = 405, f"{request.method} is not allowed on {request.url.path}"
            if status == 405:
                headers["Allow"] = ", ".join(sorted(methods or {"GET", "HEAD"}))
        return error_response(status, message, None, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        # One line: where and what, for the first problem (the rest usually follow from it).
        errors = exc.errors()
        first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return error_response(422, f"{where}: {first.get('msg')}{more}", "invalid_request")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, f"internal error ({type(exc).__name__}); see the server log", "internal_error")
