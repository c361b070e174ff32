"""The guard: a rule-based screen that runs first, in code, in microseconds.

It screens the message for suicide or self-harm (explicit and indirect warning signs,
signs.py), a helper's worry about someone else, abuse, harm to others, a medical
emergency and restrictive eating (other_risks.py), in English and French, and sets a
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
  sentence, trained on the labelled set, for the phrasings no rule's author imagined. A
  strong score is a high hit on its own, a middling one a silent weak signal (tier none,
  weight 1: it counts toward high in the session, but alone sets no tier, so one ordinary
  remark read as middling never makes the coach ask about safety) named by the sign the
  sentence's words name (evidence.sign_family), or, when they name none, an unnamed read
  counted once per turn and at most UNNAMED_CAP times. It only ever adds a
  hit, never reads a sentence the rules read as a denial, an ordinary absence or a symptom
  in its context, and never makes a tier imminent. Its hit names itself ("learned.<sign>")
  and the sentence it read (in `note`).
- Risk accumulates: every sign has a weight (rules.py); a session sums the weights of
  its distinct signs per category, and 3 or more is high, as a clinician would hear a
  passive wish, hopelessness and a hedge together. A means question (2) after
  hopelessness (1) is high at once. `signals` lists every sign of the session with its
  turn; `basis` the ones that made the tier.
- Persistence: the guard lists itself under `memory`, so it sees its latest output for
  this user. When that output belongs to the same session, its tier, categories and
  signals are carried forward: "I was joking" or "you misunderstood" is noted, never
  lowers the tier within the session. A new session starts clean.
- Injection ("ignore previous instructions", "set the tier to none", a JSON blackboard
  entry pasted in the message) is noted and changes nothing: the tier is computed here.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from cantata import FunctionContext
from cantata.pipelines.coaching import evidence, learned, other_risks, signs
from cantata.pipelines.coaching.models import Guard, GuardHit, GuardSignal
from cantata.pipelines.coaching.rules import Rule, sentence_words
from cantata.pipelines.coaching.safety import (
    CATEGORIES,
    Category,
    Locale,
    Tier,
    load_safety,
    max_tier,
    normalize,
    tier_rank,
)
from cantata.pipelines.coaching.tolerant import BOUNDARY, tolerant

RULES: tuple[Rule, ...] = signs.RULES + other_risks.RULES

# A time or means cue next to a hit: the risk is close.
_IMMINENT_CUES = re.compile(
    r"\b(?:"
    r"tonight|today|right now|this (?:evening|weekend|morning)|tomorrow|in an hour|"
    r"(?:i have|i've got|got|bought|saved(?: up)?|stockpil\w*|collected) (?:the |some |enough |a |my )?"
    r"(?:pills|rope|gun|knife|blade|razor|tablets)|"
    r"wrote (?:a|my) (?:suicide |goodbye )?(?:note|letter)|said (?:my )?goodbyes?|"
    r"i'?m going to do it|on the (?:bridge|roof|ledge)|"
    r"(?:he|she) is (?:outside|here|coming back)|has a (?:gun|knife)|"
    r"ce soir|cette nuit|aujourd'hui|maintenant|tout de suite|demain|"
    r"j'ai (?:les |des |assez de |une )?(?:medicaments|cachets|comprimes|corde|arme|couteau|lame)|"
    r"(?:j'ai ecrit|ecrit) (?:une|ma) lettre|je vais le faire|sur le (?:pont|toit)|"
    r"(?:il|elle) est (?:devant|dehors|la|en train de revenir)"
    r")\b"
)
_ACTIONABLE: frozenset[str] = frozenset({"suicide_self_harm", "harm_to_others", "abuse", "helper_concern"})

_NEGATIONS = frozenset({"not", "never", "don't", "dont", "wouldn't", "won't", "isn't", "ne", "pas", "jamais"})
_RETRACTION = re.compile(
    r"\b(?:(?:i was|i'?m|i am|was) (?:just |only )?(?:joking|kidding)|(?:you|u) (?:misunderstood|got it wrong|"
    r"took it (?:the )?wrong)|i didn'?t mean (?:it|that)|(?:it was|that was) a joke|not serious|never ?mind|"
    r"forget (?:what i said|it)|je (?:rigolais|plaisantais|blaguais)|c'etait (?:une blague|pour rire)|"
    r"(?:tu as|vous avez) mal compris|je ne le pensais pas|laisse tomber|oubliez? ce que j'ai dit)\b"
)
_INJECTION = re.compile(
    r"(?:\b(?:ignore|disregard|forget) (?:all |any |the )?(?:previous|prior|above|earlier|your) "
    r"(?:instructions|prompts?|rules|messages)\b|\bsystem prompt\b|\byou are now\b|\bdeveloper mode\b|\bjailbreak\b|"
    r"\bset (?:the |your )?(?:[a-z]+ )?(?:tier|risk|level|flag)s? to\b|\b(?:tier|risk_level)\s*[:=]|\"tier\"|"
    r"\"blocked\"|\bblackboard\b|\bignore (?:toutes )?(?:les|tes|vos) (?:instructions|consignes|regles)\b|"
    r"\boublie (?:tes|les|vos) (?:instructions|consignes)\b|\bmets? le (?:niveau|tier) a\b)"
)
_FR_WORDS = frozenset(
    "je j tu vous il elle nous le la les des du un une est suis pas ne mais et pour avec dans que qui mon ma mes "
    "ce ca cette au aux tres moi m c n qu sur fais veux suis ai avoir etre rien plus toujours jamais quand parce "
    "matin soir tous chaque".split()
)
_EN_WORDS = frozenset(
    "i you he she the an is am are not but and for with in that who my this it to of do don t want just so was "
    "be have has keep saying end up every morning until then always never when because".split()
)


def detect_locale(text: str) -> Locale | None:
    """'fr' or 'en' by function words; None when the message gives no clear sign."""
    words = re.findall(r"[a-z]+", normalize(text))
    fr = sum(w in _FR_WORDS for w in words)
    en = sum(w in _EN_WORDS for w in words)
    if fr == en:
        return None
    return "fr" if fr > en else "en"


_CLAUSE = re.compile(r"[,.;:!?]|\b(?:but|and|mais|et)\b")


# "I can't promise I won't...", "je ne peux pas promettre que je ne vais pas...": the
# negation is hedged, so it denies nothing.
_HEDGED = re.compile(
    r"\b(?:promise|promises|sure|know if|know whether|promettre|promets|sais pas si|sure que|certaine? que)\b"
)


def _negated(norm: str, start: int, end: int, *, inside: bool = True) -> bool:
    """A negation among the three words just before the match, within its clause, or inside
    it ("I'm not suicidal", "je ne vais pas me suicider"); not "I'm not ok, I want to die",
    nor a hedged one ("I can't promise I won't")."""
    if _HEDGED.search(norm[:start]):
        return False
    clause = _CLAUSE.split(norm[:start])[-1]
    # Inside the match, only its first words: "I'm not suicidal", not "wish I could not wake up".
    words = clause.split()[-3:] + (norm[start:end].split()[:3] if inside else [])
    return any(w in _NEGATIONS or w.startswith("n'") for w in words)


_SENTENCES = f" {BOUNDARY} "

# A medical symptom is an emergency when it is happening now; history or a habit's
# context lowers it, unless an acute cue is in the same sentence.
_ACUTE = re.compile(
    r"\b(?:right now|just now|as we speak|at the moment|suddenly|sudden|crushing|severe|spreading|radiating|numb|"
    r"passing out|(?:a few |ten |five |[0-9]+ )?minutes ago|an hour ago|won't stop|getting worse|ambulance|911|999|"
    r"112|en ce moment|la maintenant|tout de suite|soudain\w*|brutalement|violente?|intense|irradie|engourdi\w*|"
    r"il y a (?:quelques|[0-9]+|dix|cinq|vingt) minutes|samu|le 15)\b"
)
_HISTORY = re.compile(
    r"\b(?:(?:years?|months?|weeks?) ago|last (?:year|month|summer|winter|spring|autumn|fall)|in (?:19|20)[0-9]{2}|"
    r"when i was|history of|survived|recovered from|since my|after my|back in|years back|"
    r"il y a (?:[a-z0-9]+ ){1,2}(?:ans|an|mois|semaines)|l'an dernier|l'annee derniere|en (?:19|20)[0-9]{2}|"
    r"quand j'etais|antecedents?|depuis mon|depuis ma|apres mon|apres ma|j'ai survecu)\b"
)
_HABIT = re.compile(
    r"\b(?:when(?:ever)? i|if i|after i|while i|since i|sometimes|often|usually|every (?:morning|time|day|night)|"
    r"in the mornings?|lately|a bit|a little|mild|slight|used to|smoker's|my doctor|the doctor|cardiologist|my gp|"
    r"cigarettes?|smoking|vaping|exercise|exercising|running|workouts?|stairs|climb\w*|gym|class|spin|yoga|"
    r"pilates|training|swim\w*|run|runs|jog\w*|hik\w*|cycling|bike|sports?|"
    r"quand je|si je|apres avoir|en fumant|parfois|souvent|le matin|depuis que je|un peu|legere?|mon medecin|"
    r"le medecin|cardiologue|clopes?|fumer|escaliers|courir|sport)\b"
)


def _medical_context(sentence: str) -> str:
    """'history' or 'habit context' when a medical hit is not a present emergency, else ''."""
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
_ABSENCE = re.compile(
    r"\b(?:without me|sans moi|be (?:around|here)|being (?:around|here)|not be here|i'm gone|i was gone|"
    r"i'm not here|be gone|serai (?:plus|pas) la|serai plus ici|suis (?:plus|pas) la)\b"
)
_ORDINARY_ABSENCE = re.compile(
    r"\b(?:holidays?|vacation|trip|travel\w*|business|conference|out of town|on leave|in-laws|moving (?:house|to)|"
    r"appointments?|dentist|doctor's|at the doctor|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"rendez-vous|chez le (?:medecin|docteur|dentiste)|"
    r"visiting|night shift|working|as (?:captain|coach|leader|manager|chair|president|treasurer|(?:your|the|a) [a-z]+)|"
    r"for (?:a|the|this|one|two|a few) (?:weekend|week|day|days|night|nights|evening|match|game|meeting|trip|while|bit)|"
    # A stated, limited stay away: "for the next two weeks", "pendant deux semaines".
    r"(?:for )?the next (?:[a-z0-9]+ )?(?:days?|weeks?|months?)|pendant (?:[a-z0-9]+ )?(?:jours|semaines|mois)|"
    r"on the team|in the team|at (?:work|the office|the meeting|the party)|vacances|voyage|deplacement|en conge|"
    r"demenage\w*|chez (?:mes|ma|mon)|pour (?:ce|cette|le|la) (?:match|week-end|weekend|reunion|soiree|projet|equipe|"
    r"voyage)|en mission|au travail|au boulot|dans l'equipe|comme (?:capitaine|chef|responsable))\b"
)
_FINALITY = re.compile(r"\b(?:for good|forever|for ever|permanently|pour toujours|pour de bon|a jamais)\b")


# "It", "the day", "a plan", "my decision" carry a sign only when nothing names what they
# are: "I'm going to do it on Monday, I'm finally going to quit" names a habit goal.
_EUPHEMISM = re.compile(
    r"\b(?:do it|going to do it|go through with it|the day|the date|a plan|my decision|le faire|le jour|la date|"
    r"un plan|ma decision|c'est decide)\b"
)
_HABIT_GOAL = re.compile(
    r"\b(?:quit\w*|stop smoking|smoke-free|cut(?:ting)? down|patch(?:es)?|vap\w*|cigarettes?|smok\w*|run|running|"
    r"marathon|race|gym|diet|exercise|training|workout|sober|drinking|alcohol|sugar|sweets|snack\w*|junk food|"
    r"coffee|caffeine|arret\w* de fumer|arreter|fumer|clopes?|tabac|courir|sport|regime|salle|patchs|sucre|"
    r"grignot\w*|cafe)\b"
)


# A match that names death itself is never explained away ("a plan to kill myself, smoking
# won't matter then").
_NAMES_DEATH = re.compile(r"\b(?:kill\w*|die|dying|dead|death|suicid\w*|myself|mourir|morte?|tuer|me tuer|en finir)\b")


def _explained(sentence: str, matched: str) -> bool:
    return (
        _EUPHEMISM.search(matched) is not None
        and _NAMES_DEATH.search(matched) is None
        and _HABIT_GOAL.search(sentence) is not None
    )


def _ordinary_absence(sentence: str, matched: str) -> bool:
    return (
        _ABSENCE.search(matched) is not None
        and _NAMES_DEATH.search(matched) is None
        and _ORDINARY_ABSENCE.search(sentence) is not None
        and _FINALITY.search(sentence) is None
    )


def screen(message: str, model: learned.Model | None = None) -> list[GuardHit]:
    """Every rule hit in the message, with negation, time/means cues and medical context
    applied, and the learned signal's (`model`: the committed one by default)."""
    return _screen(tolerant(message), learned.default_model() if model is None else model)


