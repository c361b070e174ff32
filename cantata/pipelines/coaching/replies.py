"""The safe replies of the coaching guard, as data: lexicon/<locale>/replies.yaml.

Each template is named, with the tiers it serves, the situation it answers and its source,
so a clinician and a translator review the words without reading Python; this module only
puts them together (which template, in which order, at which tier). A locale is a folder of
files: one that misses a template, or a text a template needs, is refused at load with its
file and the template's name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from cantata.errors import SpecError
from cantata.pipelines.coaching.lexicon import LEXICON_DIR, _files, _keys, _text
from cantata.pipelines.coaching.safety import (
    BLOCKED_ACTIONS,
    LOCALES,
    TIERS,
    BlockedAction,
    Locale,
    ResourceEntry,
    Tier,
)
from cantata.yamlsource import Loc, YamlSource

Shape = Literal["text", "by_category", "by_sign", "by_action"]

# Every template a locale provides, and its shape: one text, or texts by guard category (with
# a `default` for the others), by warning sign (the guard's family), or by blocked action.
TEMPLATES: dict[str, Shape] = {
    "ack": "by_category",
    "thanks": "text",
    "sign_ack": "by_sign",
    "safety_question": "by_category",
    "human_support": "text",
    "staying": "text",
    "follow_ack": "by_category",
    "follow_question": "by_category",
    "low_ack": "by_category",
    "low_question": "by_category",
    "low_follow_ack": "text",
    "low_follow_question": "text",
    "if_too_much": "text",
    "correction": "text",
    "blocked_words": "by_action",
    "and": "text",
}


@dataclass(frozen=True)
class Replies:
    """One locale's templates, put together into the safe replies."""

    locale: str
    texts: dict[str, str]
    keyed: dict[str, dict[str, str]]

    def _by(self, name: str, key: str | None) -> str:
        table = self.keyed[name]
        return table.get(key or "default", table["default"])

    def low_template(self, category: str | None, *, resource: ResourceEntry | None = None) -> str:
        """The reply at tier low: acknowledge and check in (early); with `resource` (final), a
        different acknowledgement, a safety question where self-harm or abuse is in view, and
        the resource offered without alarm."""
        if resource is None:
            return f"{self._by('low_ack', category)} {self._by('low_question', category)}"
        parts = [self.texts["low_follow_ack"]]
        if category in ("suicide_self_harm", "abuse"):
            parts.append(self.texts["low_follow_question"])
        parts += [self.texts["if_too_much"], resource.text[:1].lower() + resource.text[1:], self.texts["staying"]]
        return " ".join(parts)

    def safety_followup(self, category: str | None, tier: Tier, resource: ResourceEntry) -> str:
        """The merged reply's safe template: the same duties as safety_template (acknowledge,
        ask about safety, the resource, human support at imminent), in other words, so the
        person does not read the early reply twice."""
        parts = [self._by("follow_ack", category), self._by("follow_question", category), resource.text]
        if tier == "imminent":
            parts.append(self.texts["human_support"])
        return " ".join(parts)

    def safety_template(
        self, category: str | None, tier: Tier, resource: ResourceEntry, *, sign: str | None = None
    ) -> str:
        """The safe reply: acknowledge (the warning sign `sign` in the person's terms, when
        given), ask directly about suicide and safety, give the crisis resource; never advice."""
        sign_ack = self.keyed["sign_ack"].get(sign or "") if category == "suicide_self_harm" else None
        parts = [
            f"{self.texts['thanks']} {sign_ack}" if sign_ack else self._by("ack", category),
            self._by("safety_question", category),
            resource.text,
        ]
        if tier == "imminent":
            parts.append(self.texts["human_support"])
        parts.append(self.texts["staying"])
        return " ".join(parts)

    def describe_blocked(self, actions: Iterable[BlockedAction]) -> str:
        return f" {self.texts['and']} ".join(self.keyed["blocked_words"][a] for a in actions)

    def correction_sentence(self, actions: Iterable[BlockedAction]) -> str:
        return self.texts["correction"].format(what=self.describe_blocked(actions))


