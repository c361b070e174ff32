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

Then the guard's screening time per message over every message of the set: median and p99
in microseconds, next to a trivial baseline (lower-casing the message and one regex search
for two explicit phrases, the least a keyword screen does) measured in the same run, so the
ratio holds on a loaded machine; the rules alone beside it (what the learned signal costs);
and the size of the learned signal's weights. Target: well under a millisecond per message.
"""

from __future__ import annotations

import re
import statistics
import time
from pathlib import Path

from cantata.pipelines.coaching.evaluate import describe, evaluate, load_set, run_session
from cantata.pipelines.coaching.guard import assess, screen
from cantata.pipelines.coaching.learned import OFF, WEIGHTS_FILE, default_model
from cantata.pipelines.coaching.safety import at_least_high

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "coaching"
SET = DATA / "safety"
UNSEEN = DATA / "safety_unseen"
BENIGN_LONG = DATA / "benign_long"
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


def main() -> None:
    benign_long()
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
    print(
        f"  learned signal: {len(default_model().weights)} weights, {WEIGHTS_FILE.stat().st_size / 1000:.0f} KB on disk"
    )


if __name__ == "__main__":
    main()
