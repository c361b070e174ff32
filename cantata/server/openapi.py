"""/openapi.json: what FastAPI derives from the routes, completed with what it cannot see.

FastAPI documents a 422 in its own `detail` shape, which this server never sends (every error
is an `ErrorResponse`, errors.py), and knows nothing of the statuses that dependencies and the
middleware answer. Here, for every operation: the 422's body is the real one; a 401 wherever
a key is asked for (the bearer scheme, auth.py); a 413 wherever a body is read (BodyLimit);
an open server's 421 and 403 everywhere (rebinding.py);
optional parameters that are left out rather than null; and the stream's chunk model, which no route returns as JSON, joins the schemas. Statuses
that one route answers (404, 409, ...) are declared on the route itself (`error_responses`)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from cantata.server.errors import error_doc
from cantata.server.protocol import ChatCompletionChunk, ErrorResponse

_FASTAPI_422 = ("HTTPValidationError", "ValidationError")


def complete_openapi(app: FastAPI) -> None:
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            schemas = schema.setdefault("components", {}).setdefault("schemas", {})
            _add_models(schemas, ChatCompletionChunk, ErrorResponse)
            for name in _FASTAPI_422:
                schemas.pop(name, None)
            for path in schema.get("paths", {}).values():
                for operation in path.values():
                    _complete(operation)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _not_null(parameter: dict[str, Any]) -> None:
    """An optional query parameter or header is left out, never sent as null: FastAPI's
    `anyOf [X, null]` for `X | None` would have clients send the text "null"."""
    schema = parameter.get("schema", {})
    kept = [s for s in schema.get("anyOf", []) if s.get("type") != "null"]
    if len(kept) == 1 and len(kept) < len(schema["anyOf"]):
        del schema["anyOf"]
        schema.update(kept[0])


def _add_models(schemas: dict[str, Any], *models: type[BaseModel]) -> None:
    _, defs = models_json_schema([(m, "serialization") for m in models], ref_template="#/components/schemas/{model}")
    for name, definition in defs.get("$defs", {}).items():
        schemas.setdefault(name, definition)


def _complete(operation: dict[str, Any]) -> None:
    for parameter in operation.get("parameters", []):
        _not_null(parameter)
    responses = operation.setdefault("responses", {})
    statuses = {"403", "421"} | ({"422"} & set(responses))
    if operation.get("security"):
        statuses.add("401")
    if "requestBody" in operation:
        statuses.add("413")
    for status in statuses:
        responses[status] = error_doc(int(status))
