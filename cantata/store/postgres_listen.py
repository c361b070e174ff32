"""Hearing of the events other processes commit to PostgreSQL: LISTEN on a connection of
its own (the store's one connection is busy with the store's work, in order).

Each transaction that stores events sends a NOTIFY (postgres_store.py) whose payload is only
a wake-up, the largest sequence number it committed, never an event: a notification is sent
at commit, and a listener reads the events from the table. A notification is lost while the
connection is down; the connection is made again (backing off to RETRY_MAX_S) and the
listener woken at once, and a follower polls meanwhile (event_feed.py's backstop).
"""

from __future__ import annotations

import asyncio

import psycopg

from cantata.errors import get_logger
from cantata.store.postgres_db import bounded, explain, redact
from cantata.store.protocols import Wake

CHANNEL = "cantata_events"
# The listening connection's name in pg_stat_activity, so an operator can tell it apart.
APPLICATION_NAME = "cantata-events"
# A connection that only listens sends nothing: over TCP, probes find a silently dropped one
# within about 30 s (libpq's settings, unless the URL gives its own; unix sockets need none).
KEEPALIVES = {"keepalives": "1", "keepalives_idle": "15", "keepalives_interval": "5", "keepalives_count": "3"}
RETRY_MIN_S = 0.5
RETRY_MAX_S = 5.0

log = get_logger("cantata.store")


async def listen(url: str, wake: Wake) -> None:
    """Call `wake(seq)` on every notification, until cancelled, and `wake(None)` after each
    connection is made: notifications sent while there was none are lost."""
    pause = RETRY_MIN_S
    lost = False
    while True:
        try:
            info = bounded(url, application_name=APPLICATION_NAME, **KEEPALIVES)
            async with await psycopg.AsyncConnection.connect(info, autocommit=True) as connection:
                await connection.execute(f"LISTEN {CHANNEL}")
                if lost:
                    log.warning("listening again for the events other processes store in %s", redact(url))
                pause, lost = RETRY_MIN_S, False
                wake(None)
                async for notification in connection.notifies():
                    wake(_seq(notification.payload))
        except psycopg.Error as exc:
            if not lost:  # once per outage, not once per attempt
                log.warning(
                    "lost the notifications of events stored by other processes in %s (%s); reconnecting,"
                    " and reading the events table every few seconds meanwhile",
                    redact(url),
                    explain(exc),
                )
            lost = True
        await asyncio.sleep(pause)
        pause = min(pause * 2, RETRY_MAX_S)


def _seq(payload: str) -> int | None:
    return int(payload) if payload.isdigit() else None
