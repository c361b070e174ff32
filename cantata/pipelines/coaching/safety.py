"""Safety vocabulary shared by every coaching agent: tiers, blocked and required actions,
the blocked-action detector, crisis resources per locale, and the safe templates.

All of it is code and data, never model output: nothing a message says can change it.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, get_args

import yaml

Tier = Literal["none", "low", "high", "imminent"]
TIERS: tuple[Tier, ...] = get_args(Tier)
# helper_concern: the person is worried that someone else (a child, a friend) may harm themselves.
Category = Literal[
    "suicide_self_harm", "abuse", "harm_to_others", "medical_emergency", "restrictive_eating", "helper_concern"
]
CATEGORIES: tuple[Category, ...] = get_args(Category)
Locale = Literal["en", "fr"]
LOCALES: tuple[Locale, ...] = get_args(Locale)
BlockedAction = Literal[
    "diagnosis",
    "medication_advice",
    "method_information",
    "restriction_advice",
    "no_suicide_contract",
    "claiming_to_be_human",
    "ending_conversation",
]
BLOCKED_ACTIONS: tuple[BlockedAction, ...] = get_args(BlockedAction)
RequiredAction = Literal["acknowledge", "ask_about_safety", "crisis_line", "human_support"]

# Never acceptable from a coach, whatever the tier: blocked on every turn.
UNIVERSAL_BLOCKED: tuple[BlockedAction, ...] = (
    "diagnosis",
    "medication_advice",
    "method_information",
    "no_suicide_contract",
    "claiming_to_be_human",
    "ending_conversation",
)


def tier_rank(tier: Tier) -> int:
    return TIERS.index(tier)


def max_tier(*tiers: Tier) -> Tier:
    return max(tiers, key=tier_rank, default="none")


def at_least_high(tier: Tier) -> bool:
    return tier_rank(tier) >= tier_rank("high")


def normalize(text: str) -> str:
    """Lower case, accents and typographic quotes folded, spaces collapsed: what rules match."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u02bc", "'").replace("`", "'")
    text = text.replace("\u2013", "-").replace("\u2014", "-").replace("\u00a0", " ")
    return " ".join(text.lower().split())


def blocked_for(tier: Tier, categories: Iterable[str]) -> list[BlockedAction]:
    """The actions a reply must not suggest: the universal ones, plus restriction advice
    when eating is a concern or the tier is high or above."""
    blocked = set(UNIVERSAL_BLOCKED)
    cats = set(categories)
    if "restrictive_eating" in cats or "eating" in cats or at_least_high(tier):
        blocked.add("restriction_advice")
    return [a for a in BLOCKED_ACTIONS if a in blocked]


def required_for(tier: Tier, categories: Iterable[str] = ()) -> list[RequiredAction]:
    """What a reply must do at this tier; at low, asking about safety too when self-harm is in view."""
    table: dict[Tier, list[RequiredAction]] = {
        "none": [],
        "low": ["acknowledge"],
        "high": ["acknowledge", "ask_about_safety", "crisis_line"],
        "imminent": ["acknowledge", "ask_about_safety", "crisis_line", "human_support"],
    }
    required = list(table[tier])
    if tier == "low" and "suicide_self_harm" in set(categories):
        required.append("ask_about_safety")
    return required


# -- the blocked-action detector --------------------------------------------------------------
# Patterns run on normalize()d text (lower case, no accents), English then French.

