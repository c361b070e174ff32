"""The store's longer reads, as functions of a connection (run on the store's thread), in
SQL that SQLite and PostgreSQL both take.

Each read is one statement whatever the number of rows it gathers (a user's turns, a
turn's replies, the latest entry of each memory agent), so its cost does not grow with
queries per row: tests/test_store_sqlite.py counts them. A read by a list of turn ids
takes one statement per `CHUNK` ids (SQLite bounds the parameters of one statement).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, TypeVar, cast

from cantata.events import Event, EventType
from cantata.store.connection import Connection
from cantata.store.protocols import RECENT_TURNS
from cantata.store.rows import (
    ApiKeyRow,
    ApprovalRow,
    EntryRow,
    Forgotten,
    PastTurn,
    SessionRow,
    SessionSummary,
    ToolCallRow,
    TurnContext,
    TurnRef,
    TurnRow,
)

# An event as stored: (turn_id, type, agent, at_s, wall, data as JSON text).
EventValues = tuple[int, str, str | None, float, float, str]

# Both safe to run again after a commit whose outcome was lost (reconnect.py): an entry
# already there is returned nothing for (the caller tells its own from another writer's),
# and an agent's reply in a turn is stored once, whatever runs it.
INSERT_ENTRY = (
    "INSERT INTO blackboard (turn_id, user_id, agent, iteration, status, output, error, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING 1"
)
INSERT_REPLY = (
    "INSERT INTO messages (turn_id, role, agent, content, created_at) SELECT ?, 'assistant', ?, ?, ?"
    " WHERE NOT EXISTS (SELECT 1 FROM messages WHERE turn_id = ? AND role = 'assistant' AND agent = ?)"
)
# Safe to run again after a commit whose outcome was lost: a call's row is replaced by its own.
UPSERT_TOOL_CALL = (
    "INSERT INTO tool_calls (turn_id, agent, iteration, step, idx, call_id, tool, arguments, status, result, error,"
    " duration_s, bytes, side_effects, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (turn_id, agent, iteration, step, idx) DO UPDATE SET status = excluded.status,"
    " result = excluded.result, error = excluded.error, duration_s = excluded.duration_s, bytes = excluded.bytes"
)
# A key whose id is taken is not stored: the caller compares the hash stored under its id with
# its own, which also tells its own key, stored by a commit whose outcome was lost.
INSERT_API_KEY = (
    "INSERT INTO api_keys (id, user_id, hash, admin, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT DO NOTHING"
)
ENTRY_COLUMNS = "turn_id, agent, status, output, error, iteration"
CHUNK = 500  # ids per statement, well under SQLite's oldest parameter limit (999)
ALL = 2**63 - 1  # as a LIMIT: no limit (PostgreSQL takes no negative one)

R = TypeVar("R", EntryRow, Event, ToolCallRow)


def marks(values: Sized) -> str:
    """ "?, ?, ...": one parameter per value, for an `IN (...)`."""
    return ", ".join("?" * len(values))


def in_chunks(ids: Iterable[int]) -> Iterator[tuple[str, list[int]]]:
    """The distinct `ids`, ascending, `CHUNK` at a time, each with its marks."""
    distinct = sorted(set(ids))
    for start in range(0, len(distinct), CHUNK):
        chunk = distinct[start : start + CHUNK]
        yield marks(chunk), chunk


def by_turn(turn_ids: Iterable[int], rows: Iterable[R]) -> dict[int, list[R]]:
    """`rows` grouped by their turn, in the order given; every turn asked for has a list."""
    found: dict[int, list[R]] = {turn_id: [] for turn_id in turn_ids}
    for row in rows:
        found[row.turn_id].append(row)
    return found


def insert_events(db: Connection, rows: list[EventValues]) -> int:
    """Insert buffered events with consecutive ids after the largest ever given (deleted ones
    included: `forget_user` keeps it); return that largest. Under SQLite's BEGIN IMMEDIATE
    (PostgreSQL: a lock on the table, see postgres_store.py) no other writer can take the same
    ids, and ids follow the order of commits. Events of turns deleted meanwhile (a user
    forgotten mid-turn) are not inserted, leaving a gap."""
    largest, given = db.execute("SELECT COALESCE(MAX(id), 0), (SELECT last FROM event_numbers) FROM events").fetchone()
    base = max(largest, given)
    # Which of their turns exist, asked once per turn rather than once per event (in
    # chunks: SQLite bounds the parameters of one statement).
    existing: set[int] = set()
    for chunk_marks, chunk in in_chunks(row[0] for row in rows):
        existing.update(found for (found,) in db.execute(f"SELECT id FROM turns WHERE id IN ({chunk_marks})", chunk))
    db.executemany(
        "INSERT INTO events (id, turn_id, type, agent, at_s, wall, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(base + i, *row) for i, row in enumerate(rows, start=1) if row[0] in existing],
    )
    return int(base)


def reply_values(turn_id: int, agent: str, text: str, at: float) -> tuple[Any, ...]:
    """INSERT_REPLY's parameters."""
    return (turn_id, agent, text, at, turn_id, agent)


