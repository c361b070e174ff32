"""Output models of the coaching pipeline.

A model agent's output model is two things at once: the JSON Schema the backend decodes
with (and the model reads in its prompt), and the entry its `check` writes after
correcting the reply in code. So each has:

- fields the model writes, in the schema: small, flat, every free string bounded by a
  `pattern` (llama.cpp's grammar enforces patterns and lengths, not number bounds) and
  every small number an enum; validators clamp what a grammar cannot bound;
- fields only code writes (`SkipJsonSchema`): tiers, blocked actions, checked evidence,
  counts. They are not in the schema, so a grammar-constrained model cannot emit them,
  and the agent's check rebuilds them from scratch, so a model that emits them anyway
  (no grammar) changes nothing;
- derived values as `computed_field`s (a risk product, a probability, the confidence of a
  Big Five estimate): stored, never asked of the model.

`Guard` and `Resolution` are function agents' outputs: code only.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from cantata.pipelines.coaching.mi import AdviceMode, MiProcess
from cantata.pipelines.coaching.safety import (
    UNIVERSAL_BLOCKED,
    BlockedAction,
    Category,
    Locale,
    RequiredAction,
    Tier,
    tier_rank,
)

Score = Literal[1, 2, 3, 4, 5]
Trait = Literal["openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism"]
TRAITS: tuple[Trait, ...] = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
CommitmentStatus = Literal["kept", "missed", "unknown"]
Stage = Literal["precontemplation", "contemplation", "preparation", "action", "maintenance"]
Pattern = Literal[
    "intention_action_gap",
    "avoidance",
    "all_or_nothing",
    "overcommitment",
    "values_conflict",
    "self_criticism",
    "steady_progress",
    "unclear",
]
GrowPhase = Literal["goal", "reality", "options", "way_forward"]
Directiveness = Literal["following", "guiding", "directing"]
Tone = Literal["warm", "calm", "encouraging", "direct", "playful"]
RiskDomain = Literal["none", "wellbeing", "suicide_self_harm", "abuse", "harm_to_others", "medical", "eating"]
# The blackboard entries a merged reply can say it used.
Entry = Literal["guard", "coach", "shadow", "persona", "plasticity", "stability", "conflicts"]

BIG_FIVE_NOTE = "low: estimated from text; text-based Big Five estimates correlate only about r=0.3 with questionnaires"


def _compact(schema: dict[str, Any]) -> None:
    """Drop pydantic's generated titles: every token of the schema is prompt the model reads."""
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)


