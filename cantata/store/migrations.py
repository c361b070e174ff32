"""The SQLite schema as ordered, named migrations: Python functions, applied in order.

Append new ones; never edit one that has shipped. Each is a function of the connection
(llm's style), so a migration may move data in Python as well as run SQL, and
`execute_script` runs SQL whole statement by statement, a trigger's body included. Each
is recorded by its name without the leading `m` ("001_core"), the names the earlier
list of SQL strings recorded, so a database made by it is not migrated again.

No AUTOINCREMENT: it rewrites sqlite_sequence on every insert, one more page per commit.
The blackboard is keyed by (turn, agent, iteration), which is also what makes it write-once.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence

from cantata.errors import StoreError
from cantata.store.sqlite_db import transaction

Migration = Callable[[sqlite3.Connection], None]

MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    """Register `fn` as the next migration (its name orders it: m001_..., m002_...)."""
    MIGRATIONS.append(fn)
    return fn


def name_of(fn: Migration) -> str:
    """The name a migration is recorded under: its function's, without the leading `m`."""
    return fn.__name__.removeprefix("m")


def migrate(db: sqlite3.Connection, where: object, migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    """Apply the migrations not yet applied, each in its own write transaction, and decide
    inside it whether it is applied: two processes opening a new file at once then apply
    each migration once between them. Returns the names applied."""
    db.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    done = {row[0] for row in db.execute("SELECT name FROM migrations")}
    applied = []
    for fn in migrations:
        name = name_of(fn)
        if name in done:
            continue
        try:
            with transaction(db):
                if db.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
                    continue  # another process applied it meanwhile
                fn(db)
                db.execute("INSERT INTO migrations VALUES (?, ?)", (name, time.time()))
        except sqlite3.Error as exc:
            raise StoreError(f"migration {name} failed on {where}: {exc}") from exc
        applied.append(name)
    return applied


def execute_script(db: sqlite3.Connection, script: str) -> None:
    """Run every statement of `script` in the transaction under way. Not `executescript`,
    which commits first; not a split on `;`, which cuts a trigger's body: a statement ends
    at the first `;` where SQLite itself finds it complete."""
    start = 0
    for end in (i + 1 for i, char in enumerate(script) if char == ";"):
        if sqlite3.complete_statement(script[start:end]):
            db.execute(script[start:end])
            start = end
    if script[start:].strip():
        db.execute(script[start:])


@migration
def m001_core(db: sqlite3.Connection) -> None:
    """Users, sessions, turns, their messages, the blackboard and the event log."""
    execute_script(
        db,
        """
        CREATE TABLE users (
            id TEXT PRIMARY KEY,
            created_at REAL NOT NULL
        );
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            pipeline TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE INDEX sessions_user ON sessions(user_id);
        CREATE TABLE turns (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            number INTEGER NOT NULL,
            status TEXT NOT NULL DEFAULT 'running',
            started_at REAL NOT NULL,
            finished_at REAL,
            UNIQUE (session_id, number)
        );
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
            role TEXT NOT NULL,
            agent TEXT,
            content TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE INDEX messages_turn ON messages(turn_id);
        CREATE TABLE blackboard (
            turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
            agent TEXT NOT NULL,
            user_id TEXT NOT NULL,
            status TEXT NOT NULL,
            output TEXT,
            error TEXT,
            created_at REAL NOT NULL,
            PRIMARY KEY (turn_id, agent)
        ) WITHOUT ROWID;
        CREATE INDEX blackboard_memory ON blackboard(user_id, agent, status, turn_id);
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
            type TEXT NOT NULL,
            agent TEXT,
            at_s REAL NOT NULL,
            wall REAL NOT NULL,
            data TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX events_turn ON events(turn_id);
        """,
    )


@migration
def m002_session_summary(db: sqlite3.Connection) -> None:
    """A session's running summary (compaction.py) and the last turn it covers."""
    execute_script(
        db,
        """
        ALTER TABLE sessions ADD COLUMN summary TEXT NOT NULL DEFAULT '';
        ALTER TABLE sessions ADD COLUMN summary_upto INTEGER NOT NULL DEFAULT 0;
        """,
    )


@migration
def m003_session_turn_counter(db: sqlite3.Connection) -> None:
    """A turn's number comes from this counter, incremented in place (UPDATE ... RETURNING),
    so two writers starting turns of one session at once cannot take the same number."""
    execute_script(
        db,
        """
        ALTER TABLE sessions ADD COLUMN turn_count INTEGER NOT NULL DEFAULT 0;
        UPDATE sessions SET turn_count = (SELECT COALESCE(MAX(number), 0) FROM turns WHERE session_id = sessions.id);
        """,
    )


@migration
def m004_api_keys(db: sqlite3.Connection) -> None:
    """API keys of the server (cantata/server/keys.py): only a hash of each key is kept.
    No foreign key to users: forgetting a user's data does not revoke their access."""
    execute_script(
        db,
        """
        CREATE TABLE api_keys (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            hash TEXT NOT NULL,
            admin INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            revoked_at REAL
        );
        CREATE INDEX api_keys_user ON api_keys(user_id);
        """,
    )


@migration
def m005_blackboard_iterations(db: sqlite3.Connection) -> None:
    """Bounded loops (a pipeline's `loop`): each iteration of a looped agent writes its own
    entry, so the key gains the iteration (0 for agents outside a loop)."""
    execute_script(
        db,
        """
        CREATE TABLE blackboard_iterations (
            turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
            agent TEXT NOT NULL,
            iteration INTEGER NOT NULL DEFAULT 0,
            user_id TEXT NOT NULL,
            status TEXT NOT NULL,
            output TEXT,
            error TEXT,
            created_at REAL NOT NULL,
            PRIMARY KEY (turn_id, agent, iteration)
        ) WITHOUT ROWID;
        INSERT INTO blackboard_iterations (turn_id, agent, iteration, user_id, status, output, error, created_at)
            SELECT turn_id, agent, 0, user_id, status, output, error, created_at FROM blackboard;
        DROP TABLE blackboard;
        ALTER TABLE blackboard_iterations RENAME TO blackboard;
        CREATE INDEX blackboard_memory ON blackboard(user_id, agent, status, turn_id);
        """,
    )


@migration
def m006_deployed_agents(db: sqlite3.Connection) -> None:
    """Agents deployed by the factory, versioned; their files live under
    CANTATA_HOME/agents/NAME/VERSION/. Versions are numbered from the agent row's
    counter (as turns are), and one version is active: `run agent:NAME` runs it."""
    execute_script(
        db,
        """
        CREATE TABLE agents (
            name TEXT PRIMARY KEY,
            latest_version INTEGER NOT NULL DEFAULT 0,
            active_version INTEGER,
            created_at REAL NOT NULL
        );
        CREATE TABLE agent_versions (
            name TEXT NOT NULL REFERENCES agents(name) ON DELETE CASCADE,
            version INTEGER NOT NULL,
            created_at REAL NOT NULL,
            forced INTEGER NOT NULL DEFAULT 0,
            sandboxed INTEGER NOT NULL DEFAULT 1,
            task_turn INTEGER,
            summary TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (name, version)
        );
        """,
    )


@migration
def m007_session_leases(db: sqlite3.Connection) -> None:
    """One turn at a time per session across processes: the holder of a session's lease
    (a runtime, named by host, process and a token) runs its turns until `expires_at`,
    renewing it meanwhile. No foreign key: a new session is leased before its first turn
    stores it; forgetting a user deletes their sessions' leases."""
    execute_script(
        db,
        """
        CREATE TABLE session_leases (
            session_id TEXT PRIMARY KEY,
            holder TEXT NOT NULL,
            expires_at REAL NOT NULL
        );
        """,
    )
