"""Turns run by workers (`cantata serve --workers queue`, `cantata worker`) on PostgreSQL: a
turn queued by a server runs in a worker and streams from the server; a dead worker's turn
goes back to the queue; a stored turn no job names is queued; a worker that lost its
session's lease cannot write over its successor; workers refuse SQLite; a turn no worker
starts is failed at its deadline, one whose workers keep stopping after MAX_TAKEOVERS. The many-process
run with a SIGKILL is tests/test_workers_kill.py."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

from cantata import bundled
from cantata.config import load_config
from cantata.errors import StoreError
from cantata.loader import Pipeline, load_pipeline
from cantata.runtime import Cantata
from cantata.store import Store
from cantata.store.rows import TurnRow
from cantata.turn_queue import MAX_TAKEOVERS, QUEUE, STALLED_S, TurnQueue
from cantata.worker import TurnWorker
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.helpers.postgres import PostgresServer
from tests.helpers.server_app import chat_body, client, make_app, running
from tests.helpers.sse import parse
from tests.helpers.workers import pg_config
from tests.test_approvals import logged, write_guarded
from tests.test_cli import cantata
from tests.test_store_postgres import unreachable_url


@asynccontextmanager
async def worker(config: Path, home: Path, pipelines: dict[str, Pipeline] | None = None) -> AsyncIterator[TurnWorker]:
    """A worker in process, running queued turns (of the bundled `pipelines` by default) until the block ends."""
    queue = TurnQueue(load_config(config).database or "")
    runtime = Cantata(load_config(config), home=home, fence_writes=True)
    turns = TurnWorker(runtime, pipelines or bundled.served(), queue)
    await queue.open()
    working = asyncio.create_task(queue.work(turns.run, concurrency=4, name="test", grace_s=5))
    try:
        yield turns
    finally:
        working.cancel()
        await asyncio.gather(working, return_exceptions=True)
        await queue.close()
        await runtime.close()


async def test_a_turn_queued_by_the_server_runs_in_a_worker_and_streams_from_the_server(
    write: WriteFile, home: Path, postgres: PostgresServer
) -> None:
    config = pg_config(write, postgres.new_database())
    async with running(make_app(config, home, workers="queue")) as app, client(app) as http, worker(config, home):
        done = await http.post("/v1/chat/completions", json=chat_body("I skipped my run again."))
        assert done.status_code == 200, done.text
        reply = done.json()
        session, turn_id = done.headers["X-Cantata-Session"], int(done.headers["X-Cantata-Turn"])
        assert reply["choices"][0]["message"]["content"]
        streamed = await http.post(
            "/v1/chat/completions",
            json=chat_body("And the one after.", stream=True),
            headers={"X-Cantata-Session": session},
        )
        chunks = [event.json() for event in parse(streamed.text) if event.data and event.data != "[DONE]"]
        store: Store = app.state.service.store
        turns = await store.turns(session)
        histories = await store.entry_histories([t.id for t in turns])
    assert [t.status for t in turns] == ["ok", "ok"] and turns[0].id == turn_id
    # Every agent ran once, in the worker, and the server's stream carried its progress.
    for history in histories.values():
        assert sorted(e.agent for e in history) == sorted(bundled.load("example").order)
    progress = [c["cantata"]["event"] for c in chunks if c.get("cantata", {}).get("event")]
    assert progress[0] == "turn_started" and "agent_finished" in progress
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks).strip()


async def test_a_worker_that_lost_its_lease_cannot_write_over_its_successor(
    write: WriteFile, home: Path, postgres: PostgresServer
) -> None:
    config = load_config(pg_config(write, postgres.new_database()))
    first, second = Cantata(config, home=home, fence_writes=True), Cantata(config, home=home, fence_writes=True)
    try:
        pipeline = bundled.load("example")
        session, started = await first.store_turn(pipeline, "hello")
        assert await first.store.lease_session(session.id, first.leases.holder, ttl_s=30) is None
        first.store.fence_turn(started.id, session.id, first.leases.holder)
        # The second worker takes the session over (the first is taken for dead) and writes.
        taken = await second.store.lease_session(
            session.id, second.leases.holder, ttl_s=30, take_from=first.leases.holder
        )
        assert taken is None
        second.store.fence_turn(started.id, session.id, second.leases.holder)
        await second.store.write_entry(
            turn_id=started.id, user_id="local", agent="a", status="ok", output=1, error=None
        )
        # The first comes back: every write of its turn is refused, none lands.
        with pytest.raises(StoreError, match="lost its session's lease"):
            await first.store.write_entry(
                turn_id=started.id, user_id="local", agent="b", status="ok", output=2, error=None
            )
        with pytest.raises(StoreError, match="lost its session's lease"):
            await first.store.finish_turn(started.id, "ok", [("answer", "from the first")])
        history = await second.store.entry_history(started.id)
        turn = await second.store.get_turn(started.id)
    finally:
        await first.close()
        await second.close()
    assert [(e.agent, e.output) for e in history] == [("a", 1)]
    assert turn is not None and turn.status == "running" and turn.replies == []


async def test_a_dead_workers_turn_goes_back_to_the_queue_and_an_unqueued_turn_is_queued(
    write: WriteFile, home: Path, postgres: PostgresServer
) -> None:
    url = postgres.new_database()
    config = load_config(pg_config(write, url))
    runtime = Cantata(config, home=home)
    queue = TurnQueue(url)
    await queue.open()
    try:
        pipeline = bundled.load("example")
        session, started = await runtime.store_turn(pipeline, "hello")
        turns = TurnWorker(runtime, bundled.served(), queue)
        # A server stopped between storing the turn and queueing it: the next sweep queues it
        # (not the first one: the server may be queueing it just then).
        assert await turns.queue_orphans() == 0
        assert await queue.queued_turns() == set()
        assert await turns.queue_orphans() == 1
        assert await queue.queued_turns() == {started.id}
        assert await turns.queue_orphans() == 0
        # A worker claims it, then stops answering: its heartbeat grows old.
        dead = await queue.app.job_manager.register_worker()
        job = await queue.app.job_manager.fetch_job([QUEUE], dead)
        assert job is not None and job.task_kwargs["turn_id"] == started.id
        assert await queue.recover_stalled() == 0  # alive, as far as anyone can tell
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(
                "UPDATE procrastinate_workers SET last_heartbeat = now() - make_interval(secs => %s) WHERE id = %s",
                (STALLED_S + 1, dead),
            )
        assert await queue.recover_stalled() == 1
        (again,) = await queue.app.job_manager.list_jobs_async(id=job.id)
        assert again.status == "todo" and again.lock == f"session:{session.id}"
    finally:
        await queue.close()
        await runtime.close()


def test_a_worker_on_sqlite_says_so_in_one_line_and_exits_2(write: WriteFile) -> None:
    config = scripted_config(write, fast={})
    for command in (["worker"], ["serve", "--workers", "queue", "--port", "1"]):
        done = cantata(*command, "--config", str(config))
        assert done.returncode == 2, done.stderr
        assert (
            done.stderr.startswith("error: workers need the state on PostgreSQL") and len(done.stderr.splitlines()) == 1
        )


def test_a_worker_whose_database_cannot_be_reached_says_so_without_the_password(
    write: WriteFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, shown = unreachable_url()
    monkeypatch.setenv("CANTATA_DB", url)
    done = cantata("worker", "--config", str(scripted_config(write, fast={})))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: cannot reach the database {shown}") and len(done.stderr.splitlines()) == 1
    assert "s3cret" not in done.stderr and "Traceback" not in done.stderr


def chunks_of(text: str) -> list[dict[str, object]]:
    return [event.json() for event in parse(text) if event.data and event.data != "[DONE]"]


async def test_a_queued_turn_no_worker_starts_is_failed_at_its_deadline_and_its_stream_ends_saying_why(
    write: WriteFile, home: Path, postgres: PostgresServer
) -> None:
    """No worker runs: at the deadline the server withdraws the turn's job and stores the turn
    failed, the reason on its final event; the chat stream ends with it, a plain request is a
    503 in the one error shape. A worker that starts later runs the session's next turn, not
    the one given up."""
    url = postgres.new_database()
    config = pg_config(write, url)
    app = make_app(config, home, workers="queue")
    async with running(app), client(app) as http:
        queue: TurnQueue = app.state.service.queue
        queue.claim_s = 0.3
        streamed = await http.post("/v1/chat/completions", json=chat_body("Nobody is there.", stream=True))
        assert streamed.status_code == 200, streamed.text
        turn_id, session = int(streamed.headers["X-Cantata-Turn"]), streamed.headers["X-Cantata-Session"]
        *_, final = chunks_of(streamed.text)
        assert final["choices"][0]["finish_reason"] == "stop"  # type: ignore[index]
        said = f"no worker started turn {turn_id} within 0.3 s (is a `cantata worker` running?)"
        assert final["cantata"] == {"error": said, "session": session, "turn_id": turn_id}
        plain = await http.post("/v1/chat/completions", json=chat_body("Still nobody?"))
        assert plain.status_code == 503 and "no worker started turn" in plain.json()["error"]["message"]
        events = await http.get(f"/api/turns/{turn_id}/events")
        *_, last = parse(events.text)
        assert last.event == "turn_delivered" and last.json()["data"] == {"status": "failed", "reason": said}
        (job,) = await queue.app.job_manager.list_jobs_async(lock=f"session:{session}")
        assert job.status == "cancelled"
    async with running(make_app(config, home, workers="queue")) as again, client(again) as http, worker(config, home):
        done = await http.post(
            "/v1/chat/completions", json=chat_body("And now?"), headers={"X-Cantata-Session": session}
        )
        assert done.status_code == 200, done.text
        store: Store = again.state.service.store
        turns = await store.turns(session)
        histories = await store.entry_histories([t.id for t in turns])
    assert [t.status for t in turns] == ["failed", "ok"] and turns[0].id == turn_id
    assert histories.get(turn_id, []) == []  # never run


async def test_a_turn_whose_worker_stops_every_time_is_failed_after_the_last_takeover_not_queued_again(
    write: WriteFile, home: Path, postgres: PostgresServer
) -> None:
    """Each worker that claims the turn stops answering (its heartbeat ages) and the sweep puts
    it back, MAX_TAKEOVERS times; when the last one stops too, the worker that claims it next
    fails it instead of running it, under its session's lease (taken from the stopped holder),
    and the client's stream ends with why."""
    url = postgres.new_database()
    config = pg_config(write, url)
    app = make_app(config, home, workers="queue")
    async with running(app), client(app) as http:
        queue: TurnQueue = app.state.service.queue
        store: Store = app.state.service.store
        streaming = asyncio.create_task(http.post("/v1/chat/completions", json=chat_body("Again?", stream=True)))
        while not (turn_ids := await store.running_turns()) or not await queue.queued_turns():
            await asyncio.sleep(0.05)
        (turn_id,) = turn_ids
        turn = await store.get_turn(turn_id)
        assert turn is not None
        # The last stopped worker holds the session's lease, as a process gone from this host.
        gone = f"{socket.gethostname()}/{2**22 + 1}/0/dead"
        assert await store.lease_session(turn.session_id, gone, ttl_s=60) is None
        for stopped in range(MAX_TAKEOVERS + 1):
            dead = await queue.app.job_manager.register_worker()
            job = await queue.app.job_manager.fetch_job([QUEUE], dead)
            assert job is not None and job.attempts == stopped
            with psycopg.connect(url, autocommit=True) as db:
                db.execute(
                    "UPDATE procrastinate_workers SET last_heartbeat = now() - make_interval(secs => %s) WHERE id = %s",
                    (STALLED_S + 1, dead),
                )
            assert await queue.recover_stalled() == 1
        async with worker(config, home):
            streamed = await asyncio.wait_for(streaming, 30)
            async with asyncio.timeout(30):  # the job ends (a finished one is deleted): not back in the queue
                while await queue.app.job_manager.list_jobs_async(lock=f"session:{turn.session_id}"):
                    await asyncio.sleep(0.05)
        events = await store.events(turn_id)
        history = await store.entry_history(turn_id)
    said = (
        f"turn {turn_id} was not run again: the worker running it stopped {MAX_TAKEOVERS + 1} times"
        f" (it is taken over at most {MAX_TAKEOVERS} times)"
    )
    *_, final = chunks_of(streamed.text)
    assert final["cantata"]["error"] == said  # type: ignore[index]
    assert [(e.type, e.data) for e in events] == [("turn_delivered", {"status": "failed", "reason": said})]
    assert history == []


