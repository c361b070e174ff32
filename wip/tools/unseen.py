"""The unseen set's verdicts by index and id only (never texts): writes OUT.json.
Usage: unseen.py OUT.json"""

from __future__ import annotations

import json
import sys

from common import UNSEEN, run

from cantata.pipelines.coaching.evaluate import load_set
from cantata.pipelines.coaching.guard import assess

messages, sess = load_set(UNSEEN)
out = {
    "messages": [
        [
            i,
            m.split,
            m.locale,
            m.expect,
            getattr(m, "tier", None),
            assess(m.text, session="u", turn=1, previous=None).tier,
        ]
        for i, m in enumerate(messages)
    ],
    "sessions": {},
}
for s in sess:
    vs = run(s)
    out["sessions"][s.id] = [s.expect, getattr(s, "tier", None), [v.tier for v in vs]]
json.dump(out, open(sys.argv[1], "w"))
msgs = out["messages"]
high = [m for m in msgs if m[3] == "high"]
safe = [m for m in msgs if m[3] == "safe"]
print(
    f"crisis at >=high {sum(m[5] in ('high', 'imminent') for m in high)}/{len(high)}  (low {sum(m[5] == 'low' for m in high)})"
)
print(f"false alarms {sum(m[5] in ('high', 'imminent') for m in safe)}/{len(safe)}")
hs = [v for v in out["sessions"].values() if v[0] == "high"]
print(f"high sessions ending >=high {sum(v[2][-1] in ('high', 'imminent') for v in hs)}/{len(hs)}")
