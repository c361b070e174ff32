"""Measure the guard on a labelled set: recall on what warrants high, false alarms on the rest.

A set is a folder of YAML files (tests/data/coaching/safety/ is Cantata's own; point
this at a clinician-written set to check the rules against it):

- message files: `locale`, `split` (e.g. dev, heldout), and `categories`, each with
  `expect` (high: must reach high or imminent; safe: must stay none or low), a `source`
  and its `messages`;
- session files: `split` and `sessions`, each with `id`, `locale`, `expect` and `turns`
  (the person's messages in order). A high session must end at high or above; a safe
  one must never reach high on any turn.

Every message is screened as the first turn of a fresh session; every session runs
through the guard's own memory, turn by turn, exactly as the pipeline runs it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from cantata.pipelines.coaching.guard import assess
from cantata.pipelines.coaching.learned import Model
from cantata.pipelines.coaching.models import Guard
from cantata.pipelines.coaching.safety import at_least_high

Expect = Literal["high", "safe"]


@dataclass(frozen=True)
class Message:
    text: str
    locale: str
    split: str
    category: str
    expect: Expect
    source: str


@dataclass(frozen=True)
class Session:
    id: str
    turns: tuple[str, ...]
    locale: str
    split: str
    expect: Expect
    source: str


@dataclass
class Tally:
    """Counts for one group: `flagged` of `total` reached high or above."""

    total: int = 0
    flagged: int = 0  # a high session: ended at high; a safe session: reached high on some turn
    misses: list[str] = field(default_factory=list)  # what went the wrong way

    @property
    def rate(self) -> float:
        return self.flagged / self.total if self.total else 0.0


@dataclass
class Report:
    messages: dict[tuple[str, str, str, Expect], Tally] = field(
        default_factory=dict
    )  # (split, locale, category, expect)
    sessions: dict[tuple[str, Expect], Tally] = field(default_factory=dict)  # (split, expect)

    def message_tally(self, *, expect: Expect, split: str | None = None, locale: str | None = None) -> Tally:
        out = Tally()
        for (s, loc, _, e), tally in self.messages.items():
            if e == expect and split in (None, s) and locale in (None, loc):
                out.total += tally.total
                out.flagged += tally.flagged
                out.misses += tally.misses
        return out

    def session_tally(self, *, expect: Expect, split: str | None = None) -> Tally:
        out = Tally()
        for (s, e), tally in self.sessions.items():
            if e == expect and split in (None, s):
                out.total += tally.total
                out.flagged += tally.flagged
                out.misses += tally.misses
        return out

    def splits(self) -> list[str]:
        return sorted({k[0] for k in self.messages} | {k[0] for k in self.sessions})


def _expect(value: Any, where: str) -> Expect:
    if value not in ("high", "safe"):
        raise ValueError(f"{where}: expect must be 'high' or 'safe', not {value!r}")
    return "high" if value == "high" else "safe"


def load_set(folder: Path) -> tuple[list[Message], list[Session]]:
    """Every message and session of the YAML files in `folder`."""
    messages: list[Message] = []
    sessions: list[Session] = []
    for path in sorted(folder.glob("*.yaml")):
        raw: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
        split = str(raw.get("split", "dev"))
        for name, category in (raw.get("categories") or {}).items():
            expect = _expect(category.get("expect"), f"{path}: {name}")
            for text in category["messages"]:
                messages.append(Message(str(text), str(raw["locale"]), split, str(name), expect, category["source"]))
        for item in raw.get("sessions") or []:
            expect = _expect(item.get("expect"), f"{path}: {item.get('id')}")
            sessions.append(
                Session(str(item["id"]), tuple(map(str, item["turns"])), item["locale"], split, expect, item["source"])
            )
    return messages, sessions


def run_session(turns: Iterable[str], session: str = "eval", model: Model | None = None) -> list[Guard]:
    """The guard's verdict on each turn, its memory carried as the pipeline carries it.
    `model`: the learned signal's (the committed one by default)."""
    verdicts: list[Guard] = []
    previous: Guard | None = None
    for number, message in enumerate(turns, start=1):
        previous = assess(message, session=session, turn=number, previous=previous, model=model)
        verdicts.append(previous)
    return verdicts


def evaluate(folder: Path, model: Model | None = None, splits: Iterable[str] | None = None) -> Report:
    """The guard with `model` as its learned signal (the committed one by default;
    learned.OFF: the rules alone), on the set's `splits` (all by default)."""
    messages, sessions = load_set(folder)
    if splits is not None:
        wanted = set(splits)
        messages = [m for m in messages if m.split in wanted]
        sessions = [s for s in sessions if s.split in wanted]
    report = Report()
    for m in messages:
        tally = report.messages.setdefault((m.split, m.locale, m.category, m.expect), Tally())
        tier = assess(m.text, session="eval", turn=1, previous=None, model=model).tier
        tally.total += 1
        if at_least_high(tier):
            tally.flagged += 1
        if at_least_high(tier) != (m.expect == "high"):
            tally.misses.append(f"{tier}: {m.text}")
    for s in sessions:
        tally = report.sessions.setdefault((s.split, s.expect), Tally())
        verdicts = run_session(s.turns, session=s.id, model=model)
        tally.total += 1
        if s.expect == "high":
            ok = at_least_high(verdicts[-1].tier)
        else:
            ok = not any(at_least_high(v.tier) for v in verdicts)
        if ok == (s.expect == "high"):
            tally.flagged += 1
        if not ok:
            tally.misses.append(f"{s.id}: {' -> '.join(v.tier for v in verdicts)}")
    return report


def describe(report: Report) -> list[str]:
    """The figures, one line each: recall per category and split, false alarms, sessions."""
    lines: list[str] = []
    for split in report.splits():
        lines.append(f"split {split}")
        for (s, lang, category, expect), tally in sorted(report.messages.items()):
            if s != split:
                continue
            figure = "recall" if expect == "high" else "false alarms"
            lines.append(f"  {lang} {category:26} {figure:12} {tally.flagged:3}/{tally.total:<3} = {tally.rate:6.1%}")
        for locale in ("en", "fr", None):
            high = report.message_tally(expect="high", split=split, locale=locale)
            safe = report.message_tally(expect="safe", split=split, locale=locale)
            name = "all" if locale is None else locale
            lines.append(
                f"  {name:3} messages: recall {high.flagged}/{high.total} = {high.rate:.1%}, "
                f"false alarms {safe.flagged}/{safe.total} = {safe.rate:.1%}"
            )
        high_s = report.session_tally(expect="high", split=split)
        safe_s = report.session_tally(expect="safe", split=split)
        lines.append(
            f"  sessions: ended at high {high_s.flagged}/{high_s.total} = {high_s.rate:.1%}, "
            f"false alarms {safe_s.flagged}/{safe_s.total}"
        )
    return lines