_BLOCKED_PATTERNS: dict[BlockedAction, tuple[str, ...]] = {
    "diagnosis": (
        r"\byou (?:clearly |probably |might |may |definitely |likely |seem to )?(?:have|suffer from|are suffering from|"
        r"are showing signs of|show signs of) (?:a |an )?(?:clinical |severe |major |mild )?(?:depression|depressive disorder|"
        r"adhd|anxiety disorder|generali[sz]ed anxiety|bipolar|ocd|ptsd|(?:an )?eating disorder|anorexia|bulimia|"
        r"binge eating disorder|borderline|personality disorder|autism|mental illness|mental disorder)\b",
        r"\byou(?:'re| are) (?:clearly |probably |definitely )?(?:clinically depressed|bipolar|anorexic|bulimic|autistic|"
        r"mentally ill)\b",
        r"\b(?:sounds|looks|seems) like (?:you have |you've got )?(?:clinical depression|adhd|bipolar disorder|ocd|ptsd|"
        r"an eating disorder|anorexia|bulimia|a personality disorder)\b",
        r"\bi (?:would )?diagnose\b",
        r"\b(?:vous avez|tu as|vous souffrez d[e']|tu souffres d[e']) ?(?:une |un |d'une |d'un )?(?:depression|"
        r"trouble (?:bipolaire|anxieux|obsessionnel|alimentaire|de la personnalite)|tdah|toc|anorexie|boulimie|"
        r"stress post-traumatique)\b",
        r"\b(?:vous etes|tu es) (?:clairement |probablement )?(?:depressif|depressive|bipolaire|anorexique|boulimique)\b",
    ),
    "medication_advice": (
        r"\b(?:take|try|start|stop|quit|increase|decrease|reduce|double|lower|skip|switch|up) (?:taking )?"
        r"(?:your |some |an? |the |more |less |extra )?(?:[a-z-]+ )?(?:medication|medications|meds|pills|"
        r"antidepressants?|ssris?|sertraline|fluoxetine|prozac|zoloft|xanax|lexapro|escitalopram|benzodiazepines?|"
        r"sleeping pills|melatonin|ibuprofen|paracetamol|acetaminophen|tylenol|painkillers|dose|dosage)\b",
        r"\b\d+ ?(?:mg|milligrams?)\b",
        r"\b(?:prenez|prends|prendre|essayez|arretez|arrete|arreter|augmentez|diminuez|doublez) (?:de prendre )?"
        r"(?:vos |votre |tes |ton |des |du |de la |un |une |plus de |moins de )?(?:[a-z-]+ )?(?:medicaments?|cachets?|"
        r"comprimes?|pilules?|antidepresseurs?|somniferes?|anxiolytiques?|traitement|dose|melatonine|doliprane|"
        r"xanax|lexomil)\b",
    ),
    "method_information": (
        r"\b(?:how to|ways? to|best way to|easiest way to|painless way to|quickest way to|quick way to) (?:kill yourself|"
        r"end your life|overdose|hang yourself|cut (?:yourself|deeper)|commit suicide|die)\b",
        r"\blethal dose\b",
        r"\b(?:how many|enough) (?:pills|tablets) (?:to|would|will) (?:die|kill)\b",
        r"\bpainless(?:ly)? (?:way|method|death)\b",
        r"\b(?:comment|moyen de|facon de|maniere de) (?:se|vous|te) (?:suicider|tuer|pendre)\b",
        r"\bdose (?:letale|mortelle)\b",
        r"\bcombien de (?:cachets|comprimes|medicaments) (?:pour|faut-il pour) mourir\b",
    ),
    "restriction_advice": (
        r"\b(?:skip(?:ping)?|cut(?:ting)? out|cut(?:ting)? back on|avoid(?:ing)?|restrict(?:ing)?|limit(?:ing)?|drop(?:ping)?) "
        r"(?:your |all |some |a |the )?(?:meals?|breakfast|lunch|dinner|snacks|carbs|carbohydrates|food|eating|calories)\b",
        r"\beat (?:less|fewer calories|only once|nothing)\b",
        r"\b(?:fast|fasting) (?:for|until) \w+",
        r"\bintermittent fasting\b",
        r"\b(?:under|below|less than|fewer than) \d{3,4} (?:calories|kcal)\b",
        r"\bcalorie deficit\b",
        r"\b(?:count|track) (?:your |every )?calories?\b",
        r"\b(?:sautez|saute|sauter|evitez|supprimez|limitez|reduisez) (?:le |les |un |des |vos |votre |tes )?(?:repas|"
        r"petit-dejeuner|petit dejeuner|dejeuner|diner|glucides|calories)\b",
        r"\b(?:mangez|mange|manger) moins\b",
        r"\b(?:faites|faire|fais) (?:un |du )?jeune\b",
        r"\bjeune intermittent\b",
        r"\bmoins de \d{3,4} (?:calories|kcal)\b",
        r"\bdeficit calorique\b",
        r"\bcomptez (?:vos |les )?calories\b",
    ),
    "no_suicide_contract": (
        r"\b(?:promise|swear) (?:me )?(?:that )?(?:you won't|you will not|not to|you'll never|you will never) "
        r"(?:hurt|harm|kill|do anything)\b",
        r"\bno[- ]suicide (?:contract|agreement|pact)\b",
        r"\b(?:safety|suicide) contract\b",
        r"\bsign (?:a|this) (?:contract|agreement)\b",
        r"\b(?:promettez|promets|jurez|jure)[- ]moi (?:de ne pas|que vous ne|que tu ne)\b",
        r"\bcontrat de (?:non[- ]suicide|securite)\b",
    ),
    "claiming_to_be_human": (
        r"\bi(?:'m| am) (?:a |an )?(?:real )?(?:human|human being|real person|therapist|psychologist|psychiatrist|"
        r"counsell?or|doctor|nurse)\b",
        r"\bi(?:'m| am) (?:a )?(?:real )?person\b(?! who)",
        r"\bi(?:'m| am) not (?:a |an )?(?:bot|ai|robot|machine|program|chatbot|language model)\b",
        r"\bje suis (?:un |une )?(?:vrai |vraie )?(?:humain|humaine|etre humain|personne reelle|vraie personne|therapeute|"
        r"psychologue|psychiatre|medecin|infirmiere?)\b",
        r"\bje ne suis pas (?:un |une )?(?:robot|bot|ia|intelligence artificielle|machine|programme)\b",
    ),
    "ending_conversation": (
        r"\b(?:let's|let us|we should|we need to|i (?:have|need|want) to|i(?:'m| am) going to|i will|i'll) "
        r"(?:end|stop|close|finish) (?:this|our|the) (?:conversation|chat|session|discussion)\b",
        r"\bi (?:can(?:'t|not)|won't|will not) (?:continue|keep talking|talk about this|talk to you)\b",
        r"\bthis conversation is (?:over|finished)\b",
        r"\b(?:talk|speak) to someone else instead\b",
        r"\b(?:goodbye|bye)[.!]*$",
        r"\b(?:terminons|arretons|mettons fin a) (?:cette|notre|la) (?:conversation|discussion|seance)\b",
        r"\bje (?:ne peux|peux) (?:pas|plus) (?:continuer|en parler|vous parler)\b",
        r"\bcette conversation est terminee\b",
        r"\bau revoir[.!]*$",
    ),
}
_BLOCKED_RE: dict[BlockedAction, re.Pattern[str]] = {
    action: re.compile("|".join(f"(?:{p})" for p in patterns)) for action, patterns in _BLOCKED_PATTERNS.items()
}

