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


async def test_blackboard_is_write_once_and_events_commit_with_writes(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    session = store.new_session("ana", "p")
    turn_id, number = await store.start_turn(session, "hello", new_session=True)
    assert number == 1
    store.record_event(Event("agent_started", turn_id, session.id, 0.1, "a"))
    store.record_event(Event("agent_token", turn_id, session.id, 0.2, "a", {"text": "x"}))  # live only
    await store.write_entry(turn_id=turn_id, user_id="ana", agent="a", status="ok", output={"x": 1}, error=None)
    with pytest.raises(StoreError, match="already has an entry"):
        await store.write_entry(turn_id=turn_id, user_id="ana", agent="a", status="ok", output={"x": 2}, error=None)
    assert store.entries(turn_id)["a"].output == {"x": 1}
    # Read back through a second connection: it is committed, not just buffered.
    other = sqlite3.connect(tmp_path / "cantata.db")
    assert other.execute("SELECT type FROM events").fetchall() == [("agent_started",)]
    assert other.execute("SELECT content FROM messages").fetchall() == [("hello",)]


async def test_memory_is_the_latest_ok_entry_of_this_user_only(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    for user in ("ana", "ben"):
        session = store.new_session(user, "p")
        for n in range(2):
            turn_id, _ = await store.start_turn(session, f"{user} {n}", new_session=n == 0)
            await store.write_entry(turn_id=turn_id, user_id=user, agent="shadow", status="ok",
                                    output={"who": user, "n": n}, error=None)
            await store.finish_turn(turn_id, "ok", [])
    failed_turn, _ = await store.start_turn(store.new_session("ana", "p"), "x", new_session=True)
    await store.write_entry(turn_id=failed_turn, user_id="ana", agent="shadow", status="failed", output=None, error="e")
    memory = store.latest_outputs("ana", ["shadow"], before_turn=10_000)
    assert memory["shadow"].output == {"who": "ana", "n": 1}


async def test_writes_in_one_tick_share_a_commit_but_fail_alone(tmp_path: Path) -> None:
    import asyncio

    store = open_store(tmp_path)
    turn_id, _ = await store.start_turn(store.new_session("ana", "p"), "hi", new_session=True)
    await store.write_entry(turn_id=turn_id, user_id="ana", agent="dup", status="ok", output=1, error=None)
    results = await asyncio.gather(
        *(store.write_entry(turn_id=turn_id, user_id="ana", agent=name, status="ok", output=name, error=None)
          for name in ("x", "dup", "y")),
        return_exceptions=True,
    )
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], StoreError)
    assert set(store.entries(turn_id)) == {"dup", "x", "y"}


async def test_events_are_published_to_subscribers_and_stored(tmp_path: Path) -> None:
    from cantata.config import InstanceConfig, InstancesConfig
    from cantata.runtime import Cantata
    from cantata.spec import load_pipeline

    (tmp_path / "p.yaml").write_text("name: p\nagents:\n  - name: a\n    prompt: x\n    deliver: final\n")
    app = Cantata(InstancesConfig(instances=[InstanceConfig(name="s", backend="scripted")]), home=tmp_path)
    queue = app.bus.subscribe()
    result = await app.run_turn(load_pipeline(tmp_path / "p.yaml"), "hi")
    live = []
    while not queue.empty():
        live.append(queue.get_nowait().type)
    stored = [e["type"] for e in app.store.events(result.turn_id)]
    await app.close()
    assert live[0] == "turn_started" and live[-1] == "turn_delivered" and "agent_token" in live
    assert stored == [t for t in live if t != "agent_token"]  # tokens are live only


async def test_export_and_forget_touch_one_user_only(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    for user in ("ana", "ben"):
        session = store.new_session(user, "coaching")
        turn_id, _ = await store.start_turn(session, f"{user} says hi", new_session=True)
        await store.write_entry(turn_id=turn_id, user_id=user, agent="persona", status="ok", output={"of": user}, error=None)
        await store.finish_turn(turn_id, "ok", [("coach", f"hello {user}")])
    exported = store.export_user("ana")
    assert [m["content"] for m in exported["sessions"][0]["turns"][0]["messages"]] == ["ana says hi", "hello ana"]
    assert exported["sessions"][0]["turns"][0]["blackboard"]["persona"]["output"] == {"of": "ana"}
    assert "ben" not in str(exported)
    assert await store.forget_user("ana") == 1
    assert store.export_user("ana") == {"user": "ana", "sessions": []}
    assert store.latest_outputs("ana", ["persona"], 10**9) == {}
    assert store.latest_outputs("ben", ["persona"], 10**9)["persona"].output == {"of": "ben"}
    db = sqlite3.connect(tmp_path / "cantata.db")
    assert db.execute("SELECT COUNT(*) FROM messages").fetchone() == (2,)  # only ben's remain


async def test_a_cancelled_writer_does_not_hang_the_others(tmp_path: Path) -> None:
    import asyncio

    store = open_store(tmp_path)
    turn_id, _ = await store.start_turn(store.new_session("ana", "p"), "hi", new_session=True)
    first = asyncio.create_task(
        store.write_entry(turn_id=turn_id, user_id="ana", agent="a", status="ok", output=1, error=None)
    )
    second = asyncio.create_task(
        store.write_entry(turn_id=turn_id, user_id="ana", agent="b", status="ok", output=2, error=None)
    )
    await asyncio.sleep(0)  # both queued for the same commit
    first.cancel()
    await asyncio.wait_for(second, timeout=2)
    assert "b" in store.entries(turn_id)


async def test_odd_event_data_is_stored_and_deleted_turns_lose_only_their_events(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    mine, _ = await store.start_turn(store.new_session("u", "p"), "hi", new_session=True)
    theirs, _ = await store.start_turn(store.new_session("v", "p"), "hi", new_session=True)
    store.record_event(Event("conflict", mine, "s", 0.1, "rules", {"actions": {"a"}}))  # a set is not JSON
    store.record_event(Event("agent_started", theirs, "s", 0.1, "a"))
    await store.forget_user("v")  # v's buffered event now points at a deleted turn
    await store.write_entry(turn_id=mine, user_id="u", agent="a", status="ok", output=1, error=None)
    assert [e["type"] for e in store.events(mine)] == ["conflict"]
    assert store.events(mine)[0]["data"] == {"actions": "{'a'}"}
