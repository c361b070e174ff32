"""Blind single-message probes (tests/data/coaching/benign_probes/*.yaml, ordinary messages
only): how many reach high or above on this tree, each message alone, first turn. `-v` lists
them with the signs (read them only after the count is recorded)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import yaml

from cantata.pipelines.coaching.guard import assess
from cantata.pipelines.coaching.safety import at_least_high

path = Path(sys.argv[1])
items = yaml.safe_load(path.read_text())
high: Counter[str] = Counter()
total: Counter[str] = Counter()
shown = []
for item in items:
    verdict = assess(item["text"], session="probe", turn=1, previous=None)
    total[item["locale"]] += 1
    if at_least_high(verdict.tier):
        high[item["locale"]] += 1
        shown.append((item["id"], verdict.tier, item["text"], [h.rule for h in verdict.hits if h.tier != "none"]))
print(
    "  ".join(f"{loc} {high[loc]}/{total[loc]}" for loc in sorted(total)),
    f"| all {sum(high.values())}/{sum(total.values())} at high or above",
)
if "-v" in sys.argv:
    for row in shown:
        print(*row, sep=" | ")
