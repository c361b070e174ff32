"""The MCP client against real MCP servers written with the SDK (tests/helpers/mcp_servers.py),
over stdio and streamable HTTP: listing, calling, filters, and every way a server can fail,
each a ToolError on that call with the server usable again after.

The tests share one stdio server where they can (a start imports the SDK in a new process):
the loop is the module's, and a test that breaks the server leaves it to restart itself."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
import pytest_asyncio

from cantata.errors import ToolError, register_secret
from cantata.mcp_client import MAX_RESPONSE, MAX_RESULT, McpServer, McpServers, _Owner
from cantata.mcp_spec import McpServerSpec
from cantata.mcp_stdio import MAX_MESSAGE
from tests.helpers.mcp_servers import http_server, stdio_command
from tests.helpers.servers import _running, free_port, http_handler_server

pytestmark = pytest.mark.asyncio(loop_scope="module")

TOKEN = "mcp-test-token-5f2a9c"
SHOWN = {"CANTATA_TEST_SHOWN": "shown value"}


def stdio(kind: str = "stdio", **options: Any) -> McpServer:
    return McpServer(McpServerSpec(**stdio_command(kind), **options))


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def server() -> AsyncIterator[McpServer]:
    """One server for the module: read when it starts (and restarts), the environment has a
    variable it may see (`SHOWN`) and one it may not."""
    os.environ.update(SHOWN, CANTATA_TEST_HIDDEN="hidden value")
    found = stdio(name="tools", timeout_s=3, env=[*SHOWN, "CANTATA_TEST_UNSET"])
    try:
        yield found
    finally:
        await found.close()
        for name in (*SHOWN, "CANTATA_TEST_HIDDEN"):
            os.environ.pop(name, None)


@pytest.fixture(scope="module")
def http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with http_server(tmp_path_factory.mktemp("mcp-http"), TOKEN) as url:
        yield url


async def test_stdio_tools_have_the_shape_of_every_tool_and_answer(server: McpServer) -> None:
    tools = {tool.name: tool for tool in await server.tools()}
    assert {"add", "echo", "wipe", "env", "noisy", "crash", "hang", "garbage", "fail", "big", "pid"} <= set(tools)
    add = tools["add"]
    assert add.description == "Add two whole numbers."
    assert add.parameters["type"] == "object" and set(add.parameters["required"]) == {"a", "b"}
    assert add.timeout_s == 3 and add.approve is False
    # Destructive by annotation, or by the MCP spec's default when a tool says nothing.
    assert tools["wipe"].side_effects and tools["add"].side_effects
    assert not tools["echo"].side_effects and not tools["env"].side_effects
    assert await add.call({"a": 2, "b": 40}) == "42"
    assert await tools["echo"].call({"text": "same process"}) == "same process"


async def test_the_server_is_started_once_and_reused(server: McpServer) -> None:
    first, second = await asyncio.gather(server.call("pid", {}), server.call("pid", {}))
    assert first == second == await server.call("pid", {})


async def test_include_and_exclude_filter_the_tools() -> None:
    server = stdio(include=["add", "echo", "wipe"], exclude=["wipe"], approve=True)
    try:
        tools = await server.tools()
        assert sorted(t.name for t in tools) == ["add", "echo"] and all(t.approve for t in tools)
        with pytest.raises(ToolError, match="offers no tool 'wipe'"):
            await server.call("wipe", {"what": "everything"})
    finally:
        await server.close()


async def test_the_server_sees_only_the_variables_it_names(server: McpServer) -> None:
    assert await server.call("env", {"name": "CANTATA_TEST_SHOWN"}) == "shown value"
    assert await server.call("env", {"name": "CANTATA_TEST_HIDDEN"}) == "<unset>"
    assert await server.call("env", {"name": "CANTATA_TEST_UNSET"}) == "<unset>"


async def test_stderr_goes_to_the_log_scrubbed_never_to_the_model(
    server: McpServer, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "sk-mcp-stderr-secret-0042"
    register_secret(secret)
    caplog.set_level(logging.INFO, logger="cantata.mcp")
    result = await server.call("noisy", {"text": f"the key is {secret}"})
    assert result == "noted"
    # The line reaches the log as the server writes it, from a reader of its own.
    for _ in range(200):
        lines = [r.getMessage() for r in caplog.records if "noisy says" in r.getMessage()]
        if lines:
            break
        await asyncio.sleep(0.05)
    assert lines == ["MCP server 'tools' stderr: noisy says: the key is ***"]


async def test_an_error_result_is_a_tool_error_with_its_reason(server: McpServer) -> None:
    with pytest.raises(ToolError, match="the tool .fail. failed: .*because I said so"):
        await server.call("fail", {"why": "because I said so"})
    assert await server.call("add", {"a": 1, "b": 1}) == "2"


async def test_arguments_the_server_refuses_are_a_tool_error(server: McpServer) -> None:
    with pytest.raises(ToolError, match="'add'"):
        await server.call("add", {"a": "one"})


async def test_a_crash_mid_call_is_a_tool_error_and_the_next_call_restarts_it(server: McpServer) -> None:
    before = await server.call("pid", {})
    with pytest.raises(ToolError, match="stopped during the call of 'crash': its outcome is unknown"):
        await server.call("crash", {})
    after = await server.call("pid", {})
    assert after != before and not _running(int(before))


async def test_a_server_killed_between_calls_is_started_again(server: McpServer) -> None:
    before = int(await server.call("pid", {}))
    os.kill(before, signal.SIGKILL)
    answers: list[str] = []
    for _ in range(2):  # the first may meet the dead process before its end is noticed
        try:
            answers.append(await server.call("pid", {}))
        except ToolError as exc:
            assert "stopped during the call" in str(exc)
    assert answers and int(answers[-1]) != before


async def test_a_hanging_call_times_out_and_the_server_still_answers(server: McpServer) -> None:
    with pytest.raises(ToolError, match="the call of 'hang' on MCP server 'tools' did not finish within 3 s"):
        await server.call("hang", {})
    assert await server.call("echo", {"text": "still here"}) == "still here"


async def test_a_long_result_is_cut_and_a_message_too_large_stops_the_server(server: McpServer) -> None:
    """What a hostile server sends is bounded: a result over MAX_RESULT reaches the model cut,
    saying so; a message over MAX_MESSAGE is not read whole, the server is stopped (a
    ToolError) and started again on the next call."""
    long = await server.call("big", {"size": MAX_RESULT + 5000})
    assert len(long.encode()) < MAX_RESULT + 200
    assert long.endswith(f"[cut: the result has {MAX_RESULT + 5000} bytes; the first {MAX_RESULT} are shown]")
    before = await server.call("pid", {})
    with pytest.raises(
        ToolError,
        match=r"the call of 'big' on MCP server 'tools' failed: the server sent a message over 8 MiB, and was stopped",
    ):
        await server.call("big", {"size": MAX_MESSAGE + 1})
    after = await server.call("pid", {})
    assert after != before and not _running(int(before))


async def test_garbage_instead_of_a_result_is_a_tool_error() -> None:
    server = stdio("garbling", name="liar")
    try:
        assert await server.call("add", {"a": 2, "b": 2}) == "4"
        with pytest.raises(ToolError, match="the call of 'garbage' on MCP server 'liar' failed: its answer is not"):
            await server.call("garbage", {})
        assert await server.call("add", {"a": 3, "b": 3}) == "6"  # the same connection: it read the answer whole
    finally:
        await server.close()


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ({"command": "/nonexistent/mcp-server"}, "could not start: .*No such file"),
        ({"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]}, "could not start: Connection closed"),
        ({**stdio_command("silent"), "start_timeout_s": 1}, "did not start within 1 s"),
    ],
    ids=["missing", "exits", "silent"],
)
async def test_a_server_that_does_not_start_is_a_tool_error_each_time(spec: dict[str, Any], reason: str) -> None:
    server = McpServer(McpServerSpec(name="broken", **spec))
    try:
        with pytest.raises(ToolError, match=f"MCP server 'broken' {reason}"):
            await server.call("add", {"a": 1, "b": 2})
        with pytest.raises(ToolError, match=f"MCP server 'broken' {reason}"):  # tried again, failing the same way
            await server.tools()
    finally:
        await server.close()


async def test_close_stops_every_server_and_later_calls_fail() -> None:
    servers = McpServers()
    spec = McpServerSpec(**stdio_command())
    server = servers.server(spec)
    assert servers.server(McpServerSpec(**stdio_command())) is server  # one per spec
    pid = int(await server.call("pid", {}))
    await servers.close()
    assert not _running(pid)
    with pytest.raises(ToolError, match="was stopped"):
        await server.call("pid", {})


@pytest.mark.server
async def test_http_lists_and_calls_with_a_header_from_the_environment(
    http_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_TEST_TOKEN", TOKEN)
    server = McpServer(McpServerSpec(url=http_url, headers={"Authorization": "Bearer $env:MCP_TEST_TOKEN"}))
    try:
        assert "add" in {t.name for t in await server.tools()}
        assert await server.call("add", {"a": 20, "b": 22}) == "42"
        with pytest.raises(ToolError, match="the tool .fail. failed: .*over HTTP"):
            await server.call("fail", {"why": "over HTTP"})
    finally:
        await server.close()


@pytest.mark.server
async def test_http_answers_are_bounded(http_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over HTTP too: a long result is cut; an answer over MAX_RESPONSE is read no further
    (a ToolError), and the next call is answered."""
    monkeypatch.setenv("MCP_TEST_TOKEN", TOKEN)
    server = McpServer(
        McpServerSpec(name="remote", url=http_url, headers={"Authorization": "Bearer $env:MCP_TEST_TOKEN"})
    )
    try:
        long = await server.call("big", {"size": MAX_RESULT + 10})
        assert long.endswith(f"[cut: the result has {MAX_RESULT + 10} bytes; the first {MAX_RESULT} are shown]")
        with pytest.raises(
            ToolError, match="the call of 'big' on MCP server 'remote' failed: the server's answer is over 8 MiB"
        ):
            await server.call("big", {"size": MAX_RESPONSE})
        assert await server.call("add", {"a": 1, "b": 2}) == "3"
    finally:
        await server.close()


