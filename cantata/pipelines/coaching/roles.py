"""Shortcuts and checks of the coaching model agents: the code next to each model.

A model proposes; its check writes the entry the other agents read, with every
safety-critical value computed here. A model cannot lower a tier, unblock an action,
invent a turn, or get advice past the coach when the guard has flagged the message.

- coach: `coach_shortcut` answers with a template, without generating, when the guard has
  flagged the message; `coach_check` keeps a generated reply only if it passes the rules,
  else composes one from the message (compose.py). It does not regenerate: the early reply
  is about speed, and a second generation would double its latency.
- shadow: `shadow_check` keeps evidence whose quote is in the message of the turn it cites
  (citations.py), goals and commitments grounded in the messages, merges commitments with
  earlier turns and counts follow-through.
- stability: `stability_check` sets the tier (never below guard's), the required and
  blocked actions and the crisis resource.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from cantata import CheckContext, FunctionContext, TurnRef, quote_problem
from cantata.pipelines.coaching.citations import checked_description, reply_quote_problems
from cantata.pipelines.coaching.compose import Turn, early_reply
from cantata.pipelines.coaching.guard import assess, detect_locale, screen
from cantata.pipelines.coaching.mi import advice_problem, content_stems, on_topic
from cantata.pipelines.coaching.models import (
    TRAITS,
    Coach,
    Commitment,
    CrisisResource,
    DroppedQuote,
    Evidence,
    FollowThrough,
    Guard,
    GuardHit,
    Persona,
    Shadow,
    Stability,
)
from cantata.pipelines.coaching.replies import low_template, safety_template
from cantata.pipelines.coaching.reply_checks import detect_blocked
from cantata.pipelines.coaching.safety import (
    CATEGORIES,
    Category,
    Tier,
    at_least_high,
    blocked_for,
    load_safety,
    max_tier,
    normalize,
    primary_category,
    required_for,
    tier_rank,
)

M = TypeVar("M", bound=BaseModel)


def parsed(model: type[M], raw: Any) -> M | None:
    """An upstream output as its model, or None when missing or not of that shape."""
    if raw is None:
        return None
    try:
        return model.model_validate(raw)
    except ValidationError:
        return None


def guard_of(ctx: FunctionContext) -> Guard:
    """The guard's entry; if it is missing (it never should be), screen the message again here."""
    found = parsed(Guard, ctx.inputs.get("guard"))
    if found is not None:
        return found
    return assess(ctx.message, session=ctx.session, turn=ctx.turn, previous=None)


# -- coach ------------------------------------------------------------------------------------


def flagged_reply(guard: Guard) -> Coach | None:
    """The early reply when the guard has flagged the message, else None (let the model write).

    Tier high or imminent: acknowledge, ask about safety, the crisis resource for the locale;
    never advice. Tier low with a category: acknowledge and check in."""
    category = primary_category(guard.categories)
    if at_least_high(guard.tier):
        resource = load_safety().resource(guard.locale, category, guard.tier)
        text = safety_template(guard.locale, category, guard.tier, resource, sign=latest_sign(guard))
    elif guard.tier == "low" and category is not None:
        text = low_template(guard.locale, category)
    else:
        return None
    return Coach(reply=text, source="safety_template", tier=guard.tier)


def latest_sign(guard: Guard) -> str | None:
    """The warning sign to acknowledge: the weightiest one of the latest turn that made the tier."""
    if not guard.basis:
        return None
    last = max(s.turn for s in guard.basis)
    return max((s for s in guard.basis if s.turn == last), key=lambda s: s.weight).family


def coach_shortcut(ctx: FunctionContext) -> Coach | None:
    """`shortcut` of the coach, without generating: a template when the guard flagged the
    message; below that, the reply composed from the message when `coach_below_high_tier`
    says the model serving the coach is too small to write one that passes."""
    guard = guard_of(ctx)
    flagged = flagged_reply(guard)
    if flagged is not None or load_safety().generates("coach", getattr(ctx, "model", None)):
        return flagged
    return compose_coach(guard, None, ctx.message, turn=ctx.turn, rejected=[])


