"""Compaction: when a session outgrows its briefing budget, older turns are folded into a
running summary, after the turn is delivered and off the user's critical path.

The next turn's briefing then carries the summary plus the turns after it, so every
agent still sees the whole conversation within the budget, and the briefing stays
byte-identical for all agents of that turn.

A summary is what every later turn remembers of the folded ones, so it quotes the person
only with words they wrote: a sentence holding a quotation that no message of the session
read here holds (cantata/quotes.py) is left out, and the drop is logged with its reason.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from contextlib import aclosing

from cantata import killpoints
from cantata.backends.base import CompletionRequest, Message
from cantata.errors import BackendError, get_logger
from cantata.loader import Pipeline
from cantata.pool import Pool
from cantata.prompts import Briefing, build_briefing
from cantata.quotes import quotations, quote_problem
from cantata.store import PastTurn, SessionRow, Store

# Compact when the recent turns fill more than half the budget (the new message, memory
# and the preamble need the rest), down to a quarter, so it does not happen every turn.
COMPACT_ABOVE = 0.5
KEEP_BELOW = 0.25
SUMMARY_TOKENS = 200
LOWEST_RANK = 1_000_000  # after every agent of every turn on a shared instance
_SENTENCE = re.compile(r"[^.!?…]+(?:[.!?…]+|$)\s*")

log = get_logger(__name__)


def may_need_compaction(briefing: Briefing | None, reply: str, budget: int) -> bool:
    """Whether the session could now be over the threshold, from the turn's own briefing:
    if that briefing plus this turn's reply is within it, the turns are too (the briefing
    holds them and more), and compaction need not read the session at all. The reply is
    counted in bytes, never fewer than its tokens, so no tokenizer runs on the loop."""
    if briefing is None:
        return False  # no model agent: nothing is briefed, nothing to compact
    return briefing.dropped_turns > 0 or briefing.tokens + len(reply.encode()) > budget * COMPACT_ABOVE


async def compact_session(store: Store, pool: Pool, pipeline: Pipeline, session: SessionRow) -> bool:
    """Fold the oldest turns into the summary if the session needs it; True if it did."""
    model_agents = [a for a in pipeline.spec.agents if not a.is_function]
    if not model_agents:
        return False
    instance = pool.instance_for(model_agents[0].model)
    count = instance.backend.count_tokens
    # Together, the two reads cross to the store and back once; the summary covers turns up
    # to `upto`, and the newest turns are the ones after it.
    (summary, upto), recent = await asyncio.gather(
        store.session_summary(session.id), store.recent_turns(session.id, before_turn=2**62)
    )
    turns = [turn for turn in recent if turn.number > upto]
    budget = pipeline.spec.budget

    def size(kept: list[PastTurn]) -> int:
        return build_briefing(
            preamble="", memory={}, summary=summary, past_turns=kept, message="", budget=2**31, count=count
        ).tokens

    def turns_to_fold() -> int:
        if len(turns) < 2 or size(turns) <= budget * COMPACT_ABOVE:
            return 0
        fold = 1
        while fold < len(turns) - 1 and size(turns[fold:]) > budget * KEEP_BELOW:
            fold += 1
        return fold

    # A real tokenizer runs off the event loop, like the model; a rough count need not.
    fold = await asyncio.to_thread(turns_to_fold) if instance.backend.slow_count else turns_to_fold()
    if not fold:
        return False
    folded = turns[:fold]
    transcript = "\n".join(
        f"[turn {t.number}] User: {t.user_message}" + (f"\n[turn {t.number}] Reply: {t.reply}" if t.reply else "")
        for t in folded
    )
    request = CompletionRequest(
        messages=[
            Message("system", "You keep a running summary of a conversation, for the assistants who continue it."),
            Message(
                "user",
                (f"Summary so far:\n{summary}\n\n" if summary else "")
                + f"New turns:\n{transcript}\n\nWrite the updated summary in at most 120 words: "
                "the person's goals, what they said they would do, what happened, and any risk mentioned.",
            ),
        ],
        max_tokens=SUMMARY_TOKENS,
        temperature=0.2,
        priority=LOWEST_RANK,
        agent="compaction",
    )
    # Of replicas, the least loaded healthy one: the summary shares no prefix worth following.
    route = pool.route_for(model_agents[0].model, session=None, turn=None)
    server = route.next() if route is not None else instance
    try:
        async with server.slot(LOWEST_RANK):
            async with aclosing(server.backend.complete(request)) as stream:
                text = "".join([chunk.text async for chunk in stream]).strip()
    except BackendError:
        return False  # the briefing's own cut still keeps turns within budget
    text, dropped = without_invented_quotes(text, [t.user_message for t in recent])
    for reason in dropped:
        log.warning("compaction of session %s left out a sentence of its summary: a quotation %s", session.id, reason)
    if not text:
        return False
    killpoints.reached("compaction")
    await store.set_summary(session.id, text, folded[-1].number)
    return True


def without_invented_quotes(summary: str, messages: Sequence[str]) -> tuple[str, list[str]]:
    """(the summary without the sentences that quote words none of `messages` holds, why
    each quotation was dropped). The reasons never repeat the quotation."""
    sentences = [m.span() for m in _SENTENCE.finditer(summary)]
    cut: set[int] = set()
    reasons: list[str] = []
    for found in quotations(summary):
        if any(quote_problem(found.text, message) is None for message in messages):
            continue
        reasons.append("is in no message of the session" if messages else "has no message of the session to quote")
        cut |= {i for i, (start, end) in enumerate(sentences) if start < found.end and found.start < end}
    if not cut:
        return summary, reasons
    kept = "".join(summary[start:end] for i, (start, end) in enumerate(sentences) if i not in cut)
    return kept.strip(), reasons
