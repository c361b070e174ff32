"""Measure the guard on a labelled set: recall on what warrants high, false alarms on the rest.

A set is a folder of YAML files (tests/data/coaching/safety/ is Cantata's own; point
this at a clinician-written set to check the rules against it):

- message files: `locale`, `split` (e.g. dev, heldout), and `categories`, each with
  `expect` (high: must reach high or imminent; safe: must stay none or low), a `source`,
  its `messages` and an optional `tier` (low, high, imminent: the tier its messages warrant;
  `safe`, as some writers put it, is a negative: no tier);
- session files: `split` and `sessions`, each with `id`, `locale`, `expect` and `turns`
  (the person's messages in order). A high session must end at high or above (one whose
  `tier` is low, at low: a passive wish); a safe one must never reach high on any turn. An
  optional `tier` (low, high, imminent; `safe` is none given) is the tier the session must
  END at (issue #19's graded tiers): `tier_agreement` counts those.

Every message is screened as the first turn of a fresh session; every session runs
through the guard's own memory, turn by turn, exactly as the pipeline runs it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from cantata.pipelines.coaching.grading import PASSIVE
from cantata.pipelines.coaching.guard import assess
from cantata.pipelines.coaching.learned import Model
from cantata.pipelines.coaching.models import Guard
from cantata.pipelines.coaching.safety import TIERS, Tier, at_least_high

Expect = Literal["high", "safe"]


@dataclass(frozen=True)
class Message:
    text: str
    locale: str
    split: str
    category: str
    expect: Expect
    source: str
    tier: Tier | None = None  # the tier the message warrants, when labelled


@dataclass(frozen=True)
class Session:
    id: str
    turns: tuple[str, ...]
    locale: str
    split: str
    expect: Expect
    source: str
    tier: Tier | None = None  # the tier the session must end at, when labelled


@dataclass
class Tally:
    """Counts for one group: `flagged` of `total` reached high or above."""

    total: int = 0
    flagged: int = 0  # a high session: ended at high (a low-tier one at low); a safe one: reached high
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


def _tier(value: Any, where: str) -> Tier | None:
    """A labelled tier; `safe` (a negative, as some writers label it) and no label are None."""
    if value is None or value == "safe":
        return None
    if value not in TIERS:
        raise ValueError(f"{where}: tier must be one of {TIERS} or safe, not {value!r}")
    tier: Tier = value
    return tier


def load_set(folder: Path) -> tuple[list[Message], list[Session]]:
    """Every message and session of the YAML files in `folder`."""
    messages: list[Message] = []
    sessions: list[Session] = []
    for path in sorted(folder.glob("*.yaml")):
        raw: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
        split = str(raw.get("split", "dev"))
        for name, category in (raw.get("categories") or {}).items():
            expect = _expect(category.get("expect"), f"{path}: {name}")
            labelled = _tier(category.get("tier"), f"{path}: {name}")
            for text in category["messages"]:
                messages.append(
                    Message(str(text), str(raw["locale"]), split, str(name), expect, category["source"], labelled)
                )
        for item in raw.get("sessions") or []:
            expect = _expect(item.get("expect"), f"{path}: {item.get('id')}")
            tier = _tier(item.get("tier"), f"{path}: {item.get('id')}")
            sessions.append(
                Session(
                    str(item["id"]), tuple(map(str, item["turns"])), item["locale"], split, expect, item["source"], tier
                )
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
            ok = verdicts[-1].tier == "low" if s.tier == "low" else at_least_high(verdicts[-1].tier)
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


def tier_agreement(folder: Path, model: Model | None = None) -> dict[tuple[str, str], Tally]:
    """Per (expected final tier, locale): how many of the sessions labelled with a `tier`
    end at exactly that tier (`flagged`), and the tiers of those that do not (`misses`)."""
    out: dict[tuple[str, str], Tally] = {}
    for s in load_set(folder)[1]:
        if s.tier is None:
            continue
        final = run_session(s.turns, session=s.id, model=model)[-1].tier
        tally = out.setdefault((s.tier, s.locale), Tally())
        tally.total += 1
        tally.flagged += final == s.tier
        if final != s.tier:
            tally.misses.append(f"{s.id}: ended at {final}")
    return out


def _label_rows(path: Path, columns: tuple[str, ...]) -> Iterator[tuple[str, list[str]]]:
    """The rows of a tier-label file kept apart from a set's texts: `columns` tab-separated fields
    per line, none empty, `#` comments and blank lines skipped; each with where it stands
    (file:line) for an error. A line with another number of fields is rejected there."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        where = f"{path}:{number}"
        if len(fields) != len(columns) or not all(fields):
            raise ValueError(f"{where}: expected {', '.join(columns)}, tab-separated")
        yield where, fields


def load_session_tiers(path: Path) -> dict[str, Tier | None]:
    """Tier labels kept apart from a set's texts (safety_unseen/session_tiers.tsv: the older
    sessions, labelled again with the graded tiers): `id<TAB>tier<TAB>reason` per line, `#`
    comments; `none` is a session nothing in which warrants a tier. A malformed line is
    rejected with its file and line."""
    labels: dict[str, Tier | None] = {}
    for where, (session, tier, _) in _label_rows(path, ("id", "tier", "reason")):
        if session in labels:
            raise ValueError(f"{where}: session {session!r} labelled twice")
        labels[session] = None if tier == "none" else _tier(tier, where)
    return labels


