"""Which session a chat request continues, and one turn at a time per session.

Chat clients resend the whole conversation with every message and know nothing of
sessions. A request continues the stored session of the same user and pipeline whose
turns match the history it sent (the user messages, in order, and each assistant
message containing what the turn replied); else it starts a new session.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from cantata.server.errors import HTTPError
from cantata.store import Store


def fingerprint(user: str, pipeline: str, user_messages: list[str]) -> str:
    digest = hashlib.sha256()
    for part in (user, pipeline, *user_messages):
        digest.update(part.encode("utf-8", errors="replace") + b"\x00")
    return digest.hexdigest()


class SessionIndex:
    """History fingerprint -> session, filled as turns finish; the store is the fallback
    (after a restart, or for turns this process did not run)."""

    def __init__(self) -> None:
        self._known: dict[str, str] = {}

    def remember(self, user: str, pipeline: str, user_messages: list[str], session_id: str) -> None:
        self._known[fingerprint(user, pipeline, user_messages)] = session_id

    def forget_user(self, user: str) -> None:
        # Fingerprints cannot be read back; a stale entry only points at a deleted session,
        # which `match` checks, so clearing everything is simplest and safe.
        self._known.clear()

    async def match(self, store: Store, *, user: str, pipeline: str, history: list[tuple[str, str]]) -> str | None:
        """The session whose turns are `history`, as (user message, assistant reply) pairs."""
        if not history:
            return None
        asked = [u for u, _ in history]
        known = self._known.get(fingerprint(user, pipeline, asked))
        if known is not None:
            session = await store.get_session(known)
            if session is not None and session.user_id == user:
                return known
        for info in await store.sessions(user):
            if info.pipeline != pipeline or info.turns != len(history):
                continue
            turns = await store.turns(info.id)
            if [t.message for t in turns] != asked:
                continue
            if all(
                _replied(said, [text for _, text in turn.replies])
                for (_, said), turn in zip(history, turns, strict=True)
            ):
                self.remember(user, pipeline, asked, info.id)
                return info.id
        return None


def _replied(said: str, replies: list[str]) -> bool:
    """A client shows the early reply, the merged reply, or both: any of them counts."""
    if not said.strip() or not replies:
        return True
    return any(text.strip() and text.strip() in said for text in replies)


class SessionLocks:
    """Each session's turns run one after the other; different sessions in parallel.

    A chain of futures rather than a lock, so a new session (whose id is known only once
    its turn has started) can be claimed synchronously from an event listener."""

    def __init__(self) -> None:
        self._tails: dict[str, asyncio.Future[None]] = {}

    def busy(self, session_id: str) -> bool:
        tail = self._tails.get(session_id)
        return tail is not None and not tail.done()

    def claim(self, session_id: str) -> tuple[asyncio.Future[None] | None, asyncio.Future[None]]:
        """Queue a turn: (the turn to wait for, if any; the future that ends this one)."""
        previous = self._tails.get(session_id)
        mine: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._tails[session_id] = mine
        return (previous if previous is not None and not previous.done() else None), mine

    def release(self, session_id: str, mine: asyncio.Future[None]) -> None:
        if not mine.done():
            mine.set_result(None)
        if self._tails.get(session_id) is mine:
            del self._tails[session_id]

    @asynccontextmanager
    async def hold(self, session_id: str, *, reject: bool) -> AsyncIterator[None]:
        if reject and self.busy(session_id):
            raise HTTPError(409, f"session {session_id} is running a turn; retry when it is done", code="session_busy")
        previous, mine = self.claim(session_id)
        if previous is not None:
            try:
                await asyncio.shield(previous)
            except asyncio.CancelledError:
                # Whoever queued behind us must still wait for the turn we waited for.
                previous.add_done_callback(lambda _: self.release(session_id, mine))
                raise
        try:
            yield
        finally:
            self.release(session_id, mine)
