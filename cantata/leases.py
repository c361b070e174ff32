"""One turn at a time per session, across processes: a runtime holds the session's lease in
the store while a turn of it runs, renewing it, and gives it back at the end.

The holder is named `host/pid/token` (a token per runtime, so two runtimes in one process
exclude each other too). A lease outlives a process killed mid-turn until it expires; on the
same host the next process sees that its holder's pid is gone and takes it over at once, so
a restart resumes the cut turn without waiting out the expiry.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

from cantata.errors import CantataError, SessionBusy
from cantata.store import Store

LEASE_TTL_S = 30.0  # renewed every third of it while the turn runs
POLL_S = 0.1  # how often a waiting turn asks again

log = logging.getLogger("cantata")


def holder_is_gone(holder: str, *, host: str | None = None) -> bool:
    """Whether `holder` was a process on this host that no longer exists."""
    parts = holder.split("/")
    if len(parts) != 3 or parts[0] != (host or socket.gethostname()) or not parts[1].isdigit():
        return False  # another host's: only its expiry frees it
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, another user's
    return False


class LeaseKeeper:
    """The leases of one runtime: taken per turn, renewed while it runs, released after."""

    def __init__(self, store: Store, *, ttl_s: float = LEASE_TTL_S) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self.holder = f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(4)}"
        self._held: set[str] = set()  # this runtime's turns in flight, by session

    async def _take(self, session_id: str) -> str | None:
        """Take the lease, or return who holds it."""
        if session_id in self._held:
            return self.holder
        # Marked before the first await: the store takes this runtime's own holder as a renewal,
        # so a second hold of the session here must be turned away by this set, not by it.
        self._held.add(session_id)
        try:
            held = await self.store.lease_session(session_id, self.holder, ttl_s=self.ttl_s)
            if held is not None and holder_is_gone(held):
                held = await self.store.lease_session(session_id, self.holder, ttl_s=self.ttl_s, take_from=held)
        except BaseException:
            self._held.discard(session_id)
            raise
        if held is not None:
            self._held.discard(session_id)
        return held

    @asynccontextmanager
    async def hold(self, session_id: str, *, wait: bool) -> AsyncIterator[None]:
        """Hold the session's lease for the block: wait for it, or raise SessionBusy."""
        while (held := await self._take(session_id)) is not None:
            if not wait:
                who = "this runtime" if held == self.holder else f"another process ({held})"
                raise SessionBusy(f"session {session_id} is running a turn in {who}; retry when it is done")
            await asyncio.sleep(POLL_S)
        renewing = asyncio.create_task(self._renew(session_id))
        try:
            yield
        finally:
            renewing.cancel()
            with suppress(asyncio.CancelledError):
                await renewing
            self._held.discard(session_id)
            try:
                await self.store.release_session(session_id, self.holder)
            except CantataError as exc:  # it expires on its own
                log.warning("could not release the lease of session %s: %s", session_id, exc)

    async def _renew(self, session_id: str) -> None:
        while True:
            await asyncio.sleep(self.ttl_s / 3)
            try:
                held = await self.store.lease_session(session_id, self.holder, ttl_s=self.ttl_s)
            except CantataError as exc:
                log.warning("could not renew the lease of session %s: %s", session_id, exc)
                continue
            if held is not None:
                log.warning("session %s: the lease passed to %s while a turn of it ran here", session_id, held)