async def test_a_queued_turn_behind_its_sessions_running_turn_waits_its_place_past_the_deadline(
    write: WriteFile, home: Path, postgres: PostgresServer
) -> None:
    """The deadline is for a worker to start a turn; one queued behind a turn of its session
    that a worker runs is not late, however long that one takes."""
    config = pg_config(write, postgres.new_database())
    app = make_app(config, home, workers="queue", grace_s=0.1)
    async with running(app), client(app) as http:
        queue: TurnQueue = app.state.service.queue
        store: Store = app.state.service.store
        queue.claim_s = 0.2
        first = await app.state.service.runtime.store_turn(bundled.load("example"), "First.")
        session = first[0].id
        await queue.enqueue(first[1].id, session)
        busy = await queue.app.job_manager.register_worker()  # alive: its heartbeat is fresh
        assert await queue.app.job_manager.fetch_job([QUEUE], busy) is not None
        second = asyncio.create_task(
            http.post("/v1/chat/completions", json=chat_body("Second."), headers={"X-Cantata-Session": session})
        )
        await asyncio.sleep(5 * queue.claim_s)
        jobs = {job.task_kwargs["turn_id"]: job.status for job in await queue.app.job_manager.list_jobs_async()}
        running_turns = await store.running_turns(session)
        second.cancel()
    assert running_turns == [first[1].id, first[1].id + 1]
    assert jobs == {first[1].id: "doing", first[1].id + 1: "todo"}


