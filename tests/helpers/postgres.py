"""A throwaway PostgreSQL for the tests: Debian's binaries (/usr/lib/postgresql/*/bin), a
cluster in a temporary folder that listens only on a unix socket in that folder, started
once per test session (the `postgres` fixture, on first use) and removed at its end. Each
store test gets a database of its own in it. The benchmarks use it too (`running_postgres`).

A test may restart the server, or stop it and start it again, on the same socket (the
reconnect tests): `restart`, `stop` and `start` below.

PostgreSQL refuses to run as root: as root, the cluster is made and run by the `postgres`
user that Debian's package creates. Missing binaries fail the tests that need them, with
one line saying what to install: never a silent skip.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

BINARIES = "/usr/lib/postgresql/*/bin"
# A cluster nobody keeps needs no durability: no fsync, no full pages, commits not waited on.
SETTINGS = "-c listen_addresses='' -c fsync=off -c full_page_writes=off -c synchronous_commit=off"
ADMIN_NAME = "cantata-tests-admin"  # the helper's own connections, as pg_stat_activity shows them


@dataclass
class PostgresServer:
    folder: Path  # the cluster's data is under it, and its socket in it

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={self.folder}"

    def new_database(self) -> str:
        """A new empty database; its URL."""
        name = f"test_{next(_numbers)}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def restart(self) -> None:
        """`pg_ctl restart -m fast`: every connection ended, its transaction rolled back, what
        was committed kept; back on the same socket when this returns."""
        _pg_ctl(self.folder, "-m", "fast", "restart")

    def stop(self, mode: str = "fast") -> None:
        """Stopped until `start`: `fast` keeps what was committed; `immediate`, as a crash, may
        lose the last commits (the test settings do not wait for their WAL to be flushed)."""
        _pg_ctl(self.folder, "-m", mode, "stop")

    def start(self) -> None:
        _pg_ctl(self.folder, "start")

    def terminate_backends(self, url: str) -> int:
        """End every connection to the database of `url` but this one (pg_terminate_backend),
        as an administrator or a failover would; how many there were."""
        # Named, so that an earlier call's connection, still on its way out, is not counted; and each
        # ended backend waited for (up to 5 s), so that the next call does not count it again.
        with psycopg.connect(url, autocommit=True, application_name=ADMIN_NAME) as admin:
            rows = admin.execute(
                "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name <> %s",
                (ADMIN_NAME,),
            ).fetchall()
        return len(rows)


_numbers = itertools.count(1)


def binaries() -> Path:
    """The newest installed PostgreSQL's bin folder; fails the test if there is none."""
    found = sorted(glob.glob(f"{BINARIES}/initdb"), key=lambda path: int(Path(path).parent.parent.name))
    if not found:
        pytest.fail(
            f"PostgreSQL is not installed (no {BINARIES}/initdb): apt-get install postgresql"
            " (scripts/system-packages.sh does it, as `make test` runs it)",
            pytrace=False,
        )
    return Path(found[-1]).parent


def _run(command: list[str], folder: Path) -> None:
    as_postgres: dict[str, Any] = {}
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        as_postgres = {"user": owner.pw_uid, "group": owner.pw_gid, "extra_groups": []}
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=120, **as_postgres)
    if done.returncode != 0:
        log = folder / "log"
        said = (done.stderr or done.stdout).strip() or (log.read_text() if log.exists() else "")
        pytest.fail(f"{Path(command[0]).name} failed: {said.splitlines()[-1] if said else done.returncode}", False)


def new_cluster(folder: Path) -> PostgresServer:
    bin_dir = binaries()
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(folder, owner.pw_uid, owner.pw_gid)
    data = folder / "data"
    _run([str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8",
          "--locale=C", "--no-sync"], folder)  # fmt: skip
    _pg_ctl(folder, "start")
    return PostgresServer(folder)


def _pg_ctl(folder: Path, *command: str) -> None:
    """pg_ctl on the cluster under `folder`, waiting for it to be done; `start` and
    `restart` listen on the socket in `folder` with the test settings."""
    options = ["-o", f"{SETTINGS} -k {folder}"] if command[-1] in ("start", "restart") else []
    _run([str(binaries() / "pg_ctl"), "-D", str(folder / "data"), "-l", str(folder / "log"), "-w", "-t", "60",
          *options, *command], folder)  # fmt: skip


@contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """A new cluster, stopped and removed on exit."""
    # In /tmp rather than $TMPDIR: a unix socket's path has at most 107 bytes, and the
    # postgres user must reach the folder (a TMPDIR under /root it could not).
    folder = Path(tempfile.mkdtemp(prefix="cantata-postgres-", dir="/tmp" if os.path.isdir("/tmp") else None))
    try:
        server = new_cluster(folder)
        try:
            yield server
        finally:
            server.stop("immediate")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        yield server
