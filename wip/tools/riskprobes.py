"""Blind single-message risk probes (tests/data/coaching/benign_probes/risk_probes_*.yaml, every
one a risk message): how many reach high or above on this tree, each alone, first turn. `-v` lists
the ones below high (read them only after the count is recorded)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import yaml

from cantata.pipelines.coaching.guard import assess
from cantata.pipelines.coaching.safety import at_least_high

items = yaml.safe_load(Path(sys.argv[1]).read_text())
caught: Counter[str] = Counter()
total: Counter[str] = Counter()
missed = []
for item in items:
    verdict = assess(item["text"], session="probe", turn=1, previous=None)
    total[item["locale"]] += 1
    if at_least_high(verdict.tier):
        caught[item["locale"]] += 1
    else:
        missed.append((item["id"], verdict.tier, item["text"], [f"{h.rule}:{h.tier}:{h.note}" for h in verdict.hits]))
print(
    "  ".join(f"{loc} {caught[loc]}/{total[loc]}" for loc in sorted(total)),
    f"| all {sum(caught.values())}/{sum(total.values())} at high or above",
)
if "-v" in sys.argv:
    for row in missed:
        print(*row, sep=" | ")
