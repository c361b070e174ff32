"""Pipelines' own functions run off the event loop, under their agent's timeout."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cantata.config import load_config
from cantata.events import Event
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from cantata.threads import run_in_thread
from tests.helpers.pipelines import WriteFile, run_functions, scripted_config

# A function that blocks for 10 s (or until the test releases it), with timeout_s: 1.
STUCK = """
name: stuck
agents:
  - name: slow
    function: blocking_fn.wait
    timeout_s: 1
  - name: talk
    prompt: Reply.
    deliver: final
"""
QUICK = """
name: quick
agents:
  - name: a
    prompt: one
  - name: b
    prompt: two
    reads: [a]
  - name: c
    prompt: three
    reads: [b]
    deliver: final
"""


@pytest.fixture
def release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Lets the blocked function go at the end of the test (its thread cannot be killed)."""
    gate = tmp_path / "gate"
    gate.mkdir()
    # `returned`: the sessions whose blocked function has returned (threads outlive their test).
    (gate / "blocking_fn_gate.py").write_text("import threading\nrelease = threading.Event()\nreturned = set()\n")
    monkeypatch.syspath_prepend(str(gate))
    import blocking_fn_gate

    blocking_fn_gate.release.clear()
    yield blocking_fn_gate.release
    blocking_fn_gate.release.set()


@pytest.fixture
def returned(release: threading.Event) -> set[str]:
    """The sessions whose blocked function has returned."""
    import blocking_fn_gate

    sessions: set[str] = blocking_fn_gate.returned
    return sessions


async def test_a_blocking_function_fails_after_its_timeout_while_another_turn_carries_on(
    write: WriteFile, home: Path, returned: set[str]
) -> None:
    write(
        "blocking_fn.py",
        "from blocking_fn_gate import release, returned\n\n"
        "def wait(ctx):\n    release.wait(10)\n    returned.add(ctx.session)\n    return {'done': True}\n",
    )
    config = scripted_config(write, fake={"latency_s": 0.05})
    app = Cantata(load_config(config), home=home)
    order: list[str] = []

    def watch(event: Event) -> None:
        if event.type == "agent_failed" and event.agent == "slow":
            order.append("slow failed")
        if event.type == "agent_finished":
            order.append(
                f"quick {event.agent} finished" if event.agent in ("a", "b", "c") else f"{event.agent} finished"
            )

    app.bus.listen(watch)
    try:
        stuck, quick = await asyncio.gather(
            app.run_turn(load_pipeline(write("stuck.yaml", STUCK)), "hello"),
            app.run_turn(load_pipeline(write("quick.yaml", QUICK)), "hello"),
        )
    finally:
        await app.close()
    slow = stuck.agents[0]
    assert slow.status == "failed" and slow.error == "function timed out after 1 s"
    assert stuck.session not in returned, "the agent failed at its timeout, not when the function returned"
    assert stuck.status == "degraded" and stuck.final is not None
    assert quick.status == "ok"
    # The other turn ran its three agents one after another while the function was blocked.
    assert order.index("quick c finished") < order.index("slow failed")


async def test_a_blocking_check_times_out_and_the_model_turn_goes_on(
    write: WriteFile, home: Path, returned: set[str]
) -> None:
    write(
        "blocking_check.py",
        "from blocking_fn_gate import release, returned\n\n"
        "def check(ctx):\n    release.wait(10)\n    returned.add(ctx.session)\n    return ctx.output\n",
    )
    text = "name: c\nagents:\n  - name: a\n    prompt: x\n    check: blocking_check.check\n    timeout_s: 0.5\n    deliver: final\n"
    app = Cantata(load_config(scripted_config(write, fake={})), home=home)
    try:
        result = await app.run_turn(load_pipeline(write("p.yaml", text)), "hello")
    finally:
        await app.close()
    assert result.agents[0].status == "failed" and "timed out after 0.5 s" in (result.agents[0].error or "")
    assert result.session not in returned, "the agent failed at its timeout, not when the check returned"


