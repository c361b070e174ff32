"""The guard's learned signal (cantata/pipelines/coaching/learned.py): what a user relies on.

It may only add to the rules: never lower a tier, never read across a sentence end, never
raise a figure of speech or a habit symptom; it catches an indirect disclosure no rule
matches, and its weak reads of different signs add up in a session. Its weights are data,
retrained by `make safety-model` whenever the labelled set changes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cantata.errors import CantataError
from cantata.pipelines.coaching import train_learned
from cantata.pipelines.coaching.evaluate import load_set, run_session
from cantata.pipelines.coaching.guard import assess, screen
from cantata.pipelines.coaching.learned import OFF, RULE_PREFIX, WEIGHTS_FILE, default_model, read_model
from cantata.pipelines.coaching.safety import at_least_high, tier_rank
from cantata.pipelines.coaching.tolerant import tolerant

SET = Path(__file__).parent / "data" / "coaching" / "safety"


def _learned_hits(text: str) -> list[str]:
    return [h.tier for h in screen(text) if h.rule.startswith(RULE_PREFIX)]


def test_the_committed_weights_were_trained_on_the_labelled_set_as_it_is() -> None:
    """Editing the set without retraining leaves the weights stale: run `make safety-model`."""
    assert default_model().data_sha256 == train_learned.data_sha256(SET), "stale weights: run `make safety-model`"


def test_the_weights_file_stays_small() -> None:
    assert WEIGHTS_FILE.stat().st_size < 400_000


@pytest.mark.parametrize(
    "text",
    [
        "this commute is killing me",
        "I could murder a burger right now",
        "smoking will be the death of me, my dad says",
        "my boss is going to kill me if I'm late again",
        "I nearly died laughing at that video",
        "ce boulot va me tuer, je te jure",
        "I get a bit breathless on the stairs since I started smoking again",
        "my chest feels tight after a cigarette in the morning",
        "j'ai le cœur qui s'emballe quand je fume trop de clopes",
        "I had a heart attack five years ago and the doctor says I must quit",
    ],
)
def test_a_figure_of_speech_or_a_habit_symptom_is_not_raised_by_the_learned_signal(text: str) -> None:
    assert "high" not in _learned_hits(text)
    assert not at_least_high(assess(text, session="s", turn=1, previous=None).tier)


@pytest.mark.parametrize(
    "text",
    [
        "I keep thinking it would be easier not to exist for a bit",
        "I keep wondering if anyone would even notice if I stopped showing up to my own life",
        "j'ai commencé à dire au revoir à mes amis sans qu'ils le sachent",
    ],
)
def test_an_indirect_disclosure_no_rule_matches_is_raised_by_the_learned_signal(text: str) -> None:
    rules = assess(text, session="s", turn=1, previous=None, model=OFF)
    assert not at_least_high(rules.tier)
    verdict = assess(text, session="s", turn=1, previous=None)
    assert at_least_high(verdict.tier)
    learned = [h for h in verdict.hits if h.rule.startswith(RULE_PREFIX)]
    assert learned and learned[0].tier == "high"
    assert learned[0].note.startswith("learned") and learned[0].note.endswith(tolerant(text))
    assert any(s.rule.startswith(RULE_PREFIX) for s in verdict.basis)


def test_the_learned_signal_never_lowers_a_tier() -> None:
    """On every message and every session turn of the labelled set."""
    messages, sessions = load_set(SET)
    for message in messages:
        alone = assess(message.text, session="s", turn=1, previous=None, model=OFF)
        both = assess(message.text, session="s", turn=1, previous=None)
        assert tier_rank(both.tier) >= tier_rank(alone.tier), message.text
        assert {h.rule for h in alone.hits} <= {h.rule for h in both.hits}
    for session in sessions:
        rules = run_session(session.turns, session.id, model=OFF)
        both = run_session(session.turns, session.id)
        for a, b in zip(rules, both, strict=True):
            assert tier_rank(b.tier) >= tier_rank(a.tier), session.id


def test_weak_learned_reads_of_different_signs_add_up_to_high() -> None:
    """Hopelessness, then two remarks no lexicon names: no rule sees anything, the learned
    signal reads each as weak, and together they are high."""
    turns = [
        "I want to get back to the gym",
        "lately what's the point of trying",
        "I don't care much what happens to me these days",
        "I gave my sister my spare keys and told her where everything is",
    ]
    rules = run_session(turns, model=OFF)
    verdicts = run_session(turns)
    assert all(v.tier == "none" for v in rules)
    assert [at_least_high(v.tier) for v in verdicts] == [False, False, False, True]
    basis = verdicts[-1].basis
    assert all(s.rule.startswith(RULE_PREFIX) and s.tier == "none" and s.weight == 1 for s in basis)
    assert {s.turn for s in basis} == {2, 3, 4}
    # Each read alone set no tier: no check-in about safety for one remark.
    assert [v.tier for v in verdicts[:3]] == ["none", "none", "none"]


@pytest.mark.parametrize(
    "turns",
    [
        # One sign, said twice in other words and once again: counted once.
        [
            "lately what's the point of trying",
            "honestly what's the point of any of it",
            "lately what's the point of trying",
        ],
        # Remarks no lexicon names: two count at most, never high without a named sign.
        [
            "I don't care much what happens to me these days",
            "it's getting harder to keep pretending",
            "there's not much keeping me going",
        ],
    ],
)
def test_weak_learned_reads_of_one_sign_do_not_add_up(turns: list[str]) -> None:
    verdicts = run_session(turns)
    assert all(any(h.rule.startswith(RULE_PREFIX) and h.weight == 1 for h in v.hits) for v in verdicts)
    assert not at_least_high(verdicts[-1].tier)


def test_a_learned_hit_names_itself_and_the_sentence_it_read() -> None:
    verdict = assess(
        "ok so the run was fine. I keep thinking it would be easier not to exist for a bit",
        session="s",
        turn=1,
        previous=None,
    )
    hit = next(h for h in verdict.hits if h.rule.startswith(RULE_PREFIX))
    assert hit.note.endswith(": " + tolerant("I keep thinking it would be easier not to exist for a bit")), hit.note
    assert "run was fine" not in hit.note


def test_a_malformed_weights_file_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "weights.json"
    bad.write_text(json.dumps({"features_version": 1, "bits": 20, "count": 3}), encoding="utf-8")
    with pytest.raises(CantataError, match="weights.json"):
        read_model(bad)


def test_training_is_reproducible_and_prints_the_leave_one_split_out_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "set"
    data.mkdir()
    for name in ("dev12_en.yaml", "dev13_en.yaml", "dev14_en.yaml"):
        (data / name).write_bytes((SET / name).read_bytes())
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert train_learned.main(["--data", str(data), "--out", str(first)]) == 0
    assert train_learned.main(["--data", str(data), "--out", str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()
    model = read_model(first)
    assert model.data_sha256 == train_learned.data_sha256(data) and model.weights
    out = capsys.readouterr().out
    assert "leave-one-split-out" in out and all(f"dev1{n}" in out for n in (2, 3, 4))
    assert train_learned.main(["--data", str(tmp_path / "missing")]) == 2
