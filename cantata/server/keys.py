"""API keys: `cnt_<id>_<secret>`, of which only the sha256 is stored.

A key is found by its public id, then its hash is compared in constant time, so neither
a timing difference nor a stolen database reveals a usable key. The table is created by
the store's migration 004_api_keys; this module keeps its own connection to the same
file, because keys are the server's concern, not the turn's. The keys stay in the SQLite
file under CANTATA_HOME even when the state is on PostgreSQL.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from cantata.errors import StoreError, UserError
from cantata.store import SqliteStore

PREFIX = "cnt_"


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


class KeyRing:
    @classmethod
    async def open(cls, home: Path) -> KeyRing:
        """The key ring of the store under `home`, created and migrated if need be."""
        store = SqliteStore(home / "cantata.db")
        try:
            await store.get_session("")  # the first call opens the file and applies the migrations
        finally:
            await store.close()
        return cls(home)

    def __init__(self, home: Path) -> None:
        """Use `await KeyRing.open(home)`: this assumes the migrations are applied."""
        try:
            self._db = sqlite3.connect(str(home / "cantata.db"), check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the key table in {home}: {exc}") from None

    def create(self, user: str, *, admin: bool = False) -> tuple[KeyInfo, str]:
        """A new key for `user`; the token is returned once and never stored."""
        if not user.strip():
            raise UserError("--user is empty: a key belongs to a user")
        key_id = secrets.token_hex(4)
        token = f"{PREFIX}{key_id}_{secrets.token_urlsafe(24)}"
        now = time.time()
        self._db.execute(
            "INSERT INTO api_keys (id, user_id, hash, admin, created_at) VALUES (?, ?, ?, ?, ?)",
            (key_id, user, _hash(token), int(admin), now),
        )
        return KeyInfo(key_id, user, admin, now, False), token

    def list(self) -> list[KeyInfo]:
        rows = self._db.execute(
            "SELECT id, user_id, admin, created_at, revoked_at FROM api_keys ORDER BY created_at"
        ).fetchall()
        return [KeyInfo(r[0], r[1], bool(r[2]), r[3], r[4] is not None) for r in rows]

    def revoke(self, key_id: str) -> KeyInfo:
        key_id = key_id.removeprefix(PREFIX).split("_")[0]
        cur = self._db.execute(
            "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (time.time(), key_id)
        )
        if cur.rowcount == 0:
            raise UserError(f"no active key with id '{key_id}'; `cantata keys list` shows them")
        return next(k for k in self.list() if k.id == key_id)

    def configured(self) -> bool:
        """Whether keys are in use: any key ever created, revoked or not. Revoking the last
        key must lock the server, not open it again."""
        return self._db.execute("SELECT 1 FROM api_keys LIMIT 1").fetchone() is not None

    def verify(self, token: str) -> Principal | None:
        """The key's owner, or None for an unknown, malformed or revoked key.
        One indexed read of a few bytes: fast enough to do on the loop for every request."""
        if not token.startswith(PREFIX):
            return None
        key_id = token[len(PREFIX) :].split("_")[0]
        row = self._db.execute(
            "SELECT user_id, hash, admin FROM api_keys WHERE id = ? AND revoked_at IS NULL", (key_id,)
        ).fetchone()
        if row is None:
            _hash(token)  # same work for unknown ids as for known ones
            return None
        if not hmac.compare_digest(_hash(token), row[1]):
            return None
        return Principal(user=row[0], admin=bool(row[2]))

    def close(self) -> None:
        self._db.close()
