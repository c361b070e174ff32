"""Two `cantata serve --workers queue` and three `cantata worker` processes on one PostgreSQL:
300 turns sent through both servers at once (100 sessions, each a first turn, then two more
queued together), one worker stopped with SIGKILL a third of the way in, in the middle of a
turn it runs. Every turn ends
once, ok; no agent's output is written twice; the turns the dead worker held are taken over
within 30 s; and each turn's events are streamed by a server that did not run it (workers run
every turn), by the one it was sent to and by the other one."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from tests.helpers.postgres import PostgresServer
from tests.helpers.workers import check_store, fleet, kill_mid_turn, send_sessions

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
