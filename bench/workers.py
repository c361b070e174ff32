"""Work distribution (issue #22): turns per second and p50/p99 turn time with 1, 2 and 4
`cantata worker` processes behind two `cantata serve --workers queue` on one PostgreSQL,
beside one `cantata serve` on SQLite running its own turns; the same sessions of the kill
tests' `durable` pipeline on scripted instances, sent over HTTP at once. A turn's time is its
client's, from the request to the stream's end; "x path" divides it by one turn's time alone
on SQLite (its critical path plus one process's overhead). One run each, on a shared machine:
the figures move with the load of whatever else runs."""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))  # the repository, for tests.helpers

from tests.helpers.kills import PIPELINE  # noqa: E402
from tests.helpers.postgres import running_postgres  # noqa: E402
from tests.helpers.servers import CantataServer  # noqa: E402
from tests.helpers.workers import Sent, fleet, fleet_config, send_sessions  # noqa: E402

SESSIONS, TURNS = 40, 3
LATENCY_S = 0.05
CONCURRENCY = 16  # turns at once per worker
WORKERS = (1, 2, 4)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def line(what: str, sent: list[Sent], seconds: float, path_s: float) -> str:
    times = [s.seconds for s in sent]
    p50, p99 = statistics.median(times), quantile(times, 0.99)
    return (
        f"  {what:<24} {len(sent) / seconds:6.1f} turns/s   p50 {p50:5.2f} s ({p50 / path_s:4.1f}x path)"
        f"   p99 {p99:5.2f} s ({p99 / path_s:4.1f}x path)"
    )


def sqlite_run(folder: Path) -> tuple[float, list[Sent], float]:
    """One turn alone, then the sessions, on one `cantata serve` with SQLite."""
    os.environ["CANTATA_HOME"] = str(folder / "home")
    config = fleet_config(folder, None, latency_s=LATENCY_S)
    with CantataServer(folder, "--config", str(config), "--pipeline", str(PIPELINE), stderr_apart=True) as server:
        alone = asyncio.run(send_sessions([server.url], sessions=1, turns=1, follow=False))[0].seconds
        t0 = time.monotonic()
        sent = asyncio.run(send_sessions([server.url], sessions=SESSIONS, turns=TURNS, follow=False))
        return alone, sent, time.monotonic() - t0


def queue_run(folder: Path, url: str, workers: int) -> tuple[list[Sent], float]:
    os.environ["CANTATA_HOME"] = str(folder / "home")
    with fleet(folder, url, servers=2, workers=workers, latency_s=LATENCY_S, concurrency=CONCURRENCY) as running:
        urls = [server.url for server in running.servers]
        asyncio.run(send_sessions(urls, sessions=2, turns=1, follow=False))  # every worker has started
        t0 = time.monotonic()
        sent = asyncio.run(send_sessions(urls, sessions=SESSIONS, turns=TURNS, follow=False))
        return sent, time.monotonic() - t0


def main() -> None:
    print(
        f"Work distribution: {SESSIONS} sessions x {TURNS} turns of `durable` at once, scripted {LATENCY_S} s a call"
        " (one run each; the machine is shared, the figures are noisy)"
    )
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        alone, sent, seconds = sqlite_run(folder / "sqlite")
        print(f"  one turn alone on SQLite: {alone:.2f} s (the 'path' below)")
        print(line("SQLite, one process", sent, seconds, alone))
        base = len(sent) / seconds
        with running_postgres() as postgres:
            for workers in WORKERS:
                sent, seconds = queue_run(folder / f"pg-{workers}", postgres.new_database(), workers)
                rate = len(sent) / seconds
                print(line(f"PostgreSQL, {workers} worker(s)", sent, seconds, alone) + f"   {rate / base:4.2f}x SQLite")


if __name__ == "__main__":
    main()
