"""Coaching rules in code: conflict rules and their precedence, the checks of coach, shadow,
stability and synth (reject, regenerate once, then the safe template), and the templates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cantata.context import CheckContext, FunctionContext
from cantata.errors import Rejected
from cantata.pipelines.coaching.conflicts import PRECEDENCE, RULES, Board, conflicts, resolve, winner
from cantata.pipelines.coaching.guard import assess, detect_locale
from cantata.pipelines.coaching.mi import advice_problem, double_sided_reflection, followup_reply, on_topic
from cantata.pipelines.coaching.models import (
    Coach,
    Commitment,
    FollowThrough,
    Guard,
    Persona,
    Plasticity,
    Shadow,
    Stability,
    Synth,
)
from cantata.pipelines.coaching.replies import correction_sentence, low_template, safety_followup, safety_template
from cantata.pipelines.coaching.reply_checks import detect_blocked
from cantata.pipelines.coaching.roles import (
    PERSONA_EVERY,
    coach_check,
    coach_shortcut,
    compose_coach,
    compose_shadow,
    compose_stability,
    early_reply_problems,
    persona_shortcut,
    shadow_check,
    stability_check,
)
from cantata.pipelines.coaching.safety import (
    BLOCKED_ACTIONS,
    CATEGORIES,
    LOCALES,
    RESOURCES_FILE,
    UNIVERSAL_BLOCKED,
    Locale,
    Tier,
    load_safety,
    read_safety,
    required_for,
)
from cantata.pipelines.coaching.synth_check import (
    Policy,
    available_entries,
    check_reply,
    compose_synth,
    policy_from_inputs,
    synth_check,
    synth_shortcut,
)

GYM = "I keep saying I'll go to the gym every morning but end up scrolling until nine."
CRISIS_EN = "I want to kill myself."
CRISIS_FR = "Je veux me suicider."


def flagged(message: str, session: str = "s1", turn: int = 1) -> Guard:
    return assess(message, session=session, turn=turn, previous=None)


def ctx(message: str = GYM, **fields: Any) -> FunctionContext:
    base: dict[str, Any] = {"user": "u", "session": "s1", "turn": 1, "inputs": {}, "missing": [], "memory": {}}
    return FunctionContext(message=message, **{**base, **fields})


def check_ctx(output: Any, *, message: str = GYM, last_chance: bool = False, **fields: Any) -> CheckContext:
    base: dict[str, Any] = {"user": "u", "session": "s1", "turn": 1, "inputs": {}, "missing": [], "memory": {}}
    return CheckContext(message=message, output=output, last_chance=last_chance, **{**base, **fields})


def shadow(stage: str = "contemplation", kept: int = 0, total: int = 0) -> Shadow:
    return Shadow.model_validate(
        {
            "stated_goal": "go to the gym every morning",
            "revealed_priority": "scrolling until nine",
            "stage": stage,
            "pattern": "intention_action_gap",
            "follow_through": {"kept": kept, "total": total},
        }
    )


def persona(pct: int = 50, neuroticism: int = 2) -> Persona:
    return Persona.model_validate(
        {
            "openness": 3,
            "conscientiousness": 2,
            "extraversion": 3,
            "agreeableness": 4,
            "neuroticism": neuroticism,
            "follow_through_pct": pct,
            "recurring_goal": "exercise",
            "growth_edge": "starting small",
        }
    )


def plasticity(**overrides: Any) -> Plasticity:
    base = {
        "mi_process": "evoking",
        "grow_phase": "reality",
        "directiveness": "guiding",
        "advice_mode": "ask_permission",
        "tone": ["warm"],
    }
    return Plasticity.model_validate({**base, **overrides})


def board(message: str = GYM, **parts: Any) -> Board:
    g = flagged(message)
    st = parts.pop("stability", None) or compose_stability(g, None)
    return Board(guard=g, stability=st, tier=st.tier or "none", **parts)


# -- precedence and conflict rules -------------------------------------------------------------


def test_precedence_is_declared_safety_first() -> None:
    assert PRECEDENCE[:5] == ("guard", "stability", "shadow", "persona", "plasticity")
    assert winner(("plasticity", "stability")) == "stability"
    assert winner(("persona", "shadow")) == "shadow"
    assert all(rule.winner == winner(rule.parties) for rule in RULES)
    assert {r.name for r in RULES} >= {"early_reply_blocked_action", "follow_through_gap", "directive_at_high_tier"}


def test_early_reply_with_a_blocked_action_must_be_corrected() -> None:
    g = flagged("I want to lose weight fast")
    # Stability's model read sees an eating risk the rules did not: restriction advice is blocked.
    read = Stability(domain="eating", severity=3, detectability=2, reversibility=2)
    st = compose_stability(g, read)
    assert "restriction_advice" in st.blocked
    early = Coach(reply="You want this badly. Try skipping breakfast for a week?", tier="none")
    result = resolve(Board(guard=g, stability=st, tier=st.tier or "none", coach=early))
    found = [c for c in result.conflicts if c.rule == "early_reply_blocked_action"]
    assert found and found[0].winner == "stability"
    assert result.plan.correction == correction_sentence(["restriction_advice"], "en")
    # The correction itself does not read as the blocked action.
    assert detect_blocked(result.plan.correction, st.blocked) == []


def test_follow_through_gap_over_30_points_resolves_to_shadow() -> None:
    tracked = shadow(kept=0, total=2)  # probability 0.25 -> 25%
    result = resolve(board(shadow=tracked, persona=persona(pct=80)))
    gap = [c for c in result.conflicts if c.rule == "follow_through_gap"]
    assert gap and gap[0].winner == "shadow"
    assert result.plan.follow_through_pct == 25
    # 30 points apart is not more than 30: no conflict, persona's estimate stands.
    result = resolve(board(shadow=tracked, persona=persona(pct=55)))
    assert not [c for c in result.conflicts if c.rule == "follow_through_gap"]
    assert result.plan.follow_through_pct == 55


def test_follow_through_gap_needs_a_known_outcome() -> None:
    """With no kept or missed commitment, shadow's 50% is a prior: nothing to disagree with."""
    result = resolve(board(shadow=shadow(total=0), persona=persona(pct=5)))
    assert not result.conflicts and result.plan.follow_through_pct == 5


