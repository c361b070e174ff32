"""The kill tests' harness: a `cantata chat` subprocess runs turns of the `durable` pipeline
(tests/data/durable/) on the scripted backend against one home; a round stops it with
SIGKILL, at a named point (`CANTATA_TEST_KILL_AT`, see cantata/killpoints.py) or after a
delay, and snapshots the store; the next round's chat resumes at start and goes on.
`check()` then reads the store itself, with sqlite3, and reports what a resume got wrong.
bench/durability.py runs it too, to print its counts."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from contextlib import closing
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

PIPELINE = Path(__file__).parent.parent / "data" / "durable" / "pipeline.yaml"
KILL_ENV = "CANTATA_TEST_KILL_AT"
# In the order a turn reaches them; compaction last, once the session has grown.
BOUNDARIES = [
    "after_message",
    "after_write:coach",
    "early_delivered",
    "after_write:shadow",
    "after_write:check",
    "loop_iteration:2",
    "after_write:fix",
    "after_write:synth",
    "finishing",
    "compaction",
]
# Of those, the points where a kill may find no turn running. The last entry's commit carries
# the turn's status too (scheduler.py, `_finish_if_done`), so after the synthesiser's write the
# turn is over; compaction runs once its turn is delivered, and cuts the next turn only if that
# one has started by then. Every other point always cuts a turn.
BETWEEN_TURNS = frozenset({"after_write:synth", "compaction"})
RANDOM_KILLS = 20
ROUND_S = 120.0  # a round that takes longer has hung: the test fails, it does not wait for ever

# Each turn once: a user message, the early reply, the merged reply.
MESSAGES_PER_TURN = Counter({("user", None): 1, ("assistant", "coach"): 1, ("assistant", "synth"): 1})
ONCE_PER_TURN = ("turn_started", "early_delivered", "loop_finished", "turn_delivered")


def message(n: int) -> str:
    return f"Message {n}: I said I would go to the gym before work, and again I did not go."


@dataclass(frozen=True)
class Snapshot:
    """The store just after a kill: which entries were committed, up to which event."""

    entries: frozenset[tuple[int, str, int]]
    max_seq: int
    running: frozenset[int]
    point: str = ""  # where the kill came: the kill point, or the delay


@dataclass
class Report:
    kills: int  # rounds whose child died of SIGKILL
    cut: int  # kills that left a turn running (others fell between turns)
    resumed: int  # distinct turns a kill left running, each of which a later round finished
    reruns: int  # agents started again after their entry had been committed (must be 0)
    problems: list[str] = field(default_factory=list)
    uncut: list[str] = field(default_factory=list)  # kills (point or delay) that found no turn running

    def line(self) -> str:
        return (
            f"{self.kills} kills ({self.cut} mid-turn), {self.resumed} turns resumed, {self.reruns} reruns,"
            f" {len(self.problems)} problems"
        )


class KillRun:
    def __init__(self, folder: Path, *, latency_s: float = 0.02) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.home = folder / "home"
        self.db = self.home / "cantata.db"
        self.config = folder / "instances.yaml"
        self.config.write_text(f"instances:\n  - name: s\n    backend: scripted\n    latency_s: {latency_s}\n")
        self.session: str | None = None
        self.snapshots: list[Snapshot] = []
        self.kills = 0

    def sent(self) -> int:
        """Messages taken so far: one stored turn each."""
        if not self.db.exists():
            return 0
        with self._read() as db:
            (count,) = db.execute("SELECT COUNT(*) FROM turns").fetchone()
        return int(count)

    def round(self, *, messages: int, kill_at: str | None = None, kill_after_s: float | None = None) -> bool:
        """One chat process on the next `messages` messages; True if it was killed."""
        first = self.sent()
        text = "".join(message(n) + "\n" for n in range(first + 1, first + 1 + messages))
        command = [sys.executable, "-m", "cantata", "chat", str(PIPELINE), "--config", str(self.config)]
        if self.session is not None:
            command += ["--session", self.session]
        env = {k: v for k, v in os.environ.items() if k != KILL_ENV} | {"CANTATA_HOME": str(self.home)}
        if kill_at is not None:
            env[KILL_ENV] = kill_at
        out, err = self.home.parent / "chat.out", self.home.parent / "chat.err"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            child = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=stdout, stderr=stderr)
        assert child.stdin is not None
        child.stdin.write(text.encode())
        child.stdin.close()
        if kill_after_s is not None:
            # From its first line (after imports and resuming): the delay lands inside turns.
            deadline = time.monotonic() + ROUND_S
            while out.stat().st_size == 0 and child.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(kill_after_s)
            child.send_signal(signal.SIGKILL)
        try:
            child.wait(timeout=ROUND_S)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            raise AssertionError(
                f"a chat round hung ({kill_at=}):\n{err.read_text(errors='replace')[-2000:]}"
            ) from None
        killed = child.returncode == -signal.SIGKILL
        errors = err.read_text(errors="replace")
        if not killed and (child.returncode != 0 or "Traceback" in errors):
            raise AssertionError(f"chat exited with {child.returncode}:\n{errors[-3000:]}")
        if self.session is None and self.db.exists():
            with self._read() as db:
                row = db.execute("SELECT id FROM sessions").fetchone()
            self.session = row[0] if row else None
        if killed:
            self.kills += 1
            point = kill_at or f"{kill_after_s:.3f} s"
            self.snapshots.append(replace(self.snapshot(), point=point))
            # Checked at every kill too: nothing stored twice, nothing rerun, even mid-turn.
            problems = self.check(finished=False).problems
            assert problems == [], f"after the kill at {point}: {problems}"
        return killed

    def snapshot(self) -> Snapshot:
        if not self.db.exists():
            return Snapshot(frozenset(), 0, frozenset())
        with self._read() as db:
            entries = frozenset(db.execute("SELECT turn_id, agent, iteration FROM blackboard"))
            (max_seq,) = db.execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()
            running = frozenset(row[0] for row in db.execute("SELECT id FROM turns WHERE status = 'running'"))
        return Snapshot(entries, int(max_seq), running)

    def check(self, *, finished: bool = True) -> Report:
        """`once_problems`, and no agent started again after it had written."""
        with self._read() as db:
            rows = read_store(db)
        problems = once_problems(rows, finished=finished)
        events = [(seq, turn_id, kind, agent, data) for seq, turn_id, kind, agent, data, _ in rows.events]
        reruns = 0
        for snap in self.snapshots:
            for seq, turn_id, kind, agent, data in events:
                key = (turn_id, agent, json.loads(data).get("iteration", 0))
                if kind == "agent_started" and seq > snap.max_seq and key in snap.entries:
                    reruns += 1
                    problems.append(f"agent {key} ran again after it had written")
        resumed = len(frozenset().union(*(s.running for s in self.snapshots)))
        uncut = [s.point for s in self.snapshots if not s.running]
        return Report(self.kills, len(self.snapshots) - len(uncut), resumed, reruns, problems, uncut)

    def _read(self) -> closing[sqlite3.Connection]:
        return closing(sqlite3.connect(f"file:{self.db}?mode=ro", uri=True))


class Connection(Protocol):
    """sqlite3's or psycopg's: what `read_store` asks of it."""

    def execute(self, sql: str, /) -> Any: ...


@dataclass(frozen=True)
class StoreRows:
    """What the checks read of a store: each turn's status and messages, events, entries."""

    turns: dict[int, str]
    messages: dict[int, Counter[tuple[str, str | None]]]
    events: list[tuple[int, int, str, str | None, str, float]]  # id, turn, type, agent, data, wall
    entries: list[tuple[int, str, int]]


