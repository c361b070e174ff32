"""Train the learned signal (learned.py) on the labelled set, and measure how it generalises.

`make safety-model` runs this: `python -m cantata.pipelines.coaching.train_learned`.

1. LEAVE-ONE-SPLIT-OUT. Each split of the set (tests/data/coaching/safety/, one `split:` per
   file group) was written at a different time, most by a different writer. For each one, a
   model is trained on all the others and scores the left-out split; the guard (rules +
   that model) is run on it, messages and sessions, exactly as evaluate() runs the committed
   one. The table this prints (recall EN/FR, sessions, false alarms per left-out split,
   rules alone and rules + learned) is the figure of generalisation: the in-sample figures of
   the committed model are not.
2. THRESHOLDS by the same cross-validation: every message's out-of-fold score (from the
   model that did not see its split) gives the distribution of scores on negatives no model
   was trained on; `strong` is set so that at most STRONG_BUDGET of them reach it, and at
   most CONVERSATION_BUDGET of the benign long development conversations (issue #19: dealt
   into LONG_FOLDS splits of their own, negatives like the everyday split) reach it on a turn
   where a strong read is a hit (guard.may_read_strong: a risk concept named, or a warning sign
   of the rules): a per-conversation false-alarm budget, what a person lives through, not a
   per-message one. `explicit`, the threshold on a sentence that names death, self-harm or a
   lethal means in so many words (guard.explicit_sentences), is as low as the same two budgets
   allow once `strong` has spent its share: what a clinician would never let pass gets the room. `weak` is the
   candidate (at most one of WEAK_BUDGETS of them reach it) under which the sessions, each run
   by the model that did not see it, raise the fewest safe sessions and then leave the fewest
   high ones below high. In the table, each left-out split's thresholds come from the other
   splits only.
3. The committed model: trained on every split, its weights one signed byte each (a scale
   for all), with the thresholds of step 2 and the sha256 of the set's files (a test checks
   it). Every fold's model is quantized the same way, so the table measures what is stored.
4. `--broad --no-table`: the panel's second member (learned.Panel, learned_weights_broad.json),
   trained and thresholded the same way on every split and every benign development half,
   the batches MEASURED_ONLY included; without the table, which would take hours.

Training is stdlib only: a logistic regression by AdaGrad on hashed binary features (1/sqrt(n)
each), L2-regularised, classes balanced, a fixed seed and order, so two runs on the same
data write the same file. No scikit-learn: a dependency for a few hundred lines of
arithmetic would be a second way to train that the runtime does not share.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import os
import random
import struct
import sys
import zlib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from multiprocessing import get_context
from pathlib import Path

from cantata.pipelines.coaching.evaluate import Message, Report, Session, evaluate, load_set, run_session
from cantata.pipelines.coaching.guard import explicit_sentences, may_read_strong, readable
from cantata.pipelines.coaching.learned import (
    BITS,
    BROAD_FILE,
    ENCODING,
    FEATURES_VERSION,
    MIN_WORDS,
    OFF,
    WEIGHTS_FILE,
    Model,
    features,
    gaps,
    linear,
    quantize,
)
from cantata.pipelines.coaching.safety import at_least_high
from cantata.pipelines.coaching.tolerant import BOUNDARY, tolerant

DATA = Path(__file__).resolve().parents[3] / "tests" / "data" / "coaching" / "safety"
# Benign long conversations (issue #19): only their development halves are read, as negatives;
# the held-out half (`long_heldout`) is for measuring and never read here.
CONVERSATIONS = DATA.parent / "benign_long"
LONG_SPLIT = "long_dev"  # the folds' prefix (long_dev_0...)
# Every development half, in the order they were written; bench/safety.py measures them all.
LONG_DEVELOPMENT = (LONG_SPLIT, "long_dev2", *(f"long_dev{i}" for i in range(3, 17)), "long_train1")
LONG_SPLITS = frozenset({LONG_SPLIT, "long_dev2"})  # the development halves, written blind
# The batches written blind on 2026-12-05 (and dev19 to dev27, 2026-12-06) are measured, not
# trained on: retrained with them (and the benign long_dev3, long_dev4, long_train1), the signal
# answered fewer unseen crisis messages at their tier (869/1138 against 880/1138), ended fewer
# unseen high sessions at high (28/42 against 31/42) and scored 56 explicit messages of the set
# under `strong` (17 before). Out of the training, they measure what it does on text it never saw.
# The panel's broad member (below) is trained on them.
MEASURED_ONLY = frozenset(
    {
        "dev17",
        "dev18",
        "dev19",
        "dev20",
        "dev21",
        "dev22",
        "dev23",
        "dev24",
        "dev25",
        "dev26",
        "dev27",
        "dev28",
        "dev29",
        "dev30",
        "dev31",
        "dev32",
        "dev33",
        "dev34",
        "dev35",
        "dev36",
        "dev37",
        "dev38",
        "dev39",
        "dev40",
        "dev41",
        "dev42",
        "dev43",
        "dev44",
        "train_g",
        "train_h",
        "train_i",
        "train_j",
    }
)
# The panel's second member (learned.BROAD_FILE, `--broad`) is trained on every split and every
# development half: kept out, the batches above measure the first member on text it never saw;
# but phrases and a signal tuned on a few writers do not carry to the next one, and the member
# that read them all, its reads mapped onto the first one's scale and only ever raising it
# (learned.Panel), answered more unseen crisis messages at their tier (912/1138 against 875)
# with the same benign held-out conversations at high (3/60), 2026-12-07.
BROAD_LONG_SPLITS = frozenset(LONG_DEVELOPMENT)
LONG_FOLDS = 4  # the development conversations, dealt into this many splits by conversation
# At most this share of the development conversations may hold a turn whose out-of-fold
# score reaches `strong`: the false-alarm budget is per conversation (what a person lives
# through), not per message.
CONVERSATION_BUDGET = 0.02
EPOCHS = 12
L2 = 1e-4
RATE = 0.5
SEED = 9
MIN_WEIGHT = 1.5e-3  # lighter weights are dropped: they move no score
NEGATIVE_WEIGHT = 2.0  # a false alarm costs more than a miss the rules may still catch
EXPLICIT_FLOOR = 0.5  # a read the model calls less likely than not is never high on its own
STRONG_BUDGET = 0.008  # out-of-fold hard negatives at or above `strong`: the rules add their own
WEAK_BUDGETS = (0.03, 0.05, 0.08, 0.12, 0.16)  # candidate shares of out-of-fold negatives at or above `weak`
EASY_SPLITS = frozenset({"everyday"})  # ordinary coaching talk, not hard negatives
_NOT_TRAINED = frozenset({"other_risks"})  # abuse, medical emergencies: the rules' own categories


@dataclass(frozen=True)
class Example:
    split: str
    locale: str
    text: str
    label: int  # 1: warrants high
    features: tuple[int, ...]
    sentences: tuple[str, ...]  # the ones the guard lets the learned signal read
    whole: bool = True  # False: one sentence of a safe message, for training only
    conversation: str = ""  # the session a turn belongs to
    names_risk: bool = False  # a strong read of it is high: guard.may_read_strong
    death: tuple[str, ...] = ()  # the sentences on which a read at `explicit` is: guard.explicit_sentences


def _easy(split: str) -> bool:
    """Ordinary talk, not hard negatives: the everyday split and the benign long conversations."""
    return split in EASY_SPLITS or split.startswith(LONG_SPLIT)


def sentences_of(text: str) -> tuple[str, ...]:
    return tuple(s for s in tolerant(text).split(f" {BOUNDARY} ") if s.strip())


def long_conversations(folder: Path = CONVERSATIONS, broad: bool = False) -> list[Session]:
    """The development halves of the benign long conversations, each in one of LONG_FOLDS
    splits (long_dev_0...), so that cross-validation scores each by a model that did not see it."""
    if not folder.is_dir():
        return []
    splits = BROAD_LONG_SPLITS if broad else LONG_SPLITS
    kept = [s for s in load_set(folder)[1] if s.split in splits]
    return [replace(s, split=f"{LONG_SPLIT}_{i % LONG_FOLDS}") for i, s in enumerate(kept)]


def training_set(folder: Path = DATA, broad: bool = False) -> tuple[list[Message], list[Session]]:
    """The labelled messages and sessions the signal is trained on: the set but MEASURED_ONLY
    (`broad`: the whole set)."""
    messages, sessions = load_set(folder)
    if broad:
        return messages, sessions
    return [m for m in messages if m.split not in MEASURED_ONLY], [s for s in sessions if s.split not in MEASURED_ONLY]


def data_sha256(folder: Path = DATA, conversations: Path = CONVERSATIONS, broad: bool = False) -> str:
    """The hash of the data (every message and session as loaded, with its split, locale,
    category and label; not the files' comments; and the benign long development
    conversations): what the weights were trained on."""
    messages, sessions = training_set(folder, broad)
    rows = [["m", m.split, m.locale, m.category, m.expect, m.text] for m in messages]
    rows += [
        ["s", s.split, s.locale, s.id, s.expect, *s.turns]
        for s in [*sessions, *long_conversations(conversations, broad)]
    ]
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode("utf-8")).hexdigest()


def examples(folder: Path = DATA, conversations: Path = CONVERSATIONS, broad: bool = False) -> list[Example]:
    """Every message (but the other-risk categories) with its label, and every turn of a safe
    session (the benign long development conversations included) as a negative. A high
    session's turns have no label of their own: not used."""
    messages, sessions = training_set(folder, broad)
    sessions = [*sessions, *long_conversations(conversations, broad)]
    out: list[Example] = []

    def add(split: str, locale: str, text: str, label: int, conversation: str = "") -> None:
        found: set[int] = set()
        sentences = sentences_of(text)
        for s in sentences:
            found |= features(s)
        read = tuple(s for s in readable(text) if len(s.split()) >= MIN_WORDS)
        risk, death = may_read_strong(text), tuple(explicit_sentences(text))
        out.append(Example(split, locale, text, label, tuple(sorted(found)), read, True, conversation, risk, death))
        if label == 0 and len(sentences) > 1:
            # Each sentence of a safe message is safe too; the guard reads them one by one.
            for s in sentences:
                out.append(Example(split, locale, s, 0, tuple(sorted(features(s))), (), whole=False))

    for m in messages:
        if m.category not in _NOT_TRAINED:
            add(m.split, m.locale, m.text, int(m.expect == "high"))
    for session in sessions:
        if session.expect == "safe":
            for turn in session.turns:
                add(session.split, session.locale, turn, 0, session.id)
    return out