def test_directive_strategy_at_high_tier_is_overruled_by_stability() -> None:
    b = board(CRISIS_EN, plasticity=plasticity(directiveness="directing", mi_process="planning", tone=["direct"]))
    result = resolve(b)
    found = [c for c in result.conflicts if c.rule == "directive_at_high_tier"]
    assert found and found[0].winner == "stability" and found[0].parties == ["stability", "plasticity"]
    plan = result.plan
    assert (plan.directiveness, plan.advice_mode, plan.mi_process) == ("following", "none", "engaging")
    assert plan.tone == ["calm", "warm"] and plan.crisis_resource is not None


def test_no_directive_conflict_below_high_tier() -> None:
    result = resolve(board(plasticity=plasticity(directiveness="directing")))
    assert not [c for c in result.conflicts if c.rule == "directive_at_high_tier"]
    assert result.plan.directiveness == "directing"


def test_higher_precedence_has_the_last_word_on_a_shared_setting() -> None:
    """stage_vs_strategy (won by shadow) and directive_at_high_tier (won by stability) both set
    mi_process; stability's resolution is applied last, whatever the order of the rules."""
    b = board(CRISIS_EN, shadow=shadow(stage="precontemplation"), plasticity=plasticity(mi_process="planning"))
    for order in (RULES, tuple(reversed(RULES))):
        result = resolve(b, order)
        assert {c.rule for c in result.conflicts} >= {"stage_vs_strategy", "directive_at_high_tier"}
        assert result.plan.mi_process == "engaging" and result.plan.directiveness == "following"
    # Without the high tier, shadow's resolution stands.
    result = resolve(board(shadow=shadow(stage="precontemplation"), plasticity=plasticity(mi_process="planning")))
    assert result.plan.mi_process == "evoking" and result.plan.grow_phase == "reality"


def test_tone_conflict_persona_over_plasticity() -> None:
    result = resolve(board(persona=persona(neuroticism=5), plasticity=plasticity(tone=["direct"])))
    found = [c for c in result.conflicts if c.rule == "tone_vs_persona"]
    assert found and found[0].winner == "persona" and result.plan.tone == ["warm", "calm"]


def test_tier_floor_conflict_when_the_model_reads_less_than_the_rules() -> None:
    g = flagged(CRISIS_EN)
    st = compose_stability(g, Stability(domain="wellbeing", severity=1, detectability=1, reversibility=1))
    result = resolve(Board(guard=g, stability=st, tier=st.tier or "none"))
    found = [c for c in result.conflicts if c.rule == "tier_floor"]
    assert found and found[0].winner == "guard" and result.plan.tier == "high"


def test_conflicts_function_records_each_conflict_and_hands_the_plan_on() -> None:
    g = flagged(CRISIS_EN)
    st = compose_stability(g, None)
    inputs = {
        "guard": g.model_dump(mode="json"),
        "stability": st.model_dump(mode="json"),
        "plasticity": plasticity(directiveness="directing").model_dump(mode="json"),
    }
    c = ctx(CRISIS_EN, inputs=inputs, missing=["shadow", "persona", "coach"])
    out = conflicts(c)
    assert [x["rule"] for x in c.conflicts] == [x.rule for x in out.conflicts] == ["directive_at_high_tier"]
    assert set(c.conflicts[0]) == {"rule", "parties", "winner", "detail", "resolution"}
    assert out.plan.missing == ["coach", "persona", "shadow"] and out.plan.tier == "high"
    assert out.plan.must_avoid == st.blocked and out.precedence == list(PRECEDENCE)


def test_conflicts_without_stability_fall_back_to_the_guard() -> None:
    c = ctx(CRISIS_FR, inputs={"guard": flagged(CRISIS_FR).model_dump(mode="json")}, missing=["stability"])
    plan = conflicts(c).plan
    assert plan.tier == "high" and plan.crisis_resource is not None and "3114" in plan.crisis_resource.markers
    assert set(UNIVERSAL_BLOCKED) <= set(plan.must_avoid)


