"""Quotations of the person: the one check that words attributed to them are words they wrote.

An agent that quotes the person (a piece of evidence citing a turn, a reply saying "you
said “...”", a summary) may invent the quote; stored, an invented quote becomes memory
and puts words in the person's mouth. `quote_problem` is the check every such quote goes
through, against the stored message of the turn it cites. What it forgives, and nothing
else, is how the same words are typed:

- case, and Unicode forms (NFKC: "…" is "...", a no-break space a space);
- runs of whitespace;
- the kind of quotation mark and apostrophe (’ ‘ ʼ ` as ', “ ” „ « » as ");
- punctuation and spaces at the two ends of the quote ("tired." quotes "tired,").

The quote must then be a run of whole words of the message ("fail" does not quote
"failure"). One ellipsis may join two parts of at least MIN_PART_WORDS words each, found
in that order in the message: a quote that skips a clause is still the person's words,
while short parts stitched together ("I ... am ... a failure") could say what they never
said. Accents, inner punctuation and spelling are not forgiven: a quote that changes them
is not a copy.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

MIN_PART_WORDS = 3  # of each part of a quote joined by an ellipsis

_MARKS = str.maketrans(dict.fromkeys("\u2019\u2018\u02bc`", "'") | dict.fromkeys("\u201c\u201d\u201e\u00ab\u00bb", '"'))
_ELLIPSIS = re.compile(r"\s*(?:\.{3,}|\[\.{3}\]|\(\.{3}\))\s*")
# A quotation in free text: “...”, « ... », "..." (single quotes are apostrophes too often
# to tell apart, and are not read as quotations).
_QUOTATION = re.compile(r"“([^“”]+)”|«([^«»]+)»|\"([^\"\n]+)\"|„([^„“”]+)[“”]")


class Quotation(NamedTuple):
    """A quoted span of a text: where it stands (the marks included) and what it quotes."""

    start: int
    end: int
    text: str


def normalise(text: str) -> str:
    """Text as quotes are compared: NFKC, one kind of quotation mark and apostrophe, case
    folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).translate(_MARKS).casefold().split())


def _trimmed(text: str) -> str:
    """Without the punctuation and spaces at its two ends."""
    start, end = 0, len(text)
    while start < end and _loose(text[start]):
        start += 1
    while end > start and _loose(text[end - 1]):
        end -= 1
    return text[start:end]


def _loose(char: str) -> bool:
    return char.isspace() or unicodedata.category(char)[0] == "P"


def _word_edge(text: str, at: int) -> bool:
    """Whether position `at` of `text` is not inside a word."""
    return at <= 0 or at >= len(text) or not (text[at - 1].isalnum() and text[at].isalnum())


def _find_words(part: str, message: str, start: int) -> int | None:
    """The end of the first run of whole words of `message` equal to `part`, from `start`."""
    at = message.find(part, start)
    while at != -1:
        end = at + len(part)
        if _word_edge(message, at) and _word_edge(message, end):
            return end
        at = message.find(part, at + 1)
    return None


def quote_problem(quote: str, message: str | None) -> str | None:
    """Why `quote` is not the person's words in `message`, the stored message of the turn it
    cites (None: there is no such turn); None when it is. The reason never repeats the quote."""
    if message is None:
        return "cites a turn that has no message of the person"
    parts = [p for p in (_trimmed(p) for p in _ELLIPSIS.split(normalise(quote))) if p]
    if not parts:
        return "quotes no words"
    if len(parts) > 2 or (len(parts) == 2 and min(len(p.split()) for p in parts) < MIN_PART_WORDS):
        return f"an ellipsis may join only two parts of {MIN_PART_WORDS} words or more"
    haystack, at = normalise(message), 0
    for part in parts:
        end = _find_words(part, haystack, at)
        if end is None:
            return "is not in the message of the turn it cites"
        at = end
    return None


def quotations(text: str) -> list[Quotation]:
    """The quoted spans of a free text (a reply, a summary, a description), in order."""
    return [
        Quotation(m.start(), m.end(), next(g for g in m.groups() if g is not None)) for m in _QUOTATION.finditer(text)
    ]


def quote_marks_removed(text: str) -> str:
    """The text with its quotations' marks taken out, their words left in place."""
    for found in reversed(quotations(text)):
        text = text[: found.start] + found.text.strip() + text[found.end :]
    return text
