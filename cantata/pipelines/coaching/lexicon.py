"""Phrase families as data: per-locale YAML files a clinician and a translator can review.

A lexicon is one file name found in locale folders under lexicon/ (lexicon/en/, lexicon/fr/,
...): adding a locale is adding a folder of files, no Python (lexicon/README.md describes
them for a reviewer). Three kinds of file:

- a concept lexicon (`load_lexicon`): `families`, each with a `name` (what its phrases are a
  sign of), a `source` (the clinical source it comes from) and `phrases`;
- a sign file (`load_signs`): optional `terms` (named pieces of phrases, written once and
  used as {name}) and `signs`, each with an `id`, a `category`, a `source`, `phrases`, and
  either a `weight` (3 high alone, 2 or 1 weaker: rules.sign) or a `tier` (low, high,
  imminent: rules.rule) with an optional `weight` and the modifier steps it turns off
  (`negatable`, `escalates`, `negation_inside`: true unless set); an optional `family` when
  several signs count as one, an optional `gate` where the engine cannot read one from the
  phrases (words, or a {term} for the longest word of each of its options); an optional
  `with`, the further parts of a scene said over several sentences, each a list of phrases
  one of which the message must also hold;
- terms.yaml: the `terms` every sign file of its locale shares (a term may use the ones
  above it; a file may not define one of them again).

Phrases are regular expressions matched, whole words, on the tolerant() form of one sentence
(lower case, no accents, apostrophes straightened, text-speak expanded: tolerant.py); {end}
is the end of a clause (rules.END). A malformed file is refused at load with its file, line
and reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any, get_args

from cantata.errors import SpecError
from cantata.pipelines.coaching.rules import (
    END,
    HIGH,
    GateIndex,
    Rule,
    gate_of,
    rule,
    sentence_words,
    sign,
    vocabulary_gate,
)
from cantata.pipelines.coaching.safety import Category
from cantata.yamlsource import Loc, YamlSource, load_yaml

LEXICON_DIR = Path(__file__).with_name("lexicon")
_TERM = re.compile(r"\{([a-z_]+)\}")


@dataclass(frozen=True)
class Family:
    name: str
    locale: str
    source: str
    pattern: re.Pattern[str]
    gate: frozenset[str] | None = None  # words one of which every match holds (rules.gate_of)


@dataclass(frozen=True)
class Lexicon:
    """One concept lexicon's families, every locale together (a message's locale is not always
    known and people mix languages): `families_in` names those whose phrases a sentence holds."""

    families: tuple[Family, ...]

    def families_in(self, sentence: str) -> list[str]:
        return [f.name for f in self.families if f.pattern.search(sentence)]

    @cached_property
    def _index(self) -> GateIndex[Family]:
        return GateIndex(self.families)

    def matches(self, sentence: str, words: frozenset[str] | None = None) -> bool:
        """`words`: the sentence's rules.sentence_words, when the caller has them: only the
        families whose gate they pass are searched."""
        words = sentence_words(sentence) if words is None else words
        return any(f.pattern.search(sentence) for f in self._index.candidates(words))


def _text(source: YamlSource, value: Any, loc: Loc, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"{source.at(loc)}: {what} must be a non-empty string")
    return value


def _keys(
    source: YamlSource, item: Any, loc: Loc, required: set[str], optional: frozenset[str] = frozenset()
) -> dict[str, Any]:
    if not isinstance(item, dict) or not required <= set(item) or not set(item) <= required | optional:
        keys = ", ".join(sorted(required)) + (f" (and optionally {', '.join(sorted(optional))})" if optional else "")
        raise SpecError(f"{source.at(loc)}: an entry has exactly the keys {keys}")
    return item


def _list(source: YamlSource, raw: Any, key: str) -> list[Any]:
    if not isinstance(raw, dict) or key not in raw or not isinstance(raw[key], list):
        raise SpecError(f"{source.where(())}: the file needs '{key}', a list")
    entries: list[Any] = raw[key]
    return entries


def _phrases(source: YamlSource, item: dict[str, Any], loc: Loc, terms: dict[str, str]) -> list[str]:
    """The entry's phrases, their {terms} filled in (`_regex_errors` names one that is no regular expression)."""
    phrases = item["phrases"]
    if not isinstance(phrases, list) or not phrases:
        raise SpecError(f"{source.at((*loc, 'phrases'))}: phrases must be a non-empty list")
    out: list[str] = []
    for j, phrase in enumerate(phrases):
        where = (*loc, "phrases", j)
        _text(source, phrase, where, "a phrase")
        out.append(_expand(source, phrase, where, terms))
    return out


