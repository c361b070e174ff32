"""A PostgreSQL store whose connection is lost: backends killed (pg_terminate_backend), the
server stopped, a COMMIT whose outcome the client never hears. Real drops on the test
cluster, no mock of psycopg. (100 turns through a PostgreSQL restart: tests/test_kill.py.)"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from cantata.config import load_config
from cantata.errors import StoreError, StoreUnavailable
from cantata.events import Event
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from cantata.server import service as service_module
from cantata.server.keys import Principal
from cantata.server.service import Service, TurnHandle
from cantata.store import ApiKeyRow, SessionRow
from cantata.store.postgres_store import PostgresStore
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.helpers.postgres import PostgresServer
from tests.test_scheduler import DIAMOND, hold


async def started_session(store: PostgresStore) -> tuple[SessionRow, int]:
    session = store.new_session("ana", "p")
    started = await store.start_turn(session, "first", new_session=True)
    return session, started.id


def rows(url: str, sql: str, *params: object) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as db:
        return db.execute(sql, params).fetchall()


def count(url: str, sql: str, *params: object) -> int:
    ((found,),) = rows(url, sql, *params)
    assert isinstance(found, int)
    return found


async def test_reads_and_writes_go_on_after_their_connection_is_killed(postgres: PostgresServer) -> None:
    url = postgres.new_database()
    store = PostgresStore(url)
    try:
        session, turn_id = await started_session(store)
        assert postgres.terminate_backends(url) == 1  # the store's one connection
        assert await store.get_session(session.id) == session  # a read, on a new connection
        assert postgres.terminate_backends(url) == 1
        second = await store.start_turn(session, "second")  # a write, on a new one again
        assert second.number == 2
        assert [t.message for t in await store.turns(session.id)] == ["first", "second"]
    finally:
        await store.close()


async def test_a_transaction_cut_before_its_commit_runs_again_once(postgres: PostgresServer) -> None:
    url = postgres.new_database()
    store = PostgresStore(url)
    try:
        session, _ = await started_session(store)
        runs = 0

        def append_and_die_once(db: object) -> None:
            nonlocal runs
            runs += 1
            execute = db.execute  # type: ignore[attr-defined]
            execute("UPDATE sessions SET summary = summary || 'x' WHERE id = ?", (session.id,))
            if runs == 1:  # the server ends this connection in the middle of the transaction
                execute("SELECT pg_terminate_backend(pg_backend_pid())")

        await store.commit(append_and_die_once)
        assert runs == 2
        assert (await store.session_summary(session.id)).text == "x"  # the cut one rolled back
    finally:
        await store.close()


@contextmanager
def commits_that_wait_for_a_standby(postgres: PostgresServer, *, stop_the_server: bool = False) -> Iterator[list[int]]:
    """While inside: a transaction that sets synchronous_commit=on waits, after its commit is
    written, for a standby that does not exist; the first one to wait has its connection
    ended there (its client never hears that it committed), by pg_terminate_backend or, with
    `stop_the_server`, by a fast shutdown (the block starts the server again), and the waits
    stop. Yields the pids ended, to be checked."""
    watching = psycopg.connect(postgres.url(), autocommit=True)
    ended: list[int] = []
    done = threading.Event()

    def end_the_first_waiting() -> None:
        while not done.is_set():
            row = watching.execute("SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep' LIMIT 1").fetchone()
            if row is not None:
                ended.append(row[0])
                if stop_the_server:
                    postgres.stop()
                    return
                watching.execute("SELECT pg_terminate_backend(%s)", row)
                stop_waiting(watching)
                return
            time.sleep(0.02)

    with psycopg.connect(postgres.url(), autocommit=True) as admin:
        admin.execute("ALTER SYSTEM SET synchronous_standby_names = 'nobody'")
        admin.execute("SELECT pg_reload_conf()")
    settled(postgres, "nobody")
    watcher = threading.Thread(target=end_the_first_waiting, daemon=True)
    watcher.start()
    try:
        yield ended
    finally:
        done.set()
        watcher.join()
        watching.close()
        with psycopg.connect(postgres.url(), autocommit=True) as admin:
            stop_waiting(admin)


def stop_waiting(admin: psycopg.Connection[tuple[object, ...]]) -> None:
    admin.execute("ALTER SYSTEM RESET synchronous_standby_names")
    admin.execute("SELECT pg_reload_conf()")


def settled(postgres: PostgresServer, standby_names: str) -> None:
    """Wait until the server has reloaded its configuration: pg_reload_conf() only signals the
    postmaster, and a commit sent before the reload is read does not wait for the standby (the
    test then sees no commit to end). A new connection sees the setting once the postmaster
    reloaded, after it has signalled every backend."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with psycopg.connect(postgres.url(), autocommit=True) as probe:
            row = probe.execute("SHOW synchronous_standby_names").fetchone()
        if row is not None and row[0] == standby_names:
            return
        time.sleep(0.02)
    raise AssertionError(f"the server did not reload synchronous_standby_names = {standby_names!r} within 10 s")


