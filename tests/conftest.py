"""Shared fixtures: a private CANTATA_HOME per test, and helpers to write pipelines and configs."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from cantata.config import load_config
from cantata.runtime import Cantata
from cantata.spec import load_pipeline
from cantata.store import SqliteStore, Store, TurnRow
from cantata.turn import TurnResult


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own CANTATA_HOME: no test reads or writes the user's data."""
    path = tmp_path / "home"
    monkeypatch.setenv("CANTATA_HOME", str(path))
    monkeypatch.delenv("CANTATA_CONFIG", raising=False)
    return path


WriteFile = Callable[[str, str], Path]


@pytest.fixture
def write(tmp_path: Path) -> WriteFile:
    """write("name.yaml", text) -> path, with the text dedented."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return _write


def scripted_config(write: WriteFile, **instances: dict[str, object]) -> Path:
    """An instances config of scripted instances: scripted_config(write, fast={"latency_s": 0})."""
    lines = ["instances:"]
    for name, options in instances.items():
        lines.append(f"  - name: {name}")
        lines.append("    backend: scripted")
        for key, value in options.items():
            lines.append(f"    {key}: {value!r}" if not isinstance(value, list) else f"    {key}: {value}")
    return write("instances.yaml", "\n".join(lines) + "\n")


# A merged reply holding what a Markdown writer puts between sections: a rule line, which
# must reach every client whole (it once split the early and the merged reply apart).
RULED = "Before the line.\n\n---\n\nAfter the line."


def ruled_config(write: WriteFile, **options: object) -> Path:
    """One scripted instance whose final agents (the example pipeline's `answer`) reply RULED."""
    replies = write("replies.yaml", f"answer: {json.dumps(RULED)}\n")
    return scripted_config(write, steady={**options, "replies": str(replies)})


async def run_functions(write: WriteFile, home: Path, pipeline_yaml: str) -> tuple[TurnResult, TurnRow | None]:
    """One turn ("hello") of a pipeline of function agents, and the turn as stored."""
    app = Cantata(load_config(scripted_config(write, fake={})), home=home)
    try:
        result = await app.run_turn(load_pipeline(write("p.yaml", pipeline_yaml)), "hello")
        return result, await app.store.get_turn(result.turn_id)
    finally:
        await app.close()


# -- stores ----------------------------------------------------------------------------------
# The store tests run once per implementation of the `Store` protocol. Each param makes a
# factory that opens a store on one database; calling it twice gives two stores (two
# connections, as two processes would have) on the same data.

StoreFactory = Callable[[], Store]


def _sqlite_factory(tmp_path: Path) -> StoreFactory:
    return lambda: SqliteStore(tmp_path / "store" / "cantata.db")


STORE_IMPLEMENTATIONS = {"sqlite": _sqlite_factory}


@pytest.fixture(params=sorted(STORE_IMPLEMENTATIONS))
def open_test_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    factory: StoreFactory = STORE_IMPLEMENTATIONS[request.param](tmp_path)
    return factory