@contextmanager
def _regex_errors(source: YamlSource, loc: Loc, phrases: list[str]) -> Iterator[None]:
    """Around compiling the entry's phrases as one regular expression: where they are not one,
    the phrase that is none is named. (Compiling each phrase on its own first would double the
    cost of loading the rules.)"""
    try:
        yield
    except re.error as exc:
        for j, phrase in enumerate(phrases):
            try:
                re.compile(phrase)
            except re.error as wrong:
                raise SpecError(f"{source.at((*loc, 'phrases', j))}: not a regular expression ({wrong})") from wrong
        raise SpecError(f"{source.at((*loc, 'phrases'))}: the phrases are not one regular expression ({exc})") from exc


def _files(name: str, root: Path) -> list[tuple[str, YamlSource]]:
    found = [
        (folder.name, load_yaml(folder / f"{name}.yaml", SpecError))
        for folder in sorted(p for p in root.iterdir() if p.is_dir())
        if (folder / f"{name}.yaml").is_file()
    ]
    if not found:
        raise SpecError(f"{root}: no locale holds {name}.yaml")
    return found


def load_lexicon(name: str, root: Path = LEXICON_DIR) -> Lexicon:
    """The concept lexicon `name` (lexicon/<locale>/<name>.yaml) of every locale under `root`."""
    families: list[Family] = []
    for locale, source in _files(name, root):
        for i, item in enumerate(_list(source, source.data, "families")):
            loc: Loc = ("families", i)
            item = _keys(source, item, loc, {"name", "source", "phrases"})
            family = _text(source, item["name"], (*loc, "name"), "name")
            text = _text(source, item["source"], (*loc, "source"), "source")
            phrases = _phrases(source, item, loc, {})
            with _regex_errors(source, loc, phrases):
                pattern = re.compile(r"\b(?:" + "|".join(phrases) + r")\b")
            families.append(
                Family(name=family, locale=locale, source=text, pattern=pattern, gate=gate_of(tuple(phrases)))
            )
    return Lexicon(tuple(families))


_CATEGORIES: frozenset[str] = frozenset(get_args(Category))
_TIERS = ("low", "high", "imminent")
# The modifier steps a graded sign may turn off (rules.Rule): each defaults to true.
_STEPS = ("negatable", "escalates", "negation_inside")


def _expand(source: YamlSource, text: str, loc: Loc, terms: dict[str, str]) -> str:
    """`text` with each {name} replaced by the term's (already expanded) text."""
    unknown = [t for t in _TERM.findall(text) if t not in terms]
    if unknown:
        raise SpecError(f"{source.at(loc)}: unknown term {{{unknown[0]}}}; define it under 'terms' (above its use)")
    return _TERM.sub(lambda m: terms[m.group(1)], text)


def _terms(source: YamlSource, shared: dict[str, str]) -> dict[str, str]:
    """`shared` and the file's own `terms`, each expanded: a term may use the terms above it."""
    raw = source.data.get("terms", {}) if isinstance(source.data, dict) else {}
    if not isinstance(raw, dict):
        raise SpecError(f"{source.at(('terms',))}: terms must be a mapping of names to phrases")
    terms = {"end": END, **shared}
    for key, value in raw.items():
        loc: Loc = ("terms", str(key))
        if not isinstance(key, str) or not re.fullmatch(r"[a-z_]+", key) or key in terms:
            raise SpecError(f"{source.at(loc)}: a term is named in lower-case letters, once in a locale")
        terms[key] = _expand(source, _text(source, value, loc, f"term {key}"), loc, terms)
    return terms


def _shared_terms(folder: Path) -> dict[str, str]:
    """The locale's building blocks written once for all its files: lexicon/<locale>/terms.yaml."""
    path = folder / "terms.yaml"
    return _terms(load_yaml(path, SpecError), {}) if path.is_file() else {}


