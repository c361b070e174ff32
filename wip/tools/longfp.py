"""Benign long conversations reaching high, per split. -a: every split (held-out counted, never shown);
-v: for DEV splits only, the first turn at high, its text and its signs."""

from __future__ import annotations

import sys

from common import LONG, LONG_DEV, run, signs

from cantata.pipelines.coaching.evaluate import load_set
from cantata.pipelines.coaching.safety import at_least_high

_, convs = load_set(LONG)
every = "-a" in sys.argv
verbose = "-v" in sys.argv
total = [0, 0]
for split in sorted({c.split for c in convs}):
    if split not in LONG_DEV and not every:
        continue
    group = [c for c in convs if c.split == split]
    raised = 0
    for c in group:
        vs = run(c)
        first = next((i for i, v in enumerate(vs) if at_least_high(v.tier)), None)
        if first is None:
            continue
        raised += 1
        if verbose and split in LONG_DEV:
            print(f"  {split}/{c.id} turn {first + 1}: {c.turns[first]}\n      [{signs(vs[first])}]")
    print(f"{split:12} {raised}/{len(group)}")
    if split in LONG_DEV:
        total = [total[0] + len(group), total[1] + raised]
print(f"dev total {total[1]}/{total[0]}")
