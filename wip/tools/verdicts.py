"""Every turn's full Guard verdict, hashed per session, over the labelled, unseen, benign long and
tier sets and the border sets: `verdicts.py OUT.json`. Two trees' files are equal when a change
(a speed-up, a refactor) leaves every verdict as it was. Never prints texts.
`verdicts.py A.json B.json`: how many entries differ, per set."""

from __future__ import annotations

import collections
import hashlib
import json
import sys
from pathlib import Path

from cantata.pipelines.coaching.evaluate import load_set
from cantata.pipelines.coaching.guard import assess
from cantata.pipelines.coaching.models import Guard

DATA = Path("tests/data/coaching")


def digest(turns: list[str], session: str) -> str:
    previous: Guard | None = None
    h = hashlib.sha256()
    for turn, text in enumerate(turns, 1):
        previous = assess(text, session=session, turn=turn, previous=previous)
        h.update(previous.model_dump_json().encode())
    return h.hexdigest()


if len(sys.argv) == 3:
    a, b = (json.loads(Path(p).read_text()) for p in sys.argv[1:3])
    changed = collections.Counter(k.split("/")[0] for k in a if a[k] != b.get(k))
    print(f"{len(a)} entries, {sum(changed.values())} differ: {dict(changed)}")
    sys.exit(0)
out: dict[str, str] = {}
for root in ("safety", "safety_unseen", "benign_long", "safety_tiers"):
    messages, sessions = load_set(DATA / root)
    for j, m in enumerate(messages):
        out[f"{root}/m{j}"] = digest([m.text], f"m{j}")
    for s in sessions:
        out[f"{root}/{s.id}"] = digest(s.turns, s.id)
for path in sorted((DATA / "benign_probes").glob("border_*.tsv")):
    lines = [line.split("\t")[-1] for line in path.read_text().splitlines() if line and not line.startswith("#")]
    for j, text in enumerate(lines):
        out[f"{path.name}/{j}"] = digest([text], "p")
Path(sys.argv[1]).write_text(json.dumps(out))
print(len(out), "entries")