def _flag(source: YamlSource, item: dict[str, Any], loc: Loc, key: str, default: bool) -> bool:
    value = item.get(key, default)
    if not isinstance(value, bool):
        raise SpecError(f"{source.at((*loc, key))}: {key} must be true or false")
    return value


def _gate(source: YamlSource, item: dict[str, Any], loc: Loc, terms: dict[str, str]) -> frozenset[str] | None:
    """The words one of which every match contains, where the engine cannot read them from the
    phrases (rules.rule): words, and {term}s standing for the longest word of each of their options."""
    if "gate" not in item:
        return None
    raw = item["gate"]
    if not isinstance(raw, list) or not raw:
        raise SpecError(f"{source.at((*loc, 'gate'))}: gate must be a non-empty list of words and {{terms}}")
    words: set[str] = set()
    for j, word in enumerate(raw):
        where = (*loc, "gate", j)
        word = _text(source, word, where, "a gate word")
        if _TERM.fullmatch(word):
            words |= vocabulary_gate(_expand(source, word, where, terms))
        elif re.fullmatch(r"[a-z0-9'-]+", word):
            words.add(word)
        else:
            raise SpecError(f"{source.at(where)}: a gate word is one lower-case word or a {{term}}")
    return frozenset(words)


def _scene(source: YamlSource, item: dict[str, Any], loc: Loc, terms: dict[str, str]) -> list[list[str]]:
    """The further parts of a scene (`with`): each a list of phrases, one of which the message
    must also hold; each phrase checked on its own (a scene has few)."""
    raw = item.get("with", [])
    if not isinstance(raw, list) or ("with" in item and not raw):
        raise SpecError(f"{source.at((*loc, 'with'))}: with must be a non-empty list of parts, each a list of phrases")
    parts: list[list[str]] = []
    for k, part in enumerate(raw):
        if not isinstance(part, list) or not part:
            raise SpecError(f"{source.at((*loc, 'with', k))}: a part must be a non-empty list of phrases")
        phrases: list[str] = []
        for j, phrase in enumerate(part):
            where = (*loc, "with", k, j)
            phrase = _expand(source, _text(source, phrase, where, "a phrase"), where, terms)
            try:
                re.compile(phrase)
            except re.error as wrong:
                raise SpecError(f"{source.at(where)}: not a regular expression ({wrong})") from wrong
            phrases.append(phrase)
        parts.append(phrases)
    return parts


def _sign(source: YamlSource, item: Any, loc: Loc, scope: str, terms: dict[str, str]) -> Rule:
    """The rule of one entry; its id is "<scope>.<id>"."""
    graded = isinstance(item, dict) and "tier" in item
    required = {"id", "category", "source", "phrases", "tier" if graded else "weight"}
    optional = {"family", "gate", "with", *(("weight", *_STEPS) if graded else ())}
    item = _keys(source, item, loc, required, frozenset(optional))
    category = item["category"]
    if category not in _CATEGORIES:
        raise SpecError(f"{source.at((*loc, 'category'))}: category must be one of {sorted(_CATEGORIES)}")
    ident = f"{scope}.{_text(source, item['id'], (*loc, 'id'), 'id')}"
    _text(source, item["source"], (*loc, "source"), "source")
    family = _text(source, item.get("family", item["id"]), (*loc, "family"), "family")
    phrases = _phrases(source, item, loc, terms)
    gate = _gate(source, item, loc, terms)
    also = _scene(source, item, loc, terms)
    weight = item.get("weight")
    if weight is not None and (isinstance(weight, bool) or weight not in (1, 2, 3)):
        raise SpecError(f"{source.at((*loc, 'weight'))}: weight must be 1, 2 or 3")
    if not graded:
        with _regex_errors(source, loc, phrases):
            return sign(ident, category, item["weight"], *phrases, family=family, gate=gate, also=also)
    tier = item["tier"]
    if tier not in _TIERS:
        raise SpecError(f"{source.at((*loc, 'tier'))}: tier must be one of {', '.join(_TIERS)}")
    # An imminent hit is never lowered by a negation (the guard lowers only high ones).
    steps = {key: _flag(source, item, loc, key, key != "negatable" or tier != "imminent") for key in _STEPS}
    with _regex_errors(source, loc, phrases):
        return rule(ident, category, tier, *phrases, family=family, weight=weight, gate=gate, also=also, **steps)


