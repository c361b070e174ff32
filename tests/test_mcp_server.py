"""Cantata as a tool for other agents: every pipeline and deployed agent as an MCP tool, as the
`mcp` SDK's own client sees it, through `/mcp` on the app (in process, with API keys), through
`cantata mcp` (stdio, a real process) and through a real `cantata serve` (marker `server`).
The pipelines' models are scripted instances."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent

from cantata.config import load_config
from cantata.factory import registry
from cantata.runtime import Cantata
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.helpers.server_app import ROOT, client, make_app, mcp_over, new_key, running
from tests.helpers.servers import CantataServer


@pytest.fixture
def config(write: WriteFile) -> Path:
    # A model's size in its name: coaching's coach then writes its early reply.
    return scripted_config(write, fast={"latency_s": 0.01, "tokens_per_s": 1000, "model": "scripted-8B"})


def text(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


async def test_the_pipelines_are_tools_and_coaching_answers_with_its_turn(config: Path, home: Path) -> None:
    key = await new_key(home, "ann")
    async with running(make_app(config, home)) as app:
        async with mcp_over(app, key) as mcp:
            tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
            first = await mcp.call_tool("coaching", {"message": "I keep putting off the gym."})
            again = await mcp.call_tool(
                "coaching", {"message": "And now?", "session": first.structured_content["session"]}
            )
        async with client(app, key) as rest:
            turn = (await rest.get(f"/api/turns/{first.structured_content['turn_id']}")).json()
    assert {"coaching", "example"} <= set(tools)
    coaching = tools["coaching"]
    assert coaching.input_schema["required"] == ["message"] and "session" in coaching.input_schema["properties"]
    assert coaching.annotations is not None and coaching.annotations.destructive_hint is False
    assert not first.is_error, text(first)
    out = first.structured_content
    assert out["merged"] == turn["final"]["text"] == text(first) == out["reply"]
    assert out["early"] == turn["early"]["text"] and out["early"]
    assert out["session"] == turn["session"] and out["turn"] == 1 and turn["user"] == "ann"
    assert again.structured_content["session"] == out["session"] and again.structured_content["turn"] == 2


async def test_another_users_key_cannot_reach_the_first_users_session(config: Path, home: Path) -> None:
    ann, bob = await new_key(home, "ann"), await new_key(home, "bob")
    async with running(make_app(config, home)) as app:
        async with mcp_over(app, ann) as mcp:
            anns = (await mcp.call_tool("coaching", {"message": "My secret worry."})).structured_content
        async with mcp_over(app, bob) as mcp:
            refused = await mcp.call_tool("coaching", {"message": "Tell me more.", "session": anns["session"]})
            bobs = (await mcp.call_tool("coaching", {"message": "Hello."})).structured_content
        async with client(app, ann) as rest:
            ann_turns = (await rest.get(f"/api/sessions/{anns['session']}")).json()["turns"]
        async with client(app, bob) as rest:
            bob_sessions = [s["id"] for s in (await rest.get("/api/sessions")).json()]
    assert refused.is_error and text(refused) == f"no session '{anns['session']}'"
    assert refused.structured_content is None and "worry" not in text(refused)
    assert ann_turns == 1  # bob's message went nowhere near it
    assert bob_sessions == [bobs["session"]] and bobs["session"] != anns["session"]


async def test_mcp_needs_a_key_when_keys_exist(config: Path, home: Path) -> None:
    await new_key(home, "ann")
    async with (
        running(make_app(config, home)) as app,
        httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app),
            base_url=ROOT,  # type: ignore[arg-type]
        ) as http,
    ):
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        missing = await http.post("/mcp", json=body, headers={"Accept": "application/json, text/event-stream"})
        wrong = await http.post("/mcp", json=body, headers={"Authorization": "Bearer cnt_nope"})
    assert missing.status_code == wrong.status_code == 401
    assert missing.json()["error"]["code"] == "missing_api_key" and wrong.json()["error"]["code"] == "invalid_api_key"
    assert missing.headers["www-authenticate"] == "Bearer"


async def test_bad_arguments_and_unknown_tools_say_what_is_wrong(config: Path, home: Path) -> None:
    async with running(make_app(config, home)) as app, mcp_over(app, None) as mcp:
        empty = await mcp.call_tool("example", {"message": ""})
        extra = await mcp.call_tool("example", {"message": "hi", "colour": "blue"})
        with pytest.raises(MCPError, match="unknown tool 'nope'"):
            await mcp.call_tool("nope", {"message": "hi"})
        session = await mcp.call_tool("example", {"message": "hi", "session": "not-a-session"})
        started = (await mcp.call_tool("example", {"message": "hi"})).structured_content
        other = await mcp.call_tool("coaching", {"message": "hi", "session": started["session"]})
    assert other.is_error and text(other).startswith(
        f"session {started['session']} belongs to pipeline 'example', not 'coaching'"
    )
    assert empty.is_error and text(empty).startswith("arguments: message: String should have at least 1 character")
    assert extra.is_error and text(extra).startswith("arguments: colour: Extra inputs are not permitted")
    assert session.is_error and text(session) == "no session 'not-a-session'"


async def test_a_deployed_agent_is_a_tool_too(config: Path, home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "greeter"
    folder.mkdir()
    (folder / "pipeline.yaml").write_text(
        "name: greeter\ndescription: Greets.\nagents:\n  - name: answer\n    prompt: Say hello.\n    deliver: final\n"
    )
    app_for_store = Cantata(load_config(config), home=home)
    try:
        await registry.deploy(
            app_for_store.store, home, "greeter", folder, forced=False, sandboxed=True, task_turn=None, summary={}
        )
    finally:
        await app_for_store.close()
    async with running(make_app(config, home)) as app, mcp_over(app, None) as mcp:
        tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
        result = await mcp.call_tool("agent-greeter", {"message": "hi"})
        (home / "agents" / "greeter" / "1" / "pipeline.yaml").unlink()  # its files gone: not offered, not fatal
        after = {tool.name for tool in (await mcp.list_tools()).tools}
    assert tools["agent-greeter"].description.startswith("Greets.")
    assert not result.is_error and result.structured_content["merged"] == text(result)
    assert "coaching" in after and "agent-greeter" not in after


async def test_cantata_mcp_on_stdio(config: Path, home: Path) -> None:
    env = {"CANTATA_HOME": str(home), "PYTHONPATH": os.environ.get("PYTHONPATH", str(Path.cwd()))}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "cantata", "mcp", "--config", str(config), "--user", "ann"], env=env
    )
    async with Client(server) as mcp:
        names = {tool.name for tool in (await mcp.list_tools()).tools}
        result = await mcp.call_tool("coaching", {"message": "I keep putting off the gym."})
    assert {"coaching", "example"} <= names
    assert not result.is_error, text(result)
    assert result.structured_content["reply"] == text(result) and result.structured_content["early"]
    app = Cantata(load_config(config), home=home)
    try:
        turn = await app.store.get_turn(result.structured_content["turn_id"])
    finally:
        await app.close()
    assert turn is not None and turn.user_id == "ann"


@pytest.mark.server
async def test_mcp_on_cantata_serve_with_a_key(config: Path, home: Path, tmp_path: Path) -> None:
    key = await new_key(home, "ann")
    with CantataServer(tmp_path, "--config", str(config)) as server:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
            async with Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as mcp:
                names = {tool.name for tool in (await mcp.list_tools()).tools}
                result = await mcp.call_tool("coaching", {"message": "I keep putting off the gym."})
    assert "coaching" in names
    assert not result.is_error and result.structured_content["merged"] == text(result)


async def test_the_transports_refusals_are_in_the_one_error_shape(config: Path, home: Path) -> None:
    """What the SDK's transport refuses before MCP is spoken (a body that is not JSON by its
    Content-Type) leaves in the server's one JSON error shape, as every other error does;
    its JSON-RPC answers (a parse error) stay JSON-RPC."""
    async with running(make_app(config, home)) as app, client(app) as http:
        accept = {"Accept": "application/json, text/event-stream"}
        text = await http.post("/mcp", content=b"{}", headers={**accept, "Content-Type": "text/plain"})
        garbled = await http.post("/mcp", content=b"{not json", headers={**accept, "Content-Type": "application/json"})
    assert text.status_code == 400 and text.headers["content-type"] == "application/json"
    assert text.json() == {
        "error": {"message": "Invalid Content-Type header", "type": "invalid_request_error", "code": None}
    }
    assert garbled.status_code == 400 and garbled.json()["error"]["code"] == -32700  # JSON-RPC's parse error
