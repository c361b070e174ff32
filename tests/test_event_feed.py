"""Events across processes: a turn run through one runtime (another server, a worker) is
followed live through another on the same PostgreSQL, woken by LISTEN/NOTIFY, with a
polling backstop when a notification is lost; `Last-Event-ID` holds across servers.

Two runtimes in one test process stand for two processes: each has its own store, so its
own connections, and nothing in memory is shared between them."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import psycopg
import pytest

from cantata.config import InstanceConfig, InstancesConfig
from cantata.events import Dropped, Event, Subscription
from cantata.loader import Pipeline, load_pipeline
from cantata.runtime import Cantata
from cantata.store import SqliteStore
from cantata.store.event_feed import StoreTail, event_feed, follow
from cantata.store.postgres_listen import APPLICATION_NAME
from cantata.store.postgres_store import PostgresStore
from tests.helpers.pipelines import CHAIN, WriteFile, scripted_config
from tests.helpers.postgres import PostgresServer
from tests.helpers.server_app import chat_body, client, make_app, running
from tests.helpers.servers import CantataServer
from tests.helpers.sse import SSEvent, parse

HANG_GUARD_S = 60.0  # a feed that never delivers fails the test here instead of hanging it
NEVER_S = 3600.0  # a backstop that never fires during a test


def runtime(url: str, home: Path) -> Cantata:
    config = InstancesConfig(
        instances=[InstanceConfig(name="s", backend="scripted", latency_s=0.05, tokens_per_s=500)]  # type: ignore[call-arg]
    )
    return Cantata(config, home=home, store=PostgresStore(url))


@pytest.fixture
async def two(postgres: PostgresServer, tmp_path: Path) -> AsyncIterator[tuple[Cantata, Cantata]]:
    """Runtimes A and B on one new database."""
    url = postgres.new_database()
    a, b = runtime(url, tmp_path / "a"), runtime(url, tmp_path / "b")
    try:
        yield a, b
    finally:
        await a.close()
        await b.close()


@pytest.fixture
def chain(tmp_path: Path) -> Pipeline:
    (tmp_path / "chain.yaml").write_text(CHAIN)
    return load_pipeline(tmp_path / "chain.yaml")


async def until_delivered(subscription: Subscription) -> list[Event]:
    """A subscription's events up to the first turn_delivered."""
    events: list[Event] = []

    async def collect() -> None:
        async for item in subscription:
            assert not isinstance(item, Dropped)
            events.append(item)
            if item.type == "turn_delivered":
                return

    await asyncio.wait_for(collect(), HANG_GUARD_S)
    return events


async def run_and_follow(tail: StoreTail, reader: Cantata, writer: Cantata, pipeline: Pipeline) -> None:
    """A turn run by `writer` reaches a subscription of `tail` (over `reader`'s store) that
    was opened before it began: every stored event, each once, in order, with its user."""
    subscription = tail.subscribe()
    try:
        result = await writer.run_turn(pipeline, "hello", user="ana")
        followed = await until_delivered(subscription)
    finally:
        subscription.close()
    stored = await reader.store.events(result.turn_id)
    assert [(e.seq, e.type, e.agent) for e in followed] == [(e.seq, e.type, e.agent) for e in stored]
    assert {e.user_id for e in followed} == {"ana"} and followed[0].type == "turn_started"


async def test_a_notification_alone_wakes_a_follower_of_another_processes_turn(
    two: tuple[Cantata, Cantata], chain: Pipeline
) -> None:
    a, b = two
    tail = StoreTail(a.store, a.store.notifications(), backstop_s=NEVER_S)
    await tail.start()
    try:
        await run_and_follow(tail, a, b, chain)
        await run_and_follow(tail, a, b, chain)  # and again: the listener goes on listening
    finally:
        await tail.close()


async def test_without_notifications_the_backstop_alone_finds_the_events(
    two: tuple[Cantata, Cantata], chain: Pipeline
) -> None:
    a, b = two
    tail = StoreTail(a.store, None, backstop_s=0.05)
    await tail.start()
    try:
        await run_and_follow(tail, a, b, chain)
    finally:
        await tail.close()


