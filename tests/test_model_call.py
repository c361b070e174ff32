"""A model call's one deadline: whose limit expired, and what runs under which limit."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from cantata.backends.base import Chunk, CompletionRequest, Message, Usage
from cantata.backends.scripted import ScriptedBackend
from cantata.config import InstanceConfig
from cantata.context import CheckContext, FunctionContext
from cantata.errors import BackendError, BackendTimeout
from cantata.model_call import ModelCall
from cantata.pool import Instance
from cantata.spec import AgentSpec
from cantata.turn import AgentResult


def call(*, timeout_s: float = 5.0, check: Any = None) -> tuple[ModelCall, Instance]:
    config = InstanceConfig(name="one", backend="scripted")
    instance = Instance(config, ScriptedBackend(config))
    model_call = ModelCall(
        agent=AgentSpec(name="a", prompt="x", timeout_s=timeout_s),
        instance=instance,
        messages=[Message("user", "hello")],
        contract=None,
        result=AgentResult(name="a"),
        emit=lambda *args, **data: None,
        clock=lambda: 0.0,
        check=check,
        context=FunctionContext(message="m", user="u", session="s", turn=1, inputs={}, missing=[], memory={}),
    )
    return model_call, instance


def measured(
    instance: Instance, deadline_s: float, monkeypatch: pytest.MonkeyPatch, *, stall_s: float | None = None
) -> None:
    """As if the instance's measured speed gave every generation `deadline_s` to its first
    token, and `stall_s` between tokens once they come."""
    monkeypatch.setattr(instance.speed, "deadline_s", lambda *args: deadline_s)
    monkeypatch.setattr(instance.speed, "stall_s", lambda: stall_s)


async def test_a_hung_generation_is_cut_at_the_measured_deadline_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    model_call, instance = call(timeout_s=60)
    measured(instance, 0.05, monkeypatch)

    async def hang(request: CompletionRequest) -> AsyncIterator[Chunk]:
        await asyncio.Event().wait()
        yield Chunk(text="never")

    instance.backend.complete = hang  # type: ignore[method-assign]
    with pytest.raises(BackendTimeout, match=r"no reply within 0\.1 s on instance 'one'.*timeout_s 60 s"):
        await model_call.run()


async def test_the_check_runs_under_the_attempts_limit_not_the_generations(monkeypatch: pytest.MonkeyPatch) -> None:
    checked = asyncio.Event()

    async def slow_check(ctx: CheckContext) -> Any:
        # Longer than the generation's deadline: only the attempt's limit applies to the check.
        await asyncio.sleep(0.2)
        checked.set()
        return ctx.output

    model_call, instance = call(check=slow_check)
    measured(instance, 0.05, monkeypatch)
    assert await model_call.run()
    assert checked.is_set()


async def test_a_timeout_error_raised_by_the_backend_is_its_failure_not_the_deadline() -> None:
    model_call, instance = call()

    async def broken(request: CompletionRequest) -> AsyncIterator[Chunk]:
        raise TimeoutError("the socket timed out")
        yield Chunk()

    instance.backend.complete = broken  # type: ignore[method-assign]
    with pytest.raises(BackendError, match="instance 'one' raised TimeoutError: the socket timed out") as raised:
        await model_call.run()
    assert not isinstance(raised.value, BackendTimeout)


async def test_a_call_arms_one_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every node pays for the timers it schedules: one per call, whatever limits apply.
    model_call, instance = call()
    measured(instance, 2.0, monkeypatch)
    loop = asyncio.get_running_loop()
    armed: list[float] = []
    call_at = loop.call_at

    def counting_call_at(when: float, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        armed.append(when)
        return call_at(when, *args, **kwargs)

    monkeypatch.setattr(loop, "call_at", counting_call_at)
    assert await model_call.run()
    assert len(armed) == 1


def streaming(pieces: int, every_s: float, *, then_hang: bool = False) -> Any:
    """A backend's complete() that sends `pieces` tokens, one every `every_s`, then ends (or hangs)."""

    async def complete(request: CompletionRequest) -> AsyncIterator[Chunk]:
        for _ in range(pieces):
            await asyncio.sleep(every_s)
            yield Chunk(text="word ")
        if then_hang:
            await asyncio.Event().wait()
        yield Chunk(usage=Usage(prompt_tokens=10, completion_tokens=pieces), finish_reason="stop")

    return complete


async def test_a_reply_that_keeps_coming_is_not_cut_however_slow(monkeypatch: pytest.MonkeyPatch) -> None:
    model_call, instance = call(timeout_s=60)
    measured(instance, 0.05, monkeypatch, stall_s=0.05)
    # Six times the deadline the measured speed gives, but a token every 10 ms all along.
    instance.backend.complete = streaming(30, 0.01)  # type: ignore[method-assign]
    assert await model_call.run() == ("word " * 30).strip()


async def test_a_reply_that_stops_coming_is_cut_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    model_call, instance = call(timeout_s=60)
    measured(instance, 0.05, monkeypatch, stall_s=0.05)
    instance.backend.complete = streaming(3, 0.01, then_hang=True)  # type: ignore[method-assign]
    with pytest.raises(BackendTimeout, match=r"the reply stopped coming on instance 'one': no token for 0\.1 s"):
        await model_call.run()
