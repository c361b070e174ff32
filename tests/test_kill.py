"""Kill tests: a process running turns is stopped with SIGKILL at every step boundary and at
20 random points, restarted, and each time it resumes: every turn completes, no agent that
had written runs again, nothing is stored twice (tests/helpers/kills.py checks the store).
Marked `kill`: `make test` runs them after the fast suite (about two minutes)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from tests.helpers.kills import KillRun

pytestmark = pytest.mark.kill

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
RANDOM_KILLS = 20


def test_a_kill_at_every_step_boundary_is_resumed_without_rerun_or_duplicate(tmp_path: Path) -> None:
    run = KillRun(tmp_path)
    run.round(messages=2)
    for point in BOUNDARIES:
        assert run.round(messages=2, kill_at=point), f"the chat never reached the kill point {point}"
        run.round(messages=0)  # resumes the cut turn, so that the next point cuts a new one
    report = run.check()
    print(f"kill test, every step boundary: {report.line()}")
    assert report.problems == []
    # Compaction runs once its turn is delivered: the kill there may cut no turn.
    assert report.kills == len(BOUNDARIES) and report.resumed >= len(BOUNDARIES) - 1


def test_twenty_random_kills_are_resumed_without_rerun_or_duplicate(tmp_path: Path) -> None:
    seed = int(os.environ.get("CANTATA_KILL_SEED") or random.randrange(2**32))
    print(f"kill test seed {seed} (CANTATA_KILL_SEED={seed} repeats the delays)")
    delays = random.Random(seed)
    run = KillRun(tmp_path, latency_s=0.05)  # a turn of about 0.2 s: three of them span the delays
    rounds = 0
    while run.kills < RANDOM_KILLS and rounds < 3 * RANDOM_KILLS:
        rounds += 1
        run.round(messages=3, kill_after_s=delays.uniform(0.0, 0.6))
    run.round(messages=0)  # resumes what the last kill cut
    report = run.check()
    print(f"kill test, random points (seed {seed}): {report.line()}")
    assert report.problems == []
    assert report.kills == RANDOM_KILLS
