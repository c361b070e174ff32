"""Cantata's stdio transport for the MCP SDK's client: the server as a child process speaking
newline-delimited JSON-RPC on stdin/stdout, its stderr to Cantata's log.

Why not the SDK's `stdio_client`: it keeps the child to itself, so whether the server still
runs could only be guessed from its pipes (a server that closes its stderr looked dead), and
it reads a line from the server without bound. Here the child is Cantata's (`Child`), and a
message over MAX_MESSAGE bytes stops the server before it is held in memory whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import BinaryIO

import anyio
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from cantata.errors import get_logger

log = get_logger("cantata.mcp")

MAX_MESSAGE = 8 << 20  # bytes of one message from a server; a tool result is cut well below it
LOG_LINE = 2000  # a longer stderr line is cut in the log
EXIT_S = 2.0  # after its stdin closes, the server's time to exit; then SIGTERM, then SIGKILL
READ_CHUNK = 1 << 16


class Child:
    """The server's process once started, and why Cantata stopped it, if it did."""

    def __init__(self) -> None:
        self.process: asyncio.subprocess.Process | None = None
        self.refusal: str | None = None

    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None


@asynccontextmanager
async def stdio_transport(
    label: str, command: str, args: list[str], env: dict[str, str], child: Child
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
]:
    """The SDK's (read, write) streams for the server started from `command`; it is stopped
    when the block ends. `child` gets the process, for its owner to ask whether it runs."""
    read_fd, write_fd = os.pipe()
    stderr = os.fdopen(read_fd, "rb", buffering=0)
    logging_stderr = asyncio.create_task(_log_lines(label, stderr))
    try:
        try:
            process = child.process = await asyncio.create_subprocess_exec(
                command,
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=write_fd,
                env=get_default_environment() | env,
                start_new_session=True,  # its own process group, stopped whole
            )
        finally:
            os.close(write_fd)  # the child has its own: the reader sees the end when it exits
        to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)
        async with to_session, from_server, to_server, from_session, anyio.create_task_group() as tasks:
            tasks.start_soon(_read, process, to_session, child, label)
            tasks.start_soon(_write, process, from_session, to_session)
            try:
                yield from_server, to_server
            finally:
                with anyio.CancelScope(shield=True):
                    await _stop(process)
                tasks.cancel_scope.cancel()
    finally:
        await _bounded(logging_stderr)
        stderr.close()


async def _read(
    process: asyncio.subprocess.Process,
    to_session: MemoryObjectSendStream[SessionMessage | Exception],
    child: Child,
    label: str,
) -> None:
    """Each line from the server, to the session; the stream's end (or an oversized message,
    which stops the server) closes the session's side, failing the calls in flight."""
    assert process.stdout is not None
    pending = b""
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        async with to_session:
            while chunk := await process.stdout.read(READ_CHUNK):
                *lines, pending = (pending + chunk).split(b"\n")
                if len(pending) > MAX_MESSAGE or any(len(line) > MAX_MESSAGE for line in lines):
                    child.refusal = f"the server sent a message over {MAX_MESSAGE >> 20} MiB, and was stopped"
                    log.warning("MCP server '%s': %s", label, child.refusal)
                    _signal(process, signal.SIGKILL)
                    return
                for line in lines:
                    if line.strip():
                        await to_session.send(_message(line))


def _message(line: bytes) -> SessionMessage | Exception:
    """A line as the session takes it: a message, or the parse error for it to report."""
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


async def _write(
    process: asyncio.subprocess.Process,
    from_session: MemoryObjectReceiveStream[SessionMessage],
    to_session: MemoryObjectSendStream[SessionMessage | Exception],
) -> None:
    assert process.stdin is not None
    try:
        async with from_session:
            async for message in from_session:
                text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                process.stdin.write(text.encode() + b"\n")
                await process.stdin.drain()
    except (OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
        to_session.close()  # the server is gone: the calls in flight end now, not at their timeout


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Close its stdin (MCP's way to end a stdio server); then SIGTERM, then SIGKILL, to its
    whole process group, each after EXIT_S."""
    assert process.stdin is not None
    with contextlib.suppress(OSError):
        process.stdin.close()
    for then in (signal.SIGTERM, signal.SIGKILL, None):
        try:
            await asyncio.wait_for(process.wait(), EXIT_S)
            return
        except TimeoutError:
            if then is None:
                log.warning("MCP server process %d did not exit after SIGKILL; left behind", process.pid)
                return
            _signal(process, then)


def _signal(process: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


async def _bounded(task: asyncio.Task[None]) -> None:
    """Wait for the stderr reader (it ends at the pipe's end); a grandchild holding the pipe
    open must not hold Cantata up."""
    try:
        await asyncio.wait_for(asyncio.shield(task), EXIT_S)
    except TimeoutError:
        task.cancel()


async def _log_lines(label: str, pipe: BinaryIO) -> None:
    """Each line the server writes on stderr, to the log; ends at the pipe's end."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)

    def emit(line: bytes) -> None:
        log.info("MCP server '%s' stderr: %s", label, line.decode("utf-8", "replace").rstrip()[:LOG_LINE])

    try:
        pending = b""
        while chunk := await reader.read(READ_CHUNK):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                emit(line)
            if len(pending) > LOG_LINE:
                emit(pending)
                pending = b""
        if pending:
            emit(pending)
    finally:
        transport.close()