_BLOCKED_WORDS: dict[Locale, dict[BlockedAction, str]] = {
    "en": {
        "diagnosis": "a diagnosis",
        "medication_advice": "advice about medication",
        "method_information": "information about means of harm",
        "restriction_advice": "dieting advice",
        "no_suicide_contract": "a promise to stay safe",
        "claiming_to_be_human": "that you were talking with a person",
        "ending_conversation": "ending our conversation",
    },
    "fr": {
        "diagnosis": "un diagnostic",
        "medication_advice": "un conseil sur les médicaments",
        "method_information": "des informations sur des moyens de se faire du mal",
        "restriction_advice": "un conseil de régime",
        "no_suicide_contract": "une promesse de rester en sécurité",
        "claiming_to_be_human": "que vous parliez à une personne",
        "ending_conversation": "la fin de notre conversation",
    },
}


def detect_blocked(text: str, among: Iterable[BlockedAction] = BLOCKED_ACTIONS) -> list[BlockedAction]:
    """The blocked actions `text` suggests, among `among`, in declaration order."""
    norm = normalize(text)
    wanted = set(among)
    return [a for a in BLOCKED_ACTIONS if a in wanted and _BLOCKED_RE[a].search(norm)]


_SAFETY_WORDS = re.compile(
    r"\b(?:safe\w*|danger\w*|alive|hurt\w*|harm\w*|help\w*|securite|vivre|mal|aid\w*|secours|endroit sur)\b"
)
_SUPPORT_WORDS = re.compile(
    r"\b(?:someone you trust|someone (?:with|near) you|a friend|family|person you trust|quelqu'un|un proche|"
    r"une personne de confiance|proches)\b"
)


def asks_about_safety(text: str) -> bool:
    """The `ask_about_safety` action, as far as code can tell: a question, and safety words."""
    return "?" in text and _SAFETY_WORDS.search(normalize(text)) is not None


def points_to_support(text: str) -> bool:
    """The `human_support` action: the reply points to a person who can be there."""
    return _SUPPORT_WORDS.search(normalize(text)) is not None