@pytest.mark.server
async def test_http_without_its_variable_or_with_a_wrong_key_does_not_start(
    http_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCP_TEST_TOKEN", raising=False)
    spec = McpServerSpec(name="remote", url=http_url, headers={"Authorization": "Bearer $env:MCP_TEST_TOKEN"})
    unset = McpServer(spec)
    with pytest.raises(ToolError, match=r"MCP server 'remote' could not start: \$env:MCP_TEST_TOKEN is not set"):
        await unset.call("add", {"a": 1, "b": 1})
    monkeypatch.setenv("MCP_TEST_TOKEN", "not-the-token")
    wrong = McpServer(spec)
    try:
        with pytest.raises(ToolError, match="MCP server 'remote' could not start"):
            await wrong.call("add", {"a": 1, "b": 1})
    finally:
        await wrong.close()
        await unset.close()


class _NotMcp(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
        body = b"<html>hello</html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST  # noqa: N815

    def log_message(self, *args: object) -> None:
        pass


async def test_http_that_is_not_mcp_or_refuses_is_a_tool_error() -> None:
    with http_handler_server(_NotMcp) as root:
        server = McpServer(McpServerSpec(name="web", url=f"{root}/mcp", start_timeout_s=5))
        with pytest.raises(ToolError, match="MCP server 'web' (could not start|did not start)"):
            await server.tools()
        await server.close()
    refused = McpServer(McpServerSpec(name="gone", url=f"http://127.0.0.1:{free_port()}/mcp"))
    with pytest.raises(ToolError, match="MCP server 'gone' could not start"):
        await refused.tools()
    await refused.close()


async def test_the_values_of_its_variables_are_secrets(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that echoes a token it was given on stderr (or that fails to start saying it)
    never gets it into the log in clear."""
    token = "ghp-mcp-env-token-7d3e1b"
    monkeypatch.setenv("MCP_TEST_ENV_TOKEN", token)
    caplog.set_level(logging.INFO, logger="cantata.mcp")
    spec = McpServerSpec(
        name="leaky",
        command="sh",
        args=["-c", "echo using token $MCP_TEST_ENV_TOKEN >&2; exit 1"],
        env=["MCP_TEST_ENV_TOKEN"],
        start_timeout_s=5,
    )
    server = McpServer(spec)
    try:
        with pytest.raises(ToolError, match="MCP server 'leaky' could not start") as failed:
            await server.tools()
        for _ in range(200):
            lines = [r.getMessage() for r in caplog.records if "using token" in r.getMessage()]
            if lines:
                break
            await asyncio.sleep(0.05)
    finally:
        await server.close()
    assert lines == ["MCP server 'leaky' stderr: using token ***"]
    assert token not in str(failed.value)


async def test_no_pipe_is_left_open_by_a_start_that_ends_early() -> None:
    """A start cancelled before its transport is entered, or failing at the spawn, leaves no
    pipe open (the stderr pipe is made inside the transport, and closed there)."""

    def open_fds() -> set[str]:
        return set(os.listdir("/proc/self/fd"))

    before = open_fds()
    owner = _Owner(McpServerSpec(**stdio_command()))
    async with AsyncExitStack() as stack:
        transport = await owner._transport(stack)  # noqa: F841 (held, as the SDK's Client holds it)
    assert open_fds() <= before
    missing = McpServer(McpServerSpec(command="/nonexistent/mcp-server"))
    with pytest.raises(ToolError, match="could not start"):
        await missing.tools()
    await missing.close()
    assert open_fds() <= before


async def test_a_server_that_closes_its_stderr_is_not_taken_for_dead() -> None:
    """Whether a server still runs is its process's to say, not its stderr's: one that
    closes it at start (as a daemon-style wrapper may) is started once, not at every call."""
    command = stdio_command()
    server = McpServer(
        McpServerSpec(
            name="quiet", command="sh", args=["-c", 'exec 2>&-; exec "$0" "$@"', command["command"], *command["args"]]
        )
    )
    try:
        pids = [await server.call("pid", {}) for _ in range(3)]
    finally:
        await server.close()
    assert len(set(pids)) == 1 and not _running(int(pids[0]))