def read_store(db: Connection) -> StoreRows:
    turns = dict(db.execute("SELECT id, status FROM turns ORDER BY id").fetchall())
    messages: dict[int, Counter[tuple[str, str | None]]] = {t: Counter() for t in turns}
    for turn_id, role, agent in db.execute("SELECT turn_id, role, agent FROM messages"):
        messages[turn_id][(role, agent)] += 1
    events = db.execute("SELECT id, turn_id, type, agent, data, wall FROM events ORDER BY id").fetchall()
    entries = db.execute("SELECT turn_id, agent, iteration FROM blackboard").fetchall()
    return StoreRows(turns, messages, events, entries)


def once_problems(rows: StoreRows, *, finished: bool) -> list[str]:
    """Every turn finished ok, once: one message and reply each, each once-per-turn event
    once, each agent's `agent_finished` and entry once. Not `finished` (just after a kill):
    only that nothing is there twice."""
    problems: list[str] = []
    for turn_id, status in rows.turns.items():
        if finished and status != "ok":
            problems.append(f"turn {turn_id} is {status}")
        said = rows.messages[turn_id]
        if said != MESSAGES_PER_TURN and (finished or said - MESSAGES_PER_TURN):
            problems.append(f"turn {turn_id} has messages {dict(said)}")
    per_turn: Counter[tuple[int, str]] = Counter((turn_id, kind) for _, turn_id, kind, *_ in rows.events)
    agents_finished: Counter[tuple[int, str | None, int]] = Counter(
        (turn_id, agent, json.loads(data).get("iteration", 0))
        for _, turn_id, kind, agent, data, _ in rows.events
        if kind == "agent_finished"
    )
    for turn_id in rows.turns:
        for kind in ONCE_PER_TURN:
            if per_turn[(turn_id, kind)] > 1 or (finished and per_turn[(turn_id, kind)] != 1):
                problems.append(f"turn {turn_id} has {per_turn[(turn_id, kind)]} {kind} events")
    problems += [f"agent_finished {key} stored {n} times" for key, n in agents_finished.items() if n > 1]
    if len(set(rows.entries)) != len(rows.entries):
        problems.append("an entry is stored twice")
    return problems


def kill_at_boundaries(folder: Path) -> Report:
    """A kill at each of BOUNDARIES, each of a new turn (a clean restart resumes the cut one
    between them), then the whole store checked."""
    run = KillRun(folder)
    run.round(messages=2)
    for point in BOUNDARIES:
        assert run.round(messages=2, kill_at=point), f"the chat never reached the kill point {point}"
        run.round(messages=0)
    return run.check()


def kill_at_random(folder: Path, seed: int) -> Report:
    """RANDOM_KILLS kills at delays drawn from `seed`, each restart resuming what the last cut
    (sometimes itself cut again), then the whole store checked."""
    delays = random.Random(seed)
    run = KillRun(folder, latency_s=0.05)  # a turn of about 0.2 s: three of them span the delays
    rounds = 0
    while run.kills < RANDOM_KILLS and rounds < 3 * RANDOM_KILLS:
        rounds += 1
        run.round(messages=3, kill_after_s=delays.uniform(0.0, 0.6))
    run.round(messages=0)
    return run.check()
