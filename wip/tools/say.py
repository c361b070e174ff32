"""Each line of stdin assessed alone as a first message: its tier, the line and the signs read.
Usage: printf '%s\\n' "text" ... | say.py"""

from __future__ import annotations

import sys

from common import signs

from cantata.pipelines.coaching.guard import assess

for line in sys.stdin:
    text = line.strip()
    if text:
        verdict = assess(text, session="say", turn=1, previous=None)
        print(f"{verdict.tier:8} {text[:90]:90} | {signs(verdict)[:160]}")
