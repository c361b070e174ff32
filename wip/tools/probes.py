"""Blind single-message probes (tests/data/coaching/benign_probes/: probes_*.yaml are ordinary
messages, risk_probes_*.yaml risk messages): how many reach high or above on this tree, each
message alone, first turn. `-v` lists the wrong ones, ordinary at high or risk below it (read
them only after the count is recorded)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import yaml

from cantata.pipelines.coaching.guard import assess
from cantata.pipelines.coaching.safety import at_least_high

path = Path(sys.argv[1])
risk = path.name.startswith("risk")
high: Counter[str] = Counter()
total: Counter[str] = Counter()
wrong = []
for item in yaml.safe_load(path.read_text()):
    verdict = assess(item["text"], session="probe", turn=1, previous=None)
    raised = at_least_high(verdict.tier)
    total[item["locale"]] += 1
    high[item["locale"]] += raised
    if raised != risk:
        wrong.append((item["id"], verdict.tier, item["text"], [f"{h.rule}:{h.tier}:{h.note}" for h in verdict.hits]))
print(
    "  ".join(f"{loc} {high[loc]}/{total[loc]}" for loc in sorted(total)),
    f"| all {sum(high.values())}/{sum(total.values())} at high or above",
)
if "-v" in sys.argv:
    for row in wrong:
        print(*row, sep=" | ")
