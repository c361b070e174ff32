"""The server's log: a line per request (`cantata.server.access`) and a line per failed
agent (`cantata.server.agents`), as text or, with `cantata serve --log-format json`, as
JSON lines (one object per line, the line's fields as keys).

A line names the request or the agent, never what the person wrote: no query strings, no
bodies, no message text; and every string in it goes through `scrub`, since a path or an
error may carry a configured api_key."""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Literal

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cantata.errors import scrub
from cantata.events import Event

LogFormat = Literal["text", "json"]
LOG_FORMATS: tuple[LogFormat, ...] = ("text", "json")

access = logging.getLogger("cantata.server.access")
agents = logging.getLogger("cantata.server.agents")

MAX_ERROR = 300  # characters of a failed agent's error: its kind and where, not a whole reply


class AccessLog:
    """One line per HTTP request once its response is over (a stream when it ends): method,
    path, status, bytes sent, duration. Pure ASGI, like BodyLimit, so streams pass untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        status = 0
        sent = 0

        async def sending(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            ms = round((time.monotonic() - started) * 1000, 1)
            client = scope.get("client")
            fields = {
                "method": scope["method"],
                "path": scope["path"],
                "status": status or 500,  # nothing sent: the app raised, and the server answers 500
                "bytes": sent,
                "ms": ms,
                "client": client[0] if client else None,
            }
            access.info(
                "%s %s %s %s ms", scope["method"], scope["path"], fields["status"], ms, extra={"fields": fields}
            )


def log_failed_agent(event: Event) -> None:
    """An event-bus listener: a warning for each agent that failed, in any turn this server runs."""
    if event.type != "agent_failed":
        return
    error = str(event.data.get("error") or "")[:MAX_ERROR]
    fields = {
        "turn_id": event.turn_id,
        "session_id": event.session_id,
        "agent": event.agent,
        "instance": event.data.get("instance"),
        "attempts": event.data.get("attempts"),
        "error": error,
    }
    agents.warning("agent %s failed in turn %s: %s", event.agent, event.turn_id, error, extra={"fields": fields})


class TextLines(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record))


class JsonLines(logging.Formatter):
    """One JSON object per record: time, level, logger, message, and the record's `fields`.
    json.dumps escapes newlines, so a traceback stays on its line."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in getattr(record, "fields", {}).items():
            line.setdefault(key, value)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps({key: scrub(v) if isinstance(v, str) else v for key, v in line.items()}, default=str)


def configure_logging(log_format: LogFormat) -> None:
    """`cantata serve`'s logging: Cantata's lines from INFO, everyone else's (uvicorn's)
    from WARNING, all on stderr in one format."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonLines() if log_format == "json" else TextLines())
    logging.basicConfig(handlers=[handler], level=logging.WARNING, force=True)
    logging.getLogger("cantata").setLevel(logging.INFO)