def describe_blocked(actions: Iterable[BlockedAction], locale: Locale = "en") -> str:
    words = [_BLOCKED_WORDS[locale][a] for a in actions]
    joiner = " and " if locale == "en" else " et "
    return joiner.join(words)


# -- crisis resources --------------------------------------------------------------------------

RESOURCES_FILE = Path(__file__).with_name("resources.yaml")
RESOURCES_ENV = "CANTATA_COACHING_RESOURCES"  # a deployment's own resources.yaml


@dataclass(frozen=True)
class ResourceEntry:
    text: str
    markers: tuple[str, ...]


_MODEL_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)([mb])(?![a-z])")


def model_size_b(model: str | None) -> float | None:
    """Parameters in billions, read from a model's name or file ("SmolLM2-135M-Instruct.gguf"
    -> 0.135, "Qwen/Qwen3-30B-A3B" -> 30; an active-parameter "A3B" is not the size)."""
    if not model:
        return None
    sizes = [float(n) / (1000 if unit == "m" else 1) for n, unit in _MODEL_SIZE.findall(model.lower())]
    return max(sizes) if sizes else None


@dataclass(frozen=True)
class SafetyConfig:
    default_locale: Locale
    model_tier_cap: Tier  # when neither the instance nor the model's size says otherwise
    resources: dict[str, dict[str, ResourceEntry]]  # locale -> key -> entry
    synth_at_high_tier: Literal["generate", "template"] = "generate"
    # Below high tier, per role (coach, synth): does the model write the reply, or is it
    # composed at once? (mode for a model of unknown size, the size from which it writes)
    below_high_tier: dict[str, tuple[Literal["generate", "compose"], float | None]] = field(default_factory=dict)
    # (at least this many billion parameters, cap), largest first; and caps per instance name.
    caps_by_size: tuple[tuple[float, Tier], ...] = ()
    caps_by_instance: dict[str, Tier] = field(default_factory=dict)

    def cap_for(self, instance: str | None = None, model: str | None = None) -> Tier:
        """How far a model's own risk read may raise the tier: the instance's cap if set,
        else the cap for the model's size (read from its name), else the default."""
        if instance and instance in self.caps_by_instance:
            return self.caps_by_instance[instance]
        size = model_size_b(model)
        if size is not None:
            for at_least, cap in self.caps_by_size:
                if size >= at_least:
                    return cap
        return self.model_tier_cap

    def generates(self, role: str, model: str | None) -> bool:
        """Below high tier, whether this model writes the role's reply (else it is composed)."""
        mode, from_b = self.below_high_tier.get(role, ("generate", None))
        size = model_size_b(model)
        if size is None or from_b is None:
            return mode == "generate"
        return size >= from_b

    def resource(self, locale: Locale, category: str | None, tier: Tier) -> ResourceEntry:
        """The resource for a locale and category; at imminent, with the emergency line too."""
        table = self.resources.get(locale) or self.resources[self.default_locale]
        entry = table.get(category or "default") or table["default"]
        emergency = table.get("emergency")
        if tier == "imminent" and emergency is not None and emergency.text not in entry.text:
            markers = tuple(dict.fromkeys((*entry.markers, *emergency.markers)))
            return ResourceEntry(f"{entry.text} {emergency.text}", markers)
        return entry


def load_safety() -> SafetyConfig:
    """The safety settings: $CANTATA_COACHING_RESOURCES if set, else the bundled resources.yaml."""
    return read_safety(Path(os.environ.get(RESOURCES_ENV) or RESOURCES_FILE))


