"""A blind passive/active border set (TSV: tier<TAB>message), each message alone as a first turn:
how the guard grades each label. Counts only unless -v (after the counts are recorded).
Usage: patool.py FILE.tsv [-v]"""

from __future__ import annotations

import sys
from collections import Counter

from cantata.pipelines.coaching.guard import assess

RANK = {"none": 0, "low": 1, "high": 2, "imminent": 3}
rows = [
    line.rstrip("\n").split("\t", 1)
    for line in open(sys.argv[1], encoding="utf-8")
    if line.strip() and not line.startswith("#")
]
got: Counter[tuple[str, str]] = Counter()
wrong = []
for label, text in rows:
    verdict = assess(text, session="pa", turn=1, previous=None)
    got[(label, verdict.tier)] += 1
    right = verdict.tier == "low" if label == "low" else RANK[verdict.tier] >= RANK["high"]
    if not right:
        wrong.append((label, verdict, text))
low = sum(v for (lab, _), v in got.items() if lab == "low")
act = sum(v for (lab, _), v in got.items() if lab != "low")
imm = sum(v for (lab, _), v in got.items() if lab == "imminent")
print(
    f"low at low {got[('low', 'low')]}/{low} (raised {got[('low', 'high')] + got[('low', 'imminent')]}, none {got[('low', 'none')]})"
    f" | active at high+ {sum(v for (lab, t), v in got.items() if lab != 'low' and RANK[t] >= 2)}/{act}"
    f" (low {sum(v for (lab, t), v in got.items() if lab != 'low' and t == 'low')},"
    f" none {sum(v for (lab, t), v in got.items() if lab != 'low' and t == 'none')})"
    f" | imminent at imminent {got[('imminent', 'imminent')]}/{imm}"
)
if "-v" in sys.argv:
    for label, verdict, text in wrong:
        signs = ", ".join(f"{h.rule}:{h.tier}" for h in verdict.hits)
        print(f"{label} -> {verdict.tier} | {text} | {signs}")