async def test_an_approval_decided_on_a_server_resumes_its_turn_in_a_worker(
    write: WriteFile, home: Path, postgres: PostgresServer, calls_log: Path
) -> None:
    """The turn paused for a person in a worker; the decision reaches a server, which queues
    the turn again rather than running it itself; a worker finishes it, the call run once."""
    pipeline_file, scripted = write_guarded(write)
    url = postgres.new_database()
    config = write("pg.yaml", scripted.read_text() + f"database: {json.dumps(url)}\n")
    guarded = {"guarded": load_pipeline(pipeline_file)}
    async with (
        running(make_app(config, home, workers="queue", pipelines=[pipeline_file])) as app,
        client(app) as http,
        worker(config, home, guarded),
    ):
        service = app.state.service
        queued: list[int] = []
        enqueue = service.queue.enqueue

        async def spied(turn_id: int, session_id: str, **options: Any) -> int:
            queued.append(turn_id)
            return await enqueue(turn_id, session_id, **options)

        service.queue.enqueue = spied
        body = (await http.post("/v1/chat/completions", json=chat_body("send hi", model="guarded"))).json()
        turn_id = body["cantata"]["turn_id"]
        assert body["cantata"]["status"] == "waiting"
        (approval,) = body["cantata"]["approvals"]
        decided = await http.post(f"/api/approvals/{approval}", json={"decision": "approve"})
        assert decided.status_code == 200, decided.text
        assert not service.running  # the server runs nothing of it
        turn = await _until_finished(service.store, turn_id)
    assert turn.status == "ok" and turn.replies[-1][1] == "done"
    assert [c["tool"] for c in logged(calls_log)] == ["add", "send"]
    # Queued twice: by the request (run up to the pause) and by the decision.
    assert queued == [turn_id, turn_id]


async def _until_finished(store: Store, turn_id: int) -> TurnRow:
    for _ in range(400):
        turn = await store.get_turn(turn_id)
        if turn is not None and turn.status not in ("running", "waiting"):
            return turn
        await asyncio.sleep(0.05)
    raise AssertionError(f"turn {turn_id} did not finish")
