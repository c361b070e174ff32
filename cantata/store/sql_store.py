"""The store's methods, the same on SQLite and PostgreSQL: one class over a connection that
takes the statements of both (`connection.py`), behind the group committer.

Every read and write runs on the connection's one thread, through the committer
(`committer.py`, datasette's pattern: one thread owns the connection and is the only
writer of its store), so the event loop never waits on the database and the writes of one
loop tick share one commit. The longer reads are in `queries.py`, the schema in
`migrations.py`; what differs between the databases (opening, the transactions, a few
words of SQL) is in `sqlite_store.py` and `postgres_store.py`.
"""

from __future__ import annotations

import json
import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from functools import partial
from typing import Any, ClassVar, Generic, TypeVar

from cantata.errors import StoreError
from cantata.events import Event
from cantata.store import queries
from cantata.store.committer import Committer
from cantata.store.connection import Connection
from cantata.store.encoding import encode, encode_lenient
from cantata.store.protocols import RECENT_TURNS, Committed, Notifications
from cantata.store.reconnect import Reconnect
from cantata.store.rows import (
    AgentVersion,
    ApiKeyRow,
    ApprovalRow,
    Decided,
    EntryRow,
    Forgotten,
    InstanceEvent,
    PastTurn,
    SessionInfo,
    SessionRow,
    SessionSummary,
    StartedTurn,
    ToolCallRow,
    TurnContext,
    TurnRef,
    TurnRow,
    UnfinishedTurn,
)

T = TypeVar("T")
C = TypeVar("C", bound=Connection)


