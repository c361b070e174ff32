"""The counting rules of the coaching-quality benchmark, on labelled examples."""

from __future__ import annotations

import pytest

from cantata.pipelines.coaching.miti import count, is_question, is_reflection

# (sentence, is it a reflection)
LABELLED_REFLECTIONS = [
    ("You want to go to the gym, and the phone wins most mornings.", True),
    ("It sounds like the evenings are the hardest part.", True),
    ("So you never start the report until the night before.", True),
    ("Part of you wants this, and part of you is tired.", True),
    ("Vous voulez arrêter, et le déjeuner reste un moment difficile.", True),
    ("On dirait que vous êtes épuisé en fin de journée.", True),
    ("You should put the phone in another room.", False),
    ("You need to sleep more.", False),
    ("What would help you?", False),
    ("Thank you for sharing this.", False),
    ("Vous devriez essayer de courir le matin.", False),
    ("Great job!", False),
    ("Mornings at the gym matter to you.", True),
    ("That's a great question, and I'm here to help you answer it.", False),
    ("Merci de m'avoir écrit.", False),
]


@pytest.mark.parametrize(("sentence", "label"), LABELLED_REFLECTIONS)
def test_reflections_are_told_from_advice_questions_and_praise(sentence: str, label: bool) -> None:
    assert is_reflection(sentence) is label


@pytest.mark.parametrize(
    ("sentence", "label"),
    [("What matters most to you?", True), ("Qu'est-ce qui compte ?", True), ("Tell me more.", False)],
)
def test_a_question_ends_with_a_question_mark(sentence: str, label: bool) -> None:
    assert is_question(sentence) is label


def test_counts_of_a_reply() -> None:
    reply = "It sounds like mornings are hard. You want more energy. What would be different if you slept more?"
    c = count(reply)
    assert (c.reflections, c.questions, c.advice_without_permission) == (2, 1, 0)


@pytest.mark.parametrize(
    ("reply", "advice"),
    [
        ("You should try going to bed earlier.", 1),
        ("Would you like an idea? You could try going to bed earlier.", 0),
        ("Je vous conseille de marcher après le repas.", 1),
        ("Puis-je vous proposer une idée ? Je vous conseille de marcher après le repas.", 0),
        ("What would help you most?", 0),
    ],
)
def test_advice_counts_only_without_permission(reply: str, advice: int) -> None:
    assert count(reply).advice_without_permission == advice


@pytest.mark.parametrize(
    ("reply", "invented"),
    [
        ("Last time you said the evenings were hard. What changed?", 1),
        ("La dernière fois, vous parliez du déjeuner.", 1),
        ("Earlier today you said the evenings were hard.", 0),
        ("You said the evenings were hard.", 0),
    ],
)
def test_references_to_earlier_sessions_count_when_there_are_none(reply: str, invented: int) -> None:
    assert count(reply).earlier_session_references == invented
    assert count(reply, earlier_sessions=True).earlier_session_references == 0
