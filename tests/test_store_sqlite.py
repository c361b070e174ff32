"""What only the SQLite store does: its migrations, its file, its worker thread, and how many
statements its reads take."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from cantata.errors import StoreError
from cantata.store import SqliteStore, TurnRef, open_store
from cantata.store.migrations import MIGRATIONS, execute_script, migrate, name_of
from tests.helpers.stores import statements_during


async def test_migrations_apply_once_in_order(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "cantata.db")
    assert await store.applied_migrations() == [name_of(m) for m in MIGRATIONS]
    assert await store.migrate() == []  # nothing left to apply
    await store.close()
    reopened = SqliteStore(tmp_path / "cantata.db")
    assert await reopened.migrate() == []
    await reopened.close()
    tables = {r[0] for r in sqlite3.connect(tmp_path / "cantata.db").execute("SELECT name FROM sqlite_master")}
    assert {"users", "sessions", "turns", "messages", "blackboard", "events"} <= tables


def test_migration_names_are_ordered_and_unique() -> None:
    names = [name_of(m) for m in MIGRATIONS]
    assert names == sorted(names) and len(set(names)) == len(names)


async def test_turn_counter_migration_continues_numbering_of_an_older_database(tmp_path: Path) -> None:
    path = tmp_path / "cantata.db"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    for fn in MIGRATIONS[:2]:
        fn(db)
        db.execute("INSERT INTO migrations VALUES (?, 0)", (name_of(fn),))
    db.execute("INSERT INTO users VALUES ('ana', 0)")
    db.execute("INSERT INTO sessions (id, user_id, pipeline, created_at) VALUES ('s', 'ana', 'p', 0)")
    for number in (1, 2, 3):
        db.execute("INSERT INTO turns (session_id, number, status, started_at) VALUES ('s', ?, 'ok', 0)", (number,))
    db.close()
    store = SqliteStore(path)
    session = await store.get_session("s")
    assert session is not None
    number = (await store.start_turn(session, "the fourth")).number
    await store.close()
    assert number == 4


async def test_reads_and_writes_run_off_the_event_loop(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "cantata.db")
    session = store.new_session("ana", "p")
    await store.start_turn(session, "hi", new_session=True)
    # Hold the store's thread: a slow disk. The loop must go on meanwhile.
    release = threading.Event()
    held = asyncio.ensure_future(store.commit(lambda db: release.wait()))
    await asyncio.sleep(0.01)
    read = asyncio.create_task(store.get_session(session.id))
    for _ in range(5):  # the loop goes on: these sleeps end while the read still waits
        await asyncio.sleep(0.01)
    assert not read.done(), "the read waits for the store's thread"
    release.set()
    assert (await read) == session
    await held
    await store.close()


async def test_forget_leaves_no_row_of_the_user(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    for user in ("ana", "ben"):
        session = store.new_session(user, "p")
        turn_id = (await store.start_turn(session, f"{user} hi", new_session=True)).id
        await store.write_entry(turn_id=turn_id, user_id=user, agent="a", status="ok", output=user, error=None)
        await store.finish_turn(turn_id, "ok", [("a", f"hello {user}")])
    await store.forget_user("ana")
    await store.close()
    db = sqlite3.connect(tmp_path / "cantata.db")
    for table in ("users", "sessions", "blackboard"):
        column = "id" if table == "users" else "user_id"
        assert db.execute(f"SELECT COUNT(*) FROM {table} WHERE {column} = 'ana'").fetchone() == (0,)
    assert db.execute("SELECT content FROM messages ORDER BY id").fetchall() == [("ben hi",), ("hello ben",)]


async def test_a_forget_whose_checkpoint_a_reader_holds_up_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader's older snapshot keeps the deleted rows' bytes in the WAL: an error, not a
    success; once it is done, forgetting again empties the WAL."""
    monkeypatch.setattr("cantata.store.sqlite_db.BUSY_TIMEOUT_MS", 50)  # each try waits this for the reader
    store = open_store(tmp_path)
    session = store.new_session("ana", "p")
    await store.start_turn(session, "ana's secret", new_session=True)
    reader = sqlite3.connect(tmp_path / "cantata.db", isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM messages").fetchone()  # its snapshot: from before the forget
    try:
        with pytest.raises(StoreError, match=r"the user's rows are deleted, but another connection's read kept"):
            await store.forget_user("ana")
    finally:
        reader.execute("COMMIT")
        reader.close()
    await store.forget_user("ana")
    await store.close()
    wal = tmp_path / "cantata.db-wal"
    assert not wal.exists() or b"ana's secret" not in wal.read_bytes()


async def test_a_database_that_cannot_be_opened_is_one_store_error(tmp_path: Path) -> None:
    (tmp_path / "blocked").write_text("a file where the folder should be")
    store = SqliteStore(tmp_path / "blocked" / "cantata.db")
    with pytest.raises(StoreError, match="cannot open the database"):
        await store.get_session("x")
    await store.close()


def test_migrations_keep_the_names_earlier_databases_recorded() -> None:
    # Recorded as the list of SQL strings named them, so no database made by it migrates again.
    assert [name_of(m) for m in MIGRATIONS] == [
        "001_core",
        "002_session_summary",
        "003_session_turn_counter",
        "004_api_keys",
        "005_blackboard_iterations",
        "006_deployed_agents",
        "007_session_leases",
        "008_event_numbers",
        "009_tool_calls",
        "010_approvals",
    ]


def m007_count_turns(db: sqlite3.Connection) -> None:
    """A trigger (whose body holds `;`) and a data migration, in one script."""
    execute_script(
        db,
        """
        CREATE TABLE turn_totals (session_id TEXT PRIMARY KEY, started INTEGER NOT NULL);
        INSERT INTO turn_totals SELECT session_id, COUNT(*) FROM turns GROUP BY session_id;
        CREATE TRIGGER count_turns AFTER INSERT ON turns BEGIN
            INSERT OR IGNORE INTO turn_totals (session_id, started) VALUES (NEW.session_id, 0);
            UPDATE turn_totals SET started = started + 1 WHERE session_id = NEW.session_id;
        END;
        """,
    )


def m008_number_in_python(db: sqlite3.Connection) -> None:
    """A data migration in Python."""
    db.execute("ALTER TABLE turn_totals ADD COLUMN label TEXT")
    rows = db.execute("SELECT session_id, started FROM turn_totals").fetchall()
    db.executemany("UPDATE turn_totals SET label = ? WHERE session_id = ?", [(f"{n} turns", s) for s, n in rows])


def m009_broken(db: sqlite3.Connection) -> None:
    execute_script(db, "CREATE TABLE half_done (x INTEGER); INSERT INTO nowhere VALUES (1);")


async def test_a_migration_may_hold_a_trigger_and_move_data_and_fails_whole(tmp_path: Path) -> None:
    path = tmp_path / "cantata.db"
    store = SqliteStore(path)
    session = store.new_session("ana", "p")
    await store.start_turn(session, "before", new_session=True)
    await store.close()
    db = sqlite3.connect(path, isolation_level=None)
    assert migrate(db, path, [*MIGRATIONS, m007_count_turns, m008_number_in_python]) == [
        "007_count_turns",
        "008_number_in_python",
    ]
    db.execute("INSERT INTO turns (session_id, number, started_at) VALUES (?, 2, 0)", (session.id,))
    assert db.execute("SELECT started, label FROM turn_totals").fetchall() == [(2, "1 turns")]
    with pytest.raises(StoreError, match="migration 009_broken failed"):
        migrate(db, path, [*MIGRATIONS, m007_count_turns, m008_number_in_python, m009_broken])
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in tables  # rolled back whole, and not recorded
    assert db.execute("SELECT COUNT(*) FROM migrations WHERE name = '009_broken'").fetchone() == (0,)
    db.close()


@pytest.mark.parametrize("turns", [5, 50])
async def test_reads_take_as_many_statements_for_50_turns_as_for_5(tmp_path: Path, turns: int) -> None:
    # The same fixed counts for both sizes: no read runs a query per turn, reply or agent.
    store = SqliteStore(tmp_path / "cantata.db")
    session = store.new_session("ana", "p")
    for n in range(turns):
        turn_id = (await store.start_turn(session, f"message {n}", new_session=n == 0)).id
        for agent in ("a", "b"):
            await store.write_entry(turn_id=turn_id, user_id="ana", agent=agent, status="ok", output=n, error=None)
        await store.finish_turn(turn_id, "ok", [("a", "early"), ("b", f"reply {n}")])
    memory = ["a", "b", "c"] * (turns // 5)  # agents asked for grow with the turns too
    counted = {
        "export": len(await statements_during(store, lambda: store.export_user("ana"))),
        "turns": len(await statements_during(store, lambda: store.turns(session.id))),
        "memory": len(await statements_during(store, lambda: store.latest_outputs("ana", memory, 10**9))),
        "user turns": len(await statements_during(store, lambda: store.user_turns("ana", pipeline="p"))),
        "cited messages": len(
            await statements_during(
                store, lambda: store.turn_messages("ana", [TurnRef(session.id, n) for n in range(1, turns + 1)])
            )
        ),
    }
    turn_ids = [t.id for t in await store.user_turns("ana")]
    counted["turn events"] = len(await statements_during(store, lambda: store.turn_events(turn_ids)))
    counted["entry histories"] = len(await statements_during(store, lambda: store.entry_histories(turn_ids, memory)))
    exported = await store.export_user("ana")
    assert len(exported["sessions"][0]["turns"]) == turns
    assert [t.replies for t in await store.turns(session.id)][-1] == [("a", "early"), ("b", f"reply {turns - 1}")]
    await store.close()
    assert counted == {
        "export": 8,  # BEGIN, the six reads (with tool calls and approvals), COMMIT: one snapshot
        "turns": 1,
        "memory": 1,
        "user turns": 1,
        "cited messages": 1,
        "turn events": 1,
        "entry histories": 1,
    }


async def test_an_export_reads_one_snapshot_while_another_process_adds_a_turn(tmp_path: Path) -> None:
    # Another process (`cantata run` beside the server) commits a turn and its message
    # between the export's reads of the turns and of the messages: the export must show
    # the user's data as it was when it began, not fail on a message of an unknown turn.
    path = tmp_path / "cantata.db"
    store = SqliteStore(path)
    session = store.new_session("ana", "p")
    first = await store.start_turn(session, "first", new_session=True)
    await store.finish_turn(first.id, "ok", [("a", "reply")])
    # The trace callback runs on the store's thread; sqlite3 swallows what it raises.
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    added: list[int] = []

    def meanwhile(statement: str) -> None:
        if statement.lstrip().startswith("SELECT turn_id, role, agent, content FROM messages"):
            other.execute("UPDATE sessions SET turn_count = turn_count + 1")
            other.execute("INSERT INTO turns (session_id, number, started_at) VALUES (?, 2, 0)", (session.id,))
            (turn_id,) = other.execute("SELECT max(id) FROM turns").fetchone()
            other.execute(
                "INSERT INTO messages (turn_id, role, agent, content, created_at) VALUES (?, 'user', NULL, 'x', 0)",
                (turn_id,),
            )
            added.append(turn_id)

    await store.commit(lambda db: db.set_trace_callback(meanwhile))
    exported = await store.export_user("ana")
    await store.commit(lambda db: db.set_trace_callback(None))
    assert added  # the other process did commit its turn in the middle of the export
    assert [t["turn"] for t in exported["sessions"][0]["turns"]] == [1]
    assert len((await store.export_user("ana"))["sessions"][0]["turns"]) == 2  # the next export sees it
    other.close()
    await store.close()


async def test_a_full_disk_is_a_store_error_saying_so_and_nothing_half_written(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "cantata.db")
    try:
        session = store.new_session("ana", "p")
        turn_id = (await store.start_turn(session, "hello", new_session=True)).id
        # SQLite's own way to make the file full: no page beyond those it has.
        await store.commit(
            lambda db: db.execute("PRAGMA max_page_count = " + str(db.execute("PRAGMA page_count").fetchone()[0]))
        )
        big = "x" * 200_000
        with pytest.raises(StoreError, match=r"database or disk is full \(the disk is full: free space, then retry\)"):
            await store.write_entry(turn_id=turn_id, user_id="ana", agent="a", status="ok", output=big, error=None)
        with pytest.raises(StoreError, match="the disk is full"):
            await store.start_turn(session, big)
        assert await store.entries(turn_id) == {}
        assert [t.id for t in await store.turns(session.id)] == [turn_id]  # the refused turn left nothing
        assert await store.running_turns() == [turn_id]
    finally:
        await store.close()
