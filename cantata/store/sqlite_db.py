"""A SQLite connection as the store uses it: how it is opened, and its write transaction.

WAL with synchronous=NORMAL: a commit is durable against a crash of Cantata (SIGKILL, an
out-of-memory kill: the kill tests prove it), and fast enough to commit on every blackboard
write. On a power loss or an OS crash, NORMAL may lose the last commits, never corrupt the
file; FULL would keep them at an fsync per commit. Those commits are the last agents'
outputs of turns in flight: a turn resumed after such a loss reruns those agents. That is
the trade, and the README states it. `busy_timeout` lets a second process (`cantata run`
beside a server) wait for the write lock instead of failing; writes take it at BEGIN
IMMEDIATE, so two writers never deadlock upgrading a read. `secure_delete`: a deleted row's
bytes are overwritten with zeros, not left in a free page or cell for anyone reading the
file (forgetting a user must leave nothing of them); Cantata deletes rarely, so the extra
writes cost nothing that matters.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

BUSY_TIMEOUT_MS = 5000


def connect(path: Path | str) -> sqlite3.Connection:
    """The connection, in autocommit mode (transactions are explicit, see `transaction`)."""
    if isinstance(path, Path):
        path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        _set_wal(db)
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("PRAGMA secure_delete=ON")
    except BaseException:
        db.close()
        raise
    return db


def _set_wal(db: sqlite3.Connection) -> None:
    """Switch to WAL. While another process creates or converts the same new file, SQLite
    answers "database is locked" at once, without waiting on the busy timeout: wait here.
    (An in-memory database stays in its own "memory" mode.)"""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def explain(exc: BaseException) -> str:
    """SQLite's message, with what to do when the fix is the operator's: a read-only file or
    folder, a full disk. (The transaction was rolled back: nothing of it is written.)"""
    text = str(exc)
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary == sqlite3.SQLITE_READONLY or "readonly database" in text:
        return f"{text} (the database file or its folder is read-only: check the permissions of CANTATA_HOME)"
    if primary == sqlite3.SQLITE_FULL or "disk is full" in text:
        return f"{text} (the disk is full: free space, then retry)"
    return text


class transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error. With `immediate=False`, a
    read of several statements: BEGIN takes no lock, and in WAL mode the first statement
    fixes a snapshot that the others read too, whatever another process commits meanwhile."""

    def __init__(self, db: sqlite3.Connection, *, immediate: bool = True) -> None:
        self.db = db
        self.begin = "BEGIN IMMEDIATE" if immediate else "BEGIN"

    def __enter__(self) -> None:
        self.db.execute(self.begin)

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None:
            self._rollback()
            return
        try:
            self.db.execute("COMMIT")
        except sqlite3.Error:
            self._rollback()
            raise

    def _rollback(self) -> None:
        # After some errors (a full disk, I/O) SQLite has already rolled the transaction
        # back: a ROLLBACK then fails and would hide the error that says what happened.
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
