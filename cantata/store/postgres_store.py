"""The PostgreSQL store: `CANTATA_DB=postgresql://...` (or the config's `database`).

Its methods are `sql_store.SqlStore`'s, the SQLite store's: the same statements, the same
migrations, the same group commit on one connection owned by one thread (`committer.py`).
One connection, not a pool: every read must follow the writes queued before it (the
protocols promise it, the scheduler relies on it), so a store's statements run in one
order on one connection, as on SQLite; more work at once comes from more processes.
A connection lost (the server restarted) is opened again and the statements run again on
it, none written twice (`reconnect.py`).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from functools import partial

import psycopg

from cantata.store import queries
from cantata.store.migrations import migrate
from cantata.store.postgres_db import (
    RECONNECT_WITHIN_S,
    PgConnection,
    connect,
    explain,
    migration_transaction,
    redact,
    snapshot,
    transaction,
)
from cantata.store.postgres_listen import CHANNEL, listen
from cantata.store.protocols import Notifications
from cantata.store.reconnect import Reconnect
from cantata.store.sql_store import SqlStore


class PostgresStore(SqlStore[PgConnection]):
    driver_error = psycopg.Error
    # No rowid: sessions are stored with their first turn, whose id follows the commits.
    session_tiebreak = "(SELECT MIN(t.id) FROM turns t WHERE t.session_id = sessions.id)"
    lock_lease = " FOR SHARE"

    def __init__(self, url: str, *, reconnect_within_s: float = RECONNECT_WITHIN_S) -> None:
        """`reconnect_within_s`: how long calls wait for a lost server to answer again."""
        self._url = url
        super().__init__(
            where=redact(url),
            connect=lambda: connect(url),
            close=PgConnection.close,
            transaction=transaction,
            store_events=_insert_events,
            explain=explain,
            reconnect=Reconnect(PgConnection.lost, reconnect_within_s, queries.stored_events),
        )

    def _migrate(self, db: PgConnection) -> list[str]:
        return migrate(db, self.where, transaction=migration_transaction)

    def _snapshot(self, db: PgConnection) -> AbstractContextManager[object]:
        return snapshot(db)

    def notifications(self) -> Notifications:
        return partial(listen, self._url)


def _insert_events(db: PgConnection, rows: list[queries.EventValues]) -> int:
    # Events are numbered after the largest id, in the committing transaction, so ids follow
    # the order of commits: a reader that has seen id N never misses an event committed later
    # with a smaller one (SSE `Last-Event-ID`). The lock (which reads do not wait for) makes a
    # second store committing at once wait for this commit; without it, both would take the
    # same ids, and the loser's whole batch would fail and be retried one write at a time.
    db.execute("LOCK TABLE events IN EXCLUSIVE MODE")
    base = queries.insert_events(db, rows)
    # Sent at commit, and only then (a rolled-back batch wakes nobody): a wake-up for the
    # other processes' followers, who read the events from the table (postgres_listen.py).
    db.execute("SELECT pg_notify(?, ?)", (CHANNEL, str(base + len(rows))))
    return base
