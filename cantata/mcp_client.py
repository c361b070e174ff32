"""MCP servers as tools, through the official `mcp` SDK (the `mcp` extra).

A server is started (or, over HTTP, reached) on first use, once per Cantata process
(`McpServers` keeps one per spec), reused across turns, started again when it died, and
stopped on close. Each of its tools has the shape every tool of an agent has (`McpTool`).
Whatever goes wrong with a server (it does not start, hangs, crashes mid-call, answers
garbage) is a ToolError on that call, in bounded time: the model reads it, and the turn goes
on. A server's stderr goes to Cantata's log (scrubbed of secrets), never to a model.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CONNECTION_CLOSED,
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
)
from pydantic import ValidationError

from cantata.errors import ToolError, get_logger
from cantata.mcp_spec import McpServerSpec
from cantata.mcp_stdio import MAX_MESSAGE, Child, stdio_transport

log = get_logger("cantata.mcp")

STOP_S = 10.0  # to stop a server: its transport's shutdown is bounded (stdin closed, SIGTERM, SIGKILL)
MAX_PAGES = 50  # of tools/list: a server whose listing never ends is not followed forever
HTTP_READ_S = 300.0  # an HTTP read may wait this long (a call's own limit is its timeout_s)
MAX_RESULT = 1 << 20  # bytes of a tool result a model reads; the rest is cut, saying so
MAX_RESPONSE = MAX_MESSAGE  # bytes of one HTTP answer (a call's result), as of a stdio message


@dataclass(eq=False)  # not frozen: the tool Protocol's attributes are plain (settable) ones
class McpTool:
    """One tool of an MCP server, in the shape of every tool of an agent's."""

    name: str
    description: str
    parameters: dict[str, Any]
    side_effects: bool
    approve: bool
    timeout_s: float
    server: McpServer = field(repr=False)

    async def call(self, arguments: dict[str, Any]) -> str:
        """The tool's result as text for the model; a ToolError for anything else."""
        return await self.server.call(self.name, arguments)


def has_side_effects(tool: Tool) -> bool:
    """Whether a call may change the world, by the tool's annotations and the MCP spec's
    defaults: a tool is destructive unless it says it is read-only or not destructive. So an
    unannotated tool counts as having side effects: a call of it whose outcome is unknown is
    never repeated silently."""
    hints = tool.annotations
    if hints is None:
        return True
    if hints.read_only_hint:
        return False
    return hints.destructive_hint is not False


class McpServer:
    """One MCP server of a spec: its connection, started when needed."""

    def __init__(self, spec: McpServerSpec) -> None:
        self.spec = spec
        self._connection: _Connection | None = None
        self._lock = asyncio.Lock()
        self._closed = False

    @property
    def label(self) -> str:
        return self.spec.label

    async def tools(self) -> list[McpTool]:
        """Its tools that the spec offers (starting it if needed)."""
        connection = await self._connected()
        return [
            McpTool(
                name=tool.name,
                description=tool.description or tool.title or "",
                parameters=dict(tool.input_schema),
                side_effects=has_side_effects(tool),
                approve=self.spec.approve,
                timeout_s=self.spec.timeout_s,
                server=self,
            )
            for tool in connection.tools
            if self.spec.offers(tool.name)
        ]

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        if not self.spec.offers(tool):
            raise ToolError(f"MCP server '{self.label}' offers no tool '{tool}'")
        connection = await self._connected()
        what = f"the call of '{tool}' on MCP server '{self.label}'"
        try:
            async with asyncio.timeout(self.spec.timeout_s):
                result = await connection.client.call_tool(tool, arguments)
        except TimeoutError:
            raise ToolError(f"{what} did not finish within {self.spec.timeout_s:g} s") from None
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:
                raise ToolError(f"{what} was refused: {exc.message}") from exc
            await self._drop(connection)
            if connection.refusal is not None:  # Cantata cut it off
                raise ToolError(
                    f"{what} failed: {connection.refusal}; the server is started again on the next call"
                ) from exc
            raise ToolError(
                f"MCP server '{self.label}' stopped during the call of '{tool}': its outcome is unknown;"
                " the server is started again on the next call"
            ) from exc
        except ValidationError as exc:  # the answer was read whole: the connection is still good
            log.warning("%s failed: %s", what, exc)
            raise ToolError(f"{what} failed: {_reason(exc)}") from exc
        except Exception as exc:  # what the SDK's transports raise: httpx2, anyio errors
            log.warning("%s failed: %s", what, _reason(exc))
            await self._drop(connection)
            raise ToolError(f"{what} failed: {_reason(exc)}; the server is started again on the next call") from exc
        return result_text(result, tool)

    async def close(self) -> None:
        """Stop the server; a later use is an error."""
        async with self._lock:
            self._closed = True
            connection, self._connection = self._connection, None
        if connection is not None:
            await connection.close()

    async def _connected(self) -> _Connection:
        async with self._lock:  # concurrent first calls wait for one start
            if self._closed:
                raise ToolError(f"MCP server '{self.label}' was stopped (Cantata is closing)")
            if self._connection is not None and not self._connection.alive():
                log.warning("MCP server '%s' exited; starting it again", self.label)
                dead, self._connection = self._connection, None
                await dead.close()
            if self._connection is None:
                self._connection = await _Connection.open(self.spec)
            return self._connection

    async def _drop(self, connection: _Connection) -> None:
        """Forget a connection that failed, so that the next call starts a new one."""
        async with self._lock:
            if self._connection is connection:
                self._connection = None
        await connection.close()