def labelled_examples() -> dict[str, Board]:
    """Boards on which the rules must find a conflict, labelled with what makes them conflict.
    A rule is tested here when it fires on one of them: a new rule needs an example."""
    crisis = flagged(CRISIS_EN)
    misread = compose_stability(crisis, Stability(domain="wellbeing", severity=1, detectability=1, reversibility=1))
    dieting = flagged("I want to lose weight fast")
    eating = compose_stability(dieting, Stability(domain="eating", severity=3, detectability=2, reversibility=2))
    return {
        "the model reads less risk than the rules": Board(guard=crisis, stability=misread, tier=misread.tier or "none"),
        "the early reply advises what stability blocks": Board(
            guard=dieting,
            stability=eating,
            tier=eating.tier or "none",
            coach=Coach(reply="Try skipping breakfast for a week?", tier="none"),
        ),
        "a directive strategy in a crisis": board(CRISIS_EN, plasticity=plasticity(directiveness="directing")),
        "persona's estimate far from shadow's count": board(shadow=shadow(kept=0, total=2), persona=persona(pct=80)),
        "a plan for someone not ready for one": board(
            shadow=shadow(stage="precontemplation"), plasticity=plasticity(mi_process="planning")
        ),
        "a direct tone for an anxious person": board(
            persona=persona(neuroticism=5), plasticity=plasticity(tone=["direct"])
        ),
    }


@pytest.fixture(scope="module")
def fired_on_examples() -> set[str]:
    return {c.rule for example in labelled_examples().values() for c in resolve(example).conflicts}


@pytest.mark.parametrize("rule", [r.name for r in RULES])
def test_every_rule_fires_on_a_labelled_example(rule: str, fired_on_examples: set[str]) -> None:
    assert rule in fired_on_examples, f"no example in labelled_examples() makes the rule {rule} fire"


# -- the blocked-action detector ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("It sounds like you have depression.", "diagnosis"),
        ("Vous souffrez d'une dépression.", "diagnosis"),
        ("Try taking melatonin before bed.", "medication_advice"),
        ("Take 50 mg and see how you feel.", "medication_advice"),
        ("Prenez un somnifère ce soir.", "medication_advice"),
        ("Here is how to overdose.", "method_information"),
        ("Try skipping breakfast for a week.", "restriction_advice"),
        ("Mangez moins le soir.", "restriction_advice"),
        ("Promise me you won't hurt yourself.", "no_suicide_contract"),
        ("Promettez-moi de ne pas vous faire de mal.", "no_suicide_contract"),
        ("I'm a real person, not a bot.", "claiming_to_be_human"),
        ("I'm not a chatbot, I'm your coach.", "claiming_to_be_human"),
        ("Je suis une vraie personne.", "claiming_to_be_human"),
        ("Let's end this conversation here.", "ending_conversation"),
        ("Terminons cette conversation.", "ending_conversation"),
    ],
)
def test_blocked_actions_are_detected(text: str, action: str) -> None:
    assert action in detect_blocked(text)


@pytest.mark.parametrize(
    "text",
    [
        "You want to go to the gym, and your phone keeps winning. What matters most to you about mornings?",
        "Would you like an idea that has worked for others?",
        "I'm not a doctor, and I can't advise on medication; a GP can help with that.",
        "It sounds like you're feeling low. What has the week been like?",
        "Take a short walk after lunch, if you want to.",
    ],
)
def test_ordinary_coaching_text_is_not_a_blocked_action(text: str) -> None:
    assert detect_blocked(text) == []


# -- templates -----------------------------------------------------------------------------------


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("category", [*CATEGORIES, None])
@pytest.mark.parametrize("tier", ["high", "imminent"])
def test_every_safe_template_passes_the_check(locale: Locale, category: str | None, tier: Tier) -> None:
    resource = load_safety().resource(locale, category, tier)
    early = safety_template(locale, category, tier, resource)
    followup = safety_followup(locale, category, tier, resource)
    # The merged reply's template says the same things in other words.
    required = tuple(required_for(tier, [category] if category else []))
    policy = Policy(tier, locale, (), resource.text, resource.markers, category, None, (), required=required)
    assert check_reply(followup, policy, early=early) == []
    for text in (early, followup):
        check_one_safe_template(text, locale, category, tier, resource)


def check_one_safe_template(text: str, locale: Locale, category: str | None, tier: Tier, resource: Any) -> None:
    policy = Policy(
        tier=tier,
        locale=locale,
        blocked=tuple(UNIVERSAL_BLOCKED) + ("restriction_advice",),
        resource_text=resource.text,
        markers=resource.markers,
        category=category,
        correction=None,
        sources=(),
        required=tuple(required_for(tier, [category] if category else [])),
        advice_mode="none",
    )
    assert check_reply(text, policy) == []
    assert all(m in text for m in resource.markers)
    assert detect_locale(text) == locale
    if tier == "imminent":
        emergency = load_safety().resources[locale]["emergency"]
        assert all(m in text for m in emergency.markers)


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("category", [*CATEGORIES, None])
def test_every_low_template_passes_the_check(locale: Locale, category: str | None) -> None:
    resource = load_safety().resource(locale, category, "low")
    required = required_for("low", [category] if category else [])
    policy = Policy("low", locale, tuple(UNIVERSAL_BLOCKED), None, (), category, None, (), required=tuple(required))
    early, final = low_template(locale, category), low_template(locale, category, resource=resource)
    assert check_reply(early, policy) == [] and detect_locale(early) == locale
    assert check_reply(final, policy, early=early) == [] and detect_locale(final) == locale


