"""Model faults under load, over HTTP: 200 concurrent sessions of five streamed turns each
against `cantata serve` (a subprocess on loopback), on the coaching-shaped DAG of
overhead.py with scripted instances of fixed latency, 5% of whose calls fail with any
fault (down, 5xx, 429, 401, a hang, a stream cut short, invalid JSON, an empty reply).
Every figure is measured in this run:
  - lost messages (a message sent with no turn stored for it), 5xx answers and duplicated
    deliveries (a turn's early reply or delivery recorded twice, or a stream that carried
    its reply twice): all must be 0;
  - p50 and p99 of the time to the final reply, against the DAG's critical path;
  - the server's peak memory (VmHWM).
A hung call costs its deadline: with 200 sessions in flight on an instance, that is the
agent's ceiling (TIMEOUT_S), since a busy instance is given the time its queue needs.

`python bench/faults.py --sessions 5` checks that it runs, in seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import get_args

import httpx

sys.path.insert(0, str(Path(__file__).parent.parent))
sys.path.insert(0, str(Path(__file__).parent))

from overhead import LATENCY, critical_path, write_pipeline  # noqa: E402
from server_http import pct, phase, serving  # noqa: E402

from cantata.config import FaultKind  # noqa: E402

SESSIONS = 200
TURNS = 5
FAULT_RATE = 0.05
TIMEOUT_S = 5.0


def write_config(folder: Path) -> Path:
    faults = ", ".join(get_args(FaultKind))
    lines = ["instances:"]
    for seed, (name, latency) in enumerate(LATENCY.items()):
        lines += [
            f"  - name: {name}",
            "    backend: scripted",
            f"    latency_s: {latency}",
            f"    fail_rate: {FAULT_RATE}",
            f"    faults: [{faults}]",
            f"    seed: {seed}",
            f"    serves: [{name}]",
        ]
    path = folder / "instances.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


class Tally:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []  # (session, message)
        self.times: list[float] = []
        self.server_errors = 0
        self.other_errors: list[str] = []
        self.doubled_streams = 0


async def one_turn(client: httpx.AsyncClient, tally: Tally, session: str | None, text: str) -> str | None:
    """One streamed turn; the session it belongs to (None when none was started)."""
    headers = {"X-Cantata-Session": session} if session else {}
    body = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": text}]}
    start = time.perf_counter()
    async with client.stream("POST", "/v1/chat/completions", json=body, headers=headers) as response:
        if response.status_code >= 500:
            tally.server_errors += 1
        if response.status_code != 200:
            tally.other_errors.append(f"HTTP {response.status_code}: {(await response.aread())[:200]!r}")
            return session
        session = response.headers["X-Cantata-Session"]
        tally.sent.append((session, text))
        separators = 0
        async for line in response.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                separators += phase(json.loads(line[6:])) == "separator"
    tally.times.append(time.perf_counter() - start)
    if separators > 1:  # the early reply, or the merged one, sent twice
        tally.doubled_streams += 1
    return session


async def chat(client: httpx.AsyncClient, tally: Tally, i: int, turns: int) -> None:
    session: str | None = None
    for t in range(turns):
        session = await one_turn(client, tally, session, f"session {i}, message {t}")


async def run(url: str, sessions: int, turns: int) -> tuple[Tally, float]:
    tally = Tally()
    limits = httpx.Limits(max_connections=sessions + 10, max_keepalive_connections=sessions + 10)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=300) as client:
        start = time.perf_counter()
        await asyncio.gather(*(chat(client, tally, i, turns) for i in range(sessions)))
    return tally, time.perf_counter() - start


def check_store(db_path: Path, tally: Tally) -> tuple[int, int]:
    """(lost messages, duplicated deliveries), read from the server's store after it stopped."""
    db = sqlite3.connect(db_path)
    try:
        stored = set(
            db.execute(
                "SELECT t.session_id, m.content FROM messages m JOIN turns t ON t.id = m.turn_id WHERE m.role = 'user'"
            ).fetchall()
        )
        doubled_events = db.execute(
            "SELECT COUNT(*) FROM (SELECT turn_id, type FROM events WHERE type IN ('early_delivered', 'turn_delivered')"
            " GROUP BY turn_id, type HAVING COUNT(*) > 1)"
        ).fetchone()[0]
        doubled_replies = db.execute(
            "SELECT COUNT(*) FROM (SELECT turn_id, agent FROM messages WHERE role = 'assistant'"
            " GROUP BY turn_id, agent HAVING COUNT(*) > 1)"
        ).fetchone()[0]
    finally:
        db.close()
    lost = sum(1 for sent in tally.sent if sent not in stored)
    return lost, doubled_events + doubled_replies + tally.doubled_streams


def peak_memory_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(sessions: int = SESSIONS, turns: int = TURNS) -> None:
    path = critical_path(LATENCY)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pipeline_path = write_pipeline(folder, timeout_s=TIMEOUT_S)
        with serving(folder, write_config(folder), pipeline_path) as (server, url):
            tally, wall = asyncio.run(run(url, sessions, turns))
            peak = peak_memory_mb(server.pid)
        lost, doubled = check_store(folder / "server-home" / "cantata.db", tally)
    total = sessions * turns
    print(
        f"model faults over HTTP: {sessions} concurrent sessions x {turns} streamed turns, coaching-shaped DAG,"
        f" scripted instances, {FAULT_RATE:.0%} of calls failing (every fault kind), ceilings {TIMEOUT_S:g} s"
    )
    print(f"  turns answered                      {len(tally.times)} of {total} in {wall:.1f} s")
    print(f"  lost messages                       {lost + total - len(tally.sent)}   (target 0)")
    print(f"  5xx answers                         {tally.server_errors}   (target 0)")
    print(f"  duplicated deliveries               {doubled}   (target 0)")
    if tally.other_errors:
        print(f"  other errors                        {len(tally.other_errors)}, e.g. {tally.other_errors[0]}")
    if tally.times:
        p50, p99 = pct(tally.times, 0.5), pct(tally.times, 0.99)
        print(
            f"  turn (final reply)  p50 / p99       {p50:.3f} s / {p99:.3f} s"
            f" = {p50 / path:.2f}x / {p99 / path:.2f}x critical path ({path:.3f} s)"
        )
    print(f"  server peak memory                  {peak:.0f} MB (VmHWM)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--turns", type=int, default=TURNS)
    arguments = parser.parse_args()
    main(arguments.sessions, arguments.turns)
