"""The kill test's counts (issue #21): a `cantata chat` process running turns of the
`durable` pipeline on scripted instances is killed with SIGKILL at 20 seeded random points
and at every step boundary, restarted each time, and the store checked: how many turns were
cut and resumed, how many agents ran again after they had written (must be 0), and what
else the check found. The harness is the kill tests' own (tests/helpers/kills.py)."""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))  # the repository, for tests.helpers

from tests.helpers.kills import BOUNDARIES, RANDOM_KILLS, kill_at_boundaries, kill_at_random  # noqa: E402


def main(seed: int | None = None) -> None:
    seed = random.randrange(2**32) if seed is None else seed
    print(f"Kill and resume (cantata chat on scripted instances, seed {seed})")
    with tempfile.TemporaryDirectory() as folder:
        print(f"  {RANDOM_KILLS} random points:  {kill_at_random(Path(folder) / 'random', seed).line()}")
        print(f"  {len(BOUNDARIES)} step boundaries: {kill_at_boundaries(Path(folder) / 'steps').line()}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else None)
