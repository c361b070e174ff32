"""Adaptive deadlines: a call's deadline follows its instance's measured speed, under the
agent's timeout_s; a hung instance is caught, a slower one is given the time it needs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path

from cantata.backends.base import Chunk, CompletionRequest
from cantata.config import load_config
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from cantata.speed import FLOOR_S, SLACK, Speed
from tests.helpers.pipelines import WriteFile, scripted_config


def measured(prompt_s: float, gen_s: float) -> Speed:
    """An instance that computed 500 prompt tokens in `prompt_s` and 101 tokens in `gen_s` more."""
    speed = Speed()
    speed.observe(computed_prompt_tokens=500, first_token_s=prompt_s, completion_tokens=101, total_s=prompt_s + gen_s)
    return speed


def test_before_any_measurement_the_ceiling_applies() -> None:
    assert Speed().deadline_s(1000, 200, ceiling_s=45.0) == 45.0


def test_the_deadline_is_the_slack_times_what_the_call_needs_under_the_ceiling() -> None:
    speed = measured(prompt_s=2.0, gen_s=3.0)  # 4 ms a prompt token, 30 ms a generated one
    expected = 1000 * 0.004 + 200 * 0.03
    assert abs(speed.deadline_s(1000, 200, ceiling_s=120.0) - SLACK * expected) < 1e-6
    assert speed.deadline_s(1000, 200, ceiling_s=10.0) == 10.0
    assert speed.deadline_s(1, 1, ceiling_s=120.0) == FLOOR_S


def test_a_machine_half_as_fast_gets_twice_the_time() -> None:
    fast, slow = measured(2.0, 3.0), measured(4.0, 6.0)
    assert abs(slow.deadline_s(800, 100, 600.0) - 2 * fast.deadline_s(800, 100, 600.0)) < 1e-6


def test_a_cached_prompt_says_nothing_about_prompt_speed() -> None:
    speed = measured(2.0, 3.0)
    before = speed.prompt_s_per_token
    speed.observe(computed_prompt_tokens=3, first_token_s=1.0, completion_tokens=10, total_s=1.3)
    assert speed.prompt_s_per_token == before


PIPELINE = """
name: one
agents:
  - name: a
    prompt: Say something about the message, at some length, to measure how fast it goes.
    timeout_s: 60
    max_tokens: 40
    deliver: final
"""


async def test_a_hung_instance_is_caught_by_its_measured_deadline_not_the_ceiling(write: WriteFile, home: Path) -> None:
    config = scripted_config(write, only={"latency_s": 0.02, "tokens_per_s": 400, "serves": ["*"]})
    app = Cantata(load_config(config), home=home)
    pipeline = load_pipeline(write("p.yaml", PIPELINE))
    try:
        first = await app.run_turn(pipeline, "A message long enough to be a prompt worth measuring. " * 4)
        assert first.status == "ok"
        instance = next(iter(app.pool.instances.values()))
        assert instance.speed.expected_s(100, 100) is not None

        async def hang(request: CompletionRequest) -> AsyncGenerator[Chunk, None]:
            await asyncio.sleep(3600)
            yield Chunk(text="never")

        instance.backend.complete = hang  # type: ignore[method-assign]
        second = await app.run_turn(pipeline, "And again.")
    finally:
        await app.close()
    a = second.agents[0]
    assert a.status == "failed" and "measured speed" in (a.error or ""), a.error
    assert "timed out after 60 s" not in (a.error or "")
