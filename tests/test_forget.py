"""Forgetting a user leaves nothing of them: in no table, no event, and not in the bytes of
the database file or its write-ahead log, while another user's data stays whole."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cantata.bundled import load
from cantata.config import load_config
from cantata.runtime import Cantata
from tests.helpers.pipelines import WriteFile, scripted_config

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
        assert len(gone_turns) == 3 and await app.store.forget_user(GONE) == 1
        assert await app.store.user_turns(GONE) == [] and await app.store.sessions(GONE) == []
        assert [e for e in await app.store.events_after(0, user_id=GONE)] == []
        assert len(await app.store.user_turns(KEPT)) == 3
        # While the store is open, as a running server's is: its write-ahead log is in use.
        files = sorted(home.glob("cantata.db*"))
        raw = {file.name: file.read_bytes() for file in files}
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
