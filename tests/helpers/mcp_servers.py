"""Real MCP servers for the MCP client's tests, written with the `mcp` SDK, each run as its own
process: `python tests/helpers/mcp_servers.py stdio|silent|http PORT [TOKEN]` (run by path,
so that it needs nothing of Cantata's and no PYTHONPATH; the client passes a child only the
environment it names).

  stdio    the tools below on stdin/stdout
  garbling the stdio server behind a relay that replaces each response holding GARBLE (the
           `garbage` tool's) with a result that is not one: the SDK never writes such a thing
  silent   a process that never answers (a server that hangs at start)
  http     the tools below over streamable HTTP on 127.0.0.1:PORT/mcp (health: /healthz);
           with TOKEN, a request without `Authorization: Bearer TOKEN` gets a 401

Tools: add, echo (read-only), wipe (destructive), env (what the server's environment holds),
noisy (writes on stderr), crash (the process exits mid-call), hang (never answers), garbage
(see `garbling`), fail (an error result), big (as many bytes as asked for), pid.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

HERE = Path(__file__).resolve()
GARBLE = "GARBLE-ME"
GARBAGE_RESULT = {"content": "not a list of content blocks", "isError": "maybe"}


def stdio_command(kind: str = "stdio") -> dict[str, Any]:
    """The `command` and `args` of an McpServerSpec that runs this file's server `kind`."""
    return {"command": sys.executable, "args": [str(HERE), kind]}


@contextmanager
def http_server(log_dir: Path, token: str | None = None) -> Iterator[str]:
    """This file's `http` server in a process of its own, until the block ends; yields its URL."""
    from tests.helpers.servers import ServerProcess, free_port  # (not when run as a script)

    port = free_port()
    command = [sys.executable, str(HERE), "http", str(port), *([token] if token else [])]
    root = f"http://127.0.0.1:{port}"
    with ServerProcess(log_dir / "mcp-http.log", command, f"{root}/healthz"):
        yield f"{root}/mcp"


def build() -> MCPServer:
    server = MCPServer("cantata-test-tools")

    @server.tool()
    def add(a: int, b: int) -> str:
        """Add two whole numbers."""
        return str(a + b)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str) -> str:
        """Say the text back."""
        return text

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def wipe(what: str) -> str:
        """Pretend to delete something."""
        return f"wiped {what}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    def env(name: str) -> str:
        """The value of an environment variable of the server's, or <unset>."""
        return os.environ.get(name, "<unset>")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def noisy(text: str) -> str:
        """Write the text on stderr, and answer 'noted'."""
        print(f"noisy says: {text}", file=sys.stderr, flush=True)
        return "noted"

    @server.tool()
    def crash() -> str:
        """The server process exits before answering."""
        os._exit(3)

    @server.tool()
    async def hang() -> str:
        """Never answers."""
        await anyio.sleep(3600)
        return "too late"

    @server.tool()
    def garbage() -> str:
        """Under `garbling`, answered with something that is not a tool result."""
        return GARBLE

    @server.tool()
    def fail(why: str) -> str:
        """Always fails, saying why."""
        raise ToolError(why)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def big(size: int) -> str:
        """A text of `size` bytes (a server that answers too much)."""
        return "x" * size

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def pid() -> str:
        """The server's process id."""
        return str(os.getpid())

    return server


def run_http(port: int, token: str | None) -> None:
    import uvicorn
    from starlette.requests import Request
    from starlette.responses import JSONResponse, PlainTextResponse, Response
    from starlette.types import ASGIApp, Receive, Scope, Send

    server = build()

    @server.custom_route("/healthz", methods=["GET"])
    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    app = server.streamable_http_app(host="127.0.0.1")

    async def guarded(scope: Scope, receive: Receive, send: Send, inner: ASGIApp = app) -> None:
        if token and scope["type"] == "http" and scope["path"].startswith("/mcp"):
            headers = dict(scope["headers"])
            if headers.get(b"authorization", b"").decode() != f"Bearer {token}":
                await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
                return
        await inner(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")


def garbling() -> None:
    child = subprocess.Popen([sys.executable, str(HERE), "stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    to_child = child.stdin

    def relay_requests() -> None:
        for line in sys.stdin.buffer:
            to_child.write(line)
            to_child.flush()
        to_child.close()

    threading.Thread(target=relay_requests, daemon=True).start()
    for line in child.stdout:
        if GARBLE.encode() in line:
            answer = {"jsonrpc": "2.0", "id": json.loads(line)["id"], "result": GARBAGE_RESULT}
            line = json.dumps(answer).encode() + b"\n"
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


def main() -> None:
    kind = sys.argv[1]
    if kind == "stdio":
        build().run("stdio")
    elif kind == "garbling":
        garbling()
    elif kind == "silent":
        time.sleep(3600)
    elif kind == "http":
        run_http(int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None)
    else:
        sys.exit(f"unknown server kind {kind!r}")


if __name__ == "__main__":
    main()
