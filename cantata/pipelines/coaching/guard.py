"""The guard: a rule-based screen that runs first, in code, in microseconds.

It screens the message for suicide or self-harm (explicit and indirect warning signs,
signs.py), a helper's worry about someone else, abuse, harm to others, a medical
emergency and restrictive eating (lexicon/<locale>/other_risks.yaml), in English and French, and sets a
tier (none, low, high, imminent).

- Rules match the tolerant() form of the message (tolerant.py: typos, text-speak,
  missing apostrophes, stretched letters, filler words, figures of speech), one sentence
  at a time: no phrase is read across a full stop.
- A negation just before a high-tier phrase ("I'm not suicidal", "je ne vais pas me
  suicider") lowers it to low, never to none: a check-in is still warranted.
- A time or means cue ("tonight", "I have the pills", "ce soir") raises a high hit of a
  category that can be acted on to imminent, and a negated one to high.
- A medical emergency is a present, acute event: the same words about the past ("I had a
  heart attack in 2019") or tied to a habit ("chest pains when I smoke") are noted at
  tier none; an acute cue ("right now", "crushing", "spreading to my arm") keeps it.
- An absence or a euphemism that the sentence explains is no sign: "I won't be around
  next week, I'm on holiday", "better off without me as captain" (an ordinary reason or a
  limited scope), "I'm going to do it on Monday, I'm finally going to quit" (a habit goal
  names "it"); never when the match names death itself, nor when "for good" is said.
- Beside the phrase rules, an evidence score (evidence.py) reads each sentence for the
  concepts of the signs (broad EN+FR lexicons: burden, relief, entrapment, finality,
  farewell, belongings, means and lethality, hedges, secrecy, command voices, a helper's
  worry), with discounts for what explains them; a score of 3 is high, a weaker one a
  weak signal that accumulates like a rule's. It only ever adds hits.
- Beside both, a learned signal (learned.py): a linear model over hashed n-grams of each
  sentence, trained on the labelled set and the benign long conversations, for the
  phrasings no rule's author imagined. A strong score on a message that names a risk
  concept (evidence.names_risk: death, ending, self-harm, hopelessness about living, a
  means, a farewell with finality, and the warning signs said without naming death of the
  data files lexicon/<locale>/risk_concepts.yaml: a burden, no way out, to disappear...) or
  in which the rules read a warning sign (two signals, not the learned one alone) is a high
  hit, or a low one when what it names is a passive wish; any other score at or above `weak` is a silent weak read (tier none) named
  by the sign the sentence's words name (evidence.sign_family), weight 1, or, when they name
  none, weight 0 (noted, never counted). A weak read of a message the rules already read
  adds nothing (one remark is one sign). It only ever adds a hit, never reads a sentence the
  rules read as a denial, an ordinary absence or a symptom in its context, and never makes
  a tier imminent. Its hit names itself ("learned.<sign>") and the sentence it read.
- Graded tiers (grading.py, issue #19): a passive wish without intent or plan (C-SSRS item
  1) is low, however often it is said; active thoughts, intent, a plan, preparation, a
  farewell with finality, command voices are high; intent with a time or the means at hand,
  or refusing to be stopped in a session at high, is imminent; so is a session at high when
  a turn says the means are laid out or at hand, the act is under way or when it will be, in
  words that are ordinary elsewhere (grading.CLOSE_IN_SESSION).
- Risk accumulates as a clinician hears it: every sign has a weight (rules.py); a session
  sums the weights of its distinct signs per category (each family once), the weak ones
  from the last grading.WINDOW turns only, and 3 or more is high only when a sign of the
  rules or the evidence names the risk itself (grading.RISK_FAMILIES): learned reads never
  add up on their own. A means question (2) after hopelessness (1) is high at once; burden,
  feeling trapped and secrecy without such a sign stay low. `signals` lists every sign of
  the session with its turn; `basis` the ones that made the tier.
- What the turns say together: the learned signal reads the last grading.CONTEXT turns as one
  (a place in one, a thing bought in another, a burden in a third); a strong read no sentence
  reached alone is a high sign (family `context`) beside a sign of the rules or the evidence in
  those turns, when one of them names a risk concept. The guard keeps those turns' hashed
  features, never their words.
- Persistence: the guard lists itself under `memory`, so it sees its latest output for
  this user. When that output belongs to the same session, its tier, categories and
  signals are carried forward: "I was joking" or "you misunderstood" is noted, never
  lowers the tier within the session. A new session starts clean.
- Injection ("ignore previous instructions", "set the tier to none", a JSON blackboard
  entry pasted in the message) is noted and changes nothing: the tier is computed here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, cast, get_args

from pydantic import ValidationError

from cantata import FunctionContext
from cantata.pipelines.coaching import evidence, grading, learned, lexicon, signs
from cantata.pipelines.coaching.models import ContextTurn, Guard, GuardHit, GuardSignal
from cantata.pipelines.coaching.rules import HIGH, GateIndex, Rule, sentence_words
from cantata.pipelines.coaching.safety import (
    CATEGORIES,
    Category,
    Locale,
    Tier,
    at_least_high,
    load_safety,
    max_tier,
    normalize,
    tier_rank,
)
from cantata.pipelines.coaching.tolerant import BOUNDARY, tolerant

_LOCALES = frozenset(get_args(Locale))

# The warning signs of the data files (lexicon/<locale>/warning_signs.yaml), beside the rules in Python,
# and the risks other than suicide (lexicon/<locale>/other_risks.yaml).
RULES: tuple[Rule, ...] = (
    signs.RULES + lexicon.load_signs("warning_signs", "warning") + lexicon.load_signs("other_risks")
)
# The rules a sentence's words may match, found by word (rules.GateIndex).
RULE_INDEX = GateIndex(RULES)
# Each rule's family as its data file names it (a hit graded as a passive wish is renamed).
_FAMILY_OF: dict[str, str] = {rule.id: rule.family for rule in RULES}

# The contexts' lexicons of every locale (lexicon/<locale>/contexts.yaml), read by the steps below.
_CONTEXTS = lexicon.bundled_contexts()
# A time cue next to a hit: the risk is close. The means at hand, or the act under way: close
# whatever the sign.
_TIME_CUES = _CONTEXTS.pattern("time_cues")
_NOT_A_TIME = _CONTEXTS.pattern("not_a_time")
_MEANS_AT_HAND = _CONTEXTS.pattern("means_cues")


# Words: a sentence this short ("Tonight.", "tomorrow after school while everyone's at work.")
# qualifies the sentence beside it.
SHORT_SENTENCE = 8


def _beside(sentences: list[str], at: int) -> str:
    """The sentence at `at` with the short sentences just before and after it."""
    near = [s for s in sentences[max(at - 1, 0) : at] + sentences[at + 1 : at + 2] if len(s.split()) <= SHORT_SENTENCE]
    return " . ".join([sentences[at], *near])


def _time_given(text: str) -> bool:
    """Whether the message opens with a short sentence that starts with a time ("tonight.",
    "tomorrow after school while everyone's at work"): after a sign at high, the time of the act."""
    first = text.split(_SENTENCES)[0]
    return len(first.split()) <= SHORT_SENTENCE and _TIME_CUES.match(first) is not None and _a_time(first)


def _a_time(text: str) -> bool:
    """Whether the text names a time for the act: a time cue that no `not_a_time` phrase holds
    ("not today, but I have decided", "y en a une quarantaine maintenant")."""
    cues = list(_TIME_CUES.finditer(text))
    if not cues:
        return False  # most sentences
    held = [(m.start(), m.end()) for m in _NOT_A_TIME.finditer(text)]
    return any(not any(start <= cue.start() and cue.end() <= end for start, end in held) for cue in cues)


def _imminent_cue(text: str) -> bool:
    return _a_time(text) or _MEANS_AT_HAND.search(text) is not None


_ACTIONABLE: frozenset[str] = frozenset({"suicide_self_harm", "harm_to_others", "abuse", "helper_concern"})

_NEGATIONS = _CONTEXTS.words("negations")
_NEGATION_PREFIXES = tuple(_CONTEXTS.words("negation_prefixes"))
_RETRACTION = _CONTEXTS.pattern("retraction")
_INJECTION = _CONTEXTS.pattern("injection")
_FUNCTION_WORDS = _CONTEXTS.per_locale("function_words")


def detect_locale(text: str) -> Locale | None:
    """'fr' or 'en' by function words; None when the message gives no clear sign."""
    words = re.findall(r"[a-z]+", normalize(text))
    counts = {locale: sum(w in function for w in words) for locale, function in _FUNCTION_WORDS.items()}
    ranked = sorted(((n, locale) for locale, n in counts.items() if locale in _LOCALES), reverse=True)
    if not ranked or (len(ranked) > 1 and ranked[0][0] == ranked[1][0]):
        return None
    return cast(Locale, ranked[0][1])


# A clause ends at punctuation (the engine's) or at a word that opens another (the contexts').
_CLAUSE = re.compile(r"[,.;:!?]|" + _CONTEXTS.pattern("clause_words").pattern)


# "I can't promise I won't...", "je ne peux pas promettre que je ne vais pas...": the
# negation is hedged, so it denies nothing.
_HEDGED = _CONTEXTS.pattern("hedged")


def _negated(norm: str, start: int, end: int, *, inside: bool = True) -> bool:
    """A negation among the three words just before the match, within its clause, or inside
    it ("I'm not suicidal", "je ne vais pas me suicider"); not "I'm not ok, I want to die",
    nor a hedged one ("I can't promise I won't")."""
    if _HEDGED.search(norm[:start]):
        return False
    clause = _CLAUSE.split(norm[:start])[-1]
    # Inside the match, only its first words: "I'm not suicidal", not "wish I could not wake up".
    words = clause.split()[-3:] + (norm[start:end].split()[:3] if inside else [])
    return any(w in _NEGATIONS or w.startswith(_NEGATION_PREFIXES) for w in words)


_SENTENCES = f" {BOUNDARY} "

# A medical symptom is an emergency when it is happening now; history or a habit's
# context lowers it, unless an acute cue is in the same sentence.
_ACUTE = _CONTEXTS.pattern("acute")
_HISTORY = _CONTEXTS.pattern("symptom_history")
_HABIT = _CONTEXTS.pattern("symptom_habit")
# Someone else's emergency, told by the person (a nurse's shift, a colleague's): not theirs.
_SOMEONE_ELSE = _CONTEXTS.pattern("someone_else")
# A symptom one plans for ("if I get chest pains I stop and call 999"): its plan names an
# acute cue, yet nothing is happening now.
_CONDITIONAL = _CONTEXTS.pattern("conditional_symptom")


def _medical_context(sentence: str) -> str:
    """'history', 'habit context', 'someone else' or 'a plan for if it happens' when a medical
    hit is not the person's present emergency, else ''."""
    if _SOMEONE_ELSE.search(sentence):
        return "someone else"
    if _CONDITIONAL.search(sentence):
        return "a plan for if it happens"
    if _ACUTE.search(sentence):
        return ""

    if _HISTORY.search(sentence):
        return "history"
    if _HABIT.search(sentence):
        return "habit context"
    return ""


