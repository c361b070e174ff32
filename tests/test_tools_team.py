"""An agent's tools of every kind in one pipeline (issue 20's Done-when, on the scripted
backend): a Python function, a sandboxed function, and MCP servers over stdio and HTTP
(real servers written with the SDK: tests/helpers/mcp_servers.py); then `pipeline:` and
`agent:` tools, each call a sub-turn of the calling user's, and the guards against a
pipeline calling itself. The same team against a real server with tool calls:
tests/test_tools_server.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cantata.config import load_config
from cantata.errors import SpecError
from cantata.factory import registry
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from cantata.sandbox import sandbox_problem
from tests.helpers.mcp_servers import http_server, stdio_command
from tests.helpers.pipelines import WriteFile
from tests.test_tools import call

TOKEN = "team-test-token-81c3"

TEAM_TOOLS = '''
def times(a: int, b: int) -> int:
    """Multiply two whole numbers."""
    return a * b
'''

SANDBOXED = '''
import os

def lookup(key: str) -> dict:
    """The value of a key, and the HOME it ran with."""
    return {"key": key, "value": {"alpha": 1, "beta": 2}.get(key), "home": os.environ.get("HOME")}
'''


def team_yaml(url: str, *, http_env: str = "TEAM_MCP_TOKEN") -> str:
    stdio = stdio_command()
    return json.dumps(
        {
            "name": "team",
            "agents": [
                {
                    "name": "worker",
                    "prompt": "Use your tools, then answer.",
                    "deliver": "final",
                    "tools": [
                        {"function": "team_tools.times"},
                        {"sandbox": "gen.lookup"},
                        {"mcp": {"name": "local", **stdio, "include": ["echo", "pid", "wipe"], "exclude": ["wipe"]}},
                        {
                            "mcp": {
                                "url": url,
                                "headers": {"Authorization": f"Bearer $env:{http_env}"},
                                "include": ["add"],
                            }
                        },
                    ],
                }
            ],
        }
    )


@pytest.fixture(scope="module")
def mcp_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with http_server(tmp_path_factory.mktemp("team-mcp"), TOKEN) as url:
        yield url


def scripted(write: WriteFile, replies: dict[str, Any]) -> Path:
    path = write("replies.yaml", "".join(f"{agent}: {json.dumps(steps)}\n" for agent, steps in replies.items()))
    return write("instances.yaml", f"instances:\n  - name: steady\n    backend: scripted\n    replies: {path}\n")


@pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")
async def test_a_team_agent_uses_a_function_a_sandboxed_function_and_mcp_servers_over_stdio_and_http(
    write: WriteFile, home: Path, mcp_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAM_MCP_TOKEN", TOKEN)
    write("team_tools.py", TEAM_TOOLS)
    write("gen.py", SANDBOXED)
    pipeline = load_pipeline(write("team.yaml", team_yaml(mcp_url)))
    first = [
        call("times", a=6, b=7),
        call("lookup", key="beta"),
        call("echo", text="hello over stdio"),
        call("add", a=2, b=3),
        call("pid"),
        call("wipe", what="everything"),  # excluded: no such tool for this agent
    ]
    steps = [{"tool_calls": first}, {"final": "done"}, {"tool_calls": [call("pid")]}, {"final": "again"}]
    app = Cantata(load_config(scripted(write, {"worker": steps})), home=home)
    try:
        one = await app.run_turn(pipeline, "go", user="ana")
        two = await app.run_turn(pipeline, "again", user="ana", session_id=one.session)
        rows = {row.tool: row for row in (await app.store.tool_calls([one.turn_id]))[one.turn_id]}
    finally:
        await app.close()
    assert (one.status, one.final and one.final.text) == ("ok", "done")
    calls = {c["tool"]: c for c in one.agents[0].tool_calls}
    assert calls["times"]["result"] == "42"
    assert json.loads(calls["lookup"]["result"]) == {"key": "beta", "value": 2, "home": "/tmp"}  # under bubblewrap
    assert calls["echo"]["result"] == "hello over stdio"
    assert calls["add"]["result"] == "5"  # over HTTP, with the header read from the environment
    assert calls["wipe"]["status"] == "error" and "no tool named 'wipe'" in calls["wipe"]["error"]
    assert not rows["echo"].side_effects and rows["add"].side_effects  # from the tools' annotations
    # The stdio server was started once for both turns.
    (again,) = two.agents[0].tool_calls
    assert (two.status, again["tool"], again["result"]) == ("ok", "pid", calls["pid"]["result"])


async def test_an_mcp_server_that_fails_is_an_error_on_that_call_and_the_turn_goes_on(
    write: WriteFile, home: Path
) -> None:
    write("team_tools.py", TEAM_TOOLS)
    silent = {"name": "silent", **stdio_command("silent"), "include": ["ghost"], "start_timeout_s": 1}
    spec = {
        "name": "flaky",
        "agents": [
            {
                "name": "worker",
                "prompt": "Use your tools.",
                "deliver": "final",
                "tools": [{"function": "team_tools.times"}, {"mcp": silent}],
            }
        ],
    }
    pipeline = load_pipeline(write("flaky.yaml", json.dumps(spec)))
    steps = [{"tool_calls": [call("ghost"), call("times", a=2, b=2)]}, {"final": "carried on"}]
    app = Cantata(load_config(scripted(write, {"worker": steps})), home=home)
    try:
        result = await app.run_turn(pipeline, "go")
    finally:
        await app.close()
    calls = {c["tool"]: c for c in result.agents[0].tool_calls}
    assert (result.status, result.final and result.final.text) == ("ok", "carried on")
    assert calls["times"]["result"] == "4"
    assert calls["ghost"]["status"] == "error"
    assert calls["ghost"]["error"] == "MCP server 'silent' did not start within 1 s (its stderr is in Cantata's log)"


def test_an_mcp_entry_is_checked_at_load(write: WriteFile) -> None:
    bad = {"name": "m", "agents": [{"name": "a", "prompt": "hi", "tools": [{"mcp": {"url": "ftp://x"}}]}]}
    with pytest.raises(SpecError, match=r"url: 'ftp://x' is not an http\(s\) URL"):
        load_pipeline(write("bad.yaml", json.dumps(bad)))
    named = {"name": "m", "agents": [{"name": "a", "prompt": "hi", "tools": [{"mcp": {"command": "x"}, "name": "y"}]}]}
    with pytest.raises(SpecError, match=r"an 'mcp:' entry offers its server's tools under their own names"):
        load_pipeline(write("named.yaml", json.dumps(named)))


# -- sub-turns ------------------------------------------------------------------------------


def lead_yaml(tool: dict[str, Any]) -> str:
    agent = {"name": "boss", "prompt": "Delegate.", "deliver": "final", "tools": [tool]}
    return json.dumps({"name": "lead", "agents": [agent]})


AIDE = "name: helper\ndescription: A helpful aide.\nagents:\n  - name: aide\n    prompt: Help.\n    deliver: final\n"


async def test_a_pipeline_tool_runs_a_sub_turn_as_the_calling_user(write: WriteFile, home: Path) -> None:
    write("helper.yaml", AIDE)
    pipeline = load_pipeline(write("lead.yaml", lead_yaml({"pipeline": "helper.yaml"})))
    boss = [{"tool_calls": [call("helper", message="please help")]}, {"final": "delegated"}]
    app = Cantata(load_config(scripted(write, {"boss": boss, "aide": "aide says hi"})), home=home)
    try:
        result = await app.run_turn(pipeline, "go", user="ana")
        (used,) = result.agents[0].tool_calls
        answer = json.loads(used["result"])
        session = await app.store.get_session(answer["session"])
        sub = await app.store.get_turn(answer["turn_id"])
    finally:
        await app.close()
    assert (result.status, result.final and result.final.text) == ("ok", "delegated")
    assert (answer["reply"], answer["status"], answer["turn"]) == ("aide says hi", "ok", 1)
    assert session is not None and (session.user_id, session.pipeline) == ("ana", "helper")
    assert sub is not None and sub.message == "please help"
    assert answer["session"] != result.session


async def test_a_sub_turn_cannot_reach_another_users_session(write: WriteFile, home: Path) -> None:
    helper = load_pipeline(write("helper.yaml", AIDE))
    app = Cantata(load_config(scripted(write, {"aide": "for bob"})), home=home)
    try:
        bobs = await app.run_turn(helper, "mine", user="bob")
    finally:
        await app.close()
    pipeline = load_pipeline(write("lead.yaml", lead_yaml({"pipeline": "helper.yaml", "name": "aide_team"})))
    boss = [{"tool_calls": [call("aide_team", message="read bob's", session=bobs.session)]}, {"final": "no luck"}]
    app = Cantata(load_config(scripted(write, {"boss": boss, "aide": "leaked"})), home=home)
    try:
        result = await app.run_turn(pipeline, "go", user="ana")
    finally:
        await app.close()
    (used,) = result.agents[0].tool_calls
    assert used["status"] == "error"
    assert used["error"] == f"aide_team: no session '{bobs.session}' for user 'ana'"


def test_a_pipeline_calling_itself_through_its_tools_is_refused_at_load(write: WriteFile) -> None:
    write("b.yaml", lead_yaml({"pipeline": "a.yaml"}).replace('"lead"', '"b"'))
    with pytest.raises(SpecError, match=r"the pipeline calls itself through its tools \(a.yaml -> b.yaml -> a.yaml\)"):
        load_pipeline(write("a.yaml", lead_yaml({"pipeline": "b.yaml"}).replace('"lead"', '"a"')))
    with pytest.raises(SpecError, match=r"no pipeline 'nowhere'"):
        load_pipeline(write("c.yaml", lead_yaml({"pipeline": "nowhere"})))


async def test_a_deployed_agent_as_a_tool_and_one_that_calls_itself(
    write: WriteFile, home: Path, tmp_path: Path
) -> None:
    artefact = tmp_path / "echoer"
    artefact.mkdir()
    selfish = {
        "name": "echoer",
        "agents": [{"name": "echo_agent", "prompt": "Echo.", "deliver": "final", "tools": [{"agent": "echoer"}]}],
    }
    (artefact / "pipeline.yaml").write_text(json.dumps(selfish))
    pipeline = load_pipeline(write("lead.yaml", lead_yaml({"agent": "echoer@1"})))
    replies = {
        "boss": [{"tool_calls": [call("echoer", message="echo this")]}, {"final": "relayed"}],
        "echo_agent": [{"tool_calls": [call("echoer", message="and again")]}, {"final": "echoed"}],
    }
    app = Cantata(load_config(scripted(write, replies)), home=home)
    try:
        await registry.deploy(
            app.store, home, "echoer", artefact, forced=True, sandboxed=False, task_turn=None, summary={}
        )
        result = await app.run_turn(pipeline, "go", user="ana")
        (used,) = result.agents[0].tool_calls
        answer = json.loads(used["result"])
        inner = (await app.store.tool_calls([answer["turn_id"]]))[answer["turn_id"]]
    finally:
        await app.close()
    assert (result.final and result.final.text, answer["reply"]) == ("relayed", "echoed")
    (refused,) = inner
    assert refused.status == "error"
    assert refused.error == (
        "echoer would run pipeline 'echoer' inside its own turn (lead -> echoer -> echoer); "
        "a pipeline may not call itself"
    )
