"""Persistence: SQLite by default (a file under CANTATA_HOME)."""

from __future__ import annotations

from pathlib import Path

from cantata.store.sqlite import EntryRow, PastTurn, SessionRow, SqliteStore

Store = SqliteStore


def open_store(home: Path) -> Store:
    return SqliteStore(home / "cantata.db")


__all__ = ["EntryRow", "PastTurn", "SessionRow", "Store", "open_store"]