def early_reply_problems(reply: str, guard: Guard, message: str) -> list[str]:
    """Why an early reply must not be sent: a blocked action, another language, off topic,
    advice without permission."""
    problems: list[str] = []
    found = detect_blocked(reply, blocked_for(guard.tier, guard.categories))
    if found:
        problems.append(f"contains a blocked action: {', '.join(found)}")
    language = detect_locale(reply)
    if language is not None and language != guard.locale:
        problems.append(f"written in '{language}', the message in '{guard.locale}'")
    if not on_topic(reply, message):
        problems.append("off topic: shares no content word with the message")
    advice = advice_problem(reply, "ask_permission")
    if advice:
        problems.append(advice)
    if speaks_as_the_person(reply):
        problems.append("the question speaks as the person ('my', 'I'), not to them")
    problems.extend(reply_quote_problems(reply, message))
    return problems


_FIRST_PERSON_QUESTION = re.compile(r"\b(?:my|mine|myself|mon|ma|mes)\b[^.!?]*\?")


def speaks_as_the_person(reply: str) -> bool:
    """A question about "my" things ("What is the best way to manage my health?"): a
    small model taking the person's side of the conversation."""
    return bool(_FIRST_PERSON_QUESTION.search(normalize(reply)))


def compose_coach(
    guard: Guard, draft: Coach | None, message: str, *, turn: int = 1, rejected: list[str] | None = None
) -> Coach:
    """The early reply: a template when flagged, the draft if it passes the rules, else a
    reply composed from the message (compose.py): its words said back, an open question.
    `rejected`, when given, is why there is no draft (none: none was asked for)."""
    flagged = flagged_reply(guard)
    if flagged is not None:
        return flagged  # the shortcut normally answered before any generation
    if rejected is None:
        rejected = ["no valid draft"] if draft is None else early_reply_problems(draft.reply, guard, message)
    if draft is not None and not rejected:
        return Coach(reply=draft.reply, source="generated", tier=guard.tier)
    here = Turn(message=message, locale=guard.locale, turn=turn, session=guard.session)
    text = early_reply(here)
    if early_reply_problems(text, guard, message):
        # The person's own words tripped a rule (a blocked action said back): say it generally.
        text = early_reply(Turn(message="", locale=guard.locale, turn=turn, session=guard.session))
    return Coach(reply=text, source="composed", tier=guard.tier, rejected=rejected)


def coach_check(ctx: CheckContext) -> Coach:
    """`check` of the coach."""
    return compose_coach(guard_of(ctx), parsed(Coach, ctx.output), ctx.message, turn=ctx.turn)


# -- shadow -----------------------------------------------------------------------------------

MAX_COMMITMENTS = 6


def grounded(text: str, *sources: str) -> bool:
    """Non-empty and sharing a content word with the sources."""
    wanted: set[str] = set()
    for source in sources:
        wanted |= content_stems(source)
    return bool(text) and bool(content_stems(text) & wanted)


def cited_turn(draft: Shadow, turn: int) -> int:
    """The turn of this session shadow's evidence cites: `evidence_turn`, 0 naming this one."""
    return turn if draft.evidence_turn == 0 else draft.evidence_turn


