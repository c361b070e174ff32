"""Persistence behind one async interface (`base.Store`): SQLite by default, a file under
CANTATA_HOME; PostgreSQL when given its URL (`config.database_url`)."""

from __future__ import annotations

from pathlib import Path

from cantata.errors import ConfigError
from cantata.store.base import Store
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
from cantata.store.sqlite_store import SqliteStore


def open_store(home: Path, url: str | None = None) -> Store:
    """The store at `url` (PostgreSQL), else under CANTATA_HOME. Opening does no I/O on the
    caller's thread: a database that cannot be reached fails the first read or write."""
    if url is None:
        return SqliteStore(home / "cantata.db")
    try:
        from cantata.store.postgres_store import PostgresStore  # psycopg only for those who use it
    except ImportError as exc:
        raise ConfigError(f"the state is on PostgreSQL, and {exc}: pip install 'cantata[postgres]'") from None
    return PostgresStore(url)


__all__ = [
    "ApprovalRow",
    "Decided",
    "AgentVersion",
    "ApiKeyRow",
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
    "ToolCallRow",
    "TurnContext",
    "TurnRef",
    "TurnRow",
    "UnfinishedTurn",
    "open_store",
]
