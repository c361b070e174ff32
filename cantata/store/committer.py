"""Group commit on one worker thread: the writes of a store, batched, with no SQL here.

A store hands the committer jobs, functions of its connection (datasette's
`execute_write_fn`), and the committer runs them on the one thread that owns that
connection, so the event loop never waits on the disk. Writes are grouped: every write
asked for in one loop tick, and every write asked for while the thread is busy, shares
one transaction and one commit; each caller goes on once its own write is durable. Many
turns finishing agents at once then cost one commit, not one each.

Events, and writes that are not needed `soon` (blackboard entries), wait for the next
write to carry them (a turn's start or finish, a read), or for FLUSH_AFTER_S when none
comes: a node costs at most one commit, and a quick turn's entries share one with its
finish. Nobody waits for those commits but the turn at its end: the scheduler starts an
entry's readers on the queued entry, and a read runs after every write queued before it.

What the committer asks of a database is small (open, close, a transaction, storing
buffered events), so a store on any driver with a blocking connection reuses it. A
database whose connection can be lost (a server restarted) also says how to notice it and
find what a lost commit stored (`reconnect.py`): the jobs then wait for a new connection
and run again on it.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

from cantata.errors import StoreError, StoreUnavailable
from cantata.events import Event
from cantata.store.protocols import Committed
from cantata.store.reconnect import Reconnect, log, reopen
from cantata.threads import answering, settle

C = TypeVar("C")  # the connection jobs run on
R = TypeVar("R")  # an event as the database stores it (its encoded row)
T = TypeVar("T")

Outcome = tuple[bool, Any]  # (True, a job's result) or (False, its error)
# A write: its job, and what runs instead when its commit's outcome was lost (see `write`).
Write = tuple[Callable[[C], Any], Callable[[C], Any]]

FLUSH_AFTER_S = 0.05  # how long a buffered event or entry may wait for a write to carry it


class Committer(Generic[C, R]):
    """Runs a store's jobs in order on its thread, writes batched into shared commits.

    `open` makes the connection on the thread (a StoreError it raises fails every job);
    `transaction(conn)` is a context manager that commits, or rolls back on an error;
    `store_events(conn, rows)` inserts buffered events inside a transaction and returns
    the sequence number before theirs (they are numbered after it, in order); `close`
    closes the connection. `name` says which database in error messages, `explain` how
    the driver's errors read in them (with what to do about a read-only or full disk).
    `reconnect`, for a database whose connection can be lost, says how it is found again.
    """

    def __init__(
        self,
        *,
        name: str,
        open: Callable[[], C],
        close: Callable[[C], None],
        transaction: Callable[[C], AbstractContextManager[object]],
        store_events: Callable[[C, list[R]], int],
        flush_after_s: float = FLUSH_AFTER_S,
        explain: Callable[[BaseException], str] = str,
        reconnect: Reconnect[C, R] | None = None,
    ) -> None:
        self._name = name
        self._explain = explain
        self._open_connection = open
        self._reconnect = reconnect
        self._lost_at: float | None = None  # when the connection was lost (time.monotonic()), until a new one
        # Set on the thread when a batch failed after its COMMIT's answer was lost, read on the
        # loop once that batch is answered (the next batch waits for it): its events, kept for
        # the next commit, may be stored already. So many of the first pending events, then,
        # are committed first and alone, as a replay that finds them rather than storing them twice.
        self._events_unheard = False
        self._replay_first = 0
        self._transaction = transaction
        self._store_events = store_events
        self._close_connection = close
        self._flush_after_s = flush_after_s
        self._connection_or_error: C | StoreError = StoreError(f"the database {name} is not open yet")
        self._worker = _Worker()
        # The thread runs jobs in order, so the connection is open before any other job.
        self._worker.run(self._open)
        self._batch: list[tuple[Write[C], asyncio.Future[Any]]] = []
        self._pending: list[tuple[Event, R]] = []
        self._flush_scheduled = False  # a flush is coming in this loop tick
        self._writing = False  # a batch is on the thread: what comes meanwhile waits for it
        self._flush_timer: asyncio.TimerHandle | None = None
        self._callbacks: list[Committed] = []
        self.closed = False

    # -- on the worker thread -------------------------------------------------------------

    def _open(self) -> None:
        try:
            self._connection_or_error = self._open_connection()
        except StoreError as exc:
            self._connection_or_error = exc
        except Exception as exc:
            self._connection_or_error = self._store_error(f"cannot open the database {self._name}", exc)

    def _connection(self) -> C:
        """The open connection (on the worker thread), a new one if it was lost (waiting for
        it, see `reconnect.py`), or the StoreError that explains why not."""
        if self._lost_at is not None:
            self._connection_or_error = reopen(
                self._open_connection,
                name=self._name,
                lost_at=self._lost_at,
                within_s=self._reconnect.within_s if self._reconnect else 0.0,
                explain=self._explain,
            )
            self._lost_at = None
        if isinstance(self._connection_or_error, StoreError):
            raise self._connection_or_error
        return self._connection_or_error

    def _on_connection(self, run: Callable[[C], T]) -> T:
        """`run(connection)`; if the connection was lost meanwhile, again on a new one."""
        while True:
            db = self._connection()
            try:
                return run(db)
            except Exception:
                if self._reconnect is None or not self._reconnect.lost(db):
                    raise
            log.warning("lost the connection to the database %s; connecting again", self._name)
            self._lost_at = time.monotonic()
            self._connection_or_error = StoreUnavailable(f"the connection to the database {self._name} was lost")
            try:
                self._close_connection(db)
            except Exception:
                pass  # it is gone already: closing it only frees what the driver kept of it

    def _transact(self, body: Callable[[C, bool], T], unheard: _Unheard) -> T:
        """`body(connection, replay)` in one transaction, run again on a new connection if
        the connection was lost. `replay` is True once a loss came with a COMMIT of these
        writes (`unheard`), whose outcome is then unknown: body must find what it wrote
        rather than write it twice."""

        def attempt(db: C) -> T:
            committing = False
            try:
                with self._transaction(db):
                    result = body(db, unheard.commit)
                    committing = True
            except BaseException:
                unheard.commit = unheard.commit or committing
                raise
            return result

        return self._on_connection(attempt)

    def _store_or_find_events(self, db: C, events: list[R], replay: bool) -> int:
        if replay and self._reconnect is not None:
            found = self._reconnect.stored_events(db, events)
            if found is not None:
                return found
        return self._store_events(db, events)

    def _run_writes(self, writes: list[Write[C]], events: list[R], db: C, replay: bool) -> tuple[list[Any], int | None]:
        """The writes' results and, with events, the sequence number before theirs."""
        results = [(again if replay else job)(db) for job, again in writes]
        return results, self._store_or_find_events(db, events, replay) if events else None

    def _commit_batch(self, writes: list[Write[C]], events: list[R], replay: bool) -> tuple[list[Outcome], int | None]:
        """Run the writes in one transaction with the buffered events; on a failure, one
        transaction each, so that one bad write fails alone. Returns each write's outcome
        and the sequence number before the events' (None if they could not be committed).
        A database that stays away fails them all at once (StoreUnavailable); if it took
        the answer of their COMMIT with it, `_events_unheard` says so (see `_committed`).
        With `replay`, the writes and events may be stored already (a commit unheard)."""
        unheard = _Unheard(replay)  # shared by the one-by-one retries
        try:
            return self._commit_writes(writes, events, unheard)
        except StoreUnavailable:
            self._events_unheard = unheard.commit and bool(events)
            raise

    def _commit_writes(
        self, writes: list[Write[C]], events: list[R], unheard: _Unheard
    ) -> tuple[list[Outcome], int | None]:
        try:
            results, base = self._transact(partial(self._run_writes, writes, events), unheard)
            return [(True, result) for result in results], 0 if base is None else base
        except StoreUnavailable:
            raise
        except Exception:
            pass  # one write failed and rolled the others back: retry them one by one below
        outcomes: list[Outcome] = []
        left, stored = events, None if events else 0  # the events go with the first write that commits
        for write in writes:
            try:
                (result,), base = self._transact(partial(self._run_writes, [write], left), unheard)
            except StoreUnavailable:
                raise
            except Exception as exc:
                outcomes.append((False, exc))
                continue
            outcomes.append((True, result))
            if left:
                left, stored = [], base
        if left:
            try:
                stored = self._transact(partial(self._run_writes, [], left), unheard)[1]
            except StoreUnavailable:
                raise
            except Exception:
                stored = None
        return outcomes, stored

    # -- on the event loop ----------------------------------------------------------------

    async def read(self, job: Callable[[C], T]) -> T:
        """`job(connection)` on the thread, after every write queued before it: a read sees
        every write asked for before it (callers rely on it, see `Store.write_entry`)."""
        if self._batch:
            await self.write(_nothing)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._worker.call(partial(self._on_connection, job), loop, partial(settle, future))
        return await future

    def write(
        self, job: Callable[[C], Any], *, soon: bool = True, replay: Callable[[C], Any] | None = None
    ) -> asyncio.Future[Any]:
        """Queue `job` now, behind every write queued before it (the thread commits them in
        this order); the future settles with its result once it is committed. A write not
        needed `soon` waits, like an event, for the next write to carry it, or FLUSH_AFTER_S.

        `replay` runs instead of `job` when the connection was lost with the COMMIT of its
        transaction (`reconnect.py`): it returns job's result, writing nothing if that
        commit took place after all. Without it, `job` must be safe to run again itself."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self.closed:
            future.set_exception(StoreError(f"the database {self._name} is closed"))
            return future
        self._batch.append(((job, replay or job), future))
        if soon:
            self._schedule_flush()
        elif not self._flush_scheduled and not self._writing:
            self._arm_flush_timer()
        return future

    def record(self, event: Event, row: R) -> None:
        """Buffer an event (as `row`) for the next commit; its `seq` is set once committed."""
        if self.closed:
            return
        self._pending.append((event, row))
        if not self._flush_scheduled and not self._writing:
            self._arm_flush_timer()

    def on_commit(self, callback: Committed) -> None:
        """Call `callback(events)` on the event loop once recorded events are committed."""
        self._callbacks.append(callback)

    async def flush(self) -> None:
        """Wait until everything queued or buffered so far is committed."""
        if self._pending or self._batch or self._writing:
            await self.write(_nothing)

    def _schedule_flush(self) -> None:
        if not self._flush_scheduled and not self._writing:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._writing or not (self._batch or self._pending):
            return
        replay = self._replay_first > 0
        if replay:  # the events of a commit unheard, alone: the writes go with the next flush
            batch, pending = [], self._pending[: self._replay_first]
            self._pending = self._pending[self._replay_first :]
        else:
            batch, self._batch = self._batch, []
            pending, self._pending = self._pending, []
        self._writing = True
        writes, rows = [w for w, _ in batch], [row for _, row in pending]
        self._worker.call(
            lambda: self._commit_batch(writes, rows, replay),
            asyncio.get_running_loop(),
            lambda done, error: self._committed(batch, pending, error or done),
        )

    def _committed(
        self,
        batch: list[tuple[Write[C], asyncio.Future[Any]]],
        pending: list[tuple[Event, R]],
        done: tuple[list[Outcome], int | None] | BaseException,
    ) -> None:
        self._writing = False
        if isinstance(done, BaseException):
            outcomes: list[Outcome] = [(False, done)] * len(batch)
            base: int | None = None
        else:
            outcomes, base = done
        for (_, future), (ok, value) in zip(batch, outcomes, strict=True):
            if ok:
                settle(future, result=value)
            else:
                settle(future, error=self._store_error(f"write to {self._name} failed", value))
        if base is None:
            # Not committed: keep them, in order, for the next write (or close).
            self._pending[:0] = pending
            if self._events_unheard:  # or perhaps committed: they go first, and alone
                self._replay_first, self._events_unheard = len(pending), False
        elif pending:
            self._replay_first = 0
            events = [event for event, _ in pending]
            for offset, event in enumerate(events, start=1):
                event.seq = base + offset
            for callback in self._callbacks:
                callback(events)
        if self._batch:
            self._schedule_flush()
        elif self._pending and base is not None:
            self._arm_flush_timer()

    def _store_error(self, what: str, exc: BaseException) -> StoreError:
        if isinstance(exc, StoreError):
            return exc
        error = StoreError(f"{what}: {self._explain(exc)}")
        error.__cause__ = exc
        return error

    def _arm_flush_timer(self) -> None:
        if self._flush_timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return  # no loop: `close` commits what is left
            self._flush_timer = loop.call_later(self._flush_after_s, self._flush_timer_fired)

    def _flush_timer_fired(self) -> None:
        self._flush_timer = None
        self._schedule_flush()

    async def close(self) -> None:
        """Commit what is queued or buffered, then close the connection and end the thread."""
        if self.closed:
            return
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        try:
            await self.flush()
        except StoreError:
            pass  # nothing more can be done for them: the database refuses writes
        self.closed = True
        loop = asyncio.get_running_loop()
        closed: asyncio.Future[None] = loop.create_future()
        self._worker.call(self._close, loop, partial(settle, closed))
        await closed
        self._worker.stop()

    def _close(self) -> None:
        connection = self._connection_or_error
        self._connection_or_error = StoreError(f"the database {self._name} is closed")
        if not isinstance(connection, StoreError):
            self._close_connection(connection)


@dataclass
class _Unheard:
    """Whether a COMMIT of a batch lost its answer with its connection: the batch's writes
    then run as replays, whether together or one by one."""

    commit: bool = False


class _Worker:
    """The one thread of a store: runs jobs in order. Leaner than an executor: a result
    comes back to the loop with one call_soon_threadsafe, which matters on every node's commit."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        # A daemon: a store nobody closed must not keep the interpreter from exiting.
        threading.Thread(target=self._serve, name="cantata-store", daemon=True).start()

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            job()

    def run(self, job: Callable[[], object]) -> None:
        """Run `job` in turn; its result is dropped and it must not raise."""
        self._jobs.put(lambda: None if job() is None else None)

    def call(
        self, fn: Callable[[], T], loop: asyncio.AbstractEventLoop, done: Callable[[Any, BaseException | None], None]
    ) -> None:
        """Run `fn` in turn, then `done(result, error)` on `loop`."""
        self._jobs.put(answering(fn, loop, done))

    def stop(self) -> None:
        self._jobs.put(None)


def _nothing(db: object) -> None:
    """A write that writes nothing: awaiting it waits for every write queued before it."""
