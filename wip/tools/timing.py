"""Screening time of the learned signal's first member alone, the panel, and the first member again,
in one run, by bench/safety.py's method (medians and p99 of screen() and assess()). Takes about 20 min
on two cores: run it alone. Usage (from a tree holding the panel): timing.py"""

import statistics

from bench import safety as B
from cantata.pipelines.coaching.evaluate import load_set
from cantata.pipelines.coaching.guard import assess, screen
from cantata.pipelines.coaching.learned import WEIGHTS_FILE, default_model, read_model

first, panel = read_model(WEIGHTS_FILE), default_model()
messages, sessions = load_set(B.SET)
texts = [m.text for m in messages] + [t for s in sessions for t in s.turns]
for t in texts[:50]:
    screen(t)
    screen(t, first)
for name, m in (("first member", first), ("panel", panel), ("first member again", first)):
    s = B._per_message(lambda t, m=m: screen(t, m), texts)
    a = B._per_message(lambda t, m=m: assess(t, session="bench", turn=1, previous=None, model=m), texts)
    print(
        f"{name:20} screen median {statistics.median(s):7.1f} us p99 {B._p99(s):7.1f}   assess median {statistics.median(a):7.1f} us p99 {B._p99(a):7.1f}"
    )