def train(data: list[Example]) -> tuple[dict[int, float], float]:
    """Weights and bias of an L2-regularised logistic regression, by AdaGrad, as stored
    (learned.quantize: one byte per weight), so the folds measure the model that is committed."""
    size = 1 << BITS
    w = [0.0] * size
    g2 = [1e-8] * size
    bias, bias_g2 = 0.0, 1e-8
    positives = sum(e.label for e in data)
    negatives = len(data) - positives
    class_weight = {
        1: len(data) / (2 * max(positives, 1)),
        0: NEGATIVE_WEIGHT * len(data) / (2 * max(negatives, 1)),
    }
    order = list(range(len(data)))
    rng = random.Random(SEED)
    for _ in range(EPOCHS):
        rng.shuffle(order)
        for i in order:
            example = data[i]
            feats = example.features
            if not feats:
                continue
            x = 1.0 / math.sqrt(len(feats))
            z = bias + x * sum(w[f] for f in feats)
            p = 1.0 / (1.0 + math.exp(-z)) if z > -40 else 0.0
            g = (p - example.label) * class_weight[example.label]
            for f in feats:
                gf = g * x + L2 * w[f]
                g2[f] += gf * gf
                w[f] -= RATE * gf / math.sqrt(g2[f])
            bias_g2 += g * g
            bias -= RATE * g / math.sqrt(bias_g2)
    kept = {i: w[i] for i in range(size) if abs(w[i]) >= MIN_WEIGHT}
    scale, quantized = quantize(kept)
    return {i: q * scale for i, q in quantized.items()}, round(bias, 4)


