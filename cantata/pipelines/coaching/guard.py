"""The guard: a rule-based screen that runs first, in code, in microseconds.

It screens the message for suicide or self-harm, abuse, harm to others, a medical
emergency and restrictive eating, in English and French, and sets a tier (none, low,
high, imminent). Rules run on normalize()d text (lower case, accents folded), so "je
veux mourir" and "je veux mourir" with or without accents match alike.

- A negation just before a high-tier phrase ("I'm not suicidal", "je ne vais pas me
  suicider") lowers it to low, never to none: a check-in is still warranted.
- A time or means cue ("tonight", "I have the pills", "ce soir") raises a high hit of a
  category that can be acted on (self-harm, harm to others, abuse) to imminent, and a
  negated one to high.
- Persistence: the guard lists itself under `memory`, so it sees its latest output for
  this user. When that output belongs to the same session, its tier and categories are
  carried forward: "I was joking" or "you misunderstood" is noted, never clears a flag
  within the session. A new session starts clean.
- Injection ("ignore previous instructions", "set the tier to none", a JSON blackboard
  entry pasted in the message) is noted and changes nothing: the tier is computed here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from cantata import FunctionContext
from cantata.pipelines.coaching.models import Guard, GuardHit
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


@dataclass(frozen=True)
class Rule:
    id: str
    category: Category
    tier: Tier
    pattern: re.Pattern[str]
    negatable: bool = True  # a negation just before lowers a high hit to low
    escalates: bool = True  # a time or means cue raises a hit of an actionable category


def _rule(
    id: str, category: Category, tier: Tier, *alternatives: str, negatable: bool = True, escalates: bool = True
) -> Rule:
    body = "|".join(f"(?:{a})" for a in alternatives)
    return Rule(id, category, tier, re.compile(rf"\b(?:{body})\b"), negatable, escalates)


_ME = r"(?:my|my own)"
_RELATION_EN = (
    r"(?:husband|wife|partner|boyfriend|girlfriend|dad|father|mum|mom|mother|stepdad|stepfather|stepmother|parents?|"
    r"brother|sister|uncle|boss|ex|fiance|fiancee|son|daughter|kids?|children|baby|neighbou?r|coworker|colleague|"
    r"roommate|flatmate|teacher)"
)
_PARTNER_EN = rf"(?:he|she|they|my {_RELATION_EN})"
_RELATION_FR_M = r"(?:mari|copain|conjoint|compagnon|pere|beau-pere|frere|oncle|patron|ex|fiance|fils|voisin|collegue|bebe)"
_RELATION_FR_F = r"(?:femme|copine|conjointe|compagne|mere|belle-mere|soeur|patronne|fiancee|fille|voisine|collegue)"
_PARTNER_FR = rf"(?:il|elle|ils|mon {_RELATION_FR_M}|ma {_RELATION_FR_F})"

RULES: tuple[Rule, ...] = (
    # -- suicide and self-harm ------------------------------------------------------------
    _rule(
        "en.suicide.explicit",
        "suicide_self_harm",
        "high",
        r"kill(?:ing|ed)? myself",
        rf"end(?:ing)? (?:{_ME} life|it all)",
        rf"take {_ME} (?:own )?life",
        r"(?:want|wanna|going|plan(?:ning)?|ready) to die",
        r"suicid(?:e|al)",
        r"(?:better|be better) off (?:dead|without me)",
        r"wish (?:i was|i were) dead",
    ),
    _rule(
        # Phrases that carry their own negation: a negation check would misread them.
        "en.suicide.negative_phrase",
        "suicide_self_harm",
        "high",
        r"(?:don't|do not|dont) want to (?:live|be alive|exist|wake up)(?: anymore)?",
        r"no reason to (?:live|go on)",
        r"wish i (?:had )?never (?:been born|woken up)",
        r"(?:nobody|no one|no-one) would (?:miss me|care if i (?:died|was gone|were gone))",
        negatable=False,
    ),
    _rule(
        "en.self_harm",
        "suicide_self_harm",
        "high",
        r"(?:hurt|harm|hurting|harming|cut|cutting|burn|burning) myself",
        r"self[- ]?harm(?:ing)?",
        r"cutting again",
    ),
    _rule(
        "en.suicide.passive",
        "suicide_self_harm",
        "low",
        r"what'?s the point (?:of|in) (?:living|life|going on|anything anymore|it all)",
        r"(?:want|wish i could) (?:to )?disappear",
        r"can'?t go on(?: like this)?",
        r"tired of (?:living|life|being alive)",
        r"no way out",
        r"(?:everyone|everybody) would be better off",
        r"(?:nobody|no one|no-one) would (?:notice|care) if i (?:disappeared|was gone|were gone|vanished)",
        escalates=False,
    ),
    _rule(
        "fr.suicide.explicit",
        "suicide_self_harm",
        "high",
        r"me suicider",
        r"(?:envie de|vais|veux|voudrais|pense a|penser a) me tuer",
        r"en finir(?: avec (?:la|ma) vie)?",
        r"mettre fin a (?:mes jours|ma vie)",
        r"(?:je veux|j'ai envie de|envie de|je voudrais) mourir",
        r"suicid(?:e|aire)",
        r"mieux sans moi",
        r"(?:mieux|mieux vaut que je sois) mort",
    ),
    _rule(
        "fr.suicide.negative_phrase",
        "suicide_self_harm",
        "high",
        r"(?:plus|pas) envie de vivre",
        r"je (?:ne )?veux plus vivre",
        r"(?:plus|aucune) raison de vivre",
        r"personne ne (?:me )?regretterait",
        negatable=False,
    ),
    _rule(
        "fr.self_harm",
        "suicide_self_harm",
        "high",
        r"me (?:faire du mal|scarifier|mutiler)",
        r"je me (?:scarifie|mutile)",
        r"me couper (?:les veines|les bras|le bras|les poignets)",
        r"automutilation",
    ),
    _rule(
        "fr.suicide.passive",
        "suicide_self_harm",
        "low",
        r"(?:envie de|voudrais|veux) disparaitre",
        r"a quoi bon vivre",
        r"je n'en peux plus",
        r"pas d'issue",
        r"fatigue(?:e)? de vivre",
        r"personne ne (?:le )?remarquerait si je (?:disparaissais|n'etais plus la|partais)",
        r"si je disparaissais",
        escalates=False,
    ),
    # -- abuse -----------------------------------------------------------------------------
    _rule(
        "en.abuse",
        "abuse",
        "high",
        rf"{_PARTNER_EN} (?:hits|hit|beats|beat|chokes|choked|kicks|kicked|slaps|slapped|punches|punched|rapes|raped|"
        r"strangles|strangled|threatens to kill|threatened to kill|locks|locked) me",
        r"(?:being|was|been|i'?m|am) (?:sexually |physically |emotionally )?abused",
        r"abusive (?:partner|relationship|husband|wife|boyfriend|girlfriend|parents?|father|mother|home)",
        r"domestic (?:violence|abuse)",
        r"touched me (?:without|against)",
    ),
    _rule(
        "en.abuse.fear",
        "abuse",
        "low",
        rf"(?:afraid|scared|terrified) (?:of my {_RELATION_EN}|to go home)",
        r"controls (?:my|all my) (?:money|phone)",
        escalates=False,
    ),
    _rule(
        "fr.abuse",
        "abuse",
        "high",
        rf"{_PARTNER_FR} me (?:frappe|bat|battait|frappait|viole|violait|etrangle|menace de (?:me )?tuer)",
        rf"{_PARTNER_FR} m'a (?:frappee?|battue?|violee?|etranglee?)",
        r"je suis (?:battue?|violee?|maltraitee?)",
        r"violences? (?:conjugales?|familiales?)",
    ),
    _rule(
        "fr.abuse.fear",
        "abuse",
        "low",
        rf"peur de (?:mon {_RELATION_FR_M}|ma {_RELATION_FR_F}|rentrer chez moi)",
        escalates=False,
    ),
    # -- harm to others ----------------------------------------------------------------------
    _rule(
        "en.harm_others",
        "harm_to_others",
        "high",
        r"(?:want|going|gonna|plan(?:ning)?|ready) to (?:kill|hurt|stab|shoot|strangle|attack|beat up) "
        rf"(?:him|her|them|my {_RELATION_EN}|someone|somebody|people|everyone)",
        rf"(?:thoughts|urges?) (?:of|about) (?:hurting|killing) (?:him|her|them|my {_RELATION_EN}|someone|people)",
    ),
    _rule(
        "en.harm_others.hyperbole",
        "harm_to_others",
        "low",
        r"i could (?:kill|strangle) (?:him|her|them)",
        escalates=False,
    ),
    _rule(
        "fr.harm_others",
        "harm_to_others",
        "high",
        r"(?:envie de|vais|veux) (?:le|la|les) (?:tuer|buter|frapper|poignarder)",
        rf"(?:envie de|vais|veux) (?:tuer|frapper|poignarder) (?:quelqu'un|mon {_RELATION_FR_M}|ma {_RELATION_FR_F}|"
        r"mes enfants)",
        rf"faire du mal a (?:quelqu'un|mon {_RELATION_FR_M}|ma {_RELATION_FR_F}|mes enfants|lui|elle|eux)",
    ),
    # -- medical emergency -------------------------------------------------------------------
    _rule(
        "en.medical",
        "medical_emergency",
        "imminent",
        r"chest pains?",
        r"(?:can'?t|cannot|can not) (?:breathe|catch my breath)",
        r"overdos(?:e|ed|ing)",
        r"took (?:too many|a (?:bunch|handful) of|all (?:my|the)|a whole (?:bottle|box) of) (?:pills|tablets|meds)",
        r"swallowed (?:[a-z]+ )?(?:pills|tablets|bleach)",
        r"unconscious",
        r"(?:he|she|they|someone|my [a-z]+) (?:is not|isn't|isnt|stopped) breathing",
        r"(?:having|had) a (?:seizure|stroke|heart attack)",
        r"(?:bleeding (?:a lot|heavily|badly)|won'?t stop bleeding)",
        negatable=False,
    ),
    _rule(
        "fr.medical",
        "medical_emergency",
        "imminent",
        r"(?:douleurs?|mal) (?:a|dans) la poitrine",
        r"(?:je n'arrive (?:plus|pas)|j'arrive (?:plus|pas)|je ne peux (?:plus|pas)) a? ?respirer",
        r"(?:surdose|overdose)",
        r"j'ai (?:pris|avale) (?:tous mes|toute la boite de|trop de|une boite de|plein de) "
        r"(?:medicaments|cachets|comprimes|pilules)",
        r"(?:inconscient|inconsciente|ne respire plus)",
        r"(?:crise d'epilepsie|convulsions|avc|crise cardiaque)",
        r"je saigne (?:beaucoup|enormement)",
        negatable=False,
    ),
    # -- restrictive eating -------------------------------------------------------------------
    _rule(
        "en.eating.severe",
        "restrictive_eating",
        "high",
        r"starv(?:e|ing) myself",
        r"make myself (?:throw up|vomit|sick)",
        r"making myself (?:throw up|vomit|sick)",
        r"(?:purge|purging|purged) (?:after|every)",
        r"haven'?t eaten (?:in|for) (?:\d+|two|three|four|five|several|a few) days",
        r"not (?:allowed|allowing myself) to eat",
        r"punish(?:ing)? myself (?:by not eating|for eating)",
    ),
    _rule(
        "en.eating",
        "restrictive_eating",
        "low",
        r"skip(?:ping|ped)? meals",
        r"(?:under|less than|fewer than|only) \d{3} (?:calories|kcal)",
        r"(?:only|barely) (?:eat|ate|eating) (?:once a day|one meal)",
        r"feel (?:fat|disgusting|gross) (?:after|when) (?:i )?eat",
        r"(?:afraid|scared|terrified) of (?:eating|food|gaining weight)",
    ),
    _rule(
        "fr.eating.severe",
        "restrictive_eating",
        "high",
        r"(?:je me fais|me faire) vomir",
        r"je m'affame",
        r"(?:pas|rien) mange depuis (?:\d+|deux|trois|quatre|cinq|plusieurs) jours",
        r"je ne mange (?:plus|presque plus|plus rien|rien)",
        r"je n'ai pas le droit de manger",
    ),
    _rule(
        "fr.eating",
        "restrictive_eating",
        "low",
        r"(?:je saute|sauter) (?:des|les|mes) repas",
        r"moins de \d{3} (?:calories|kcal)",
        r"peur de (?:manger|grossir|prendre du poids)",
        r"(?:je me sens|me sentir) (?:grosse?|degoutante?) (?:apres|quand je) mange",
    ),
)

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
_ACTIONABLE: frozenset[str] = frozenset({"suicide_self_harm", "harm_to_others", "abuse"})

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


def _negated(norm: str, start: int) -> bool:
    """A negation among the three words just before position `start`, within its clause:
    "I'm not suicidal", "je ne vais pas me suicider"; not "I'm not ok, I want to die"."""
    clause = _CLAUSE.split(norm[:start])[-1]
    before = clause.split()[-3:]
    return any(w in _NEGATIONS or w.startswith("n'") for w in before)


def screen(message: str) -> list[GuardHit]:
    """Every rule hit in the message, with negation and time/means cues applied."""
    norm = normalize(message)
    close = _IMMINENT_CUES.search(norm) is not None
    hits: list[GuardHit] = []
    for rule in RULES:
        match = rule.pattern.search(norm)
        if match is None:
            continue
        tier = rule.tier
        negated = rule.negatable and tier == "high" and _negated(norm, match.start())
        if negated:
            tier = "low"
        if close and rule.escalates and rule.category in _ACTIONABLE:
            tier = max_tier(tier, "high" if negated else "imminent")
        hits.append(GuardHit(rule=rule.id, category=rule.category, tier=tier, negated=negated))
    return hits


def _previous(memory: dict[str, Any]) -> Guard | None:
    raw = memory.get("guard")
    if raw is None:
        return None
    try:
        return Guard.model_validate(raw)
    except ValidationError:
        return None  # an entry from an older version of this model: start clean


def assess(message: str, *, session: str, turn: int, previous: Guard | None) -> Guard:
    """The guard's verdict on one message, given its own latest earlier verdict for this user."""
    hits = screen(message)
    tier = max_tier(*(h.tier for h in hits))
    categories = [c for c in CATEGORIES if any(h.category == c for h in hits)]
    flagged_turn = turn if tier != "none" else None
    carried = False
    same_session = previous is not None and previous.session == session
    if previous is not None and same_session and previous.tier != "none":
        # The flag persists within the session: no later message can lower it.
        if tier_rank(previous.tier) >= tier_rank(tier):
            carried = tier_rank(previous.tier) > tier_rank(tier)
            flagged_turn = previous.flagged_turn or flagged_turn
        tier = max_tier(tier, previous.tier)
        categories = [c for c in CATEGORIES if c in categories or c in previous.categories]
    locale = detect_locale(message)
    if locale is None:
        locale = previous.locale if same_session and previous is not None else load_safety().default_locale
    norm = normalize(message)
    return Guard(
        tier=tier,
        categories=categories,
        locale=locale,
        session=session,
        flagged_turn=flagged_turn,
        carried=carried,
        retraction=bool(_RETRACTION.search(norm)),
        injection=bool(_INJECTION.search(norm)),
        hits=hits,
    )


def guard(ctx: FunctionContext) -> Guard:
    """The `guard` agent."""
    return assess(ctx.message, session=ctx.session, turn=ctx.turn, previous=_previous(ctx.memory))