def test_resources_file_is_consistent(tmp_path: Path) -> None:
    config = load_safety()
    assert config.model_tier_cap == "low" and config.default_locale == "en"
    assert "988" in config.resource("en", "suicide_self_harm", "high").markers
    assert "3114" in config.resource("fr", None, "high").markers
    assert "3919" in config.resource("fr", "abuse", "high").markers
    bad = tmp_path / "r.yaml"
    bad.write_text("locales:\n  en:\n    default: {text: 'call someone', markers: ['988']}\n")
    with pytest.raises(ValueError, match="every marker must appear in the text"):
        read_safety(bad)


@pytest.mark.parametrize("role", ["coach", "synth"])
def test_whether_a_model_writes_a_reply_below_high_tier_follows_its_size(tmp_path: Path, role: str) -> None:
    config = load_safety()
    assert config.generates(role, "Qwen/Qwen3-30B-A3B") and config.generates(role, "llama-1B")
    assert not config.generates(role, "SmolLM2-135M-Instruct.gguf") and not config.generates(role, None)
    bad = tmp_path / "r.yaml"
    text = RESOURCES_FILE.read_text()
    start = text.index(f"{role}_below_high_tier:")
    bad.write_text(text[:start] + text[start:].replace("default: compose", "default: sometimes", 1))
    with pytest.raises(ValueError, match=f"{role}_below_high_tier"):
        read_safety(bad)


# -- coach: shortcut and check -------------------------------------------------------------------


def test_coach_shortcut_answers_flagged_messages_with_a_template() -> None:
    for message, marker in ((CRISIS_EN, "988"), (CRISIS_FR, "3114")):
        reply = coach_shortcut(ctx(message, inputs={"guard": flagged(message).model_dump(mode="json")}))
        assert reply is not None and reply.source == "safety_template" and marker in reply.reply
        assert "?" in reply.reply  # asks about safety
    low = coach_shortcut(ctx("I'm not suicidal", inputs={"guard": flagged("I'm not suicidal").model_dump()}))
    assert low is not None and low.tier == "low" and "988" not in low.reply
    # Below high tier, a model big enough to write a passing reply writes it...
    guard = {"guard": flagged(GYM).model_dump()}
    assert coach_shortcut(check_ctx(None, inputs=guard, model="Qwen/Qwen3-30B-A3B")) is None
    # ...and for the embedded one (no size in its name) the reply is composed at once.
    composed = coach_shortcut(check_ctx(None, inputs=guard, model="SmolLM2-135M-Instruct-Q4_1.gguf"))
    assert composed is not None and composed.source == "composed" and "?" in composed.reply
    assert early_reply_problems(composed.reply, flagged(GYM), GYM) == []


def test_coach_check_keeps_a_good_draft() -> None:
    draft = {"reflection": "You want mornings at the gym, and the phone wins.", "question": "What would help you?"}
    out = coach_check(check_ctx(draft, inputs={"guard": flagged(GYM).model_dump()}))
    assert out.source == "generated" and out.reply == f"{draft['reflection']} {draft['question']}"


@pytest.mark.parametrize(
    ("reflection", "question", "why"),
    [
        ("You should be able to tell me how you do it.", "What do you do?", "off topic"),
        ("You should take melatonin at night for the gym.", "What do you think about the gym?", "medication"),
        ("You need to put the phone away before the gym.", "What do you think?", "advice without asking"),
        ("Vous voulez aller à la salle le matin.", "Qu'est-ce qui vous retient ?", "written in 'fr'"),
        (
            "You said “I am a failure at the gym”.",
            "What do you think about the gym?",
            "quotes the person with words they did not write",
        ),
    ],
)
def test_coach_check_replaces_a_failing_draft_without_regenerating(reflection: str, question: str, why: str) -> None:
    out = coach_check(
        check_ctx({"reflection": reflection, "question": question}, inputs={"guard": flagged(GYM).model_dump()})
    )
    assert out.source == "composed" and any(why in r for r in out.rejected), out.rejected
    assert out.reply.startswith("You want to go to the gym every morning, and you end up scrolling until nine")


def test_coach_template_for_other_wordings_is_general() -> None:
    out = compose_coach(flagged("Je veux arrêter de fumer"), None, "Je veux arrêter de fumer")
    assert out.source == "composed" and detect_locale(out.reply) == "fr"


# -- shadow: evidence, grounding, commitments ------------------------------------------------------


def draft_shadow(**fields: Any) -> Shadow:
    base = {
        "stated_goal": "go to the gym every morning",
        "revealed_priority": "scrolling on the phone",
        "evidence_turn": 0,
        "evidence_quote": "end up scrolling until nine",
        "commitment": "go to the gym every morning",
        "commitment_status": "missed",
        "stage": "contemplation",
        "pattern": "intention_action_gap",
    }
    return Shadow.model_validate({**base, **fields})


