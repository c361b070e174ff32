"""The one check of a quotation of the person (cantata/quotes.py): what it forgives (case,
Unicode forms, whitespace, the kind of quotation mark and apostrophe, punctuation at the
ends, one ellipsis between two long parts) and what it does not."""

from __future__ import annotations

import pytest

from cantata import Quotation, quotations, quote_marks_removed, quote_problem

MESSAGE = "I keep saying I\u2019ll go to the gym every morning,  but I end up scrolling until nine. I hate that."
NOT_IN = "is not in the message of the turn it cites"


@pytest.mark.parametrize(
    "quote",
    [
        "I'll go to the gym every morning",  # a straight apostrophe for the message's curly one
        "i keep saying i\u2019ll go",  # case
        "every morning, but I end up",  # the message's double space, as one
        "\u201cscrolling until nine.\u201d",  # quotation marks and punctuation at the ends
        "...I end up scrolling until nine",  # an ellipsis marking where it starts
        "I keep saying \u2026 I end up scrolling",  # one ellipsis, two parts of three words or more
        "I keep saying ... I hate that",
        "hate",
    ],
)
def test_the_persons_words_however_typed_pass(quote: str) -> None:
    assert quote_problem(quote, MESSAGE) is None


@pytest.mark.parametrize(
    ("quote", "reason"),
    [
        ("I am a failure", NOT_IN),
        ("I'll go to the gym every evening", NOT_IN),  # one word changed
        ("scrolling until nine I hate that", NOT_IN),  # inner punctuation dropped
        ("gym every morn", NOT_IN),  # part of a word
        ("eep saying", NOT_IN),
        ("I hate that ... I keep saying", NOT_IN),  # the parts out of order
        ("I ... end up", "an ellipsis may join only two parts of 3 words or more"),  # stitched from short parts
        (
            "I keep saying ... every morning, but ... I hate that",
            "an ellipsis may join only two parts of 3 words or more",
        ),
        (" ... ", "quotes no words"),
    ],
)
def test_anything_else_is_not_a_quote_and_the_reason_does_not_repeat_it(quote: str, reason: str) -> None:
    assert quote_problem(quote, MESSAGE) == reason


def test_a_quote_citing_a_turn_without_a_message_is_not_kept() -> None:
    assert quote_problem("hello", None) == "cites a turn that has no message of the person"


def test_accents_are_not_forgiven_but_unicode_forms_are() -> None:
    said = "J'ai d\u00e9cid\u00e9 de courir."
    assert quote_problem("ai de\u0301cide\u0301 de courir", said) is None  # decomposed accents
    assert quote_problem("ai decide de courir", said) == NOT_IN


def test_quotations_of_a_text_and_their_marks_removed() -> None:
    text = "You said \u201cI end up scrolling\u201d, \u00ab je cours \u00bb and \"twice\"; it's 'not' one."
    assert [q.text for q in quotations(text)] == ["I end up scrolling", " je cours ", "twice"]
    first = quotations(text)[0]
    assert first == Quotation(9, 29, "I end up scrolling") and text[first.start : first.end].startswith("\u201c")
    assert quote_marks_removed(text) == "You said I end up scrolling, je cours and twice; it's 'not' one."
