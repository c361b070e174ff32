"""Parse server-sent events as a client does (for the server's tests)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class SSEvent:
    id: str | None = None
    event: str | None = None
    data: str = ""
    comments: list[str] = field(default_factory=list)

    def json(self) -> Any:
        return json.loads(self.data)


def parse(text: str) -> list[SSEvent]:
    """Every block separated by a blank line; comment-only blocks are kept (heartbeats)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        ev = SSEvent()
        lines = []
        for line in block.split("\n"):
            if line.startswith(":"):
                ev.comments.append(line[1:].strip())
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                lines.append(value)
            elif name == "id":
                ev.id = value
            elif name == "event":
                ev.event = value
        ev.data = "\n".join(lines)
        events.append(ev)
    return events
