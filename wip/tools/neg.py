"""Dev negatives (single messages labelled safe, dev*/everyday splits) at high or above, and crisis messages of
the labelled set answered at their tier. Usage: neg.py [-v]"""

from __future__ import annotations

import sys

from common import SET

from cantata.pipelines.coaching.evaluate import answered_at_its_tier, load_set
from cantata.pipelines.coaching.guard import assess
from cantata.pipelines.coaching.safety import at_least_high

messages, _ = load_set(SET)
neg = [m for m in messages if m.expect == "safe" and (m.split.startswith("dev") or m.split == "everyday")]
alarms = 0
for m in neg:
    v = assess(m.text, session="n", turn=1, previous=None)
    if at_least_high(v.tier):
        alarms += 1
        if "-v" in sys.argv:
            print(f"  {m.split}/{m.locale}: {m.text[:150]}")
crisis = [m for m in messages if m.expect == "high"]
answered = sum(answered_at_its_tier(assess(m.text, session="n", turn=1, previous=None)) for m in crisis)
print(f"dev negatives at high {alarms}/{len(neg)}   crisis messages answered at their tier {answered}/{len(crisis)}")