def load_signs(name: str, prefix: str = "", root: Path = LEXICON_DIR) -> tuple[Rule, ...]:
    """The guard's rules of the sign file `name` (lexicon/<locale>/<name>.yaml) of every locale
    under `root`, in file order, locales in name order; each rule's id is "<locale>.<prefix>.<id>"
    ("<locale>.<id>" without a prefix). A locale's terms.yaml holds the terms its files share."""
    rules: list[Rule] = []
    for locale, source in _files(name, root):
        terms = _terms(source, _shared_terms(root / locale))
        seen: set[str] = set()
        for i, item in enumerate(_list(source, source.data, "signs")):
            loc: Loc = ("signs", i)
            found = _sign(source, item, loc, f"{locale}.{prefix}" if prefix else locale, terms)
            if found.id in seen:
                raise SpecError(f"{source.at((*loc, 'id'))}: the id {item['id']} is used twice in the file")
            seen.add(found.id)
            rules.append(found)
    return tuple(rules)


@cache
def bundled(name: str) -> Lexicon:
    """A concept lexicon of the bundled files, loaded once."""
    return load_lexicon(name)


# -- the contexts, the evidence score's concepts and the grading ----------------------------
# Three more kinds of file, read together by the engine's named steps (guard.py, evidence.py,
# grading.py):
#
# - lexicon/<locale>/contexts.yaml (`load_contexts`): `lexicons`, each with a `name`, a `note`
#   (why the step reads it), its `phrases`, optionally `extends` (another lexicon whose phrases
#   it also holds: two steps that share most of a lexicon write the shared part once) and
#   `whole_words: false` (its phrases carry their own boundaries); and `words`, word lists
#   with a `name`, a `note` and `words` (negations, the function words of the language); a
#   phrase may use the {terms} of the locale's terms.yaml;
# - lexicon/concepts.yaml and lexicon/<locale>/evidence.yaml (`load_concepts`): the evidence
#   score's concepts, what each weighs, is a sign of and comes from (the same for every
#   locale), and their phrases in each locale (which may use the locale's {terms});
# - lexicon/grading.yaml (`load_grading`): what a sign weighs for the tier (grading.py).


@dataclass(frozen=True)
class Contexts:
    """The contexts' lexicons of every locale together, compiled, and their word lists (each
    per locale, and all together)."""

    patterns: dict[str, re.Pattern[str]]
    words_by_locale: dict[str, dict[str, frozenset[str]]]
    root: Path

    def pattern(self, name: str) -> re.Pattern[str]:
        if name not in self.patterns:
            raise SpecError(f"{self.root}: no locale's contexts.yaml has the lexicon '{name}'")
        return self.patterns[name]

    def words(self, name: str) -> frozenset[str]:
        """The words of the list `name`, every locale together."""
        return frozenset().union(*self.per_locale(name).values())

    def per_locale(self, name: str) -> dict[str, frozenset[str]]:
        found = {locale: lists[name] for locale, lists in self.words_by_locale.items() if name in lists}
        if not found:
            raise SpecError(f"{self.root}: no locale's contexts.yaml has the word list '{name}'")
        return found


_NAME = re.compile(r"[a-z_]+")


def _name(source: YamlSource, value: Any, loc: Loc) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise SpecError(f"{source.at(loc)}: a name is written in lower-case letters and _")
    return value


def _checked(source: YamlSource, item: dict[str, Any], loc: Loc, terms: dict[str, str] | None = None) -> list[str]:
    """The entry's phrases, their {terms} filled in, refused with the one that is no regular expression."""
    phrases = _phrases(source, item, loc, terms or {})
    with _regex_errors(source, loc, phrases):
        re.compile("|".join(phrases))
    return phrases


def _alternation(phrases: list[str], whole_words: bool) -> re.Pattern[str]:
    if not phrases:
        return re.compile(r"(?!)")  # no locale has a phrase for it: it never matches
    body = "|".join(phrases)
    return re.compile(rf"\b(?:{body})\b" if whole_words else f"(?:{body})")