def test_shadow_evidence_is_kept_only_when_its_quote_is_in_the_message_of_the_turn_it_cites() -> None:
    ok = compose_shadow(draft_shadow(), message=GYM, session="s1", turn=3, previous=None)
    assert [(e.turn, e.quote) for e in ok.evidence] == [(3, "end up scrolling until nine")]
    assert ok.dropped_quotes == [] and (ok.evidence_turn, ok.evidence_quote) == (3, "end up scrolling until nine")
    said = {2: "I ran on Monday. Then it rained all week."}
    earlier = compose_shadow(
        draft_shadow(evidence_turn=2, evidence_quote="then it rained all week"),
        message=GYM,
        session="s1",
        turn=3,
        previous=None,
        said=said,
    )
    assert [(e.turn, e.quote) for e in earlier.evidence] == [(2, "then it rained all week")]
    # Words turn 2 never held, or a turn whose message was not read: dropped, and why.
    for quote, known in (("I said so", said), ("then it rained all week", {})):
        out = compose_shadow(
            draft_shadow(evidence_turn=2, evidence_quote=quote),
            message=GYM,
            session="s1",
            turn=3,
            previous=None,
            said=known,
        )
        assert out.evidence == [] and out.evidence_quote == "" and out.evidence_turn == 0
        assert [(d.field, d.turn) for d in out.dropped_quotes] == [("evidence_quote", 2)]
    for invented in (4, 17, -1):
        out = compose_shadow(draft_shadow(evidence_turn=invented), message=GYM, session="s1", turn=3, previous=None)
        assert out.evidence == [] and out.evidence_quote == ""
        assert [d.reason for d in out.dropped_quotes] == [f"cites turn {invented}, which this session does not have"]
    # A "quote" of the new message that is not in it is invented too.
    made_up = compose_shadow(
        draft_shadow(evidence_quote="I hate running"), message=GYM, session="s1", turn=1, previous=None
    )
    assert made_up.evidence == [] and made_up.evidence_quote == ""
    assert [d.reason for d in made_up.dropped_quotes] == ["is not in the message of the turn it cites"]


def test_a_description_keeps_a_quotation_of_the_message_as_plain_words_and_drops_an_invented_one() -> None:
    quoted = compose_shadow(
        draft_shadow(stated_goal="go to the \u201cgym every morning\u201d"),
        message=GYM,
        session="s1",
        turn=1,
        previous=None,
    )
    assert quoted.stated_goal == "go to the gym every morning" and quoted.dropped_quotes == []
    invented = compose_shadow(
        draft_shadow(revealed_priority="feeling \u201cI am a failure\u201d at the gym"),
        message=GYM,
        session="s1",
        turn=1,
        previous=None,
    )
    assert invented.revealed_priority == ""
    assert [(d.field, d.turn, d.reason) for d in invented.dropped_quotes] == [
        ("revealed_priority", 1, "a quotation in it is not in the message of the turn it cites")
    ]


def test_shadow_drops_goals_not_grounded_in_the_messages() -> None:
    out = compose_shadow(
        draft_shadow(stated_goal="precontemplation", revealed_priority="self-criticism", commitment="kept"),
        message=GYM,
        session="s1",
        turn=1,
        previous=None,
    )
    assert (out.stated_goal, out.revealed_priority, out.commitments) == ("", "", [])


def test_shadow_merges_commitments_and_counts_follow_through() -> None:
    first = compose_shadow(draft_shadow(), message=GYM, session="s1", turn=1, previous=None)
    assert first.follow_through == FollowThrough(kept=0, total=1) and first.follow_through.probability == 0.33
    msg = "I went to bed at ten, I kept that one."
    second = compose_shadow(
        draft_shadow(commitment="go to bed at ten", commitment_status="kept", stated_goal="bed at ten"),
        message=msg,
        session="s2",
        turn=1,
        previous=first,
    )
    assert [(c.text, c.status, c.session) for c in second.commitments] == [
        ("go to the gym every morning", "missed", "s1"),
        ("go to bed at ten", "kept", "s2"),
    ]
    assert second.follow_through == FollowThrough(kept=1, total=2) and second.follow_through.probability == 0.5
    # "unknown" this turn does not erase what an earlier turn knew.
    third = compose_shadow(
        draft_shadow(commitment_status="unknown"), message=GYM, session="s2", turn=2, previous=second
    )
    gym = [c for c in third.commitments if c.text.startswith("go to the gym")]
    assert gym[0].status == "missed" and gym[0].turn == 2


async def test_shadow_check_reads_its_own_memory() -> None:
    previous = compose_shadow(draft_shadow(), message=GYM, session="s0", turn=4, previous=None)
    out = await shadow_check(
        check_ctx(
            draft_shadow(commitment="").model_dump(mode="json"), memory={"shadow": previous.model_dump(mode="json")}
        )
    )
    assert out.commitments == previous.commitments and out.session == "s1" and out.turn == 1


# -- stability -------------------------------------------------------------------------------------


