"""Conversations replayed through the coaching pipeline on the real embedded model
(SmolLM2-135M): three users, five turns each, one drifting into a crisis."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from cantata.bundled import load as load_bundled
from cantata.config import DEFAULT_CONFIG
from cantata.pipelines.coaching.models import TRAITS
from cantata.pipelines.coaching.reply_checks import detect_blocked
from cantata.pipelines.coaching.safety import tier_rank
from cantata.runtime import Cantata
from cantata.turn import TurnResult

pytestmark = pytest.mark.embedded

CONVERSATIONS: dict[str, list[dict[str, Any]]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "coaching" / "conversations.yaml").read_text(encoding="utf-8")
)
CRISIS_LINES = ("988", "3114")


def outputs(result: TurnResult) -> dict[str, Any]:
    return {a.name: a.output for a in result.agents}


async def replay(user: str, home: Path) -> list[TurnResult]:
    app = Cantata(DEFAULT_CONFIG, home=home)
    pipeline = load_bundled("coaching")
    results: list[TurnResult] = []
    session: str | None = None
    try:
        for turn in CONVERSATIONS[user]:
            if turn.get("session") == "new":
                session = None
            result = await app.run_turn(pipeline, turn["message"], user=user, session_id=session)
            session = result.session
            results.append(result)
    finally:
        await app.close()
    return results


def check_every_turn(results: list[TurnResult]) -> None:
    for n, result in enumerate(results, start=1):
        out = outputs(result)
        assert result.status != "failed", (n, [(a.name, a.error) for a in result.agents])
        assert result.early is not None and result.early.agent == "coach"
        assert result.final is not None and result.early.at_s < result.final.at_s
        # One embedded instance serves all six model agents: the coach still goes first.
        started = {a.name: a.started_s for a in result.agents if a.started_s is not None}
        assert started["coach"] <= min(t for name, t in started.items() if name not in ("guard", "coach"))
        assert out["stability"] is not None and out["guard"] is not None
        assert tier_rank(out["stability"]["tier"]) >= tier_rank(out["guard"]["tier"])
        assert detect_blocked(result.final.text, out["stability"]["blocked"]) == []
        if out["persona"] is not None:
            assert all(1 <= out["persona"][t] <= 5 for t in TRAITS)
            assert 0 <= out["persona"]["follow_through_pct"] <= 100


@pytest.mark.parametrize("user", ["ana", "ben"])
async def test_ordinary_conversations(user: str, tmp_path: Path) -> None:
    results = await replay(user, tmp_path)
    check_every_turn(results)
    for result in results:
        assert outputs(result)["stability"]["tier"] in ("none", "low"), "no crisis where there is none"
        assert not any(line in result.final.text for line in CRISIS_LINES)  # type: ignore[union-attr]
    # Later turns of a session reuse the briefing llama.cpp already holds.
    for result in results[1:]:
        if results.index(result) != 3 or user != "ana":
            assert sum(a.cached_tokens for a in result.agents) > 0
    if user == "ana":
        first_session, second_session = results[0].session, results[3].session
        assert second_session != first_session
        shadow, persona = outputs(results[3])["shadow"], outputs(results[3])["persona"]
        # The new session's analysts continue from the first session's memory, and say so.
        assert shadow["builds_on"][0].startswith(f"{first_session}:")
        assert persona["builds_on"][0].startswith(f"{first_session}:")


async def test_conversation_drifting_into_crisis(tmp_path: Path) -> None:
    results = await replay("chloe", tmp_path)
    check_every_turn(results)
    for turn, result in zip(CONVERSATIONS["chloe"], results, strict=True):
        stability = outputs(result)["stability"]
        if turn.get("crisis"):
            assert stability["tier"] in ("high", "imminent")
            assert any(line in result.final.text for line in CRISIS_LINES)  # type: ignore[union-attr]
            assert result.early is not None and any(line in result.early.text for line in CRISIS_LINES)
    # "I was joking" does not clear the flag within the session.
    assert outputs(results[-1])["guard"]["carried"]
