"""What only the PostgreSQL store does (the conformance tests run it too, see conftest.py):
how it is chosen, a server that cannot be reached, its URL shown without its password,
several processes opening a new database at once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from psycopg import conninfo

from cantata.config import database_url, load_config
from cantata.errors import ConfigError, StoreUnavailable, scrub
from cantata.store import open_store
from cantata.store.migrations import MIGRATIONS, name_of
from cantata.store.postgres_db import bounded, redact
from cantata.store.postgres_store import PostgresStore
from tests.helpers import postgres as postgres_helper
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.helpers.postgres import PostgresServer
from tests.helpers.servers import free_port
from tests.test_cli import cantata
from tests.test_scheduler import DIAMOND


def unreachable_url() -> tuple[str, str]:
    """A URL with a password where nothing listens, and how it may be shown."""
    port = free_port()  # bound, then closed
    return f"postgresql://ana:s3cret-pw@127.0.0.1:{port}/cantata", f"postgresql://ana@127.0.0.1:{port}/cantata"


def test_a_url_is_shown_without_its_password_wherever_it_is() -> None:
    assert redact("postgresql://ana:p%40ss-word@db.example:5433/cantata?sslmode=require") == (
        "postgresql://ana@db.example:5433/cantata?sslmode=require"
    )
    assert redact("postgres://db.example/cantata?password=in-query&user=ana") == (
        "postgres://db.example/cantata?user=ana"
    )
    assert redact("postgresql://ana@/cantata?host=/run/postgresql") == "postgresql://ana@/cantata?host=/run/postgresql"
    # Registered as secrets: an error message that quotes them shows *** instead.
    assert scrub("p@ss-word, in-query") == "***, ***"


def test_cantata_db_wins_over_the_config_and_must_be_a_postgresql_url(
    write: WriteFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config(
        write("c.yaml", "database: postgresql://cfg@h/db\ninstances: [{name: a, backend: scripted}]\n")
    )
    assert database_url(config) == "postgresql://cfg@h/db"
    assert database_url(load_config(scripted_config(write, a={}))) is None  # SQLite under CANTATA_HOME
    monkeypatch.setenv("CANTATA_DB", "postgresql://env@h/db")
    assert database_url(config) == "postgresql://env@h/db"
    monkeypatch.setenv("CANTATA_DB", "/var/lib/cantata.db")
    with pytest.raises(ConfigError, match="CANTATA_DB is not a postgresql:// URL"):
        database_url(config)
    bad = write("bad.yaml", "instances: [{name: a, backend: scripted}]\ndatabase: mysql://h/db\n")
    with pytest.raises(ConfigError, match=r"bad.yaml:2: .*not a postgresql:// URL"):
        load_config(bad)


async def test_an_unreachable_server_fails_every_call_with_one_store_unavailable(home: Path) -> None:
    url, shown = unreachable_url()
    store = open_store(home, url)
    assert isinstance(store, PostgresStore)
    for _ in range(2):
        with pytest.raises(StoreUnavailable) as caught:
            await store.get_session("x")
        message = str(caught.value)
        assert message.startswith(f"cannot reach the database {shown}: ") and "\n" not in message
        assert "s3cret" not in message
    await store.close()


def test_the_cli_says_an_unreachable_database_in_one_line_and_exits_2(
    write: WriteFile, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, shown = unreachable_url()
    config = scripted_config(write, fake={})
    pipeline = str(write("diamond.yaml", DIAMOND))
    in_config = write("db.yaml", f"database: {url}\n" + config.read_text())
    port = str(free_port())
    for command, env in (
        (["run", pipeline, "-m", "hi", "--config", str(config)], url),  # CANTATA_DB
        (["run", pipeline, "-m", "hi", "--config", str(in_config)], None),  # the config's `database`
        (["chat", pipeline, "--config", str(in_config)], None),
        (["resume", "--config", str(in_config)], None),
        (["serve", "--port", port, "--config", str(in_config)], None),  # before it binds
        (["keys", "create", "--user", "ann", "--config", str(in_config)], None),  # the keys are in the state
        (["keys", "list"], url),
    ):
        if env:
            monkeypatch.setenv("CANTATA_DB", env)
        else:
            monkeypatch.delenv("CANTATA_DB", raising=False)
        done = cantata(*command, stdin=b"hello\n")
        assert done.returncode == 2, (command, done.stderr)
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith(f"error: cannot reach the database {shown}: "), line
        assert "s3cret" not in done.stderr + done.stdout
        assert not (home / "cantata.db").exists()


def test_turns_run_on_postgresql_when_the_config_names_it(
    write: WriteFile, home: Path, postgres: PostgresServer
) -> None:
    url = postgres.new_database()
    config = write("db.yaml", f"database: {url}\n" + scripted_config(write, fake={}).read_text())
    pipeline = str(write("diamond.yaml", DIAMOND))
    first = json.loads(cantata("run", pipeline, "-m", "hello", "--config", str(config), "--json").stdout)
    again = cantata("run", pipeline, "-m", "more", "--config", str(config), "--session", first["session"], "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["turn"] == 2
    assert not (home / "cantata.db").exists()  # nothing went to SQLite

    async def stored() -> list[tuple[int, str, str]]:
        store = PostgresStore(url)
        try:
            return [(t.number, t.message, t.status) for t in await store.turns(first["session"])]
        finally:
            await store.close()

    assert asyncio.run(stored()) == [(1, "hello", "ok"), (2, "more", "ok")]


async def test_stores_opening_a_new_database_at_once_apply_each_migration_once(postgres: PostgresServer) -> None:
    url = postgres.new_database()
    stores = [PostgresStore(url) for _ in range(4)]
    try:
        # Every store migrates as it opens: without the migration lock, all but one would
        # fail creating tables another had just created.
        await asyncio.gather(*(store.get_session("") for store in stores))
        assert await stores[0].applied_migrations() == [name_of(m) for m in MIGRATIONS]
        assert await stores[1].migrate() == []
    finally:
        for store in stores:
            await store.close()


def test_without_postgresql_the_tests_that_need_it_fail_saying_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres_helper, "BINARIES", str(tmp_path / "*" / "bin"))
    with pytest.raises(pytest.fail.Exception, match=r"PostgreSQL is not installed .*apt-get install postgresql"):
        postgres_helper.binaries()


def test_the_deployed_agents_are_listed_from_postgresql_when_cantata_db_names_it(
    home: Path, postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = postgres.new_database()

    async def deploy() -> None:
        store = PostgresStore(url)
        try:
            await store.add_agent_version("greeter", forced=False, sandboxed=True, task_turn=None, summary={})
        finally:
            await store.close()

    asyncio.run(deploy())
    monkeypatch.setenv("CANTATA_DB", url)
    done = cantata("agents", "--json")
    assert done.returncode == 0, done.stderr
    assert [(v["name"], v["version"], v["active"]) for v in json.loads(done.stdout)] == [("greeter", 1, True)]
    assert not (home / "cantata.db").exists()


def test_connection_settings_the_url_gives_win_over_the_defaults() -> None:
    url = "postgresql://ana@db/c?connect_timeout=3&keepalives_idle=60"
    info = conninfo.conninfo_to_dict(bounded(url, application_name="x", keepalives_idle="15"))
    assert (info["connect_timeout"], info["keepalives_idle"], info["application_name"]) == ("3", "60", "x")
    assert conninfo.conninfo_to_dict(bounded("postgresql://ana@db/c"))["connect_timeout"] == "10"