def test_stability_tier_is_never_below_guard() -> None:
    for message, tier in ((CRISIS_EN, "high"), ("I'm going to kill myself tonight", "imminent"), (GYM, "none")):
        g = flagged(message)
        st = compose_stability(g, Stability(domain="none", severity=1, detectability=1, reversibility=1))
        assert st.tier == tier and st.guard_tier == g.tier
    with pytest.raises(ValueError, match="below guard"):
        Stability.model_validate({**st.model_dump(), "tier": "none", "guard_tier": "high"})


def test_a_model_read_alone_raises_the_tier_only_to_the_cap() -> None:
    read = Stability(domain="suicide_self_harm", severity=5, detectability=5, reversibility=5)
    st = compose_stability(flagged(GYM), read)
    assert st.product == 125 and st.model_tier == "imminent" and st.tier == "low"
    assert st.crisis_resource is None and st.required == ["acknowledge", "ask_about_safety"]


def test_stability_required_blocked_and_resource_follow_the_tier() -> None:
    st = compose_stability(flagged("I'm going to kill myself tonight"), None)
    assert st.required == ["acknowledge", "ask_about_safety", "crisis_line", "human_support"]
    assert st.crisis_resource is not None and {"988", "911"} <= set(st.crisis_resource.markers)
    assert set(st.blocked) == set(UNIVERSAL_BLOCKED) | {"restriction_advice"}
    calm = compose_stability(flagged(GYM), None)
    assert calm.required == [] and calm.crisis_resource is None and set(calm.blocked) == set(UNIVERSAL_BLOCKED)


def test_stability_screens_shadow_commitments_carried_from_earlier() -> None:
    carried = shadow()
    carried.commitments = [Commitment(text="eat under 600 calories a day", status="kept", turn=2, session="old")]
    st = compose_stability(flagged("I kept my promise this week!"), None, carried)
    assert st.shadow_hits and st.shadow_hits[0].category == "restrictive_eating"
    assert "restriction_advice" in st.blocked and st.tier == "low"


def test_stability_check_uses_guard_and_shadow_inputs() -> None:
    g = flagged(CRISIS_FR)
    out = stability_check(
        check_ctx(
            {"domain": "none", "severity": 1, "detectability": 1, "reversibility": 1},
            message=CRISIS_FR,
            inputs={"guard": g.model_dump(mode="json"), "shadow": shadow().model_dump(mode="json")},
        )
    )
    assert out.tier == "high" and out.locale == "fr" and out.crisis_resource is not None
    assert out.crisis_resource.markers == ["3114"]


# -- synth: the rule check, one regeneration, the safe template -----------------------------------


def synth_inputs(message: str, **extra: Any) -> dict[str, Any]:
    g = flagged(message)
    st = compose_stability(g, None)
    b = Board(guard=g, stability=st, tier=st.tier or "none", message=message, **extra)
    resolution = resolve(b)
    coach = compose_coach(g, None, message)
    return {
        "guard": g.model_dump(mode="json"),
        "coach": coach.model_dump(mode="json"),
        "conflicts": resolution.model_dump(mode="json"),
    }


def synth_draft(reply: str, used: list[str] | None = None) -> dict[str, Any]:
    return {"used": used or ["conflicts"], "reply": reply}


GOOD = "Mornings at the gym matter to you, and the phone is winning right now. What would make the first step easier?"


def test_synth_check_accepts_a_good_reply_and_names_its_entries() -> None:
    out = synth_check(check_ctx(synth_draft(GOOD, ["coach", "conflicts"]), inputs=synth_inputs(GYM)))
    assert out.source == "generated" and out.reply == GOOD
    assert out.used == ["coach", "conflicts", "guard"]
    assert set(out.available or []) == {"guard", "coach", "shadow", "persona", "plasticity", "stability", "conflicts"}


@pytest.mark.parametrize(
    ("message", "reply", "why"),
    [
        (CRISIS_EN, "That sounds so hard. What happened today to make you feel this way?", "crisis resource"),
        (CRISIS_FR, "C'est très dur. Appelez quelqu'un ce soir, d'accord ?", "crisis resource"),
    ],
)
def test_synth_check_rejects_once_then_gives_the_safe_template(message: str, reply: str, why: str) -> None:
    inputs = synth_inputs(message)
    with pytest.raises(Rejected, match=why):
        synth_check(check_ctx(synth_draft(reply), message=message, inputs=inputs))
    final = synth_check(check_ctx(synth_draft(reply), message=message, inputs=inputs, last_chance=True))
    assert final.source == "safety_template" and final.rejected
    policy = policy_from_inputs(inputs)
    assert check_reply(final.reply, policy) == []
    assert all(m in final.reply for m in policy.markers)


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("Mornings at the gym are hard. Try melatonin so you sleep earlier?", "blocked action"),
        ("You should just put the phone in another room before the gym.", "advice"),
        ("The weather is lovely today and birds are singing outside.", "off topic"),
    ],
)
def test_a_failing_draft_below_high_tier_is_replaced_by_a_composed_reply_at_once(reply: str, why: str) -> None:
    inputs = synth_inputs(GYM)
    final = synth_check(check_ctx(synth_draft(reply), message=GYM, inputs=inputs))  # no Rejected: no regeneration
    assert final.source == "composed" and any(why in r for r in final.rejected), final.rejected
    policy = policy_from_inputs(inputs)
    assert check_reply(final.reply, policy, message=GYM, early=inputs["coach"]["reply"]) == []
    assert final.reply != followup_reply("en", policy.mi_process)


