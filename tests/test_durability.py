"""Durability in one process: a cut turn resumes publishing nothing twice, its early reply is
history at once, one turn at a time per session across runtimes (leases). The kill tests,
with real SIGKILLs, are tests/test_kill.py."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from cantata.config import load_config
from cantata.errors import SessionBusy
from cantata.events import Event
from cantata.leases import holder_is_gone, process_start
from cantata.loader import Pipeline, load_pipeline
from cantata.runtime import Cantata
from cantata.store import SessionRow
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.helpers.server_app import chat_body, client, make_app, running

TWO_SPEEDS = """
name: twospeeds
agents:
  - name: coach
    model: fast
    prompt: Answer at once.
    deliver: early
  - name: shadow
    model: slow
    prompt: Read the person.
  - name: synth
    model: fast
    prompt: Merge.
    reads: [coach, shadow]
    deliver: final
"""


def runtime(write: WriteFile, home: Path, *, slow_s: float) -> Cantata:
    config = scripted_config(
        write, fast={"latency_s": 0, "serves": ["fast"]}, slow={"latency_s": slow_s, "serves": ["slow"]}
    )
    return Cantata(load_config(config), home=home)


async def cut_after_early_reply(app: Cantata, pipeline: Pipeline, message: str, session: str | None = None) -> int:
    """Run a turn until its early reply is out, then cancel it, as a shutdown past its grace does."""
    early = asyncio.Event()
    turn_ids: list[int] = []

    def watch(event: Event) -> None:
        turn_ids.append(event.turn_id)
        if event.type == "early_delivered":
            early.set()

    task = asyncio.create_task(app.run_turn(pipeline, message, session_id=session, on_event=watch))
    await early.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return turn_ids[0]


async def test_a_cut_turn_resumes_publishing_nothing_twice(write: WriteFile, home: Path) -> None:
    pipeline = load_pipeline(write("p.yaml", TWO_SPEEDS))
    first = runtime(write, home, slow_s=60)
    try:
        turn_id = await cut_after_early_reply(first, pipeline, "I keep skipping the gym.")
    finally:
        await first.close()
    second = runtime(write, home, slow_s=0)
    events: list[Event] = []
    try:
        resumed = await second.resume_unfinished(lambda s: pipeline, on_event=events.append)
        stored = await second.store.events(turn_id)
        turn = await second.store.get_turn(turn_id)
    finally:
        await second.close()
    assert [r.turn_id for r in resumed.results] == [turn_id] and resumed.skipped == []
    assert resumed.results[0].status == "ok" and resumed.results[0].early is not None
    kinds = Counter(e.type for e in stored)
    assert (kinds["turn_started"], kinds["turn_resumed"], kinds["early_delivered"], kinds["turn_delivered"]) == (
        1,
        1,
        1,
        1,
    )
    assert [e.type for e in events][0] == "turn_resumed" and events[0].data["restored"] == ["coach"]
    assert {e.agent for e in events if e.type == "agent_started"} == {"shadow", "synth"}  # coach had written
    assert turn is not None and [agent for agent, _ in turn.replies] == ["coach", "synth"]


async def test_a_cut_turn_not_resumed_at_start_finishes_before_its_sessions_next_turn(
    write: WriteFile, home: Path
) -> None:
    """Its resume at start failed (the instance was still loading, say): the next turn of its
    session resumes it first, under the session's lease."""
    pipeline = load_pipeline(write("p.yaml", TWO_SPEEDS))
    first = runtime(write, home, slow_s=60)
    try:
        turn_id = await cut_after_early_reply(first, pipeline, "I keep skipping the gym.")
        (session,) = await first.store.sessions("local")
    finally:
        await first.close()
    second = runtime(write, home, slow_s=0)
    try:
        after = await second.run_turn(pipeline, "and now?", session_id=session.id)
        turns = await second.store.turns(session.id)
    finally:
        await second.close()
    assert [(t.id, t.status) for t in turns] == [(turn_id, "ok"), (after.turn_id, "ok")]
    assert turns[0].finished_at is not None and turns[1].started_at >= turns[0].finished_at


async def test_the_early_reply_of_a_cut_turn_is_in_the_next_turns_context(write: WriteFile, home: Path) -> None:
    pipeline = load_pipeline(write("p.yaml", TWO_SPEEDS))
    app = runtime(write, home, slow_s=60)
    try:
        turn_id = await cut_after_early_reply(app, pipeline, "I keep skipping the gym.")
        cut = await app.store.get_turn(turn_id)
        assert cut is not None and cut.status == "running"
        early = dict(cut.replies)["coach"]
        started = await app.store.start_turn(SessionRow(cut.session_id, "local", pipeline.name), "still there?")
    finally:
        await app.close()
    assert [(t.user_message, t.reply) for t in started.context.recent] == [("I keep skipping the gym.", early)]


