"""The SQLite store: migrations in order, write-once blackboard, memory across sessions."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cantata.errors import StoreError
from cantata.events import Event
from cantata.store import open_store
from cantata.store.migrations import MIGRATIONS


def test_migrations_apply_once_in_order(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    assert store.applied_migrations() == [name for name, _ in MIGRATIONS]
    assert store.migrate() == []  # nothing left to apply
    store.close()
    reopened = open_store(tmp_path)
    assert reopened.migrate() == []
    tables = {r[0] for r in sqlite3.connect(tmp_path / "cantata.db").execute("SELECT name FROM sqlite_master")}
    assert {"users", "sessions", "turns", "messages", "blackboard", "events"} <= tables


def test_migration_names_are_ordered_and_unique() -> None:
    names = [name for name, _ in MIGRATIONS]
    assert names == sorted(names) and len(set(names)) == len(names)


def test_blackboard_is_write_once_and_events_commit_with_writes(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    session = store.create_session("ana", "p")
    turn_id, number = store.start_turn(session, "hello")
    assert number == 1
    store.record_event(Event("agent_started", turn_id, session.id, 0.1, "a"))
    store.record_event(Event("agent_token", turn_id, session.id, 0.2, "a", {"text": "x"}))  # live only
    store.write_entry(turn_id=turn_id, user_id="ana", agent="a", status="ok", output={"x": 1}, error=None, meta={})
    with pytest.raises(StoreError, match="already has an entry"):
        store.write_entry(turn_id=turn_id, user_id="ana", agent="a", status="ok", output={"x": 2}, error=None, meta={})
    assert store.entries(turn_id)["a"].output == {"x": 1}
    # Read back through a second connection: it is committed, not just buffered.
    other = sqlite3.connect(tmp_path / "cantata.db")
    assert other.execute("SELECT type FROM events").fetchall() == [("agent_started",)]
    assert other.execute("SELECT content FROM messages").fetchall() == [("hello",)]


def test_memory_is_the_latest_ok_entry_of_this_user_only(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    for user in ("ana", "ben"):
        session = store.create_session(user, "p")
        for n in range(2):
            turn_id, _ = store.start_turn(session, f"{user} {n}")
            store.write_entry(turn_id=turn_id, user_id=user, agent="shadow", status="ok",
                              output={"who": user, "n": n}, error=None, meta={})
            store.finish_turn(turn_id, "ok", [])
    failed_turn, _ = store.start_turn(store.create_session("ana", "p"), "x")
    store.write_entry(turn_id=failed_turn, user_id="ana", agent="shadow", status="failed", output=None, error="e", meta={})
    memory = store.latest_outputs("ana", ["shadow"], before_turn=10_000)
    assert memory["shadow"].output == {"who": "ana", "n": 1}