def test_a_composed_reply_keeps_a_draft_sentence_that_passes_on_its_own() -> None:
    inputs = synth_inputs(GYM)
    kept = "You want your mornings back from the phone."
    final = synth_check(check_ctx(synth_draft(f"{kept} You should delete the app."), message=GYM, inputs=inputs))
    assert final.source == "composed" and final.reply.startswith(kept)
    assert "delete" not in final.reply


def test_a_near_copy_of_the_early_reply_is_a_repeat() -> None:
    inputs = synth_inputs(CRISIS_FR)
    early = inputs["coach"]["reply"]
    slipped = early.replace("parliez", "parleraient").replace("Merci", "Merci bien")
    with pytest.raises(Rejected, match="repeats the early reply"):
        synth_check(check_ctx(synth_draft(slipped), message=CRISIS_FR, inputs=inputs))
    final = synth_check(check_ctx(synth_draft(slipped), message=CRISIS_FR, inputs=inputs, last_chance=True))
    assert final.source == "safety_template" and "3114" in final.reply and final.reply != early


def test_a_copy_of_the_early_reply_with_something_appended_is_a_repeat() -> None:
    inputs = synth_inputs(GYM)
    early = inputs["coach"]["reply"]
    # Seen on SmolLM2-135M: the early reply, lightly edited, then filler.
    copied = (
        early.replace("You want", "The plan")
        + " That's a great question, and I'm here to help you answer it. I'm not here to judge you."
    )
    final = synth_check(check_ctx(synth_draft(copied), inputs=inputs))
    assert final.source == "composed" and any("repeats the early reply" in r for r in final.rejected)
    assert final.reply != early and "judge" not in final.reply


def test_synth_regeneration_that_does_not_validate_gives_the_template() -> None:
    final = synth_check(check_ctx(None, message=CRISIS_FR, inputs=synth_inputs(CRISIS_FR), last_chance=True))
    assert final.source == "safety_template" and "3114" in final.reply
    assert final.rejected == ["the regenerated reply was not valid"]


def test_a_good_regeneration_is_kept() -> None:
    resource = load_safety().resource("en", "suicide_self_harm", "high")
    reply = f"I'm so sorry it hurts this much. Are you safe right now? {resource.text}"
    out = synth_check(
        check_ctx(synth_draft(reply), message=CRISIS_EN, inputs=synth_inputs(CRISIS_EN), last_chance=True)
    )
    assert out.source == "generated" and "988" in out.reply


def test_synth_rejects_entries_that_do_not_exist() -> None:
    inputs = synth_inputs(GYM)
    resolution = inputs["conflicts"]
    resolution["plan"]["missing"] = ["persona"]
    assert "persona" not in available_entries(inputs)
    # A small model's bookkeeping slip does not cost a good reply: the entry is dropped.
    out = synth_check(check_ctx(synth_draft(GOOD, ["persona", "coach"]), inputs=inputs))
    assert out.source == "generated" and "persona" not in out.used and "coach" in out.used
    # And as stored: an entry that does not exist is a validation error.
    with pytest.raises(ValueError, match="do not exist on the blackboard: persona"):
        Synth.model_validate({"used": ["persona"], "reply": GOOD, "available": ["guard", "conflicts"]})


def test_synth_carries_the_correction_a_conflict_requires() -> None:
    early = Coach(reply="You want to lose weight. Try skipping breakfast?", tier="none")
    g = flagged("I want to lose weight for the summer")
    st = compose_stability(g, Stability(domain="eating", severity=3, detectability=2, reversibility=2))
    resolution = resolve(Board(guard=g, stability=st, tier=st.tier or "none", coach=early))
    inputs = {"guard": g.model_dump(), "coach": early.model_dump(), "conflicts": resolution.model_dump()}
    reply = "Summer feels close and the weight matters to you. What would feel good to change first?"
    out = synth_check(check_ctx(synth_draft(reply), message="I want to lose weight for the summer", inputs=inputs))
    assert resolution.plan.correction is not None and out.reply.startswith(resolution.plan.correction)
    assert detect_blocked(out.reply, st.blocked) == []
    template = synth_check(check_ctx(None, message="I want to lose weight", inputs=inputs, last_chance=True))
    assert template.reply.startswith(resolution.plan.correction)


def test_synth_without_conflicts_falls_back_to_guard_and_stability() -> None:
    inputs = {"guard": flagged(CRISIS_EN).model_dump(mode="json")}
    policy = policy_from_inputs(inputs)
    assert policy.tier == "high" and "988" in policy.markers and policy.sources == ("guard",)
    final = compose_synth(None, policy, available=["guard"], last_chance=True)
    assert final.source == "safety_template" and final.used == ["guard"] and "988" in final.reply