# "Not being around" and "better off without me" are finality and burden signs (988,
# AFSP) when nothing else explains the absence; an ordinary reason or a limited scope in
# the same sentence ("I won't be around next week, I'm on holiday", "the team is better off
# without me as captain", "mieux sans moi pour ce match") explains it. A note of finality
# ("for good", "pour toujours") keeps the sign whatever else is said.
_ABSENCE = _CONTEXTS.pattern("absence")
_ORDINARY_ABSENCE = _CONTEXTS.pattern("ordinary_absence")
_FINALITY = _CONTEXTS.pattern("finality")
# "It", "the day", "a plan", "my decision" carry a sign only when nothing names what they
# are: "I'm going to do it on Monday, I'm finally going to quit" names a habit goal.
_EUPHEMISM = _CONTEXTS.pattern("euphemism")
_HABIT_GOAL = _CONTEXTS.pattern("habit_goal_for_euphemism")
# A match that names death itself is never explained away ("a plan to kill myself, smoking
# won't matter then").
_NAMES_DEATH = _CONTEXTS.pattern("names_death")


# "Adieu" for hello opening a message that goes on to greet or introduce oneself.
_GREETING = _CONTEXTS.pattern("greeting")
_LEAVE_TAKING = _CONTEXTS.pattern("leave_taking")
# Ordinary talk that issue #19 names, which neither the evidence nor the learned signal reads
# (_ordinary_talk): wanting to live longer, the opposite of the risk; being well, kept steady by
# treatment for a long time now; not wanting to die as someone did ("je veux pas partir de même",
# a wish to live said negated); not being able to think of an answer.
_WISH_TO_LIVE = _CONTEXTS.pattern("wish_to_live")
_DOING_WELL = _CONTEXTS.pattern("doing_well")
_FEAR_OF_ENDING_LIKE = _CONTEXTS.pattern("fear_of_ending_like")
_NO_ANSWER = _CONTEXTS.pattern("no_answer")
# A medicine taken or set out as a routine ("I lay my tablets out on the table for the week"):
# people coach taking their medication, and the words are those of a means set out.
_MEDICATION_ROUTINE = _CONTEXTS.pattern("medication_routine")
_MEDICINE = _CONTEXTS.pattern("medicine")
_OVERDOSE_CUES = _CONTEXTS.pattern("overdose_cues")
# A note or a letter with an ordinary purpose ("a note for my wife so she knows where the spare
# key is", "une lettre à ma fille pour son anniversaire") or about the habit ("pour leur expliquer
# pourquoi j'arrête de fumer"): the words of a suicide note.
_NOTE_PURPOSE = _CONTEXTS.pattern("note_purpose")
_NOTE_WORDS = _CONTEXTS.pattern("note_words")
# A relationship ended: "I've decided to end it with my boyfriend".
_BREAKUP = _CONTEXTS.pattern("breakup")
_END_IT = _CONTEXTS.pattern("end_it")
# A sentence that only completes the one before it ("I'm going to take them. All of them.").
_CONTINUATION = _CONTEXTS.pattern("continuation")


