"""Passive-wish (low) sessions raised to high: the first turn at high, its text (-t) and signs. Development data only.
Usage: lowwhy.py [SPLIT ...] [-t]"""

from __future__ import annotations

import sys
from collections import Counter

from common import run, sessions, signs

from cantata.pipelines.coaching.safety import at_least_high

args = [a for a in sys.argv[1:] if not a.startswith("-")]
rules: Counter[str] = Counter()
for s in sessions(args or None):
    if s.tier != "low":
        continue
    vs = run(s)
    first = next((i for i, v in enumerate(vs) if at_least_high(v.tier)), None)
    if first is None:
        continue
    v = vs[first]
    for h in v.hits:
        if at_least_high(h.tier):
            rules[h.rule] += 1
    print(f"== {s.split}/{s.id} turn {first + 1}: {' '.join(x.tier for x in vs)}")
    if "-t" in sys.argv:
        print(f"   {s.turns[first]}")
    print(f"   {signs(v)}")
print(rules.most_common(15))
