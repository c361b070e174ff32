"""Replies composed from the blackboard: reflect the message, follow the plan's move and
voice, never repeat themselves in a session or the early reply, English and French."""

from __future__ import annotations

import pytest

from cantata.pipelines.coaching.compose import Turn, Voice, early_reply, merged_reply
from cantata.pipelines.coaching.conflicts import Board, resolve
from cantata.pipelines.coaching.guard import assess, detect_locale
from cantata.pipelines.coaching.mi import advice_problem, on_topic
from cantata.pipelines.coaching.miti import count, sentences
from cantata.pipelines.coaching.models import Persona, Plasticity
from cantata.pipelines.coaching.reply_checks import detect_blocked
from cantata.pipelines.coaching.roles import compose_stability
from cantata.pipelines.coaching.safety import UNIVERSAL_BLOCKED

SESSION_EN = [
    "I keep saying I'll go to the gym every morning but end up scrolling until nine.",
    "Yesterday I went, but today I was tired and stayed in bed.",
    "I think I'm scared that if I miss one day, the whole thing falls apart.",
    "My sister goes running and she makes it look easy.",
    "Maybe I could go in the evening instead, after work.",
]
SESSION_FR = [
    "Je veux arrêter de fumer mais je craque toujours après le déjeuner.",
    "Mon médecin m'a dit que c'était important, mais je n'arrive pas à m'y mettre.",
    "Hier j'ai fumé seulement trois cigarettes, c'est déjà mieux.",
    "Le soir avec les amis, c'est le plus dur.",
    "J'aimerais tenir une semaine entière sans fumer.",
]


@pytest.mark.parametrize(("messages", "locale"), [(SESSION_EN, "en"), (SESSION_FR, "fr")])
def test_a_sessions_composed_replies_are_distinct_on_topic_and_in_its_language(
    messages: list[str], locale: str
) -> None:
    merged: list[str] = []
    for n, message in enumerate(messages, start=1):
        turn = Turn(message=message, locale=locale, turn=n, session="s1", mi_process="evoking")  # type: ignore[arg-type]
        early = early_reply(turn)
        final = merged_reply(turn, early=early)
        assert on_topic(early, message) and on_topic(final, message), (early, final)
        assert detect_locale(final) in (locale, None) and detect_locale(early) in (locale, None)
        assert not set(sentences(early)) & set(sentences(final)), (early, final)
        assert detect_blocked(final, UNIVERSAL_BLOCKED) == [] and advice_problem(final, "ask_permission") is None
        c = count(final)
        assert c.reflections >= 1 and c.questions == 1, final
        merged.append(final)
    assert len(set(merged)) == len(merged)


def test_the_same_words_on_another_turn_get_another_reply() -> None:
    first = merged_reply(Turn(message=SESSION_EN[0], locale="en", turn=1, session="s"))
    again = merged_reply(Turn(message=SESSION_EN[0], locale="en", turn=2, session="s"))
    assert first != again


def test_planning_asks_permission_before_any_suggestion() -> None:
    for locale, message in (("en", SESSION_EN[4]), ("fr", SESSION_FR[4])):
        reply = merged_reply(Turn(message=message, locale=locale, mi_process="planning"))  # type: ignore[arg-type]
        assert advice_problem(reply + " You should try it.", "ask_permission") is None, reply


def test_the_voice_sets_length_and_directness() -> None:
    base = Turn(message=SESSION_EN[2], locale="en", pattern="all_or_nothing", mi_process="evoking")
    brief = merged_reply(Turn(**{**vars(base), "voice": Voice("brief", "gentle")}))
    detailed = merged_reply(Turn(**{**vars(base), "voice": Voice("detailed", "gentle")}))
    direct = merged_reply(Turn(**{**vars(base), "voice": Voice("detailed", "direct")}))
    assert len(sentences(brief)) < len(sentences(detailed))
    assert sentences(direct)[-1] != sentences(detailed)[-1]


def test_an_affirmation_when_shadow_sees_a_kept_commitment() -> None:
    plain = merged_reply(Turn(message=SESSION_FR[2], locale="fr"))
    kept = merged_reply(Turn(message=SESSION_FR[2], locale="fr", kept_commitment=True))
    assert len(sentences(kept)) == len(sentences(plain)) + 1


def _plan_voice(message: str, persona: Persona | None, plasticity: Plasticity | None) -> tuple[str, str]:
    guard = assess(message, session="s", turn=1, previous=None)
    stability = compose_stability(guard, None)
    assert stability.tier is not None
    board = Board(
        guard=guard, stability=stability, tier=stability.tier, persona=persona, plasticity=plasticity, message=message
    )
    plan = resolve(board).plan
    return plan.length, plan.directness


PERSONA = {"openness": 3, "conscientiousness": 3, "extraversion": 3, "agreeableness": 3, "neuroticism": 2}


def test_the_plan_reads_the_voice_from_plasticity_and_persona() -> None:
    direct = Plasticity(
        mi_process="focusing",
        grow_phase="goal",
        directiveness="directing",
        advice_mode="ask_permission",
        tone=["direct"],
    )
    calm = Persona(**PERSONA, follow_through_pct=50, recurring_goal="", growth_edge="")  # type: ignore[arg-type]
    anxious = calm.model_copy(update={"neuroticism": 5})
    long = SESSION_EN[0] + " " + SESSION_EN[2]
    assert _plan_voice(long, calm, direct) == ("detailed", "direct")
    assert _plan_voice(long, anxious, direct) == ("detailed", "gentle")
    assert _plan_voice("Still scrolling.", calm, direct)[0] == "brief"