def best_score(weights: dict[int, float], bias: float, sentences: tuple[str, ...]) -> float:
    """As the guard reads a message: its best sentence's score (0 when there is none)."""
    best = -math.inf
    for sentence in sentences:
        best = max(best, linear(weights, bias, features(sentence)))
    return 1.0 / (1.0 + math.exp(-best)) if best > -40 else 0.0


def threshold(negative_scores: list[float], budget: float) -> float:
    """The lowest threshold that at most `budget` of these negatives reach."""
    ranked = sorted(negative_scores, reverse=True)
    allowed = int(budget * len(ranked))
    if allowed >= len(ranked):
        return 0.0
    return min(1.0, ranked[allowed] + 1e-4)


@dataclass
class Fold:
    split: str
    model: Model
    # The left-out split's examples, scored out of fold: their best readable sentence, and their
    # best sentence naming death, self-harm or a lethal means (0 when none does).
    scored: list[tuple[Example, float, float]]
    sessions: list[Session]  # the left-out split's sessions


def _session_outcomes(fold: Fold, strong: float, explicit: float, weak: float) -> tuple[int, int]:
    """(safe or passive-wish sessions raised to high, high sessions ending below high) of the
    fold's split, by its own out-of-fold model with these thresholds."""
    model = replace(fold.model, strong=strong, explicit=explicit, weak=weak)
    raised = missed = 0
    for session in fold.sessions:
        tiers = [v.tier for v in run_session(session.turns, session.id, model=model)]
        # A passive wish (a session labelled tier low) must not be raised to high either.
        if session.expect == "safe" or session.tier == "low":
            raised += any(at_least_high(t) for t in tiers)
        else:
            missed += not at_least_high(tiers[-1])
    return raised, missed