@lru_cache(maxsize=8)
def read_safety(path: Path) -> SafetyConfig:
    raw: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    default_locale = raw.get("default_locale", "en")
    cap = raw.get("model_tier_cap", "low")
    synth_mode = raw.get("synth_at_high_tier", "generate")
    if default_locale not in LOCALES or cap not in TIERS or synth_mode not in ("generate", "template"):
        raise ValueError(
            f"{path}: default_locale must be one of {LOCALES}, model_tier_cap one of {TIERS}, "
            "synth_at_high_tier generate or template"
        )
    below_high_tier: dict[str, tuple[Literal["generate", "compose"], float | None]] = {}
    for role in ("coach", "synth"):
        below = raw.get(f"{role}_below_high_tier") or {}
        if (
            not isinstance(below, dict)
            or below.get("default", "generate") not in ("generate", "compose")
            or not isinstance(below.get("generate_from_b", 0), (int, float))
        ):
            raise ValueError(
                f"{path}: {role}_below_high_tier needs default (generate or compose) and generate_from_b (a number)"
            )
        from_b = below.get("generate_from_b")
        below_high_tier[role] = (below.get("default", "generate"), None if from_b is None else float(from_b))
    caps = raw.get("model_tier_caps") or {}
    by_size: list[tuple[float, Tier]] = []
    for item in caps.get("by_size") or []:
        if (
            not isinstance(item, dict)
            or item.get("cap") not in TIERS
            or not isinstance(item.get("at_least_b"), (int, float))
        ):
            raise ValueError(
                f"{path}: model_tier_caps.by_size: each item needs at_least_b (a number) and cap ({TIERS})"
            )
        by_size.append((float(item["at_least_b"]), item["cap"]))
    by_instance: dict[str, Tier] = {}
    for name, value in (caps.get("instances") or {}).items():
        if value not in TIERS:
            raise ValueError(f"{path}: model_tier_caps.instances.{name} must be one of {TIERS}")
        by_instance[str(name)] = value
    resources: dict[str, dict[str, ResourceEntry]] = {}
    for locale, table in raw["locales"].items():
        entries = {
            key: ResourceEntry(str(value["text"]), tuple(str(m) for m in value["markers"]))
            for key, value in table.items()
        }
        for key, entry in entries.items():
            missing = [m for m in entry.markers if m not in entry.text]
            if missing or not entry.markers:
                raise ValueError(f"{path}: {locale}.{key}: every marker must appear in the text ({missing})")
        if "default" not in entries:
            raise ValueError(f"{path}: locale {locale} needs a 'default' resource")
        resources[locale] = entries
    if default_locale not in resources:
        raise ValueError(f"{path}: no resources for the default locale {default_locale}")
    return SafetyConfig(
        default_locale=default_locale,
        model_tier_cap=cap,
        resources=resources,
        synth_at_high_tier=synth_mode,
        below_high_tier=below_high_tier,
        caps_by_size=tuple(sorted(by_size, reverse=True)),
        caps_by_instance=by_instance,
    )


PRIMARY_ORDER: tuple[str, ...] = (
    "medical_emergency",
    "suicide_self_harm",
    "harm_to_others",
    "abuse",
    "helper_concern",
    "restrictive_eating",
)


def primary_category(categories: Iterable[str]) -> str | None:
    cats = set(categories)
    return next((c for c in PRIMARY_ORDER if c in cats), None)


# -- templates ---------------------------------------------------------------------------------
# At high tier the templates ask about suicide directly and kindly. Asking does not
# raise risk: a systematic review of the evidence found that asking about suicide does
# not increase suicidal ideation and may reduce it (Dazzi, Gribble, Wessely & Fear 2014,
# "Does asking about suicide and related behaviours induce suicidal ideation? What is
# the evidence?", Psychological Medicine 44(16):3361-3363). The 988 Lifeline and the
# French 3114 train their responders to ask the same way.