def stored_events(db: Connection, rows: list[EventValues]) -> int | None:
    """The id before `rows` if a commit whose outcome was lost stored them (`insert_events`
    numbered them after it), else None. An event is found by its turn, type and both its
    clocks, which no two events share; one found tells for the whole commit. (A row whose
    turn is gone, forgotten meanwhile, was not stored either way: the next one tells.)"""
    for offset, (turn_id, kind, _, at_s, wall, _) in enumerate(rows, start=1):
        found = db.execute(
            "SELECT id FROM events WHERE turn_id = ? AND type = ? AND at_s = ? AND wall = ?",
            (turn_id, kind, at_s, wall),
        ).fetchone()
        if found is not None:
            return int(found[0]) - offset
        if db.execute("SELECT 1 FROM turns WHERE id = ?", (turn_id,)).fetchone() is not None:
            return None
    return None


def summary(db: Connection, session_id: str) -> SessionSummary:
    row = db.execute("SELECT summary, summary_upto FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return SessionSummary(str(row[0]), int(row[1])) if row else SessionSummary("", 0)


def recent_turns(db: Connection, session_id: str, before_turn: int, after_number: int, limit: int) -> list[PastTurn]:
    rows = db.execute(
        """
        SELECT t.id, t.number,
               (SELECT content FROM messages WHERE turn_id = t.id AND role = 'user' ORDER BY id LIMIT 1),
               (SELECT content FROM messages WHERE turn_id = t.id AND role = 'assistant'
                ORDER BY id DESC LIMIT 1)
        FROM turns t WHERE t.session_id = ? AND t.id < ? AND t.number > ?
        ORDER BY t.number DESC LIMIT ?
        """,
        (session_id, before_turn, after_number, limit),
    ).fetchall()
    return [PastTurn(*row) for row in reversed(rows)]


def turn_messages(db: Connection, user_id: str, turns: Sequence[TurnRef]) -> dict[TurnRef, str]:
    """One statement per CHUNK // 2 turns (two parameters each): the user's first message of
    each turn, found by the (session_id, number) index, of the user's sessions only."""
    distinct = list(dict.fromkeys(turns))
    found: dict[TurnRef, str] = {}
    for start in range(0, len(distinct), CHUNK // 2):
        chunk = distinct[start : start + CHUNK // 2]
        rows = db.execute(
            f"""
            SELECT t.session_id, t.number,
                   (SELECT content FROM messages WHERE turn_id = t.id AND role = 'user' ORDER BY id LIMIT 1)
            FROM turns t JOIN sessions s ON s.id = t.session_id
            WHERE s.user_id = ? AND (t.session_id, t.number) IN (VALUES {", ".join(["(?, ?)"] * len(chunk))})
            """,
            [user_id, *(value for ref in chunk for value in ref)],
        )
        found.update((TurnRef(session, number), content) for session, number, content in rows if content is not None)
    return found


def latest_outputs(db: Connection, user_id: str, agents: Sequence[str], before_turn: int) -> dict[str, EntryRow]:
    """One statement for all the agents: a UNION of one indexed look-up per agent (a window
    over the user's entries would read every entry they ever had)."""
    if not agents:
        return {}
    one = (
        f"SELECT * FROM (SELECT {ENTRY_COLUMNS} FROM blackboard"
        " WHERE user_id = ? AND agent = ? AND status = 'ok' AND turn_id < ?"
        " ORDER BY turn_id DESC, iteration DESC LIMIT 1) AS latest"
    )
    rows = db.execute(
        " UNION ALL ".join([one] * len(agents)), [value for a in agents for value in (user_id, a, before_turn)]
    )
    found = {row[1]: entry(row) for row in rows}
    return {agent: found[agent] for agent in agents if agent in found}  # in the order asked for


def turn_context(db: Connection, session: SessionRow, turn_id: int, memory: Sequence[str]) -> TurnContext:
    text, upto = summary(db, session.id)
    return TurnContext(
        memory=latest_outputs(db, session.user_id, memory, turn_id),
        summary=text,
        summary_upto=upto,
        recent=recent_turns(db, session.id, turn_id, 0, RECENT_TURNS),
    )


def turn_rows(db: Connection, where: str, params: tuple[Any, ...], *, order: str = "t.number, t.id") -> list[TurnRow]:
    """The turns `where` says, in `order`, each with its replies: one row per reply (or one
    for a turn without any), grouped here."""
    rows = db.execute(
        f"""
        SELECT t.id, t.session_id, s.user_id, s.pipeline, t.number, t.status, t.started_at, t.finished_at,
               (SELECT content FROM messages WHERE turn_id = t.id AND role = 'user' ORDER BY id LIMIT 1),
               r.agent, r.content
        FROM turns t JOIN sessions s ON s.id = t.session_id
        LEFT JOIN messages r ON r.turn_id = t.id AND r.role = 'assistant'
        WHERE {where} ORDER BY {order}, r.id
        """,
        params,
    )
    turns: list[TurnRow] = []
    for turn_id, session_id, user_id, pipeline, number, status, started, finished, message, agent, content in rows:
        if not turns or turns[-1].id != turn_id:
            turns.append(
                TurnRow(turn_id, session_id, user_id, pipeline, number, status, started, finished, message, [])
            )
        if content is not None:
            turns[-1].replies.append((str(agent), str(content)))
    return turns


def event_rows(db: Connection, where: str, params: tuple[Any, ...], limit: int) -> list[Event]:
    rows = db.execute(
        "SELECT e.id, e.turn_id, t.session_id, s.user_id, e.type, e.agent, e.at_s, e.wall, e.data"
        " FROM events e JOIN turns t ON t.id = e.turn_id JOIN sessions s ON s.id = t.session_id"
        f" WHERE {where} ORDER BY e.id LIMIT ?",
        (*params, limit),
    ).fetchall()
    return [
        Event(cast(EventType, kind), turn_id, session_id, at_s, agent, json.loads(data), wall, user_id, seq)
        for seq, turn_id, session_id, user_id, kind, agent, at_s, wall, data in rows
    ]


def turn_events(db: Connection, turn_ids: Sequence[int]) -> dict[int, list[Event]]:
    """The events of the turns, by turn, in the order stored: one statement per chunk of
    turns (a turn's events are all in its chunk's, so they stay in order)."""
    return by_turn(
        turn_ids,
        (
            event
            for chunk_marks, chunk in in_chunks(turn_ids)
            for event in event_rows(db, f"e.turn_id IN ({chunk_marks})", tuple(chunk), ALL)
        ),
    )


def entry_rows(db: Connection, where: str, params: Sequence[Any]) -> list[EntryRow]:
    """The entries `where` says, in the order written (a looped agent's iterations in turn)."""
    rows = db.execute(
        f"SELECT {ENTRY_COLUMNS} FROM blackboard WHERE {where} ORDER BY created_at, iteration", params
    ).fetchall()
    return [entry(row) for row in rows]


def entry_histories(db: Connection, turn_ids: Sequence[int], agents: Sequence[str] | None) -> dict[int, list[EntryRow]]:
    """Every entry of the turns (of `agents` only, if given), by turn, in the order written:
    one statement per chunk of turns."""
    if agents is None:
        of_agents, named = "", []
    elif agents:
        of_agents, named = f" AND agent IN ({marks(agents)})", list(agents)
    else:
        return by_turn(turn_ids, [])
    return by_turn(
        turn_ids,
        (
            row
            for chunk_marks, chunk in in_chunks(turn_ids)
            for row in entry_rows(db, f"turn_id IN ({chunk_marks}){of_agents}", [*chunk, *named])
        ),
    )


def entry(row: tuple[Any, ...]) -> EntryRow:
    turn_id, agent, status, output, error, iteration = row
    return EntryRow(
        turn_id=turn_id,
        agent=agent,
        status=status,
        output=None if output is None else json.loads(output),
        error=error,
        iteration=iteration,
    )


def export_user(db: Connection, user_id: str) -> dict[str, Any]:
    """Everything stored about the user in six statements (sessions, turns, messages,
    entries, tool calls, approvals), however many turns they had, assembled here."""
    sessions: dict[str, dict[str, Any]] = {
        sid: {"session": sid, "pipeline": pipeline, "created_at": created, "summary": text, "turns": []}
        for sid, pipeline, created, text in db.execute(
            "SELECT id, pipeline, created_at, summary FROM sessions WHERE user_id = ? ORDER BY created_at", (user_id,)
        )
    }
    of_user = "SELECT t.id FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.user_id = ?"
    turns: dict[int, dict[str, Any]] = {}
    for turn_id, session_id, number, status in db.execute(
        "SELECT t.id, t.session_id, t.number, t.status FROM turns t JOIN sessions s ON s.id = t.session_id"
        " WHERE s.user_id = ? ORDER BY t.number, t.id",
        (user_id,),
    ):
        turns[turn_id] = {"turn": number, "status": status, "messages": [], "blackboard": {}}
        sessions[session_id]["turns"].append(turns[turn_id])
    for turn_id, role, agent, content in db.execute(
        f"SELECT turn_id, role, agent, content FROM messages WHERE turn_id IN ({of_user}) ORDER BY id", (user_id,)
    ):
        turns[turn_id]["messages"].append({"role": role, "agent": agent, "content": content})
    history = by_turn(turns, entry_rows(db, f"turn_id IN ({of_user})", (user_id,)))
    for turn_id, entries in history.items():
        latest = {e.agent: e for e in entries}
        turns[turn_id]["blackboard"] = {
            e.agent: {"status": e.status, "output": e.output, "error": e.error} for e in latest.values()
        }
        earlier = [
            {"agent": e.agent, "iteration": e.iteration, "status": e.status, "output": e.output, "error": e.error}
            for e in entries
            if latest[e.agent] is not e
        ]
        if earlier:
            turns[turn_id]["earlier_iterations"] = earlier
    for call in tool_call_rows(db, f"turn_id IN ({of_user})", (user_id,)):
        turns[call.turn_id].setdefault("tool_calls", []).append({"agent": call.agent, **call.as_json()})
    for approval in approval_rows(db, f"a.turn_id IN ({of_user})", (user_id,)):
        turns[approval.turn_id].setdefault("approvals", []).append(approval.as_json())
    return {"user": user_id, "sessions": list(sessions.values())}


def forget_user(db: Connection, user_id: str) -> Forgotten:
    """Delete the user's rows and the agent versions built from their turns (one transaction:
    the caller's); what went, for the files beside them."""
    (sessions,) = db.execute("SELECT COUNT(*) FROM sessions WHERE user_id = ?", (user_id,)).fetchone()
    turns = tuple(
        turn
        for (turn,) in db.execute(
            "SELECT t.id FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.user_id = ? ORDER BY t.id",
            (user_id,),
        )
    )
    versions: list[tuple[str, int]] = []
    for where, ids in in_chunks(turns):
        versions += db.execute(
            f"DELETE FROM agent_versions WHERE task_turn IN ({where}) RETURNING name, version", ids
        ).fetchall()
    touched = sorted({name for name, _ in versions})
    emptied: list[str] = []
    for name in touched:
        left = db.execute("SELECT MAX(version) FROM agent_versions WHERE name = ?", (name,)).fetchone()[0]
        if left is None:
            db.execute("DELETE FROM agents WHERE name = ?", (name,))
            emptied.append(name)
        else:  # the active version may have gone: the newest remaining takes over
            db.execute(
                "UPDATE agents SET active_version = ? WHERE name = ? AND active_version NOT IN"
                " (SELECT version FROM agent_versions WHERE name = ?)",
                (left, name, name),
            )
    db.execute("DELETE FROM session_leases WHERE session_id IN (SELECT id FROM sessions WHERE user_id = ?)", (user_id,))
    # The largest event number given outlives the events (insert_events numbers after it).
    db.execute("UPDATE event_numbers SET last = (SELECT MAX(id) FROM events) WHERE last < (SELECT MAX(id) FROM events)")
    db.execute("DELETE FROM users WHERE id = ?", (user_id,))  # cascades to sessions, turns, entries, events
    return Forgotten(int(sessions), turns, tuple(sorted(versions)), tuple(emptied))


def tool_calls(db: Connection, turn_ids: Sequence[int]) -> dict[int, list[ToolCallRow]]:
    rows: list[ToolCallRow] = []
    for chunk_marks, chunk in in_chunks(turn_ids):
        rows += tool_call_rows(db, f"turn_id IN ({chunk_marks})", chunk)
    return by_turn(turn_ids, rows)


def tool_call_rows(db: Connection, where: str, params: Sequence[Any]) -> list[ToolCallRow]:
    return [
        ToolCallRow(
            turn_id, agent, iteration, step, idx, call_id, tool, json.loads(arguments), status, result, error,
            duration_s, bytes_, bool(side_effects),
        )
        for turn_id, agent, iteration, step, idx, call_id, tool, arguments, status, result, error, duration_s,
        bytes_, side_effects in db.execute(
            "SELECT turn_id, agent, iteration, step, idx, call_id, tool, arguments, status, result, error,"
            f" duration_s, bytes, side_effects FROM tool_calls WHERE {where}"
            " ORDER BY turn_id, agent, iteration, step, idx",
            params,
        )
    ]  # fmt: skip


def api_keys(db: Connection, where: str = "", params: tuple[Any, ...] = ()) -> list[ApiKeyRow]:
    """The API keys matching `where` (none: all), oldest first."""
    rows = db.execute(
        f"SELECT id, user_id, hash, admin, created_at, revoked_at FROM api_keys{where} ORDER BY created_at, id",
        params,
    ).fetchall()
    return [
        ApiKeyRow(key_id, user, digest, bool(admin), created, revoked)
        for key_id, user, digest, admin, created, revoked in rows
    ]


def approval_rows(db: Connection, where: str, params: Sequence[Any]) -> list[ApprovalRow]:
    """Approvals with their call (tool, arguments) and whose turn it is, oldest first."""
    return [
        ApprovalRow(
            int(id_), int(turn_id), session_id, user_id, pipeline, agent, int(iteration), int(step), int(idx),
            call_id, tool, json.loads(arguments), status, reason, decided_by, created_at, decided_at,
        )
        for id_, turn_id, session_id, user_id, pipeline, agent, iteration, step, idx, call_id, tool, arguments,
        status, reason, decided_by, created_at, decided_at in db.execute(
            "SELECT a.id, a.turn_id, t.session_id, s.user_id, s.pipeline, a.agent, a.iteration, a.step, a.idx,"
            " c.call_id, c.tool, c.arguments, a.status, a.reason, a.decided_by, a.created_at, a.decided_at"
            " FROM approvals a JOIN turns t ON t.id = a.turn_id JOIN sessions s ON s.id = t.session_id"
            " JOIN tool_calls c ON (c.turn_id, c.agent, c.iteration, c.step, c.idx)"
            " = (a.turn_id, a.agent, a.iteration, a.step, a.idx)"
            f" WHERE {where} ORDER BY a.id",
            params,
        )
    ]  # fmt: skip
