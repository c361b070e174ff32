"""The merged reply's rule check: for a flagged message reject, regenerate once, then the
safe template; otherwise, a reply composed from the blackboard (compose.py) at once.

`synth` is a model agent; `synth_check` is its `check`. It checks the validated reply
against this turn's policy: no blocked action, the crisis resource at tier high or
above, the person's language, the advice mode the plan allows, on topic, not a copy of
the early reply, and only blackboard entries that exist in `used`. A failing reply is
rejected: at a flagged tier (`Rejected`) the runtime has the model write it once more
with the reason, and if that one fails too, or does not even validate, the safe template
is delivered instead. Below, the reply is composed from the plan, keeping a sentence of
the draft that passes on its own; why the draft was rejected is kept in `rejected`. The correction a conflict requires is added in code, so it cannot be left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_args

from cantata import CheckContext, FunctionContext, Rejected
from cantata.pipelines.coaching.citations import reply_quote_problems
from cantata.pipelines.coaching.compose import Turn, Voice, merged_reply
from cantata.pipelines.coaching.guard import assess, detect_locale
from cantata.pipelines.coaching.mi import (
    AdviceMode,
    MiProcess,
    advice_problem,
    content_stems,
    followup_reply,
    on_topic,
)
from cantata.pipelines.coaching.miti import is_reflection, sentences
from cantata.pipelines.coaching.models import Coach, Entry, Guard, Resolution, Source, Stability, Synth
from cantata.pipelines.coaching.replies import low_template, safety_followup
from cantata.pipelines.coaching.reply_checks import asks_about_safety, detect_blocked, points_to_support
from cantata.pipelines.coaching.roles import compose_stability, parsed, speaks_as_the_person
from cantata.pipelines.coaching.safety import (
    BlockedAction,
    Locale,
    RequiredAction,
    ResourceEntry,
    Tier,
    at_least_high,
    load_safety,
    normalize,
    primary_category,
)

ENTRIES: tuple[str, ...] = get_args(Entry)
# What the conflicts agent reads: whether these exist this turn is in its plan's `missing`.
CONFLICTS_READS: tuple[str, ...] = ("guard", "coach", "shadow", "persona", "plasticity", "stability")


@dataclass(frozen=True)
class Policy:
    """What this turn's merged reply must honour, from the most resolved entry available."""

    tier: Tier
    locale: Locale
    blocked: tuple[BlockedAction, ...]
    resource_text: str | None
    markers: tuple[str, ...]
    category: str | None
    correction: str | None
    sources: tuple[str, ...]  # the entries it was read from
    required: tuple[RequiredAction, ...] = ()
    advice_mode: AdviceMode = "ask_permission"
    mi_process: MiProcess | None = None
    stated_goal: str | None = None
    pattern: str | None = None
    stage: str | None = None
    kept_commitment: bool = False
    voice: Voice = Voice()

    @property
    def flagged(self) -> bool:
        """A flagged message gets the safe templates, never a composed reply."""
        return at_least_high(self.tier) or (self.tier == "low" and self.category is not None)


