"""Wrong sessions of the DEV labelled set with each turn's tier and signs.
Usage: miss.py [SPLIT ...] [--kind risk-below|low-raised|safe-raised|imminent-below|low-missed] [-t: print turn texts]"""

from __future__ import annotations

import sys

from common import kinds, run, sessions, signs

argv = sys.argv[1:]
kind = argv[argv.index("--kind") + 1] if "--kind" in argv else "risk-below"
args = [a for i, a in enumerate(argv) if not a.startswith("-") and (i == 0 or argv[i - 1] != "--kind")]
texts = "-t" in argv
for s in sessions(args or None):
    vs = run(s)
    if kind not in kinds(s, vs):
        continue
    print(f"== {s.split}/{s.id} ({s.tier or s.expect}) {s.locale}: {' '.join(v.tier for v in vs)}")
    for i, (t, v) in enumerate(zip(s.turns, vs, strict=True), start=1):
        best = max((c.read for c in v.context), default=0.0)
        if texts:
            print(f"  {i}. {t}")
        print(f"     {v.tier}: {signs(v)} ctx {best:.2f} reads {v.reads}")