def test_synth_shortcut_follows_the_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = synth_inputs(CRISIS_EN)
    assert synth_shortcut(ctx(CRISIS_EN, inputs=inputs)) is None  # bundled default: generate
    custom = tmp_path / "resources.yaml"
    custom.write_text(
        RESOURCES_FILE.read_text().replace("synth_at_high_tier: generate", "synth_at_high_tier: template")
    )
    monkeypatch.setenv("CANTATA_COACHING_RESOURCES", str(custom))
    out = synth_shortcut(ctx(CRISIS_EN, inputs=inputs))
    assert out is not None and out.source == "safety_template" and "988" in out.reply
    # Below high tier, by the size of the model serving synth (resources.yaml).
    small = synth_shortcut(ctx(GYM, inputs=synth_inputs(GYM)))  # no size known: the default, compose
    assert small is not None and small.source == "composed" and on_topic(small.reply, GYM)
    large = CheckContext(**vars(ctx(GYM, inputs=synth_inputs(GYM))), model="Qwen/Qwen2.5-7B-Instruct")
    assert synth_shortcut(large) is None  # the model writes


# -- motivational-interviewing text rules ------------------------------------------------------------


def test_double_sided_reflection_uses_the_persons_words() -> None:
    assert double_sided_reflection(GYM) == (
        "You want to go to the gym every morning, and you end up scrolling until nine instead."
    )
    assert double_sided_reflection("I want to write every day but I always end up watching series instead.") == (
        "You want to write every day, and you end up watching series instead."
    )
    assert double_sided_reflection("Hello there") is None


def test_advice_needs_permission() -> None:
    assert advice_problem("You should sleep earlier.", "ask_permission") is not None
    assert advice_problem("Would you like an idea? You could try sleeping earlier.", "ask_permission") is None
    assert advice_problem("Would you like an idea? You should sleep earlier.", "none") is not None
    assert advice_problem("What would help you sleep earlier?", "none") is None


def test_on_topic_compares_content_words() -> None:
    assert on_topic("Mornings at the gym are hard.", GYM)
    assert not on_topic("What do you think about the new policy?", GYM)


@pytest.mark.parametrize("locale", LOCALES)
def test_no_correction_sentence_reads_as_the_action_it_corrects(locale: Locale) -> None:
    for action in BLOCKED_ACTIONS:
        sentence = correction_sentence([action], locale)
        assert detect_blocked(sentence) == [], (action, sentence)
        assert detect_locale(sentence) in (locale, None)


@pytest.mark.parametrize(
    "message", [GYM, "Je veux arrêter de fumer mais je craque.", "I'm not suicidal", CRISIS_EN, CRISIS_FR]
)
def test_the_merged_template_never_repeats_the_early_reply(message: str) -> None:
    inputs = synth_inputs(message)
    early = inputs["coach"]["reply"]
    final = synth_check(check_ctx(None, message=message, inputs=inputs, last_chance=True))
    assert final.reply != early
    assert check_reply(final.reply, policy_from_inputs(inputs), early=early) == []


def test_required_actions_that_code_can_see_are_checked() -> None:
    # Seen on SmolLM2-135M: the resource, no question about safety.
    observed = (
        "Merci de me l'avoir dit. On dirait que vous pouvez appeler le 3114, le numéro national de prévention "
        "du suicide, gratuit, 24 h/24 et 7 j/7."
    )
    with pytest.raises(Rejected, match="does not ask whether the person is safe"):
        synth_check(check_ctx(synth_draft(observed), message=CRISIS_FR, inputs=synth_inputs(CRISIS_FR)))
    imminent = "I want to kill myself tonight"
    resource = load_safety().resource("en", "suicide_self_harm", "imminent")
    alone = f"I hear how much pain you are in. Are you safe right now? {resource.text}"
    with pytest.raises(Rejected, match="someone the person trusts"):
        synth_check(check_ctx(synth_draft(alone), message=imminent, inputs=synth_inputs(imminent)))
    supported = f"{alone} Could a friend or someone you trust come and be with you now?"
    out = synth_check(check_ctx(synth_draft(supported), message=imminent, inputs=synth_inputs(imminent)))
    assert out.source == "generated"


def test_a_long_draft_for_a_person_who_writes_briefly_keeps_a_reflection_and_a_question() -> None:
    message = "Gym again? Still scrolling."
    inputs = synth_inputs(message)
    assert inputs["conflicts"]["plan"]["length"] == "brief"
    draft = (
        "You are still scrolling instead of going to the gym. The gym is on your mind a lot. "
        "Scrolling is easy in the morning. What would make the gym feel more possible?"
    )
    out = synth_check(check_ctx(synth_draft(draft), message=message, inputs=inputs))
    assert out.source == "generated"
    assert (
        out.reply == "You are still scrolling instead of going to the gym. What would make the gym feel more possible?"
    )


def test_persona_is_estimated_again_only_every_few_turns_of_a_session() -> None:
    profile = persona().model_copy(update={"session": "s1", "turn": 2}).model_dump(mode="json")
    assert persona_shortcut(ctx(turn=3, memory={"persona": profile})) == Persona.model_validate(profile)
    assert persona_shortcut(ctx(turn=2 + PERSONA_EVERY, memory={"persona": profile})) is None
    assert persona_shortcut(ctx(turn=3, session="s2", memory={"persona": profile})) is None  # a new session
    assert persona_shortcut(ctx(turn=1)) is None