def load_contexts(root: Path = LEXICON_DIR) -> Contexts:
    """The contexts (lexicon/<locale>/contexts.yaml) of every locale under `root`."""
    phrases: dict[str, list[str]] = {}
    shape: dict[str, tuple[str | None, bool]] = {}  # each lexicon's extends and whole_words
    words: dict[str, dict[str, frozenset[str]]] = {}
    for locale, source in _files("contexts", root):
        terms = _shared_terms(root / locale)  # a context's phrases may use the locale's {terms}
        for i, item in enumerate(_list(source, source.data, "lexicons")):
            loc: Loc = ("lexicons", i)
            item = _keys(source, item, loc, {"name", "note", "phrases"}, frozenset({"extends", "whole_words"}))
            name = _name(source, item["name"], (*loc, "name"))
            _text(source, item["note"], (*loc, "note"), "note")
            extends = _name(source, item["extends"], (*loc, "extends")) if "extends" in item else None
            this = (extends, _flag(source, item, loc, "whole_words", True))
            if shape.setdefault(name, this) != this:
                raise SpecError(f"{source.at(loc)}: '{name}' has another extends or whole_words in another locale")
            phrases.setdefault(name, []).extend(_checked(source, item, loc, terms))
        raw = source.data.get("words", [])
        if not isinstance(raw, list):
            raise SpecError(f"{source.at(('words',))}: words must be a list")
        lists = words.setdefault(locale, {})
        for i, item in enumerate(raw):
            loc = ("words", i)
            item = _keys(source, item, loc, {"name", "note", "words"})
            name = _name(source, item["name"], (*loc, "name"))
            _text(source, item["note"], (*loc, "note"), "note")
            if not isinstance(item["words"], list) or not item["words"]:
                raise SpecError(f"{source.at((*loc, 'words'))}: words must be a non-empty list")
            lists[name] = frozenset(_text(source, w, (*loc, "words", j), "a word") for j, w in enumerate(item["words"]))
    patterns: dict[str, re.Pattern[str]] = {}
    for name, (extends, whole_words) in shape.items():
        base: list[str] = []
        if extends is not None:
            if extends not in shape or shape[extends][0] is not None:
                raise SpecError(f"{root}: '{name}' extends '{extends}', which is no lexicon of its own")
            base = phrases[extends]
        patterns[name] = _alternation([*base, *phrases[name]], whole_words)
    return Contexts(patterns, words, root)


@dataclass(frozen=True)
class Concept:
    """One concept of the evidence score: the words that carry a warning sign (evidence.py)."""

    name: str
    weight: int
    pattern: re.Pattern[str]
    family: str  # the warning sign a weak signal of this concept is counted as ("": not a sign alone)
    sign: bool  # a sign in its own right: a sentence scores only with one of these
    # Words one of which every match contains (rules.gate_of), None when none is known: a
    # sentence without any is not searched, which keeps the score in microseconds.
    gate: frozenset[str] | None
    frames: frozenset[str]  # it counts only beside one of these (empty: always)
    repeats: bool  # said twice in other words: one more
    imminent: bool = False  # counted in a high score, the risk is imminent (the means at hand)


# What concepts.yaml's `explains` maps: evidence.py's discount steps.
EXPLAINING_STEPS = (
    "idiom",
    "habit_goal",
    "ordinary_occasion",
    "ordinary_trap",
    "limited_scope",
    "ordinary_giving",
    "ordinary_note",
    "ordinary_means",
    "past",
    "medical",
)
_CONCEPT_SETS = ("about_means", "means_words", "voices", "helper_signs", "risk_concepts")


@dataclass(frozen=True)
class Concepts:
    """The evidence score's concepts (lexicon/concepts.yaml) with their phrases in every
    locale (lexicon/<locale>/evidence.yaml), and the tables of concepts its steps read."""

    concepts: tuple[Concept, ...]
    family_order: tuple[str, ...]
    sets: dict[str, frozenset[str]]  # about_means, means_words, voices, helper_signs, risk_concepts
    explains: dict[str, frozenset[str]]  # each of EXPLAINING_STEPS: the concepts it explains


def _names(source: YamlSource, value: Any, loc: Loc, known: set[str]) -> list[str]:
    if not isinstance(value, list):
        raise SpecError(f"{source.at(loc)}: a list of concept names")
    for j, name in enumerate(value):
        if name not in known:
            raise SpecError(f"{source.at((*loc, j))}: '{name}' is not a concept of concepts.yaml")
    return value


