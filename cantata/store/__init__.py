"""Persistence behind one async interface (`base.Store`): SQLite by default, a file under CANTATA_HOME."""

from __future__ import annotations

from pathlib import Path

from cantata.store.base import Store
from cantata.store.rows import (
    AgentVersion,
    EntryRow,
    Forgotten,
    InstanceEvent,
    PastTurn,
    SessionInfo,
    SessionRow,
    SessionSummary,
    StartedTurn,
    TurnContext,
    TurnRef,
    TurnRow,
    UnfinishedTurn,
)
from cantata.store.sqlite import SqliteStore


def open_store(home: Path) -> Store:
    """The store under CANTATA_HOME. Opening does no I/O on the caller's thread."""
    return SqliteStore(home / "cantata.db")


__all__ = [
    "AgentVersion",
    "EntryRow",
    "Forgotten",
    "InstanceEvent",
    "PastTurn",
    "SessionInfo",
    "SessionRow",
    "SessionSummary",
    "SqliteStore",
    "StartedTurn",
    "Store",
    "TurnContext",
    "TurnRef",
    "TurnRow",
    "UnfinishedTurn",
    "open_store",
]