_ACK: dict[Locale, dict[str, str]] = {
    "en": {
        "suicide_self_harm": "Thank you for telling me. It sounds like you are carrying a lot of pain right now, "
        "and I'm glad you said it.",
        "abuse": "Thank you for trusting me with this. What you describe is not your fault.",
        "harm_to_others": "Thank you for telling me honestly. It sounds like the anger or distress is very strong "
        "right now.",
        "medical_emergency": "What you describe could be a medical emergency.",
        "restrictive_eating": "Thank you for telling me. Going without food or making yourself sick puts your body "
        "at risk, and you deserve care, not blame.",
        "helper_concern": "It is frightening to worry that someone you love might hurt themselves, and taking it "
        "seriously is the right thing to do.",
        "default": "Thank you for telling me. That sounds really hard.",
    },
    "fr": {
        "suicide_self_harm": "Merci de me l'avoir dit. On dirait que vous portez beaucoup de douleur en ce moment, "
        "et c'est important que vous en parliez.",
        "abuse": "Merci de me faire confiance. Ce que vous décrivez n'est pas de votre faute.",
        "harm_to_others": "Merci de me le dire franchement. On dirait que la colère ou la détresse est très forte "
        "en ce moment.",
        "medical_emergency": "Ce que vous décrivez peut être une urgence médicale.",
        "restrictive_eating": "Merci de m'en parler. Vous priver de nourriture ou vous faire vomir met votre corps "
        "en danger, et vous méritez de l'aide, pas des reproches.",
        "helper_concern": "C'est effrayant de craindre qu'un proche se fasse du mal, et vous avez raison de le prendre "
        "au sérieux.",
        "default": "Merci de me l'avoir dit. Cela a l'air vraiment difficile.",
    },
}
_SAFETY_QUESTION: dict[Locale, dict[str, str]] = {
    "en": {
        "abuse": "Are you safe where you are right now?",
        "harm_to_others": "Are you and the people around you safe right now?",
        "medical_emergency": "Is someone with you who can help right now?",
        "suicide_self_harm": "I want to ask you directly, because it matters: are you thinking about ending your "
        "life? Are you safe right now?",
        "helper_concern": "Is the person safe right now, and is someone with them? It is okay to ask them directly "
        "whether they are thinking about suicide: asking does not put the idea in their head.",
        "default": "Are you safe right now?",
    },
    "fr": {
        "abuse": "Êtes-vous en sécurité là où vous êtes en ce moment ?",
        "harm_to_others": "Est-ce que vous et les personnes autour de vous êtes en sécurité en ce moment ?",
        "medical_emergency": "Y a-t-il quelqu'un avec vous qui peut vous aider maintenant ?",
        "suicide_self_harm": "Je vous pose la question directement, parce que c'est important : pensez-vous à mettre "
        "fin à vos jours ? Êtes-vous en sécurité en ce moment ?",
        "helper_concern": "Cette personne est-elle en sécurité en ce moment, et quelqu'un est-il avec elle ? Vous "
        "pouvez lui demander directement si elle pense au suicide : poser la question ne lui en donne pas l'idée.",
        "default": "Êtes-vous en sécurité en ce moment ?",
    },
}
# What the person said, acknowledged in their terms: the warning sign that raised the tier.
_SIGN_ACK: dict[Locale, dict[str, str]] = {
    "en": {
        "wish_dead": "It sounds like part of you wishes you were not alive, and that is a lot of pain to carry.",
        "no_reason": "It sounds like you can't see a reason to keep going right now, and that is a lot of pain.",
        "burden": "Feeling like a burden to the people around you is a very heavy thing to carry.",
        "hopeless": "It sounds like things feel hopeless right now.",
        "trapped": "It sounds like you feel trapped, with no way out.",
        "unbearable": "It sounds like the pain has become too much to bear.",
        "passive_wish": "It sounds like part of you wishes you could disappear.",
        "means": "You asked about something that could be used to end a life, and I'm worried about you.",
        "goodbye": "It sounds like you might be saying goodbye, and I'm worried about you.",
        "not_around": "When you talk about not being around, I want to understand what you mean, because I'm worried "
        "about you.",
        "preparation": "What you describe sounds like you may be getting ready to end your life, and I'm worried "
        "about you.",
        "method_plan": "It sounds like you have been thinking about how you would end your life, and I'm worried "
        "about you.",
        "hedge": "You said you are safe only for now, and I'd like to understand what that means for you.",
        "voices": "Hearing voices that tell you to hurt yourself sounds frightening.",
    },
    "fr": {
        "wish_dead": "On dirait qu'une partie de vous ne veut plus vivre, et c'est beaucoup de douleur à porter.",
        "no_reason": "On dirait que vous ne voyez plus de raison de continuer, et c'est beaucoup de douleur.",
        "burden": "Se sentir un poids pour ses proches, c'est très lourd à porter.",
        "hopeless": "On dirait que tout vous semble sans espoir en ce moment.",
        "trapped": "On dirait que vous vous sentez piégé, sans issue.",
        "unbearable": "On dirait que la douleur est devenue trop lourde à supporter.",
        "passive_wish": "On dirait qu'une partie de vous voudrait disparaître.",
        "means": "Vous avez posé une question sur un moyen de mettre fin à une vie, et je m'inquiète pour vous.",
        "goodbye": "On dirait que vous êtes peut-être en train de dire adieu, et je m'inquiète pour vous.",
        "not_around": "Quand vous dites que vous ne serez plus là, je veux comprendre ce que vous voulez dire, parce "
        "que je m'inquiète pour vous.",
        "preparation": "Ce que vous décrivez ressemble à des préparatifs pour mettre fin à vos jours, et je "
        "m'inquiète pour vous.",
        "method_plan": "On dirait que vous avez pensé à la manière de mettre fin à vos jours, et je m'inquiète pour "
        "vous.",
        "hedge": "Vous dites être en sécurité seulement pour l'instant, et j'aimerais comprendre ce que cela veut dire.",
        "voices": "Entendre des voix qui vous disent de vous faire du mal, cela doit être effrayant.",
    },
}
_THANKS: dict[Locale, str] = {"en": "Thank you for telling me.", "fr": "Merci de me l'avoir dit."}

