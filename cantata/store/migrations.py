"""Ordered, named schema migrations. Append new ones; never edit one that has shipped.

No AUTOINCREMENT: it rewrites sqlite_sequence on every insert, one more page per commit.
The blackboard is keyed by (turn, agent), which is also what makes it write-once.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[str, str]] = [
    (
        "001_core",
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
    ),
    (
        "002_session_summary",
        """
        ALTER TABLE sessions ADD COLUMN summary TEXT NOT NULL DEFAULT '';
        ALTER TABLE sessions ADD COLUMN summary_upto INTEGER NOT NULL DEFAULT 0;
        """,
    ),
    (
        # A turn's number comes from this counter, incremented in place (UPDATE ... RETURNING),
        # so two writers starting turns of one session at once cannot take the same number.
        "003_session_turn_counter",
        """
        ALTER TABLE sessions ADD COLUMN turn_count INTEGER NOT NULL DEFAULT 0;
        UPDATE sessions SET turn_count = (SELECT COALESCE(MAX(number), 0) FROM turns WHERE session_id = sessions.id);
        """,
    ),
    (
        # API keys of the server (cantata/server/keys.py): only a hash of each key is kept.
        # No foreign key to users: forgetting a user's data does not revoke their access.
        "004_api_keys",
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
    ),
    (
        # Bounded loops (a pipeline's `loop`): each iteration of a looped agent writes its own
        # entry, so the key gains the iteration (0 for agents outside a loop).
        "005_blackboard_iterations",
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
    ),
    (
        # Agents deployed by the factory, versioned; their files live under
        # CANTATA_HOME/agents/NAME/VERSION/. Versions are numbered from the agent row's
        # counter (as turns are), and one version is active: `run agent:NAME` runs it.
        "006_deployed_agents",
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
    ),
]
