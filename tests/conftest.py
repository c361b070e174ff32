"""Shared fixtures: a private CANTATA_HOME per test, a file writer, and a store per implementation.
What is shared but not a fixture lives in tests/helpers/."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from cantata.store import SqliteStore
from cantata.store.postgres_store import PostgresStore
from tests.helpers.pipelines import WriteFile
from tests.helpers.postgres import PostgresServer, postgres
from tests.helpers.stores import StoreFactory

__all__ = ["postgres"]  # a fixture: the store tests' PostgreSQL, started on first use


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own CANTATA_HOME: no test reads or writes the user's data."""
    path = tmp_path / "home"
    monkeypatch.setenv("CANTATA_HOME", str(path))
    monkeypatch.delenv("CANTATA_CONFIG", raising=False)
    monkeypatch.delenv("CANTATA_DB", raising=False)
    return path


@pytest.fixture
def calls_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the test tools (TOOLS of tests/test_tools.py) log each call they run: side effects a test can count."""
    path = tmp_path / "calls.jsonl"
    monkeypatch.setenv("TOOL_TEST_LOG", str(path))
    return path


@pytest.fixture
def write(tmp_path: Path) -> WriteFile:
    """write("name.yaml", text) -> path, with the text dedented."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return _write


# -- stores ----------------------------------------------------------------------------------
# The store tests run once per implementation of the `Store` protocol: a new store joins by
# adding one entry below. Each entry makes a factory (see tests/helpers/stores.py), given the
# test's request (for the fixtures it needs) and folder; when `shared`, two stores from one
# factory share one database, and the tests that need two writers run on it too.


@dataclass(frozen=True)
class StoreImplementation:
    factory: Callable[[pytest.FixtureRequest, Path], StoreFactory]
    shared: bool


def _postgres(request: pytest.FixtureRequest) -> StoreFactory:
    server: PostgresServer = request.getfixturevalue("postgres")
    url = server.new_database()  # one per test: its stores share it
    return lambda: PostgresStore(url)


STORE_IMPLEMENTATIONS = {
    "sqlite-file": StoreImplementation(
        lambda request, folder: lambda: SqliteStore(folder / "store" / "cantata.db"), True
    ),
    # A private database per store, as the benchmarks use it.
    "sqlite-memory": StoreImplementation(lambda request, folder: lambda: SqliteStore(":memory:"), False),
    "postgresql": StoreImplementation(lambda request, folder: _postgres(request), True),
}


@pytest.fixture(params=sorted(STORE_IMPLEMENTATIONS))
def open_test_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    return STORE_IMPLEMENTATIONS[request.param].factory(request, tmp_path)


@pytest.fixture(params=sorted(name for name, each in STORE_IMPLEMENTATIONS.items() if each.shared))
def open_shared_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """A factory whose stores share one database (for the tests of several writers)."""
    return STORE_IMPLEMENTATIONS[request.param].factory(request, tmp_path)