def _phrases_by_concept(root: Path, known: set[str]) -> tuple[dict[str, list[str]], dict[str, frozenset[str] | None]]:
    """Each concept's phrases in every locale, and its gate: per locale the words given as
    `gate` (for phrases whose lookaheads hide them) or those rules.gate_of finds, None when a
    locale's phrases have none."""
    phrases: dict[str, list[str]] = {name: [] for name in known}
    gates: dict[str, frozenset[str] | None] = {name: frozenset() for name in known}
    for locale, source in _files("evidence", root):
        terms = _shared_terms(root / locale)  # a concept's phrases may use the locale's {terms}
        for i, item in enumerate(_list(source, source.data, "concepts")):
            loc: Loc = ("concepts", i)
            item = _keys(source, item, loc, {"name", "phrases"}, frozenset({"gate"}))
            name = item["name"]
            if name not in known:
                raise SpecError(f"{source.at((*loc, 'name'))}: '{name}' is not a concept of concepts.yaml")
            found = _checked(source, item, loc, terms)
            phrases[name] += found
            if "gate" in item:
                if not isinstance(item["gate"], list) or not item["gate"]:
                    raise SpecError(f"{source.at((*loc, 'gate'))}: gate must be a non-empty list of words")
                gate: frozenset[str] | None = frozenset(
                    _text(source, w, (*loc, "gate", j), "a word") for j, w in enumerate(item["gate"])
                )
            else:
                gate = gate_of(tuple(found))
            old = gates[name]
            gates[name] = None if old is None or gate is None else old | gate
    return phrases, gates


def load_concepts(root: Path = LEXICON_DIR) -> Concepts:
    """The evidence score's concepts: lexicon/concepts.yaml and the phrases of every locale's
    lexicon/<locale>/evidence.yaml under `root`."""
    source = load_yaml(root / "concepts.yaml", SpecError)
    entries = _list(source, source.data, "concepts")
    known: set[str] = set()
    for i, item in enumerate(entries):
        name = _name(source, item.get("name") if isinstance(item, dict) else None, ("concepts", i, "name"))
        if name in known:
            raise SpecError(f"{source.at(('concepts', i, 'name'))}: '{name}' is defined twice")
        known.add(name)
    phrases, gates = _phrases_by_concept(root, known)
    concepts: list[Concept] = []
    for i, item in enumerate(entries):
        loc: Loc = ("concepts", i)
        optional = frozenset({"family", "sign", "frames", "repeats", "whole_words", "imminent"})
        item = _keys(source, item, loc, {"name", "source", "weight"}, optional)
        _text(source, item["source"], (*loc, "source"), "source")
        if item["weight"] not in range(1, HIGH + 1):
            raise SpecError(f"{source.at((*loc, 'weight'))}: weight must be 1 to {HIGH}")
        family = item.get("family", "")
        if family != "":
            _name(source, family, (*loc, "family"))
        whole_words = _flag(source, item, loc, "whole_words", True)
        name = item["name"]
        concepts.append(
            Concept(
                name=name,
                weight=item["weight"],
                pattern=_alternation(phrases[name], whole_words),
                family=family,
                sign=_flag(source, item, loc, "sign", False),
                gate=gates[name] if whole_words else None,
                frames=frozenset(_names(source, item.get("frames", []), (*loc, "frames"), known)),
                repeats=_flag(source, item, loc, "repeats", False),
                imminent=_flag(source, item, loc, "imminent", False),
            )
        )
    data = source.data
    order = _names(source, data.get("family_order"), ("family_order",), known)
    sets = {key: frozenset(_names(source, data.get(key), (key,), known)) for key in _CONCEPT_SETS}
    explains = data.get("explains")
    if not isinstance(explains, dict) or set(explains) != set(EXPLAINING_STEPS):
        raise SpecError(f"{source.at(('explains',))}: explains maps each of {', '.join(EXPLAINING_STEPS)} to concepts")
    steps = {step: frozenset(_names(source, explains[step], ("explains", step), known)) for step in EXPLAINING_STEPS}
    return Concepts(tuple(concepts), tuple(order), sets, steps)