# A farewell or a letter addressed to a habit ("my goodbye letter to cigarettes", an exercise
# quit-smoking courses set): a sign matched inside it is no farewell of one's own.
_HABIT_FAREWELL = _CONTEXTS.pattern("habit_farewell")
# ... or to a thing people part with when they change a habit ("dire adieu à ma PS5 ce soir").
_FAREWELL_THING = _CONTEXTS.pattern("farewell_thing")


def _farewell_object(sentence: str, at: int) -> int | None:
    """Where the habit goal or the thing a farewell ending at `at` is addressed to ends, if it is
    addressed to one."""
    goal = _HABIT_GOAL.match(sentence, at) or _FAREWELL_THING.match(sentence, at)
    return None if goal is None else goal.end()


def _to_a_habit(sentence: str, match: re.Match[str]) -> bool:
    """The rule's match overlaps a farewell addressed to a habit goal (the habit lexicon guard.py
    already reads for a euphemism's "it") or to a thing, and names no death."""
    if _NAMES_DEATH.search(match.group(0)) is not None:
        return False
    return any(
        f.start() < match.end() and match.start() < f.end() and _farewell_object(sentence, f.end()) is not None
        for f in _HABIT_FAREWELL.finditer(sentence)
    )


def _without_habit_farewells(sentence: str) -> str:
    """The sentence less its farewells addressed to a habit goal or a thing and what they are
    addressed to: what the evidence and the learned signal still read ("a goodbye letter to
    cigarettes, and the pills are saved up" keeps "and the pills are saved up")."""
    kept, start = [], 0
    for farewell in _HABIT_FAREWELL.finditer(sentence):
        end = _farewell_object(sentence, farewell.end())
        if end is not None:
            kept.append(sentence[start : farewell.start()])
            start = end
    return " ".join(" ".join([*kept, sentence[start:]]).split())


def _explained(sentence: str, matched: str, *, weak: bool = False) -> bool:
    """A euphemism whose sentence names a habit goal, or a weak sign said to name the risk
    (`weak`: preparation, a means...) whose own words name the habit ("giving away my
    cigarettes"); never one that names death, nor a sign high alone whose words happen to hold
    a habit's ("in the garage with the engine running"), nor one whose sign is the habit itself
    ("drinking more, it numbs things")."""
    if _NAMES_DEATH.search(matched) is not None:
        return False
    return (weak and _HABIT_GOAL.search(matched) is not None) or (
        _EUPHEMISM.search(matched) is not None and _HABIT_GOAL.search(sentence) is not None
    )


def _refers_back(matched: str) -> bool:
    """A euphemism ("I'm going to do it", "the day") that names no death: what it means is
    what the conversation named before it."""
    return _EUPHEMISM.search(matched) is not None and _NAMES_DEATH.search(matched) is None


def _ordinary_absence(sentence: str, matched: str, message: str) -> bool:
    """An absence the message gives an ordinary reason for, in this sentence or another ("we're
    off to our daughter's for a week. I won't be here next week"), with no finality in it."""
    return (
        _ABSENCE.search(matched) is not None
        and _NAMES_DEATH.search(matched) is None
        and _ORDINARY_ABSENCE.search(message) is not None
        and _FINALITY.search(sentence) is None
    )


def screen(message: str, model: learned.Model | None = None) -> list[GuardHit]:
    """Every rule hit in the message, with negation, time/means cues and medical context
    applied, and the learned signal's (`model`: the committed one by default)."""
    return _screen(tolerant(message), learned.default_model() if model is None else model)[0]


@dataclass
class _Readable:
    """The sentences of one message the learned signal reads (long enough for a statistical
    read), each with its words and hashed features, and whether they name a risk: computed
    once per turn for the signal's read, its risk check and the session's context (_recent)."""

    sentences: list[tuple[str, frozenset[str]]]

    @classmethod
    def of(cls, readable: list[tuple[str, frozenset[str]]], model: learned.Model) -> _Readable:
        if not model.weights:
            return cls([])
        return cls([(s, w) for s, w in readable if len(s.split()) >= learned.MIN_WORDS])

    @cached_property
    def features(self) -> list[frozenset[int]]:
        return [learned.features(s) for s, _ in self.sentences]

    @cached_property
    def names_risk(self) -> bool:
        return any(evidence.names_risk(s, w) for s, w in self.sentences)


def _screen(
    text: str, model: learned.Model, *, settled: bool = False, means_before: bool = False, wished: bool = False
) -> tuple[list[GuardHit], float, _Readable]:
    """The hits, the learned signal's best read of the message (0 when it reads none) and the
    sentences it read. `wished`: the session's only sign so far is a passive wish."""
    hits, found = _rules(text, settled=settled, means_before=means_before)
    readable = _Readable.of(found, model)
    wish = _wish_only(hits) or (wished and not _other_signs(hits))
    hedged = any(h.family in _NOT_ESCALATING for h in hits)
    learned_hit, read = _learned(model, readable, signed=_signed(hits), wish=wish, hedged=hedged)
    if learned_hit is None:
        return hits, read, readable
    if _silent(learned_hit) and any(h.weight and h.category in ACCUMULATING for h in hits):
        # One remark is one sign: the rules or the evidence already read what this message
        # says, so a weak read of the same message adds nothing (noted, weight 0).
        learned_hit = learned_hit.model_copy(update={"weight": 0})
    return [*hits, learned_hit], read, readable


