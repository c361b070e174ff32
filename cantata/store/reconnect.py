"""A store's connection lost and found again: PostgreSQL restarted, failed over, or its
backend killed (SQLite's connection cannot be lost: a store on it has no `Reconnect`).

The committer's thread notices a lost connection when a job fails on it, opens a new one,
trying again with backoff while the database is away, and runs the job again. The wait is
bounded by the outage, not by each job: jobs queued behind the first one share its wait,
and once `within_s` has passed since the connection was lost, each job tries one new
connection and fails with StoreUnavailable if there is none, until the database answers.

A write whose connection was lost before its COMMIT was sent cannot have committed: it
simply runs again. One lost during the COMMIT may have committed or not, and nobody can
tell from the client: it runs again as a *replay* (`Committer.write`'s `replay`), which
finds what the lost commit wrote instead of writing it twice, and writes it otherwise.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from cantata.errors import StoreUnavailable, get_logger

C = TypeVar("C")  # the connection
R = TypeVar("R")  # an event as the database stores it

FIRST_PAUSE_S = 0.05  # the first wait before a new connection is tried; doubled each time
LONGEST_PAUSE_S = 1.0

log = get_logger("cantata.store")


@dataclass(frozen=True)
class Reconnect(Generic[C, R]):
    """How a committer outlives its connection.

    `lost(conn)`: whether the connection is gone (a job that failed on it runs again on a
    new one). `within_s`: how long after the loss new connections are tried before the
    waiting jobs fail. `stored_events(conn, rows)`: the sequence number before `rows` if a
    commit whose outcome was lost stored them (they are numbered after it), else None.
    """

    lost: Callable[[C], bool]
    within_s: float
    stored_events: Callable[[C, list[R]], int | None]


def reopen(
    open: Callable[[], C], *, name: str, lost_at: float, within_s: float, explain: Callable[[BaseException], str]
) -> C:
    """A new connection from `open`, tried with growing pauses until `within_s` after
    `lost_at` (time.monotonic()); past it, one try, then StoreUnavailable saying why."""
    deadline = lost_at + within_s
    pause = FIRST_PAUSE_S
    while True:
        try:
            connection = open()
        except Exception as exc:
            if time.monotonic() + pause > deadline:
                raise StoreUnavailable(
                    f"the connection to the database {name} was lost and it did not answer again within"
                    f" {within_s:g} s: {explain(exc)}"
                ) from None
            time.sleep(pause)
            pause = min(2 * pause, LONGEST_PAUSE_S)
            continue
        log.warning("connected to the database %s again, %.1f s after losing it", name, time.monotonic() - lost_at)
        return connection
