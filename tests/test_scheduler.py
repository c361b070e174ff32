"""Turns on scripted instances: dependency order, concurrency, early/final, failures, retries, timeouts.

Nothing here measures time: order and concurrency are read from the order of the events,
with generations held until another agent has reached a given point (`gate`).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest

from cantata.backends.base import Chunk, CompletionRequest
from cantata.config import load_config
from cantata.events import Event
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from cantata.turn import TurnResult
from tests.helpers.pipelines import WriteFile, scripted_config

# a -> (b, c) -> d, plus an early node e; b and c on instances of different speeds.
DIAMOND = """
name: diamond
agents:
  - name: a
    model: mid
    prompt: first
  - name: b
    model: slow
    prompt: left
    reads: [a]
    output:
      type: object
      properties:
        score: {type: integer, minimum: 1, maximum: 5}
        reply: {type: string}
      required: [score, reply]
  - name: c
    model: fast
    prompt: right
    reads: [a]
  - name: d
    model: mid
    prompt: merge
    reads: [b, c]
    deliver: final
  - name: e
    model: fast
    prompt: quick
    deliver: early
"""


async def run(
    pipeline_path: Path, config_path: Path, home: Path, message: str = "hello", **kwargs: object
) -> tuple[TurnResult, list[Event]]:
    events: list[Event] = []
    app = Cantata(load_config(config_path), home=home)
    try:
        result = await app.run_turn(load_pipeline(pipeline_path), message, on_event=events.append, **kwargs)  # type: ignore[arg-type]
    finally:
        await app.close()
    return result, events


def speeds(write: WriteFile, **extra: object) -> Path:
    return scripted_config(
        write,
        fast={"latency_s": 0.02, "serves": ["fast"], **extra},
        mid={"latency_s": 0.05, "serves": ["mid"], **extra},
        slow={"latency_s": 0.12, "serves": ["slow"], **extra},
    )


def hold(app: Cantata, until: dict[str, asyncio.Event]) -> None:
    """Hold each named agent's generation until its event is set. Call it after
    `app.check(...)`, which opens the instances."""
    for instance in app.pool.instances.values():

        async def held(request: CompletionRequest, complete: Any = instance.backend.complete) -> AsyncIterator[Chunk]:
            if request.agent in until:
                await until[request.agent].wait()
            async with aclosing(complete(request)) as stream:
                async for chunk in stream:
                    yield chunk

        instance.backend.complete = held  # type: ignore[method-assign]


async def test_agents_start_when_their_reads_are_written(write: WriteFile, home: Path) -> None:
    # e reads nothing and is held until d, at the end of the other path, has finished; b is
    # held until its sibling c has finished. A scheduler in lock-step rounds (a and e, then
    # b and c, then d) or one agent at a time would wait for ever.
    pipeline = load_pipeline(write("p.yaml", DIAMOND))
    app = Cantata(load_config(scripted_config(write, ok={"latency_s": 0.0, "serves": ["*"]})), home=home)
    events: list[Event] = []
    finished = {name: asyncio.Event() for name in pipeline.order}

    def watch(event: Event) -> None:
        events.append(event)
        if event.type == "agent_finished" and event.agent:
            finished[event.agent].set()

    try:
        await app.check(pipeline)
        hold(app, {"e": finished["d"], "b": finished["c"]})
        async with asyncio.timeout(30):  # only so that a waiting scheduler fails instead of hanging
            result = await app.run_turn(pipeline, "hello", on_event=watch)
    finally:
        await app.close()
    assert result.status == "ok"
    order = [(e.type, e.agent) for e in events]
    for name, reads in {"b": ["a"], "c": ["a"], "d": ["b", "c"]}.items():
        for read in reads:
            assert order.index(("agent_finished", read)) < order.index(("agent_started", name)), (name, read)
    # Concurrent, not one after another: e was started before the path it does not read ran
    # through (d finished first, e being held), and b before its sibling c had finished.
    assert order.index(("agent_started", "e")) < order.index(("agent_finished", "d"))
    assert order.index(("agent_finished", "d")) < order.index(("agent_finished", "e"))
    assert order.index(("agent_started", "b")) < order.index(("agent_finished", "c"))
    assert order.index(("agent_finished", "c")) < order.index(("agent_finished", "b"))
    assert order[-1] == ("turn_delivered", None)  # the turn still waited for e


async def test_cancelling_a_turn_cancels_its_agents_before_it_returns(write: WriteFile, home: Path) -> None:
    pipeline = load_pipeline(write("p.yaml", DIAMOND))
    app = Cantata(load_config(scripted_config(write, ok={"latency_s": 0.0, "serves": ["*"]})), home=home)
    started = {name: asyncio.Event() for name in pipeline.order}
    never = asyncio.Event()

    def watch(event: Event) -> None:
        if event.type == "agent_started" and event.agent:
            started[event.agent].set()

    try:
        await app.check(pipeline)
        hold(app, {"e": never, "b": never})
        turn = asyncio.create_task(app.run_turn(pipeline, "hello", on_event=watch))
        await started["e"].wait()
        await started["b"].wait()
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        # Every agent's task has ended with the turn, and the slots they held are free.
        assert not [task for task in asyncio.all_tasks() if task.get_name().startswith("cantata:")]
        assert all(instance.stats.running == 0 for instance in app.pool.instances.values())
        assert not started["d"].is_set()
    finally:
        await app.close()


async def test_early_and_final_delivery(write: WriteFile, home: Path) -> None:
    result, events = await run(write("p.yaml", DIAMOND), speeds(write), home)
    assert result.early is not None and result.early.agent == "e"
    assert result.final is not None and result.final.agent == "d"
    assert result.early.at_s < result.final.at_s
    types = [e.type for e in events]
    assert types[0] == "turn_started" and types[-1] == "turn_delivered"
    assert types.index("early_delivered") < types.index("turn_delivered")
    assert result.agents[[a.name for a in result.agents].index("b")].output["score"] in range(1, 6)


@pytest.mark.parametrize("latency", [0.0, 0.01])
async def test_no_entry_is_committed_before_what_it_read(write: WriteFile, home: Path, latency: float) -> None:
    # Readers start before their inputs' commits (the store commits in the order written):
    # whatever a crash leaves in the file must be a blackboard resume can trust.
    config = scripted_config(write, ok={"latency_s": latency, "serves": ["*"]})
    pipeline = load_pipeline(write("p.yaml", DIAMOND))
    reads = {agent.name: set(agent.reads) for agent in pipeline.spec.agents}
    app = Cantata(load_config(config), home=home)
    snapshots: list[set[str]] = []

    def check(event: Event) -> None:
        # What is committed to the database file at this moment of the turn.
        db = sqlite3.connect(home / "cantata.db")
        rows = db.execute("SELECT agent FROM blackboard WHERE turn_id = ?", (event.turn_id,)).fetchall()
        snapshots.append({agent for (agent,) in rows})
        db.close()

    try:
        result = await app.run_turn(pipeline, "hello", on_event=check)
    finally:
        await app.close()
    assert result.status == "ok"
    for committed in snapshots:
        for agent in committed:
            assert reads[agent] <= committed, f"{agent} committed without {reads[agent] - committed}"
    assert len(snapshots) > len(reads)
    db = sqlite3.connect(home / "cantata.db")
    stored = {agent for (agent,) in db.execute("SELECT agent FROM blackboard")}
    db.close()
    assert stored == set(reads)  # every entry is committed once the turn has returned


async def test_failed_agent_degrades_the_turn_and_readers_see_it_missing(write: WriteFile, home: Path) -> None:
    config = scripted_config(
        write, broken={"fail_rate": 1.0, "serves": ["slow"]}, ok={"latency_s": 0.0, "serves": ["*"]}
    )
    result, events = await run(write("p.yaml", DIAMOND), config, home)
    agents = {a.name: a for a in result.agents}
    assert agents["b"].status == "failed" and "scripted failure" in (agents["b"].error or "")
    assert agents["d"].status == "ok"  # ran with b marked missing
    assert result.status == "degraded"
    assert any(e.type == "agent_failed" and e.agent == "b" for e in events)


async def test_required_input_failure_skips_the_reader(write: WriteFile, home: Path) -> None:
    text = DIAMOND.replace("    reads: [b, c]\n", "    reads: [b, c]\n    required: [b]\n")
    config = scripted_config(write, broken={"fail_rate": 1.0, "serves": ["slow"]}, ok={"serves": ["*"]})
    result, _ = await run(write("p.yaml", text), config, home)
    d = next(a for a in result.agents if a.name == "d")
    assert d.status == "skipped" and "b" in (d.error or "")
    assert result.final is None and result.status == "failed"  # the final reply never came


async def test_retries_with_backoff(write: WriteFile, home: Path) -> None:
    text = DIAMOND.replace("    prompt: first\n", "    prompt: first\n    retries: 2\n")
    config = scripted_config(write, flaky={"fail_first": 2, "serves": ["mid"]}, ok={"serves": ["*"]})
    result, events = await run(write("p.yaml", text), config, home)
    a = next(x for x in result.agents if x.name == "a")
    assert a.status == "ok" and a.attempts == 3
    retries = [e for e in events if e.type == "agent_retry" and e.agent == "a"]
    # Exponential with jitter: between half and all of 0.25 s, then of 0.5 s.
    first, second = (r.data["delay_s"] for r in retries)
    assert 0.125 <= first <= 0.25 and 0.25 <= second <= 0.5
    # Without enough retries the agent fails, and the turn goes on without it.
    config = scripted_config(write, flaky={"fail_first": 5, "serves": ["mid"]}, ok={"serves": ["*"]})
    result, _ = await run(write("p.yaml", text), config, home)
    a = next(x for x in result.agents if x.name == "a")
    assert a.status == "failed" and a.attempts == 3


async def test_timeout_fails_the_agent_not_the_turn(write: WriteFile, home: Path) -> None:
    text = DIAMOND.replace("    prompt: right\n", "    prompt: right\n    timeout_s: 0.05\n").replace(
        "model: fast\n    prompt: quick", "model: mid\n    prompt: quick"
    )
    config = scripted_config(write, stuck={"latency_s": 30.0, "serves": ["fast"]}, ok={"serves": ["*"]})
    result, _ = await run(write("p.yaml", text), config, home)
    c = next(x for x in result.agents if x.name == "c")
    # Stuck for 30 s: had the timeout not cut it, the agent would have succeeded.
    assert c.status == "failed" and "timed out after 0.05 s" in (c.error or "")
    assert result.status == "degraded"


async def test_early_agent_is_served_first_on_a_shared_instance(write: WriteFile, home: Path) -> None:
    # One slot for everyone: among agents ready at once, the early one goes first,
    # then by priority, whatever the file order.
    text = """
    name: shared
    agents:
      - name: low
        prompt: x
      - name: high
        prompt: x
        priority: 5
      - name: quick
        prompt: x
        deliver: early
    """
    config = scripted_config(write, one={"latency_s": 0.01, "max_concurrency": 1})
    _, events = await run(write("p.yaml", text), config, home)
    started = [e.agent for e in events if e.type == "agent_started"]
    assert started == ["quick", "high", "low"]


async def test_session_continues_and_sees_earlier_turns(write: WriteFile, home: Path) -> None:
    config = speeds(write)
    path = write("p.yaml", DIAMOND)
    first, _ = await run(path, config, home, message="first message")
    second, _ = await run(path, config, home, message="second message", session_id=first.session)
    assert second.session == first.session and second.turn == 2
    assert second.agents[0].prompt_tokens > first.agents[0].prompt_tokens  # the briefing now holds turn 1


async def test_function_agent_gets_inputs_and_memory(write: WriteFile, home: Path) -> None:
    write(
        "probe_functions.py",
        """
        def count(ctx):
            seen = ctx.memory.get("tally", {}).get("n", 0)
            if ctx.inputs["a"]:
                ctx.conflict(rule="demo", resolution="kept")
            return {"n": seen + 1, "reply": f"turn {ctx.turn}: {ctx.message}"}
        """,
    )
    text = """
    name: fn
    agents:
      - name: a
        prompt: x
      - name: tally
        function: probe_functions.count
        reads: [a]
        memory: [tally]
        deliver: final
    """
    config = scripted_config(write, ok={})
    path = write("p.yaml", text)
    first, _ = await run(path, config, home, message="one")
    second, _ = await run(path, config, home, message="two", user="local")
    assert first.final is not None and first.final.text == "turn 1: one"
    assert second.agents[-1].output == {"n": 2, "reply": "turn 1: two"}  # memory spans sessions
    assert second.conflicts == [{"found_by": "tally", "rule": "demo", "resolution": "kept"}]


async def test_resume_reruns_only_missing_agents(write: WriteFile, home: Path) -> None:
    pipeline = load_pipeline(write("p.yaml", DIAMOND))
    app = Cantata(load_config(speeds(write)), home=home)
    try:
        session = await app.session_for(pipeline, user="u", session_id=None)
        turn_id = (await app.store.start_turn(session, "hello", new_session=True)).id
        # As if the process died after a, e and c wrote.
        for agent in ("a", "e", "c"):
            await app.store.write_entry(
                turn_id=turn_id, user_id="u", agent=agent, status="ok", output=f"{agent}!", error=None
            )
        events: list[Event] = []
        result = await app.resume(pipeline, turn_id, on_event=events.append)
    finally:
        await app.close()
    started = {e.agent for e in events if e.type == "agent_started"}
    assert started == {"b", "d"}
    assert result.status == "ok" and result.early is not None and result.early.text == "e!"


async def test_shortcut_answers_without_the_model(write: WriteFile, home: Path) -> None:
    write(
        "safe_hooks.py",
        """
        def template_when_flagged(ctx):
            if ctx.inputs["screen"]["flagged"]:
                return "Are you safe right now? You can call 3114 at any time."
            return None
        """,
    )
    write("screen_fn.py", "def screen(ctx):\n    return {'flagged': 'hurt myself' in ctx.message}\n")
    text = """
    name: safe
    agents:
      - name: screen
        function: screen_fn.screen
      - name: coach
        prompt: Answer.
        reads: [screen]
        shortcut: safe_hooks.template_when_flagged
        deliver: early
    """
    path = write("p.yaml", text)
    config = scripted_config(write, fake={})
    flagged, _ = await run(path, config, home, message="I want to hurt myself")
    coach = flagged.agents[1]
    assert coach.output == "Are you safe right now? You can call 3114 at any time."
    assert coach.instance is None and coach.attempts == 0  # no model call
    calm, _ = await run(path, config, home, message="I slept well")
    assert calm.agents[1].instance == "fake" and calm.agents[1].attempts == 1


def test_shortcut_and_check_are_for_model_agents(write: WriteFile) -> None:
    from cantata.errors import SpecError

    path = write("p.yaml", "name: x\nagents:\n  - name: a\n    function: json.dumps\n    check: json.loads\n")
    with pytest.raises(SpecError, match="p.yaml:5: agent 'a' is a function; 'check' is for model agents"):
        load_pipeline(path)


async def test_team_briefing_shares_every_role_and_the_briefing_is_identical(write: WriteFile, home: Path) -> None:
    from cantata.backends.scripted import ScriptedBackend
    from cantata.config import InstanceConfig, InstancesConfig
    from cantata.pool import Instance

    class Recording(ScriptedBackend):
        def __init__(self) -> None:
            super().__init__(InstanceConfig(name="rec", backend="scripted"))
            self.seen: dict[str, list[str]] = {}

        def complete(self, request):  # type: ignore[no-untyped-def]
            self.seen[request.agent] = [m.content for m in request.messages]
            return super().complete(request)

    text = DIAMOND.replace("name: diamond\n", "name: diamond\nteam_briefing: true\nbriefing: Be kind.\n")
    pipeline = load_pipeline(write("p.yaml", text))
    app = Cantata(InstancesConfig(instances=[InstanceConfig(name="rec", backend="scripted")]), home=home)
    backend = Recording()
    app.pool.instances["rec"] = Instance(app.config.instances[0], backend)
    try:
        await app.run_turn(pipeline, "hello")
    finally:
        await app.close()
    systems = {messages[0] for messages in backend.seen.values()}
    assert len(systems) == 1, "every agent gets the same briefing, byte for byte"
    (briefing,) = systems
    for name in "abcde":
        assert f"### {name}\n{pipeline.prompts[name]}" in briefing
    assert "merge" not in backend.seen["a"][1] and "Do what the team section above says a does." in backend.seen["a"][1]


async def test_a_function_raising_any_error_degrades_the_turn(write: WriteFile, home: Path) -> None:
    write("raising_fn.py", "from cantata.errors import Rejected\n\ndef f(ctx):\n    raise Rejected('no')\n")
    text = "name: x\nagents:\n  - name: a\n    function: raising_fn.f\n  - name: b\n    prompt: x\n    deliver: final\n"
    result, _ = await run(write("p.yaml", text), scripted_config(write, fake={}), home)
    assert result.status == "degraded" and "function raised Rejected: no" in (result.agents[0].error or "")


async def test_the_turn_json_matches_the_published_schema(write: WriteFile, home: Path) -> None:
    import jsonschema

    result, _ = await run(write("p.yaml", DIAMOND), scripted_config(write, fake={"latency_s": 0}), home)
    printed = result.as_json()
    jsonschema.validate(printed, TurnResult.model_json_schema(mode="serialization"))
    assert "turn_id" not in printed  # the CLI's shape is unchanged; the id stays on the object
    # What a client parses back is the same turn.
    assert TurnResult.model_validate({**printed, "turn_id": result.turn_id}).as_json() == printed


async def test_an_entry_refused_at_commit_fails_its_agent_and_the_turn_status(write: WriteFile, home: Path) -> None:
    # Another writer (a second process resuming the same turn) stores 'answer' first: the
    # turn's own entry is refused at its commit, after the finish was queued behind it.
    write(
        "racer.py",
        "async def answer(ctx):\n"
        "    await ctx.runtime.store.write_entry(turn_id=ctx.turn_id, user_id=ctx.user, agent='answer',"
        " status='ok', output='theirs', error=None)\n"
        "    return 'mine'\n"
        "\ndef side(ctx):\n    return 'side'\n",
    )
    text = (
        "name: race\nagents:\n  - name: side\n    function: racer.side\n"
        "  - name: answer\n    function: racer.answer\n    deliver: final\n"
    )
    app = Cantata(load_config(scripted_config(write, fake={})), home=home)
    events: list[Event] = []
    try:
        result = await app.run_turn(load_pipeline(write("p.yaml", text)), "hello", on_event=events.append)
        stored = await app.store.get_turn(result.turn_id)
    finally:
        await app.close()
    answer = next(a for a in result.agents if a.name == "answer")
    assert answer.status == "failed" and "already has an entry" in (answer.error or "")
    assert result.status == "failed"
    assert stored is not None and stored.status == "failed"
    # Finished as soon as its entry was queued (its readers start then), then failed once,
    # with the error its result has, when the commit refused the entry.
    reported = [e for e in events if e.agent == "answer" and e.type in ("agent_failed", "agent_finished")]
    assert [e.type for e in reported] == ["agent_finished", "agent_failed"]
    assert reported[-1].data["error"] == answer.error
