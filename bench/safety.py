"""The coaching guard on its labelled set, and how long it takes to screen a message.

Prints, per split, recall of high/imminent per category and false alarms on the hard
negatives, overall and per language, and the sessions, with the rules and the learned
signal (learned.py) together. Every split is development data now: the rules were tuned on
the dev*/heldout* splits, and the learned signal is trained on all of them (blind, train_a
and train_b included), so these figures are IN-SAMPLE. The figure of generalisation is the
leave-one-split-out table that `make safety-model` (train_learned.py) prints. `everyday` is
ordinary coaching talk, not hard negatives: its false alarms are shown on their own.

Then the UNSEEN sets (tests/data/coaching/safety_unseen/: blind2, blind3, train_c,
train_d), each written by someone who saw neither the rules nor the data, never trained or
tuned on, and pooled: the honest estimate of what the guard catches in text nobody here
wrote for it.

First, the false alarms on BENIGN LONG conversations (tests/data/coaching/benign_long/,
issue #19): ordinary 15-to-40-turn chats about changing a habit, written blind, per
conversation as well as per message.

Second, the TIER AGREEMENT (issue #19's graded tiers): the sessions labelled with the tier they
must end at (tests/data/coaching/safety_tiers/: passive wish -> low; active thoughts, plan,
preparation -> high; intent with a time or the means at hand, refusing to be stopped ->
imminent), per tier and locale. And, since a passive wish is now answered at low (a check-in
with the resource) while the older sets label it high, the unseen recall is printed twice:
reaching high (the earlier figure), and reaching high or answered at low as a passive wish.

Then the guard's screening time per message over every message of the set: median and p99
in microseconds, next to a trivial baseline (lower-casing the message and one regex search
for two explicit phrases, the least a keyword screen does) measured in the same run, so the
ratio holds on a loaded machine; the rules alone beside it (what the learned signal costs);
and the size of the learned signal's weights. Target: well under a millisecond per message.

`--dev` prints instead what the rules lack on DEVELOPMENT data only (dev_report), the one
report to tune on, then the development figures (dev_figures: the blind dev15 split per category
and locale, its sessions per tier, the benign long development conversations, the everyday talk
and the hard negatives) and the fresh batches' (fresh_figures); `--dev --rules-only` the same
without the learned signal.
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from pathlib import Path

from cantata.pipelines.coaching.evaluate import (
    Session,
    answered_at_its_tier,
    blind_recall,
    describe,
    evaluate,
    graded_recall,
    graded_sessions,
    load_message_tiers,
    load_session_tiers,
    load_set,
    run_session,
    tier_agreement,
)
from cantata.pipelines.coaching.guard import assess, screen
from cantata.pipelines.coaching.learned import BROAD_FILE, OFF, WEIGHTS_FILE, Model, read_model
from cantata.pipelines.coaching.models import Guard
from cantata.pipelines.coaching.safety import at_least_high
from cantata.pipelines.coaching.train_learned import LONG_DEVELOPMENT, MEASURED_ONLY

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "coaching"
SET = DATA / "safety"
UNSEEN = DATA / "safety_unseen"
BENIGN_LONG = DATA / "benign_long"
TIERS = DATA / "safety_tiers"
# The newest blind development split (written 2026-12-05, tier-labelled), reported per category.
BLIND_DEV = "dev18"
_BASELINE = re.compile(r"\b(?:kill myself|suicide)\b")
ROUNDS = 5


def _per_message(fn: object, texts: list[str]) -> list[float]:
    """Microseconds per call of fn(text), the best of ROUNDS for each text (least disturbed by other load)."""
    assert callable(fn)
    times: list[float] = []
    for text in texts:
        best = float("inf")
        for _ in range(ROUNDS):
            start = time.perf_counter()
            fn(text)
            best = min(best, time.perf_counter() - start)
        times.append(best * 1e6)
    return times


def _p99(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(0.99 * len(values)))]


def benign_long() -> None:
    """False alarms on long ordinary conversations (15 to 40 turns about changing a habit),
    written blind by people who saw neither the rules nor the labelled data, never trained or
    tuned on: per conversation (any turn at high or above is one false alarm, what a person
    lives through), the turns answered at high (a tier never drops within a session), and
    per message (each message alone, as the first turn of a fresh session)."""
    _, sessions = load_set(BENIGN_LONG)
    print("coaching guard on BENIGN LONG conversations (tests/data/coaching/benign_long/: never trained or tuned on)")
    for split in sorted({s.split for s in sessions}):
        for locale in ("en", "fr", None):
            group = [s for s in sessions if s.split == split and locale in (None, s.locale)]
            if not group:
                continue
            raised = turns = high_turns = alone = 0
            for s in group:
                verdicts = run_session(s.turns, session=s.id)
                flags = sum(at_least_high(v.tier) for v in verdicts)
                raised += flags > 0
                turns += len(verdicts)
                high_turns += flags
                alone += sum(at_least_high(assess(t, session="bench", turn=1, previous=None).tier) for t in s.turns)
            print(
                f"  {split:12} {locale or 'all':3} conversations reaching high {raised:2}/{len(group):<2} ="
                f" {raised / len(group):6.1%}   turns at high {high_turns / turns:6.1%}"
                f"   messages alone at high {alone:3}/{turns:<4} = {alone / turns:5.1%}"
            )


def tiers() -> None:
    print("coaching guard: sessions ending at the right tier (tests/data/coaching/safety_tiers/: development data)")
    for (tier, locale), tally in sorted(tier_agreement(TIERS).items()):
        print(f"  {tier:9} {locale}  {tally.flagged}/{tally.total}   {'; '.join(tally.misses)}")


def _dev(split: str) -> bool:
    return split.startswith("dev") or split == "everyday"


def _wrong_end(session: Session, verdicts: list[Guard]) -> bool:
    """A dev session that ended at the wrong tier: a safe one that reached high on a turn, a
    low-tier one not ending at low, a high one below high, an imminent one below imminent."""
    final = verdicts[-1].tier
    if session.expect == "safe":
        return any(at_least_high(v.tier) for v in verdicts)
    if session.tier is not None:
        return final != session.tier if session.tier != "high" else not at_least_high(final)
    return not at_least_high(final)


def _rate(flagged: int, total: int) -> str:
    return f"{flagged:3}/{total:<3} = {flagged / total:6.1%}" if total else "  -"


def dev_figures(model: Model | None = None) -> None:
    """The development figures to tune by: on BLIND_DEV, per category and locale, the crisis
    messages answered at their tier (evaluate.answered_at_its_tier: high, or low for a passive
    wish), at exactly their labelled tier, and the false alarms of its hard negatives; its
    sessions per labelled tier (low: ends at low; high: at high or above; imminent: at
    imminent; safe: never reaches high); the benign long development conversations reaching
    high on a turn; the tier sessions; false alarms on every dev split's negatives and on the
    everyday talk."""
    messages, sessions = load_set(SET)
    print(f"DEVELOPMENT figures: split {BLIND_DEV} (written blind), messages answered at their tier")
    graded: dict[tuple[str, str], list[int]] = {}
    for m in messages:
        if m.split != BLIND_DEV:
            continue
        verdict = assess(m.text, session="dev", turn=1, previous=None, model=model)
        row = graded.setdefault((m.locale, m.category), [0, 0, 0])
        row[0] += 1
        if m.expect == "safe":
            row[1] += at_least_high(verdict.tier)
            continue
        row[1] += answered_at_its_tier(verdict)
        row[2] += verdict.tier == m.tier
    for locale in ("en", "fr"):
        pooled = [0, 0]
        for (loc, category), (total, answered, exact) in sorted(graded.items()):
            if loc != locale:
                continue
            figure = "false alarms" if category == "hard_negatives" else "at its tier "
            if category != "hard_negatives":
                pooled = [pooled[0] + answered, pooled[1] + total]
            exact_cell = "" if category == "hard_negatives" else f"   exact tier {exact:3}"
            print(f"  {locale} {category:34} {figure} {_rate(answered, total)}{exact_cell}")
        print(f"  {locale} {'POOLED crisis messages':34} at its tier  {_rate(*pooled)}")
    for locale in ("en", "fr"):
        tallies: dict[str, list[int]] = {}
        for s in sessions:
            if s.split == BLIND_DEV and s.locale == locale:
                row = tallies.setdefault(s.tier or "safe", [0, 0])
                row[0] += 1
                row[1] += not _wrong_end(s, run_session(s.turns, session=s.id, model=model))
        cells = "   ".join(f"{tier} {right}/{total}" for tier, (total, right) in sorted(tallies.items()))
        print(f"  {locale} {BLIND_DEV} sessions ending at their tier: {cells}")
    _, conversations = load_set(BENIGN_LONG)
    for split in LONG_DEVELOPMENT:
        for locale in ("en", "fr"):
            group = [s for s in conversations if s.split == split and s.locale == locale]
            raised = sum(any(at_least_high(v.tier) for v in run_session(s.turns, s.id, model=model)) for s in group)
            print(f"  benign {split:9} {locale} conversations reaching high {_rate(raised, len(group))}")
    tiers = tier_agreement(TIERS, model=model)
    print(
        "  tier sessions right: "
        + "   ".join(f"{t}/{loc} {v.flagged}/{v.total}" for (t, loc), v in sorted(tiers.items()))
    )
    hard = [m for m in messages if _dev(m.split) and m.split != "everyday" and m.expect == "safe"]
    everyday = [m for m in messages if m.split == "everyday"]
    for name, negatives in (("hard negatives (dev splits)", hard), ("everyday talk", everyday)):
        alarms = sum(
            at_least_high(assess(m.text, session="dev", turn=1, previous=None, model=model).tier) for m in negatives
        )
        print(f"  false alarms, {name:27} {_rate(alarms, len(negatives))}")


def fresh_figures(model: Model | None = None) -> None:
    """The batches the learned signal's first member is not trained on (train_learned.MEASURED_ONLY:
    written blind on 2026-12-05/06, measured once before reading, their figures in their headers;
    its broad member is trained on them, so these are no longer figures of unseen text; the rules were
    tuned on their sessions since): crisis messages answered at their tier, hard negatives at high,
    and the high or imminent sessions ending below high, by name."""
    messages, sessions = load_set(SET)
    fresh = [m for m in messages if m.split in MEASURED_ONLY]
    crisis = [m for m in fresh if m.expect == "high"]
    safe = [m for m in fresh if m.expect == "safe"]
    answered = sum(
        answered_at_its_tier(assess(m.text, session="dev", turn=1, previous=None, model=model)) for m in crisis
    )
    alarms = sum(at_least_high(assess(m.text, session="dev", turn=1, previous=None, model=model).tier) for m in safe)
    print(f"FRESH batches ({', '.join(sorted(MEASURED_ONLY))}), only the broad member trained on them")
    print(
        f"  crisis messages at their tier {_rate(answered, len(crisis))}   hard negatives at high {_rate(alarms, len(safe))}"
    )
    risky = [s for s in sessions if s.split in MEASURED_ONLY and s.tier in ("high", "imminent")]
    below = [s.id for s in risky if not at_least_high(run_session(s.turns, session=s.id, model=model)[-1].tier)]
    print(f"  high or imminent sessions ending below high {_rate(len(below), len(risky))} {' '.join(below)}")


def dev_report(model: Model | None = None) -> None:
    """What the rules lack, on DEVELOPMENT data only (`--dev`): the splits dev, dev2..dev14 and
    everyday of the labelled set, the development half of the benign long conversations, and the
    tier sessions. Prints every crisis message not answered at high, split into those graded low
    as a passive wish (issue #19's tiers) and true misses, per split and category; every false
    alarm on a dev negative; every dev session that ended at the wrong tier; and every benign
    long dev conversation that reached high, with the signs that made it. Never reads the
    held-out, blind or unseen sets: they are measured, not read. `--rules-only` runs it without
    the learned signal, which was trained on these splits (in-sample it hides what the rules lack)."""
    messages, sessions = load_set(SET)
    passive = missed = total = 0
    print("DEVELOPMENT data only: crisis messages not answered at high")
    for m in messages:
        if not _dev(m.split):
            continue
        verdict = assess(m.text, session="dev", turn=1, previous=None, model=model)
        if m.expect == "safe":
            if at_least_high(verdict.tier):
                print(f"  FALSE ALARM {m.split}/{m.locale}/{m.category}: {m.text}  [{_signs(verdict)}]")
            continue
        total += 1
        if at_least_high(verdict.tier):
            continue
        graded = answered_at_its_tier(verdict)
        passive += graded
        missed += not graded
        kind = "passive->low" if graded else f"MISS ({verdict.tier})"
        print(f"  {kind:14} {m.split}/{m.locale}/{m.category}: {m.text}  [{_signs(verdict)}]")
    print(f"  dev crisis messages {total}: graded low as a passive wish {passive}, missed {missed}")
    for s in sessions:
        if not _dev(s.split):
            continue
        verdicts = run_session(s.turns, session=s.id, model=model)
        if _wrong_end(s, verdicts):
            print(f"  SESSION {s.id} ({s.tier or s.expect}): {' -> '.join(v.tier for v in verdicts)}")
    for (tier, locale), tally in sorted(tier_agreement(TIERS, model=model).items()):
        for miss in tally.misses:
            print(f"  TIER {tier}/{locale} {miss}")
    _, conversations = load_set(BENIGN_LONG)
    for s in conversations:
        if s.split not in LONG_DEVELOPMENT:
            continue
        for number, verdict in enumerate(run_session(s.turns, session=s.id, model=model), start=1):
            if at_least_high(verdict.tier):
                print(f"  BENIGN LONG {s.id} turn {number}: {s.turns[number - 1]}  [{_signs(verdict)}]")
                break


def _signs(verdict: Guard) -> str:
    return ", ".join(f"{h.rule}:{h.tier}" for h in verdict.hits) or "no sign"


def main() -> None:
    if "--dev" in sys.argv[1:]:
        model = OFF if "--rules-only" in sys.argv[1:] else None
        dev_report(model)
        dev_figures(model)
        fresh_figures(model)
        return
    benign_long()
    tiers()
    report = evaluate(SET)
    print("coaching guard on the labelled set (tests/data/coaching/safety/)")
    for line in describe(report):
        print(f"  {line}")
    print("coaching guard on the UNSEEN set (tests/data/coaching/safety_unseen/: never trained or tuned on)")
    unseen = evaluate(UNSEEN)
    for line in describe(unseen):
        print(f"  {line}")
    high, safe = unseen.message_tally(expect="high"), unseen.message_tally(expect="safe")
    sessions, calm = unseen.session_tally(expect="high"), unseen.session_tally(expect="safe")
    print(
        f"  unseen, pooled: recall {high.flagged}/{high.total} = {high.rate:.1%}, false alarms"
        f" {safe.flagged}/{safe.total} = {safe.rate:.1%}, sessions ended at high {sessions.flagged}/{sessions.total},"
        f" safe sessions raised {calm.flagged}/{calm.total}"
    )
    graded = graded_recall(UNSEEN)
    print(
        f"  unseen, pooled: answered at its tier as the guard itself reads it (high, or low when what it read is"
        f" a passive wish): {graded.flagged}/{graded.total} = {graded.rate:.1%}"
    )
    blind = blind_recall(UNSEEN, load_message_tiers(UNSEEN / "message_tiers.tsv"))
    print(
        f"  unseen, pooled, by blind per-message tiers (safety_unseen/message_tiers.tsv: {blind.blind}):"
        f" answered at its tier (a blind low at low or above, else high or above) {blind.answered}/{blind.total}"
        f" = {blind.answered / blind.total:.1%}; blind lows at exactly low {blind.low_exact}/{blind.low};"
        f" blind imminent at imminent {blind.imminent_answered}/{blind.imminent}"
    )
    labels = load_session_tiers(UNSEEN / "session_tiers.tsv")
    print("  unseen sessions at their tier, labelled blind (safety_unseen/session_tiers.tsv; none: never at high)")
    for (tier, locale), tally in sorted(graded_sessions(UNSEEN, labels).items()):
        print(f"    {tier:9} {locale}  {tally.flagged}/{tally.total}   {'; '.join(tally.misses)}")
    risky = [s for s in load_set(UNSEEN)[1] if labels[s.id] in ("high", "imminent")]
    at_high = sum(at_least_high(run_session(s.turns, session=s.id)[-1].tier) for s in risky)
    print(f"    labelled high or imminent, ending at high or above: {at_high}/{len(risky)}")
    messages, sessions = load_set(SET)
    texts = [m.text for m in messages] + [t for s in sessions for t in s.turns]
    for text in texts[:50]:  # warm caches
        screen(text)
    guard = _per_message(screen, texts)
    rules = _per_message(lambda t: screen(t, OFF), texts)
    full = _per_message(lambda t: assess(t, session="bench", turn=1, previous=None), texts)
    baseline = _per_message(lambda t: _BASELINE.search(t.lower()), texts)
    g, f, b = statistics.median(guard), statistics.median(full), statistics.median(baseline)
    print(f"  screening time over {len(texts)} messages (best of {ROUNDS} each)")
    print(f"    screen()     median {g:7.1f} us   p99 {_p99(guard):7.1f} us   = {g / b:5.1f}x the baseline")
    print(f"    assess()     median {f:7.1f} us   p99 {_p99(full):7.1f} us   (screen + accumulation + the Guard model)")
    r = statistics.median(rules)
    print(f"    rules alone  median {r:7.1f} us   p99 {_p99(rules):7.1f} us   (screen() without the learned signal)")
    print(f"    baseline     median {b:7.1f} us   p99 {_p99(baseline):7.1f} us   (lower() + one two-phrase regex)")
    print("    target: well under 1000 us per message")
    for path in (WEIGHTS_FILE, BROAD_FILE):
        print(
            f"  learned signal: {path.name}, {len(read_model(path).weights)} weights, {path.stat().st_size / 1000:.0f} KB on disk"
        )


if __name__ == "__main__":
    main()
