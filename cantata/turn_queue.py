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

And two ends for a turn the workers cannot run, so that no turn loops or waits for ever: a
turn taken over MAX_TAKEOVERS times whose worker stopped again is failed by the worker that
claims it next, instead of being run (`run(..., takeovers)`, `fail_turn`); and the server
that queued a turn gives it up when no worker has started it after CLAIM_S (`watch`). Either
way the turn is stored failed, with the reason on its final event (`turn_delivered`, status
failed), which ends its streams.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable

import psycopg
from procrastinate import App, JobContext, PsycopgConnector
from procrastinate.exceptions import ConnectorException

from cantata.config import InstancesConfig, database_url
from cantata.errors import CantataError, ConfigError, SessionBusy, StoreUnavailable, get_logger
from cantata.events import Event
from cantata.leases import LeaseKeeper
from cantata.store import Store
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
# How many times a turn whose worker stopped is run again elsewhere. A turn that stops every
# worker running it (a function that crashes the interpreter, a reply that exhausts memory)
# would otherwise take the workers down one after another, for ever. Workers stop rarely
# (a kill, a lost host), so a turn whose worker stopped this often in a row is the cause, and
# its client hears so within (MAX_TAKEOVERS + 1) x 25 s.
MAX_TAKEOVERS = 3
# How long a queued turn may wait for a worker to start it (while nothing of its session runs)
# before the server that queued it gives it up: an agent's attempt may take as long by default
# (spec timeout_s), and a client left waiting longer for a turn not yet begun is better told.
CLAIM_S = 120.0

log = get_logger("cantata.turn_queue")

TurnJob = Callable[[int, str | None, int], Awaitable[None]]  # (turn id, traceparent, takeovers so far)


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

    def __init__(self, url: str, *, pool_size: int = 4, claim_s: float = CLAIM_S) -> None:
        self.url = url
        self.where = redact(url)
        self.app = App(connector=PsycopgConnector(conninfo=url, min_size=1, max_size=pool_size))
        self.claim_s = claim_s

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

    async def watch(self, job_id: int, turn_id: int, store: Store, leases: LeaseKeeper) -> None:
        """A server's watch over a turn it queued, until cancelled or the job ends: every
        `claim_s`, if the job still waits and no turn of its session runs (a turn behind a
        running one waits its place, not for a worker), the turn is given up: its job
        withdrawn and the turn failed, under its session's lease, so that no worker starts
        it meanwhile."""
        reason = f"no worker started turn {turn_id} within {self.claim_s:g} s (is a `cantata worker` running?)"
        while True:
            await asyncio.sleep(self.claim_s)
            try:
                turn = await store.get_turn(turn_id)
                jobs = self.app.job_manager
                job = next(iter(await jobs.list_jobs_async(id=job_id)), None)
                if turn is None or turn.status != "running" or job is None or job.status not in ("todo", "doing"):
                    return  # finished, or its job ended: its events end the turn
                if job.status == "doing" or list(await jobs.list_jobs_async(lock=job.lock or "", status="doing")):
                    continue
                async with leases.hold(turn.session_id, wait=False):
                    if await jobs.cancel_job_by_id_async(job_id):  # only a job still waiting
                        await fail_turn(store, leases.holder, turn_id, reason)
                        log.warning("%s: failed it", reason)
                        return
            except SessionBusy:
                continue  # a worker's, or a stopped worker's lease not yet expired: the next time
            except (CantataError, ConnectorException, psycopg.Error, OSError) as exc:  # the database away for a moment
                log.warning("could not check whether turn %d was started: %s", turn_id, exc)

    async def work(self, run: TurnJob, *, concurrency: int, name: str, grace_s: float) -> None:
        """Run queued turns until SIGTERM or SIGINT (then the running ones have `grace_s` to
        finish; the others stay in the store, running, for the next worker): `run(turn_id,
        traceparent, takeovers)` for each claimed job, `takeovers` the times it went back to
        the queue because its worker stopped."""

        async def turn(context: JobContext, turn_id: int, traceparent: str | None = None) -> None:
            await run(turn_id, traceparent, context.job.attempts)

        self.app.task(name=TASK, queue=QUEUE, pass_context=True)(turn)
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


async def fail_turn(store: Store, holder: str, turn_id: int, reason: str) -> None:
    """Store the unfinished turn failed, `reason` on its final event (`turn_delivered`,
    status failed), which ends its streams; its session's lease held by `holder`, whose
    writes alone are committed. Nothing if the turn is finished."""
    turn = await store.get_turn(turn_id)
    if turn is None or turn.status != "running":
        return
    data = {"status": "failed", "reason": reason}
    at_s = max(0.0, time.time() - turn.started_at)
    store.fence_turn(turn_id, turn.session_id, holder)
    try:
        store.record_event(Event("turn_delivered", turn_id, turn.session_id, at_s, data=data, user_id=turn.user_id))
        await store.finish_turn(turn_id, "failed", [])
    finally:
        store.fence_turn(turn_id, turn.session_id, None)


def _install_schema(url: str, schema: str) -> None:
    """procrastinate's schema, once per database: under the lock of Cantata's migrations, so
    processes starting together install it once between them."""
    db = connect(url).raw  # bounded in time; an unreachable database is StoreUnavailable
    with db, db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        found = db.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
        if found is None or found[0] is None:
            db.execute(schema.encode())
