"""Word gates (rules.gate_of) and the index that finds a sentence's rules by them (rules.GateIndex):
a gate must hold a word of every match, or the guard would never search a sentence that warrants
it; and it should hold few enough words that most sentences skip the rule."""

from __future__ import annotations

import re

import pytest

from cantata.pipelines.coaching.guard import RULE_INDEX, RULES
from cantata.pipelines.coaching.rules import gate_of, sentence_words
from cantata.pipelines.coaching.tolerant import BOUNDARY, tolerant


@pytest.mark.parametrize(
    ("phrase", "matching", "other"),
    [
        # A mandatory group whose options are phrasings of their own, one behind a lookbehind.
        (
            "(?:(?<!his )(?:death|dying) sounds|being dead) (?:good|nice)",
            ["dying sounds good to me", "being dead nice"],
            "a good death scene",
        ),
        # Options at the top level.
        (
            "calm all of a sudden|suddenly (?:calm|at peace)",
            ["he is calm all of a sudden", "suddenly at peace"],
            "calm down",
        ),
        # A group ended by a lookahead, and one by optional words that each start with a space.
        (
            "(?:c'est decide|ma decision est prise)(?= ,| \\.|$)",
            ["bon c'est decide", "ma decision est prise , voila"],
            "c'est fini",
        ),
        (
            "(?:only way|way out)(?: [a-z'-]+){0,3} (?:is )?(?:to )?die",
            ["the only way out is to die", "way out die"],
            "the only way to go",
        ),
        # Optional groups one after another before the word that every match holds.
        (
            "reopen\\w* (?:the |my )?(?:same )?(?:wounds|cuts|scars)",
            ["reopened the same cuts", "reopen scars"],
            "my cuts",
        ),
        # A word at the start of the sentence.
        ("^(?:ok |okay )?(?:goodbye|farewell)$", ["goodbye", "okay farewell"], "ok then"),
    ],
)
def test_a_gate_holds_a_word_of_every_match_and_not_of_other_sentences(
    phrase: str, matching: list[str], other: str
) -> None:
    gate = gate_of((phrase,))
    assert gate is not None, phrase
    pattern = re.compile(rf"\b(?:{phrase})\b")
    for sentence in matching:
        assert pattern.search(sentence), sentence
        assert not gate.isdisjoint(sentence_words(sentence)), (sentence, gate)
    assert pattern.search(other) is None and gate.isdisjoint(sentence_words(other)), (other, gate)


@pytest.mark.parametrize("phrase", ["(?:[a-z]+|me) [a-z]+", "[a-z]+ing", "(?:^|, )(?:\\w+)"])
def test_no_gate_where_a_match_may_hold_no_known_word(phrase: str) -> None:
    assert gate_of((phrase,)) is None


def test_the_index_finds_exactly_the_rules_whose_gate_a_sentence_passes_in_order() -> None:
    sentences = [
        "i want to die",
        "je veux en finir ce soir",
        "i cut myself again last night",
        "we ordered takeaway four nights a week",
        "",
    ]
    for text in sentences:
        for sentence in tolerant(text).split(f" {BOUNDARY} "):
            words = sentence_words(sentence)
            expected = [r for r in RULES if r.gate is None or not r.gate.isdisjoint(words)]
            assert RULE_INDEX.candidates(words) == expected
    # Most rules are skipped on an ordinary sentence.
    assert len(RULE_INDEX.candidates(sentence_words("we ordered takeaway four nights a week"))) < len(RULES) / 10
