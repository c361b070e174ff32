"""Compaction: old turns fold into a running summary after delivery, off the critical path."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from cantata.compaction import without_invented_quotes
from cantata.config import load_config
from cantata.loader import load_pipeline
from cantata.prompts import build_briefing
from cantata.runtime import Cantata
from tests.helpers.pipelines import WriteFile, scripted_config

PIPELINE = """
name: chatty
budget: 300
agents:
  - name: reply
    prompt: Answer.
    deliver: final
"""


WALKED = "I walked to work and thought about it. "


async def long_session(app: Cantata, write: WriteFile) -> tuple[str, list[bool]]:
    """Eight long turns of one session, each settled; (the session, whether compaction was
    still running when each turn was delivered)."""
    pipeline = load_pipeline(write("p.yaml", PIPELINE))
    session = None
    compaction_pending_at_delivery = []
    for n in range(8):
        result = await app.run_turn(pipeline, f"turn {n}: " + WALKED * 8, session_id=session)
        session = result.session
        # The reply is delivered while compaction may still be running in the background.
        compaction_pending_at_delivery.append(bool(app._background))
        await app.settle()
    assert session is not None
    return session, compaction_pending_at_delivery


async def test_long_session_is_summarised_between_turns(write: WriteFile, home: Path) -> None:
    app = Cantata(load_config(scripted_config(write, fake={"latency_s": 0.05})), home=home)
    pipeline = load_pipeline(write("p.yaml", PIPELINE))
    try:
        session, compaction_pending_at_delivery = await long_session(app, write)
        summary, upto = await app.store.session_summary(session)
        last = await app.run_turn(pipeline, "and now?", session_id=session)
        # The briefing the next turn gets: the summary, then every turn after it, none dropped.
        briefing = build_briefing(
            preamble="",
            memory={},
            summary=summary,
            past_turns=await app.store.recent_turns(session, 2**62, after_number=upto),
            message="next",
            budget=pipeline.spec.budget,
            count=app.pool.instance_for("default").backend.count_tokens,
        )
    finally:
        await app.close()
    assert summary.startswith("[compaction] scripted reply") and 2 <= upto < 8
    assert "## Summary of the conversation so far" in briefing.text
    assert briefing.dropped_turns == 0 and f"[turn {upto + 1}] User" in briefing.text
    assert all(compaction_pending_at_delivery[3:]), "compaction runs after delivery, not before it"
    assert last.status == "ok"


async def test_short_session_is_left_alone(write: WriteFile, home: Path) -> None:
    app = Cantata(load_config(scripted_config(write, fake={})), home=home)
    pipeline = load_pipeline(write("p.yaml", PIPELINE))
    try:
        result = await app.run_turn(pipeline, "hello")
        await app.run_turn(pipeline, "again", session_id=result.session)
        await app.settle()
        assert await app.store.session_summary(result.session) == ("", 0)
    finally:
        await app.close()


async def test_a_summary_keeps_no_sentence_quoting_words_the_person_never_wrote(
    write: WriteFile, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The summariser quotes the person twice: once with their words (another wording of
    # the marks and case), once with a self-judgement they never wrote.
    summary = (
        "The person walks to work. They said \u201ci walked to work and thought about it\u201d. "
        'They called themselves "a failure at everything", twice. They keep walking.'
    )
    replies = write("replies.yaml", f"compaction: {json.dumps(summary)}\n")
    app = Cantata(load_config(scripted_config(write, fake={"replies": str(replies)})), home=home)
    try:
        with caplog.at_level(logging.WARNING, logger="cantata.compaction"):
            session, _ = await long_session(app, write)
        stored, upto = await app.store.session_summary(session)
    finally:
        await app.close()
    assert upto > 0
    assert stored == (
        "The person walks to work. They said \u201ci walked to work and thought about it\u201d. They keep walking."
    )
    assert "a quotation is in no message of the session" in caplog.text and "failure" not in caplog.text


def test_an_invented_quotation_takes_every_sentence_it_spans_with_it() -> None:
    text = 'It rained. She wrote "I quit. For good." on Monday. She ran.'
    assert without_invented_quotes(text, ["I quit. For good, I mean it."]) == (text, [])
    assert without_invented_quotes(text, ["I never quit."]) == (
        "It rained. She ran.",
        ["is in no message of the session"],
    )