@dataclass(frozen=True)
class Sustained:
    """grading.yaml's `sustained`: `reads` turns of the last `window` read by the learned signal at
    `score` or above are one sign, of `weight`."""

    reads: int
    window: int
    score: float
    weight: int


@dataclass(frozen=True)
class Context:
    """grading.yaml's `context`: the learned signal's read of the last `turns` turns together, a
    high sign at `score` or above."""

    turns: int
    score: float


@dataclass(frozen=True)
class Grading:
    """What a sign weighs for the tier (lexicon/grading.yaml, grading.py)."""

    passive_weight: int
    window: int
    wish_families: frozenset[str]
    pure_wish_families: frozenset[str]  # a subset of wish_families: the wish in so many words
    risk_families: frozenset[str]  # the wish families included
    sustained: Sustained
    context: Context


def _families(source: YamlSource, key: str) -> frozenset[str]:
    value = source.data.get(key) if isinstance(source.data, dict) else None
    if not isinstance(value, list) or not value:
        raise SpecError(f"{source.at((key,))}: {key} must be a non-empty list of families")
    return frozenset(_text(source, family, (key, j), "a family") for j, family in enumerate(value))


def load_grading(root: Path = LEXICON_DIR) -> Grading:
    source = load_yaml(root / "grading.yaml", SpecError)
    numbers: dict[str, int] = {}
    for key, low in (("passive_weight", 1), ("window", 1)):
        value = source.data.get(key) if isinstance(source.data, dict) else None
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise SpecError(f"{source.at((key,))}: {key} must be a whole number, at least {low}")
        numbers[key] = value
    if numbers["passive_weight"] >= HIGH:
        raise SpecError(f"{source.at(('passive_weight',))}: a passive wish weighs less than a high sign ({HIGH})")
    wish = _families(source, "wish_families")
    pure = _families(source, "pure_wish_families")
    if not pure <= wish:
        stray = ", ".join(sorted(pure - wish))
        raise SpecError(f"{source.at(('pure_wish_families',))}: not among wish_families: {stray}")
    risk = wish | _families(source, "risk_families")
    return Grading(numbers["passive_weight"], numbers["window"], wish, pure, risk, _sustained(source), _context(source))


def _sustained(source: YamlSource) -> Sustained:
    raw = source.data.get("sustained") if isinstance(source.data, dict) else None
    where = source.at(("sustained",))
    if not isinstance(raw, dict) or set(raw) != {"reads", "window", "score", "weight"}:
        raise SpecError(f"{where}: sustained must map reads, window, score and weight")
    for key in ("reads", "window", "weight"):
        if not isinstance(raw[key], int) or isinstance(raw[key], bool):
            raise SpecError(f"{source.at(('sustained', key))}: {key} must be a whole number")
    reads, window, score, weight = raw["reads"], raw["window"], raw["score"], raw["weight"]
    if not 2 <= reads <= window:
        raise SpecError(f"{source.at(('sustained', 'reads'))}: reads must be at least 2 and at most the window")
    if not 1 <= weight < HIGH:
        raise SpecError(
            f"{source.at(('sustained', 'weight'))}: weight must be at least 1 and under a high sign ({HIGH})"
        )
    if not isinstance(score, float) or not 0.0 < score < 1.0:
        raise SpecError(f"{source.at(('sustained', 'score'))}: score must be a probability between 0 and 1")
    return Sustained(reads, window, score, weight)


def _context(source: YamlSource) -> Context:
    raw = source.data.get("context") if isinstance(source.data, dict) else None
    if not isinstance(raw, dict) or set(raw) != {"turns", "score"}:
        raise SpecError(f"{source.at(('context',))}: context must map turns and score")
    turns, score = raw["turns"], raw["score"]
    if not isinstance(turns, int) or isinstance(turns, bool) or turns < 2:
        raise SpecError(f"{source.at(('context', 'turns'))}: turns must be a whole number, at least 2")
    if not isinstance(score, float) or not 0.0 < score < 1.0:
        raise SpecError(f"{source.at(('context', 'score'))}: score must be a probability between 0 and 1")
    return Context(turns, score)


@cache
def bundled_contexts() -> Contexts:
    """The bundled contexts, loaded once."""
    return load_contexts()


@cache
def bundled_concepts() -> Concepts:
    return load_concepts()


@cache
def bundled_grading() -> Grading:
    return load_grading()