async def test_a_killed_listening_connection_is_made_again_and_no_event_is_missed(
    two: tuple[Cantata, Cantata], chain: Pipeline, postgres: PostgresServer
) -> None:
    a, b = two
    assert isinstance(a.store, PostgresStore)
    database = psycopg.conninfo.conninfo_to_dict(a.store._url)["dbname"]
    tail = StoreTail(a.store, a.store.notifications())
    await tail.start()
    try:
        with psycopg.connect(postgres.url(), autocommit=True) as admin:

            def listeners() -> set[int]:
                rows = admin.execute(
                    "SELECT pid FROM pg_stat_activity WHERE application_name = %s AND datname = %s",
                    (APPLICATION_NAME, database),
                ).fetchall()
                return {pid for (pid,) in rows}

            first = await until(listeners)
            admin.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", (list(first),))
            # Events committed while the listener is down or reconnecting: the backstop (or the
            # read after reconnecting) finds them.
            await run_and_follow(tail, a, b, chain)
            second = await until(lambda: listeners() - first)
            assert len(second) == 1  # listening again, on a new connection
            await run_and_follow(tail, a, b, chain)
    finally:
        await tail.close()


async def until(found: Callable[[], set[int]]) -> set[int]:
    async def poll() -> set[int]:
        while not (value := found()):
            await asyncio.sleep(0.05)
        return value

    return await asyncio.wait_for(poll(), HANG_GUARD_S)


