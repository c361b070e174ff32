"""Ids and event positions as the store keeps them: 64-bit signed integers (SQLite INTEGER,
PostgreSQL BIGINT). A number outside that range names nothing stored; it is answered as
such here, before it reaches a query, where it would overflow (a 500)."""

from __future__ import annotations

MAX_ID = 2**63 - 1


def storable(value: int) -> bool:
    """Whether `value` can be an id or an event position at all (ids start at 1, positions at 0)."""
    return 0 <= value <= MAX_ID