async def test_async_functions_are_awaited_under_the_timeout(write: WriteFile, home: Path) -> None:
    write(
        "async_fn.py",
        "import asyncio\n\nasync def nap(ctx):\n    await asyncio.sleep(10)\n\nasync def ok(ctx):\n    return 'fine'\n",
    )
    text = (
        "name: x\nagents:\n  - name: a\n    function: async_fn.nap\n    timeout_s: 0.2\n"
        "  - name: b\n    function: async_fn.ok\n    deliver: final\n"
    )
    app = Cantata(load_config(scripted_config(write, fake={})), home=home)
    try:
        result = await app.run_turn(load_pipeline(write("p.yaml", text)), "hello")
    finally:
        await app.close()
    a, b = result.agents
    assert a.status == "failed" and a.error == "function timed out after 0.2 s"
    assert b.output == "fine"


async def test_a_functions_traceback_is_logged_and_the_agent_fails_with_one_line(
    write: WriteFile, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write("broken_fn.py", "def f(ctx):\n    return helper(ctx)\n\ndef helper(ctx):\n    raise KeyError('tier')\n")
    text = "name: x\nagents:\n  - name: a\n    function: broken_fn.f\n  - name: b\n    prompt: x\n    deliver: final\n"
    app = Cantata(load_config(scripted_config(write, fake={})), home=home)
    try:
        with caplog.at_level(logging.ERROR, logger="cantata"):
            result = await app.run_turn(load_pipeline(write("p.yaml", text)), "hello")
    finally:
        await app.close()
    assert result.agents[0].error == "function raised KeyError: 'tier'"
    (record,) = [r for r in caplog.records if r.name.startswith("cantata")]
    assert "agent 'a'" in record.getMessage()
    assert record.exc_info is not None and "in helper" in caplog.text


def test_a_stuck_function_does_not_hold_up_the_process_exit(write: WriteFile, home: Path) -> None:
    write("forever_fn.py", "import time\n\ndef f(ctx):\n    time.sleep(3600)\n")
    text = "name: x\nagents:\n  - name: a\n    function: forever_fn.f\n    timeout_s: 0.5\n  - name: b\n    prompt: x\n    deliver: final\n"
    config = scripted_config(write, fake={})
    done = subprocess.run(
        [sys.executable, "-m", "cantata", "run", str(write("p.yaml", text)), "-m", "hi", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,  # a process held up by the thread would sleep for an hour
    )
    assert done.returncode == 0, done.stderr
    assert "function timed out after 0.5 s" in done.stdout


async def test_run_in_thread_passes_results_and_errors_and_leaves_the_loop_free() -> None:
    assert await run_in_thread(lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(ZeroDivisionError):
        await run_in_thread(lambda: 1 / 0)
    loop_thread = threading.get_ident()
    assert await run_in_thread(threading.get_ident) != loop_thread
    # Many at once: each gets its own answer.
    assert await asyncio.gather(*(run_in_thread(lambda n=n: n * n) for n in range(50))) == [n * n for n in range(50)]


async def test_a_function_output_that_cannot_be_stored_fails_its_agent_not_the_process(
    write: WriteFile, home: Path
) -> None:
    write("odd_fn.py", "def tags(ctx):\n    return {'tags': {'a', 'b'}}\n\ndef ok(ctx):\n    return 'fine'\n")
    text = (
        "name: odd\nagents:\n  - name: tags\n    function: odd_fn.tags\n"
        "  - name: b\n    function: odd_fn.ok\n    deliver: final\n"
    )
    result, stored = await run_functions(write, home, text)
    tags, b = result.agents
    assert tags.status == "failed" and "could not store the output" in (tags.error or "")
    assert b.status == "ok" and result.status == "degraded"
    assert stored is not None and stored.status == "degraded"  # finished, not left running