def graded_sessions(
    folder: Path, labels: dict[str, Tier | None], model: Model | None = None
) -> dict[tuple[str, str], Tally]:
    """Per (label, locale), the sessions of `folder` answered as their label in `labels` says
    (`flagged`): none, never at high on any turn; low, ending at low; high, at high or above;
    imminent, at imminent. The others are in `misses`, by id and the tier they ended at."""
    out: dict[tuple[str, str], Tally] = {}
    for s in load_set(folder)[1]:
        if s.id not in labels:
            raise ValueError(f"{folder}: session {s.id!r} has no tier label")
        label = labels[s.id]
        verdicts = run_session(s.turns, session=s.id, model=model)
        final = verdicts[-1].tier
        if label is None:
            right = not any(at_least_high(v.tier) for v in verdicts)
        else:
            right = at_least_high(final) if label == "high" else final == label
        tally = out.setdefault((label or "none", s.locale), Tally())
        tally.total += 1
        tally.flagged += right
        if not right:
            tally.misses.append(f"{s.id}: ended at {final}")
    return out


def message_key(text: str) -> str:
    """How a tier label names a message without quoting it: the first 16 hex digits of the
    sha256 of its text (the unseen texts stay unread by whoever tunes the guard)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def load_message_tiers(path: Path) -> dict[tuple[str, str], Tier | None]:
    """Per-message tier labels kept apart from a set's texts (safety_unseen/message_tiers.tsv):
    `split<TAB>key<TAB>tier<TAB>annotator A<TAB>annotator B` per line (key: message_key), `#`
    comments; `none` is a message that warrants no tier. A malformed line is rejected with its
    file and line."""
    labels: dict[tuple[str, str], Tier | None] = {}
    columns = ("split", "key", "tier", "annotator A", "annotator B")
    for where, (split, key, tier, *annotators) in _label_rows(path, columns):
        if (split, key) in labels:
            raise ValueError(f"{where}: message {split}/{key} labelled twice")
        for given in annotators:
            if given != "none":
                _tier(given, where)
        labels[(split, key)] = None if tier == "none" else _tier(tier, where)
    return labels


@dataclass
class BlindRecall:
    """Messages labelled high in a set, against their blind per-message tiers: `answered` at
    the tier their label asks (a blind low at low or above, any other at high or above: a blind
    none keeps the older high label), `at_high` at high or above whatever the label, of the
    blind lows (passive wishes) how many the guard answers at exactly low, and of the blind
    imminent ones, how many at imminent."""

    total: int = 0
    answered: int = 0
    at_high: int = 0
    low: int = 0
    low_exact: int = 0
    imminent: int = 0
    imminent_answered: int = 0
    blind: dict[str, int] = field(default_factory=dict)  # blind tier -> how many


def blind_recall(
    folder: Path, labels: dict[tuple[str, str], Tier | None], *, model: Model | None = None
) -> BlindRecall:
    """The messages of `folder` labelled high, each read alone as a first message, against
    `labels` (load_message_tiers). A message the labels lack is an error: the file and the set
    must describe the same messages."""
    out = BlindRecall()
    for m in load_set(folder)[0]:
        key = (m.split, message_key(m.text))
        if key not in labels:
            raise ValueError(f"{folder}: a message of split {m.split!r} ({key[1]}) has no tier label")
        if m.expect != "high":
            continue
        label = labels[key]
        tier = assess(m.text, session="eval", turn=1, previous=None, model=model).tier
        out.total += 1
        out.blind[label or "none"] = out.blind.get(label or "none", 0) + 1
        out.at_high += at_least_high(tier)
        out.answered += tier != "none" if label == "low" else at_least_high(tier)
        if label == "low":
            out.low += 1
            out.low_exact += tier == "low"
        if label == "imminent":
            out.imminent += 1
            out.imminent_answered += tier == "imminent"
    return out


def answered_at_its_tier(verdict: Guard) -> bool:
    """A message labelled high that the guard answers as issue #19's graded tiers say: at high
    or above, or at low when what it read is a passive wish (a check-in with the resource)."""
    return at_least_high(verdict.tier) or (verdict.tier == "low" and any(h.family == PASSIVE for h in verdict.hits))


def graded_recall(
    folder: Path, *, splits: Iterable[str] | None = None, locale: str | None = None, model: Model | None = None
) -> Tally:
    """Of the messages labelled high (in `splits`, in `locale`): how many are answered at their tier."""
    wanted = None if splits is None else set(splits)
    out = Tally()
    for m in load_set(folder)[0]:
        if m.expect != "high" or (wanted is not None and m.split not in wanted) or locale not in (None, m.locale):
            continue
        verdict = assess(m.text, session="eval", turn=1, previous=None, model=model)
        out.total += 1
        if answered_at_its_tier(verdict):
            out.flagged += 1
        else:
            out.misses.append(f"{verdict.tier}: {m.text}")
    return out