async def test_follow_replays_after_a_number_then_goes_on_live_with_another_processes_turn(
    two: tuple[Cantata, Cantata], chain: Pipeline
) -> None:
    """`follow` from a sequence number in the middle of one turn run by B: the rest of it
    from the store, then B's next turn as it is committed, each event once."""
    a, b = two
    first = await b.run_turn(chain, "hello", user="ana")
    stored = await a.store.events(first.turn_id)
    middle = stored[len(stored) // 2].stored_seq
    async with event_feed(a.store, a.bus) as feed:
        assert isinstance(feed, StoreTail)
        followed: list[Event] = []

        async def collect() -> None:
            async for event in follow(feed, a.store, middle, user_id="ana"):
                if event is None:
                    continue
                followed.append(event)
                if event.type == "turn_delivered" and event.turn_id != first.turn_id:
                    return

        following = asyncio.create_task(asyncio.wait_for(collect(), HANG_GUARD_S))
        second = await b.run_turn(chain, "more", user="ana", session_id=first.session)
        await following
    expected = [e for e in stored if e.stored_seq > middle] + await a.store.events(second.turn_id)
    assert [(e.seq, e.type) for e in followed] == [(e.seq, e.type) for e in expected]


async def test_on_sqlite_the_feed_is_the_runtimes_bus_in_process(tmp_path: Path) -> None:
    app = Cantata(InstancesConfig(instances=[InstanceConfig(name="s", backend="scripted")]), home=tmp_path)  # type: ignore[call-arg]
    try:
        assert isinstance(app.store, SqliteStore) and app.store.notifications() is None
        async with event_feed(app.store, app.bus) as feed:
            assert feed is app.bus
    finally:
        await app.close()


# -- two servers on one PostgreSQL, in process ------------------------------------------------


async def test_a_server_streams_and_resumes_the_events_of_a_turn_another_server_runs(
    write: WriteFile, tmp_path: Path, postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CANTATA_DB", postgres.new_database())
    config = scripted_config(write, steady={"latency_s": 0.1, "tokens_per_s": 200})
    async with (
        running(make_app(config, tmp_path / "home-a")) as server_a,
        running(make_app(config, tmp_path / "home-b")) as server_b,
        client(server_a) as on_a,
        client(server_b) as on_b,
    ):
        asking = asyncio.create_task(on_b.post("/v1/chat/completions", json=chat_body("hello")))
        turn_id = await asyncio.wait_for(started_turn(on_a), HANG_GUARD_S)
        # A follows the turn B runs, to its end (the stream ends with the turn).
        followed = parse((await asyncio.wait_for(on_a.get(f"/api/turns/{turn_id}/events"), HANG_GUARD_S)).text)
        answer = (await asking).json()
        assert answer["cantata"]["turn_id"] == turn_id
        stored = parse((await on_b.get(f"/api/turns/{turn_id}/events")).text)
        assert [(e.id, e.event) for e in followed[1:]] == [(e.id, e.event) for e in stored[1:]]  # past `retry:`
        assert followed[-1].event == "turn_delivered"
        # A client that saw B's stream up to the middle resumes on A with Last-Event-ID.
        middle = stored[len(stored) // 2]
        assert middle.id is not None
        resumed = parse((await on_a.get(f"/api/turns/{turn_id}/events", headers={"Last-Event-ID": middle.id})).text)
        assert [e.id for e in resumed[1:]] == [e.id for e in stored[stored.index(middle) + 1 :]]


async def started_turn(on: httpx.AsyncClient) -> int:
    """The id of the first turn whose start a server's stored events show."""
    while True:
        for event in parse((await on.get("/api/events?follow=false")).text):
            if event.event == "turn_started":
                turn_id: int = event.json()["turn_id"]
                return turn_id
        await asyncio.sleep(0.02)


# -- two `cantata serve` processes on one PostgreSQL ------------------------------------------


@pytest.mark.server
def test_two_cantata_serve_processes_each_stream_and_resume_the_others_turns(
    write: WriteFile, tmp_path: Path, postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CANTATA_DB", postgres.new_database())
    config = scripted_config(write, steady={"latency_s": 0.1, "tokens_per_s": 200})
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with (
        CantataServer(tmp_path / "a", "--config", str(config)) as a,
        CantataServer(tmp_path / "b", "--config", str(config)) as b,
    ):
        for runs, follows in ((b, a), (a, b)):
            seen: list[SSEvent] = []
            open_ = threading.Event()
            follower = threading.Thread(target=follow_until_delivered, args=(follows.url, seen, open_))
            follower.start()
            assert open_.wait(HANG_GUARD_S)
            answer = httpx.post(f"{runs.url}/v1/chat/completions", json=chat_body("hello"), timeout=HANG_GUARD_S)
            follower.join(HANG_GUARD_S)
            assert not follower.is_alive(), "the other server's stream never saw the turn delivered"
            turn_id = answer.json()["cantata"]["turn_id"]
            url = f"{runs.url}/api/turns/{turn_id}/events"
            stored = [e for e in parse(httpx.get(url, timeout=HANG_GUARD_S).text) if e.id]
            assert [(e.id, e.event) for e in seen] == [(e.id, e.event) for e in stored]
            # Resumed on the server that did not run it, from the middle of what was seen.
            middle = stored[len(stored) // 2]
            assert middle.id is not None
            resumed = httpx.get(
                f"{follows.url}/api/events?follow=false", headers={"Last-Event-ID": middle.id}, timeout=HANG_GUARD_S
            )
            assert [e.id for e in parse(resumed.text) if e.id] == [e.id for e in stored[stored.index(middle) + 1 :]]


def follow_until_delivered(url: str, seen: list[SSEvent], open_: threading.Event) -> None:
    """Follow a server's /api/events from now on until a turn is delivered: every event seen."""
    last = parse(httpx.get(f"{url}/api/events?follow=false", timeout=HANG_GUARD_S).text)
    after = next((e.id for e in reversed(last) if e.id), "0")
    with httpx.stream("GET", f"{url}/api/events?after={after}", timeout=HANG_GUARD_S) as stream:
        open_.set()
        text = ""
        for piece in stream.iter_text():
            text += piece
            if "event: turn_delivered" in text and text.endswith("\n\n"):
                seen.extend(e for e in parse(text) if e.id)
                return