def _bare(schema: dict[str, Any]) -> None:
    """A model-facing schema: no titles, no descriptions (a small model copies them into its
    answer), no length keywords where a pattern already bounds the string (the schema is
    in every prompt: each token costs prompt time on every turn), and every field the
    model sees required, defaults or not: a grammar makes optional fields optional."""
    _compact(schema)
    schema.pop("description", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("description", None)
            prop.pop("default", None)
            if "pattern" in prop:
                prop.pop("maxLength", None)
                prop.pop("minLength", None)
    schema["required"] = list(schema.get("properties", {}))


class Compact(BaseModel):
    """An entry written by code: its schema is only used to validate."""

    model_config = ConfigDict(json_schema_extra=_compact)


class Draft(BaseModel):
    """A model agent's output: its schema is the decoding constraint and part of the prompt."""

    model_config = ConfigDict(json_schema_extra=_bare)


_CHAR = r'[^"\\\n]'  # no quote, backslash or newline: valid JSON on one line


def text_field(max_chars: int, *, min_chars: int = 0, start: str = "", end: str = "") -> dict[str, Any]:
    """Schema keywords for a free string the grammar keeps short, on one line, and valid JSON.

    llama.cpp's grammar enforces `pattern` (and `maxLength`) but lets a plain string carry
    raw newlines, which `json.loads` rejects; the pattern forbids them. `start` and `end`
    are regex fragments the string must begin and end with."""
    body = f"{_CHAR}{{{min_chars},{max_chars}}}"
    return {"pattern": f"^{start}{body}{end}$"}


def _clamp(value: Any, low: int, high: int) -> Any:
    """Bring a number into [low, high]; leave anything else to the type check."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        value = round(value)
    if isinstance(value, int):
        return max(low, min(high, value))
    return value


_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def tidy(text: str, *, end: str = "", cut_at: int | None = None) -> str:
    """Collapse what small models do to free text: repeated sentences, a last sentence cut
    off by the length bound (`cut_at`, the grammar's maximum), runs of spaces. `end` is
    added when the text lacks an ending."""
    text = " ".join(text.split()).strip()
    if cut_at is not None and len(text) >= cut_at - 2 and text and text[-1] not in ".!?…":
        head = _SENTENCE_END.split(text)[:-1]
        if head:
            text = " ".join(head)
    seen: set[str] = set()
    kept: list[str] = []
    sentences = _SENTENCE_END.split(text)
    for i, sentence in enumerate(sentences):
        key = re.sub(r"\W+", " ", sentence.lower()).strip()
        if not key or key in seen:
            continue
        # A final fragment that is a prefix of a sentence already kept is a cut-off repeat.
        if i == len(sentences) - 1 and any(k.startswith(key) for k in seen):
            continue
        seen.add(key)
        kept.append(sentence)
    text = " ".join(kept)
    if text and end and text[-1] not in ".!?…":
        text += end
    return text


def words_or_blank(text: str) -> str:
    """A short free-text field: tidied, and blank when it holds no word (a small model's
    '}  # 1.1.1' filler): blank means unknown, which readers handle."""
    text = tidy(text).strip(" .")
    return text if re.search(r"[^\W\d_]{3,}", text) else ""


# -- guard (function) ---------------------------------------------------------------------


class GuardHit(Compact):
    rule: str = Field(description="Id of the rule that matched, e.g. en.suicide.explicit.")
    category: Category
    tier: Tier
    negated: bool = False
    family: str = Field("", description="The warning sign the rule encodes, e.g. burden, means, hedge.")
    weight: int = Field(0, ge=0, description="What it adds to the session's accumulated risk; 3 is high alone.")
    note: str = Field("", description="Why the hit was lowered: negated, history, habit context.")


class GuardSignal(Compact):
    """A warning sign seen in this session: which rule, on which turn."""

    turn: int
    rule: str
    category: Category
    family: str
    weight: int = Field(ge=0)
    tier: Tier


class ContextTurn(Compact):
    """A recent turn as the learned signal reads it beside the next ones (grading.CONTEXT): hashed
    features and counts, never the person's words."""

    turn: int
    features: list[int] = Field(default_factory=list, description="The turn's hashed features the model weighs.")
    unknown: int = Field(0, ge=0, description="How many more features the turn has, which the model does not weigh.")
    risk: bool = Field(False, description="A sentence of the turn names a risk concept.")
    read: float = Field(0.0, description="The learned signal's best read of one sentence of the turn.")


class Guard(Compact):
    tier: Tier
    categories: list[Category] = Field(default_factory=list)
    locale: Locale
    session: str = Field(description="The session this flag belongs to; it persists within it only.")
    flagged_turn: int | None = Field(None, description="Turn of this session where the current flag was raised.")
    carried: bool = Field(False, description="The tier was kept from an earlier turn of this session.")
    retraction: bool = Field(False, description="The message retracts ('I was joking'); noted, never clears a flag.")
    injection: bool = Field(False, description="The message tries to instruct the system.")
    hits: list[GuardHit] = Field(default_factory=list)
    signals: list[GuardSignal] = Field(
        default_factory=list, description="Every warning sign of this session so far, one per rule and turn."
    )
    basis: list[GuardSignal] = Field(
        default_factory=list, description="The signals, from which turns, that made the tier."
    )
    score: dict[str, int] = Field(
        default_factory=dict, description="Accumulated weight per category: the sum over distinct warning signs."
    )
    reads: list[int] = Field(
        default_factory=list,
        description="The recent turns of this session the learned signal read at `sustained` or above.",
    )
    means_turn: int | None = Field(
        None, description="The latest turn of this session that named a means, which a pronoun may refer back to."
    )
    context: list[ContextTurn] = Field(
        default_factory=list, description="The last turns of this session, read together by the learned signal."
    )


# generated: the model's draft as is; composed: built from this turn's blackboard
# (compose.py), with the model's words where they passed; template: a fixed sentence.
Source = Literal["generated", "composed", "template", "safety_template"]


# -- coach (early reply) ----------------------------------------------------------------------


class Coach(Draft):
    """One reflection and one open question (motivational interviewing), or a template.

    The grammar makes the reflection start as a reflection and the question as an open
    question ending in "?", in English or French. The stored entry keeps only `reply`
    (the two joined, or the template): other agents read it, once."""

    reflection: str = Field(
        "",
        exclude=True,
        max_length=240,
        json_schema_extra=text_field(90, min_chars=10, start="(You|It sounds like you|Vous|On dirait que vous) "),
    )
    question: str = Field(
        "",
        exclude=True,
        max_length=200,
        json_schema_extra=text_field(
            60, min_chars=8, start="(What|How|Qu'est-ce qui|Qu'est-ce que|Comment|Quel|Quelle) ", end="[?]"
        ),
    )
    reply: SkipJsonSchema[str] = Field("", description="What the person reads.")
    source: SkipJsonSchema[Source] = "generated"
    tier: SkipJsonSchema[Tier | None] = None
    rejected: SkipJsonSchema[list[str]] = Field(
        default_factory=list, description="Why the generated reply was not used."
    )

    @field_validator("reflection")
    @classmethod
    def _reflection(cls, value: str) -> str:
        return tidy(value, end=".", cut_at=len("It sounds like you ") + 90)

    @field_validator("question")
    @classmethod
    def _question(cls, value: str) -> str:
        value = tidy(value)
        if not value:
            return value
        # One question: keep up to the first question mark.
        head, _, _ = value.partition("?")
        return head.rstrip(" .!") + "?"

    @model_validator(mode="after")
    def _reply(self) -> Coach:
        if not self.reply:
            if not (self.reflection and self.question):
                raise ValueError("write both a reflection and a question")
            self.reply = f"{self.reflection} {self.question}"
        return self


# -- shadow -----------------------------------------------------------------------------------


class Evidence(Compact):
    turn: int = Field(description="Turn number in its session; the quote is checked against its message.")
    quote: str


class DroppedQuote(Compact):
    """A quotation of the person an agent wrote and its check did not keep. Its text is not
    stored: an invented quote must not reach memory, even as a note."""

    field: str = Field(description="Where the agent wrote it: evidence_quote, stated_goal, growth_edge...")
    turn: int = Field(description="The turn of this session it cited (a description cites the entry's own turn).")
    reason: str


class Commitment(Compact):
    text: str
    status: CommitmentStatus
    turn: int = Field(description="Turn of its session where it was last reported.")
    session: str


class FollowThrough(Compact):
    kept: int = Field(0, ge=0)
    total: int = Field(0, ge=0, description="Commitments whose outcome is known (kept or missed).")

    @model_validator(mode="after")
    def _consistent(self) -> FollowThrough:
        if self.kept > self.total:
            raise ValueError(f"kept ({self.kept}) cannot exceed total ({self.total})")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def probability(self) -> float:
        """Laplace-smoothed rate: 0.5 with no evidence, never 0 or 1 on a few commitments."""
        return round((self.kept + 1) / (self.total + 2), 2)


class Shadow(Draft):
    """Stated goal versus revealed priority. The model proposes one piece of evidence and one
    commitment (flat: nested objects cost schema tokens and confuse a small model); the
    check keeps what is grounded, merges commitments with earlier turns and counts."""

    stated_goal: str = Field(max_length=120, json_schema_extra=text_field(50))
    revealed_priority: str = Field(max_length=120, json_schema_extra=text_field(50))
    evidence_turn: int = Field(0, description="Proposed: 0 for the new message, else N from [turn N].")
    evidence_quote: str = Field("", max_length=120, json_schema_extra=text_field(60))
    commitment: str = Field("", max_length=100, json_schema_extra=text_field(40))
    commitment_status: CommitmentStatus = "unknown"
    stage: Stage
    pattern: Pattern
    evidence: SkipJsonSchema[list[Evidence]] = Field(
        default_factory=list, description="Checked: a quote found in the message of the turn it cites."
    )
    dropped_quotes: SkipJsonSchema[list[DroppedQuote]] = Field(
        default_factory=list,
        description="Quotations the check dropped (evidence, or quoted in a description), and why.",
    )
    commitments: SkipJsonSchema[list[Commitment]] = Field(default_factory=list)
    follow_through: SkipJsonSchema[FollowThrough] = Field(default_factory=FollowThrough)
    session: SkipJsonSchema[str] = ""
    builds_on: SkipJsonSchema[list[str]] = Field(
        default_factory=list, description="The earlier analyses it continues, as 'session:turn' (latest first)."
    )
    turn: SkipJsonSchema[int] = 0

    @field_validator("stated_goal", "revealed_priority", "evidence_quote", "commitment")
    @classmethod
    def _tidy(cls, value: str) -> str:
        return words_or_blank(value)


# -- persona ----------------------------------------------------------------------------------


class Persona(Draft):
    openness: Score
    conscientiousness: Score
    extraversion: Score
    agreeableness: Score
    neuroticism: Score
    follow_through_pct: int = Field(ge=0, le=100)
    recurring_goal: str = Field(max_length=100, json_schema_extra=text_field(40))
    growth_edge: str = Field(max_length=100, json_schema_extra=text_field(40))
    # Written by persona's check: the profile is a running estimate across sessions.
    session: SkipJsonSchema[str] = ""
    turn: SkipJsonSchema[int] = 0
    observations: SkipJsonSchema[int] = Field(1, ge=1, description="Turns this profile is estimated from.")
    dropped_quotes: SkipJsonSchema[list[DroppedQuote]] = Field(
        default_factory=list, description="Quotations of the person in its descriptions the check dropped, and why."
    )
    builds_on: SkipJsonSchema[list[str]] = Field(
        default_factory=list, description="The earlier profile it updates, as 'session:turn' (latest first)."
    )

    @field_validator(*TRAITS, mode="before")
    @classmethod
    def _score(cls, value: Any) -> Any:
        return _clamp(value, 1, 5)

    @field_validator("follow_through_pct", mode="before")
    @classmethod
    def _pct(cls, value: Any) -> Any:
        return _clamp(value, 0, 100)

    @field_validator("recurring_goal", "growth_edge")
    @classmethod
    def _tidy(cls, value: str) -> str:
        return words_or_blank(value)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def confidence(self) -> dict[str, str]:
        """One confidence per OCEAN score; never above low for an estimate from text."""
        return {trait: BIG_FIVE_NOTE for trait in TRAITS}


# -- plasticity -------------------------------------------------------------------------------


class Plasticity(Draft):
    mi_process: MiProcess
    grow_phase: GrowPhase
    directiveness: Directiveness
    advice_mode: AdviceMode
    tone: list[Tone] = Field(min_length=1, max_length=2)

    @field_validator("tone")
    @classmethod
    def _distinct(cls, value: list[Tone]) -> list[Tone]:
        return list(dict.fromkeys(value))


# -- stability --------------------------------------------------------------------------------


class CrisisResource(Compact):
    text: str
    markers: list[str] = Field(min_length=1, description="Strings a reply must contain to carry this resource.")


class Stability(Draft):
    """The model's read of the main risk (one item, flat), and everything safety-critical,
    written by the check: a tier never below guard's, required and blocked actions, the
    crisis resource."""

    domain: RiskDomain
    severity: Score
    detectability: Score = Field(description="5 = hardest to notice in time.")
    reversibility: Score = Field(description="5 = hardest to undo.")
    tier: SkipJsonSchema[Tier | None] = Field(None, description="Never lower than guard's; set by the check.")
    guard_tier: SkipJsonSchema[Tier | None] = None
    model_tier: SkipJsonSchema[Tier | None] = Field(None, description="What the risk read alone implies, uncapped.")
    shadow_hits: SkipJsonSchema[list[GuardHit]] = Field(
        default_factory=list, description="Guard rules that matched shadow's goals and commitments."
    )
    required: SkipJsonSchema[list[RequiredAction]] = Field(default_factory=list)
    blocked: SkipJsonSchema[list[BlockedAction]] = Field(default_factory=list)
    crisis_resource: SkipJsonSchema[CrisisResource | None] = None
    locale: SkipJsonSchema[Locale | None] = None

    @field_validator("severity", "detectability", "reversibility", mode="before")
    @classmethod
    def _score(cls, value: Any) -> Any:
        return _clamp(value, 1, 5)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def product(self) -> int:
        """Severity x detectability x reversibility, 1..125: computed, never trusted from a model."""
        return self.severity * self.detectability * self.reversibility

    @model_validator(mode="after")
    def _floor(self) -> Stability:
        if self.tier is None:
            return self  # the model's read, before the check has written the safety fields
        if self.guard_tier is not None and tier_rank(self.tier) < tier_rank(self.guard_tier):
            raise ValueError(f"tier {self.tier} is below guard's {self.guard_tier}")
        missing = [a for a in UNIVERSAL_BLOCKED if a not in self.blocked]
        if missing:
            raise ValueError(f"blocked actions must include {', '.join(missing)}")
        if tier_rank(self.tier) >= tier_rank("high") and self.crisis_resource is None:
            raise ValueError(f"tier {self.tier} needs a crisis resource")
        return self


# -- conflicts (function) ---------------------------------------------------------------------


class Conflict(Compact):
    rule: str
    parties: list[str]
    winner: str = Field(description="The party of highest precedence.")
    detail: str
    resolution: str


class Plan(Compact):
    """What the merged reply must honour: the specialists' outputs after every resolution."""

    tier: Tier
    locale: Locale
    required: list[RequiredAction]
    must_avoid: list[BlockedAction]
    crisis_resource: CrisisResource | None
    correction: str | None = Field(
        None, description="A sentence the merged reply must carry, correcting the early one."
    )
    tone: list[Tone]
    directiveness: Directiveness
    advice_mode: AdviceMode
    mi_process: MiProcess
    grow_phase: GrowPhase
    stage: Stage | None
    stated_goal: str | None
    revealed_priority: str | None
    growth_edge: str | None
    follow_through_pct: int | None = Field(None, ge=0, le=100)
    injection: bool = False
    missing: list[str] = Field(default_factory=list)
    # What a composed merged reply is built from (compose.py), and the voice it speaks in.
    pattern: Pattern | None = None
    kept_commitment: bool = Field(False, description="Shadow records a commitment kept this turn.")
    length: Literal["brief", "detailed"] = Field("detailed", description="Persona's and plasticity's read.")
    directness: Literal["direct", "gentle"] = Field("gentle", description="Persona's and plasticity's read.")


class Resolution(Compact):
    precedence: list[str]
    conflicts: list[Conflict]
    plan: Plan


# -- synth (final reply) ----------------------------------------------------------------------

REPLY_CHARS = 240


class Synth(Draft):
    used: list[Entry] = Field(max_length=7, json_schema_extra={"minItems": 1, "maxItems": 4})
    reply: str = Field(min_length=10, max_length=900, json_schema_extra=text_field(REPLY_CHARS, min_chars=20))
    source: SkipJsonSchema[Source] = "generated"
    available: SkipJsonSchema[list[str] | None] = Field(
        None, description="Entries that exist on this turn's blackboard; set by the check."
    )
    tier: SkipJsonSchema[Tier | None] = None
    rejected: SkipJsonSchema[list[str]] = Field(default_factory=list, description="Why a generated reply was not used.")

    @field_validator("used")
    @classmethod
    def _distinct(cls, value: list[Entry]) -> list[Entry]:
        return list(dict.fromkeys(value))

    @field_validator("reply")
    @classmethod
    def _reply(cls, value: str) -> str:
        return tidy(value, end=".", cut_at=REPLY_CHARS)

    @model_validator(mode="after")
    def _entries_exist(self) -> Synth:
        if self.available is None:
            return self
        unknown = [e for e in self.used if e not in self.available]
        if unknown:
            raise ValueError(f"used entries that do not exist on the blackboard: {', '.join(unknown)}")
        return self
