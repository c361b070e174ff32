"""The SQLite store: one file under CANTATA_HOME (or one database in memory), one connection.

Its methods are `sql_store.SqlStore`'s; this says how SQLite is opened (`sqlite_db.py`:
WAL, the busy timeout), committed and read in one snapshot.
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path

from cantata.store import queries
from cantata.store.migrations import migrate
from cantata.store.sql_store import SqlStore
from cantata.store.sqlite_db import connect, explain, transaction


class SqliteStore(SqlStore[sqlite3.Connection]):
    driver_error = sqlite3.Error
    integrity_error = sqlite3.IntegrityError
    session_tiebreak = "rowid"

    def __init__(self, path: Path | str) -> None:
        """`":memory:"` is a private database."""
        self.path = path
        super().__init__(
            where=str(path),
            connect=lambda: connect(path),
            close=sqlite3.Connection.close,
            transaction=transaction,
            store_events=queries.insert_events,
            explain=explain,
        )

    def _migrate(self, db: sqlite3.Connection) -> list[str]:
        return migrate(db, self.path)

    def _snapshot(self, db: sqlite3.Connection) -> AbstractContextManager[object]:
        # BEGIN takes no lock, and in WAL mode the first statement fixes the snapshot.
        return transaction(db, immediate=False)

    def _erase_deleted(self, db: sqlite3.Connection) -> None:
        # secure_delete zeroed the rows in the pages now in the WAL, but the WAL still holds
        # the frames that first wrote them: copy the pages back and empty it (TRUNCATE). A
        # reader of another process holding an older snapshot can delay that until it is done.
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
