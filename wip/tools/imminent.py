"""The development sessions labelled imminent that end below it: how many end at each tier, and for
those that end at high, each turn's tier from the turn before the first at high, with its text
(development data only). Usage: imminent.py [-v]"""

from __future__ import annotations

import collections
import sys

from common import run, sessions

ends: collections.Counter[str] = collections.Counter()
for s in sessions():
    if s.tier != "imminent":
        continue
    verdicts = run(s)
    ends[verdicts[-1].tier] += 1
    if "-v" in sys.argv and verdicts[-1].tier == "high":
        first = next(i for i, v in enumerate(verdicts) if v.tier in ("high", "imminent"))
        print("==", s.id)
        for text, v in list(zip(s.turns, verdicts, strict=True))[max(0, first - 1) :]:
            print(f"  {v.tier[:3]} {text[:140]}")
print(dict(ends))
