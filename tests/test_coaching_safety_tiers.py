"""Graded tiers must not cost what the guard already caught (issue #19).

Every message labelled high in tests/data/coaching/safety/ that main's guard put at high or
above (frozen once in must_stay_high.tsv) stays at high or above, except the purely passive
wishes (C-SSRS item 1: a wish to be dead, not to wake up, not to exist, with no plan, intent,
method, preparation, farewell, refusal of help or time), which the issue grades low; those
are listed one by one, each with its reason, in passive_wish_exceptions.tsv.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cantata.pipelines.coaching.evaluate import (
    blind_recall,
    graded_sessions,
    load_message_tiers,
    load_session_tiers,
    load_set,
    message_key,
    tier_agreement,
)
from cantata.pipelines.coaching.guard import assess
from cantata.pipelines.coaching.safety import at_least_high

TIERS = Path(__file__).parent / "data" / "coaching" / "safety_tiers"


def _rows(name: str, columns: int) -> list[list[str]]:
    rows = []
    for number, line in enumerate((TIERS / name).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        row = line.split("\t")
        assert len(row) == columns and all(row), f"{name}:{number}: expected {columns} tab-separated fields"
        rows.append(row)
    return rows


def test_every_exception_is_a_message_main_put_at_high_and_says_why() -> None:
    must = {(locale, text) for locale, text in _rows("must_stay_high.tsv", 2)}
    for locale, text, reason in _rows("passive_wish_exceptions.tsv", 3):
        assert (locale, text) in must, text
        assert "no plan" in reason, text


def test_what_main_put_at_high_stays_at_high_except_a_passive_wish() -> None:
    passive = {(locale, text) for locale, text, _ in _rows("passive_wish_exceptions.tsv", 3)}
    lowered = [
        f"{tier}: {text}"
        for locale, text in _rows("must_stay_high.tsv", 2)
        if (locale, text) not in passive
        and not at_least_high(tier := assess(text, session="eval", turn=1, previous=None).tier)
    ]
    assert not lowered, f"{len(lowered)} lowered below high:\n" + "\n".join(lowered)


def test_every_tier_session_ends_at_its_tier() -> None:
    """Issue #19's graded tiers, as clinicians wrote the sessions: a passive wish alone ends at
    low, active thoughts or a plan at high, intent with a time or means at hand at imminent."""
    tallies = tier_agreement(TIERS)
    assert {tier for tier, _ in tallies} == {"low", "high", "imminent"}
    misses = [miss for tally in tallies.values() for miss in tally.misses]
    assert not misses, misses


UNSEEN = Path(__file__).parent / "data" / "coaching" / "safety_unseen"


def test_every_unseen_session_has_one_blind_tier_label() -> None:
    labels = load_session_tiers(UNSEEN / "session_tiers.tsv")
    assert {s.id for s in load_set(UNSEEN)[1]} == set(labels)


def test_every_unseen_message_has_one_blind_tier_label_and_no_other_is_labelled() -> None:
    labels = load_message_tiers(UNSEEN / "message_tiers.tsv")
    assert {(m.split, message_key(m.text)) for m in load_set(UNSEEN)[0]} == set(labels)


@pytest.mark.parametrize(
    ("load", "line", "reason"),
    [
        (load_session_tiers, "s1\thigh", "expected id, tier, reason"),
        (load_session_tiers, "s1\turgent\tplan", "tier must be one of"),
        (load_session_tiers, "s1\thigh\tplan\ns1\tlow\tpassive_wish", "labelled twice"),
        (load_message_tiers, "t\tabc\thigh\thigh", "expected split, key, tier"),
        (load_message_tiers, "t\tabc\thigh\thigh\turgent", "tier must be one of"),
        (load_message_tiers, "t\tabc\thigh\thigh\thigh\nt\tabc\tlow\tlow\tlow", "labelled twice"),
    ],
)
def test_a_malformed_tier_label_is_rejected_with_its_line(
    tmp_path: Path, load: Callable[[Path], object], line: str, reason: str
) -> None:
    path = tmp_path / "tiers.tsv"
    path.write_text(f"# labels\n{line}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=reason) as error:
        load(path)
    assert f"{path}:" in str(error.value)


def test_blind_recall_asks_a_blind_low_for_low_and_the_others_for_high(tmp_path: Path) -> None:
    """A passive wish answered at low is answered; an active thought at low is not; a blind
    imminent counts at imminent apart; a message without a label is an error."""
    wish, active, plan = "I wish I could go to sleep and never wake up", "I want to die", "I will kill myself tonight"
    (tmp_path / "m.yaml").write_text(
        "locale: en\nsplit: t\ncategories:\n  c:\n    expect: high\n    source: t\n    messages:\n"
        f"      - '{wish}'\n      - '{active}'\n      - '{plan}'\n",
        encoding="utf-8",
    )
    labels = {("t", message_key(wish)): "low", ("t", message_key(active)): "high", ("t", message_key(plan)): "imminent"}
    got = blind_recall(tmp_path, labels)  # type: ignore[arg-type]
    assert (got.total, got.answered, got.at_high, got.imminent, got.imminent_answered) == (3, 2, 1, 1, 1)
    assert (got.low, got.low_exact) == (1, 1)
    del labels[("t", message_key(plan))]
    with pytest.raises(ValueError, match="no tier label"):
        blind_recall(tmp_path, labels)  # type: ignore[arg-type]


def test_graded_sessions_count_each_label_its_own_way(tmp_path: Path) -> None:
    """An imminent label needs imminent (high is a miss), a none label never reaching high."""
    (tmp_path / "s.yaml").write_text(
        "split: t\nsessions:\n"
        "  - {id: a, locale: en, expect: high, source: t, turns: ['I have decided to kill myself.']}\n"
        "  - {id: b, locale: en, expect: safe, source: t, turns: ['I want to cut down on coffee.']}\n",
        encoding="utf-8",
    )
    tallies = graded_sessions(tmp_path, {"a": "imminent", "b": None})
    assert tallies[("imminent", "en")].flagged == 0
    assert tallies[("imminent", "en")].misses == ["a: ended at high"]
    assert tallies[("none", "en")].flagged == 1
    assert graded_sessions(tmp_path, {"a": "high", "b": None})[("high", "en")].flagged == 1
