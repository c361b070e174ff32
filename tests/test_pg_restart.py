"""PostgreSQL restarted (`pg_ctl restart -m fast`) twice while 100 turns run on it: every
turn completes, and nothing is stored twice. Marked `kill` (the slow tier of faults);
the reconnect itself is tested fast in tests/test_store_reconnect.py."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import psycopg
import pytest

from cantata.config import load_config
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from cantata.store.postgres_store import PostgresStore
from cantata.turn import TurnResult
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.helpers.postgres import PostgresServer
from tests.test_scheduler import DIAMOND

pytestmark = pytest.mark.kill

SESSIONS = 10
TURNS_PER_SESSION = 10
RESTART_AFTER = (25, 60)  # turns completed when PostgreSQL is restarted
AGENTS = 5  # DIAMOND's


def duplicates(url: str) -> list[str]:
    """What is stored more than once, or is missing: each problem in a line."""
    queries = {
        "turns not ok": "SELECT id, status FROM turns WHERE status <> 'ok'",
        "turns without exactly one user message": "SELECT turn_id, COUNT(*) FROM messages WHERE role = 'user'"
        " GROUP BY turn_id HAVING COUNT(*) <> 1",
        "a reply stored twice": "SELECT turn_id, agent, COUNT(*) FROM messages WHERE role = 'assistant'"
        " GROUP BY turn_id, agent HAVING COUNT(*) > 1",
        "turns without every entry": f"SELECT turn_id, COUNT(*) FROM blackboard GROUP BY turn_id HAVING COUNT(*) <> {AGENTS}",
        "an event stored twice": "SELECT turn_id, type, agent, COUNT(*) FROM events"
        " GROUP BY turn_id, type, agent, at_s, wall HAVING COUNT(*) > 1",
        "turns not started and delivered once": "SELECT t.id, COUNT(e.id) FROM turns t LEFT JOIN events e"
        " ON e.turn_id = t.id AND e.type IN ('turn_started', 'turn_delivered') GROUP BY t.id HAVING COUNT(e.id) <> 2",
    }
    with psycopg.connect(url) as db:
        return [f"{what}: {row}" for what, sql in queries.items() for row in db.execute(sql).fetchall()]


async def test_a_run_of_100_turns_outlives_two_postgresql_restarts(
    write: WriteFile, home: Path, postgres: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="cantata.store")
    url = postgres.new_database()
    config = load_config(scripted_config(write, fake={"serves": ["mid", "slow", "fast"], "latency_s": 0.02}))
    app = Cantata(config, home=home, store=PostgresStore(url))
    pipeline = load_pipeline(write("diamond.yaml", DIAMOND))
    done: list[TurnResult] = []
    restarts: list[int] = []  # turns done when each restart ended
    restarted = asyncio.Event()

    async def session(n: int) -> None:
        session_id = None
        for turn in range(TURNS_PER_SESSION):
            result = await app.run_turn(pipeline, f"session {n}, turn {turn}", session_id=session_id)
            session_id = result.session
            done.append(result)

    async def restart_mid_run() -> None:
        for after in RESTART_AFTER:
            while len(done) < after:
                await asyncio.sleep(0.01)
            await asyncio.to_thread(postgres.restart)  # the turns go on meanwhile, waiting on the store
            restarts.append(len(done))
        restarted.set()

    try:
        restarter = asyncio.create_task(restart_mid_run())
        await asyncio.gather(*(session(n) for n in range(SESSIONS)))
        await asyncio.wait_for(restarted.wait(), timeout=120)
        await restarter
    finally:
        await app.close()
    total = SESSIONS * TURNS_PER_SESSION
    print(f"pg restart test: {total} turns, PostgreSQL restarted after {RESTART_AFTER} (done by then: {restarts})")
    assert [r.status for r in done] == ["ok"] * total
    assert all(r.final is not None and r.early is not None for r in done)
    assert all(n < total for n in restarts)  # each restart came while turns were still to run
    # The store noticed each restart and connected again (at least once each).
    assert sum("connected to the database" in r.getMessage() for r in caplog.records) >= len(RESTART_AFTER)
    with psycopg.connect(url) as db:
        assert db.execute("SELECT COUNT(*) FROM turns").fetchone() == (total,)
    assert duplicates(url) == []
