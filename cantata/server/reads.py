"""What the API reads from the store beyond what a turn needs: a user's sessions, a
session's turns, one turn, events after a sequence number.

Until the store's async protocol (cantata/store/base.py) lands, these read the SQLite
file directly; they are the only place in the server that knows the schema.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from cantata.store import Store


@dataclass(frozen=True)
class SessionInfo:
    id: str
    user_id: str
    pipeline: str
    created_at: float
    turns: int
    summary: str


@dataclass(frozen=True)
class TurnRow:
    id: int
    session_id: str
    user_id: str
    pipeline: str
    number: int
    status: str
    started_at: float | None
    finished_at: float | None
    message: str
    replies: list[tuple[str, str]]


@dataclass(frozen=True)
class StoredEvent:
    seq: int
    turn_id: int
    session_id: str
    user_id: str
    type: str
    agent: str | None
    at_s: float
    wall: float
    data: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "type": self.type,
            "turn_id": self.turn_id,
            "session_id": self.session_id,
            "agent": self.agent,
            "at_s": self.at_s,
            "wall": self.wall,
            "data": self.data,
        }


async def sessions(store: Store, user_id: str | None) -> list[SessionInfo]:
    """A user's sessions (every user's when None), newest first."""
    where, args = ("WHERE s.user_id = ?", (user_id,)) if user_id is not None else ("", ())
    rows = store._db.execute(
        "SELECT s.id, s.user_id, s.pipeline, s.created_at,"
        " (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id), s.summary"
        f" FROM sessions s {where} ORDER BY s.created_at DESC, s.rowid DESC",
        args,
    ).fetchall()
    return [SessionInfo(*row) for row in rows]


_TURN = (
    "SELECT t.id, t.session_id, s.user_id, s.pipeline, t.number, t.status, t.started_at, t.finished_at,"
    " (SELECT content FROM messages WHERE turn_id = t.id AND role = 'user' ORDER BY id LIMIT 1)"
    " FROM turns t JOIN sessions s ON s.id = t.session_id"
)


def _turn(store: Store, row: tuple[Any, ...]) -> TurnRow:
    replies = store._db.execute(
        "SELECT agent, content FROM messages WHERE turn_id = ? AND role = 'assistant' ORDER BY id", (row[0],)
    ).fetchall()
    return TurnRow(
        id=row[0], session_id=row[1], user_id=row[2], pipeline=row[3], number=row[4], status=row[5],
        started_at=row[6], finished_at=row[7], message=row[8] or "", replies=[(a or "", c) for a, c in replies],
    )


async def turns(store: Store, session_id: str) -> list[TurnRow]:
    rows = store._db.execute(_TURN + " WHERE t.session_id = ? ORDER BY t.number", (session_id,)).fetchall()
    return [_turn(store, row) for row in rows]


async def get_turn(store: Store, turn_id: int) -> TurnRow | None:
    row = store._db.execute(_TURN + " WHERE t.id = ?", (turn_id,)).fetchone()
    return _turn(store, row) if row else None


async def events_after(
    store: Store, seq: int, *, user_id: str | None = None, turn_id: int | None = None, limit: int = 1000
) -> list[StoredEvent]:
    """Stored events with a sequence number above `seq`, in order, that the filters allow."""
    if store._pending_events:  # buffered events are committed now, so a live view sees them
        store.flush_events()
    clauses, args = ["e.id > ?"], [seq]
    if user_id is not None:
        clauses.append("s.user_id = ?")
        args.append(user_id)  # type: ignore[arg-type]
    if turn_id is not None:
        clauses.append("e.turn_id = ?")
        args.append(turn_id)
    rows = store._db.execute(
        "SELECT e.id, e.turn_id, t.session_id, s.user_id, e.type, e.agent, e.at_s, e.wall, e.data"
        " FROM events e JOIN turns t ON t.id = e.turn_id JOIN sessions s ON s.id = t.session_id"
        f" WHERE {' AND '.join(clauses)} ORDER BY e.id LIMIT ?",
        (*args, limit),
    ).fetchall()
    return [
        StoredEvent(seq=r[0], turn_id=r[1], session_id=r[2], user_id=r[3], type=r[4], agent=r[5], at_s=r[6],
                    wall=r[7], data=json.loads(r[8]))
        for r in rows
    ]