def beside(first: list[float], second: list[float], strong: float, budget: float) -> float:
    """The lowest threshold on the items' `second` scores such that at most `budget` of them
    reach `strong` on their first score or it on their second: what `strong` left of the budget,
    spent on the items a lower threshold reads. Never above `strong`, nor under EXPLICIT_FLOOR."""
    allowed = int(budget * len(first))
    rest = sorted((b for a, b in zip(first, second, strict=True) if a < strong), reverse=True)
    spare = allowed - (len(first) - len(rest))
    if spare < 0:
        return strong
    lowest = rest[spare] + 1e-4 if spare < len(rest) else 0.0
    return min(strong, max(EXPLICIT_FLOOR, lowest))


def choose_thresholds(folds: list[Fold]) -> tuple[float, float, float]:
    """`strong` from the folds' out-of-fold negatives (STRONG_BUDGET of them reach it, and at
    most CONVERSATION_BUDGET of the benign long conversations reach it on a turn); `explicit`
    as low as the same two budgets allow when a sentence naming death, self-harm or a lethal
    means in so many words is read at it too; `weak` the one of WEAK_BUDGETS that raises the fewest safe
    sessions, then misses the fewest high ones (then the most cautious), each session scored by
    the model that did not see it."""
    # The budgets are shares of the HARD negatives: everyday talk, easy to tell apart, would
    # dilute them and let more hard negatives through.
    hard = [(e, score, death) for f in folds for e, score, death in f.scored if e.label == 0 and not _easy(e.split)]
    negatives = [score for _, score, _ in hard]
    # A strong read is a false alarm only where it is a hit (guard.may_read_strong): the budget
    # counts those, as the per-conversation one below does.
    gated = [score if e.names_risk else 0.0 for e, score, _ in hard]
    named = [death for _, _, death in hard]
    strong = threshold(gated, STRONG_BUDGET)
    # And per conversation: a benign long conversation's highest out-of-fold score on a turn
    # where a strong read is a hit (guard.may_read_strong: a risk concept named or a rule's sign),
    # and on a turn naming death, self-harm or a lethal means.
    peaks: dict[str, tuple[float, float]] = {}
    for f in folds:
        for e, score, death in f.scored:
            if e.split.startswith(LONG_SPLIT):
                was = peaks.get(e.conversation, (0.0, 0.0))
                peaks[e.conversation] = (
                    max(was[0], score if e.names_risk else 0.0),
                    max(was[1], death),
                )
    if peaks:
        strong = max(strong, threshold([p for p, _ in peaks.values()], CONVERSATION_BUDGET))
    explicit = beside(gated, named, strong, STRONG_BUDGET)
    if peaks:
        first, second = zip(*peaks.values(), strict=True)
        explicit = max(explicit, beside(list(first), list(second), strong, CONVERSATION_BUDGET))
    best: tuple[int, int, float] | None = None
    for budget in WEAK_BUDGETS:
        weak = min(explicit, threshold(negatives, budget))
        raised = missed = 0
        for fold in folds:
            r, m = _session_outcomes(fold, strong, explicit, weak)
            raised, missed = raised + r, missed + m
        key = (raised, missed, -weak)
        if best is None or key < best:
            best = key
    assert best is not None
    return strong, explicit, -best[2]


