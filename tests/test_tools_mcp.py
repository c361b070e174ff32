"""`mcp:` tools of an agent: a real MCP server written with the SDK (tests/helpers/mcp_servers.py)
over stdio and streamable HTTP, beside a Python tool, in one tool loop on the scripted backend.
The server is started once per runtime and reused across turns; one that cannot start leaves
its tools out and the agent goes on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cantata.config import load_config
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from tests.helpers.mcp_servers import http_server, stdio_command
from tests.helpers.pipelines import WriteFile

TOKEN = "tools-mcp-token-8c1d"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


@pytest.fixture(scope="module")
def http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with http_server(tmp_path_factory.mktemp("mcp-http"), TOKEN) as url:
        yield url


async def test_a_python_tool_and_mcp_servers_over_stdio_and_http_in_one_loop(
    write: WriteFile, home: Path, http_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLS_MCP_TOKEN", TOKEN)
    write("local.py", 'def shout(text: str) -> str:\n    """Capitals."""\n    return text.upper()\n')
    stdio = stdio_command()
    spec = {
        "name": "mixed",
        "agents": [
            {
                "name": "worker",
                "prompt": "Use the tools.",
                "deliver": "final",
                "tools": [
                    {"function": "local.shout"},
                    {"mcp": {"name": "box", **stdio, "include": ["echo", "wipe", "pid"]}},
                    {
                        "mcp": {
                            "name": "web",
                            "url": http_url,
                            "headers": {"Authorization": "Bearer $env:TOOLS_MCP_TOKEN"},
                            "include": ["add"],
                        }
                    },
                    {"mcp": {"name": "gone", "command": str(home / "no-such-server")}},
                ],
            }
        ],
    }
    pipeline = load_pipeline(write("p.yaml", json.dumps(spec)))
    steps = [
        {"tool_calls": [call("shout", text="hi"), call("echo", text="back"), call("add", a=2, b=5)]},
        {"tool_calls": [call("pid"), call("crash")]},
        {"final": "done"},
        {"tool_calls": [call("pid")]},
        {"final": "again"},
    ]
    replies = write("replies.yaml", "worker: " + json.dumps(steps) + "\n")
    config = write("instances.yaml", f"instances:\n  - name: s\n    backend: scripted\n    replies: {replies}\n")
    app = Cantata(load_config(config), home=home)
    try:
        first = await app.run_turn(pipeline, "go")
        second = await app.run_turn(pipeline, "again", session_id=first.session)
    finally:
        await app.close()
    (agent,) = first.agents
    assert agent.status == "ok", agent.error
    calls = {(c["tool"], c["status"]): c["result"] or c["error"] for c in agent.tool_calls}
    assert calls[("shout", "ok")] == "HI" and calls[("echo", "ok")] == "back" and calls[("add", "ok")] == "7"
    # `crash` is excluded by `include`: for this agent it does not exist.
    assert calls[("crash", "error")].startswith(
        "there is no tool named 'crash'; the tools are: shout, echo, wipe, pid, add"
    )
    (again,) = second.agents
    assert again.status == "ok"
    # One server process for the runtime, reused by the next turn.
    assert again.tool_calls[0]["result"] == calls[("pid", "ok")]
    stored = [c["tool"] for c in agent.tool_calls]
    assert stored == ["shout", "echo", "add", "pid", "crash"]
