"""What the store's SQL needs of a connection: `execute` and `executemany` with `?`
parameters, rows as tuples. `sqlite3.Connection` is one as it is; PostgreSQL's is psycopg's
behind a thin adapter (`postgres_db.py`), so both stores run the same statements
(`queries.py`, `sql_store.py`) instead of two copies of them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol


class Cursor(Protocol):
    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    def execute(self, sql: str, parameters: Any = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Cursor: ...