def _screen(text: str, model: learned.Model) -> list[GuardHit]:
    hits, readable = _rules(text)
    learned_hit = _learned(model, readable)
    return hits if learned_hit is None else [*hits, learned_hit]


def readable(message: str) -> list[str]:
    """The sentences of the message's tolerant() form that the learned signal reads (what
    train_learned.py scores, as the guard does)."""
    return [sentence for sentence, _ in _rules(tolerant(message))[1]]


def _rules(text: str) -> tuple[list[GuardHit], list[tuple[str, frozenset[str]]]]:
    """The phrase rules' and the evidence score's hits, and the sentences (with their
    words) that the learned signal may read."""
    close = _IMMINENT_CUES.search(text) is not None
    hits: list[GuardHit] = []
    seen: set[str] = set()
    readable: list[tuple[str, frozenset[str]]] = []  # the sentences the learned signal may read
    for sentence in text.split(_SENTENCES):
        words = sentence_words(sentence)
        denied = False
        explained = False  # a symptom the sentence places in the past or in a habit
        for rule in RULES:
            if rule.id in seen or not rule.may_match(words):
                continue
            match = rule.pattern.search(sentence)
            if match is None:
                continue
            seen.add(rule.id)
            tier, weight, family, note = rule.tier, rule.weight, rule.family, ""
            negated = (
                rule.negatable
                and tier == "high"
                and _negated(sentence, match.start(), match.end(), inside=rule.negation_inside)
            )
            if negated:
                tier, weight, family, note = "low", 1, "denial", "negated"
            if rule.category in ACCUMULATING and _ordinary_absence(sentence, match.group(0)):
                tier, weight, note = "none", 0, "ordinary absence"
            elif rule.category in ACCUMULATING and _explained(sentence, match.group(0)):
                tier, weight, note = "none", 0, "a habit goal"
            if rule.category == "medical_emergency":
                note = _medical_context(sentence)
                if note:
                    tier, weight, explained = "none", 0, True
            if close and rule.escalates and rule.category in _ACTIONABLE and tier != "none":
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
        ordinary = _ORDINARY_ABSENCE.search(sentence) is not None and _FINALITY.search(sentence) is None
        found = None if denied or ordinary else evidence.assess_sentence(sentence, words)
        if not (denied or ordinary or explained):
            readable.append((sentence, words))
        if found is not None and f"evidence.{found.family}" not in seen:
            seen.add(f"evidence.{found.family}")
            tier = found.tier
            if close and tier == "high" and found.category in _ACTIONABLE:
                tier = "imminent"
            hits.append(
                GuardHit(
                    rule=f"evidence.{found.family}",
                    category=found.category,
                    tier=tier,
                    family=found.family,
                    weight=found.weight,
                    note=f"evidence {found.score}: {'+'.join(found.concepts)}",
                )
            )
    return hits, readable


