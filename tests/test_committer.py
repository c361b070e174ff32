"""The group committer without a database: jobs that record what they did on a fake
connection whose transactions keep or drop what a job wrote."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager

import pytest

from cantata.errors import StoreError
from cantata.events import Event
from cantata.store.committer import Committer


class FakeDb:
    """A connection as the committer sees one: jobs write to it inside transactions."""

    def __init__(self) -> None:
        self.staged: list[str] = []
        self.transactions: list[list[str]] = []  # what each committed transaction held
        self.events: list[str] = []  # the committed events, in sequence order
        self.refuse_events = False
        self.closed = False

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.staged = []
        try:
            yield
        except BaseException:
            self.staged = []  # rolled back
            raise
        self.transactions.append(self.staged)
        self.staged = []

    def store_events(self, rows: list[str]) -> int:
        if self.refuse_events:
            raise RuntimeError("the events table is locked")
        base = len(self.events)
        self.events.extend(rows)
        self.staged.extend(f"event {row}" for row in rows)
        return base


def committer_on(db: FakeDb, **options: float) -> Committer[FakeDb, str]:
    def close(conn: FakeDb) -> None:
        conn.closed = True

    return Committer(
        name="fake",
        open=lambda: db,
        close=close,
        transaction=FakeDb.transaction,
        store_events=FakeDb.store_events,
        **options,
    )


def job(name: str) -> Callable[[FakeDb], str]:
    def write(db: FakeDb) -> str:
        db.staged.append(name)
        return f"{name} done"

    return write


def failing(db: FakeDb) -> None:
    db.staged.append("doomed")
    raise ValueError("this write is wrong")


def event(n: int) -> Event:
    return Event("agent_started", n, "s", 0.0, "a")


@pytest.fixture
def db() -> FakeDb:
    return FakeDb()


@pytest.fixture
async def committer(db: FakeDb) -> AsyncIterator[Committer[FakeDb, str]]:
    opened = committer_on(db)
    yield opened
    await opened.close()


async def test_writes_of_one_tick_share_one_transaction_in_the_order_asked(
    db: FakeDb, committer: Committer[FakeDb, str]
) -> None:
    results = await asyncio.gather(*(committer.write(job(f"w{i}")) for i in range(5)))
    assert results == [f"w{i} done" for i in range(5)]
    assert db.transactions == [[f"w{i}" for i in range(5)]]


async def test_writes_queued_while_the_thread_is_busy_share_the_next_transaction(
    db: FakeDb, committer: Committer[FakeDb, str]
) -> None:
    release = threading.Event()

    def slow(conn: FakeDb) -> None:
        release.wait()
        conn.staged.append("slow")

    first = committer.write(slow)
    later = []
    for i in range(3):  # each in a tick of its own, while the first is on the thread
        await asyncio.sleep(0)
        later.append(committer.write(job(f"w{i}")))
    release.set()
    await asyncio.gather(first, *later)
    assert db.transactions == [["slow"], ["w0", "w1", "w2"]]


async def test_a_job_that_raises_fails_alone(db: FakeDb, committer: Committer[FakeDb, str]) -> None:
    before, bad, after = committer.write(job("a")), committer.write(failing), committer.write(job("b"))
    assert await before == "a done" and await after == "b done"
    with pytest.raises(StoreError, match="write to fake failed: this write is wrong") as raised:
        await bad
    assert isinstance(raised.value.__cause__, ValueError)
    # The shared transaction rolled back, then each write was retried alone.
    assert db.transactions == [["a"], ["b"]]


async def test_events_wait_for_the_next_write_and_share_its_commit(
    db: FakeDb, committer: Committer[FakeDb, str]
) -> None:
    committed: list[Event] = []
    committer.on_commit(committed.extend)
    first, second = event(1), event(2)
    committer.record(first, "e1")
    committer.record(second, "e2")
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert db.transactions == [] and first.seq is None  # no write yet: they wait
    await committer.write(job("finish"))
    assert db.transactions == [["finish", "event e1", "event e2"]]
    assert committed == [first, second] and [e.seq for e in committed] == [1, 2]


async def test_writes_not_needed_soon_wait_for_the_next_write(db: FakeDb, committer: Committer[FakeDb, str]) -> None:
    # A turn's entries and its finish: one commit.
    entries = [committer.write(job(f"entry {i}"), soon=False) for i in range(2)]
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert db.transactions == []
    await committer.write(job("finish"))
    await asyncio.gather(*entries)
    assert db.transactions == [["entry 0", "entry 1", "finish"]]


async def test_events_without_a_write_are_committed_by_the_flush_timer(db: FakeDb) -> None:
    committer = committer_on(db, flush_after_s=0.001)
    committed: list[Event] = []
    committer.on_commit(committed.extend)
    late = committer.write(job("entry"), soon=False)
    committer.record(event(1), "e1")
    assert await late == "entry done"  # no write came: the timer carried both
    assert db.transactions == [["entry", "event e1"]] and len(committed) == 1
    await committer.close()


async def test_events_that_cannot_be_stored_wait_for_a_later_commit(
    db: FakeDb, committer: Committer[FakeDb, str]
) -> None:
    committed: list[Event] = []
    committer.on_commit(committed.extend)
    db.refuse_events = True
    committer.record(event(1), "e1")
    with pytest.raises(StoreError, match="locked"):
        await committer.write(job("a"))
    assert committed == []
    db.refuse_events = False
    await committer.write(job("b"))
    assert [e.seq for e in committed] == [1] and db.events == ["e1"]


async def test_a_read_runs_after_the_writes_queued_before_it(db: FakeDb, committer: Committer[FakeDb, str]) -> None:
    queued = committer.write(job("entry"), soon=False)
    seen = await committer.read(lambda conn: [name for t in conn.transactions for name in t])
    assert seen == ["entry"]
    assert await queued == "entry done"
    assert await committer.read(lambda conn: threading.current_thread().name) == "cantata-store"


async def test_close_commits_what_is_pending_then_refuses_writes(db: FakeDb) -> None:
    committer = committer_on(db)
    committed: list[Event] = []
    committer.on_commit(committed.extend)
    queued = committer.write(job("entry"), soon=False)
    committer.record(event(1), "e1")
    await committer.close()
    assert await queued == "entry done" and len(committed) == 1
    assert db.transactions == [["entry", "event e1"]] and db.closed
    with pytest.raises(StoreError, match="closed"):
        await committer.write(job("late"))
    committer.record(event(2), "e2")  # ignored once closed
    await committer.close()  # twice is harmless
    assert db.events == ["e1"]


async def test_a_database_that_cannot_be_opened_fails_every_job_with_its_error() -> None:
    def cannot_open() -> FakeDb:
        raise OSError("no such folder")

    committer: Committer[FakeDb, str] = Committer(
        name="fake",
        open=cannot_open,
        close=lambda conn: None,
        transaction=FakeDb.transaction,
        store_events=FakeDb.store_events,
    )
    with pytest.raises(StoreError, match="cannot open the database fake: no such folder"):
        await committer.read(lambda conn: None)
    with pytest.raises(StoreError, match="cannot open the database fake"):
        await committer.write(job("a"))
    await committer.close()
