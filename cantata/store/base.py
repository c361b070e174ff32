"""The store: every concern's protocol (`protocols.py`) in one, over the typed rows (`rows.py`).

Callers use only these names (re-exported here and in `cantata.store`); `sqlite.py` is
one implementation among others.
"""

from __future__ import annotations

from typing import Protocol

from cantata.store.protocols import (
    RECENT_TURNS,
    AgentRegistry,
    BlackboardStore,
    Committed,
    EventLog,
    SessionStore,
    UserData,
)
from cantata.store.rows import (
    AgentVersion,
    EntryRow,
    InstanceEvent,
    PastTurn,
    SessionInfo,
    SessionRow,
    SessionSummary,
    StartedTurn,
    TurnContext,
    TurnRow,
    UnfinishedTurn,
)


class Store(SessionStore, BlackboardStore, EventLog, AgentRegistry, UserData, Protocol):
    """Users, sessions, turns, messages, the blackboard, the event log and deployed agents."""

    async def close(self) -> None: ...


__all__ = [
    "RECENT_TURNS",
    "AgentRegistry",
    "AgentVersion",
    "BlackboardStore",
    "Committed",
    "EntryRow",
    "EventLog",
    "InstanceEvent",
    "PastTurn",
    "SessionInfo",
    "SessionRow",
    "SessionStore",
    "SessionSummary",
    "StartedTurn",
    "Store",
    "TurnContext",
    "TurnRow",
    "UnfinishedTurn",
    "UserData",
]
