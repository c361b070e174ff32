"""API keys live in the state's store: on PostgreSQL every server knows the keys any of them
(or `cantata keys` anywhere) created, whatever its CANTATA_HOME, and a revocation reaches
them all; in SQLite they stay in the file under CANTATA_HOME, where keys made before stay valid."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from pathlib import Path

import pytest

from cantata.server.keys import CACHE_S, KeyRing, Principal
from cantata.store import ApiKeyRow, SqliteStore
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.helpers.postgres import PostgresServer
from tests.helpers.server_app import client, make_app, running
from tests.test_cli import cantata

ANN = {"user": "ann", "admin": False, "auth": "keys"}


async def test_servers_on_one_postgresql_share_their_keys_and_revocations(
    write: WriteFile, tmp_path: Path, postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = postgres.new_database()
    config = write("db.yaml", f"database: {url}\n" + scripted_config(write, fast={"latency_s": 0.01}).read_text())
    # An operator's machine, with a CANTATA_HOME of its own, makes the first key.
    monkeypatch.setenv("CANTATA_HOME", str(tmp_path / "operator"))
    created = cantata("keys", "create", "--user", "ann", "--config", str(config))
    assert created.returncode == 0, created.stderr
    ann = created.stdout.strip()
    # Two servers with homes of their own, on a public address: they start, for the keys exist.
    homes = [tmp_path / "a", tmp_path / "b"]
    first, second = (make_app(config, home, host="0.0.0.0") for home in homes)
    async with running(first), running(second):
        ring_a: KeyRing = first.state.auth.keys
        bob = (await ring_a.create("bob"))[1]  # made through server A's own key ring
        async with client(first, ann) as ann_a, client(second, ann) as ann_b, client(second, bob) as bob_b:
            assert (await ann_a.get("/api/whoami")).json() == ANN
            assert (await ann_b.get("/api/whoami")).json() == ANN
            assert (await bob_b.get("/api/whoami")).json() == {"user": "bob", "admin": False, "auth": "keys"}
            await ring_a.revoke(ann)
            assert (await ann_a.get("/api/whoami")).status_code == 401  # on A at once
            await asyncio.sleep(CACHE_S)  # on B once its copy of the key ages out
            refused = await ann_b.get("/api/whoami")
            assert refused.status_code == 401 and refused.json()["error"]["code"] == "invalid_api_key"
            assert (await bob_b.get("/api/whoami")).status_code == 200
    listed = cantata("keys", "list", "--config", str(config)).stdout
    assert "ann" in listed and "revoked" in listed and "bob" in listed
    for home in [tmp_path / "operator", *homes]:
        assert not (home / "cantata.db").exists()  # no key, nor anything else, went to SQLite


async def test_a_key_stored_in_the_sqlite_home_before_still_opens_the_server(write: WriteFile, home: Path) -> None:
    # The table of migration 004, written as the server's own SQLite connection wrote it.
    store = SqliteStore(home / "cantata.db")
    await store.migrate()
    await store.close()
    token = "cnt_0a1b2c3d_an-older-secret"
    with sqlite3.connect(home / "cantata.db") as db:
        db.execute(
            "INSERT INTO api_keys (id, user_id, hash, admin, created_at) VALUES (?, ?, ?, ?, ?)",
            ("0a1b2c3d", "ann", hashlib.sha256(token.encode()).hexdigest(), 0, 1.0e9),
        )
    db.close()
    async with running(make_app(scripted_config(write, fast={}), home, host="0.0.0.0")) as app:
        async with client(app, token) as ann, client(app, token + "x") as wrong:
            assert (await ann.get("/api/whoami")).json() == ANN
            assert (await wrong.get("/api/whoami")).status_code == 401


class CountedReads:
    """A store's keys, counting the reads of one key by id."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store
        self.reads = 0

    async def add_api_key(self, key: ApiKeyRow) -> bool:
        return await self.store.add_api_key(key)

    async def api_key(self, key_id: str) -> ApiKeyRow | None:
        self.reads += 1
        return await self.store.api_key(key_id)

    async def api_keys(self) -> list[ApiKeyRow]:
        return await self.store.api_keys()

    async def revoke_api_key(self, key_id: str) -> ApiKeyRow | None:
        return await self.store.revoke_api_key(key_id)


async def test_a_key_is_read_once_for_requests_at_once_and_again_once_its_copy_ages_out() -> None:
    store = SqliteStore(":memory:")
    keys = CountedReads(store)
    try:
        ring = KeyRing(keys, cache_s=0.2)
        _, token = await ring.create("ann")
        _, other = await ring.create("bob")
        found = await asyncio.gather(*(ring.verify(token) for _ in range(20)), ring.verify(token + "x"))
        assert found == [Principal("ann", admin=False)] * 20 + [None] and keys.reads == 1
        await asyncio.sleep(0.2)
        assert await ring.verify(token) == Principal("ann", admin=False) and keys.reads == 2
        assert await ring.verify("cnt_00000000_unknown") is None and keys.reads == 3
        assert await ring.verify("not-a-key") is None and keys.reads == 3  # not even looked up
        await ring.verify(other)
        await ring.revoke(other.split("_")[1])
        assert await ring.verify(other) is None  # revoked through this ring: at once
    finally:
        await store.close()