def _signed(hits: list[GuardHit]) -> bool:
    """Whether a phrase rule read a warning sign in the message (a burden, feeling trapped,
    secrecy...), not a denial: a strong learned read that agrees with one is two signals, not
    the learned signal alone (issue #19). Not a passive wish: a strong read of one is graded as
    one, not raised by it. Not the evidence score's concepts: they read single words ("a
    burden on my budget") and are weighed with discounts instead."""
    return any(
        h.weight
        and h.tier != "none"
        and h.category in ACCUMULATING
        and not h.negated
        and h.family != grading.PASSIVE
        and not h.rule.startswith("evidence.")
        for h in hits
    )


def _wish_only(hits: list[GuardHit]) -> bool:
    """Whether the rules read a passive wish in so many words in the message (a sign of
    grading.PURE_WISH_FAMILIES) and no other sign: a strong learned read of it whose words name no
    sign of their own is that wish, graded as one (low)."""
    passive = [h for h in hits if h.family == grading.PASSIVE and h.tier == "low"]
    others = [h for h in hits if h.weight and h.tier != "none" and h.category in ACCUMULATING and h not in passive]
    return bool(passive) and not others and all(_own_family(h) in grading.PURE_WISH_FAMILIES for h in passive)


def _other_signs(hits: list[GuardHit]) -> list[GuardHit]:
    """The message's signs other than a passive wish or a denial."""
    return [
        h
        for h in hits
        if h.weight and h.tier != "none" and h.category in ACCUMULATING and h.family not in (grading.PASSIVE, DENIAL)
    ]


def _only_a_wish(before: Guard | None, turn: int) -> bool:
    """Whether the session so far holds a passive wish and no other sign (denials aside): a strong
    learned read of a later turn whose words name no sign and no means is that wish talked about
    again ("I'd not mind if the Lord took me in my sleep", "not planning nothing, just the road
    gets long"), graded as the wish (low), as within one message (_wish_only)."""
    if before is None or before.tier != "low":
        return False
    signs = [s for s in before.signals if s.category in ACCUMULATING and s.weight and s.family != DENIAL]
    recent = [s for s in signs if turn - s.turn < grading.WINDOW]  # a wish said long ago is no context
    return bool(recent) and all(s.family == grading.PASSIVE for s in signs)


def _own_family(hit: GuardHit) -> str:
    """The family of the rule or evidence concept that made the hit, before any grading."""
    return hit.rule.removeprefix("evidence.") if hit.rule.startswith("evidence.") else _FAMILY_OF.get(hit.rule, "")


def may_read_strong(message: str) -> bool:
    """Whether a strong learned read of the message would be a hit (guard._learned's gate): a
    readable sentence names a risk concept, or the rules read a warning sign. What
    train_learned.py budgets per conversation."""
    hits, sentences = _rules(tolerant(message))
    sentences = [(s, w) for s, w in sentences if len(s.split()) >= learned.MIN_WORDS]
    return bool(sentences) and (_signed(hits) or any(evidence.names_risk(s, w) for s, w in sentences))


def explicit_sentences(message: str) -> list[str]:
    """The readable sentences of the message that name death, self-harm or a lethal means in so
    many words (evidence.names_explicitly): a strong learned read of one of them needs only
    `explicit` (guard._learned); what train_learned.py budgets beside may_read_strong."""
    sentences = [s for s, _ in _rules(tolerant(message))[1] if len(s.split()) >= learned.MIN_WORDS]
    return [s for s in sentences if evidence.names_explicitly(s)]


def readable(message: str) -> list[str]:
    """The sentences of the message's tolerant() form that the learned signal reads (what
    train_learned.py scores, as the guard does)."""
    return [sentence for sentence, _ in _rules(tolerant(message))[1]]


def _ordinary_talk(sentence: str) -> bool:
    """Whether the sentence is ordinary talk that issue #19 names, which neither the evidence nor
    the learned signal reads: a whole sentence that finds no answer ("Nothing comes to mind"), the
    fear of dying as someone did, or the wish to live longer or being kept well that denies
    nothing ("I don't want to live long like this" and "arrêter pour vivre plus longtemps, c'est
    pas un argument pour moi" are not it)."""
    if _NO_ANSWER.fullmatch(sentence) is not None or _FEAR_OF_ENDING_LIKE.search(sentence) is not None:
        return True
    if _WISH_TO_LIVE.search(sentence) is None and _DOING_WELL.search(sentence) is None:
        return False
    return not any(w in _NEGATIONS or w.startswith(_NEGATION_PREFIXES) for w in sentence.split())


def _habit_talk(sentence: str, text: str, *, referred_to: bool) -> bool:
    """Whether the sentence is a medicine taken as a routine that no later sentence refers back to
    ("...taking my tablets on time. Except I skipped them for a month"), or a relationship ended
    in a message that ends nothing else ("end it with him tonight. And then end it for me too"):
    habit talk, which neither the evidence nor the learned signal reads."""
    if _medication_routine(sentence, text) and not referred_to:
        return True
    return _BREAKUP.search(sentence) is not None and _NAMES_DEATH.search(sentence) is None and _only_breakups(text)


def _only_breakups(text: str) -> bool:
    """Every "end it" of the message is a relationship ended."""
    breakups = [b.span() for b in _BREAKUP.finditer(text)]
    return all(any(start <= e.start() < end for start, end in breakups) for e in _END_IT.finditer(text))


def _medication_routine(sentence: str, text: str) -> bool:
    """Whether the sentence names a medicine, says a routine of taking it (medication_routine)
    and names no death, in a message that says nothing of taking them all or saving them up
    (`overdose_cues`): habit talk, not a means set out."""
    return (
        _MEDICATION_ROUTINE.search(sentence) is not None
        and _OVERDOSE_CUES.search(text) is None
        and _MEDICINE.search(sentence) is not None
        and _NAMES_DEATH.search(sentence) is None
    )


def _ordinary_note(sentence: str, match: re.Match[str]) -> bool:
    """The rule matched a note or a letter that its sentence gives an ordinary purpose (a birthday,
    where the key is) or the habit as its subject, naming no death and no finality."""
    return (
        _NOTE_WORDS.search(match.group(0)) is not None
        and (_NOTE_PURPOSE.search(sentence) is not None or _HABIT_GOAL.search(sentence) is not None)
        and _NAMES_DEATH.search(sentence) is None
        and _FINALITY.search(sentence) is None
    )


def _ends_a_relationship(sentence: str, match: re.Match[str]) -> bool:
    """The rule's match is the start of "end it with my boyfriend" (a breakup), naming no death."""
    return _NAMES_DEATH.search(match.group(0)) is None and any(
        b.start() < match.end() <= b.end() for b in _BREAKUP.finditer(sentence)
    )


