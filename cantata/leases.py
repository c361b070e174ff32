"""One turn at a time per session, across processes: a runtime holds the session's lease in
the store while a turn of it runs, renewing it, and gives it back at the end.

The holder is named `host/pid/start/token` (a token per runtime, so two runtimes in one
process exclude each other too). A lease outlives a process killed mid-turn until it expires;
on the same host the next process sees that its holder's pid is gone, or now names another
process (a restarted container keeps its hostname and may reuse the pid, but not the start
time), and takes it over at once, so a restart resumes the cut turn without waiting out the
expiry.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path

from cantata.errors import CantataError, SessionBusy, get_logger
from cantata.store import Store

LEASE_TTL_S = 30.0  # renewed every third of it while the turn runs
POLL_S = 0.1  # how often a waiting turn asks again

log = get_logger("cantata.leases")


def process_start(pid: int) -> str:
    """When process `pid` started (clock ticks since boot, /proc/PID/stat field 22), or "" where
    there is no /proc to tell."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[19]  # fields from the 3rd on, after the command's name


def holder_is_gone(holder: str, *, host: str | None = None) -> bool:
    """Whether `holder` was a process on this host that no longer exists."""
    parts = holder.split("/")
    if len(parts) != 4 or parts[0] != (host or socket.gethostname()) or not parts[1].isdigit():
        return False  # another host's: only its expiry frees it
    pid = int(parts[1])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # alive, another user's: its start time still tells whether it is the holder
    started = process_start(pid)
    return bool(started) and started != parts[2]  # the pid now names a later process


class LeaseKeeper:
    """The leases of one runtime: taken per turn, renewed while it runs, released after."""

    def __init__(self, store: Store, *, ttl_s: float = LEASE_TTL_S) -> None:
        self.store = store
        self.ttl_s = ttl_s
        pid = os.getpid()
        self.holder = f"{socket.gethostname()}/{pid}/{process_start(pid)}/{secrets.token_hex(4)}"
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
        # A timer, not a task per turn: most turns end before the first renewal is due, and a
        # task's start and cancellation cost a zero-latency turn several event-loop rounds.
        renewal = _Renewal(self, session_id)
        try:
            yield
        finally:
            await renewal.stop()
            self._held.discard(session_id)
            try:
                await self.store.release_session(session_id, self.holder)
            except CantataError as exc:  # it expires on its own
                log.warning("could not release the lease of session %s: %s", session_id, exc)

    async def renew(self, session_id: str) -> None:
        try:
            held = await self.store.lease_session(session_id, self.holder, ttl_s=self.ttl_s)
        except CantataError as exc:
            log.warning("could not renew the lease of session %s: %s", session_id, exc)
            return
        if held is not None:
            log.warning("session %s: the lease passed to %s while a turn of it ran here", session_id, held)


class _Renewal:
    """Renews one held lease every third of its time to live until stopped."""

    def __init__(self, keeper: LeaseKeeper, session_id: str) -> None:
        self.keeper = keeper
        self.session_id = session_id
        self.loop = asyncio.get_running_loop()
        self.task: asyncio.Task[None] | None = None
        self.timer = self.loop.call_later(keeper.ttl_s / 3, self._due)

    def _due(self) -> None:
        self.task = self.loop.create_task(self._renew())

    async def _renew(self) -> None:
        await self.keeper.renew(self.session_id)
        self.timer = self.loop.call_later(self.keeper.ttl_s / 3, self._due)

    async def stop(self) -> None:
        self.timer.cancel()
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with suppress(asyncio.CancelledError):
                await self.task
