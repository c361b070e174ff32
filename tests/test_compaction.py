"""Compaction: old turns fold into a running summary after delivery, off the critical path."""

from __future__ import annotations

from pathlib import Path

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


async def test_long_session_is_summarised_between_turns(write: WriteFile, home: Path) -> None:
    app = Cantata(load_config(scripted_config(write, fake={"latency_s": 0.05})), home=home)
    pipeline = load_pipeline(write("p.yaml", PIPELINE))
    session = None
    compaction_pending_at_delivery = []
    try:
        for n in range(8):
            result = await app.run_turn(
                pipeline, f"turn {n}: " + "I walked to work and thought about it. " * 8, session_id=session
            )
            session = result.session
            # The reply is delivered while compaction may still be running in the background.
            compaction_pending_at_delivery.append(bool(app._background))
            await app.settle()
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
