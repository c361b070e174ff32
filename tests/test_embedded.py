"""The embedded backend with real inference on SmolLM2-135M (llama.cpp in process)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cantata.backends.base import Chunk, CompletionRequest, Message
from cantata.backends.embedded import EmbeddedBackend
from cantata.config import DEFAULT_CONFIG, InstanceConfig
from cantata.errors import BackendError
from cantata.pipelines import load as load_bundled
from cantata.runtime import Cantata

pytestmark = pytest.mark.embedded

BRIEFING = (
    "You are part of a small team of assistants helping one person reflect on their habits.\n"
    "## The new message\nI keep saying I'll go to the gym every morning but end up scrolling until nine.\n"
)


@pytest.fixture(scope="module")
def backend() -> EmbeddedBackend:
    return EmbeddedBackend(InstanceConfig(name="local", backend="embedded", context=2048))


async def collect(backend: EmbeddedBackend, request: CompletionRequest) -> list[Chunk]:
    return [chunk async for chunk in backend.complete(request)]


async def test_streams_text_and_reports_usage(backend: EmbeddedBackend) -> None:
    request = CompletionRequest(
        messages=[Message("system", BRIEFING), Message("user", "Reply in one sentence.")], max_tokens=24, temperature=0
    )
    chunks = await collect(backend, request)
    texts = [c.text for c in chunks if c.text]
    assert len(texts) > 3, "the answer should arrive token by token"
    usage = chunks[-1].usage
    assert usage is not None and usage.prompt_tokens == backend.count_tokens(
        "<|im_start|>system\n"
        + BRIEFING
        + "<|im_end|>\n<|im_start|>user\nReply in one sentence.<|im_end|>\n<|im_start|>assistant\n"
    )
    assert 0 < usage.completion_tokens <= 24


async def test_schema_constrains_the_reply(backend: EmbeddedBackend) -> None:
    schema = {
        "type": "object",
        "properties": {"feeling": {"type": "string", "enum": ["hopeful", "frustrated", "neutral"]}},
        "required": ["feeling"],
    }
    request = CompletionRequest(
        messages=[Message("system", BRIEFING), Message("user", "How does the person feel? Answer in JSON.")],
        max_tokens=30,
        schema=schema,
    )
    text = "".join(c.text for c in await collect(backend, request))
    assert json.loads(text)["feeling"] in {"hopeful", "frustrated", "neutral"}


async def test_second_call_with_the_same_briefing_reuses_it(backend: EmbeddedBackend) -> None:
    first = CompletionRequest(
        messages=[Message("system", BRIEFING), Message("user", "Role one: reflect.")], max_tokens=8
    )
    second = CompletionRequest(messages=[Message("system", BRIEFING), Message("user", "Role two: ask.")], max_tokens=8)
    await collect(backend, first)
    usage = (await collect(backend, second))[-1].usage
    assert usage is not None
    briefing_tokens = backend.count_tokens("<|im_start|>system\n" + BRIEFING + "<|im_end|>\n<|im_start|>user\nRole")
    # Everything up to where the role parts differ is reused, and nothing after it.
    assert briefing_tokens <= usage.cached_tokens < usage.prompt_tokens


async def test_generation_runs_off_the_event_loop(backend: EmbeddedBackend) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    request = CompletionRequest(messages=[Message("user", "Count from one to twenty.")], max_tokens=40)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await collect(backend, request)
    elapsed = loop.time() - start
    task.cancel()
    # A blocked loop would tick about once; a free one ticks through the generation.
    assert ticks >= elapsed / 0.01 / 4


async def test_a_timeout_stops_generation_and_the_instance_stays_usable(backend: EmbeddedBackend) -> None:
    long = CompletionRequest(messages=[Message("user", "Write a long story.")], max_tokens=2000, temperature=0.8)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.3):
            await collect(backend, long)
    usage = (await collect(backend, CompletionRequest(messages=[Message("user", "Hi")], max_tokens=4)))[-1].usage
    assert usage is not None and usage.completion_tokens > 0


async def test_prompt_over_the_context_is_an_agent_error(backend: EmbeddedBackend) -> None:
    huge = CompletionRequest(messages=[Message("user", "word " * 3000)], max_tokens=8)
    with pytest.raises(BackendError, match="instance 'local'"):
        await collect(backend, huge)


async def test_example_turn_on_the_embedded_model(home: Path) -> None:
    app = Cantata(DEFAULT_CONFIG, home=home)
    pipeline = load_bundled("example")
    try:
        first = await app.run_turn(pipeline, "I keep saying I'll go to the gym every morning but end up scrolling.")
        second = await app.run_turn(pipeline, "Maybe I should put my phone in another room.", session_id=first.session)
    finally:
        await app.close()
    for turn in (first, second):
        agents = {a.name: a for a in turn.agents}
        assert agents["screen"].status == "ok" and agents["quick"].status == "ok"
        assert turn.early is not None and turn.early.agent == "quick" and turn.early.text
        assert turn.final is None or turn.early.at_s < turn.final.at_s
        # Agents after the first reuse the shared briefing from llama.cpp's cache.
        later = [a for a in turn.agents if a.instance and a.name != "quick" and a.status == "ok"]
        assert later and all(a.cached_tokens > 0 for a in later)
    assert second.turn == 2
    assert agents["quick"].cached_tokens > 0  # turn 2's first call reuses turn 1's briefing prefix


async def test_a_schema_with_a_long_bound_neither_crashes_nor_crawls(backend: EmbeddedBackend) -> None:
    # 4000 nested optional rules in llama.cpp's grammar overflowed its stack: a segfault.
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "maxLength": 4000}},
        "required": ["code"],
    }
    request = CompletionRequest(
        messages=[Message("system", BRIEFING), Message("user", "Write a Python comment in JSON.")],
        max_tokens=40,
        schema=schema,
    )
    chunks = await collect(backend, request)
    assert "".join(c.text for c in chunks).startswith("{")
