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

import pytest

from cantata.config import load_config
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from tests.helpers.pipelines import WriteFile
from tests.helpers.servers import LlamaServer

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


@pytest.fixture(scope="module")
def tool_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with LlamaServer(tmp_path_factory.mktemp("llama-tools"), chat_format="chatml-function-calling") as server:
        yield server.url


async def test_a_tool_loop_runs_against_a_server_with_tool_calls(
    tool_server: str, write: WriteFile, home: Path
) -> None:
    write("geo.py", TOOLS)
    pipeline = load_pipeline(write("p.yaml", PIPELINE))
    config = write(
        "instances.yaml",
        f"instances:\n  - name: llama\n    backend: openai\n    url: {tool_server}\n    dialect: llama-cpp-python\n",
    )
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
