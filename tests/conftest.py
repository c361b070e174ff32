"""Shared fixtures: a private CANTATA_HOME per test, a file writer, and a store per implementation.
What is shared but not a fixture lives in tests/helpers/."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from cantata.store import SqliteStore
from tests.helpers.pipelines import WriteFile
from tests.helpers.stores import StoreFactory


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own CANTATA_HOME: no test reads or writes the user's data."""
    path = tmp_path / "home"
    monkeypatch.setenv("CANTATA_HOME", str(path))
    monkeypatch.delenv("CANTATA_CONFIG", raising=False)
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
# The store tests run once per implementation of the `Store` protocol. Each param makes a
# factory that opens a store on one database (see tests/helpers/stores.py).


def _sqlite_factory(tmp_path: Path) -> StoreFactory:
    return lambda: SqliteStore(tmp_path / "store" / "cantata.db")


STORE_IMPLEMENTATIONS = {"sqlite": _sqlite_factory}


@pytest.fixture(params=sorted(STORE_IMPLEMENTATIONS))
def open_test_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    factory: StoreFactory = STORE_IMPLEMENTATIONS[request.param](tmp_path)
    return factory