def policy_from_inputs(inputs: Mapping[str, Any], *, message: str = "", session: str = "", turn: int = 0) -> Policy:
    guard = parsed(Guard, inputs.get("guard"))
    if guard is None:
        guard = assess(message, session=session, turn=turn, previous=None)
    resolution = parsed(Resolution, inputs.get("conflicts"))
    sources: tuple[str, ...]
    advice_mode: AdviceMode = "ask_permission"
    mi_process: MiProcess | None = None
    stated_goal: str | None = None
    required: list[RequiredAction]
    extra: dict[str, Any] = {}
    if resolution is not None:
        plan = resolution.plan
        tier, blocked, resource, correction = plan.tier, plan.must_avoid, plan.crisis_resource, plan.correction
        required = plan.required
        advice_mode, mi_process, stated_goal = plan.advice_mode, plan.mi_process, plan.stated_goal
        sources = ("guard", "conflicts")
        extra = {
            "pattern": plan.pattern,
            "stage": plan.stage,
            "kept_commitment": plan.kept_commitment,
            "voice": Voice(length=plan.length, directness=plan.directness),
        }
    else:
        stability = parsed(Stability, inputs.get("stability"))
        if stability is None or stability.tier is None:
            stability = compose_stability(guard, None)
            sources = ("guard",)
        else:
            sources = ("guard", "stability")
        assert stability.tier is not None
        tier, blocked, resource, correction = stability.tier, stability.blocked, stability.crisis_resource, None
        required = stability.required
    if at_least_high(tier):
        advice_mode = "none"
    text: str | None
    markers: tuple[str, ...]
    if at_least_high(tier) and resource is None:
        # Cannot happen with valid entries (Stability requires it); never trust that it cannot.
        entry = load_safety().resource(guard.locale, primary_category(guard.categories), tier)
        text, markers = entry.text, entry.markers
    else:
        text = resource.text if resource else None
        markers = tuple(resource.markers) if resource else ()
    return Policy(
        tier=tier,
        locale=guard.locale,
        blocked=tuple(blocked),
        resource_text=text,
        markers=markers,
        category=primary_category(guard.categories),
        correction=correction,
        sources=tuple(s for s in sources if s in inputs),
        required=tuple(required),
        advice_mode=advice_mode,
        mi_process=mi_process,
        stated_goal=stated_goal,
        **extra,
    )


def check_reply(text: str, policy: Policy, *, message: str = "", early: str = "") -> list[str]:
    """Why a reply must not be delivered under this policy; empty when it may.

    Safety first (blocked actions, the crisis resource at tier high or above), then the
    plan (language, advice mode), then quality when the message is given: on topic, quoting
    only words of the message, and not a copy of the early reply."""
    problems: list[str] = []
    found = detect_blocked(text, policy.blocked)
    if found:
        problems.append(f"contains a blocked action: {', '.join(found)}")
    if at_least_high(policy.tier):
        missing = [m for m in policy.markers if m not in text]
        if missing or not policy.markers:
            problems.append(
                f"at tier {policy.tier} the reply must include the crisis resource word for word: {policy.resource_text}"
            )
    if "ask_about_safety" in policy.required and not asks_about_safety(text):
        problems.append("does not ask whether the person is safe right now")
    if "human_support" in policy.required and not points_to_support(text):
        problems.append("does not suggest someone the person trusts be with them now")
    language = detect_locale(text)
    if language is not None and language != policy.locale:
        problems.append(f"written in '{language}', the person writes '{policy.locale}'")
    advice = advice_problem(text, policy.advice_mode)
    if advice:
        problems.append(advice)
    # A reply to a flagged message is about safety, not about the words of the message.
    if message and policy.tier == "none" and not on_topic(text, message, policy.stated_goal or ""):
        problems.append("off topic: shares no content word with the message")
    if message:
        problems.extend(reply_quote_problems(text, message))
    # What both replies must carry (the resource, a correction) is not repetition.
    shared = [t for t in (policy.resource_text, policy.correction) if t]
    if early and _repeats(_without(text, shared), _without(early, shared)):
        problems.append("repeats the early reply instead of building on it")
    return problems


def _without(text: str, parts: list[str]) -> str:
    for part in parts:
        text = text.replace(part, " ")
    return text


def _repeats(text: str, early: str) -> bool:
    """The reply is the early one again: contains it, is contained in it, most of its
    content words are the early reply's (a copy with a slip or two), or it carries most of
    the early reply's content words (a copy with something appended)."""
    a, b = " ".join(normalize(text).split()), " ".join(normalize(early).split())
    if not (a and b):
        return False
    if a in b or b in a:
        return True
    words, early_words = content_stems(a), content_stems(b)
    shared = len(words & early_words)
    return (len(words) >= 4 and shared >= 0.8 * len(words)) or (
        len(early_words) >= 4 and shared >= 0.8 * len(early_words)
    )