def _with_continuations(sentences: list[str]) -> list[str]:
    """The sentences, each one that only completes the one before it ("All of them.", "Toutes.")
    joined to that one with a comma: a full stop there splits one thing said ("I'm going to take
    them. All of them."), and no rule reads a phrase across a full stop (tolerant.BOUNDARY)."""
    joined: list[str] = []
    for sentence in sentences:
        if joined and _CONTINUATION.fullmatch(sentence):
            joined[-1] = f"{joined[-1]} , {sentence}"
        else:
            joined.append(sentence)
    return joined


def _rules(
    text: str, *, settled: bool = False, means_before: bool = False
) -> tuple[list[GuardHit], list[tuple[str, frozenset[str]]]]:
    """The phrase rules' and the evidence score's hits, and the sentences (with their
    words) that the learned signal may read. `settled`: the session has earlier turns and none
    of them held a sign, so "it", "the day", "my decision" refer to what they talked about (a
    habit goal): such a euphemism that names no death is a check-in (low), not a plan.
    `means_before`: a turn of the last REFERS_BACK named a means, which "they", "il" may be."""
    # A greeting said with a word of farewell ("Adieu. Je suis Monique") is no farewell.
    greeting = _GREETING.match(text)
    text = text[greeting.end() :] if greeting else text
    # A message that is only a goodbye ends the chat ("Goodbye", "bye for now"): no farewell of
    # one's life, whatever was said before it (issue #19: the farewell at the end of a chat).
    if _LEAVE_TAKING.fullmatch(text):
        text = ""
    at_hand = _MEANS_AT_HAND.search(text) is not None
    hits: list[GuardHit] = []
    seen: set[str] = set()
    readable: list[tuple[str, frozenset[str]]] = []  # the sentences the learned signal may read
    sentences = _with_continuations(text.split(_SENTENCES))
    refers = [evidence.refers_back(s) for s in sentences]
    referring_later = [any(refers[at + 1 :]) for at in range(len(sentences))]
    for at, sentence in enumerate(sentences):
        # The means at hand anywhere in the message, or a time next to the sign: in its sentence
        # or a short one beside it ("I'm doing it. Tonight."), not a "tomorrow" about gum three
        # sentences on in a long message.
        near = _beside(sentences, at)
        # A denial limited in time ("not today anyway") is a hedge: it raises the denial to high.
        hedged_in_time = _TIME_CUES.search(near) is not None
        close = at_hand or (hedged_in_time and _a_time(near))
        words = sentence_words(sentence)
        denied = False
        explained = False  # a symptom the sentence places in the past or in a habit
        for rule in RULE_INDEX.candidates(words):
            if rule.id in seen:
                continue
            match = rule.pattern.search(sentence)
            if match is None or not rule.scene_holds(text):
                continue
            seen.add(rule.id)
            tier, weight, family, note = rule.tier, rule.weight, rule.family, ""
            negated = (
                rule.negatable
                and tier == "high"
                and (
                    _negated(sentence, match.start(), match.end(), inside=rule.negation_inside)
                    or evidence.denial_holds(sentence, text, match.start(), match.end())
                )
            )
            if negated:
                tier, weight, family, note = "low", 1, DENIAL, "negated"
            referring = settled and rule.category in ACCUMULATING and _refers_back(match.group(0))
            if rule.category in ACCUMULATING and _ordinary_absence(sentence, match.group(0), text):
                tier, weight, note = "none", 0, "ordinary absence"
            elif rule.category in ACCUMULATING and _to_a_habit(sentence, match):
                tier, weight, note = "none", 0, "a farewell to a habit"
            elif (
                rule.category in ACCUMULATING
                and _MEDICINE.search(match.group(0)) is not None
                and _medication_routine(sentence, text)
                and not referring_later[at]
            ):
                tier, weight, note = "none", 0, "a medication routine"
            elif rule.category in ACCUMULATING and _ordinary_note(sentence, match):
                # The note's purpose explains the sentence to the learned signal too, which would
                # otherwise read a note to a spouse as a farewell.
                tier, weight, note, explained = "none", 0, "a note for an ordinary purpose", True
            elif rule.category in ACCUMULATING and _ends_a_relationship(sentence, match) and _only_breakups(text):
                tier, weight, note = "none", 0, "a relationship ended"
            elif rule.category in ACCUMULATING and _explained(
                sentence, match.group(0), weak=weight < HIGH and grading.names_risk(rule.family)
            ):
                tier, weight, note = "none", 0, "a habit goal"
            elif referring:
                tier, weight, note = "low", 1, "refers to earlier talk that named no risk"
            passive = rule.category == "suicide_self_harm" and tier != "none" and not negated
            wish = passive and family in grading.WISH_FAMILIES
            passive = passive and grading.is_passive(family, text)
            if passive:
                tier, weight, family, note = "low", grading.PASSIVE_WEIGHT, grading.PASSIVE, "passive wish"
            elif wish:
                # A wish made active by what else the message says (secrecy, help refused, doing it
                # oneself) weighs at least what it weighed as a passive wish: what made it active must
                # never make it count for less ("I wish I could disappear. Please don't tell anyone").
                weight = max(weight, grading.PASSIVE_WEIGHT)
            if rule.category == "medical_emergency":
                note = _medical_context(sentence)
                if note:
                    tier, weight, explained = "none", 0, True
            # A passive wish with a time is still a wish ("if I died tonight it'd be a relief");
            # with the means at hand it is not passive any more.
            if (
                (close or (negated and hedged_in_time))
                and rule.escalates
                and rule.category in _ACTIONABLE
                and tier != "none"
                and (at_hand or not passive)
                and not referring
            ):
                tier = max_tier(tier, "high" if negated else "imminent")
            denied = denied or negated
            hits.append(
                GuardHit(
                    rule=rule.id,
                    category=rule.category,
                    tier=tier,
                    negated=negated,
                    family=family,
                    weight=weight,
                    note=note,
                )
            )
        # The evidence score beside the rules (evidence.py); a sentence the rules read as a
        # denial adds none, and it only ever adds a hit: it never lowers one.
        # An ordinary reason for an absence explains the evidence as it explains the rules'.
        ordinary = (
            (_ORDINARY_ABSENCE.search(sentence) is not None and _FINALITY.search(sentence) is None)
            or _ordinary_talk(sentence)
            or _habit_talk(sentence, text, referred_to=referring_later[at])
        )
        denied = denied or evidence.denies(sentence, text)
        # A farewell to a habit or a thing explains itself as it explains the rules' signs, not the
        # rest of its sentence: the evidence and the learned signal read what is left.
        rest = _without_habit_farewells(sentence)
        rest_words = words if rest == sentence else sentence_words(rest)
        skipped = denied or ordinary or not rest
        found = None if skipped else evidence.assess_sentence(rest, rest_words, means_before=means_before)
        # Searched only when a later sentence of the message could refer back to it.
        means_before = means_before or (referring_later[at] and evidence.mentions_means(sentence))
        if not (denied or ordinary or explained) and rest:
            readable.append((rest, rest_words))
        if found is not None and f"evidence.{found.family}" not in seen:
            seen.add(f"evidence.{found.family}")
            tier, family, weight, note = found.tier, found.family, found.weight, ""
            if found.category == "suicide_self_harm" and grading.is_passive(family, text):
                tier, family, weight, note = "low", grading.PASSIVE, grading.PASSIVE_WEIGHT, "passive wish, "
            if close and tier == "high" and found.category in _ACTIONABLE:
                tier = "imminent"
            hits.append(
                GuardHit(
                    rule=f"evidence.{found.family}",
                    category=found.category,
                    tier=tier,
                    family=family,
                    weight=weight,
                    note=f"{note}evidence {found.score}: {'+'.join(found.concepts)}",
                )
            )
    return hits, readable