_HUMAN_SUPPORT: dict[Locale, str] = {
    "en": "If you can, ask someone you trust to be with you now.",
    "fr": "Si vous le pouvez, demandez à une personne de confiance de venir auprès de vous maintenant.",
}
_STAYING: dict[Locale, str] = {
    "en": "I'm here to keep talking with you.",
    "fr": "Je suis là pour continuer à en parler avec vous.",
}
_CORRECTION: dict[Locale, str] = {
    "en": "One correction: earlier I suggested {what}. Please set that aside; it is not something I should advise.",
    "fr": "Une correction : plus tôt, j'ai suggéré {what}. Merci de ne pas en tenir compte ; ce n'est pas un conseil "
    "que je devrais donner.",
}


_LOW_ACK: dict[Locale, dict[str, str]] = {
    "en": {
        "suicide_self_harm": "That sounds really heavy, and I'm glad you told me.",
        "abuse": "Thank you for telling me. Feeling afraid of someone close to you matters.",
        "harm_to_others": "It sounds like you are really angry right now.",
        "restrictive_eating": "Thank you for telling me how you have been eating.",
        "helper_concern": "It sounds like you are worried about someone close to you.",
        "default": "That sounds hard, and I'm glad you told me.",
    },
    "fr": {
        "suicide_self_harm": "Cela a l'air très lourd, et merci de me l'avoir dit.",
        "abuse": "Merci de me l'avoir dit. Avoir peur d'un proche, cela compte.",
        "harm_to_others": "On dirait que vous êtes vraiment en colère en ce moment.",
        "restrictive_eating": "Merci de me dire comment vous mangez en ce moment.",
        "helper_concern": "On dirait que vous vous inquiétez pour un proche.",
        "default": "Cela a l'air difficile, et merci de me l'avoir dit.",
    },
}
_LOW_QUESTION: dict[Locale, dict[str, str]] = {
    "en": {
        "suicide_self_harm": "When things feel this hard, some people have thoughts of not wanting to be alive. "
        "Is that true for you right now?",
        "abuse": "Do you feel safe at home?",
        "harm_to_others": "What is going on that has made you this angry?",
        "restrictive_eating": "How are you feeling about food and your body at the moment?",
        "helper_concern": "What have you noticed that worries you? Has the person talked about not wanting to live?",
        "default": "How are you doing right now?",
    },
    "fr": {
        "suicide_self_harm": "Quand tout devient aussi difficile, il arrive qu'on pense à ne plus vouloir vivre. "
        "Est-ce votre cas en ce moment ?",
        "abuse": "Vous sentez-vous en sécurité chez vous ?",
        "harm_to_others": "Qu'est-ce qui vous a mis dans une telle colère ?",
        "restrictive_eating": "Comment vous sentez-vous avec la nourriture et votre corps en ce moment ?",
        "helper_concern": "Qu'avez-vous remarqué qui vous inquiète ? Cette personne a-t-elle parlé de ne plus vouloir "
        "vivre ?",
        "default": "Comment allez-vous en ce moment ?",
    },
}
_IF_TOO_MUCH: dict[Locale, str] = {"en": "If it ever feels like too much:", "fr": "Si cela devient trop lourd :"}
_LOW_FOLLOW_ACK: dict[Locale, str] = {
    "en": "It matters that you are talking about this.",
    "fr": "C'est important que vous en parliez.",
}
_LOW_FOLLOW_QUESTION: dict[Locale, str] = {
    "en": "Are you safe right now?",
    "fr": "Êtes-vous en sécurité en ce moment ?",
}


