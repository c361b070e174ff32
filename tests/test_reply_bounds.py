"""A reply is bounded whatever the server does: an OpenAI-compatible server on loopback that
ignores max_tokens and sends 8 MB, streamed or as one JSON body; the reply is cut at
max_tokens worth of text (reply_bytes_per_token bytes a token) and reported `length`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import aclosing
from pathlib import Path

import pytest

from cantata.backends.base import Chunk, CompletionRequest, Message
from cantata.backends.openai_compat import OpenAICompatBackend
from cantata.config import InstanceConfig, load_config
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from tests.helpers.faulty_server import FaultyServer
from tests.helpers.pipelines import WriteFile

pytestmark = pytest.mark.server

MAX_TOKENS = 60
CAP = MAX_TOKENS * 16  # the default reply_bytes_per_token
ROUTES = {"stream": "flood", "json": "flood-json"}


@pytest.fixture(scope="module")
def server() -> Iterator[FaultyServer]:
    with FaultyServer() as running:
        yield running


async def collect(backend: OpenAICompatBackend, request: CompletionRequest) -> list[Chunk]:
    async with aclosing(backend.complete(request)) as stream:
        return [chunk async for chunk in stream]


@pytest.mark.parametrize("mode", ["stream", "json"])
async def test_an_8mb_reply_is_cut_at_the_cap_and_reported_length(server: FaultyServer, mode: str) -> None:
    backend = OpenAICompatBackend(InstanceConfig(name="flood", backend="openai", url=server.url(ROUTES[mode])))
    try:
        chunks = await collect(backend, CompletionRequest([Message("user", "Hi")], max_tokens=MAX_TOKENS))
    finally:
        await backend.close()
    assert server.bodies(ROUTES[mode])[-1]["max_tokens"] == MAX_TOKENS  # asked, and ignored
    text = "".join(c.text for c in chunks)
    assert len(text.encode()) == CAP and text.startswith("All work" if mode == "stream" else "xxx")
    assert chunks[-1].finish_reason == "length" and chunks[-1].usage is not None


async def test_the_cap_is_an_instance_setting(server: FaultyServer) -> None:
    config = InstanceConfig(name="flood", backend="openai", url=server.url("flood"), reply_bytes_per_token=4)
    backend = OpenAICompatBackend(config)
    try:
        chunks = await collect(backend, CompletionRequest([Message("user", "Hi")], max_tokens=MAX_TOKENS))
    finally:
        await backend.close()
    assert len("".join(c.text for c in chunks).encode()) == MAX_TOKENS * 4
    assert chunks[-1].finish_reason == "length"


async def test_the_stored_reply_is_cut_and_the_next_agent_reads_only_that(
    server: FaultyServer, write: WriteFile, home: Path
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
            url: {server.url("flood")}
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