async def test_one_turn_at_a_time_per_session_across_runtimes(write: WriteFile, home: Path) -> None:
    pipeline = load_pipeline(write("p.yaml", TWO_SPEEDS))
    first, second = runtime(write, home, slow_s=0.5), runtime(write, home, slow_s=0)
    try:
        opened = await first.run_turn(pipeline, "hello")
        session = opened.session
        running = asyncio.create_task(first.run_turn(pipeline, "a slow one", session_id=session))
        while not await first.store.running_turns(session):
            await asyncio.sleep(0.01)
        with pytest.raises(SessionBusy, match="another process"):
            await second.run_turn(pipeline, "refused", session_id=session, wait=False)
        (turn_id,) = await second.store.running_turns(session)
        with pytest.raises(SessionBusy):
            await second.resume(pipeline, turn_id)  # its runner is alive: not a crashed turn
        waited = await second.run_turn(pipeline, "after it", session_id=session)  # waits for the lease
        slow = await running
        turns = await second.store.turns(session)
    finally:
        await first.close()
        await second.close()
    assert (slow.turn, waited.turn) == (2, 3)
    assert [t.status for t in turns] == ["ok", "ok", "ok"]
    # The waiting turn started after the other finished: no turn of the session overlapped.
    assert turns[1].finished_at is not None and turns[2].started_at >= turns[1].finished_at


def test_a_lease_holder_is_gone_only_when_its_process_on_this_host_is() -> None:
    import socket

    host, pid = socket.gethostname(), os.getpid()
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    start = process_start(pid)
    assert start.isdigit()
    assert holder_is_gone(f"{host}/{ended.stdout.strip()}/{start}/ab")
    assert not holder_is_gone(f"{host}/{pid}/{start}/ab")
    assert not holder_is_gone(f"elsewhere/{ended.stdout.strip()}/{start}/ab")  # only its expiry frees it
    assert not holder_is_gone("garbage")


def test_a_lease_holder_whose_pid_now_names_a_later_process_is_gone() -> None:
    """A restarted container keeps its hostname and may give its server the same pid again."""
    import socket

    host, pid = socket.gethostname(), os.getpid()
    earlier = int(process_start(pid)) - 1
    assert holder_is_gone(f"{host}/{pid}/{earlier}/ab")


# -- the server ------------------------------------------------------------------------------


def stuck_pipeline(write: WriteFile) -> Path:
    return write("twospeeds.yaml", TWO_SPEEDS)


async def test_a_stopping_server_refuses_turns_then_cuts_the_running_ones_and_the_next_resumes_them(
    write: WriteFile, home: Path
) -> None:
    path = stuck_pipeline(write)
    stuck = scripted_config(
        write, fast={"latency_s": 0, "serves": ["fast"]}, slow={"latency_s": 3600, "serves": ["slow"]}
    )
    lines: list[str] = []
    app = make_app(stuck, home, pipelines=[path], grace_s=0.2, announce=lines.append)
    async with running(app), client(app) as http:
        cut = asyncio.create_task(http.post("/v1/chat/completions", json=chat_body("hello", model="twospeeds")))
        while not await app.state.service.store.running_turns():
            await asyncio.sleep(0.01)
        app.state.service.stop_accepting()  # what SIGTERM does first
        refused = await http.post("/v1/chat/completions", json=chat_body("and now?", model="twospeeds"))
        reply = await cut
    assert refused.status_code == 503 and refused.json()["error"]["code"] == "shutting_down"
    assert reply.status_code == 503 and "finishes when the server starts again" in reply.json()["error"]["message"]
    assert lines == ["left 1 turn(s) unfinished at shutdown; the next start resumes them"]

    fast = scripted_config(write, fast={"latency_s": 0, "serves": ["*"]})
    app = make_app(fast, home, pipelines=[path], announce=lines.append)
    async with running(app):
        await app.state.service.resuming
        (turn,) = await app.state.service.store.turns((await app.state.service.store.sessions("local"))[0].id)
    assert turn.status == "ok" and lines[-1] == f"resumed 1 unfinished turn(s): {turn.id} (ok)"


