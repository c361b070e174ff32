"""What the store tests are given: a factory that opens a store. Calling a shared one twice
gives two stores (two connections, as two processes would have) on the same data. And how
a test counts the SQL statements a read takes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from cantata.store import SqliteStore, Store

StoreFactory = Callable[[], Store]


async def statements_during(store: SqliteStore, read: Callable[[], Awaitable[object]]) -> list[str]:
    """The SQL statements the store's connection runs while `read` is awaited."""
    statements: list[str] = []
    await store.commit(lambda db: db.set_trace_callback(statements.append))
    statements.clear()
    await read()
    await store.commit(lambda db: db.set_trace_callback(None))
    assert statements.pop() == "BEGIN IMMEDIATE"  # of that last commit
    return statements