def _pool() -> ProcessPoolExecutor:
    """One worker per core, forked: the workers inherit what the parent computed."""
    return ProcessPoolExecutor(max_workers=os.cpu_count() or 1, mp_context=get_context("fork"))


_FOLDS: list[Fold] = []  # leave_one_split_out's folds, for its forked workers


def _thresholds_without(index: int) -> tuple[float, float, float]:
    return choose_thresholds([f for i, f in enumerate(_FOLDS) if i != index])


def _train_without(data: list[Example], split: str) -> tuple[dict[int, float], float]:
    return train([e for e in data if e.split != split])


def leave_one_split_out(data: list[Example], sessions: list[Session], own_thresholds: bool = True) -> list[Fold]:
    """One model per split, trained on all the others: each fold's training is independent and
    seeded, so they run in parallel, one process per core, and give the same models as in turn.
    `own_thresholds`: each fold's thresholds chosen on the other folds, for the table; the
    committed thresholds need only the folds' out-of-fold scores."""
    folds: list[Fold] = []
    splits = sorted({e.split for e in data} | {s.split for s in sessions})
    with _pool() as pool:
        trained = pool.map(_train_without, [data] * len(splits), splits)
    for split, (weights, bias) in zip(splits, trained, strict=True):
        held = [e for e in data if e.split == split and e.whole]
        scored = [(e, best_score(weights, bias, e.sentences), best_score(weights, bias, e.death)) for e in held]
        model = Model(weights=weights, bias=bias, strong=2.0, weak=2.0)
        folds.append(Fold(split, model, scored, [s for s in sessions if s.split == split]))
        print(f"  trained without {split}", file=sys.stderr)
    if not own_thresholds:
        return folds
    # Each fold's thresholds from the other folds, one process per core: forked, the workers
    # share the folds (models of a hundred thousand weights) instead of receiving copies.
    _FOLDS[:] = folds
    with _pool() as pool:
        chosen = list(pool.map(_thresholds_without, range(len(folds))))
    for fold, (strong, explicit, weak) in zip(folds, chosen, strict=True):
        fold.model = replace(fold.model, strong=strong, explicit=explicit, weak=weak)
    return folds


def _figures(report: Report, split: str) -> tuple[str, str, str, str]:
    def rate(t: object) -> str:
        flagged, total = getattr(t, "flagged", 0), getattr(t, "total", 0)
        return f"{flagged}/{total} {flagged / total:4.0%}" if total else "-"

    en = rate(report.message_tally(expect="high", split=split, locale="en"))
    fr = rate(report.message_tally(expect="high", split=split, locale="fr"))
    high = report.session_tally(expect="high", split=split)
    safe = report.session_tally(expect="safe", split=split)
    sessions = (
        f"{high.flagged}/{high.total}, safe raised {safe.flagged}/{safe.total}" if high.total + safe.total else "-"
    )
    return en, fr, sessions, rate(report.message_tally(expect="safe", split=split))