async def test_a_session_busy_in_another_process_waits_or_is_a_409(write: WriteFile, home: Path) -> None:
    path = stuck_pipeline(write)
    config = scripted_config(write, fast={"latency_s": 0, "serves": ["*"]})
    app = make_app(config, home, pipelines=[path])
    elsewhere = Cantata(load_config(config), home=home)  # as another process would hold it
    async with running(app), client(app) as http:
        first = await http.post("/v1/chat/completions", json=chat_body("hello", model="twospeeds"))
        session = first.headers["X-Cantata-Session"]
        headers = {"X-Cantata-Session": session, "X-Cantata-Busy": "reject"}
        try:
            async with elsewhere.leases.hold(session, wait=False):
                busy = await http.post(
                    "/v1/chat/completions", json=chat_body("now", model="twospeeds"), headers=headers
                )
                waiting = asyncio.create_task(
                    http.post(
                        "/v1/chat/completions",
                        json=chat_body("later", model="twospeeds"),
                        headers={"X-Cantata-Session": session},
                    )
                )
                await asyncio.sleep(0.3)
                assert not waiting.done()
            waited = await waiting
        finally:
            await elsewhere.close()
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "session_busy"
    assert "another process" in busy.json()["error"]["message"]
    assert waited.status_code == 200 and waited.json()["cantata"]["turn"] == 2


# -- a database that refuses writes ------------------------------------------------------------


def as_unprivileged(command: list[str]) -> list[str]:
    """Root writes a read-only file anyway: in a user namespace of its own it does not."""
    return ["unshare", "--user", *command] if os.geteuid() == 0 else command


@pytest.mark.parametrize("read_only", ["file", "file and folder"])
def test_a_read_only_database_is_one_clear_line_and_nothing_written(
    write: WriteFile, home: Path, read_only: str
) -> None:
    config = scripted_config(write, fast={"latency_s": 0})
    run = [sys.executable, "-m", "cantata", "run", "example", "--config", str(config), "-m"]
    first = subprocess.run([*run, "hello"], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    database = home / "cantata.db"
    before = database.read_bytes()
    database.chmod(0o444)
    if read_only == "file and folder":
        home.chmod(0o555)
    try:
        refused = subprocess.run(as_unprivileged([*run, "again"]), capture_output=True, text=True)
    finally:
        home.chmod(0o755)
        database.chmod(0o644)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    (line,) = refused.stderr.splitlines()
    assert line.startswith("error: ") and "read-only: check the permissions of CANTATA_HOME" in line
    assert database.read_bytes() == before
    assert not (home / "cantata.db-wal").exists() or (home / "cantata.db-wal").stat().st_size == 0


# -- the commands ------------------------------------------------------------------------------


def cantata(*args: str, kill_at: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CANTATA_TEST_KILL_AT"}
    if kill_at is not None:
        env["CANTATA_TEST_KILL_AT"] = kill_at
    return subprocess.run([sys.executable, "-m", "cantata", *args], capture_output=True, text=True, env=env)


async def test_run_session_resumes_its_cut_turn_first_and_resume_does_it_by_hand(write: WriteFile, home: Path) -> None:
    # A latency, so that quick's entry is committed before the rest of the turn (with none, a
    # turn's entries and its finish share one commit).
    config = str(scripted_config(write, fast={"latency_s": 0.05}))
    killed = cantata("run", "example", "-m", "hello", "--config", config, kill_at="after_write:quick")
    assert killed.returncode == -9
    app = Cantata(load_config(Path(config)), home=home)
    try:
        (session,) = await app.store.sessions("local")
    finally:
        await app.close()
    again = cantata("run", "example", "-m", "and now?", "--session", session.id, "--config", config, "--json")
    assert again.returncode == 0, again.stderr
    assert again.stderr.strip() == "resumed 1 unfinished turn(s): 1 (ok)"  # stdout stays one JSON object
    assert json.loads(again.stdout)["turn"] == 2

    cut = cantata("run", "example", "-m", "once more", "--session", session.id, "--config", config, kill_at="finishing")
    assert cut.returncode == -9
    by_hand = cantata("resume", "3", "--config", config)
    assert (by_hand.returncode, by_hand.stdout.strip()) == (0, "resumed 1 unfinished turn(s): 3 (ok)")
    assert cantata("resume", "--config", config).stdout.strip() == "no unfinished turn to resume"
    missing = cantata("resume", "3", "--config", config)
    assert missing.returncode == 2 and missing.stderr.strip() == "error: turn 3 is not an unfinished turn"


async def test_two_holds_of_one_session_in_one_runtime_let_exactly_one_in(write: WriteFile, home: Path) -> None:
    app = Cantata(load_config(scripted_config(write, fast={"latency_s": 0, "serves": ["*"]})), home=home)
    entered: list[int] = []

    async def hold(n: int) -> None:
        async with app.leases.hold("s-one", wait=False):
            entered.append(n)
            await asyncio.sleep(0.05)

    try:
        results = await asyncio.gather(hold(1), hold(2), return_exceptions=True)
    finally:
        await app.close()
    assert len(entered) == 1
    assert [type(r) for r in results].count(SessionBusy) == 1