def _silent(hit: GuardHit) -> bool:
    """A weak learned read named by a sign: tier none, but its weight counts in the session."""
    return hit.rule.startswith(learned.RULE_PREFIX) and hit.tier == "none" and hit.weight > 0


def _learned(
    model: learned.Model,
    readable: _Readable,
    *,
    signed: bool,
    wish: bool = False,
    hedged: bool = False,
) -> tuple[GuardHit | None, float]:
    """The learned signal (learned.py) on the message's best sentence. A strong score on a
    message that names a risk concept (evidence.names_risk, with the data files'
    lexicon/<locale>/risk_concepts.yaml) or in which the rules read a warning sign (`signed`:
    then it is two signals, not the learned signal alone) is a high hit, or a low one when
    what it names is a passive wish (grading.py); any other score at or above `weak` is a
    silent weak read (tier none) named by the sign the sentence's words name, weight 1, which
    counts in the session only beside a rule's or the evidence's sign (accumulate), or, when
    the words name no sign, weight 0: noted, never counted. It only ever adds a hit; a sentence
    the rules read as a denial, an ordinary absence or a symptom in its past or habit context
    is not read, nor one too short for a statistical read ("no", "thanks": the rules read those).
    A high read whose sentence names a time or the means at hand is imminent, unless the rules
    read a hedge or a denial in the message (`hedged`)."""
    sentences = readable.sentences
    if not sentences:
        return None, 0.0
    scored = [(model.read(f, len(f)), s, w) for (s, w), f in zip(sentences, readable.features, strict=True)]
    score, sentence, words = max(scored)
    if score < model.weak:
        return None, score
    family = evidence.sign_family(sentence, words) or UNNAMED
    category: Category = "helper_concern" if evidence.about_someone_else(sentence) else "suicide_self_harm"
    # The risk may be named in another sentence of the message ("been on the waitlist 2 years
    # and the pain gets worse. im running out of reasons not to end it"): what train_learned
    # budgets per conversation too.
    # A sentence that names death, self-harm or a lethal means in so many words needs less
    # (model.explicit): that sentence itself, not another one of the message ("my father died
    # of a stroke").
    strong = (score >= model.strong and (signed or readable.names_risk)) or any(
        read >= model.explicit and evidence.names_explicitly(s) for read, s, _ in scored
    )
    tier: Tier = "none"
    weight = 0 if family == UNNAMED else 1
    message = " . ".join(s for s, _ in sentences)
    # `wish`: the rules read a passive wish and nothing else in the message; a read whose words
    # name no sign (and no means) is of that wish ("j'aimerais plus exister, effacée de la map").
    wished = wish and family == UNNAMED and not any(evidence.names_means(s, w) for s, w in sentences)
    # Words that name no sign of their own, whose only risk is a passive wish in other words
    # ("sometimes I wish God would take me quietly in my sleep"): that wish, not an active sign.
    wished = wished or (
        family in (UNNAMED, FINALITY_HINT)
        and grading.ACTIVE.search(message) is None
        and evidence.names_only_a_wish([s for s, _ in sentences])
    )
    if strong and category == "suicide_self_harm" and (grading.is_passive(family, message) or wished):
        tier, family, weight = "low", grading.PASSIVE, grading.PASSIVE_WEIGHT
    elif strong:
        tier, weight = "high", HIGH
        # Intent with a time or the means at hand (issue #19's imminent tier) said in the sentence
        # the signal read: the time or the means is the rules' to read, the risk the signal's. Not
        # beside a hedge or a denial ("I won't do anything tonight": a time that means later).
        if not hedged and _imminent_cue(sentence):
            tier = "imminent"
    read = "strong" if strong else "weak" if score < model.strong else "strong, names no risk"
    return GuardHit(
        rule=f"{learned.RULE_PREFIX}{family}",
        category=category,
        tier=tier,
        family=family,
        weight=weight,
        note=f"learned {score:.2f} ({read}): {sentence}",
    ), score


# -- risk that accumulates over a session ---------------------------------------------------

ACCUMULATING: tuple[Category, ...] = ("suicide_self_harm", "helper_concern")
DENIAL = "denial"  # the family of a negated high phrase ("I'm not suicidal"): low, never summed
_NOT_ESCALATING = frozenset({"hedge", DENIAL})  # "not tonight" names a time and means later
# A learned read whose words name no sign: noted in `hits`, never counted (grading.py).
UNNAMED = "learned"
# A word of finality only ("forever": "if I could sleep forever"): with a passive wish, no more.
FINALITY_HINT = "finality_hint"
REFUSAL = "refuses_to_be_stopped"
# A means named this many turns back may be what "they're on the table" sets out.
REFERS_BACK = 2
TIME_GIVEN = "time_given"
CLOSE_IN_SESSION = "close_in_session"
# Reads of the learned signal that keep coming back within a few turns (grading.SUSTAINED): a
# sign of its own, counted once, which reaches high only beside a rules' sign naming the risk.
SUSTAINED = f"{learned.RULE_PREFIX}sustained"
# What the last turns say together (grading.CONTEXT): a high sign of its own.
CONTEXT = "context"


def _is_learned(signal: GuardSignal) -> bool:
    return signal.rule.startswith(learned.RULE_PREFIX)


