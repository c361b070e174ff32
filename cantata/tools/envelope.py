"""How a backend with no native tool calls (the embedded model, the scripted backend) takes
part in a tool loop: each step's reply is one JSON object, constrained by this schema as
any structured output is (a llama.cpp grammar), either {"tool_calls": [{"name", "arguments"}]}
or {"final": <the answer>}. The final answer comes first among the options, so a backend
that answers with the first valid value it can (the scripted one) ends the loop at once."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from cantata.errors import OutputInvalid
from cantata.structured import parse_json_reply
from cantata.tools.base import Tool, ToolCall


def envelope_schema(tools: Sequence[Tool], output: dict[str, Any] | None, *, max_calls: int) -> dict[str, Any]:
    """The schema of one step's reply; each tool's arguments constrained by its own schema,
    and no more calls than the loop allows (a small model otherwise repeats a call until
    its tokens run out).
    `$defs` of the output's and the tools' schemas are lifted to the root, where their
    `#/$defs/...` references point."""
    defs: dict[str, Any] = {}

    def lifted(schema: dict[str, Any]) -> dict[str, Any]:
        schema = dict(schema)
        defs.update(schema.pop("$defs", {}))
        schema.pop("title", None)
        return schema

    final = lifted(output) if output is not None else {"type": "string"}
    calls = [
        {
            "type": "object",
            "properties": {"name": {"const": tool.name}, "arguments": lifted(tool.parameters)},
            "required": ["name", "arguments"],
        }
        for tool in tools
    ]
    schema: dict[str, Any] = {
        "anyOf": [
            {"type": "object", "properties": {"final": final}, "required": ["final"]},
            {
                "type": "object",
                "properties": {
                    "tool_calls": {"type": "array", "minItems": 1, "maxItems": max_calls, "items": {"anyOf": calls}}
                },
                "required": ["tool_calls"],
            },
        ]
    }
    if defs:
        schema["$defs"] = defs
    return schema


def envelope_instructions(tools: Sequence[Tool]) -> str:
    """What the model is told of its tools and of the two ways to answer."""
    lines = [
        "## Tools",
        "You may call these tools; their results come back to you before you answer.",
        'To call tools, reply with {"tool_calls": [{"name": "<tool>", "arguments": {...}}]}.',
        'When you have what you need, reply with {"final": <your answer in the format above>}.',
    ]
    for tool in tools:
        lines.append(f"### {tool.name}\n{tool.description.strip()}\narguments: {json.dumps(tool.parameters)}")
    return "\n".join(lines)


def read_envelope(text: str, step: int) -> tuple[list[ToolCall], Any]:
    """(the calls asked for, None) or ([], the final answer). Raises OutputInvalid."""
    reply = parse_json_reply(text)
    if isinstance(reply, dict) and isinstance(reply.get("tool_calls"), list) and reply["tool_calls"]:
        calls = []
        for i, call in enumerate(reply["tool_calls"]):
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise OutputInvalid(f"tool_calls[{i}] is not an object with a 'name'")
            calls.append(ToolCall(f"call_{step}_{i}", call["name"], call.get("arguments", {})))
        return calls, None
    if isinstance(reply, dict) and "final" in reply:
        return [], reply["final"]
    raise OutputInvalid('the reply is neither {"tool_calls": [...]} nor {"final": ...}')
