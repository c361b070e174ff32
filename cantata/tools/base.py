"""The one shape every tool has, whatever runs it (a Python function, the sandbox, an MCP
server): what the model is shown of it, how it may be called, and `call`.

A Protocol rather than a base class, so that a tool from elsewhere (an MCP client's) is one
by having these attributes, without importing this module's classes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol


class Tool(Protocol):
    name: str  # unique among the agent's tools; what the model calls it by
    description: str  # what the model reads to choose it
    parameters: dict[str, Any]  # JSON Schema of the arguments object
    side_effects: bool  # a call that started and has no recorded result is never repeated
    approve: bool  # a person approves each call before it runs
    timeout_s: float

    async def call(self, arguments: dict[str, Any]) -> str:
        """The result as text for the model; raises ToolError with a message it may read.
        Called only with arguments valid against `parameters`, within `timeout_s`."""
        ...


@dataclass(frozen=True)
class ToolCall:
    """One call a model asked for in one step."""

    id: str  # the backend's id for it, or one Cantata gave it (step and position)
    name: str
    arguments: Any  # a JSON object as the model sent it; anything else fails the tool's schema

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


def definition(tool: Tool) -> dict[str, Any]:
    """What the model is shown of a tool."""
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}


def result_text(value: Any) -> str:
    """A tool's return value as the text the model reads: text as is, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)