def _template(source: YamlSource, name: str, shape: Shape, raw: object) -> tuple[str | None, dict[str, str]]:
    loc: Loc = ("templates", name)
    item = _keys(source, raw, loc, {"tier", "situation", "source", shape})
    tiers = item["tier"]
    if not isinstance(tiers, list) or not tiers or not set(tiers) <= set(TIERS):
        raise SpecError(f"{source.at((*loc, 'tier'))}: tier must be a non-empty list of {', '.join(TIERS)}")
    _text(source, item["situation"], (*loc, "situation"), "situation")
    _text(source, item["source"], (*loc, "source"), "source")
    if shape == "text":
        text = _text(source, item["text"], (*loc, "text"), "text")
        if name == "correction" and "{what}" not in text:
            raise SpecError(f"{source.at((*loc, 'text'))}: the correction names what it withdraws: {{what}}")
        return text, {}
    table = item[shape]
    if not isinstance(table, dict) or not table:
        raise SpecError(f"{source.at((*loc, shape))}: {shape} must be a mapping of keys to texts")
    needed = {"default"} if shape == "by_category" else set(BLOCKED_ACTIONS) if shape == "by_action" else set[str]()
    missing = sorted(needed - set(table))
    if missing:
        raise SpecError(f"{source.at((*loc, shape))}: template {name} has no text for {', '.join(missing)}")
    return None, {str(k): _text(source, v, (*loc, shape, str(k)), f"{name}.{k}") for k, v in table.items()}


def load_replies(root: Path = LEXICON_DIR) -> dict[str, Replies]:
    """Every locale's templates (lexicon/<locale>/replies.yaml under `root`)."""
    out: dict[str, Replies] = {}
    for locale, source in _files("replies", root):
        raw = source.data.get("templates") if isinstance(source.data, dict) else None
        if not isinstance(raw, dict):
            raise SpecError(f"{source.where(())}: the file needs 'templates', a mapping of names to templates")
        missing = [name for name in TEMPLATES if name not in raw]
        if missing:
            raise SpecError(f"{source.where(('templates',))}: missing template {', '.join(missing)}")
        unknown = [name for name in raw if name not in TEMPLATES]
        if unknown:
            raise SpecError(
                f"{source.at(('templates', str(unknown[0])))}: unknown template; known: {', '.join(TEMPLATES)}"
            )
        texts: dict[str, str] = {}
        keyed: dict[str, dict[str, str]] = {}
        for name, shape in TEMPLATES.items():
            text, table = _template(source, name, shape, raw[name])
            if text is None:
                keyed[name] = table
            else:
                texts[name] = text
        out[locale] = Replies(locale, texts, keyed)
    return out


@cache
def bundled_replies() -> dict[str, Replies]:
    """The bundled templates, loaded once; every locale the guard detects has them."""
    found = load_replies()
    missing = [locale for locale in LOCALES if locale not in found]
    if missing:
        raise SpecError(f"{LEXICON_DIR}: no replies.yaml for locale {', '.join(missing)}")
    return found


def low_template(locale: Locale, category: str | None, *, resource: ResourceEntry | None = None) -> str:
    return bundled_replies()[locale].low_template(category, resource=resource)


def safety_followup(locale: Locale, category: str | None, tier: Tier, resource: ResourceEntry) -> str:
    return bundled_replies()[locale].safety_followup(category, tier, resource)


def safety_template(
    locale: Locale, category: str | None, tier: Tier, resource: ResourceEntry, *, sign: str | None = None
) -> str:
    return bundled_replies()[locale].safety_template(category, tier, resource, sign=sign)


def describe_blocked(actions: Iterable[BlockedAction], locale: Locale = "en") -> str:
    return bundled_replies()[locale].describe_blocked(actions)


def correction_sentence(actions: Iterable[BlockedAction], locale: Locale) -> str:
    return bundled_replies()[locale].correction_sentence(actions)
