"""Forgetting a user leaves nothing of them: in no table, no event, not in the bytes of the
database file or its write-ahead log, and in no folder under CANTATA_HOME (the agents the
factory made for them, its turns' working folders), while another user's data stays whole."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cantata.applications import forgetters
from cantata.bundled import load
from cantata.config import load_config
from cantata.errors import StoreError
from cantata.factory import registry
from cantata.runtime import Cantata
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.test_factory import REQUEST, canned_config

GONE, KEPT = "ann-4821", "bob-7730"
PLANTED = {GONE: "ann-planted-q9z: my sister must never know", KEPT: "bob-planted-k2w: the gym again"}


async def test_forget_leaves_nothing_of_the_user_anywhere(write: WriteFile, home: Path) -> None:
    app = Cantata(load_config(scripted_config(write, fast={"latency_s": 0})), home=home)
    pipeline = load("coaching")
    try:
        for user, message in PLANTED.items():
            session = None
            for n in range(3):
                turn = await app.run_turn(pipeline, f"{message} ({n})", user=user, session_id=session)
                session = turn.session
        gone_turns = [t.id for t in await app.store.user_turns(GONE)]
        forgotten = await app.forget_user(GONE, forgetters())
        assert (forgotten.sessions, forgotten.turns) == (1, tuple(sorted(gone_turns))) and len(gone_turns) == 3
        assert await app.store.user_turns(GONE) == [] and await app.store.sessions(GONE) == []
        assert [e for e in await app.store.events_after(0, user_id=GONE)] == []
        assert len(await app.store.user_turns(KEPT)) == 3
        # While the store is open, as a running server's is: its write-ahead log is in use.
        raw = files_under(home, "cantata.db*")
        left = stored_mentions(home / "cantata.db")
    finally:
        await app.close()
    assert KEPT.encode() in b"".join(raw.values())  # the search finds what is there
    for needle in (GONE, PLANTED[GONE][:15]):
        assert not [name for name, data in raw.items() if needle.encode() in data], needle
    # Bob's data is there to find, Ann's is in no table.
    assert {"users", "sessions", "blackboard"} <= left.pop(KEPT)
    assert "messages" in left.pop(PLANTED[KEPT][:15])
    assert left == {}, f"left after forget: {left}"


ASKED = {GONE: f"{REQUEST}, for ann-asked-v3p", KEPT: f"{REQUEST}, for bob-asked-h8m"}


async def test_forget_removes_the_agents_the_factory_made_for_the_user_and_their_turns_folders(
    write: WriteFile, home: Path
) -> None:
    app = Cantata(load_config(canned_config(write)), home=home)
    factory = load("factory")
    options = {"no_sandbox": True}  # the canned tool code is ours; what is deleted is the point here
    try:
        kept = await app.run_turn(factory, ASKED[KEPT], user=KEPT, options=options)
        gone = await app.run_turn(factory, ASKED[GONE], user=GONE, options=options)
        made = [(v.version, v.task_turn, v.active) for v in await app.store.agent_versions("action-items")]
        assert made == [(1, kept.turn_id, False), (2, gone.turn_id, True)]
        before = files_under(home)
        forgotten = await app.forget_user(GONE, forgetters())
        versions = [(v.version, v.active) for v in await app.store.agent_versions("action-items")]
        after = files_under(home)  # the database's files with the store open, as a server's are
    finally:
        await app.close()
    ann, bob = (ASKED[user][-13:].encode() for user in (GONE, KEPT))
    # The searches below find what was there.
    assert ann in before["agents/action-items/2/task.json"]
    assert [name for name in before if name.startswith(f"factory/turn-{gone.turn_id}/")]
    assert (forgotten.turns, forgotten.agent_versions) == ((gone.turn_id,), (("action-items", 2),))
    assert versions == [(1, True)], "bob's version is the active one again"
    assert not (home / "agents" / "action-items" / "2").exists() and not registry.turn_dir(home, gone.turn_id).exists()
    for needle in (GONE.encode(), ann):
        assert not [name for name, data in after.items() if needle in data], needle
    assert not [name for name in after if f"turn-{gone.turn_id}" in name]
    # Bob's agent, its request and his turn's folder stay.
    assert bob in after["agents/action-items/1/task.json"]
    assert [name for name in after if name.startswith(f"factory/turn-{kept.turn_id}/")]
    assert KEPT.encode() in after["cantata.db"] + after.get("cantata.db-wal", b"")


async def test_a_folder_that_cannot_be_removed_is_named_in_the_error(write: WriteFile, home: Path) -> None:
    app = Cantata(load_config(scripted_config(write, fast={"latency_s": 0})), home=home)
    try:
        turn = await app.run_turn(load("coaching"), PLANTED[GONE], user=GONE)
        blocker = registry.turn_dir(home, turn.turn_id)
        blocker.parent.mkdir(parents=True)
        blocker.write_text("not a folder: rmtree refuses it")
        with pytest.raises(
            StoreError, match=rf"could not remove 1 folder\(s\) under CANTATA_HOME: factory/turn-{turn.turn_id} "
        ):
            await app.forget_user(GONE, forgetters())
        assert await app.store.user_turns(GONE) == [], "the rows went first, in their own transaction"
    finally:
        await app.close()


def files_under(home: Path, pattern: str = "**/*") -> dict[str, bytes]:
    """Every file under `home` matching `pattern`, by its path relative to `home`: its bytes."""
    return {path.relative_to(home).as_posix(): path.read_bytes() for path in home.glob(pattern) if path.is_file()}


def stored_mentions(path: Path) -> dict[str, set[str]]:
    """For each user's id and planted message, the tables (every one in sqlite_master) with a row mentioning it."""
    db = sqlite3.connect(path)
    try:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        found: dict[str, set[str]] = {}
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                text = " ".join(str(value) for value in row)
                for user, message in PLANTED.items():
                    for needle in (user, message[:15]):
                        if needle in text:
                            found.setdefault(needle, set()).add(table)
        return found
    finally:
        db.close()
