"""Conflict rules: typed comparisons of the specialists' outputs, resolved by precedence.

Each rule names the two parties it compares; the winner is the party that comes first in
PRECEDENCE (safety first). Resolutions are applied to the plan from the lowest-precedence
winner to the highest, so where two resolutions touch the same setting the higher one
has the last word. Every conflict is recorded (`ctx.conflict`, shown in the turn) and
handed to synth inside the `conflicts` entry, with the resolved plan it must honour.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cantata import FunctionContext
from cantata.pipelines.coaching.compose import Directness, Length
from cantata.pipelines.coaching.mi import AdviceMode, MiProcess
from cantata.pipelines.coaching.models import (
    Coach,
    Conflict,
    Directiveness,
    GrowPhase,
    Guard,
    Persona,
    Plan,
    Plasticity,
    Resolution,
    Shadow,
    Stability,
    Stage,
    Tone,
)
from cantata.pipelines.coaching.replies import correction_sentence, describe_blocked
from cantata.pipelines.coaching.reply_checks import detect_blocked
from cantata.pipelines.coaching.roles import compose_stability, guard_of, parsed
from cantata.pipelines.coaching.safety import Tier, at_least_high, max_tier, tier_rank

PRECEDENCE: tuple[str, ...] = ("guard", "stability", "shadow", "persona", "plasticity", "coach")
FOLLOW_THROUGH_GAP = 30  # points


def winner(parties: tuple[str, ...]) -> str:
    return min(parties, key=PRECEDENCE.index)


@dataclass
class Board:
    """The typed outputs the rules compare; `stability` is recomputed from guard if missing."""

    guard: Guard
    stability: Stability
    tier: Tier
    coach: Coach | None = None
    shadow: Shadow | None = None
    persona: Persona | None = None
    plasticity: Plasticity | None = None
    message: str = ""


@dataclass
class PlanDraft:
    """The plan while rules edit it."""

    tone: list[Tone] = field(default_factory=lambda: ["warm"])
    directiveness: Directiveness = "guiding"
    advice_mode: AdviceMode = "ask_permission"
    mi_process: MiProcess = "engaging"
    grow_phase: GrowPhase = "goal"
    follow_through_pct: int | None = None
    correction: str | None = None


@dataclass(frozen=True)
class Finding:
    detail: str
    resolution: str
    apply: Callable[[PlanDraft], None]


@dataclass(frozen=True)
class Rule:
    name: str
    parties: tuple[str, str]
    check: Callable[[Board], Finding | None]

    @property
    def winner(self) -> str:
        return winner(self.parties)


def _noop(plan: PlanDraft) -> None:
    return None


def _tier_floor(b: Board) -> Finding | None:
    model = b.stability.model_tier
    if model is None or tier_rank(model) >= tier_rank(b.guard.tier):
        return None
    return Finding(
        detail=f"stability's risk read implies tier {model}; guard's rules found {b.guard.tier}",
        resolution=f"the tier is {b.tier}: a rule hit is never lowered by a model's read",
        apply=_noop,
    )


def _early_reply_blocked(b: Board) -> Finding | None:
    if b.coach is None:
        return None
    found = detect_blocked(b.coach.reply, b.stability.blocked)
    if not found:
        return None
    sentence = correction_sentence(found, b.guard.locale)

    def apply(plan: PlanDraft) -> None:
        plan.correction = sentence

    return Finding(
        detail=f"the early reply suggested {describe_blocked(found)}, which stability blocks",
        resolution="the merged reply must not repeat it and must carry the correction: " + sentence,
        apply=apply,
    )


def shadow_pct(shadow: Shadow) -> int:
    return round(shadow.follow_through.probability * 100)


def _follow_through_gap(b: Board) -> Finding | None:
    """Persona's estimate against shadow's count. With no known outcome yet, shadow's 50% is
    a prior, not a measurement, so there is nothing to disagree with."""
    if b.shadow is None or b.persona is None or b.shadow.follow_through.total == 0:
        return None
    tracked, estimated = shadow_pct(b.shadow), b.persona.follow_through_pct
    if abs(tracked - estimated) <= FOLLOW_THROUGH_GAP:
        return None

    def apply(plan: PlanDraft) -> None:
        plan.follow_through_pct = tracked

    ft = b.shadow.follow_through
    return Finding(
        detail=f"persona estimates follow-through at {estimated}%, shadow tracks {tracked}% "
        f"({ft.kept} kept of {ft.total} known commitments)",
        resolution=f"use {tracked}%: shadow counts tracked commitments, persona estimates from text",
        apply=apply,
    )


def _directive_at_high_tier(b: Board) -> Finding | None:
    p = b.plasticity
    if p is None or not at_least_high(b.tier):
        return None
    pushing = p.directiveness == "directing" or p.mi_process == "planning" or p.grow_phase in ("options", "way_forward")
    if not pushing and p.advice_mode == "none":
        return None
    if not pushing:
        return Finding(
            detail=f"plasticity allows advice ({p.advice_mode}) while the tier is {b.tier}",
            resolution="no advice at this tier",
            apply=_no_advice,
        )

    def apply(plan: PlanDraft) -> None:
        plan.directiveness, plan.mi_process, plan.grow_phase = "following", "engaging", "reality"
        plan.tone = ["calm", "warm"]
        _no_advice(plan)

    return Finding(
        detail=f"plasticity chose a directive strategy ({p.directiveness}, {p.mi_process}, {p.grow_phase}) "
        f"while the tier is {b.tier}",
        resolution="follow, do not direct: engage, stay with the present, calm and warm, no advice",
        apply=apply,
    )


def _no_advice(plan: PlanDraft) -> None:
    plan.advice_mode = "none"


_EARLY_STAGES: tuple[Stage, ...] = ("precontemplation", "contemplation")


def _stage_vs_strategy(b: Board) -> Finding | None:
    p, s = b.plasticity, b.shadow
    if p is None or s is None or s.stage not in _EARLY_STAGES:
        return None
    if not (p.mi_process == "planning" or p.grow_phase == "way_forward" or p.directiveness == "directing"):
        return None

    def apply(plan: PlanDraft) -> None:
        plan.directiveness, plan.mi_process, plan.grow_phase = "guiding", "evoking", "reality"

    return Finding(
        detail=f"shadow sees stage {s.stage}; plasticity plans action ({p.mi_process}, {p.grow_phase}, {p.directiveness})",
        resolution="evoke the person's own reasons before any plan: guiding, evoking, reality",
        apply=apply,
    )


def _tone_vs_persona(b: Board) -> Finding | None:
    p, persona = b.plasticity, b.persona
    if p is None or persona is None or persona.neuroticism < 4:
        return None
    harsh = [t for t in p.tone if t in ("direct", "playful")]
    if not harsh:
        return None

    def apply(plan: PlanDraft) -> None:
        plan.tone = ["warm", "calm"]

    return Finding(
        detail=f"persona estimates high neuroticism ({persona.neuroticism}/5); plasticity chose a {', '.join(harsh)} tone",
        resolution="a warm, calm tone",
        apply=apply,
    )


RULES: tuple[Rule, ...] = (
    Rule("tier_floor", ("guard", "stability"), _tier_floor),
    Rule("early_reply_blocked_action", ("stability", "coach"), _early_reply_blocked),
    Rule("directive_at_high_tier", ("stability", "plasticity"), _directive_at_high_tier),
    Rule("follow_through_gap", ("shadow", "persona"), _follow_through_gap),
    Rule("stage_vs_strategy", ("shadow", "plasticity"), _stage_vs_strategy),
    Rule("tone_vs_persona", ("persona", "plasticity"), _tone_vs_persona),
)


def resolve(board: Board, rules: tuple[Rule, ...] = RULES) -> Resolution:
    """Run every rule, apply resolutions by ascending precedence, and build the plan."""
    findings = [(rule, f) for rule in rules if (f := rule.check(board)) is not None]
    plan = PlanDraft()
    p = board.plasticity
    if p is not None:
        plan.tone = list(p.tone)
        plan.directiveness, plan.advice_mode = p.directiveness, p.advice_mode
        plan.mi_process, plan.grow_phase = p.mi_process, p.grow_phase
    if board.persona is not None:
        plan.follow_through_pct = board.persona.follow_through_pct
    if board.shadow is not None and board.persona is None and board.shadow.follow_through.total:
        plan.follow_through_pct = shadow_pct(board.shadow)
    # Lowest precedence first: the highest-precedence winner has the last word.
    for _rule, finding in sorted(findings, key=lambda rf: -PRECEDENCE.index(rf[0].winner)):
        finding.apply(plan)
    st = board.stability
    if at_least_high(board.tier):
        plan.advice_mode = "none"  # policy, whatever the rules found: never advice at this tier
    length, directness = voice_of(board, plan.tone, plan.directiveness)
    conflicts = [
        Conflict(rule=r.name, parties=list(r.parties), winner=r.winner, detail=f.detail, resolution=f.resolution)
        for r, f in findings
    ]
    return Resolution(
        precedence=list(PRECEDENCE),
        conflicts=conflicts,
        plan=Plan(
            tier=board.tier,
            locale=board.guard.locale,
            required=st.required,
            must_avoid=st.blocked,
            crisis_resource=st.crisis_resource,
            correction=plan.correction,
            tone=plan.tone,
            directiveness=plan.directiveness,
            advice_mode=plan.advice_mode,
            mi_process=plan.mi_process,
            grow_phase=plan.grow_phase,
            stage=board.shadow.stage if board.shadow else None,
            stated_goal=board.shadow.stated_goal if board.shadow else None,
            revealed_priority=board.shadow.revealed_priority if board.shadow else None,
            growth_edge=board.persona.growth_edge if board.persona else None,
            follow_through_pct=plan.follow_through_pct,
            injection=board.guard.injection,
            missing=[],
            pattern=board.shadow.pattern if board.shadow else None,
            kept_commitment=kept_now(board.shadow),
            length=length,
            directness=directness,
        ),
    )


BRIEF_WORDS = 8  # a person who writes a line gets a short reply: match their length


def voice_of(board: Board, tone: list[Tone], directiveness: Directiveness) -> tuple[Length, Directness]:
    """(length, directness) of the merged reply, from plasticity's resolved strategy and
    persona's profile: gentle whenever persona reads high neuroticism or the tier is
    raised; brief when the person writes briefly or persona reads them as reserved."""
    persona = board.persona
    direct = ("direct" in tone or directiveness == "directing") and board.tier == "none"
    if persona is not None and persona.neuroticism >= 4:
        direct = False
    words = len(board.message.split())
    reserved = persona is not None and persona.extraversion <= 2 and persona.openness <= 2
    brief = (0 < words < BRIEF_WORDS) or reserved
    return ("brief" if brief else "detailed"), ("direct" if direct else "gentle")


def kept_now(shadow: Shadow | None) -> bool:
    return shadow is not None and any(c.status == "kept" and c.turn == shadow.turn for c in shadow.commitments)


def board_of(ctx: FunctionContext) -> Board:
    guard = guard_of(ctx)
    stability = parsed(Stability, ctx.inputs.get("stability"))
    if stability is None or stability.tier is None:
        stability = compose_stability(guard, None)
    assert stability.tier is not None
    return Board(
        guard=guard,
        stability=stability,
        tier=max_tier(stability.tier, guard.tier),
        coach=parsed(Coach, ctx.inputs.get("coach")),
        shadow=parsed(Shadow, ctx.inputs.get("shadow")),
        persona=parsed(Persona, ctx.inputs.get("persona")),
        plasticity=parsed(Plasticity, ctx.inputs.get("plasticity")),
        message=ctx.message,
    )


def conflicts(ctx: FunctionContext) -> Resolution:
    """The `conflicts` agent."""
    resolution = resolve(board_of(ctx))
    resolution.plan.missing = sorted(ctx.missing)
    for c in resolution.conflicts:
        ctx.conflict(rule=c.rule, parties=c.parties, winner=c.winner, detail=c.detail, resolution=c.resolution)
    return resolution