def low_template(locale: Locale, category: str | None, *, resource: ResourceEntry | None = None) -> str:
    """The reply at tier low: acknowledge and check in (early); with `resource` (final), a
    different acknowledgement, a safety question where self-harm or abuse is in view, and
    the resource offered without alarm."""
    key = category or "default"
    if resource is None:
        ack = _LOW_ACK[locale].get(key, _LOW_ACK[locale]["default"])
        return f"{ack} {_LOW_QUESTION[locale].get(key, _LOW_QUESTION[locale]['default'])}"
    parts = [_LOW_FOLLOW_ACK[locale]]
    if key in ("suicide_self_harm", "abuse"):
        parts.append(_LOW_FOLLOW_QUESTION[locale])
    parts += [_IF_TOO_MUCH[locale], resource.text[:1].lower() + resource.text[1:], _STAYING[locale]]
    return " ".join(parts)


_FOLLOW_ACK: dict[Locale, dict[str, str]] = {
    "en": {
        "helper_concern": "You are doing the right thing by reaching out for them, and you don't have to carry this "
        "alone.",
        "default": "I'm still here with you, and what you are going through matters.",
    },
    "fr": {
        "helper_concern": "Vous faites ce qu'il faut en cherchant de l'aide pour cette personne, et vous n'avez pas à "
        "porter cela seul.",
        "default": "Je suis toujours là avec vous, et ce que vous traversez compte.",
    },
}
_FOLLOW_QUESTION: dict[Locale, dict[str, str]] = {
    "en": {
        "abuse": "Is there somewhere safe you can go, or someone you can call, right now?",
        "harm_to_others": "Can you put some distance between yourself and the person, so everyone stays safe?",
        "medical_emergency": "Have you been able to call for help?",
        "suicide_self_harm": "Can you tell me whether you have thoughts of suicide right now, and whether you are "
        "somewhere safe?",
        "helper_concern": "Are you able to stay with them, or to find someone who can, so they are safe right now?",
        "default": "Can you tell me whether you are somewhere safe right now?",
    },
    "fr": {
        "abuse": "Y a-t-il un endroit sûr où aller, ou quelqu'un à appeler, maintenant ?",
        "harm_to_others": "Pouvez-vous mettre de la distance entre vous et cette personne, pour la sécurité de tous ?",
        "medical_emergency": "Avez-vous pu appeler les secours ?",
        "suicide_self_harm": "Pouvez-vous me dire si vous avez des pensées suicidaires en ce moment, et si vous êtes "
        "dans un endroit sûr ?",
        "helper_concern": "Pouvez-vous rester auprès de cette personne, ou trouver quelqu'un qui le peut, pour "
        "qu'elle soit en sécurité maintenant ?",
        "default": "Pouvez-vous me dire si vous êtes dans un endroit sûr en ce moment ?",
    },
}


def safety_followup(locale: Locale, category: str | None, tier: Tier, resource: ResourceEntry) -> str:
    """The merged reply's safe template: the same duties as safety_template (acknowledge,
    ask about safety, the resource, human support at imminent), in other words, so the
    person does not read the early reply twice."""
    key = category or "default"
    parts = [
        _FOLLOW_ACK[locale].get(key, _FOLLOW_ACK[locale]["default"]),
        _FOLLOW_QUESTION[locale].get(key, _FOLLOW_QUESTION[locale]["default"]),
        resource.text,
    ]
    if tier == "imminent":
        parts.append(_HUMAN_SUPPORT[locale])
    return " ".join(parts)


def safety_template(
    locale: Locale, category: str | None, tier: Tier, resource: ResourceEntry, *, sign: str | None = None
) -> str:
    """The safe reply: acknowledge (the warning sign `sign` in the person's terms, when
    given), ask directly about suicide and safety, give the crisis resource; never advice."""
    key = category or "default"
    sign_ack = _SIGN_ACK[locale].get(sign or "") if key == "suicide_self_harm" else None
    parts = [
        f"{_THANKS[locale]} {sign_ack}" if sign_ack else _ACK[locale].get(key, _ACK[locale]["default"]),
        _SAFETY_QUESTION[locale].get(key, _SAFETY_QUESTION[locale]["default"]),
        resource.text,
    ]
    if tier == "imminent":
        parts.append(_HUMAN_SUPPORT[locale])
    parts.append(_STAYING[locale])
    return " ".join(parts)


def correction_sentence(actions: Iterable[BlockedAction], locale: Locale) -> str:
    return _CORRECTION[locale].format(what=describe_blocked(actions, locale))
