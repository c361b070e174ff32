"""Adaptive deadlines: a call's deadline follows its instance's measured speed and load,
under the agent's timeout_s; a hung instance is caught, a slower or busier one is given the
time it needs, and a reply whose tokens keep coming is never cut for being slow."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path

from pytest import approx

from cantata.backends.base import Chunk, CompletionRequest
from cantata.backends.scripted import ScriptedBackend
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


def test_the_deadline_counts_the_calls_in_flight_ahead() -> None:
    speed = Speed()
    # 100 ms a prompt token, 1 s a generated one: a call of 100 + 10 tokens needs 20 s.
    speed.observe(computed_prompt_tokens=100, first_token_s=10.0, completion_tokens=11, total_s=20.0)
    alone = speed.deadline_s(100, 10, 600)
    assert alone == approx(SLACK * 20) and speed.stall_s() == approx(SLACK * 1.0)
    with speed.generating(100, 10), speed.generating(100, 10):
        # Two calls ahead on a server that may compute them first: three calls' time.
        assert speed.deadline_s(100, 10, 600) == approx(3 * alone)
        assert speed.stall_s() == approx(2 * SLACK * 1.0)  # tokens come slower while others generate
    assert speed.deadline_s(100, 10, 600) == alone and speed.in_flight == 0


def test_the_deadline_starts_with_the_first_measured_generation() -> None:
    # A cached prompt (3 computed tokens) times nothing; the reply's 11 tokens time generation.
    speed = Speed()
    speed.observe(computed_prompt_tokens=3, first_token_s=0.5, completion_tokens=11, total_s=1.5)
    assert speed.prompt_s_per_token is None and speed.generation_s_per_token == approx(0.1)
    # Until a prompt is timed, a prompt token counts as a generated one: more than it costs.
    assert speed.deadline_s(100, 20, ceiling_s=600) == approx(SLACK * (100 + 20) * 0.1)


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


ONE_AGENT = """
name: one
agents:
  - name: a
    prompt: Say something about the message.
    timeout_s: 60
    max_tokens: {max_tokens}
    deliver: final
"""


async def test_a_busy_instance_fails_no_call_that_waits_its_turn(write: WriteFile, home: Path) -> None:
    # A server computing one call at a time (`parallel: 1`) while Cantata sends eight: the
    # last waits for the seven before it, far longer than one call's deadline on an idle
    # instance. That was a failed call under load ("no complete reply within 5.3 s").
    config = scripted_config(
        write, busy={"latency_s": 0.3, "tokens_per_s": 400, "parallel": 1, "max_concurrency": 8, "serves": ["*"]}
    )
    app = Cantata(load_config(config), home=home)
    pipeline = load_pipeline(write("p.yaml", ONE_AGENT.format(max_tokens=40)))
    try:
        first = await app.run_turn(pipeline, "Measured alone, on an idle instance.")
        speed = next(iter(app.pool.instances.values())).speed
        idle_deadline = speed.deadline_s(first.agents[0].prompt_tokens, 40, 60.0)
        busy = await asyncio.gather(*(app.run_turn(pipeline, f"Message {i}, all at once.") for i in range(8)))
    finally:
        await app.close()
    assert [t.agents[0].status for t in busy] == ["ok"] * 8, [t.agents[0].error for t in busy]
    waited = max(a.finished_s - a.started_s for t in busy for a in t.agents if a.finished_s and a.started_s)
    assert waited > idle_deadline  # the case this is about: the last call waited past an idle deadline


async def test_an_instance_slowed_mid_run_fails_no_call_whose_tokens_keep_coming(write: WriteFile, home: Path) -> None:
    replies = write("replies.yaml", f"a: {'word ' * 80}\n")  # 100 tokens of 4 characters
    config = scripted_config(
        write, steady={"latency_s": 0.01, "tokens_per_s": 400, "replies": str(replies), "serves": ["*"]}
    )
    app = Cantata(load_config(config), home=home)
    pipeline = load_pipeline(write("p.yaml", ONE_AGENT.format(max_tokens=120)))
    try:
        first = await app.run_turn(pipeline, "Measured at full speed.")
        instance = next(iter(app.pool.instances.values()))
        measured_deadline = instance.speed.deadline_s(first.agents[0].prompt_tokens, 120, 60.0)
        backend = instance.backend
        assert isinstance(backend, ScriptedBackend)
        backend.config = backend.config.model_copy(update={"tokens_per_s": 40})  # ten times slower from now
        slowed = await app.run_turn(pipeline, "And now on a slower instance.")
    finally:
        await app.close()
    a = slowed.agents[0]
    assert a.status == "ok" and a.completion_tokens == 100, a.error
    assert a.finished_s is not None and a.started_s is not None
    assert a.finished_s - a.started_s > measured_deadline  # it ran past the deadline the old speed gave