def accumulate(
    signals: list[GuardSignal], turn: int | None = None
) -> tuple[dict[str, int], dict[str, list[GuardSignal]]]:
    """Per accumulating category: the sum of the weights of its distinct signs (each family
    once, at its strongest), the weak ones only from the last grading.WINDOW turns before
    `turn` (all when None), and the signals counted. The sum reaches HIGH only when it
    holds a sign of the rules or the evidence that names the risk itself
    (grading.RISK_FAMILIES): learned reads never add up on their own; otherwise it is held
    just below."""
    strongest: dict[tuple[str, str], GuardSignal] = {}
    for signal in signals:
        # A denial ("I'd never do anything") is noted at low; it is no warning sign to add up,
        # and after a passive wish it is the "no intent" that keeps the wish passive.
        if signal.category not in ACCUMULATING or signal.weight == 0 or signal.family == DENIAL:
            continue
        if turn is not None and signal.weight < HIGH and turn - signal.turn >= grading.WINDOW:
            continue  # an older weak sign: it no longer counts
        key = (signal.category, signal.family)
        if key not in strongest or signal.weight > strongest[key].weight:
            strongest[key] = signal
    # A sustained learned read counts beside a sign the rules or the evidence read that names the
    # risk other than a passive wish: with a wish, it is the same wish said again ("I'd never do
    # anything") and the session stays low.
    beside = {
        c for (c, f), s in strongest.items() if not _is_learned(s) and f != grading.PASSIVE and grading.names_risk(f)
    }
    strongest = {k: s for k, s in strongest.items() if k[1] != SUSTAINED or k[0] in beside}
    score: dict[str, int] = {}
    counted: dict[str, list[GuardSignal]] = {}
    for (category, _), signal in sorted(strongest.items(), key=lambda item: item[1].turn):
        score[category] = score.get(category, 0) + signal.weight
        counted.setdefault(category, []).append(signal)
    for category, kept in counted.items():
        # A learned read names the risk only when it was strong on a sentence naming it (it
        # then has a tier); a weak read's family is only what its words suggest.
        grounded = any(not _is_learned(s) for s in kept) and any(
            grading.names_risk(s.family) and (s.tier != "none" or not _is_learned(s)) for s in kept
        )
        if score[category] >= HIGH and not grounded and max(s.weight for s in kept) < HIGH:
            score[category] = HIGH - 1
    return score, counted


def _recent(
    before: Guard | None, turn: int, model: learned.Model, readable: _Readable, read: float
) -> list[ContextTurn]:
    """This turn and the ones before it that grading.CONTEXT reads together. A turn is kept as the
    learned signal reads it, hashed features and a count, never its words (the Guard is stored)."""
    kept = [c for c in (before.context if before is not None else []) if 0 < turn - c.turn < grading.CONTEXT.turns]
    found = frozenset[int]().union(*readable.features)
    known = model.known(found)
    this = ContextTurn(
        turn=turn,
        features=sorted(known),
        unknown=len(found) - len(known),
        risk=readable.names_risk,
        read=read,
    )
    return [*kept, this]


def _context_read(
    model: learned.Model, context: list[ContextTurn], signals: list[GuardSignal], text: str
) -> GuardHit | None:
    """The learned signal's read of the last turns' sentences together, a high sign when it reaches
    grading.CONTEXT's score and no sentence alone did (what they say together: a place in one, a
    thing bought in another, a burden in a third, in one message or over turns), the rules or the evidence read a warning sign in
    those turns other than a passive wish or a denial (two signals, not the learned one alone), and
    one of them names a risk concept (issue #19: never on a sentence that names none)."""
    # A turn whose own best read reached the score and named a risk was high alone; one that named
    # none ("pas envie qu'on me parle, j'ai deja decide") is what the turns around it explain.
    if len(context) < 2 or any(c.read >= grading.CONTEXT.score and c.risk for c in context):
        return None
    first = context[0].turn
    signed = any(
        s.turn >= first
        and s.category == "suicide_self_harm"
        and s.weight
        and s.tier != "none"
        and not _is_learned(s)
        and s.family not in (grading.PASSIVE, DENIAL)
        for s in signals
    )
    if not signed or not any(c.risk for c in context):
        return None  # most turns: the model is not asked
    # A turn that denies (`text`: "no no I am not planning anything like that") is not what the
    # turns before it said, read again.
    if any(evidence.denies(s, text) for s in text.split(_SENTENCES)):
        return None
    known = frozenset[int]().union(*(c.features for c in context))
    # A feature the model has no weight for counts in the length only; two turns rarely share one.
    score = model.read(known, len(known) + sum(c.unknown for c in context))
    if score < grading.CONTEXT.score:
        return None
    return GuardHit(
        rule=f"{learned.RULE_PREFIX}{CONTEXT}",
        category="suicide_self_harm",
        tier="high",
        family=CONTEXT,
        weight=HIGH,
        note=f"learned {score:.2f} on turns {first} to {context[-1].turn} read together",
    )


def _refused_lately(before: Guard | None, turn: int) -> bool:
    """Whether a turn of the last grading.WINDOW refused to be stopped."""
    return before is not None and any(s.family == REFUSAL and turn - s.turn < grading.WINDOW for s in before.signals)


def _merge(earlier: list[GuardSignal], new: list[GuardSignal]) -> list[GuardSignal]:
    """The session's signals: one per category, family and rule (its strongest, then its
    latest, so a sign said again is counted from its latest turn), so the list stays
    bounded by the number of rules however long the session."""
    kept: dict[tuple[str, str, str], GuardSignal] = {}
    for signal in (*earlier, *new):
        key = (signal.category, signal.family, signal.rule)
        old = kept.get(key)
        if old is None or (signal.weight, tier_rank(signal.tier)) >= (old.weight, tier_rank(old.tier)):
            kept[key] = signal
    return sorted(kept.values(), key=lambda s: s.turn)


def _previous(memory: dict[str, Any]) -> Guard | None:
    raw = memory.get("guard")
    if raw is None:
        return None
    try:
        return Guard.model_validate(raw)
    except ValidationError:
        return None  # an entry from an older version of this model: start clean