async def test_a_commit_whose_outcome_was_lost_is_not_written_twice(postgres: PostgresServer) -> None:
    url = postgres.new_database()
    store = PostgresStore(url)
    try:
        session, turn_id = await started_session(store)
        event = Event("agent_finished", turn_id, session.id, 1.5, "a", {"n": 1}, user_id="ana")
        await store.add_api_key(ApiKeyRow("k0", "ana", "h0", False, 1.0, None))
        with commits_that_wait_for_a_standby(postgres) as ended:
            # One batch, one commit: every write of this tick shares it.
            wait = store.commit(lambda db: db.execute("SET LOCAL synchronous_commit = on"))
            started = store.start_turn(session, "second")
            entry = store.write_entry(turn_id=turn_id, user_id="ana", agent="a", status="ok", output=[1], error=None)
            reply = store.add_reply(turn_id, "a", "hello")
            store.record_event(event)
            version = store.add_agent_version("tool", forced=False, sandboxed=True, task_turn=None, summary={})
            key = store.add_api_key(ApiKeyRow("k1", "ana", "h1", True, 2.0, None))
            revoke = store.revoke_api_key("k0")
            second, _, _, _, first_version, added, revoked = await asyncio.gather(
                started, wait, entry, reply, version, key, revoke
            )
        assert len(ended) == 1  # the commit was written, and its client was cut off before hearing it
        # Each write found what the lost commit had stored, and returned it as if it had heard.
        assert second.number == 2 and first_version == 1
        assert added is True and revoked is not None and revoked.id == "k0"  # not "no such key", not "no active key"
        assert [t.number for t in await store.turns(session.id)] == [1, 2]
        assert count(url, "SELECT COUNT(*) FROM messages WHERE turn_id = %s AND role = 'assistant'", turn_id) == 1
        assert count(url, "SELECT COUNT(*) FROM blackboard WHERE turn_id = %s", turn_id) == 1
        assert [(e.type, e.seq) for e in await store.events(turn_id)] == [("agent_finished", event.seq)]
        assert event.seq is not None
        assert count(url, "SELECT COUNT(*) FROM agent_versions") == 1
        # Still write-once: another writer's entry for the same agent is refused.
        with pytest.raises(Exception, match="already has an entry for agent 'a'"):
            await store.write_entry(turn_id=turn_id, user_id="ana", agent="a", status="ok", output=[2], error=None)
    finally:
        await store.close()


async def test_a_server_that_stays_away_fails_the_calls_in_one_line_then_is_found_again(
    postgres: PostgresServer,
) -> None:
    url = postgres.new_database()
    store = PostgresStore(url, reconnect_within_s=0.5)
    try:
        session, _ = await started_session(store)
        postgres.stop()
        try:
            for call in (store.get_session(session.id), store.start_turn(session, "lost")):
                with pytest.raises(StoreUnavailable) as caught:
                    await call
                message = str(caught.value)
                assert message.startswith(f"the connection to the database {store.where} was lost"), message
                assert "did not answer again within 0.5 s" in message and "\n" not in message
        finally:
            postgres.start()
        # The same store, without reopening it: the next call finds the server again.
        assert [t.message for t in await store.turns(session.id)] == ["first"]
        assert (await store.start_turn(session, "back")).number == 2
    finally:
        await store.close()


async def test_a_turn_cut_by_a_server_that_stays_away_fails_saying_why_and_is_resumed_once_it_is_back(
    write: WriteFile, home: Path, postgres: PostgresServer
) -> None:
    url = postgres.new_database()
    store = PostgresStore(url, reconnect_within_s=0.5)
    app = Cantata(load_config(scripted_config(write, fake={"serves": ["mid", "slow", "fast"]})), home=home, store=store)
    pipeline = load_pipeline(write("diamond.yaml", DIAMOND))
    try:
        first = await app.run_turn(pipeline, "hello")
        release = asyncio.Event()
        hold(app, {"d": release})
        events: list[Event] = []
        turn = asyncio.create_task(app.run_turn(pipeline, "more", session_id=first.session, on_event=events.append))
        while not any(e.type == "agent_started" and e.agent == "d" for e in events):
            await asyncio.sleep(0.01)
        (turn_id,) = await store.running_turns(first.session)
        postgres.stop()
        try:
            release.set()  # d's output is ready while the server is away
            with pytest.raises(StoreUnavailable, match="did not answer again within 0.5 s"):
                await turn
        finally:
            postgres.start()
        # Left as it was: running, resumable. Resumed once the server is back, d alone runs again.
        assert await store.running_turns(first.session) == [turn_id]
        resumed = await app.resume_unfinished(lambda session: pipeline)
        assert [(r.turn_id, r.status) for r in resumed.results] == [(turn_id, "ok")]
        assert resumed.results[0].final is not None
        agents = [
            row[0] for row in rows(url, "SELECT agent FROM blackboard WHERE turn_id = %s ORDER BY agent", turn_id)
        ]
        assert agents == ["a", "b", "c", "d", "e"]  # each written once
        messages = rows(url, "SELECT role, agent FROM messages WHERE turn_id = %s ORDER BY id", turn_id)
        assert messages == [("user", None), ("assistant", "e"), ("assistant", "d")]
    finally:
        await app.close()


