"""The development messages labelled high that the guard does not answer at their tier
(evaluate.answered_at_its_tier), each alone as a first message: the count, then per split; `-v`
their tiers, texts and signs (development data only). Usage: msgmiss.py [-v]"""

from __future__ import annotations

import sys

from common import SET, signs

from cantata.pipelines.coaching.evaluate import answered_at_its_tier, load_set
from cantata.pipelines.coaching.guard import assess

messages, _ = load_set(SET)
total = 0
missed: dict[str, list[str]] = {}
for m in messages:
    if m.expect != "high":
        continue
    total += 1
    verdict = assess(m.text, session="msgmiss", turn=1, previous=None)
    if not answered_at_its_tier(verdict):
        missed.setdefault(m.split, []).append(f"   {verdict.tier:5} {m.text}\n         {signs(verdict)}")
print(f"{sum(map(len, missed.values()))} of {total} missed")
for split, lines in sorted(missed.items()):
    print(f"## {split} {len(lines)}")
    if "-v" in sys.argv:
        print("\n".join(lines))
