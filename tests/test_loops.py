"""Bounded loops: a part of the DAG repeated until a stop condition, each iteration kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from cantata.config import InstanceConfig, InstancesConfig
from cantata.errors import SpecError
from cantata.events import Event
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from tests.helpers.pipelines import WriteFile

# builder writes version 1; check passes from version `target`; fix bumps the version it
# reads (the builder's at first, then, carried, its own of the iteration before).
RULES = """
def build(ctx):
    return {"version": 1}

def check(ctx):
    return {"version": ctx.inputs["builder"]["version"], "passed": ctx.inputs["builder"]["version"] >= 3}

def fix(ctx):
    return {"version": ctx.inputs["builder"]["version"] + 1}

def report(ctx):
    return f"checked version {ctx.inputs['check']['version']}, passed {ctx.inputs['check']['passed']}"

def passed(ctx):
    return ctx.inputs["check"]["passed"]
"""

LOOP = """
name: looped
agents:
  - name: builder
    function: loop_rules.build
  - name: check
    function: loop_rules.check
    reads: [builder]
  - name: fix
    function: loop_rules.fix
    reads: [builder, check]
  - name: report
    function: loop_rules.report
    reads: [check, fix]
    deliver: final
loop:
  agents: [check, fix]
  max_iterations: {max}
  until: loop_rules.passed
  carry: {{fix: builder}}
"""


def app(home: Path) -> Cantata:
    return Cantata(InstancesConfig(instances=[InstanceConfig(name="s", backend="scripted")]), home=home)


def pipeline(write: WriteFile, *, max_iterations: int = 5) -> Path:
    write("loop_rules.py", RULES)
    return write("looped.yaml", LOOP.format(max=max_iterations))


async def test_the_loop_repeats_until_its_condition_and_keeps_every_iteration(write: WriteFile, home: Path) -> None:
    runtime = app(home)
    events: list[Event] = []
    try:
        result = await runtime.run_turn(load_pipeline(pipeline(write)), "go", on_event=events.append)
        history = await runtime.store.entry_history(result.turn_id)
    finally:
        await runtime.close()
    assert result.status == "ok" and result.final is not None
    assert result.final.text == "checked version 3, passed True"
    finished = [e for e in events if e.type == "loop_finished"]
    assert [(e.data["iterations"], e.data["stopped"]) for e in finished] == [(3, True)]
    checks = [(e.iteration, e.output["version"]) for e in history if e.agent == "check"]
    assert checks == [(1, 1), (2, 2), (3, 3)], "each iteration read the artefact the one before fixed"
    started = [(e.agent, e.data.get("iteration")) for e in events if e.type == "agent_started"]
    assert started == [
        ("builder", None),
        ("check", 1),
        ("fix", 1),
        ("check", 2),
        ("fix", 2),
        ("check", 3),
        ("fix", 3),
        ("report", None),
    ]


async def test_the_loop_stops_at_its_maximum(write: WriteFile, home: Path) -> None:
    runtime = app(home)
    events: list[Event] = []
    try:
        result = await runtime.run_turn(load_pipeline(pipeline(write, max_iterations=2)), "go", on_event=events.append)
    finally:
        await runtime.close()
    assert result.final is not None and result.final.text == "checked version 2, passed False"
    assert [(e.data["iterations"], e.data["stopped"]) for e in events if e.type == "loop_finished"] == [(2, False)]


async def test_resume_continues_the_loop_where_it_stopped(write: WriteFile, home: Path) -> None:
    looped = load_pipeline(pipeline(write))
    runtime = app(home)
    events: list[Event] = []
    try:
        session = await runtime.session_for(looped, user="u", session_id=None)
        turn_id = (await runtime.store.start_turn(session, "go", new_session=True)).id
        # As if the process died during iteration 2, after its check wrote.
        written = [
            ("builder", 0, {"version": 1}),
            ("check", 1, {"version": 1, "passed": False}),
            ("fix", 1, {"version": 2}),
            ("check", 2, {"version": 2, "passed": False}),
        ]
        for agent, iteration, output in written:
            await runtime.store.write_entry(
                turn_id=turn_id, user_id="u", agent=agent, status="ok", output=output, error=None, iteration=iteration
            )
        result = await runtime.resume(looped, turn_id, on_event=events.append)
    finally:
        await runtime.close()
    started = [(e.agent, e.data.get("iteration")) for e in events if e.type == "agent_started"]
    assert started == [("fix", 2), ("check", 3), ("fix", 3), ("report", None)]
    assert result.final is not None and result.final.text == "checked version 3, passed True"


@pytest.mark.parametrize(
    ("loop", "message"),
    [
        ("agents: [check, nobody]", "loop names 'nobody'"),
        ("agents: [check, report]", "'report' delivers a reply"),
        ("agents: [check, fix]\n  carry: {fix: report}", "carry into 'report'"),
        ("agents: [check, fix]\n  carry: {builder: check}", "carry from 'builder'"),
        ("agents: [check, fix]\n  max_iterations: 0", "greater than or equal to 1"),
    ],
)
def test_a_loop_that_cannot_run_is_refused_at_load(write: WriteFile, loop: str, message: str) -> None:
    write("loop_rules.py", RULES)
    text = LOOP.split("loop:")[0] + "loop:\n  " + loop + "\n"
    with pytest.raises(SpecError, match=message) as error:
        load_pipeline(write("bad.yaml", text))
    assert "bad.yaml:" in str(error.value)
