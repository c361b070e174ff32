"""A real OpenAI-compatible server for tests: llama-cpp-python's own, on loopback, with
the embedded model file. Nobody here wrote it, which is the point."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

import httpx
import pytest

from cantata.backends.model_files import default_model_path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LlamaServer:
    def __init__(self, log_dir: Path, *, context: int = 2048) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log_path = log_dir / "server.log"
        self.command = [sys.executable, "-m", "llama_cpp.server", "--model", str(default_model_path())]
        self.command += ["--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(context)]
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LlamaServer:
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {self.process.returncode}:\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/models", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not answer within 60 s:\n{self.log()}")
            time.sleep(0.25)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-2000:]

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