class McpServers:
    """The MCP servers of one Cantata process: one per distinct spec, started on first use,
    stopped together."""

    def __init__(self) -> None:
        self._servers: dict[str, McpServer] = {}

    def server(self, spec: McpServerSpec) -> McpServer:
        key = spec.model_dump_json()
        found = self._servers.get(key)
        if found is None:
            found = self._servers[key] = McpServer(spec)
        return found

    async def close(self) -> None:
        servers, self._servers = list(self._servers.values()), {}
        await asyncio.gather(*(server.close() for server in servers))


def result_text(result: CallToolResult, tool: str) -> str:
    """A tool result as the text a model reads; an error result is a ToolError with its text."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResource):
            resource = block.resource
            parts.append(
                resource.text
                if isinstance(resource, TextResourceContents)
                else f"[resource {resource.uri}: binary content not shown]"
            )
        elif isinstance(block, ResourceLink):
            parts.append(f"[resource {block.uri}]")
        elif isinstance(block, ImageContent | AudioContent):
            parts.append(f"[{block.type} ({block.mime_type}) not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = _cut("\n".join(parts))
    if result.is_error:
        raise ToolError(f"the tool '{tool}' failed: {text or 'it gave no reason'}")
    return text


def _cut(text: str) -> str:
    """At most MAX_RESULT bytes of `text` (whole characters), and a note if it was longer."""
    data = text.encode()
    if len(data) <= MAX_RESULT:
        return text
    kept = data[:MAX_RESULT].decode(errors="ignore")
    return f"{kept}\n[cut: the result has {len(data)} bytes; the first {MAX_RESULT} are shown]"


def _reason(exc: BaseException) -> str:
    """One line on why: the first leaf of an exception group (anyio's task groups wrap)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, ValidationError):  # pydantic's many lines, about the SDK's own models
        return "its answer is not what MCP says it should be"
    return str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__


class _Connection:
    """One session with a server. The SDK's client runs anyio task groups, which must be
    entered and left by one task: a task of the connection's own holds it open until
    `close`, and calls from any turn's task go through it."""

    def __init__(self, spec: McpServerSpec, client: Client, tools: list[Tool], owner: _Owner) -> None:
        self.spec = spec
        self.client = client
        self.tools = tools
        self._owner = owner

    @classmethod
    async def open(cls, spec: McpServerSpec) -> _Connection:
        owner = _Owner(spec)
        try:
            async with asyncio.timeout(spec.start_timeout_s):
                client, tools = await owner.start()
        except TimeoutError:
            await owner.stop()
            raise ToolError(
                f"MCP server '{spec.label}' did not start within {spec.start_timeout_s:g} s{_see_log(spec)}"
            ) from None
        except ToolError:
            await owner.stop()
            raise
        except BaseException as exc:  # what starting raised (OSError, MCPError, httpx2), or a cancelled turn
            await owner.stop()
            if not isinstance(exc, Exception):
                raise
            raise ToolError(f"MCP server '{spec.label}' could not start: {_reason(exc)}{_see_log(spec)}") from exc
        return cls(spec, client, tools, owner)

    def alive(self) -> bool:
        return self._owner.alive()

    @property
    def refusal(self) -> str | None:
        """Why Cantata cut the server off (an oversized message or answer), if it did."""
        return self._owner.refusal or self._owner.child.refusal

    async def close(self) -> None:
        await self._owner.stop()


def _see_log(spec: McpServerSpec) -> str:
    return " (its stderr is in Cantata's log)" if spec.command is not None else ""


class _Owner:
    """The task that holds a connection open, and the one that logs the server's stderr."""

    def __init__(self, spec: McpServerSpec) -> None:
        self.spec = spec
        self._ready: asyncio.Future[tuple[Client, list[Tool]]] = asyncio.get_running_loop().create_future()
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.child = Child()  # a stdio server's process
        self.refusal: str | None = None  # why an HTTP server's answer was read no further

    async def start(self) -> tuple[Client, list[Tool]]:
        self._task = asyncio.create_task(self._hold(), name=f"mcp server {self.spec.label}")
        return await asyncio.shield(self._ready)

    def alive(self) -> bool:
        """The holding task runs and, for a stdio server, so does its process (its pipes say
        nothing: a server may close its stderr and live on)."""
        task_running = self._task is not None and not self._task.done()
        return task_running and (self.spec.command is None or self.child.running())

    async def stop(self) -> None:
        self._stopping.set()
        if self._task is not None and not self._ready.done():
            self._task.cancel()  # still starting: nothing to wait for
        if self._task is None:
            return
        try:
            await asyncio.wait_for(self._task, STOP_S)
        except TimeoutError:
            log.warning("MCP server '%s' did not stop within %g s; left behind", self.spec.label, STOP_S)
        except asyncio.CancelledError:
            if not self._task.cancelled():
                raise  # our caller is cancelled, not the task

    async def _hold(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                client = await stack.enter_async_context(Client(await self._transport(stack), cache=None))
                tools = await _list_tools(client)
                self._ready.set_result((client, tools))
                await self._stopping.wait()
        except Exception as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            else:
                log.warning("MCP server '%s' closed with an error: %s", self.spec.label, _reason(exc))
        finally:
            if not self._ready.done():
                self._ready.cancel()

    def _refuse(self, why: str) -> None:
        self.refusal = why
        log.warning("MCP server '%s': %s", self.spec.label, why)

    async def _transport(self, stack: AsyncExitStack) -> Any:
        """The SDK transport for the spec, its resources on `stack`."""
        spec = self.spec
        if spec.url is not None:
            timeout = httpx2.Timeout(spec.start_timeout_s, read=HTTP_READ_S)
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=spec.resolved_headers(), timeout=timeout, transport=_CappedTransport(self._refuse)
                )
            )
            return streamable_http_client(spec.url, http_client=http)
        assert spec.command is not None
        return stdio_transport(spec.label, spec.command, list(spec.args), spec.child_env(), self.child)


class ResponseTooLarge(Exception):
    """An HTTP server's answer over MAX_RESPONSE bytes (read no further)."""


class _CappedTransport(httpx2.AsyncBaseTransport):
    """httpx2's own transport, with each answer to a POST (a request, a call's result among
    them) read no further than MAX_RESPONSE bytes, so that a hostile server cannot fill
    Cantata's memory. The GET stream of a server's notifications lives long and is not cut."""

    def __init__(self, refuse: Callable[[str], None]) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._refuse = refuse  # told why, before the SDK sees the connection end

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        if request.method == "POST":
            assert isinstance(response.stream, httpx2.AsyncByteStream)
            response.stream = _CappedStream(response.stream, self._refuse)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, refuse: Callable[[str], None]) -> None:
        self._inner = inner
        self._refuse = refuse

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self._inner:
            read += len(chunk)
            if read > MAX_RESPONSE:
                why = f"the server's answer is over {MAX_RESPONSE >> 20} MiB, and was read no further"
                self._refuse(why)
                raise ResponseTooLarge(why)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


async def _list_tools(client: Client) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools
