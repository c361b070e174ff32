"""Model faults, against an OpenAI-compatible server on loopback that misbehaves on demand
(tests/helpers/faulty_server.py): each misbehaviour ends in a clear, bounded outcome; the
one retry loop retries what may pass on a second try, never a refused request, and waits
as long as `Retry-After` asks within the deadline; each instance's circuit breaker stops
a dead instance from being hammered, lets the turn go on without it, and closes again once
it answers; its state shows in `cantata instances`, /api/instances and /metrics."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from cantata.config import load_config
from cantata.events import Event
from cantata.instances import instances_report
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from cantata.turn import TurnResult
from tests.helpers.faulty_server import Behaviour, FaultyServer, refused_url
from tests.helpers.pipelines import WriteFile
from tests.helpers.server_app import chat_body, client, make_app, running

RETRY_AFTER = 0.2
BOUND_S = 60.0  # a safety net for a broken deadline, not a figure: every turn here ends far sooner

SCHEMA = (
    "{type: object, properties: {mood: {type: string, enum: [good, bad]}, reply: {type: string, maxLength: 60}},"
    " required: [mood, reply]}"
)


@pytest.fixture(scope="module")
def server() -> Iterator[FaultyServer]:
    with FaultyServer(retry_after=RETRY_AFTER, drip_s=0.01) as running_server:
        yield running_server


def two_instances(write: WriteFile, far_url: str, **far: object) -> Path:
    """`far` on the given server, `near` a scripted instance that is always fine."""
    options = "".join(f"\n            {key}: {value}" for key, value in far.items())  # at the dedented indent
    return write(
        "instances.yaml",
        f"""
        instances:
          - name: far
            backend: openai
            url: {far_url}
            model: faulty
            serves: [far]{options}
          - name: near
            backend: scripted
            serves: ["*"]
        """,
    )


def side_pipeline(write: WriteFile, *, retries: int = 1, timeout_s: float = 1.0, schema: bool = True) -> Path:
    """An early reply on `near`; `side` on `far`, read by nobody it would stop."""
    output = f"\n            output: {SCHEMA}" if schema else ""  # at the dedented indent
    return write(
        "p.yaml",
        f"""
        name: sided
        agents:
          - name: talk
            prompt: Answer at once.
            deliver: early
          - name: side
            model: far
            prompt: Say how the person feels.{output}
            max_tokens: 16
            retries: {retries}
            timeout_s: {timeout_s}
          - name: merge
            prompt: Merge.
            reads: [talk, side]
            deliver: final
        """,
    )


async def turns(config: Path, pipeline: Path, home: Path, count: int = 1) -> tuple[list[TurnResult], list[Event]]:
    app = Cantata(load_config(config), home=home)
    events: list[Event] = []
    results = []
    try:
        for i in range(count):
            turn = app.run_turn(load_pipeline(pipeline), f"message {i}", on_event=events.append)
            results.append(await asyncio.wait_for(turn, BOUND_S))
    finally:
        await app.close()
    return results, events


def side(result: TurnResult) -> Any:
    return next(a for a in result.agents if a.name == "side")


# Each misbehaviour: the side agent's status, a piece of its error (or its finish_reason
# when ok), and how many chat requests its retries: 1 sent. Either way the early reply came.
OUTCOMES: list[tuple[Behaviour, bool, str, str, int]] = [
    ("ok", True, "ok", "stop", 1),
    ("drip", True, "ok", "stop", 1),  # slow, but its tokens kept coming
    ("hang", True, "failed", "timed out after 1 s on instance 'far'", 2),
    ("500", True, "failed", "HTTP 500 from", 2),
    ("503", True, "failed", "HTTP 503 from", 2),
    ("429", True, "failed", "HTTP 429 from", 2),
    ("401", True, "failed", "HTTP 401 from", 1),  # a wrong key: never retried
    ("cut", True, "failed", "the stream ended before [DONE]", 2),
    ("garbage", True, "failed", "unreadable reply", 2),
    ("invalid", True, "failed", "the reply is not a JSON object", 4),  # each attempt repaired once
    ("off-schema", True, "failed", "'mood' is a required property", 4),
    ("empty", True, "failed", "the reply is not a JSON object", 4),
    ("empty", False, "failed", "the model returned an empty reply", 2),
    ("flood", False, "ok", "length", 1),  # cut at the byte cap, reported as cut
    ("flood-json", False, "ok", "length", 1),
    ("flood", True, "failed", "cut at max_tokens=16", 2),  # cut JSON is not repaired
    ("think", False, "failed", "cut at max_tokens=16", 2),  # reasoning past the cap, no answer
]


@pytest.mark.parametrize(
    ("behaviour", "schema", "status", "said", "requests"),
    OUTCOMES,
    ids=[f"{b}-{'json' if s else 'text'}" for b, s, *_ in OUTCOMES],
)
async def test_each_misbehaviour_gives_a_clear_bounded_outcome(
    server: FaultyServer,
    write: WriteFile,
    home: Path,
    behaviour: Behaviour,
    schema: bool,
    status: str,
    said: str,
    requests: int,
) -> None:
    route = f"{behaviour}-{schema}"
    config = two_instances(write, server.serve(route, behaviour))
    (result,), _ = await turns(config, side_pipeline(write, schema=schema), home)
    agent = side(result)
    assert agent.status == status, agent.error
    assert said in (agent.error or "" if status == "failed" else agent.finish_reason or ""), agent.error
    assert len(server.bodies(route)) == requests
    assert result.early is not None and result.status == ("ok" if status == "ok" else "degraded")


async def test_a_refused_connection_fails_its_agent_and_the_early_reply_still_comes(
    write: WriteFile, home: Path
) -> None:
    url = refused_url()
    (result,), _ = await turns(two_instances(write, url), side_pipeline(write), home)
    assert side(result).status == "failed" and f"cannot connect to {url}" in (side(result).error or "")
    assert result.early is not None and result.final is not None and result.status == "degraded"


async def test_retry_after_is_honoured(server: FaultyServer, write: WriteFile, home: Path) -> None:
    config = two_instances(write, server.serve("busy", "429", "ok"))
    (result,), events = await turns(config, side_pipeline(write), home)
    assert side(result).status == "ok" and side(result).attempts == 2
    (retry,) = [e for e in events if e.type == "agent_retry" and e.agent == "side"]
    assert retry.data["delay_s"] >= RETRY_AFTER and "HTTP 429" in retry.data["error"]


async def test_a_retry_after_past_the_deadline_is_not_waited_for(write: WriteFile, home: Path) -> None:
    with FaultyServer(retry_after=30) as slow:
        config = two_instances(write, slow.serve("busy", "429", "ok"))
        (result,), events = await turns(config, side_pipeline(write, retries=3, timeout_s=5), home)
        sent = len(slow.bodies("busy"))
    agent = side(result)
    assert agent.status == "failed" and sent == 1
    assert "not retried: the server asked to wait 30 s (Retry-After), past the agent's timeout_s of 5 s" in (
        agent.error or ""
    )
    assert not [e for e in events if e.type == "agent_retry" and e.agent == "side" and "delay_s" in e.data]


async def test_a_dead_instance_is_tried_a_handful_of_times_across_20_turns(
    server: FaultyServer, write: WriteFile, home: Path
) -> None:
    # Down from the start: its check fails before the first turn, and trips its breaker.
    config = two_instances(write, server.serve("dead", "503", models="503"))
    results, events = await turns(config, side_pipeline(write, retries=2), home, count=20)
    assert server.requests("dead") <= 5  # not 20 turns x 3 attempts
    for result in results:
        assert result.early is not None and result.final is not None and result.status == "degraded"
        assert "is failing fast" in (side(result).error or "")
    told = [e.data for e in events if e.type == "instance_circuit"]
    assert told[0]["state"] == "open" and "HTTP 503" in told[0]["reason"]
    report = await instances_report(load_config(config), home, check=False)
    far = next(row for row in report if row["name"] == "far")
    assert far["circuit"]["state"] == "open" and far["circuit"]["failures"] >= 1


async def test_an_instance_that_dies_mid_run_is_tried_at_most_breaker_failures_times(
    server: FaultyServer, write: WriteFile, home: Path
) -> None:
    config = two_instances(write, server.serve("dies", "ok", "503"), breaker_failures=5)
    results, _ = await turns(config, side_pipeline(write, retries=2), home, count=20)
    assert side(results[0]).status == "ok"
    assert len(server.bodies("dies")) - 1 <= 5  # after its one good answer
    assert all(r.early is not None and r.status == "degraded" for r in results[1:])


async def test_the_breaker_probes_after_its_cooldown_and_closes_when_the_instance_answers(
    server: FaultyServer, write: WriteFile, home: Path
) -> None:
    config = two_instances(write, server.serve("recovers", "503"), breaker_failures=2, breaker_cooldown_s=0.2)
    app = Cantata(load_config(config), home=home)
    pipeline = load_pipeline(side_pipeline(write, retries=1))
    events: list[Event] = []
    try:
        failing = await app.run_turn(pipeline, "one", on_event=events.append)
        assert "HTTP 503" in (side(failing).error or "")
        fast = await app.run_turn(pipeline, "two", on_event=events.append)
        assert "is failing fast" in (side(fast).error or "")
        server.serve("recovers", "ok")
        await asyncio.sleep(0.3)  # the cool-down
        recovered = await app.run_turn(pipeline, "three", on_event=events.append)
        breaker = app.pool.instances["far"].breaker
    finally:
        await app.close()
    assert side(recovered).status == "ok" and recovered.status == "ok"
    assert breaker.state == "closed"
    assert [e.data["state"] for e in events if e.type == "instance_circuit"] == ["open", "closed"]


async def test_over_http_a_down_instance_fails_only_its_agent_and_shows_in_metrics_and_the_api(
    write: WriteFile, home: Path
) -> None:
    config = two_instances(write, refused_url())
    pipeline = side_pipeline(write, schema=False)
    async with running(make_app(config, home, pipelines=[pipeline])) as app, client(app) as c:
        reply = await c.post("/v1/chat/completions", json=chat_body("hello", model="sided"))
        metrics = (await c.get("/metrics")).text
        instances = (await c.get("/api/instances")).json()
    assert reply.status_code == 200, reply.text  # not a 503 for the whole turn
    turn = reply.json()["cantata"]
    assert turn["early"] and turn["status"] == "degraded"
    gauges = {
        s.labels["instance"]: s.value
        for f in text_string_to_metric_families(metrics)
        if f.name == "cantata_instance_circuit"
        for s in f.samples
    }
    assert gauges == {"far": 2.0, "near": 0.0}
    circuits = {row["name"]: row["circuit"] for row in instances}
    assert circuits["far"]["state"] == "open" and "cannot connect" in circuits["far"]["reason"]
    assert circuits["near"]["state"] == "closed"


async def test_every_instance_down_refuses_the_turn_before_anything_is_written(write: WriteFile, home: Path) -> None:
    config = write(
        "instances.yaml",
        f"""
        instances:
          - name: far
            backend: openai
            url: {refused_url()}
            serves: ["*"]
        """,
    )
    async with running(make_app(config, home, pipelines=[side_pipeline(write)])) as app, client(app) as c:
        reply = await c.post("/v1/chat/completions", json=chat_body("hello", model="sided"))
        sessions = (await c.get("/api/sessions")).json()
    assert reply.status_code == 503 and "instance 'far' cannot serve" in reply.json()["error"]["message"]
    assert sessions == [] or sessions.get("sessions") == []