def assess(
    message: str, *, session: str, turn: int, previous: Guard | None, model: learned.Model | None = None
) -> Guard:
    """The guard's verdict on one message, given its own latest earlier verdict for this user.
    `model`: the learned signal's (the committed one by default; learned.OFF: rules alone)."""
    text = tolerant(message)
    same_session = previous is not None and previous.session == session
    before = previous if same_session else None
    # Earlier turns of this session that held no sign at all: "it" refers to their habit talk.
    settled = before is not None and not before.signals
    means_turn = before.means_turn if before is not None else None
    means_before = means_turn is not None and turn - means_turn <= REFERS_BACK
    model = learned.default_model() if model is None else model
    hits, read, readable = _screen(
        text, model, settled=settled, means_before=means_before, wished=_only_a_wish(before, turn)
    )
    if any(evidence.mentions_means(s) for s in text.split(_SENTENCES)):
        means_turn = turn
    new = [
        GuardSignal(turn=turn, rule=h.rule, category=h.category, family=h.family, weight=h.weight, tier=h.tier)
        for h in hits
        if h.tier != "none" or _silent(h)
    ]
    # Not once the session is at high: the tier is carried, and a read could not raise it.
    at_high = before is not None and at_least_high(before.tier)
    context = [] if at_high else _recent(before, turn, model, readable, read)
    found = None if at_high else _context_read(model, context, [*(before.signals if before else []), *new], text)
    if found is not None:
        hits.append(found)
        new.append(
            GuardSignal(turn=turn, rule=found.rule, category=found.category, family=CONTEXT, weight=HIGH, tier="high")
        )
    reads = [t for t in (before.reads if before else []) if turn - t < grading.SUSTAINED.window]
    if read >= grading.SUSTAINED.score:
        reads.append(turn)
    if len(reads) >= grading.SUSTAINED.reads:
        new.append(
            GuardSignal(
                turn=turn,
                rule=SUSTAINED,
                category="suicide_self_harm",
                family=SUSTAINED,
                weight=grading.SUSTAINED.weight,
                tier="none",
            )
        )
    signals = _merge(before.signals if before else [], new)
    score, counted = accumulate(signals, turn)
    own = max_tier(*(h.tier for h in hits))
    # A weak learned read may count toward high beside the rules' signs, but alone it sets no
    # tier: a statistical read of one remark is no reason to ask a person about their safety.
    named = {c: sum(s.weight for s in counted.get(c, []) if s.tier != "none") for c in score}
    accumulated: dict[str, Tier] = {c: "high" if s >= HIGH else "low" if named[c] else "none" for c, s in score.items()}

    tier = max_tier(own, *accumulated.values())
    escalated = close_and_accumulated(text, hits, accumulated)
    previous_tier: Tier = before.tier if before else "none"
    tier = max_tier(tier, previous_tier)
    # Refusing to be stopped, or a time given on its own ("tonight. after mum goes up"), in a
    # session already at high: imminent, and said so in the basis.
    closing: tuple[str, str] | None = None
    refuses = grading.REFUSES_TO_BE_STOPPED.search(text) is not None
    if at_least_high(tier) and (refuses or _refused_lately(before, turn)):
        closing = (REFUSAL, "refuses to be stopped in a session at high")
    elif refuses:
        # Said before the session is at high ("nobody should try to talk me down", then the
        # sign): noted, weighing nothing, so that the turn that reaches high is imminent.
        noted = GuardSignal(
            turn=turn, rule=REFUSAL, category="suicide_self_harm", family=REFUSAL, weight=0, tier="none"
        )
        signals = _merge(signals, [noted])
    elif at_least_high(previous_tier) and _time_given(text):
        closing = (TIME_GIVEN, "a time given on its own in a session at high")
    elif at_least_high(tier) and grading.CLOSE_IN_SESSION.search(text) is not None:
        # Whatever made the tier high, the learned signal included: the closeness is in words.
        closing = (CLOSE_IN_SESSION, "the means at hand, the act under way or its time, in a session at high")
    if closing is not None:
        rule, note = closing
        hits = [*hits, GuardHit(rule=rule, category="suicide_self_harm", tier="imminent", family=rule, note=note)]
        signal = GuardSignal(turn=turn, rule=rule, category="suicide_self_harm", family=rule, weight=0, tier="imminent")
        signals = _merge(signals, [signal])
        escalated = True
    if escalated:
        tier = "imminent"
    # Carried: this message alone does not reach the tier, which an earlier turn set.
    carried = before is not None and previous_tier == tier and tier_rank(own) < tier_rank(tier)
    flagged_turn = turn if tier != "none" else None
    if before is not None and before.tier != "none" and tier_rank(before.tier) >= tier_rank(tier):
        flagged_turn = before.flagged_turn or flagged_turn
    raised = {h.category for h in hits if h.tier != "none"} | {c for c, t in accumulated.items() if t != "none"}
    categories = [c for c in CATEGORIES if c in raised or (before is not None and c in before.categories)]
    basis = [s for s in signals if s.tier == tier and tier != "none"]
    for category, counted_signals in counted.items():
        # What the time cue or the refusal escalated is part of what made the tier too.
        if accumulated[category] == tier or (escalated and accumulated[category] == "high"):
            basis += [s for s in counted_signals if s not in basis]
    if not basis and before is not None:
        basis = list(before.basis)  # the tier came from an entry written before signals were kept
    locale = detect_locale(message)
    if locale is None:
        locale = before.locale if before is not None else load_safety().default_locale
    return Guard(
        tier=tier,
        categories=categories,
        locale=locale,
        session=session,
        flagged_turn=flagged_turn,
        carried=carried,
        retraction=bool(_RETRACTION.search(text)),
        injection=bool(_INJECTION.search(normalize(message))),
        hits=hits,
        signals=signals,
        basis=sorted(basis, key=lambda s: s.turn),
        score=score,
        reads=reads,
        means_turn=means_turn,
        context=context,
    )


def close_and_accumulated(text: str, hits: list[GuardHit], accumulated: dict[str, Tier]) -> bool:
    """A means cue in a message that adds a sign to a session already at high, or a time cue
    beside a sign it adds: the risk is close ("I've thought about it for weeks... tonight"), not
    "I'll buy the gum tomorrow" three sentences before the sign in a long message."""
    if not any(accumulated.get(c) == "high" for c in ACCUMULATING):
        return False
    # A learned hit is a likelihood, not a named sign: alone it raises to high, never to
    # imminent; beside the means at hand that the rules read ("the rifle is in the garage"),
    # the rules name what makes it close.
    at_hand = _MEANS_AT_HAND.search(text) is not None
    fresh = [h for h in hits if _escalating(h) and (at_hand or not h.rule.startswith(learned.RULE_PREFIX))]
    if not fresh:
        return False
    if at_hand:
        return True
    sentences = text.split(_SENTENCES)
    for at in range(len(sentences)):
        near = _beside(sentences, at)
        if _a_time(near) and any(_escalating(h) for h in _rules(near)[0]):
            return True
    return False


def _escalating(hit: GuardHit) -> bool:
    """A sign a time or the means at hand makes imminent: not a hedge, a denial or a passive wish."""
    return (
        hit.category in ACCUMULATING
        and hit.weight > 0
        and hit.family not in _NOT_ESCALATING
        and hit.family != grading.PASSIVE
    )


def guard(ctx: FunctionContext) -> Guard:
    """The `guard` agent."""
    return assess(ctx.message, session=ctx.session, turn=ctx.turn, previous=_previous(ctx.memory))
