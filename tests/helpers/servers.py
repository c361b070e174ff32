"""Real servers for tests, each a subprocess on a free loopback port: llama-cpp-python's
OpenAI-compatible server with the embedded model file (nobody here wrote it, which is the
point), and `cantata serve` as a user runs it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Self

import httpx
import pytest

from cantata.backends.model_files import default_model_path

START_S = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServerProcess:
    """A server started on enter, ready once `health` answers 200, stopped on exit."""

    name = "server"

    def __init__(
        self,
        log_path: Path,
        command: list[str],
        health: str,
        *,
        cwd: Path | None = None,
        stderr_path: Path | None = None,
    ) -> None:
        self.log_path = log_path
        self.stderr_path = stderr_path  # stderr in a file of its own, if given; else with stdout
        self.command = command
        self.health = health
        self.cwd = cwd
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Self:
        with self.log_path.open("wb") as log, ExitStack() as files:
            errors = files.enter_context(self.stderr_path.open("wb")) if self.stderr_path else subprocess.STDOUT
            self.process = subprocess.Popen(
                self.command, stdout=log, stderr=errors, env=os.environ.copy(), cwd=self.cwd
            )
        deadline = time.monotonic() + START_S
        while True:
            if self.process.poll() is not None:
                pytest.fail(f"{self.name} exited with {self.process.returncode}:\n{self.log()}")
            try:
                if httpx.get(self.health, timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"{self.name} did not answer within {START_S:g} s:\n{self.log()}")
            time.sleep(0.2)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def log(self) -> str:
        errors = self.stderr_path.read_text(errors="replace") if self.stderr_path else ""
        return (self.log_path.read_text(errors="replace") + errors)[-3000:]

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        terminate(self.process)


def terminate(process: subprocess.Popen[bytes] | None, timeout_s: float = 30.0) -> None:
    """SIGTERM a child still running, SIGKILL it if it has not ended within `timeout_s`."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class LlamaServer(ServerProcess):
    name = "llama_cpp.server"

    def __init__(
        self, log_dir: Path, *, context: int = 2048, port: int | None = None, chat_format: str | None = None
    ) -> None:
        self.port = port or free_port()  # a port given: the same server started again
        self.url = f"http://127.0.0.1:{self.port}/v1"
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(default_model_path())]
        command += ["--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(context)]
        if chat_format is not None:  # e.g. chatml-function-calling: tools and tool_calls
            command += ["--chat_format", chat_format]
        super().__init__(log_dir / "server.log", command, f"{self.url}/models")


class CantataServer(ServerProcess):
    name = "cantata serve"

    def __init__(self, log_dir: Path, *args: str, cwd: Path | None = None, stderr_apart: bool = False) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "cantata", "serve", "--port", str(self.port), *args]
        errors = log_dir / "cantata-serve.stderr" if stderr_apart else None
        super().__init__(log_dir / "cantata-serve.log", command, f"{self.url}/healthz", cwd=cwd, stderr_path=errors)


def free_port_run(count: int) -> int:
    """The first of `count` consecutive free loopback ports (for servers numbered from a base)."""
    for _ in range(50):
        first = free_port()
        if all(_is_free(first + i) for i in range(1, count)):
            return first
    raise AssertionError(f"no {count} consecutive free ports on loopback")


def _is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


# `vllm serve MODEL --served-model-name NAME --port PORT --max-model-len N ...` as llama-cpp-python's
# server with the embedded model, on loopback: what an emitted launch script starts, in a test.
# It records its pid under $VLLM_STANDIN_PIDS/NAME, then becomes the server (same pid).
VLLM_STANDIN = """#!{python}
import os
import sys

args = sys.argv[1:]
if args[:1] != ["serve"]:
    sys.exit("this vllm stands in for `vllm serve` only")
def value(flag):
    return args[args.index(flag) + 1]
name = value("--served-model-name")
with open(os.path.join(os.environ["VLLM_STANDIN_PIDS"], name), "w") as pid:
    pid.write(str(os.getpid()))
command = ["-m", "llama_cpp.server", "--model", {model!r}, "--model_alias", name]
command += ["--host", "127.0.0.1", "--port", value("--port"), "--n_ctx", value("--max-model-len")]
os.execv(sys.executable, [sys.executable, *command])
"""


def vllm_standin(folder: Path) -> Path:
    """A folder holding an executable `vllm` (VLLM_STANDIN) to put first on PATH."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "vllm"
    script.write_text(VLLM_STANDIN.format(python=sys.executable, model=str(default_model_path())))
    script.chmod(0o755)
    return folder


def stop_pid(pid: int, timeout_s: float = 30.0) -> None:
    """Stop a server this test started but is not the parent of (a launch script's child)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _running(pid):
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Alive and not a zombie (its new parent, maybe a container's init, may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@contextmanager
def http_handler_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A stdlib HTTP server on a free loopback port, in a thread, answering with `handler`:
    for an upstream that misbehaves in a way no real server is asked to. Yields its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
