"""A reply is bounded whatever the server does: an OpenAI-compatible server on loopback that
ignores max_tokens and sends 8 MB, streamed or as one JSON body; the reply is cut at
max_tokens worth of text (reply_bytes_per_token bytes a token) and reported `length`."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import aclosing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from cantata.backends.base import Chunk, CompletionRequest, Message
from cantata.backends.openai_compat import OpenAICompatBackend
from cantata.config import InstanceConfig, load_config
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from tests.helpers.pipelines import WriteFile

pytestmark = pytest.mark.server

FLOOD_BYTES = 8 * 1024 * 1024
PIECE = "All work and no play makes Jack a dull boy. "  # 44 bytes a delta
MAX_TOKENS = 60
CAP = MAX_TOKENS * 16  # the default reply_bytes_per_token


class Flood(BaseHTTPRequestHandler):
    """Ignores max_tokens: 8 MB of reply, as a stream (path /stream/v1) or one body (/json/v1)."""

    requests: list[dict[str, Any]] = []

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return None

    def do_GET(self) -> None:
        self._send(200, "application/json", json.dumps({"object": "list", "data": [{"id": "flood"}]}).encode())

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Flood.requests.append(body)
        if self.path.startswith("/json/"):
            reply = {
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "x" * FLOOD_BYTES}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": FLOOD_BYTES},
            }
            self._send(200, "application/json", json.dumps(reply).encode())
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        event = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": PIECE}}]}
        line = f"data: {json.dumps(event)}\n\n".encode()
        try:
            for _ in range(FLOOD_BYTES // len(PIECE)):
                self.wfile.write(line)
            self.wfile.write(b"data: [DONE]\n\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading, as it should

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture(scope="module")
def flood() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Flood)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def collect(backend: OpenAICompatBackend, request: CompletionRequest) -> list[Chunk]:
    async with aclosing(backend.complete(request)) as stream:
        return [chunk async for chunk in stream]


@pytest.mark.parametrize("mode", ["stream", "json"])
async def test_an_8mb_reply_is_cut_at_the_cap_and_reported_length(flood: str, mode: str) -> None:
    backend = OpenAICompatBackend(InstanceConfig(name="flood", backend="openai", url=f"{flood}/{mode}/v1"))
    try:
        chunks = await collect(backend, CompletionRequest([Message("user", "Hi")], max_tokens=MAX_TOKENS))
    finally:
        await backend.close()
    assert Flood.requests[-1]["max_tokens"] == MAX_TOKENS  # asked, and ignored
    text = "".join(c.text for c in chunks)
    assert len(text.encode()) == CAP and text.startswith("All work" if mode == "stream" else "xxx")
    assert chunks[-1].finish_reason == "length" and chunks[-1].usage is not None


async def test_the_cap_is_an_instance_setting(flood: str) -> None:
    config = InstanceConfig(name="flood", backend="openai", url=f"{flood}/stream/v1", reply_bytes_per_token=4)
    backend = OpenAICompatBackend(config)
    try:
        chunks = await collect(backend, CompletionRequest([Message("user", "Hi")], max_tokens=MAX_TOKENS))
    finally:
        await backend.close()
    assert len("".join(c.text for c in chunks).encode()) == MAX_TOKENS * 4
    assert chunks[-1].finish_reason == "length"


async def test_the_stored_reply_is_cut_and_the_next_agent_reads_only_that(
    flood: str, write: WriteFile, home: Path
) -> None:
    pipeline = load_pipeline(
        write(
            "p.yaml",
            f"""
            name: flood
            agents:
              - name: talk
                model: remote
                prompt: Say hello.
                max_tokens: {MAX_TOKENS}
              - name: after
                model: local
                prompt: Summarise.
                reads: [talk]
                deliver: final
            """,
        )
    )
    config = write(
        "instances.yaml",
        f"""
        instances:
          - name: remote
            backend: openai
            url: {flood}/stream/v1
            serves: [remote]
          - name: local
            backend: scripted
            serves: [local]
        """,
    )
    app = Cantata(load_config(config), home=home)
    try:
        result = await app.run_turn(pipeline, "hello")
        entries = await app.store.entries(result.turn_id)
    finally:
        await app.close()
    talk, after = result.agents
    assert talk.status == "ok" and talk.finish_reason == "length"
    stored = entries["talk"].output
    assert isinstance(stored, str) and 0 < len(stored.encode()) <= CAP
    assert after.status == "ok" and after.prompt_tokens < 2_000  # not 2 million
