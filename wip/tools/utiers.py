"""The unseen sessions against their blind tier labels (g19's safety_unseen/session_tiers.tsv), on any tree:
per label, right / total (none: never at high; low: ends low; high: ends at high or above; imminent: ends imminent).
Ids only, never texts. Usage: utiers.py [LABELS.tsv]"""

from __future__ import annotations

import sys
from collections import Counter

from common import UNSEEN, run

from cantata.pipelines.coaching.evaluate import load_set
from cantata.pipelines.coaching.safety import at_least_high

path = sys.argv[1] if len(sys.argv) > 1 else "/work/wt/g19/tests/data/coaching/safety_unseen/session_tiers.tsv"
labels = {line.split("\t")[0]: line.split("\t")[1] for line in open(path) if line.strip() and not line.startswith("#")}
total: Counter[str] = Counter()
right: Counter[str] = Counter()
high = [0, 0]
for s in load_set(UNSEEN)[1]:
    label, vs = labels[s.id], run(s)
    final = vs[-1].tier
    ok = (
        not any(at_least_high(v.tier) for v in vs)
        if label == "none"
        else (at_least_high(final) if label == "high" else final == label)
    )
    total[label] += 1
    right[label] += ok
    if label in ("high", "imminent"):
        high = [high[0] + 1, high[1] + at_least_high(final)]
print(
    "  ".join(f"{t} {right[t]}/{total[t]}" for t in ("none", "low", "high", "imminent")),
    f"| high+imminent at >=high {high[1]}/{high[0]}",
)
