"""A PostgreSQL connection as the store uses it: psycopg 3, opened in autocommit mode (the
transactions are explicit, like SQLite's), behind an adapter that takes the store's SQL with
`?` parameters; the URL as it may be shown (without its password).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import conninfo

from cantata.errors import StoreUnavailable, register_secret

CONNECT_TIMEOUT_S = 10  # unless the URL says otherwise: an unreachable host fails in bounded time
# How long a store waits for a lost server (restarted, failed over) to answer again before
# the calls waiting on it fail (reconnect.py): a restart takes a few seconds.
RECONNECT_WITHIN_S = 30.0
# Held while a migration is decided and applied: two processes opening a new database at once
# apply each migration once between them (the key is arbitrary, the same in every process).
MIGRATION_LOCK = 0x63616E74  # "cant"


def redact(url: str) -> str:
    """`url` without its password (in the authority or as a `password` parameter), which it
    also registers as a secret: no error message shows it, whoever builds one."""
    parts = urlsplit(url)
    if parts.password:
        register_secret(parts.password)
        register_secret(unquote(parts.password))
    query = parse_qsl(parts.query, keep_blank_values=True)
    for key, value in query:
        if key == "password":
            register_secret(value)
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{parts.username}@{host}" if parts.username else host
    shown = urlencode([(k, v) for k, v in query if k != "password"], safe="/")
    return urlunsplit((parts.scheme, netloc, parts.path, shown, parts.fragment))


class PgConnection:
    """psycopg's connection with the store's SQL: `?` parameters, as sqlite3 takes them."""

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw

    def execute(self, sql: str, parameters: Any = (), /) -> psycopg.Cursor[Any]:
        if not parameters:  # no parameters: the text as it is, and it may hold several statements
            return self.raw.execute(sql)
        return self.raw.execute(_placeholders(sql), parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> psycopg.Cursor[Any]:
        cursor = self.raw.cursor()
        cursor.executemany(_placeholders(sql), parameters)
        return cursor

    def close(self) -> None:
        self.raw.close()

    def lost(self) -> bool:
        """Whether the connection is gone: psycopg closes it when the server ends it."""
        return self.raw.closed


@lru_cache(maxsize=1024)
def _placeholders(sql: str) -> str:
    """`?` as psycopg's `%s`, and a literal `%` as `%%`. (No statement of the store has a `?`
    inside a string literal.)"""
    return sql.replace("%", "%%").replace("?", "%s")


def explain(exc: BaseException) -> str:
    """psycopg's message in one line: the first says what, the next ones (the statement, a
    detail, a hint) would break the CLI's one line."""
    return str(exc).strip().partition("\n")[0]


def connect(url: str) -> PgConnection:
    """The connection, or StoreUnavailable naming the URL without its password."""
    shown = redact(url)
    try:
        raw = psycopg.connect(bounded(url), autocommit=True)
    except psycopg.Error as exc:
        raise StoreUnavailable(f"cannot reach the database {shown}: {explain(exc)}") from None
    return PgConnection(raw)


def bounded(url: str, **defaults: str) -> str:
    """`url` as connection info, with CONNECT_TIMEOUT_S and `defaults` where it says nothing."""
    given = conninfo.conninfo_to_dict(url)
    wanted = {"connect_timeout": str(CONNECT_TIMEOUT_S), **defaults}
    added = {key: value for key, value in wanted.items() if key not in given}
    return conninfo.make_conninfo(url, **added) if added else url


def transaction(db: PgConnection) -> AbstractContextManager[object]:
    """BEGIN ... COMMIT, or ROLLBACK on any error (psycopg's own transaction block)."""
    return db.raw.transaction()


@contextmanager
def migration_transaction(db: PgConnection) -> Iterator[None]:
    """A transaction that holds the migration lock until it ends."""
    with db.raw.transaction():
        db.raw.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        yield


@contextmanager
def snapshot(db: PgConnection) -> Iterator[None]:
    """A read-only transaction whose statements all read the snapshot its first one takes."""
    with db.raw.transaction():
        db.raw.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield
