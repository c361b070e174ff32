"""Differences between two unseen.py outputs, by index and id only. Usage: udiff.py A.json B.json"""

from __future__ import annotations

import json
import sys

a, b = (json.load(open(p)) for p in sys.argv[1:3])
for x, y in zip(a["messages"], b["messages"], strict=True):
    if x[5] != y[5]:
        print(f"message {x[0]} {x[1]}/{x[2]} expect {x[3]} tier {x[4]}: {x[5]} -> {y[5]}")
for sid, (expect, tier, tiers) in a["sessions"].items():
    other = b["sessions"][sid][2]
    if tiers != other:
        print(f"session {sid} ({expect}/{tier}): {' '.join(tiers)} -> {' '.join(other)}")