class SqlStore(ABC, Generic[C]):
    """A `Store` over one connection of type C. A subclass says how to connect and the few
    things the databases do differently (the class variables, `_migrate` and `_snapshot`)."""

    # The driver's errors.
    driver_error: ClassVar[type[Exception]]
    # A session's order among those created at the same instant (SQLite: its rowid).
    session_tiebreak: ClassVar[str]
    # How a fenced write locks the lease row it checks until it commits (SQLite has one writer).
    lock_lease: ClassVar[str] = ""

    def __init__(
        self,
        *,
        where: str,
        connect: Callable[[], C],
        close: Callable[[C], None],
        transaction: Callable[[C], AbstractContextManager[object]],
        store_events: Callable[[C, list[queries.EventValues]], int],
        explain: Callable[[BaseException], str] = str,
        reconnect: Reconnect[C, queries.EventValues] | None = None,
    ) -> None:
        """Opening does no I/O on the caller's thread: the committer's thread opens the
        database (and migrates it) before any other job. `where` names it in errors, and
        `explain` says the driver's errors in them; `reconnect`, for a database whose
        connection can be lost, how it is found again (every write here is safe to run
        again after a lost commit, by itself or with its `replay`)."""
        self.where = where
        self._explain = explain
        self._connect, self._close = connect, close
        self._committer: Committer[C, queries.EventValues] = Committer(
            name=where,
            open=self._open,
            close=close,
            transaction=transaction,
            store_events=store_events,
            explain=explain,
            reconnect=reconnect,
        )
        self._fences: dict[int, tuple[str, str]] = {}  # turn id -> (session id, lease holder)

    def _open(self) -> C:
        db = self._connect()
        try:
            self._migrate(db)
        except BaseException:
            self._close(db)
            raise
        return db

    @abstractmethod
    def _migrate(self, db: C) -> list[str]:
        """Apply the migrations not yet applied (`migrations.migrate`); return their names."""

    @abstractmethod
    def _snapshot(self, db: C) -> AbstractContextManager[object]:
        """A transaction whose statements all read one snapshot of the database."""

    async def _read(self, fn: Callable[[C], T]) -> T:
        return await self._committer.read(partial(_guarded, self.where, self.driver_error, self._explain, fn))

    async def commit(self, write: Callable[[C], Any]) -> Any:
        """Run `write` in the transaction shared by the writes of this tick and return its
        result once committed."""
        return await self._committer.write(write)

    # -- sessions and turns ---------------------------------------------------------------

    def new_session(self, user_id: str, pipeline: str) -> SessionRow:
        return SessionRow(id=secrets.token_hex(8), user_id=user_id, pipeline=pipeline)

    async def get_session(self, session_id: str) -> SessionRow | None:
        def read(db: C) -> SessionRow | None:
            row = db.execute("SELECT id, user_id, pipeline FROM sessions WHERE id = ?", (session_id,)).fetchone()
            return SessionRow(*row) if row else None

        return await self._read(read)

    async def sessions(self, user_id: str) -> list[SessionInfo]:
        def read(db: C) -> list[SessionInfo]:
            rows = db.execute(
                "SELECT id, user_id, pipeline, created_at, turn_count, summary FROM sessions"
                f" WHERE user_id = ? ORDER BY created_at DESC, {self.session_tiebreak} DESC",
                (user_id,),
            ).fetchall()
            return [SessionInfo(*row) for row in rows]

        return await self._read(read)

    async def start_turn(
        self, session: SessionRow, message: str, *, new_session: bool = False, memory: Sequence[str] = ()
    ) -> StartedTurn:
        now = time.time()

        def store(db: C) -> tuple[int, int]:
            if new_session:
                db.execute(
                    "INSERT INTO users (id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING", (session.user_id, now)
                )
                # Created with its first turn counted: nobody else can number a turn of it yet.
                db.execute(
                    "INSERT INTO sessions (id, user_id, pipeline, created_at, turn_count) VALUES (?, ?, ?, ?, 1)",
                    (session.id, session.user_id, session.pipeline, now),
                )
                number = 1
            else:
                # The session row's counter, incremented in place: the row lock makes the
                # number unique even with several writers (MAX(number)+1 would collide).
                counted = db.execute(
                    "UPDATE sessions SET turn_count = turn_count + 1 WHERE id = ? RETURNING turn_count", (session.id,)
                ).fetchone()
                if counted is None:
                    raise StoreError(f"no session '{session.id}'")
                number = int(counted[0])
            (turn_id,) = db.execute(
                "INSERT INTO turns (session_id, number, started_at) VALUES (?, ?, ?) RETURNING id",
                (session.id, number, now),
            ).fetchone()
            db.execute(
                "INSERT INTO messages (turn_id, role, agent, content, created_at) VALUES (?, 'user', NULL, ?, ?)",
                (turn_id, message, now),
            )
            return int(turn_id), number

        def stored(db: C) -> tuple[int, int]:
            # After a lost commit: the turn it stored, if it did. One turn of a session starts
            # at a time (its lease), so its start time tells it from the others.
            row = db.execute(
                "SELECT id, number FROM turns WHERE session_id = ? AND started_at = ?", (session.id, now)
            ).fetchone()
            return (int(row[0]), int(row[1])) if row is not None else store(db)

        def started(db: C, turn: tuple[int, int]) -> StartedTurn:
            # Read in the same transaction: the turn's agents wait on one crossing, not two.
            # A new session has no summary and no earlier turns; the user's memory spans sessions.
            turn_id, number = turn
            if new_session:
                context = TurnContext(memory=queries.latest_outputs(db, session.user_id, memory, turn_id))
            else:
                context = queries.turn_context(db, session, turn_id, memory)
            return StartedTurn(turn_id, number, context)

        result: StartedTurn = await self._committer.write(
            lambda db: started(db, store(db)), replay=lambda db: started(db, stored(db))
        )
        return result

    async def turn_context(self, session: SessionRow, turn_id: int, memory: Sequence[str] = ()) -> TurnContext:
        return await self._read(lambda db: queries.turn_context(db, session, turn_id, memory))

    def finish_turn(self, turn_id: int, status: str, replies: list[tuple[str, str]]) -> Awaitable[None]:
        now = time.time()
        fence = self._fences.get(turn_id)

        def write(db: C) -> None:
            self._check_fence(db, turn_id, fence)
            if status == "waiting":  # unless a person decided meanwhile: then it goes on (runtime.py)
                db.execute(
                    "UPDATE turns SET status = 'waiting', finished_at = ? WHERE id = ?"
                    " AND EXISTS (SELECT 1 FROM approvals WHERE turn_id = ? AND status = 'pending')",
                    (now, turn_id, turn_id),
                )
            else:
                db.execute("UPDATE turns SET status = ?, finished_at = ? WHERE id = ?", (status, now, turn_id))
            db.executemany(
                queries.INSERT_REPLY, [queries.reply_values(turn_id, agent, text, now) for agent, text in replies]
            )

        return self._committer.write(write)

    def add_reply(self, turn_id: int, agent: str, text: str) -> Awaitable[None]:
        row = queries.reply_values(turn_id, agent, text, time.time())
        fence = self._fences.get(turn_id)

        def write(db: C) -> None:
            self._check_fence(db, turn_id, fence)
            db.execute(queries.INSERT_REPLY, row)

        return self._committer.write(write, soon=False)

    async def get_turn(self, turn_id: int) -> TurnRow | None:
        def read(db: C) -> TurnRow | None:
            rows = queries.turn_rows(db, "t.id = ?", (turn_id,))
            return rows[0] if rows else None

        return await self._read(read)

    async def turns(self, session_id: str) -> list[TurnRow]:
        return await self._read(lambda db: queries.turn_rows(db, "t.session_id = ?", (session_id,)))

    async def user_turns(self, user_id: str, *, pipeline: str | None = None) -> list[TurnRow]:
        where, params = ["s.user_id = ?"], [user_id]
        if pipeline is not None:
            where.append("s.pipeline = ?")
            params.append(pipeline)
        return await self._read(lambda db: queries.turn_rows(db, " AND ".join(where), tuple(params), order="t.id DESC"))

    async def turn_messages(self, user_id: str, turns: Sequence[TurnRef]) -> dict[TurnRef, str]:
        if not turns:
            return {}
        return await self._read(lambda db: queries.turn_messages(db, user_id, turns))

    async def unfinished_turn(self, turn_id: int) -> UnfinishedTurn | None:
        def read(db: C) -> UnfinishedTurn | None:
            row = db.execute(
                """
                SELECT s.id, s.user_id, s.pipeline, t.number,
                       (SELECT content FROM messages WHERE turn_id = t.id AND role = 'user' ORDER BY id LIMIT 1)
                FROM turns t JOIN sessions s ON s.id = t.session_id WHERE t.id = ? AND t.status = 'running'
                """,
                (turn_id,),
            ).fetchone()
            if row is None:
                return None
            return UnfinishedTurn(SessionRow(row[0], row[1], row[2]), int(row[3]), str(row[4]))

        return await self._read(read)

    async def running_turns(self, session_id: str | None = None) -> list[int]:
        def read(db: C) -> list[int]:
            where, params = (
                ("status = 'running' AND session_id = ?", (session_id,)) if session_id else ("status = 'running'", ())
            )
            return [int(row[0]) for row in db.execute(f"SELECT id FROM turns WHERE {where} ORDER BY id", params)]

        return await self._read(read)

    async def session_summary(self, session_id: str) -> SessionSummary:
        return await self._read(lambda db: queries.summary(db, session_id))

    async def set_summary(self, session_id: str, summary: str, upto: int) -> None:
        def write(db: C) -> None:
            db.execute("UPDATE sessions SET summary = ?, summary_upto = ? WHERE id = ?", (summary, upto, session_id))

        await self.commit(write)

    async def recent_turns(
        self, session_id: str, before_turn: int, *, after_number: int = 0, limit: int = RECENT_TURNS
    ) -> list[PastTurn]:
        return await self._read(lambda db: queries.recent_turns(db, session_id, before_turn, after_number, limit))

    # -- session leases -------------------------------------------------------------------

    async def lease_session(
        self, session_id: str, holder: str, *, ttl_s: float, take_from: str | None = None
    ) -> str | None:
        now = time.time()

        def write(db: C) -> str | None:
            # The lease row's columns named with its table: PostgreSQL finds a bare `holder`
            # ambiguous beside `excluded.holder`.
            db.execute(
                "INSERT INTO session_leases (session_id, holder, expires_at) VALUES (?, ?, ?)"
                " ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at"
                " WHERE session_leases.holder = excluded.holder OR session_leases.expires_at < ?"
                " OR session_leases.holder = ?",
                (session_id, holder, now + ttl_s, now, take_from),
            )
            (current,) = db.execute("SELECT holder FROM session_leases WHERE session_id = ?", (session_id,)).fetchone()
            return None if current == holder else str(current)

        held: str | None = await self.commit(write)
        return held

    async def release_session(self, session_id: str, holder: str) -> None:
        await self.commit(
            lambda db: db.execute(
                "DELETE FROM session_leases WHERE session_id = ? AND holder = ?", (session_id, holder)
            )
        )

    def fence_turn(self, turn_id: int, session_id: str, holder: str | None) -> None:
        self._fences.pop(turn_id, None)
        if holder is not None:
            self._fences[turn_id] = (session_id, holder)

    def _check_fence(self, db: C, turn_id: int, fence: tuple[str, str] | None) -> None:
        """Refuse a fenced turn's write once its session's lease has another holder. The row
        stays locked until the write commits, so a takeover waits for it, never the reverse."""
        if fence is None:
            return
        session_id, holder = fence
        row = db.execute(
            f"SELECT holder FROM session_leases WHERE session_id = ?{self.lock_lease}", (session_id,)
        ).fetchone()
        if row is None or row[0] != holder:
            now = f"{row[0]} holds it now" if row else "nobody holds it now"
            raise StoreError(f"turn {turn_id}: this process lost its session's lease ({now}); its write is refused")

    # -- blackboard -----------------------------------------------------------------------

    def write_entry(
        self,
        *,
        turn_id: int,
        user_id: str,
        agent: str,
        status: str,
        output: Any,
        error: str | None,
        iteration: int = 0,
    ) -> Awaitable[None]:
        try:
            data = None if output is None else encode(output)
        except (TypeError, ValueError) as exc:  # a set, an object, a cycle: fails its agent alone
            raise StoreError(f"the output of agent '{agent}' is not JSON data: {exc}") from exc
        row = (turn_id, user_id, agent, iteration, status, data, error, time.time())
        fence = self._fences.get(turn_id)

        def write(db: C) -> None:
            self._check_fence(db, turn_id, fence)
            if db.execute(queries.INSERT_ENTRY, row).fetchone() is not None:
                return
            there = db.execute(
                "SELECT user_id, agent, iteration, status, output, error, created_at FROM blackboard"
                " WHERE turn_id = ? AND agent = ? AND iteration = ?",
                (turn_id, agent, iteration),
            ).fetchone()
            # Refused unless it is this very write, stored by a commit whose outcome was lost.
            if there is None or tuple(there) != row[1:]:
                which = f" (iteration {iteration})" if iteration else ""
                raise StoreError(f"turn {turn_id} already has an entry for agent '{agent}'{which}")

        # Not soon: readers start on the queued entry, and the turn waits for its commit
        # only at the end, so the entries of a quick turn share one commit with its finish.
        return self._committer.write(write, soon=False)

    async def entries(self, turn_id: int) -> dict[str, EntryRow]:
        return {entry.agent: entry for entry in await self.entry_history(turn_id)}

    async def entry_history(self, turn_id: int) -> list[EntryRow]:
        return await self._read(lambda db: queries.entry_rows(db, "turn_id = ?", (turn_id,)))

    async def entry_histories(
        self, turn_ids: Sequence[int], agents: Sequence[str] | None = None
    ) -> dict[int, list[EntryRow]]:
        return await self._read(lambda db: queries.entry_histories(db, turn_ids, agents))

    async def latest_outputs(self, user_id: str, agents: list[str], before_turn: int) -> dict[str, EntryRow]:
        if not agents:
            return {}
        return await self._read(lambda db: queries.latest_outputs(db, user_id, agents, before_turn))

    # -- tool calls -----------------------------------------------------------------------

    def record_tool_calls(self, rows: Sequence[ToolCallRow]) -> Awaitable[None]:
        values = _tool_call_values(rows)

        def write(db: C) -> None:
            db.executemany(queries.UPSERT_TOOL_CALL, values)

        return self._committer.write(write)

    async def tool_calls(self, turn_ids: Sequence[int]) -> dict[int, list[ToolCallRow]]:
        return await self._read(lambda db: queries.tool_calls(db, turn_ids))

    # -- approvals ------------------------------------------------------------------------

    async def request_approvals(self, rows: Sequence[ToolCallRow]) -> list[int]:
        values = _tool_call_values(rows)
        places = [(r.turn_id, r.agent, r.iteration, r.step, r.index) for r in rows]
        now = time.time()

        def write(db: C) -> list[int]:
            db.executemany(queries.UPSERT_TOOL_CALL, values)
            db.executemany(
                "INSERT INTO approvals (turn_id, agent, iteration, step, idx, created_at) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (turn_id, agent, iteration, step, idx) DO NOTHING",
                [(*place, now) for place in places],
            )
            return [
                int(
                    db.execute(
                        "SELECT id FROM approvals WHERE turn_id = ? AND agent = ? AND iteration = ? AND step = ?"
                        " AND idx = ?",
                        place,
                    ).fetchone()[0]
                )
                for place in places
            ]

        ids: list[int] = await self.commit(write)
        return ids

    async def approvals(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        turn_id: int | None = None,
        approval_id: int | None = None,
        pending: bool = False,
    ) -> list[ApprovalRow]:
        filters = {"s.user_id": user_id, "t.session_id": session_id, "a.turn_id": turn_id, "a.id": approval_id}
        where = [f"{column} = ?" for column, value in filters.items() if value is not None]
        params = tuple(value for value in filters.values() if value is not None)
        if pending:
            where.append("a.status = 'pending'")
        return await self._read(lambda db: queries.approval_rows(db, " AND ".join(where) or "1 = 1", params))

    async def decide_approval(self, approval_id: int, *, approved: bool, reason: str | None, by: str) -> Decided | None:
        now = time.time()

        def write(db: C) -> Decided | None:
            decided = db.execute(
                "UPDATE approvals SET status = ?, reason = ?, decided_by = ?, decided_at = ?"
                " WHERE id = ? AND status = 'pending' RETURNING turn_id",
                ("approved" if approved else "denied", reason, by, now, approval_id),
            ).fetchone()
            if decided is None:
                return None
            (turn_id,) = decided
            left = db.execute(
                "SELECT 1 FROM approvals WHERE turn_id = ? AND status = 'pending' LIMIT 1", (turn_id,)
            ).fetchone()
            resumed = (
                left is None
                and db.execute(
                    "UPDATE turns SET status = 'running', finished_at = NULL WHERE id = ? AND status = 'waiting'"
                    " RETURNING id",
                    (turn_id,),
                ).fetchone()
                is not None
            )
            (row,) = queries.approval_rows(db, "a.id = ?", (approval_id,))
            return Decided(row, resumable=resumed)

        result: Decided | None = await self.commit(write)
        return result

    # -- events ---------------------------------------------------------------------------

    def record_event(self, event: Event) -> None:
        """Encoded now, so that data that cannot be stored fails here, not in a later commit."""
        if not event.persisted:
            return
        data = encode_lenient(event.data) if event.data else "{}"
        self._committer.record(event, (event.turn_id, event.type, event.agent, event.at_s, event.wall, data))

    def on_commit(self, callback: Committed) -> None:
        self._committer.on_commit(callback)

    async def events(self, turn_id: int) -> list[Event]:
        await self._committer.flush()
        return await self._read(lambda db: queries.event_rows(db, "e.turn_id = ?", (turn_id,), queries.ALL))

    async def turn_events(self, turn_ids: Sequence[int]) -> dict[int, list[Event]]:
        await self._committer.flush()
        return await self._read(lambda db: queries.turn_events(db, turn_ids))

    async def events_after(
        self, seq: int, *, user_id: str | None = None, turn_id: int | None = None, limit: int = 1000
    ) -> list[Event]:
        await self._committer.flush()
        where, params = ["e.id > ?"], [seq]  # type: list[str], list[Any]
        if user_id is not None:
            where.append("s.user_id = ?")
            params.append(user_id)
        if turn_id is not None:
            where.append("e.turn_id = ?")
            params.append(turn_id)
        return await self._read(lambda db: queries.event_rows(db, " AND ".join(where), tuple(params), limit))

    async def last_event_seq(self) -> int:
        await self._committer.flush()
        return await self._read(lambda db: int(db.execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()[0]))

    def notifications(self) -> Notifications | None:
        return None

    async def instance_events(self, *, since_wall: float, user_id: str | None = None) -> list[InstanceEvent]:
        await self._committer.flush()

        # One user's, or everyone's: the condition is left out rather than written as
        # `? IS NULL OR ...`, whose parameter PostgreSQL cannot type.
        mine, params = ("", (since_wall,)) if user_id is None else (" AND s.user_id = ?", (since_wall, user_id))

        def read(db: C) -> list[InstanceEvent]:
            rows = db.execute(
                "SELECT e.turn_id, e.type, e.agent, e.data, t.status, e.wall, s.user_id FROM events e"
                " JOIN turns t ON t.id = e.turn_id JOIN sessions s ON s.id = t.session_id"
                f" WHERE e.wall >= ? AND e.agent IS NOT NULL{mine} ORDER BY e.id",
                params,
            ).fetchall()
            return [
                InstanceEvent(turn_id, kind, agent, json.loads(data), status, wall, user)
                for turn_id, kind, agent, data, status, wall, user in rows
            ]

        return await self._read(read)

    # -- deployed agents ------------------------------------------------------------------

    async def add_agent_version(
        self, name: str, *, forced: bool, sandboxed: bool, task_turn: int | None, summary: dict[str, Any]
    ) -> int:
        now = time.time()

        def stored(db: C) -> int:
            # After a lost commit: the version it stored, if it did (known by its name and time).
            row = db.execute(
                "SELECT version FROM agent_versions WHERE name = ? AND created_at = ?", (name, now)
            ).fetchone()
            return int(row[0]) if row is not None else write(db)

        def write(db: C) -> int:
            db.execute("INSERT INTO agents (name, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING", (name, now))
            (version,) = db.execute(
                "UPDATE agents SET latest_version = latest_version + 1, active_version = latest_version + 1"
                " WHERE name = ? RETURNING latest_version",
                (name,),
            ).fetchone()
            db.execute(
                "INSERT INTO agent_versions (name, version, created_at, forced, sandboxed, task_turn, summary)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (name, version, now, int(forced), int(sandboxed), task_turn, encode(summary)),
            )
            return int(version)

        version: int = await self._committer.write(write, replay=stored)
        return version

    async def agent_versions(self, name: str | None = None) -> list[AgentVersion]:
        def read(db: C) -> list[AgentVersion]:
            rows = db.execute(
                "SELECT v.name, v.version, v.created_at, v.version = a.active_version, v.forced, v.sandboxed,"
                " v.task_turn, v.summary FROM agent_versions v JOIN agents a ON a.name = v.name"
                + (" WHERE v.name = ?" if name is not None else "")
                + " ORDER BY v.name, v.version",
                (name,) if name is not None else (),
            ).fetchall()
            return [
                AgentVersion(n, v, c, bool(active), bool(forced), bool(sandboxed), task, json.loads(summary))
                for n, v, c, active, forced, sandboxed, task, summary in rows
            ]

        return await self._read(read)

    async def activate_agent(self, name: str, version: int) -> bool:
        def write(db: C) -> bool:
            found = db.execute(
                "SELECT 1 FROM agent_versions WHERE name = ? AND version = ?", (name, version)
            ).fetchone()
            if found:
                db.execute("UPDATE agents SET active_version = ? WHERE name = ?", (version, name))
            return found is not None

        done: bool = await self.commit(write)
        return done

    async def remove_agent(self, name: str) -> int:
        # Safe to run again after a lost commit; the count it then returns is 0.
        def write(db: C) -> int:
            (count,) = db.execute("SELECT COUNT(*) FROM agent_versions WHERE name = ?", (name,)).fetchone()
            db.execute("DELETE FROM agents WHERE name = ?", (name,))
            return int(count)

        removed: int = await self.commit(write)
        return removed

    # -- API keys -------------------------------------------------------------------------

    async def add_api_key(self, key: ApiKeyRow) -> bool:
        row = (key.id, key.user_id, key.hash, int(key.admin), key.created_at, key.revoked_at)

        # Safe to run again after a lost commit: the key then found under the id is this one.
        def write(db: C) -> bool:
            db.execute(queries.INSERT_API_KEY, row)
            (stored,) = db.execute("SELECT hash FROM api_keys WHERE id = ?", (key.id,)).fetchone()
            return bool(stored == key.hash)

        added: bool = await self.commit(write)
        return added

    async def api_key(self, key_id: str) -> ApiKeyRow | None:
        found = await self._read(lambda db: queries.api_keys(db, " WHERE id = ?", (key_id,)))
        return found[0] if found else None

    async def api_keys(self) -> list[ApiKeyRow]:
        return await self._read(queries.api_keys)

    async def revoke_api_key(self, key_id: str) -> ApiKeyRow | None:
        now = time.time()

        # Safe to run again after a lost commit: the key it revoked is found by the time of it.
        def write(db: C) -> ApiKeyRow | None:
            db.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (now, key_id))
            revoked = queries.api_keys(db, " WHERE id = ? AND revoked_at = ?", (key_id, now))
            return revoked[0] if revoked else None

        found: ApiKeyRow | None = await self.commit(write)
        return found

    # -- a user's data --------------------------------------------------------------------

    async def export_user(self, user_id: str) -> dict[str, Any]:
        def read(db: C) -> dict[str, Any]:
            # Its statements read one snapshot: a turn another process adds between them
            # would otherwise appear in one (its messages) and not in another (the turns).
            with self._snapshot(db):
                return queries.export_user(db, user_id)

        await self._committer.flush()
        return await self._read(read)

    async def forget_user(self, user_id: str) -> Forgotten:
        forget = partial(queries.forget_user, user_id=user_id)

        def replay(db: C) -> Forgotten:
            # After a lost commit that deleted the user, what it deleted cannot be listed
            # again: say so rather than report nothing deleted (the files beside would stay).
            if db.execute("SELECT 1 FROM users WHERE id = ?", (user_id,)).fetchone() is None:
                raise StoreError(
                    f"the connection to {self.where} was lost as the forget of '{user_id}' was committed: their rows"
                    " are deleted, but which ones went is unknown, so the files kept for them under CANTATA_HOME"
                    " were not removed; remove them by hand"
                )
            return forget(db)

        deleted: Forgotten = await self._committer.write(forget, replay=replay)
        await self._read(self._erase_deleted)
        return deleted

    def _erase_deleted(self, db: C) -> None:
        """Whatever the database keeps of deleted rows beyond the rows themselves, erased
        after a user is forgotten; nothing by default."""

    # -- schema and lifetime --------------------------------------------------------------

    async def migrate(self) -> list[str]:
        """Apply the migrations not yet applied, in order; return their names."""
        return await self._read(self._migrate)

    async def applied_migrations(self) -> list[str]:
        return await self._read(lambda db: [row[0] for row in db.execute("SELECT name FROM migrations ORDER BY name")])

    async def close(self) -> None:
        await self._committer.close()


def _guarded(
    where: str, error: type[Exception], explain: Callable[[BaseException], str], fn: Callable[[C], T], db: C
) -> T:
    try:
        return fn(db)
    except error as exc:
        raise StoreError(f"reading {where} failed: {explain(exc)}") from exc


def _tool_call_values(rows: Sequence[ToolCallRow]) -> list[tuple[Any, ...]]:
    """Tool calls as UPSERT_TOOL_CALL's parameters."""
    now = time.time()
    return [
        (
            r.turn_id, r.agent, r.iteration, r.step, r.index, r.call_id, r.tool, encode_lenient(r.arguments),
            r.status, r.result, r.error, r.duration_s, r.bytes, int(r.side_effects), now,
        )
        for r in rows
    ]  # fmt: skip