def table(folder: Path, folds: list[Fold]) -> list[str]:
    """The leave-one-split-out table: rules alone, then rules + the model that did not see the split."""
    before = evaluate(folder, model=OFF)
    lines = [
        "leave-one-split-out: each split scored by the rules + a model trained on all the other splits",
        f"{'split':10} {'':6} {'recall EN':12} {'recall FR':12} {'sessions high, safe raised':28} {'false alarms':12}",
    ]
    pooled = {"before": [0, 0, 0, 0, 0, 0, 0, 0], "after": [0, 0, 0, 0, 0, 0, 0, 0]}
    for fold in folds:
        after = evaluate(folder, model=fold.model, splits=[fold.split])
        for name, report in (("before", before), ("after", after)):
            en, fr, sessions, alarms = _figures(report, fold.split)
            lines.append(
                f"{fold.split if name == 'before' else '':10} {name:6} {en:12} {fr:12} {sessions:28} {alarms:12}"
            )
            tallies = (
                report.message_tally(expect="high", split=fold.split, locale="en"),
                report.message_tally(expect="high", split=fold.split, locale="fr"),
                report.session_tally(expect="high", split=fold.split),
                report.message_tally(expect="safe", split=fold.split),
            )
            for i, t in enumerate(tallies):
                pooled[name][2 * i] += t.flagged
                pooled[name][2 * i + 1] += t.total
        lines.append(
            f"{'':10} {'':6} thresholds strong {fold.model.strong:.3f} explicit {fold.model.explicit:.3f} weak {fold.model.weak:.3f}"
        )
    raised = total = 0
    for fold in folds:
        for session in fold.sessions if fold.split.startswith(LONG_SPLIT) else []:
            total += 1
            raised += any(at_least_high(v.tier) for v in run_session(session.turns, session.id, model=fold.model))
    if total:
        lines.append(f"benign long development conversations reaching high, out of fold: {raised}/{total}")
    for name, p in pooled.items():
        cells = [f"{p[2 * i]}/{p[2 * i + 1]} {p[2 * i] / max(p[2 * i + 1], 1):4.1%}" for i in range(4)]
        lines.append(f"{'POOLED':10} {name:6} {cells[0]:12} {cells[1]:12} {cells[2]:28} {cells[3]:12}")
    return lines


def _packed(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data, 9)).decode("ascii")


def save(weights: dict[int, float], bias: float, thresholds: tuple[float, float, float], sha: str, path: Path) -> None:
    """The weights file learned.read_model reads; `thresholds`: strong, explicit, weak."""
    strong, explicit, weak = thresholds
    scale, quantized = quantize(weights)
    keys = sorted(quantized)
    payload = {
        "about": "learned.py's weights: written by `make safety-model` (train_learned.py); do not edit",
        "features_version": FEATURES_VERSION,
        "bits": BITS,
        "data_sha256": sha,
        "bias": bias,
        "strong": round(strong, 4),
        "explicit": round(explicit, 4),
        "weak": round(weak, 4),
        "count": len(keys),
        "scale": scale,
        # Sorted keys are stored as their gaps, and both arrays deflated: the file is a third
        # of the size of the raw arrays, and loads the same model.
        "encoding": ENCODING,
        "keys": _packed(struct.pack(f"<{len(keys)}I", *gaps(keys))),
        "values": _packed(struct.pack(f"<{len(keys)}b", *(quantized[k] for k in keys))),
    }
    path.write_text(json.dumps(payload, separators=(",", ":")) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the labelled set's folder")
    parser.add_argument(
        "--out", type=Path, help=f"the weights file to write ({WEIGHTS_FILE.name} or {BROAD_FILE.name})"
    )
    parser.add_argument("--broad", action="store_true", help="the panel's second member: trained on every split")
    parser.add_argument(
        "--conversations",
        type=Path,
        default=CONVERSATIONS,
        help="benign long conversations: their development half is read as negatives",
    )
    table_choice = parser.add_mutually_exclusive_group()
    table_choice.add_argument("--table-only", action="store_true", help="print the table, write nothing")
    # The table chooses thresholds again for each left-out split over all the others: with the
    # sixty splits of `--broad` that alone takes hours on two cores; the weights do not need it.
    table_choice.add_argument("--no-table", action="store_true", help="write the weights, skip the table")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"train_learned: {args.data}: no such folder", file=sys.stderr)
        return 2
    out = args.out or (BROAD_FILE if args.broad else WEIGHTS_FILE)
    data = examples(args.data, args.conversations, args.broad)
    sessions = [*training_set(args.data, args.broad)[1], *long_conversations(args.conversations, args.broad)]
    folds = leave_one_split_out(data, sessions, own_thresholds=not args.no_table)
    for line in [] if args.no_table else table(args.data, folds):
        print(line)
    if args.table_only:
        return 0
    strong, explicit, weak = choose_thresholds(folds)
    weights, bias = train(data)
    save(weights, bias, (strong, explicit, weak), data_sha256(args.data, args.conversations, args.broad), out)
    print(f"wrote {out}: {len(weights)} features, strong {strong:.3f}, explicit {explicit:.3f}, weak {weak:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
