"""Two `cantata serve --workers queue` and three `cantata worker` processes on one PostgreSQL:
300 turns sent through both servers at once (100 sessions, each a first turn, then two more
queued together), one worker stopped with SIGKILL a third of the way in, in the middle of a
turn it runs. Every turn ends
once, ok; no agent's output is written twice; the turns the dead worker held are taken over
within 30 s; and each turn's events are streamed by a server that did not run it (workers run
every turn), by the one it was sent to and by the other one. And a turn that kills every
worker running it: failed after MAX_TAKEOVERS takeovers, its client told why."""

from __future__ import annotations

import asyncio
import json
import signal
import threading
from collections import Counter
from pathlib import Path

import httpx
import psycopg
import pytest

from cantata.turn_queue import MAX_TAKEOVERS
from tests.helpers.kills import KILL_ENV, PIPELINE, message, once_problems, read_store
from tests.helpers.postgres import PostgresServer
from tests.helpers.servers import CantataServer
from tests.helpers.sse import parse
from tests.helpers.workers import TURN_S, WorkerProcess, check_store, fleet, fleet_config, kill_mid_turn, send_sessions

pytestmark = pytest.mark.kill

SESSIONS, TURNS = 100, 3
TAKEOVER_S = 30.0


def test_three_workers_one_killed_run_300_turns_from_two_servers_each_once(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    url = postgres.new_database()
    with fleet(tmp_path, url, servers=2, workers=3, latency_s=0.05, concurrency=16) as running:
        killed_at = kill_mid_turn(url, running.workers[0], after_turns=SESSIONS * TURNS // 3)
        urls = [server.url for server in running.servers]
        sent = asyncio.run(send_sessions(urls, sessions=SESSIONS, turns=TURNS))
        logs = running.logs()
    stored = check_store(url)
    print(
        f"workers kill test: {len(sent)} turns, {len(stored.resumed)} taken over after the kill,"
        f" slowest turn {max(s.seconds for s in sent):.1f} s"
    )
    assert killed_at, "the run ended before a third of its turns"
    assert stored.problems == [], logs
    # Each request stored one turn, with its message once: no request made two (a retry, a replay).
    assert len(sent) == SESSIONS * TURNS and len({s.text for s in sent}) == len(sent)
    assert sorted(stored.turns) == sorted(s.turn_id for s in sent), f"{len(stored.turns)} turns stored"
    assert stored.asked == Counter(s.text for s in sent), (
        f"messages stored twice: {stored.asked - Counter(s.text for s in sent)}"
    )
    assert all(s.merged for s in sent), "a stream ended without its merged reply"
    # The dead worker's turns were cut and went on elsewhere, soon enough.
    assert stored.resumed, "the kill cut no turn: it took none over"
    assert all(wall - killed_at[0] < TAKEOVER_S for _, wall in stored.resumed)
    # Both servers streamed every turn's events: the one it was sent to (above), and the other.
    # A taken-over turn is followed across the takeover: its `turn_resumed` (from the worker that took
    # it over) and what came after, to its `turn_delivered` (below).
    taken_over = {turn_id for turn_id, _ in stored.resumed}
    followed = [s.elsewhere for s in sent if s.turn_id in taken_over]
    assert followed and all("turn_resumed" in events for events in followed), followed
    cut = [(s.turn_id, s.elsewhere[-3:]) for s in sent if not s.elsewhere or s.elsewhere[-1] != "turn_delivered"]
    assert cut == [], f"{len(cut)} turns' events did not reach the other server: {cut[:3]}"


def test_a_turn_that_kills_every_worker_running_it_is_failed_after_the_last_takeover(
    tmp_path: Path, postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every worker that runs the turn dies (SIGKILL at `finishing`, each time it gets there):
    the next worker's sweep finds it stalled and takes it over, MAX_TAKEOVERS times; the worker
    that claims it after the last death fails it without running it, and the client's stream
    ends saying why. Real `cantata serve --workers queue` and `cantata worker` processes, one
    worker at a time."""
    url = postgres.new_database()
    config = fleet_config(tmp_path, url, latency_s=0.01)
    monkeypatch.setenv(KILL_ENV, "finishing")  # only workers run turns
    answer: list[httpx.Response] = []
    body = {"model": "durable", "messages": [{"role": "user", "content": message(0)}], "stream": True}
    args = ["--workers", "queue", "--config", str(config), "--pipeline", str(PIPELINE)]
    with CantataServer(tmp_path, *args) as server:
        asking = threading.Thread(
            target=lambda: answer.append(httpx.post(f"{server.url}/v1/chat/completions", json=body, timeout=TURN_S * 3))
        )
        asking.start()
        for death in range(MAX_TAKEOVERS + 1):
            with WorkerProcess(tmp_path / f"worker-{death}", config, concurrency=1) as worker:
                assert worker.process is not None
                assert worker.process.wait(timeout=TURN_S) == -signal.SIGKILL, worker.output()
        with WorkerProcess(tmp_path / "worker-last", config, concurrency=1) as last:
            asking.join(TURN_S)
            logs = server.log() + last.output()
    assert answer, logs
    *_, final = [e.json() for e in parse(answer[0].text) if e.data and e.data != "[DONE]"]
    said = final["cantata"]["error"]
    assert said.endswith(f"stopped {MAX_TAKEOVERS + 1} times (it is taken over at most {MAX_TAKEOVERS} times)"), said
    with psycopg.connect(url) as db:
        rows = read_store(db)
    assert list(rows.turns.values()) == ["failed"]
    assert once_problems(rows, finished=False) == []  # nothing twice: no agent run again, one final event
    (_, _, kind, _, data, _) = rows.events[-1]
    assert kind == "turn_delivered" and json.loads(data) == {"status": "failed", "reason": said}
