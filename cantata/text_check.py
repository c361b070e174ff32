"""The runtime's own check of a text reply, and what of the reply may stream before it.

A text reply (an agent with no output model) is checked once it has ended: the prompt's
headings it opens with are removed (a heading later in the reply has already ended it, at
a stop sequence: prompts.SCAFFOLD_STOPS), and a sentence it repeats is cut to its first
occurrence (repetition.py says why a repair and not a regeneration). Each cut is a note
for the agent's `quality`, so a repaired reply never passes for the model's own.

While the reply streams, `StreamGate` releases only what the check will keep, so a reader
of the live stream (the early reply) never sees text that the delivered reply then lacks.
"""

from __future__ import annotations

from cantata.prompts import SCAFFOLD_STOPS
from cantata.repetition import RepeatGate, find_repetition

# The fixed words of each heading ("## Your role" of "## Your role: coach"); its whole line goes.
_OPENINGS = tuple(stop.lstrip("\n") for stop in SCAFFOLD_STOPS)


def _opening(text: str, *, ended: bool) -> tuple[list[str], int | None]:
    """The heading lines `text` opens with, and where its body begins after them; None
    while the reply so far might still open with a heading (its first line is unwritten)."""
    headings: list[str] = []
    at = len(text) - len(text.lstrip())
    while True:
        rest = text[at:]
        if rest.startswith(_OPENINGS):
            newline = rest.find("\n")
            if newline == -1:
                if not ended:
                    return headings, None
                headings.append(rest.strip())
                return headings, len(text)
            headings.append(rest[:newline].strip())
            at += newline + 1
            at = len(text) - len(text[at:].lstrip())
        elif not ended and any(heading.startswith(rest) for heading in _OPENINGS):
            return headings, None
        else:
            return headings, at


def check_text(text: str) -> tuple[str, list[str]]:
    """The reply as kept, and a note for each cut."""
    headings, start = _opening(text, ended=True)
    assert start is not None  # decided once the reply has ended
    notes = [f"opened with the prompt's heading {heading!r}: removed" for heading in headings]
    body = text[start:]
    repeated = find_repetition(body)
    if repeated is not None:
        body = body[: repeated.cut_at]
        excerpt = repeated.sentence if len(repeated.sentence) <= 60 else repeated.sentence[:59] + "…"
        notes.append(f"repeated one sentence {repeated.count} times ({excerpt!r}): cut to its first occurrence")
    return body.strip(), notes


class StreamGate:
    """Feed a text reply's pieces as they come; what `feed` and then `flush` return is,
    piece after piece, exactly what `check_text` keeps."""

    def __init__(self) -> None:
        self.text = ""
        self._body: RepeatGate | None = None  # once the opening is decided

    def feed(self, piece: str) -> str:
        self.text += piece
        if self._body is not None:
            return self._body.feed(piece)
        return self._open(ended=False)

    def flush(self) -> str:
        opened = self._open(ended=True) if self._body is None else ""
        assert self._body is not None
        return opened + self._body.flush()

    def _open(self, *, ended: bool) -> str:
        _, start = _opening(self.text, ended=ended)
        if start is None:
            return ""
        self._body = RepeatGate()
        return self._body.feed(self.text[start:])
