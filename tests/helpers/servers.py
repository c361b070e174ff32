"""Real servers for tests, each a subprocess on a free loopback port: llama-cpp-python's
OpenAI-compatible server with the embedded model file (nobody here wrote it, which is the
point), and `cantata serve` as a user runs it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
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

    def __init__(self, log_path: Path, command: list[str], health: str) -> None:
        self.log_path = log_path
        self.command = command
        self.health = health
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Self:
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
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
        return self.log_path.read_text(errors="replace")[-3000:]

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()


class LlamaServer(ServerProcess):
    name = "llama_cpp.server"

    def __init__(self, log_dir: Path, *, context: int = 2048) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(default_model_path())]
        command += ["--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(context)]
        super().__init__(log_dir / "server.log", command, f"{self.url}/models")


class CantataServer(ServerProcess):
    name = "cantata serve"

    def __init__(self, log_dir: Path, *args: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "cantata", "serve", "--port", str(self.port), *args]
        super().__init__(log_dir / "cantata-serve.log", command, f"{self.url}/healthz")
