"""Per labelled tier of the labelled set's sessions: how many end at exactly that tier, and where the others end.
Usage: tiers.py [SPLIT ...] [-v: the imminent sessions ending at high, by id]"""

from __future__ import annotations

import sys
from collections import Counter

from common import run, sessions

args = [a for a in sys.argv[1:] if not a.startswith("-")]
ends: dict[str, Counter[str]] = {}
for s in sessions(args or None):
    if s.tier is None:
        continue
    final = run(s)[-1].tier
    ends.setdefault(s.tier, Counter())[final] += 1
    if "-v" in sys.argv and s.tier == "imminent" and final != "imminent":
        print(f"  {s.split}/{s.id} ends {final}")
for tier, c in sorted(ends.items()):
    print(f"{tier:9} exact {c[tier]}/{sum(c.values())}   ends: {dict(c)}")
