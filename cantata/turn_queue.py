"""Turns as jobs on PostgreSQL, for `cantata serve --workers queue` and `cantata worker`.

The queue is procrastinate's (README, "Work distribution": why it and not pgqueuer or
DBOS): claims with `FOR UPDATE SKIP LOCKED`, a LISTEN/NOTIFY wake-up, a heartbeat per worker.
A job names a stored turn, nothing else: the user's message is in the store before the job
exists, and a job run twice finds its turn finished and does nothing. Jobs carry their
session as procrastinate's `lock`, so a session's turns run one at a time, in order,
whichever worker claims them.

What Cantata adds: the schema installed at first open (procrastinate's own tables, beside
Cantata's), a dead worker's jobs handed back to the queue (`recover_stalled`, procrastinate's
stalled-job query on its heartbeats, called by every worker's sweep, cantata/worker.py), and
the turns no job names (`orphans`: a server stopped between storing a turn and queueing it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable

import psycopg
from procrastinate import App, PsycopgConnector

from cantata.config import InstancesConfig, database_url
from cantata.errors import ConfigError, StoreUnavailable, get_logger
from cantata.store.postgres_db import MIGRATION_LOCK, connect, explain, redact

TASK = "cantata.turn"
QUEUE = "turns"
# A worker's heartbeat every HEARTBEAT_S; a worker silent for STALLED_S is dead and its turns
# go back to the queue at the next sweep (every SWEEP_S): taken over within STALLED_S +
# HEARTBEAT_S + SWEEP_S = 25 s of a crash, inside the 30 s promised.
HEARTBEAT_S = 5.0
STALLED_S = 15.0
SWEEP_S = 5.0
# When no notification comes (a missed one), a worker still asks for jobs this often.
POLL_S = 1.0

log = get_logger("cantata.turn_queue")

TurnJob = Callable[[int, str | None], Awaitable[None]]  # (turn id, traceparent)


def queue_url(config: InstancesConfig) -> str:
    """The PostgreSQL URL the queue lives in (the store's), or ConfigError: workers share
    turns through PostgreSQL."""
    url = database_url(config)
    if url is None:
        raise ConfigError(
            "workers need the state on PostgreSQL (CANTATA_DB or the config's database: a postgresql:// URL);"
            " on SQLite, cantata serve runs its own turns"
        )
    return url


class TurnQueue:
    """The queue of one process: `open` it, then `enqueue` (a server) or `work` (a worker)."""

    def __init__(self, url: str, *, pool_size: int = 4) -> None:
        self.url = url
        self.where = redact(url)
        self.app = App(connector=PsycopgConnector(conninfo=url, min_size=1, max_size=pool_size))

    async def open(self) -> None:
        """Connect, and install the queue's tables if this database has none yet."""
        try:
            await asyncio.to_thread(_install_schema, self.url, self.app.schema_manager.get_schema())
            await self.app.open_async()
        except (psycopg.Error, OSError) as exc:
            raise StoreUnavailable(f"cannot open the turn queue on {self.where}: {explain(exc)}") from None

    async def close(self) -> None:
        await self.app.close_async()

    async def enqueue(self, turn_id: int, session_id: str, *, traceparent: str | None = None) -> int:
        """Queue a stored turn behind the queued turns of its session; the job's id.
        `traceparent`: the trace its worker's span goes under (the request's)."""
        deferrer = self.app.configure_task(TASK, queue=QUEUE, lock=f"session:{session_id}")
        return await deferrer.defer_async(turn_id=turn_id, traceparent=traceparent)

    async def queued_turns(self) -> set[int]:
        """The turns a job waiting or running names."""
        named: set[int] = set()
        for status in ("todo", "doing"):
            for job in await self.app.job_manager.list_jobs_async(task=TASK, status=status):
                turn = job.task_kwargs.get("turn_id")
                if isinstance(turn, int):
                    named.add(turn)
        return named

    async def orphans(self, running: Iterable[int]) -> list[int]:
        """Of the `running` turns, those no job names."""
        named = await self.queued_turns()
        return [turn for turn in running if turn not in named]

    async def recover_stalled(self) -> int:
        """Put the jobs of workers silent for STALLED_S back in the queue; how many."""
        stalled = await self.app.job_manager.get_stalled_jobs(
            queue=QUEUE, task_name=TASK, seconds_since_heartbeat=STALLED_S
        )
        count = 0
        for job in stalled:
            await self.app.job_manager.retry_job(job)
            count += 1
        if count:
            log.warning("%d turn(s) of a worker that stopped answering went back to the queue", count)
        return count

    async def work(self, run: TurnJob, *, concurrency: int, name: str, grace_s: float) -> None:
        """Run queued turns until SIGTERM or SIGINT (then the running ones have `grace_s` to
        finish; the others stay in the store, running, for the next worker): `run(turn_id,
        traceparent)` for each claimed job."""

        async def turn(turn_id: int, traceparent: str | None = None) -> None:
            await run(turn_id, traceparent)

        self.app.task(name=TASK, queue=QUEUE)(turn)
        await self.app.run_worker_async(
            queues=[QUEUE],
            name=name,
            concurrency=concurrency,
            fetch_job_polling_interval=POLL_S,
            update_heartbeat_interval=HEARTBEAT_S,
            stalled_worker_timeout=STALLED_S,
            shutdown_graceful_timeout=grace_s,
            delete_jobs="successful",
        )


def _install_schema(url: str, schema: str) -> None:
    """procrastinate's schema, once per database: under the lock of Cantata's migrations, so
    processes starting together install it once between them."""
    db = connect(url).raw  # bounded in time; an unreachable database is StoreUnavailable
    with db, db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        found = db.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
        if found is None or found[0] is None:
            db.execute(schema.encode())