def compose_shadow(
    draft: Shadow,
    *,
    message: str,
    session: str,
    turn: int,
    previous: Shadow | None,
    said: Mapping[int, str] | None = None,
) -> Shadow:
    """Evidence kept only when its quote is in the message of the turn it cites (`said`:
    the stored messages of this session's turns by number, the cited one at least; the new
    message is `message`); goals and commitments kept only when grounded in the message
    (goals also in earlier turns' shadow) and when what they quote is in it; commitments
    merged with earlier ones; follow-through counted from their statuses, not taken from
    the model. What is dropped is recorded in `dropped_quotes`, without its text."""
    dropped: list[DroppedQuote] = []

    def described(text: str, field: str) -> str:
        kept, drop = checked_description(text, message, field=field, turn=turn)
        dropped.extend([drop] if drop else [])
        return kept

    earlier = " ".join([previous.stated_goal, previous.revealed_priority] if previous else [])
    stated_goal, revealed, commitment = (
        described(draft.stated_goal, "stated_goal"),
        described(draft.revealed_priority, "revealed_priority"),
        described(draft.commitment, "commitment"),
    )
    stated_goal = stated_goal if grounded(stated_goal, message, earlier) else ""
    revealed = revealed if grounded(revealed, message, earlier) else ""
    evidence: list[Evidence] = []
    cited = cited_turn(draft, turn)
    if draft.evidence_quote:
        # This session's turns are 1..turn (0 names the new message): any other is invented.
        known = {**(said or {}), turn: message}
        problem = (
            quote_problem(draft.evidence_quote, known.get(cited))
            if 1 <= cited <= turn
            else f"cites turn {cited}, which this session does not have"
        )
        if problem is None:
            evidence.append(Evidence(turn=cited, quote=draft.evidence_quote))
        else:
            dropped.append(DroppedQuote(field="evidence_quote", turn=cited, reason=problem))
    commitments: dict[str, Commitment] = {}
    if previous is not None:
        for old in previous.commitments:
            commitments[normalize(old.text)] = old
    if commitment and grounded(commitment, message):
        key = normalize(commitment)
        before = commitments.pop(key, None)
        status = draft.commitment_status
        if status == "unknown" and before is not None:
            status = before.status  # "unknown" this turn does not erase what an earlier turn knew
        commitments[key] = Commitment(text=commitment, status=status, turn=turn, session=session)
    kept_list = list(commitments.values())[-MAX_COMMITMENTS:]
    return draft.model_copy(
        update={
            "stated_goal": stated_goal,
            "revealed_priority": revealed,
            "commitment": commitment,
            # The proposal's top-level fields say what was kept: an invented quote stays nowhere.
            "evidence_quote": evidence[0].quote if evidence else "",
            "evidence_turn": cited if evidence else 0,
            "evidence": evidence,
            "dropped_quotes": dropped,
            "commitments": kept_list,
            "follow_through": FollowThrough(
                kept=sum(c.status == "kept" for c in kept_list), total=sum(c.status != "unknown" for c in kept_list)
            ),
            "session": session,
            "turn": turn,
            "builds_on": [f"{previous.session}:{previous.turn}", *previous.builds_on][:5] if previous else [],
        }
    )


async def shadow_check(ctx: CheckContext) -> Shadow:
    """`check` of shadow: corrects, never rejects. The message of the earlier turn its
    evidence cites is read from the store (one read; none for the new message). What it
    computes is small (a few word sets per field): it runs on the loop, after the read."""
    draft = parsed(Shadow, ctx.output)
    if draft is None:  # only after a failed regeneration, which this check never asks for
        raise ValueError("shadow has no valid reply to check")
    previous = parsed(Shadow, ctx.memory.get("shadow"))
    cited = cited_turn(draft, ctx.turn)
    wanted = [TurnRef(ctx.session, cited)] if draft.evidence_quote and 1 <= cited < ctx.turn else []
    said = {ref.number: text for ref, text in (await ctx.messages(wanted)).items()}
    return compose_shadow(draft, message=ctx.message, session=ctx.session, turn=ctx.turn, previous=previous, said=said)


# -- persona ----------------------------------------------------------------------------------

PERSONA_MEMORY_WEIGHT = 0.7  # one turn of text says little: the earlier profile weighs more


PERSONA_EVERY = 3  # turns of a session between two estimates


def persona_shortcut(ctx: FunctionContext) -> Persona | None:
    """`shortcut` of persona: the profile estimated earlier in this session, as is, until
    PERSONA_EVERY turns have passed. Traits move slowly and one more turn of text says
    little (the check weighs it 0.3), while the call costs seconds of every turn."""
    previous = parsed(Persona, ctx.memory.get("persona"))
    if previous is None or previous.session != ctx.session or ctx.turn - previous.turn >= PERSONA_EVERY:
        return None
    return previous


def persona_check(ctx: CheckContext) -> Persona:
    """`check` of persona: blends this turn's read into the profile from earlier sessions,
    and says which earlier profile it builds on. Never rejects."""
    draft = parsed(Persona, ctx.output)
    previous = parsed(Persona, ctx.memory.get("persona"))
    if draft is None and previous is None:
        raise ValueError("persona has neither a reply nor an earlier profile")
    here: dict[str, Any] = {"session": ctx.session, "turn": ctx.turn, "dropped_quotes": []}
    if draft is not None:
        # Its descriptions cite this turn: what they quote must be in its message.
        checked = {
            field: checked_description(getattr(draft, field), ctx.message, field=field, turn=ctx.turn)
            for field in ("recurring_goal", "growth_edge")
        }
        draft = draft.model_copy(update={field: text for field, (text, _) in checked.items()})
        here["dropped_quotes"] = [drop for _, drop in checked.values() if drop is not None]
    if previous is None:
        assert draft is not None
        return draft.model_copy(update={**here, "observations": 1, "builds_on": []})
    if draft is None:  # the model failed: keep the earlier profile, unchanged
        return previous.model_copy(update=here)
    weight = PERSONA_MEMORY_WEIGHT
    blended: dict[str, Any] = {
        trait: round(weight * getattr(previous, trait) + (1 - weight) * getattr(draft, trait)) for trait in TRAITS
    }
    blended["follow_through_pct"] = round(
        weight * previous.follow_through_pct + (1 - weight) * draft.follow_through_pct
    )
    return draft.model_copy(
        update={
            **blended,
            **here,
            "recurring_goal": draft.recurring_goal or previous.recurring_goal,
            "growth_edge": draft.growth_edge or previous.growth_edge,
            "observations": previous.observations + 1,
            "builds_on": [f"{previous.session}:{previous.turn}", *previous.builds_on][:5],
        }
    )


