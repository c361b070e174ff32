"""The store: every concern's protocol (`protocols.py`) in one, over the typed rows (`rows.py`).

Callers import these names from `cantata.store`; `sqlite_store.py` is one implementation among others.
"""

from __future__ import annotations

from typing import Protocol

from cantata.store.protocols import (
    AgentRegistry,
    ApiKeys,
    ApprovalLog,
    BlackboardStore,
    EventLog,
    SessionLeases,
    SessionStore,
    ToolCallLog,
    UserData,
)


class Store(
    SessionStore,
    SessionLeases,
    BlackboardStore,
    ToolCallLog,
    ApprovalLog,
    EventLog,
    AgentRegistry,
    ApiKeys,
    UserData,
    Protocol,
):
    """Users, sessions (and their leases), turns, messages, the blackboard, tool calls and their
    approvals, the event log, deployed agents and the server's API keys."""

    async def close(self) -> None: ...
