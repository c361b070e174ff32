"""Replicas of an instance (replicas.py): a turn's and a session's calls stay on one replica
while it is healthy and not overloaded, new sessions spread over the idle ones, a failed
attempt moves to another replica, a dead replica leaves the rotation through its breaker and
comes back once its probe answers. Routing alone on scripted servers; then whole turns against
the misbehaving loopback server (tests/helpers/faulty_server.py). The same against two real
llama-cpp-python servers: tests/test_replicas_server.py."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import AsyncExitStack
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from cantata.backends.openai_compat import OpenAICompatBackend
from cantata.backends.scripted import ScriptedBackend
from cantata.config import InstanceConfig, load_config
from cantata.errors import ConfigError
from cantata.events import Event
from cantata.instances import instances_report
from cantata.loader import load_pipeline
from cantata.pool import Instance, rank
from cantata.replicas import Replicas
from cantata.runtime import Cantata
from tests.helpers.faulty_server import FaultyServer, refused_url
from tests.helpers.pipelines import WriteFile
from tests.helpers.server_app import chat_body, client, make_app, running
from tests.helpers.servers import http_handler_server
from tests.test_cli import cantata

BOUND_S = 60.0  # a safety net for a hung turn, not a figure


def replicas(count: int, *, capacity: int = 8, affinity: bool = True) -> Replicas[Instance]:
    base = InstanceConfig(name="gpu", backend="scripted", max_concurrency=capacity)
    members = []
    for i in range(count):
        own = base.model_copy(update={"name": f"gpu#{i}"})
        members.append(Instance(own, ScriptedBackend(own), replica_of="gpu"))
    return Replicas("gpu", members, affinity=affinity)


async def hold(stack: AsyncExitStack, member: Instance, calls: int) -> None:
    for _ in range(calls):
        await stack.enter_async_context(member.slot(rank(early=False, priority=0)))


# -- the config --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "line", "said"),
    [
        ("backend: openai\n    url: http://a/v1\n    urls: [http://b/v1]", 2, "has both 'url' and 'urls'; give one"),
        ("backend: scripted\n    urls: [http://a/v1, http://b/v1]", 2, "(scripted) cannot have 'urls'"),
        ("backend: openai\n    urls: [http://a/v1, http://a/v1]", 4, "lists a URL twice"),
        ("backend: openai", 2, "needs a 'url' (or 'urls')"),
    ],
)
def test_a_wrong_replica_config_is_refused_in_one_line(write: WriteFile, lines: str, line: int, said: str) -> None:
    path = write("instances.yaml", f"instances:\n  - name: gpu\n    {lines}\n")
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert said in str(error.value) and str(error.value).startswith(f"{path}:{line}:") and "\n" not in str(error.value)


# -- routing -----------------------------------------------------------------------------


async def test_a_turn_and_a_session_stay_on_one_replica_and_new_sessions_spread() -> None:
    group = replicas(2)
    first = group.choose(session="s1", turn="t1")
    assert all(group.choose(session="s1", turn="t1") is first for _ in range(5))
    assert group.choose(session="s1", turn="t2") is first  # the session's next turn
    other = group.choose(session="s2", turn="t3")
    assert other is not first  # idle replicas tie: a new session goes round them
    assert group.choose(session="s2", turn="t4") is other
    await group.close()


async def test_an_overloaded_replica_gives_its_session_away_and_the_turn_follows() -> None:
    group = replicas(2, capacity=8)
    first = group.choose(session="s1", turn="t1")
    second = next(m for m in group.members if m is not first)
    async with AsyncExitStack() as stack:
        await hold(stack, first, 2)  # two ahead of the idle one: within a quarter of 8 slots
        assert group.choose(session="s1", turn="t1") is first
        await hold(stack, first, 1)  # three ahead: overloaded
        assert group.choose(session="s1", turn="t1") is second
        assert group.choose(session="s1", turn="t2") is second  # the session moved with it
    await group.close()


async def test_without_affinity_each_call_goes_to_the_least_loaded() -> None:
    group = replicas(2, affinity=False)
    chosen = [group.choose(session="s1", turn="t1") for _ in range(4)]
    assert chosen[0] is not chosen[1] and chosen[0] is chosen[2] and chosen[1] is chosen[3]
    async with AsyncExitStack() as stack:
        await hold(stack, chosen[0], 1)
        assert all(group.choose(session="s1", turn="t1") is chosen[1] for _ in range(3))
    await group.close()


async def test_an_open_breaker_leaves_the_rotation_and_a_failed_attempt_moves() -> None:
    group = replicas(3)
    first = group.choose(session="s1", turn="t1")
    first.breaker.trip("down")
    moved = group.choose(session="s1", turn="t1")
    assert moved is not first and group.choose(session="s1", turn="t1") is moved
    third = group.choose(session="s1", turn="t1", failed=moved)
    assert third not in (first, moved)
    moved.breaker.trip("down")
    assert group.others_usable(first) and not group.others_usable(third)  # only `third` is healthy
    for member in group.members:
        member.breaker.trip("down")
    # None healthy: a call still goes somewhere, to fail fast saying why.
    assert group.choose(session="s1", turn="t1") in group.members
    await group.close()


# -- whole turns on a misbehaving loopback server ---------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[FaultyServer]:
    with FaultyServer() as running_server:
        yield running_server


def replicated_config(write: WriteFile, urls: list[str], **options: object) -> Path:
    extra = "".join(f"\n    {key}: {value}" for key, value in options.items())
    return write(
        "instances.yaml",
        f"instances:\n  - name: far\n    backend: openai\n    model: faulty\n    urls: [{', '.join(urls)}]{extra}\n",
    )


def four_agents(write: WriteFile) -> Path:
    """Four model agents on one instance: the early reply, two readers of it, the merge."""
    return write(
        "p.yaml",
        """
        name: four
        agents:
          - name: talk
            prompt: Answer at once.
            deliver: early
            retries: 1
          - name: feel
            prompt: Say how the person feels.
            reads: [talk]
            retries: 1
          - name: plan
            prompt: Suggest one step.
            reads: [talk]
            retries: 1
          - name: merge
            prompt: Merge.
            reads: [feel, plan]
            deliver: final
            retries: 1
        """,
    )


def replicas_by_session(events: list[Event]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for event in events:
        if event.type == "agent_finished":
            found.setdefault(event.session_id, set()).add(event.data["replica"])
    return found


async def test_affinity_failover_and_return_on_loopback_servers(
    server: FaultyServer, write: WriteFile, home: Path
) -> None:
    config = replicated_config(
        write,
        [server.serve("one", "ok"), server.serve("two", "ok")],
        breaker_failures=1,
        breaker_cooldown_s=0.3,
    )
    app = Cantata(load_config(config), home=home)
    pipeline = load_pipeline(four_agents(write))

    ids: dict[str, str] = {}  # a name of the test's -> the session's id

    async def sessions(names: list[str], turns: int) -> list[Event]:
        events: list[Event] = []
        for turn in range(turns):
            for name in names:
                result = await asyncio.wait_for(
                    app.run_turn(pipeline, f"turn {turn}", session_id=ids.get(name), on_event=events.append), BOUND_S
                )
                assert result.status == "ok", [a.error for a in result.agents]
                ids[name] = result.session
        return events

    try:
        # Affinity: every call of a session on one replica; the sessions spread over both.
        steady = replicas_by_session(await sessions(["s1", "s2", "s3", "s4"], 2))
        assert all(len(used) == 1 for used in steady.values()), steady
        assert set().union(*steady.values()) == {"far#0", "far#1"}

        # Failover: one replica dies; every turn still completes, on the other.
        server.serve("one", "503", models="503")
        sent_before = len(server.bodies("one"))
        failing = await sessions(["s1", "s2", "s3", "s4"], 2)
        assert all(used == {"far#1"} for used in replicas_by_session(failing).values())
        assert len(server.bodies("one")) - sent_before == 1  # the one failure that opened its breaker
        moved = [e for e in failing if e.type == "agent_retry" and e.data.get("replica") == "far#1"]
        assert len(moved) == 1 and "HTTP 503" in moved[0].data["error"]
        assert [e.data["state"] for e in failing if e.type == "instance_circuit"] == ["open"]
        assert app.pool.instances["far#0"].breaker.state != "closed"

        # Return: once it answers, the background probe closes its breaker and calls reach it again.
        server.serve("one", "ok")
        for _ in range(50):
            await asyncio.sleep(0.1)
            if app.pool.instances["far#0"].breaker.state == "closed":
                break
        assert app.pool.instances["far#0"].breaker.state == "closed"
        back = replicas_by_session(await sessions(["s5", "s6"], 1))
        assert set().union(*back.values()) == {"far#0", "far#1"}
    finally:
        await app.close()


async def test_replicas_show_in_the_report_and_the_api(server: FaultyServer, write: WriteFile, home: Path) -> None:
    config = replicated_config(write, [server.serve("up", "ok"), server.serve("down", "503", models="503")])
    async with running(make_app(config, home, pipelines=[four_agents(write)])) as app, client(app) as c:
        before = (await c.get("/api/instances")).json()
        reply = await c.post("/v1/chat/completions", json=chat_body("hello", model="four"))
        checked = (await c.get("/api/instances", params={"check": "true"})).json()
        schema = (await c.get("/openapi.json")).json()
    (row,) = before
    assert row["url"] is None and [r["name"] for r in row["replicas"]] == ["far#0", "far#1"]
    assert [r["url"] for r in row["replicas"]] == [server.url("up"), server.url("down")]
    assert reply.status_code == 200 and reply.json()["cantata"]["status"] == "ok", reply.text
    (row,) = checked
    assert [r["health"]["reachable"] for r in row["replicas"]] == [True, False]
    assert [r["circuit"]["state"] for r in row["replicas"]] == ["closed", "open"]
    assert row["circuit"]["state"] == "closed" and row["health"]["reachable"] is True
    assert "InstanceReplica" in schema["components"]["schemas"]

    (report,) = await instances_report(load_config(config), home, check=True)
    assert report["reachable"] is True  # one replica answers
    assert [r["reachable"] for r in report["replicas"]] == [True, False]
    assert "HTTP 503" in report["replicas"][1]["error"]


async def test_a_servers_waiting_requests_count_as_load_and_are_scraped_in_the_background() -> None:
    class Metrics(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # replica a's vLLM has 7 requests waiting; b has no /metrics
            if self.path != "/a/metrics":
                self.send_error(404)
                return
            body = b"vllm:num_requests_waiting 7\nvllm:kv_cache_usage_perc 0.2\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with http_handler_server(Metrics) as root:
        config = InstanceConfig(name="gpu", backend="openai", urls=[f"{root}/a/v1", f"{root}/b/v1"])
        group = Replicas(
            "gpu",
            [Instance(own, OpenAICompatBackend(own), replica_of="gpu") for own in config.replicas()],
            affinity=True,
        )
        try:
            group.choose(session="s0", turn="t0")  # starts the watch
            for _ in range(100):
                if group.server:
                    break
                await asyncio.sleep(0.05)
            assert set(group.server) == {0} and group.server[0].requests_waiting == 7  # b's absence is silent
            # Idle here, busy on its server: every new session goes to b.
            assert [group.choose(session=f"s{i}", turn=f"t{i}").replica for i in range(1, 4)] == ["gpu#1"] * 3
            group.server[0].requests_waiting = 0  # a's queue drained: new sessions go round again
            on_a = next(s for s in ("s4", "s5") if group.choose(session=s, turn=s) is group.members[0])
            group.server[0].kv_cache_usage = 0.97  # then its cache is full: the session moves
            assert group.choose(session=on_a, turn="next") is group.members[1]
        finally:
            await group.close()
            for member in group.members:
                await member.backend.close()


def test_cantata_instances_lists_each_replica_and_a_wrong_config_is_one_line(
    server: FaultyServer, write: WriteFile
) -> None:
    refused = refused_url()
    config = replicated_config(write, [server.serve("listed", "ok"), refused])
    done = cantata("instances", "--config", str(config), "--check")
    assert done.returncode == 0, done.stderr  # reachable while one replica is
    lines = done.stdout.splitlines()
    assert lines[1].split()[:2] == ["far#0", server.url("listed")] and lines[1].endswith("ok")
    assert lines[2].split()[:2] == ["far#1", refused] and "UNREACHABLE: instance 'far#1'" in lines[2]

    both = write(
        "both.yaml", "instances:\n  - name: far\n    backend: openai\n    url: http://a/v1\n    urls: [http://b/v1]\n"
    )
    done = cantata("instances", "--config", str(both))
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.splitlines() == [f"error: {both}:2: instance 'far' has both 'url' and 'urls'; give one of them"]


async def test_an_invalid_reply_is_retried_on_the_same_replica_a_server_error_on_another(
    server: FaultyServer, write: WriteFile, home: Path
) -> None:
    schema = "{type: object, properties: {mood: {type: string}}, required: [mood]}"
    pipeline = write(
        "one.yaml",
        f"""
        name: one
        agents:
          - name: only
            prompt: Say how the person feels.
            output: {schema}
            deliver: final
            retries: 1
        """,
    )
    # Each attempt is a generation and its repair: two invalid replies fail the first attempt.
    config = replicated_config(write, [server.serve("wrong", "invalid", "invalid", "ok"), server.serve("spare", "ok")])
    app = Cantata(load_config(config), home=home)
    events: list[Event] = []
    try:
        result = await app.run_turn(load_pipeline(pipeline), "hello", on_event=events.append)
        assert result.status == "ok" and len(server.bodies("wrong")) == 3 and not server.bodies("spare")
        server.serve("wrong", "503")
        session = result.session  # its next turn is sent where its last went: `wrong`
        result = await app.run_turn(load_pipeline(pipeline), "again", session_id=session, on_event=events.append)
    finally:
        await app.close()
    assert result.status == "ok" and len(server.bodies("wrong")) == 4 and len(server.bodies("spare")) == 1
    assert [e.data.get("replica") for e in events if e.type == "agent_finished"] == ["far#0", "far#1"]