async def test_the_server_resumes_a_turn_an_outage_cut_once_the_database_is_back(
    write: WriteFile, home: Path, postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service_module, "OUTAGE_RETRY_S", 0.1)
    url = postgres.new_database()
    config = load_config(scripted_config(write, fake={"serves": ["mid", "slow", "fast"]}))
    runtime = Cantata(config, home=home, store=PostgresStore(url, reconnect_within_s=0.5))
    service = Service(runtime, extra_pipelines=[write("diamond.yaml", DIAMOND)])
    pipeline, ana = service.pipelines["diamond"], Principal("ana", admin=False)

    async def turn(message: str, session_id: str | None) -> TurnHandle:
        return await service.start_turn(ana, pipeline, message, session_id=session_id, history=[], reject_if_busy=False)

    try:
        first = await service.wait(await turn("hello", None))
        release = asyncio.Event()
        hold(runtime, {"d": release})
        handle = await turn("more", first.session)
        while (event := await handle.events.get()) is not None and (event.type, event.agent) != ("agent_started", "d"):
            pass
        turn_id = event.turn_id if event is not None else None
        postgres.stop()
        try:
            release.set()
            with pytest.raises(StoreUnavailable):
                await service.wait(handle)
            await asyncio.sleep(0)  # the task's done callbacks, which start the sweep
            assert service.resuming is not None and not service.resuming.done()  # waiting for the database
        finally:
            postgres.start()
        resumed = await asyncio.wait_for(service.resuming, timeout=60)
        assert [(r.turn_id, r.status) for r in resumed.results] == [(turn_id, "ok")]
        assert await runtime.store.running_turns() == []
    finally:
        await service.drain()
        await runtime.close()


async def test_a_forget_whose_commit_was_lost_says_its_files_are_left(postgres: PostgresServer) -> None:
    url = postgres.new_database()
    store = PostgresStore(url)
    try:
        await started_session(store)
        with commits_that_wait_for_a_standby(postgres) as ended:
            wait = store.commit(lambda db: db.execute("SET LOCAL synchronous_commit = on"))
            forget = store.forget_user("ana")
            outcome = await asyncio.gather(wait, forget, return_exceptions=True)
        assert len(ended) == 1
        assert isinstance(outcome[1], StoreError)
        assert "forget of 'ana' was committed" in str(outcome[1]) and "remove them by hand" in str(outcome[1])
        assert count(url, "SELECT COUNT(*) FROM sessions") == 0  # it was done, once
    finally:
        await store.close()


async def test_the_events_of_a_commit_unheard_before_an_outage_are_not_stored_twice(postgres: PostgresServer) -> None:
    url = postgres.new_database()
    store = PostgresStore(url, reconnect_within_s=0.5)
    try:
        session, turn_id = await started_session(store)
        event = Event("agent_finished", turn_id, session.id, 1.5, "a", {"n": 1}, user_id="ana")
        with commits_that_wait_for_a_standby(postgres, stop_the_server=True) as ended:
            wait = store.commit(lambda db: db.execute("SET LOCAL synchronous_commit = on"))
            store.record_event(event)
            entry = store.write_entry(turn_id=turn_id, user_id="ana", agent="a", status="ok", output=[1], error=None)
            outcome = await asyncio.gather(wait, entry, return_exceptions=True)
            assert len(ended) == 1
            assert all(isinstance(each, StoreUnavailable) for each in outcome), outcome
            postgres.start()
        # Committed after all, though nobody heard it: the event, kept for the next commit,
        # is found there, not stored again; the entry is there once (a resume restores it).
        assert [(e.type, e.seq) for e in await store.events(turn_id)] == [("agent_finished", event.seq)]
        assert event.seq is not None
        assert count(url, "SELECT COUNT(*) FROM blackboard WHERE turn_id = %s", turn_id) == 1
    finally:
        await store.close()
