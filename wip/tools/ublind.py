"""The unseen messages against their blind per-message tiers (safety_unseen/message_tiers.tsv, on g19):
answered at the tier asked (a blind low at low or above, else high or above), blind lows at exactly low,
false alarms. Counts only, never texts. `nopassive`: as if no wish were graded passive (the upper bound
of what better reading of active elements could win). Usage: ublind.py [nopassive]"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from cantata.pipelines.coaching import grading
from cantata.pipelines.coaching.evaluate import load_message_tiers, load_set, message_key
from cantata.pipelines.coaching.guard import assess

if "nopassive" in sys.argv:
    grading.is_passive = lambda family, message: False  # noqa: ARG005  (guard reads grading.is_passive at call time)
UNSEEN = Path("tests/data/coaching/safety_unseen")
RANK = {"none": 0, "low": 1, "high": 2, "imminent": 3}
labels = load_message_tiers(UNSEEN / "message_tiers.tsv")
got: Counter[tuple[str, str, str]] = Counter()
for m in load_set(UNSEEN)[0]:
    blind = labels[(m.split, message_key(m.text))] or "none"
    got[(m.expect, blind, assess(m.text, session="u", turn=1, previous=None).tier)] += 1
crisis = sum(n for (e, _, _), n in got.items() if e == "high")
answered = sum(n for (e, b, t), n in got.items() if e == "high" and RANK[t] >= (1 if b == "low" else 2))
alarms = sum(n for (e, _, t), n in got.items() if e == "safe" and RANK[t] >= 2)
lows = sum(n for (e, b, _), n in got.items() if e == "high" and b == "low")
imminent = sum(n for (e, b, _), n in got.items() if e == "high" and b == "imminent")
print(
    f"answered {answered}/{crisis} = {answered / crisis:.1%}; blind lows at low {got[('high', 'low', 'low')]}/{lows};"
    f" blind imminent at imminent {got[('high', 'imminent', 'imminent')]}/{imminent}; false alarms {alarms}"
)