def _silent(hit: GuardHit) -> bool:
    """A weak learned read: tier none, but its weight counts in the session (accumulate)."""
    return hit.rule.startswith(learned.RULE_PREFIX) and hit.tier == "none" and hit.weight > 0


def _learned(model: learned.Model, sentences: list[tuple[str, frozenset[str]]]) -> GuardHit | None:
    """The learned signal (learned.py) on the message's best sentence: a high hit when its
    score is strong; when it is middling, a silent weak signal (tier none, weight 1) named by
    the sign the sentence's words name, which counts toward high in the session but sets no
    tier of its own. It only ever adds a hit; a sentence the rules read as a denial, an ordinary
    absence or a symptom in its past or habit context is not read, nor one too short for a
    statistical read ("no", "thanks": the rules read those)."""
    sentences = [(s, w) for s, w in sentences if len(s.split()) >= learned.MIN_WORDS]
    if not model.weights or not sentences:
        return None
    score, sentence, words = max((model.score(s), s, w) for s, w in sentences)
    if score < model.weak:
        return None
    strong = score >= model.strong
    family = evidence.sign_family(sentence, words) or UNNAMED
    category: Category = "helper_concern" if evidence.about_someone_else(sentence) else "suicide_self_harm"
    return GuardHit(
        rule=f"{learned.RULE_PREFIX}{family}",
        category=category,
        tier="high" if strong else "none",
        family=family,
        weight=HIGH_SCORE if strong else 1,
        note=f"learned {score:.2f} ({'strong' if strong else 'weak'}): {sentence}",
    )


