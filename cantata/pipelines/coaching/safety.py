"""Safety vocabulary shared by every coaching agent: tiers, blocked and required actions,
and the crisis resources per locale (resources.yaml). The safe templates are replies.py's,
the blocked-action detector reply_checks.py's; their words are data (lexicon/<locale>/).

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
    if not text.isascii():  # most messages are: nothing to decompose, one pass saved per character
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
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
