"""Kill tests: a process running turns is stopped with SIGKILL at every step boundary and at
20 random points, restarted, and each time it resumes: every turn completes, no agent that
had written runs again, nothing is stored twice (tests/helpers/kills.py checks the store).
Marked `kill`: `make test` runs them after the fast suite (about two minutes)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from tests.helpers.kills import BETWEEN_TURNS, BOUNDARIES, RANDOM_KILLS, kill_at_boundaries, kill_at_random

pytestmark = pytest.mark.kill


def test_a_kill_at_every_step_boundary_is_resumed_without_rerun_or_duplicate(tmp_path: Path) -> None:
    report = kill_at_boundaries(tmp_path)
    print(f"kill test, every step boundary: {report.line()}")
    assert report.problems == []
    assert report.kills == len(BOUNDARIES)
    # Every point but those that may fall between turns cut one, and each cut turn was finished.
    assert set(report.uncut) <= BETWEEN_TURNS, report.uncut
    assert report.resumed == report.cut >= len(BOUNDARIES) - len(BETWEEN_TURNS)


def test_twenty_random_kills_are_resumed_without_rerun_or_duplicate(tmp_path: Path) -> None:
    seed = int(os.environ.get("CANTATA_KILL_SEED") or random.randrange(2**32))
    print(f"kill test seed {seed} (CANTATA_KILL_SEED={seed} repeats the delays)")
    report = kill_at_random(tmp_path, seed)
    print(f"kill test, random points (seed {seed}): {report.line()}")
    assert report.problems == []
    assert report.kills == RANDOM_KILLS
