"""`cantata serve` killed mid-turn, and stopped with SIGTERM mid-turn: the next start resumes
the turn, and its event stream shows it going on and finishing, nothing delivered twice."""

from __future__ import annotations

import signal
import sqlite3
import threading
from collections import Counter
from contextlib import closing
from pathlib import Path

import httpx
import pytest

from tests.helpers.kills import KILL_ENV, PIPELINE
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.helpers.servers import CantataServer
from tests.helpers.sse import SSEvent, parse

pytestmark = pytest.mark.kill

ONCE = ("turn_started", "early_delivered", "turn_delivered")


def ask(server: CantataServer, message: str) -> str:
    """A streamed chat turn; what arrived before the server went away (it may not end)."""
    body = {"model": "durable", "stream": True, "messages": [{"role": "user", "content": message}]}
    received = []
    try:
        with httpx.stream("POST", f"{server.url}/v1/chat/completions", json=body, timeout=60) as reply:
            for text in reply.iter_text():
                received.append(text)
    except httpx.HTTPError:
        pass  # cut: the point of these tests
    return "".join(received)


def running_turn(home: Path) -> tuple[int, int]:
    """The one turn left running, and the last event the store has of it."""
    with closing(sqlite3.connect(home / "cantata.db")) as db:
        (turn_id,) = db.execute("SELECT id FROM turns WHERE status = 'running'").fetchone()
        (seq,) = db.execute("SELECT MAX(id) FROM events WHERE turn_id = ?", (turn_id,)).fetchone()
    return int(turn_id), int(seq)


def turn_events(server: CantataServer, turn_id: int, after: int = 0) -> list[SSEvent]:
    """The turn's events after `after` (as Last-Event-ID), replayed then live, to turn_delivered."""
    headers = {"Last-Event-ID": str(after)} if after else {}
    with httpx.stream("GET", f"{server.url}/api/turns/{turn_id}/events", headers=headers, timeout=60) as reply:
        text = "".join(reply.iter_text())
    return [e for e in parse(text) if e.event is not None]


def assert_finished_once(server: CantataServer, turn_id: int, seq: int) -> None:
    whole = turn_events(server, turn_id)
    kinds = Counter(e.event for e in whole)
    assert [kinds[kind] for kind in ONCE] == [1, 1, 1] and kinds["turn_resumed"] == 1, kinds
    ids = [int(e.id or 0) for e in whole]
    assert ids == sorted(set(ids))
    # A client that had seen everything up to the cut reconnects: the turn goes on from there.
    after = turn_events(server, turn_id, after=seq)
    assert after[0].event == "turn_resumed" and after[-1].event == "turn_delivered"
    assert not {"turn_started", "early_delivered"} & {e.event for e in after}
    turn = httpx.get(f"{server.url}/api/turns/{turn_id}", timeout=10).json()
    assert turn["status"] == "ok" and turn["early"] is not None and turn["final"] is not None


def test_a_restarted_server_finishes_a_turn_killed_mid_way(
    write: WriteFile, tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = scripted_config(write, s={"latency_s": 0.05})
    args = ("--config", str(config), "--pipeline", str(PIPELINE))
    monkeypatch.setenv(KILL_ENV, "after_write:shadow")
    with CantataServer(tmp_path, *args) as doomed:
        ask(doomed, "I keep skipping the gym.")
        assert doomed.process is not None and doomed.process.wait(timeout=60) == -signal.SIGKILL
    turn_id, seq = running_turn(home)
    monkeypatch.delenv(KILL_ENV)
    with CantataServer(tmp_path, *args) as restarted:
        assert_finished_once(restarted, turn_id, seq)
    assert f"resumed 1 unfinished turn(s): {turn_id} (ok)" in restarted.log()


def test_sigterm_mid_turn_exits_cleanly_within_the_grace_and_the_next_start_finishes_it(
    write: WriteFile, tmp_path: Path, home: Path
) -> None:
    # shadow's instance never answers (the first instance serving an alias is the one used).
    config = scripted_config(
        write, stuck={"latency_s": 3600, "serves": ["slow"]}, quick={"latency_s": 0.05, "serves": ["*"]}
    )
    slow = write(
        "durable.yaml", PIPELINE.read_text().replace("  - name: shadow\n", "  - name: shadow\n    model: slow\n")
    )
    write("rules.py", (PIPELINE.parent / "rules.py").read_text())
    with CantataServer(tmp_path, "--config", str(config), "--pipeline", str(slow), "--grace", "1") as stopping:
        said: list[str] = []
        asking = threading.Thread(target=lambda: said.append(ask(stopping, "I keep skipping the gym.")))
        asking.start()
        with httpx.stream("GET", f"{stopping.url}/api/events", timeout=60) as events:
            for line in events.iter_lines():
                if line.startswith("event: early_delivered"):
                    break
        assert stopping.process is not None
        stopping.process.send_signal(signal.SIGTERM)
        code = stopping.process.wait(timeout=60)  # a bound for a hung test, not a timing claim
        asking.join(timeout=60)
    log = stopping.log()
    # uvicorn ends by raising the SIGTERM it caught again, so the exit status still says it.
    assert code in (0, -signal.SIGTERM) and "Traceback" not in log and "CancelledError" not in log, log
    assert "left 1 turn(s) unfinished at shutdown" in log
    # The client's stream ended in order, saying why, before the server gave up on it.
    assert "the server stopped before the turn finished" in said[0] and said[0].endswith("data: [DONE]\n\n")
    turn_id, seq = running_turn(home)
    fixed = scripted_config(write, quick={"latency_s": 0.05, "serves": ["*"]})
    with CantataServer(tmp_path, "--config", str(fixed), "--pipeline", str(slow)) as restarted:
        assert_finished_once(restarted, turn_id, seq)
