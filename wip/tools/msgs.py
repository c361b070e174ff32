"""Every labelled development session's turn tiers, by session id: `msgs.py OUT.json`;
`msgs.py A.json B.json` prints the turns whose tier changed between two trees, with texts
(development data only: the unseen set has unseen.py, which never prints texts)."""

from __future__ import annotations

import json
import sys

from common import RANK, run, sessions

if len(sys.argv) == 2:
    out = {s.id: [v.tier for v in run(s)] for s in sessions()}
    with open(sys.argv[1], "w") as f:
        json.dump(out, f)
    print(f"{len(out)} sessions, {sum(map(len, out.values()))} turns")
else:
    a, b = (json.load(open(p)) for p in sys.argv[1:3])
    texts = {s.id: (s.tier or s.expect, s.turns) for s in sessions()}
    up = down = 0
    for sid, tiers in b.items():
        for i, (x, y) in enumerate(zip(a.get(sid, []), tiers, strict=False)):
            if x != y:
                up, down = up + (RANK[y] > RANK[x]), down + (RANK[y] < RANK[x])
                label, turns = texts[sid]
                print(f"{sid} [{label}] turn {i + 1}: {x} -> {y}: {turns[i][:160]}")
    print(f"{up} turns up, {down} down")
