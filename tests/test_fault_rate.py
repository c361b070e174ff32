"""200 coaching turns with 20% of the model calls failing, on the scripted backend and
against the misbehaving server on loopback: every turn ends ok or degraded, the early
reply comes in every turn (the coach's instance is healthy), and no turn waits longer than
its agents' deadlines allow.

The coach has an instance of its own (`talk`), healthy; every other agent's (`think`)
fails one call in five with any fault: down, 5xx, 429, 401, a hang, a stream cut short,
invalid or off-schema JSON, an empty reply, a drip, reasoning that never ends. Their
ceiling is 2 s here, so that a hang costs seconds, not the bundled two minutes (it also
bounds their checks, which run on threads shared by 40 turns at once: not less).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import get_args

import pytest

from cantata.bundled import resolve
from cantata.config import FaultKind, load_config
from cantata.events import Event
from cantata.loader import Pipeline, load_pipeline
from cantata.retry import MAX_BACKOFF_S
from cantata.runtime import Cantata
from cantata.spec import AgentSpec
from cantata.turn import TurnResult
from tests.helpers.faulty_server import FaultyServer
from tests.helpers.pipelines import WriteFile

TURNS = 200
AT_ONCE = 40
RATE = 0.2
TIMEOUT_S = 2.0
MARGIN_S = 5.0  # the store's commits and the event loop's own work, on a loaded machine
# A flaky instance, not a dead one: its breaker should not open on a run of bad luck
# (five failures in a row happen about once in 3,000 windows at 20%; eight, once in 400,000).
FLAKY_BREAKER = 8


def coaching_with_its_own_coach_instance() -> Pipeline:
    """The bundled coaching pipeline, the coach on the alias `talk`, the other model agents
    on `think` with a ceiling of TIMEOUT_S."""
    path = resolve("coaching")
    spec = load_pipeline(path).spec

    def adapted(agent: AgentSpec) -> AgentSpec:
        if agent.is_function:
            return agent
        if agent.name == "coach":
            return agent.model_copy(update={"model": "talk"})
        return agent.model_copy(update={"timeout_s": TIMEOUT_S, "model": "think"})

    return Pipeline.from_spec(spec.model_copy(update={"agents": [adapted(a) for a in spec.agents]}), base=path.parent)


def allowed_s(pipeline: Pipeline) -> float:
    """The longest a turn may take by its agents' limits: along the slowest chain of reads,
    each function its timeout_s; each model agent its shortcut's and check's timeout_s,
    every attempt's, the backoff between them, and the check's last chance."""
    longest: dict[str, float] = {}
    for name in pipeline.order:
        agent = pipeline.agents[name]
        own = agent.timeout_s
        if not agent.is_function:
            attempts = agent.retries + 1
            own = attempts * agent.timeout_s + agent.retries * MAX_BACKOFF_S
            own += agent.timeout_s * ((agent.shortcut is not None) + (agent.check is not None))
        longest[name] = own + max((longest[r] for r in agent.reads), default=0.0)
    return max(longest.values())


async def run_and_check(config: Path, home: Path) -> None:
    """TURNS coaching turns, AT_ONCE at a time, on the instances of `config`; then the checks."""
    pipeline = coaching_with_its_own_coach_instance()
    app = Cantata(load_config(config), home=home)
    events: list[Event] = []
    gate = asyncio.Semaphore(AT_ONCE)

    async def one(i: int) -> tuple[TurnResult, float]:
        async with gate:
            start = time.monotonic()
            result = await app.run_turn(pipeline, f"I keep putting off the gym, day {i}.", on_event=events.append)
            return result, time.monotonic() - start

    try:
        done = await asyncio.gather(*(one(i) for i in range(TURNS)))
    finally:
        await app.close()
    assert_every_turn_held(pipeline, [r for r, _ in done], [s for _, s in done], events)


def assert_every_turn_held(
    pipeline: Pipeline, results: list[TurnResult], took: list[float], events: list[Event]
) -> None:
    assert len(results) == TURNS
    assert {r.status for r in results} <= {"ok", "degraded"}
    for result in results:
        assert result.early is not None and result.early.text, f"turn {result.turn_id}: no early reply"
        coach = next(a for a in result.agents if a.name == "coach")
        assert coach.status == "ok" and coach.instance in ("talk", None)
    assert max(took) <= allowed_s(pipeline) + MARGIN_S
    # The faults did happen: calls on `think` failed, were repaired or fell back.
    troubled = [e for e in events if e.type in ("agent_failed", "agent_retry") and e.agent != "coach"]
    assert len(troubled) >= 0.5 * RATE * TURNS


@pytest.fixture
def faster_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    """A measured deadline's floor under the 2 s ceilings, so that the adaptive deadline is
    the one catching hangs once the instance's speed is known."""
    monkeypatch.setattr("cantata.speed.FLOOR_S", 0.5)


@pytest.mark.usefixtures("faster_floor")
async def test_200_turns_at_a_20_percent_fault_rate_on_the_scripted_backend(write: WriteFile, home: Path) -> None:
    faults = ", ".join(get_args(FaultKind))
    config = write(
        "instances.yaml",
        f"""
        instances:
          - name: talk
            backend: scripted
            latency_s: 0.002
            serves: [talk]
          - name: think
            backend: scripted
            latency_s: 0.002
            fail_rate: {RATE}
            faults: [{faults}]
            breaker_failures: {FLAKY_BREAKER}
            seed: 21
            serves: [think]
        """,
    )
    await run_and_check(config, home)


@pytest.mark.usefixtures("faster_floor")
async def test_200_turns_at_a_20_percent_fault_rate_against_the_misbehaving_server(
    write: WriteFile, home: Path
) -> None:
    with FaultyServer(retry_after=0.5, drip_s=0.005) as server:
        config = write(
            "instances.yaml",
            f"""
            instances:
              - name: talk
                backend: openai
                url: {server.serve("talk", "ok")}
                model: faulty
                max_concurrency: 64
                serves: [talk]
              - name: think
                backend: openai
                url: {server.mix("think", rate=RATE, seed=21)}
                model: faulty
                max_concurrency: 64
                breaker_failures: {FLAKY_BREAKER}
                serves: [think]
            """,
        )
        await run_and_check(config, home)
        assert len(server.bodies("think")) >= TURNS  # the turns did reach the server
