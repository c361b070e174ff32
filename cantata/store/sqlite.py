"""The SQLite store: one file under CANTATA_HOME, one connection, one writer.

Writes are small and commit at once (WAL, synchronous=NORMAL: durable against a crash
of Cantata, fast enough to commit on every blackboard write). Events are buffered and
committed with the next write, so a node costs one commit, not four.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cantata.errors import StoreError
from cantata.events import PERSISTED, Event
from cantata.store.migrations import MIGRATIONS


@dataclass(frozen=True)
class SessionRow:
    id: str
    user_id: str
    pipeline: str


@dataclass(frozen=True)
class EntryRow:
    turn_id: int
    agent: str
    status: str
    output: Any
    error: str | None


@dataclass(frozen=True)
class PastTurn:
    turn_id: int
    number: int
    user_message: str
    reply: str | None


class SqliteStore:
    def __init__(self, path: Path | str) -> None:
        self.path = path
        try:
            if isinstance(path, Path):
                path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the database {path}: {exc}") from None
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._pending_events: list[tuple[Any, ...]] = []
        self._batch: list[tuple[Callable[[sqlite3.Connection], Any], asyncio.Future[Any]]] = []
        self._flush_scheduled = False
        self.migrate()

    # -- schema ---------------------------------------------------------------------------

    def migrate(self) -> list[str]:
        """Apply the migrations not yet applied, in order; return their names."""
        self._db.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
        done = {row[0] for row in self._db.execute("SELECT name FROM migrations")}
        applied = []
        for name, sql in MIGRATIONS:
            if name in done:
                continue
            try:
                self._db.execute("BEGIN")
                for statement in sql.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                self._db.execute("INSERT INTO migrations VALUES (?, ?)", (name, time.time()))
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._db.execute("ROLLBACK")
                raise StoreError(f"migration {name} failed on {self.path}: {exc}") from None
            applied.append(name)
        return applied

    def applied_migrations(self) -> list[str]:
        return [row[0] for row in self._db.execute("SELECT name FROM migrations ORDER BY name")]

    # -- sessions and turns ---------------------------------------------------------------

    def new_session(self, user_id: str, pipeline: str) -> SessionRow:
        """A session row to be stored with its first turn (`start_turn(..., new_session=True)`)."""
        return SessionRow(id=secrets.token_hex(8), user_id=user_id, pipeline=pipeline)

    def get_session(self, session_id: str) -> SessionRow | None:
        row = self._db.execute(
            "SELECT id, user_id, pipeline FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return SessionRow(*row) if row else None

    async def start_turn(self, session: SessionRow, message: str, *, new_session: bool = False) -> tuple[int, int]:
        """Store the user's message in a new turn; return (turn id, number in session)."""
        now = time.time()

        def write(db: sqlite3.Connection) -> tuple[int, int]:
            if new_session:
                db.execute("INSERT OR IGNORE INTO users (id, created_at) VALUES (?, ?)", (session.user_id, now))
                db.execute(
                    "INSERT INTO sessions (id, user_id, pipeline, created_at) VALUES (?, ?, ?, ?)",
                    (session.id, session.user_id, session.pipeline, now),
                )
            (number,) = db.execute(
                "SELECT COALESCE(MAX(number), 0) + 1 FROM turns WHERE session_id = ?", (session.id,)
            ).fetchone()
            cur = db.execute(
                "INSERT INTO turns (session_id, number, started_at) VALUES (?, ?, ?)", (session.id, number, now)
            )
            turn_id = int(cur.lastrowid or 0)
            db.execute(
                "INSERT INTO messages (turn_id, role, agent, content, created_at) VALUES (?, 'user', NULL, ?, ?)",
                (turn_id, message, now),
            )
            return turn_id, int(number)

        result: tuple[int, int] = await self.commit(write)
        return result

    async def finish_turn(self, turn_id: int, status: str, replies: list[tuple[str, str]]) -> None:
        """Mark the turn finished and store the replies delivered, as (agent, text)."""
        now = time.time()

        def write(db: sqlite3.Connection) -> None:
            db.execute("UPDATE turns SET status = ?, finished_at = ? WHERE id = ?", (status, now, turn_id))
            db.executemany(
                "INSERT INTO messages (turn_id, role, agent, content, created_at) VALUES (?, 'assistant', ?, ?, ?)",
                [(turn_id, agent, text, now) for agent, text in replies],
            )

        await self.commit(write)

    def unfinished_turn(self, turn_id: int) -> tuple[SessionRow, int, str] | None:
        """(session, number, user message) of a turn still marked running, else None."""
        row = self._db.execute(
            """
            SELECT s.id, s.user_id, s.pipeline, t.number,
                   (SELECT content FROM messages WHERE turn_id = t.id AND role = 'user' ORDER BY id LIMIT 1)
            FROM turns t JOIN sessions s ON s.id = t.session_id WHERE t.id = ? AND t.status = 'running'
            """,
            (turn_id,),
        ).fetchone()
        if row is None:
            return None
        return SessionRow(row[0], row[1], row[2]), int(row[3]), str(row[4])

    def session_summary(self, session_id: str) -> tuple[str, int]:
        """The running summary of the session and the number of the last turn it covers."""
        row = self._db.execute("SELECT summary, summary_upto FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return (str(row[0]), int(row[1])) if row else ("", 0)

    async def set_summary(self, session_id: str, summary: str, upto: int) -> None:
        def write(db: sqlite3.Connection) -> None:
            db.execute("UPDATE sessions SET summary = ?, summary_upto = ? WHERE id = ?", (summary, upto, session_id))

        await self.commit(write)

    def recent_turns(
        self, session_id: str, before_turn: int, *, after_number: int = 0, limit: int = 50
    ) -> list[PastTurn]:
        """Finished turns of the session before `before_turn` and after turn number
        `after_number` (what the summary covers), oldest first, with the last reply."""
        rows = self._db.execute(
            """
            SELECT t.id, t.number,
                   (SELECT content FROM messages WHERE turn_id = t.id AND role = 'user' ORDER BY id LIMIT 1),
                   (SELECT content FROM messages WHERE turn_id = t.id AND role = 'assistant'
                    ORDER BY id DESC LIMIT 1)
            FROM turns t WHERE t.session_id = ? AND t.id < ? AND t.number > ? AND t.status != 'running'
            ORDER BY t.number DESC LIMIT ?
            """,
            (session_id, before_turn, after_number, limit),
        ).fetchall()
        return [PastTurn(*row) for row in reversed(rows)]

    # -- blackboard -----------------------------------------------------------------------

    async def write_entry(
        self,
        *,
        turn_id: int,
        user_id: str,
        agent: str,
        status: str,
        output: Any,
        error: str | None,
    ) -> None:
        """Write-once: a second entry for the same turn and agent is refused."""
        row = (turn_id, user_id, agent, status, _json(output), error, time.time())

        def write(db: sqlite3.Connection) -> None:
            try:
                db.execute(_INSERT_ENTRY, row)
            except sqlite3.IntegrityError:
                raise StoreError(f"turn {turn_id} already has an entry for agent '{agent}'") from None

        await self.commit(write)

    # -- group commit ---------------------------------------------------------------------

    async def commit(self, write: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run `write` in the transaction shared by every write of this loop tick and
        return its result once committed. Many turns finishing agents at the same moment
        then cost one commit, not one each; no caller goes on before its write is durable."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._batch.append((write, future))
        if not self._flush_scheduled:
            self._flush_scheduled = True
            loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        self._flush_scheduled = False
        batch, self._batch = self._batch, []
        try:
            with self._transaction():
                results = [write(self._db) for write, _ in batch]
        except Exception:
            # One failing write must not fail (or hang) the others: run them one by one.
            for write, future in batch:
                try:
                    with self._transaction():
                        result = write(self._db)
                except Exception as exc:
                    _settle(future, error=exc if isinstance(exc, StoreError) else StoreError(f"write failed: {exc}"))
                else:
                    _settle(future, result=result)
            return
        for (_, future), result in zip(batch, results):
            _settle(future, result=result)

    def entries(self, turn_id: int) -> dict[str, EntryRow]:
        rows = self._db.execute(
            "SELECT turn_id, agent, status, output, error FROM blackboard WHERE turn_id = ? ORDER BY created_at",
            (turn_id,),
        ).fetchall()
        return {row[1]: _entry(row) for row in rows}

    def latest_outputs(self, user_id: str, agents: list[str], before_turn: int) -> dict[str, EntryRow]:
        """Each agent's latest successful entry for this user, from turns before `before_turn`."""
        found: dict[str, EntryRow] = {}
        for agent in agents:
            row = self._db.execute(
                "SELECT turn_id, agent, status, output, error FROM blackboard"
                " WHERE user_id = ? AND agent = ? AND status = 'ok' AND turn_id < ?"
                " ORDER BY turn_id DESC LIMIT 1",
                (user_id, agent, before_turn),
            ).fetchone()
            if row:
                found[agent] = _entry(row)
        return found

    # -- events ---------------------------------------------------------------------------

    def record_event(self, event: Event) -> None:
        """Buffer an event; it is committed with the next write (or `flush_events`).
        Encoded now, so that data that cannot be stored fails here, not in a later commit."""
        if event.type in PERSISTED:
            data = _encode_event(event.data) if event.data else "{}"
            self._pending_events.append((event.turn_id, event.type, event.agent, event.at_s, event.wall, data, event.turn_id))

    def flush_events(self) -> None:
        with self._transaction():
            pass

    def events(self, turn_id: int) -> list[dict[str, Any]]:
        self.flush_events()
        rows = self._db.execute(
            "SELECT type, agent, at_s, wall, data FROM events WHERE turn_id = ? ORDER BY id", (turn_id,)
        ).fetchall()
        return [
            {"type": t, "agent": a, "at_s": at, "wall": w, "data": json.loads(d)} for t, a, at, w, d in rows
        ]

    # -- privacy --------------------------------------------------------------------------

    def export_user(self, user_id: str) -> dict[str, Any]:
        """Everything stored about one user: sessions, their turns and messages, blackboard entries."""
        sessions = []
        for sid, pipeline, created, summary in self._db.execute(
            "SELECT id, pipeline, created_at, summary FROM sessions WHERE user_id = ? ORDER BY created_at", (user_id,)
        ).fetchall():
            turns = []
            for tid, number, status in self._db.execute(
                "SELECT id, number, status FROM turns WHERE session_id = ? ORDER BY number", (sid,)
            ).fetchall():
                messages = [
                    {"role": r, "agent": a, "content": c}
                    for r, a, c in self._db.execute(
                        "SELECT role, agent, content FROM messages WHERE turn_id = ? ORDER BY id", (tid,)
                    )
                ]
                entries = {name: {"status": e.status, "output": e.output, "error": e.error}
                           for name, e in self.entries(tid).items()}
                turns.append({"turn": number, "status": status, "messages": messages, "blackboard": entries})
            sessions.append({"session": sid, "pipeline": pipeline, "created_at": created, "summary": summary,
                             "turns": turns})
        return {"user": user_id, "sessions": sessions}

    async def forget_user(self, user_id: str) -> int:
        """Delete the user and everything stored about them; return the number of sessions deleted."""

        def write(db: sqlite3.Connection) -> int:
            (count,) = db.execute("SELECT COUNT(*) FROM sessions WHERE user_id = ?", (user_id,)).fetchone()
            db.execute("DELETE FROM users WHERE id = ?", (user_id,))  # cascades to sessions, turns, entries
            return int(count)

        deleted: int = await self.commit(write)
        return deleted

    def instance_events(self, *, since_wall: float) -> list[dict[str, Any]]:
        """Agent events since a wall-clock time, oldest first, with their turn's status."""
        self.flush_events()
        rows = self._db.execute(
            "SELECT e.turn_id, e.type, e.agent, e.data, t.status FROM events e JOIN turns t ON t.id = e.turn_id"
            " WHERE e.wall >= ? AND e.agent IS NOT NULL ORDER BY e.id",
            (since_wall,),
        ).fetchall()
        return [
            {"turn_id": turn_id, "type": kind, "agent": agent, "data": json.loads(data), "turn_status": status}
            for turn_id, kind, agent, data, status in rows
        ]

    def close(self) -> None:
        self.flush_events()
        self._db.close()

    # -- internals ------------------------------------------------------------------------

    def _transaction(self) -> _Transaction:
        return _Transaction(self)

    def _write_pending_events(self) -> int:
        """Insert the buffered events (those of deleted turns are dropped); return how many
        were taken, to be removed from the buffer only once the commit succeeded."""
        rows = list(self._pending_events)
        if rows:
            self._db.executemany(
                "INSERT INTO events (turn_id, type, agent, at_s, wall, data)"
                " SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM turns WHERE id = ?)",
                rows,
            )
        return len(rows)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, with buffered events written in the same commit."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store

    def __enter__(self) -> None:
        try:
            self.store._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(f"the database {self.store.path} is not writable: {exc}") from None

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        db = self.store._db
        if exc_type is not None:
            db.execute("ROLLBACK")
            return
        try:
            written = self.store._write_pending_events()
            db.execute("COMMIT")
        except Exception as error:
            db.execute("ROLLBACK")
            raise StoreError(f"write to {self.store.path} failed: {error}") from None
        del self.store._pending_events[:written]


_INSERT_ENTRY = (
    "INSERT INTO blackboard (turn_id, user_id, agent, status, output, error, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)


# One encoder, built once: json.dumps builds a new one for every call with options.
_encode = json.JSONEncoder(ensure_ascii=False).encode
# Event data is diagnostic: anything not JSON (a set, a model) is stored as its text.
_encode_event = json.JSONEncoder(ensure_ascii=False, default=str).encode


def _settle(future: asyncio.Future[Any], *, result: Any = None, error: BaseException | None = None) -> None:
    """Resolve a writer's future unless its caller was cancelled meanwhile."""
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def _json(output: Any) -> str | None:
    return None if output is None else _encode(output)


def _entry(row: tuple[Any, ...]) -> EntryRow:
    turn_id, agent, status, output, error = row
    return EntryRow(
        turn_id=turn_id,
        agent=agent,
        status=status,
        output=None if output is None else json.loads(output),
        error=error,
    )