# -- risk that accumulates over a session ---------------------------------------------------

ACCUMULATING: tuple[Category, ...] = ("suicide_self_harm", "helper_concern")
HIGH_SCORE = 3  # the weight of one sign a clinician acts on alone; or of several weaker ones
_NOT_ESCALATING = frozenset({"hedge", "denial"})  # "not tonight" names a time and means later


# A weak learned read whose words name no sign (learned.py) is counted per turn, as a
# clinician counts two worrying remarks as two; but such reads never reach high together
# without a named sign: at most UNNAMED_CAP of them count.
UNNAMED = "learned"
UNNAMED_CAP = 2


def _sign_key(signal: GuardSignal) -> tuple[str, str, int]:
    return (signal.category, signal.family, signal.turn if signal.family == UNNAMED else 0)


def accumulate(signals: list[GuardSignal]) -> tuple[dict[str, int], dict[str, list[GuardSignal]]]:
    """Per accumulating category: the sum of the weights of its distinct signs (each family
    once, at its strongest; an unnamed learned read once per turn, UNNAMED_CAP at most), and
    the signals counted."""
    strongest: dict[tuple[str, str, int], GuardSignal] = {}
    for signal in signals:
        if signal.category not in ACCUMULATING or signal.weight == 0:
            continue
        key = _sign_key(signal)
        if key not in strongest or signal.weight > strongest[key].weight:
            strongest[key] = signal
    score: dict[str, int] = {}
    counted: dict[str, list[GuardSignal]] = {}
    unnamed: dict[str, int] = {}
    for (category, family, _), signal in sorted(strongest.items(), key=lambda item: item[1].turn):
        if family == UNNAMED and signal.weight < HIGH_SCORE:
            if unnamed.get(category, 0) >= UNNAMED_CAP:
                continue
            unnamed[category] = unnamed.get(category, 0) + 1
        score[category] = score.get(category, 0) + signal.weight
        counted.setdefault(category, []).append(signal)
    return score, counted


