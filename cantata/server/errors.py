"""Every error leaves the server in OpenAI's shape, `{"error": {"message", "type", "code"}}`,
with the status the error carries. Never a traceback: an unexpected exception is logged
here and answered with a one-line 500."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from cantata.errors import CantataError, get_logger

log = get_logger("cantata.server")

# OpenAI's error types, by status.
_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
    503: "service_unavailable_error",
}


class HTTPError(CantataError):
    """An error the server itself raises (unknown resource, bad key, busy session)."""

    def __init__(self, status: int, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def error_body(status: int, message: str, code: str | None = None) -> dict[str, dict[str, str | None]]:
    kind = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "code": code}}


def error_response(status: int, message: str, code: str | None = None) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(error_body(status, message, code), status_code=status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(CantataError)
    async def cantata_error(request: Request, exc: CantataError) -> JSONResponse:
        code = exc.code if isinstance(exc, HTTPError) else type(exc).__name__
        return error_response(exc.status, exc.message, code)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        return error_response(exc.status_code, str(exc.detail), None)

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