# -- stability --------------------------------------------------------------------------------

_DOMAIN_CATEGORY: dict[str, Category] = {
    "suicide_self_harm": "suicide_self_harm",
    "abuse": "abuse",
    "harm_to_others": "harm_to_others",
    "medical": "medical_emergency",
    "eating": "restrictive_eating",
}


def tier_from_read(read: Stability) -> Tier:
    """What a risk read implies on its own: only safety domains count, by their product."""
    if read.domain not in _DOMAIN_CATEGORY:
        return "none"
    if read.product >= 100:
        return "imminent"
    if read.product >= 48:
        return "high"
    if read.product >= 12:
        return "low"
    return "none"


def screen_shadow(shadow: Shadow | None) -> list[GuardHit]:
    """The guard's rules over shadow's goals and commitments, which can carry a risk from an
    earlier session ("eat under 600 calories", kept) into a turn whose message is harmless."""
    if shadow is None:
        return []
    texts = [shadow.stated_goal, shadow.revealed_priority, *(c.text for c in shadow.commitments)]
    return screen(". ".join(t for t in texts if t))


def compose_stability(
    guard: Guard, read: Stability | None, shadow: Shadow | None = None, *, cap: Tier | None = None
) -> Stability:
    """The tier is never below guard's. A model's risk read, or a rule hit in shadow's
    (model-extracted) goals and commitments, raises it at most to `cap`: the cap of the
    model that served stability (resources.yaml's model_tier_caps), the default cap if None."""
    safety = load_safety()
    if read is None:  # no model read (its agent failed): the rules alone decide
        read = Stability(domain="none", severity=1, detectability=1, reversibility=1)
        model_tier: Tier | None = None
    else:
        model_tier = tier_from_read(read)
    shadow_hits = screen_shadow(shadow)
    indirect = max_tier(model_tier or "none", *(h.tier for h in shadow_hits))
    cap = cap or safety.model_tier_cap
    tier = max_tier(guard.tier, indirect if tier_rank(indirect) <= tier_rank(cap) else cap)
    indirect_categories: set[Category] = {h.category for h in shadow_hits}
    if model_tier is not None and read.domain in _DOMAIN_CATEGORY and read.severity >= 3:
        indirect_categories.add(_DOMAIN_CATEGORY[read.domain])
    categories = [c for c in CATEGORIES if c in guard.categories or c in indirect_categories]
    required = required_for(tier, categories)
    resource = None
    if "crisis_line" in required:
        # The rules' categories choose the resource first; the model's only if the rules found none.
        category = primary_category(guard.categories) or primary_category(categories)
        entry = safety.resource(guard.locale, category, tier)
        resource = CrisisResource(text=entry.text, markers=list(entry.markers))
    return read.model_copy(
        update={
            "tier": tier,
            "guard_tier": guard.tier,
            "model_tier": model_tier,
            "shadow_hits": shadow_hits,
            "required": required,
            "blocked": blocked_for(tier, categories),
            "crisis_resource": resource,
            "locale": guard.locale,
        }
    )


def stability_check(ctx: CheckContext) -> Stability:
    """`check` of stability: corrects, never rejects. The model's read counts as far as the
    model that wrote it is trusted: its cap comes from the instance's name and model."""
    cap = load_safety().cap_for(ctx.instance, ctx.model)
    return compose_stability(
        guard_of(ctx), parsed(Stability, ctx.output), parsed(Shadow, ctx.inputs.get("shadow")), cap=cap
    )