def available_entries(inputs: Mapping[str, Any]) -> list[str]:
    """The entries on this turn's blackboard: what synth reads, plus what conflicts read and
    did not find missing."""
    resolution = parsed(Resolution, inputs.get("conflicts"))
    missing = set(resolution.plan.missing) if resolution is not None else set(CONFLICTS_READS)
    return [e for e in ENTRIES if e in inputs or (resolution is not None and e in CONFLICTS_READS and e not in missing)]


def with_correction(reply: str, policy: Policy) -> str:
    return f"{policy.correction} {reply}" if policy.correction else reply


def check_draft(draft: Synth, policy: Policy, *, available: list[str], message: str = "", early: str = "") -> list[str]:
    problems = check_reply(with_correction(draft.reply, policy), policy, message=message, early=early)
    if not policy.flagged and not any(is_reflection(s) for s in sentences(draft.reply)):
        # Motivational interviewing reflects before it asks: a reply of questions alone, or
        # of cheer ("Great job!"), says nothing back of what the person said.
        problems.append("reflects nothing the person said (no reflection)")
    if not policy.flagged and speaks_as_the_person(draft.reply):
        problems.append("the question speaks as the person ('my'), not to them")
    if draft.reply.count("«") != draft.reply.count("»") or draft.reply.count("“") != draft.reply.count("”"):
        problems.append("an unclosed quotation: a copy cut off")
    unknown = [e for e in draft.used if e not in available]
    if unknown:
        problems.append(f"'used' names entries that do not exist on this turn's blackboard: {', '.join(unknown)}")
    return problems


def template_reply(policy: Policy) -> tuple[str, Source]:
    """(reply, source): the safe follow-up at tier high or above, an acknowledgement and the
    resource at low tier with a flag, else an affirmation and an open question. Each says
    something the early reply did not."""
    if at_least_high(policy.tier):
        resource = load_safety().resource(policy.locale, policy.category, policy.tier)
        if policy.resource_text is not None and policy.markers:
            resource = ResourceEntry(policy.resource_text, policy.markers)
        reply = safety_followup(policy.locale, policy.category, policy.tier, resource)
        return with_correction(reply, policy), "safety_template"
    if policy.tier == "low" and policy.category is not None:
        resource = load_safety().resource(policy.locale, policy.category, policy.tier)
        return with_correction(low_template(policy.locale, policy.category, resource=resource), policy), (
            "safety_template"
        )
    return with_correction(followup_reply(policy.locale, policy.mi_process), policy), "template"


def in_voice(reply: str, policy: Policy) -> str:
    """A draft in the plan's voice: for a person who wants it brief, its first reflection
    and its last question only (a small model pads)."""
    parts = sentences(reply)
    if policy.flagged or policy.voice.length != "brief" or len(parts) <= 2:
        return reply
    reflection = next((s for s in parts if is_reflection(s)), parts[0])
    question = next((s for s in reversed(parts) if s.endswith("?")), None)
    return " ".join([reflection, question] if question and question != reflection else [reflection])


def salvage(draft: Synth | None, policy: Policy, *, message: str, early: str) -> str | None:
    """The first sentence of a rejected draft that is a reflection and passes every rule
    on its own: the model's words, kept inside a composed reply."""
    if draft is None:
        return None
    for sentence in sentences(draft.reply):
        if is_reflection(sentence) and not check_reply(sentence, policy, message=message, early=early):
            return sentence
    return None


def composed_reply(
    draft: Synth | None, policy: Policy, *, message: str, early: str, turn: int, session: str
) -> str | None:
    """A merged reply composed from the plan (compose.py) that passes the check, or None."""
    here = Turn(
        message=message,
        locale=policy.locale,
        turn=turn,
        session=session,
        mi_process=policy.mi_process or "evoking",
        pattern=policy.pattern,
        stage=policy.stage,
        kept_commitment=policy.kept_commitment,
        voice=policy.voice,
    )
    model_sentence = salvage(draft, policy, message=message, early=early)
    for attempt in (
        merged_reply(here, early=early, model_sentence=model_sentence),
        merged_reply(here, early=early),
        merged_reply(Turn(**{**vars(here), "message": ""}), early=early),
    ):
        text = with_correction(attempt, policy)
        if not check_reply(text, policy, message=message, early=early):
            return text
    return None


