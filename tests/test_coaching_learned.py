"""The guard's learned signal (cantata/pipelines/coaching/learned.py): what a user relies on.

It may only add to the rules: never lower a tier, never read across a sentence end, never
raise a figure of speech or a habit symptom; it catches an indirect disclosure no rule
matches, and its weak reads of different signs add up in a session. Its weights are data,
retrained by `make safety-model` whenever the labelled set changes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from cantata.errors import CantataError
from cantata.pipelines.coaching import train_learned
from cantata.pipelines.coaching.evaluate import load_set, run_session
from cantata.pipelines.coaching.guard import assess, screen
from cantata.pipelines.coaching.learned import (
    BROAD_FILE,
    OFF,
    RULE_PREFIX,
    WEIGHTS_FILE,
    Model,
    Panel,
    default_model,
    features,
    onto,
    read_model,
)
from cantata.pipelines.coaching.safety import at_least_high, tier_rank
from cantata.pipelines.coaching.tolerant import tolerant

SET = Path(__file__).parent / "data" / "coaching" / "safety"


def _learned_hits(text: str) -> list[str]:
    return [h.tier for h in screen(text) if h.rule.startswith(RULE_PREFIX)]


def test_the_committed_weights_were_trained_on_the_labelled_set_as_it_is() -> None:
    """Editing the set without retraining leaves the weights stale: run `make safety-model`."""
    assert default_model().data_sha256 == train_learned.data_sha256(SET), "stale weights: run `make safety-model`"
    broad = read_model(BROAD_FILE).data_sha256
    assert broad == train_learned.data_sha256(SET, broad=True), "stale weights: run `make safety-model`"


def test_the_weights_files_stay_small() -> None:
    # 450 KB: 112,739 features (2026-12-05) take 245 KB since the keys are stored as deflated gaps;
    # the broad member's 174,169 take 351 KB (2026-12-07).
    for path in (WEIGHTS_FILE, BROAD_FILE):
        assert path.stat().st_size < 450_000, path


def _constant(read: float, strong: float, weak: float, explicit: float) -> Model:
    """A model that reads every sentence at `read`."""
    return Model(weights={0: 0.0}, bias=math.log(read / (1 - read)), strong=strong, weak=weak, explicit=explicit)


def test_a_member_s_read_is_mapped_onto_the_panel_s_scale_by_their_thresholds() -> None:
    first = _constant(0.1, strong=0.9, weak=0.7, explicit=0.8)
    other = _constant(0.1, strong=0.6, weak=0.2, explicit=0.4)
    for at, expected in ((0.2, 0.7), (0.4, 0.8), (0.6, 0.9), (0.0, 0.0), (1.0, 1.0)):
        assert onto(at, other, first) == pytest.approx(expected)
    assert 0.7 < onto(0.3, other, first) < 0.8  # between two thresholds: between theirs
    # The second member reads 0.5 (between its explicit and strong), the first 0.1: the panel
    # reads the second's, on the first's scale.
    panel = Panel.of(first, _constant(0.5, strong=0.6, weak=0.2, explicit=0.4))
    assert panel.score("any sentence at all") == pytest.approx(0.85)
    assert panel.read(frozenset(), 5) == pytest.approx(0.85)
    assert panel.strong == first.strong and panel.weak == first.weak and panel.explicit == first.explicit


def test_a_panel_member_only_ever_raises_a_read() -> None:
    first = read_model(WEIGHTS_FILE)
    panel = default_model()
    assert isinstance(panel, Panel) and panel.others
    messages, _ = load_set(SET)
    for message in messages[::7]:
        for sentence in message.text.split("."):
            assert panel.score(sentence) >= first.score(sentence), sentence


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


# The example before ("I keep thinking about taking all my tablets at once") is now high by the
# rules too (a thought and a lethal means); this one is a blind writer's (dev23, 2026-12-06):
# how to end it, said as which way would hurt least, which no phrase rule reads.
@pytest.mark.parametrize(
    "text", ["in those hours I am thinking how I can finish everything, which way will be less pain"]
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


@pytest.mark.parametrize(
    "text",
    [
        # Issue #19: sentences the learned signal read as strong though they name no risk.
        "I keep telling myself I will cook at home, but I order takeaway four nights a week.",
        "Vous avez des enfants ?",
    ],
)
def test_the_learned_signal_alone_is_never_high_on_a_sentence_that_names_no_risk(text: str) -> None:
    verdict = assess(text, session="s", turn=1, previous=None)
    assert verdict.tier == "none", [h.model_dump() for h in verdict.hits]
    assert all(h.tier == "none" for h in verdict.hits if h.rule.startswith(RULE_PREFIX))


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


def test_weak_learned_reads_alone_never_add_up_to_high() -> None:
    """Hopelessness, then two remarks no lexicon names: no rule sees anything and the learned
    signal reads each as weak; learned reads never accumulate on their own (issue #19), so
    the session stays below high and no check-in is asked for."""
    turns = [
        "I want to get back to the gym",
        "lately what's the point of trying",
        "I don't care much what happens to me these days",
        "I gave my sister my spare keys and told her where everything is",
    ]
    rules = run_session(turns, model=OFF)
    verdicts = run_session(turns)
    assert all(v.tier == "none" for v in rules)
    assert all(v.tier == "none" for v in verdicts), [v.basis for v in verdicts]


@pytest.mark.parametrize(
    "turns",
    [
        # One sign, said twice in other words and once again: counted once.
        [
            "lately what's the point of trying",
            "honestly what's the point of any of it",
            "lately what's the point of trying",
        ],
        # Remarks no lexicon names: learned reads of them are never counted, never high.
        [
            "I don't care much what happens to me these days",
            "it's getting harder to keep pretending",
            "there's not much keeping me going",
        ],
    ],
)
def test_weak_learned_reads_of_one_sign_do_not_add_up(turns: list[str]) -> None:
    verdicts = run_session(turns)
    assert all(h.weight <= 1 for v in verdicts for h in v.hits if h.rule.startswith(RULE_PREFIX))
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
    none = tmp_path / "no-conversations"  # the benign long conversations make it minutes long
    options = ["--data", str(data), "--conversations", str(none)]
    assert train_learned.main([*options, "--out", str(first)]) == 0
    assert train_learned.main([*options, "--out", str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()
    model = read_model(first)
    assert model.data_sha256 == train_learned.data_sha256(data, none) and model.weights
    out = capsys.readouterr().out
    assert "leave-one-split-out" in out and all(f"dev1{n}" in out for n in (2, 3, 4))
    assert train_learned.main(["--data", str(tmp_path / "missing")]) == 2
    # The broad member reads the batches kept out too: a hash of other data.
    (data / "dev17_en.yaml").write_bytes((SET / "dev17_en.yaml").read_bytes())
    broad = tmp_path / "broad.json"
    assert train_learned.main([*options, "--broad", "--no-table", "--out", str(broad)]) == 0
    assert "leave-one-split-out" not in capsys.readouterr().out
    assert read_model(broad).data_sha256 == train_learned.data_sha256(data, none, broad=True)
    assert read_model(broad).data_sha256 != train_learned.data_sha256(data, none)


# A model that reads every sentence as strong: what the guard lets a strong read do.
_ALWAYS_STRONG = Model(weights={0: 0.0}, bias=10.0, strong=0.9, weak=0.5)


@pytest.mark.parametrize(
    ("text", "tier"),
    [
        # Names no risk, no sign of the rules: the learned signal alone sets nothing.
        ("I went for a walk after dinner and it helped", "none"),
        # The evidence score's weak "burden" (low) is a word, not a rule's sign: the read stays weak.
        ("the cost of cigarettes is a burden on my budget", "low"),
        # A risk concept said without naming death (lexicon/<locale>/risk_concepts.yaml).
        ("honestly I feel like such a burden to my family", "high"),
        ("c'est sans issue pour moi", "high"),
        # A warning sign a phrase rule reads in the message: two signals, not the learned one alone.
        ("je n'en peux plus de tout ça", "high"),
        # A denial is not read.
        ("I'm not suicidal, just tired of the cravings", "low"),
    ],
)
def test_a_strong_learned_read_is_high_only_beside_a_named_risk_or_a_rule_s_sign(text: str, tier: str) -> None:
    assert assess(text, session="s", turn=1, previous=None, model=_ALWAYS_STRONG).tier == tier


def test_explicit_is_what_strong_leaves_of_the_budget() -> None:
    # Four items, half may reach a threshold: the first reaches `strong` on its own, so one more
    # may be read at `explicit`, the highest of the others' second scores.
    first, second = [0.95, 0.5, 0.5, 0.5], [0.0, 0.9, 0.8, 0.6]
    explicit = train_learned.beside(first, second, 0.9, 0.5)
    assert 0.8 < explicit <= 0.9
    assert sum(a >= 0.9 or b >= explicit for a, b in zip(first, second, strict=True)) == 2
    # Nothing left once `strong` spent the budget: `explicit` is `strong`.
    assert train_learned.beside([0.95, 0.95, 0.5, 0.5], second, 0.9, 0.25) == 0.9


def _learned_read(text: str, model: Model) -> str:
    """The learned hit's read ("strong", "weak", "strong, names no risk"), from its note."""
    note = next(h.note for h in screen(text, model) if h.rule.startswith(RULE_PREFIX))
    return note.split("(")[1].split(")")[0]


def test_explicit_reads_the_sentence_that_names_death_itself() -> None:
    # Every sentence read at 0.73: under `strong`, over `explicit`.
    middling = Model(weights={0: 0.0}, bias=1.0, strong=0.9, weak=0.5, explicit=0.7)
    assert _learned_read("I keep thinking about death these days", middling) == "strong"
    assert _learned_read("honestly I feel like such a burden to my family", middling) == "weak"
    # A lethal means named is as narrow as death (evidence concept lethal_means); pills in
    # the kitchen are not (taken with breakfast they are a routine, not read: guard._ordinary_talk).
    assert _learned_read("the rope is still in the garage these days", middling) == "strong"
    assert _learned_read("I keep my pills in the kitchen these days", middling) == "weak"
    # The sentence read at 0.99 names no death; the one that does ("dead") is read low: no strong
    # read, though a model reading both at 0.73 reads the message strong.
    death = "my father is dead from a stroke"
    swore = Model(
        weights=dict.fromkeys(features("i swore i would never be like him") - features(death), 40.0),
        bias=-3.0,
        strong=1.5,  # never: only `explicit` may make a read strong here
        weak=0.5,
        explicit=0.7,
    )
    assert swore.score(death) < 0.7 < swore.score("i swore i would never be like him")
    assert _learned_read("My father is dead from a stroke. I swore I would never be like him", swore) != "strong"
    assert _learned_read("My father is dead from a stroke. I swore I would never be like him", middling) == "strong"
