"""The unseen messages against their blind per-message tiers (g19's safety_unseen/message_tiers.tsv, read
by evaluate.blind_recall), and the unseen false alarms. Counts only, never texts. `nopassive`: as if no
wish were graded passive (the upper bound of what better reading of active elements could win).
Usage: ublind.py [nopassive]"""

from __future__ import annotations

import sys
from pathlib import Path

from cantata.pipelines.coaching import grading
from cantata.pipelines.coaching.evaluate import blind_recall, load_message_tiers, load_set
from cantata.pipelines.coaching.guard import assess
from cantata.pipelines.coaching.safety import at_least_high

if "nopassive" in sys.argv:
    grading.is_passive = lambda family, message: False  # noqa: ARG005  (guard reads grading.is_passive at call time)
UNSEEN = Path("tests/data/coaching/safety_unseen")
got = blind_recall(UNSEEN, load_message_tiers(UNSEEN / "message_tiers.tsv"))
alarms = sum(
    at_least_high(assess(m.text, session="u", turn=1, previous=None).tier)
    for m in load_set(UNSEEN)[0]
    if m.expect == "safe"
)
print(
    f"answered {got.answered}/{got.total} = {got.answered / got.total:.1%}; blind lows at low {got.low_exact}/{got.low};"
    f" blind imminent at imminent {got.imminent_answered}/{got.imminent}; false alarms {alarms}"
)
