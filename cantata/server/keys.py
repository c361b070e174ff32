"""API keys: `cnt_<id>_<secret>`, of which only the sha256 is stored.

A key is found by its public id, then its hash is compared in constant time, so neither
a timing difference nor a stolen database reveals a usable key. The keys are in the store
with the state (`store.protocols.ApiKeys`): SQLite under CANTATA_HOME, or PostgreSQL, where
every server on the database knows the keys any of them (or `cantata keys`) created.

The check runs on every request, and a store read waits behind the writes queued before
it: a key's row, once read, is kept `CACHE_S` in the process (only rows of keys that exist,
so the cache is no bigger than the table). A key revoked elsewhere is refused within that
time; one revoked through this ring, at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from cantata.errors import StoreError, UserError
from cantata.store import ApiKeyRow
from cantata.store.protocols import ApiKeys

PREFIX = "cnt_"
CACHE_S = 1.0  # how long a key's row is trusted without reading it again
ID_TRIES = 5  # fresh ids tried when one is taken (4 random bytes each)


@dataclass(frozen=True)
class KeyInfo:
    id: str
    user: str
    admin: bool
    created_at: float
    revoked: bool


@dataclass(frozen=True)
class Principal:
    """Who is calling: a user, and whether they may see every user's data."""

    user: str
    admin: bool


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _info(row: ApiKeyRow) -> KeyInfo:
    return KeyInfo(row.id, row.user_id, row.admin, row.created_at, row.revoked_at is not None)


def key_id(token: str) -> str:
    """The public id of a key, or the id itself."""
    return token.removeprefix(PREFIX).split("_")[0]


class KeyRing:
    """The keys of one store. It does not own the store: whoever opened it closes it."""

    def __init__(self, keys: ApiKeys, *, cache_s: float = CACHE_S) -> None:
        self._keys = keys
        self._cache_s = cache_s
        self._cached: dict[str, tuple[float, ApiKeyRow]] = {}  # by id: (when read, time.monotonic(); row)
        self._reading: dict[str, asyncio.Future[ApiKeyRow | None]] = {}  # one read per id at a time

    async def create(self, user: str, *, admin: bool = False) -> tuple[KeyInfo, str]:
        """A new key for `user`; the token is returned once and never stored."""
        if not user.strip():
            raise UserError("--user is empty: a key belongs to a user")
        for _ in range(ID_TRIES):
            token = f"{PREFIX}{secrets.token_hex(4)}_{secrets.token_urlsafe(24)}"
            row = ApiKeyRow(key_id(token), user, _hash(token), admin, time.time(), None)
            if await self._keys.add_api_key(row):
                return _info(row), token
        raise StoreError(f"no free key id in {ID_TRIES} tries: the key table is nearly full")

    async def list(self) -> list[KeyInfo]:
        return [_info(row) for row in await self._keys.api_keys()]

    async def revoke(self, key: str) -> KeyInfo:
        """Revoke a key by its id (or the key itself)."""
        wanted = key_id(key)
        row = await self._keys.revoke_api_key(wanted)
        if row is None:
            raise UserError(f"no active key with id '{wanted}'; `cantata keys list` shows them")
        # After the store answered, so that no read started before the revocation caches the key active.
        self._cached[wanted] = (time.monotonic(), row)
        return _info(row)

    async def configured(self) -> bool:
        """Whether keys are in use: any key ever created, revoked or not. Revoking the last
        key must lock the server, not open it again."""
        return bool(await self._keys.api_keys())

    async def verify(self, token: str) -> Principal | None:
        """The key's owner, or None for an unknown, malformed or revoked key."""
        if not token.startswith(PREFIX):
            return None
        row = await self._row(key_id(token))
        digest = _hash(token)  # the same work for unknown ids as for known ones
        if row is None or row.revoked_at is not None or not hmac.compare_digest(digest, row.hash):
            return None
        return Principal(user=row.user_id, admin=row.admin)

    async def _row(self, wanted: str) -> ApiKeyRow | None:
        cached = self._cached.get(wanted)
        if cached is not None and time.monotonic() - cached[0] < self._cache_s:
            return cached[1]
        reading = self._reading.get(wanted)
        if reading is None:
            # Requests with the same key at once share one read; shielded, so that a request
            # that goes away does not cancel it for the others.
            reading = self._reading[wanted] = asyncio.ensure_future(self._read(wanted))
        return await asyncio.shield(reading)

    async def _read(self, wanted: str) -> ApiKeyRow | None:
        try:
            row = await self._keys.api_key(wanted)
        finally:
            del self._reading[wanted]
        if row is None:
            self._cached.pop(wanted, None)
        else:
            self._cached[wanted] = (time.monotonic(), row)
        return row
