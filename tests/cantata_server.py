"""`cantata serve` as a user runs it: a subprocess on a free loopback port."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

import httpx
import pytest

from tests.servers import free_port


class CantataServer:
    def __init__(self, log_dir: Path, *args: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / "cantata-serve.log"
        self.command = [sys.executable, "-m", "cantata", "serve", "--port", str(self.port), *args]
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> CantataServer:
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None:
                pytest.fail(f"cantata serve exited with {self.process.returncode}:\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"cantata serve did not answer within 60 s:\n{self.log()}")
            time.sleep(0.2)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