def _score_tier(score: int) -> Tier:
    return "high" if score >= HIGH_SCORE else "low" if score >= 1 else "none"


def _merge(earlier: list[GuardSignal], new: list[GuardSignal]) -> list[GuardSignal]:
    """The session's signals: one per category, family and rule (its strongest, earliest),
    so the list stays bounded by the number of rules however long the session (an unnamed
    learned read: one per turn, UNNAMED_CAP turns at most)."""
    kept: dict[tuple[str, str, str, int], GuardSignal] = {}
    for signal in (*earlier, *new):
        key = (signal.category, signal.family, signal.rule, signal.turn if signal.family == UNNAMED else 0)
        if key[3] and sum(k[:3] == key[:3] for k in kept) >= UNNAMED_CAP and key not in kept:
            continue  # unnamed learned reads beyond the cap count for nothing: not kept
        if key not in kept or signal.weight > kept[key].weight or tier_rank(signal.tier) > tier_rank(kept[key].tier):
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
    hits = _screen(text, learned.default_model() if model is None else model)
    same_session = previous is not None and previous.session == session
    before = previous if same_session else None
    new = [
        GuardSignal(turn=turn, rule=h.rule, category=h.category, family=h.family, weight=h.weight, tier=h.tier)
        for h in hits
        if h.tier != "none" or _silent(h)
    ]
    signals = _merge(before.signals if before else [], new)
    score, counted = accumulate(signals)
    own = max_tier(*(h.tier for h in hits))
    # A weak learned read counts toward high, but alone it sets no tier: a statistical read of
    # one remark is no reason to ask a person about their safety (what "low" makes a reply do).
    named = {c: sum(s.weight for s in counted.get(c, []) if s.tier != "none") for c in score}
    accumulated = {c: "high" if s >= HIGH_SCORE else _score_tier(named[c]) for c, s in score.items()}
    tier = max_tier(own, *accumulated.values())
    if close_and_accumulated(text, hits, accumulated):
        tier = "imminent"
    previous_tier: Tier = before.tier if before else "none"
    tier = max_tier(tier, previous_tier)
    # Carried: this message alone does not reach the tier, which an earlier turn set.
    carried = before is not None and previous_tier == tier and tier_rank(own) < tier_rank(tier)
    flagged_turn = turn if tier != "none" else None
    if before is not None and before.tier != "none" and tier_rank(before.tier) >= tier_rank(tier):
        flagged_turn = before.flagged_turn or flagged_turn
    raised = {h.category for h in hits if h.tier != "none"} | {c for c, t in accumulated.items() if t != "none"}
    categories = [c for c in CATEGORIES if c in raised or (before is not None and c in before.categories)]
    basis = [s for s in signals if s.tier == tier and tier != "none"]
    for category, counted_signals in counted.items():
        if accumulated[category] == tier:
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
    )


def close_and_accumulated(text: str, hits: list[GuardHit], accumulated: dict[str, Tier]) -> bool:
    """A time or means cue in a message that adds a sign to a session already at high: the
    risk is close ("I've thought about it for weeks... tonight")."""
    if not any(accumulated.get(c) == "high" for c in ACCUMULATING):
        return False
    # A learned hit is a likelihood, not a named sign: it raises to high, never to imminent.
    fresh = [
        h
        for h in hits
        if h.category in ACCUMULATING
        and h.weight
        and h.family not in _NOT_ESCALATING
        and not h.rule.startswith(learned.RULE_PREFIX)
    ]
    return bool(fresh) and _IMMINENT_CUES.search(text) is not None


def guard(ctx: FunctionContext) -> Guard:
    """The `guard` agent."""
    return assess(ctx.message, session=ctx.session, turn=ctx.turn, previous=_previous(ctx.memory))
