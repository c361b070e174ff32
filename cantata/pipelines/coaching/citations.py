"""Where the coaching agents quote the person, and what their checks keep of it.

Every quotation goes through `cantata.quote_problem`, against the stored message of the
turn it cites; what it does not pass is dropped, with the reason recorded and never its
text:

- shadow's evidence cites a turn of the session (`evidence_turn`, 0 for the new message):
  checked against that turn's message, read from the store (`compose_shadow`);
- a description (shadow's goals and commitment, persona's recurring goal and growth edge)
  paraphrases the person and cites the entry's own turn: a quotation in it must be words
  of this turn's message, and then loses its marks (a description does not quote), or the
  description is dropped (`checked_description`);
- a reply (coach, synth) answers this turn's message and may quote that message only: a
  reply quoting anything else is rejected like any reply that breaks a rule
  (`reply_quote_problems`), and a composed one, which quotes the message, is sent instead.
"""

from __future__ import annotations

from cantata import quotations, quote_marks_removed, quote_problem
from cantata.pipelines.coaching.models import DroppedQuote


def checked_description(text: str, message: str, *, field: str, turn: int) -> tuple[str, DroppedQuote | None]:
    """(the description to keep, the drop to record): its quotations are words of this
    turn's `message`, without their marks; else it is dropped ("", and why)."""
    for found in quotations(text):
        problem = quote_problem(found.text, message)
        if problem is not None:
            return "", DroppedQuote(field=field, turn=turn, reason=f"a quotation in it {problem}")
    return quote_marks_removed(text), None


def reply_quote_problems(reply: str, message: str) -> list[str]:
    """Why a reply must not be sent for its quotations: each must be words of this turn's
    message. The reasons are stored with the rejected reply: they never repeat the quote."""
    problems = dict.fromkeys(p for q in quotations(reply) if (p := quote_problem(q.text, message)) is not None)
    return [f"quotes the person with words they did not write: a quotation {p}" for p in problems]
