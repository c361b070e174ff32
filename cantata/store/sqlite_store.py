"""The SQLite store: one file under CANTATA_HOME (or one database in memory), one connection.

Its methods are `sql_store.SqlStore`'s; this says how SQLite is opened (`sqlite_db.py`:
WAL, the busy timeout), committed and read in one snapshot.
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import AbstractContextManager
from pathlib import Path

from cantata.errors import StoreError
from cantata.store import queries
from cantata.store.migrations import migrate
from cantata.store.sql_store import SqlStore
from cantata.store.sqlite_db import connect, explain, transaction

CHECKPOINT_TRIES = 3  # a forget's WAL checkpoint, tried again while a reader holds it up
CHECKPOINT_PAUSE_S = 0.2


class SqliteStore(SqlStore[sqlite3.Connection]):
    driver_error = sqlite3.Error
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
        # secure_delete zeroes a deleted row's cell, but not every copy of it: a page rebuilt
        # when its neighbours were balanced can keep an older copy of a cell in its unused
        # space (a blackboard entry of a forgotten user was found so, 2026-12-07). VACUUM
        # writes every page anew, holding live rows only. Forgetting is rare; its cost is a
        # copy of the database.
        db.execute("VACUUM")
        # secure_delete zeroed the rows in the pages now in the WAL, but the WAL still holds
        # the frames that first wrote them: copy the pages back and empty it (TRUNCATE). A
        # reader of another process holding an older snapshot keeps it from the WAL's end
        # (each try waits the busy timeout for it): the forget must not report success then.
        for attempt in range(CHECKPOINT_TRIES):
            busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if not busy:
                return
            if attempt + 1 < CHECKPOINT_TRIES:
                time.sleep(CHECKPOINT_PAUSE_S)
        raise StoreError(
            f"{self.where}: the user's rows are deleted, but another connection's read kept their bytes in"
            f" the write-ahead log ({self.where}-wal); run the forget again once it is done"
        )
