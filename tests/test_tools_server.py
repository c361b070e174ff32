"""A tool loop against a real OpenAI-compatible server with tool calls (marker `server`):
llama-cpp-python's server with its `chatml-function-calling` chat format, serving the
embedded model file. The server decides between a message and a call by grammar, and
constrains the arguments by the tool's schema; what is checked here is the wire: tools
sent, calls read back, run, and their results sent back in `tool` messages.

That chat format's template does not show `tool` messages' content to the model, so the
model cannot use a result: the test accepts a loop that ends at max_steps, and says so."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cantata.backends.base import CompletionRequest
from cantata.backends.openai_compat import OpenAICompatBackend
from cantata.config import load_config
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from cantata.sandbox import sandbox_problem
from tests.helpers.mcp_servers import http_server
from tests.helpers.pipelines import WriteFile
from tests.helpers.servers import LlamaServer
from tests.test_tools_team import SANDBOXED, TEAM_TOOLS, team_yaml

TEAM_TOKEN = "team-server-token-4d1e"

pytestmark = pytest.mark.server

TOOLS = '''
CAPITALS = {"france": "Paris", "italy": "Rome", "norway": "Oslo"}


def capital(country: str) -> str:
    """The capital city of a country."""
    return CAPITALS.get(country.strip().lower(), f"no capital known for {country!r}")
'''

PIPELINE = """
name: geography
agents:
  - name: answer
    prompt: Find the capital of France with the capital tool, then say it.
    deliver: final
    max_tokens: 48
    max_steps: 3
    tools:
      - function: geo.capital
"""


def server_config(write: WriteFile, url: str) -> Path:
    """One instance, llama-cpp-python's server at `url`."""
    return write(
        "instances.yaml",
        f"instances:\n  - name: llama\n    backend: openai\n    url: {url}\n    dialect: llama-cpp-python\n",
    )


@pytest.fixture(scope="module")
def tool_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with LlamaServer(tmp_path_factory.mktemp("llama-tools"), chat_format="chatml-function-calling") as server:
        yield server.url


async def test_a_tool_loop_runs_against_a_server_with_tool_calls(
    tool_server: str, write: WriteFile, home: Path
) -> None:
    write("geo.py", TOOLS)
    pipeline = load_pipeline(write("p.yaml", PIPELINE))
    config = server_config(write, tool_server)
    app = Cantata(load_config(config), home=home)
    try:
        result = await app.run_turn(pipeline, "What is the capital of France?")
        stored = (await app.store.tool_calls([result.turn_id]))[result.turn_id]
    finally:
        await app.close()
    (agent,) = result.agents
    got = json.dumps(agent.tool_calls, indent=1)
    assert agent.tool_calls, f"the model called no tool: {agent.status} {agent.error} {result.final}"
    for call in agent.tool_calls:
        # The server constrains the arguments by the schema: each call is valid and runs.
        assert call["tool"] == "capital" and isinstance(call["arguments"]["country"], str), got
        assert call["status"] == "ok" and call["result"], got
    assert [(r.tool, r.status) for r in stored] == [("capital", "ok")] * len(stored)
    if agent.status == "ok":
        assert result.final is not None and result.final.text
    else:  # the model never sees the results in this chat format (see above)
        assert agent.error == f"no final answer after max_steps=3 model calls ({len(agent.tool_calls)} tool calls)"
    print(f"\nagent {agent.status}: {agent.error or result.final}; calls: {got}")


@pytest.fixture(scope="module")
def team_mcp_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with http_server(tmp_path_factory.mktemp("team-mcp"), TEAM_TOKEN) as url:
        yield url


@pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")
async def test_the_team_of_every_kind_of_tool_runs_against_a_server_with_tool_calls(
    tool_server: str, team_mcp_url: str, write: WriteFile, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Done-when pipeline (tests/test_tools_team.py) against the real server: every tool,
    the MCP servers' listed when the agent ran, goes to the server in `tools`; whichever the
    model calls runs (the model picks; the test prints what it got)."""
    monkeypatch.setenv("TEAM_MCP_TOKEN", TEAM_TOKEN)
    bodies: list[dict[str, Any]] = []
    build = OpenAICompatBackend.request_body

    def spy(self: OpenAICompatBackend, request: CompletionRequest, model: str) -> dict[str, Any]:
        body = build(self, request, model)
        bodies.append(body)
        return body

    monkeypatch.setattr(OpenAICompatBackend, "request_body", spy)
    write("team_tools.py", TEAM_TOOLS)
    write("gen.py", SANDBOXED)
    spec = json.loads(team_yaml(team_mcp_url))
    spec["agents"][0].update(max_tokens=48, max_steps=4, prompt="Call one of your tools, then answer.")
    pipeline = load_pipeline(write("team.yaml", json.dumps(spec)))
    config = server_config(write, tool_server)
    app = Cantata(load_config(config), home=home)
    try:
        result = await app.run_turn(pipeline, "Multiply 6 by 7, or look up beta, or echo hello.")
    finally:
        await app.close()
    (agent,) = result.agents
    got = json.dumps(agent.tool_calls, indent=1)
    print(f"\nagent {agent.status}: {agent.error or result.final}; calls: {got}")
    offered = {tool["function"]["name"] for tool in bodies[0]["tools"]}
    assert offered == {"times", "lookup", "echo", "pid", "add"}, offered
    assert agent.tool_calls, f"the model called no tool: {agent.status} {agent.error} {result.final}"
    for call in agent.tool_calls:
        # The server constrains the arguments by each tool's schema, the MCP tools' included.
        assert call["tool"] in offered and call["status"] == "ok" and call["result"], got
    assert agent.status == "ok" or agent.error == (
        f"no final answer after max_steps=4 model calls ({len(agent.tool_calls)} tool calls)"
    ), got
