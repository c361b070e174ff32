"""Sessions of the labelled set: risk at high or above, passive wish raised, safe raised, exact tier.
Usage: sess.py [SPLIT ...] [-v]   (-v: each wrong session's tiers per turn)"""

from __future__ import annotations

import sys

from common import exact, outcome, run, sessions

args = [a for a in sys.argv[1:] if not a.startswith("-")]
verbose = "-v" in sys.argv
tally = {"risk": [0, 0], "low": [0, 0], "safe": [0, 0], "exact": [0, 0]}
for s in sessions(args or None):
    vs = run(s)
    kind = "low" if s.tier == "low" else "risk" if s.expect == "high" else "safe"
    res = outcome(s, vs)
    tally[kind][0] += 1
    tally[kind][1] += (res == "ok") if kind == "risk" else (res != "ok")
    tally["exact"][0] += 1
    tally["exact"][1] += exact(s, vs)
    if verbose and res != "ok":
        print(f"{res:11} {s.split}/{s.id} ({s.tier or s.expect}): {' '.join(v.tier for v in vs)}")
r, lo, sa, ex = tally["risk"], tally["low"], tally["safe"], tally["exact"]
print(
    f"risk >=high {r[1]}/{r[0]}  passive-wish raised {lo[1]}/{lo[0]}  safe raised {sa[1]}/{sa[0]}  exact {ex[1]}/{ex[0]}"
)