def compose_synth(
    draft: Synth | None,
    policy: Policy,
    *,
    available: list[str],
    last_chance: bool,
    message: str = "",
    early: str = "",
    turn: int = 1,
    session: str = "",
) -> Synth:
    """The checked reply. A flagged message: raises Rejected (once) for a regeneration,
    then the safe template. Otherwise no regeneration (a small model's second draft fails
    as its first did, and costs a generation): a reply composed from the plan."""
    if draft is not None:
        # Naming an entry that does not exist is a bookkeeping slip, not a bad reply: drop it.
        draft = draft.model_copy(update={"used": [e for e in draft.used if e in available]})
    problems = (
        ["no valid draft" if not last_chance else "the regenerated reply was not valid"]
        if draft is None
        else check_draft(draft, policy, available=available, message=message, early=early)
    )
    if draft is not None and not problems:
        return Synth(
            reply=with_correction(in_voice(draft.reply, policy), policy),
            used=list(dict.fromkeys([*draft.used, *policy.sources])),
            source="generated",
            available=available,
            tier=policy.tier,
        )
    used = [s for s in policy.sources if s in available]
    if not policy.flagged:
        text = composed_reply(draft, policy, message=message, early=early, turn=turn, session=session)
        if text is not None:
            return Synth(
                reply=text, used=used, source="composed", available=available, tier=policy.tier, rejected=problems
            )
    if not last_chance and policy.flagged:
        raise Rejected("; ".join(problems))
    reply, source = template_reply(policy)
    # The templates pass the check by construction (tests hold them to it); if an edited
    # template or resource ever failed it, deliver it anyway and say so: a person in
    # crisis must get the safe reply, not an error.
    problems.extend(f"template: {p}" for p in check_reply(reply, policy))
    return Synth(
        reply=reply,
        used=used,
        source=source,
        available=available,
        tier=policy.tier,
        rejected=problems,
    )


def synth_shortcut(ctx: FunctionContext) -> Synth | None:
    """`shortcut` of synth, without generating: at tier high or above the safe template
    when resources.yaml says `synth_at_high_tier: template`; below it, a reply composed from
    the blackboard when `synth_below_high_tier` says the model serving synth is too small
    to write one that passes (it would spend a generation to reach the same reply)."""
    settings = load_safety()
    policy = policy_from_inputs(ctx.inputs, message=ctx.message, session=ctx.session, turn=ctx.turn)
    available = available_entries(ctx.inputs)
    used = [s for s in policy.sources if s in available]
    if at_least_high(policy.tier):
        if settings.synth_at_high_tier != "template":
            return None
        reply, source = template_reply(policy)
        return Synth(reply=reply, used=used, source=source, available=available, tier=policy.tier)
    if policy.flagged or settings.generates("synth", getattr(ctx, "model", None)):
        return None
    coach = parsed(Coach, ctx.inputs.get("coach"))
    early = coach.reply if coach else ""
    text = composed_reply(None, policy, message=ctx.message, early=early, turn=ctx.turn, session=ctx.session)
    if text is None:
        return None  # nothing composed passes: let the model write, and the check decide
    return Synth(reply=text, used=used, source="composed", available=available, tier=policy.tier)


def synth_check(ctx: CheckContext) -> Synth:
    """`check` of synth."""
    policy = policy_from_inputs(ctx.inputs, message=ctx.message, session=ctx.session, turn=ctx.turn)
    coach = parsed(Coach, ctx.inputs.get("coach"))
    return compose_synth(
        parsed(Synth, ctx.output),
        policy,
        available=available_entries(ctx.inputs),
        last_chance=ctx.last_chance,
        message=ctx.message,
        early=coach.reply if coach else "",
        turn=ctx.turn,
        session=ctx.session,
    )
