"""Tolerant normalisation: the text the guard's rules match, whatever way it was typed.

People in distress type fast, on phones: "im soooo done with everything idk", "jai
plus envie de rien", "i just dont want to like be here anymore". `tolerant()` turns such
text into one canonical form, so a rule written once matches all of them:

- lower case, accents and typographic quotes folded (safety.normalize);
- stretched letters collapsed ("sooo" -> "so", "killlll" -> "kill");
- missing apostrophes restored ("dont", "im", "cant", "jai", "cest" -> "don't", "i'm",
  "can't", "j'ai", "c'est"), and apostrophes typed as spaces ("don t", "j ai");
- text-speak expanded ("u", "ur", "rn", "idk", "kms", "unalive", "jpp", "tkt", "bcp");
- filler words dropped ("just", "really", "literally", "genre", "vraiment"), so "I
  just really want to die" reads as "i want to die";
- figures of speech masked ("this commute is killing me", "je meurs de faim", "I could
  murder a burger") so no rule can read them as a threat or a wish to die;
- sentence ends (. ! ? ; newlines) kept as " . ": no rule pattern crosses one.

The words of each language (expansions, fillers, figures of speech...) are data, in
lexicon/<locale>/tolerant.yaml; this module is the mechanics. Every locale's lists are used
together, compiled once into tables and regexes: a message costs a few microseconds.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from cantata.errors import SpecError
from cantata.pipelines.coaching.lexicon import LEXICON_DIR, _files, _keys, _text
from cantata.yamlsource import Loc, YamlSource

# The token no rule pattern ever matches: it replaces sentence ends, so a phrase split by
# a full stop ("I want to. Die laughing") is never read as one.
BOUNDARY = "."

_FOLD = str.maketrans(
    {
        "\u0153": "oe",
        "\u0152": "oe",
        "\u00e6": "ae",
        "\u00c6": "ae",
        "\u2019": "'",
        "\u2018": "'",
        "\u02bc": "'",
        "`": "'",
        "\u2013": "-",
        "\u2014": "-",
        "\u00a0": " ",
        "\u2026": ".",
    }
)
_SENTENCE_END = re.compile(r"[.!?;]+(?=\s|$)|[!?;]+|\n+|\.{2,}")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9'-]*|,")
_STRETCH = re.compile(r"([a-z])\1{2,}")

# Figures of speech become this one token, which no rule matches.
IDIOM = "xidiom"


def fold(text: str) -> str:
    """Accents and typographic quotes folded, lower case; newlines kept (they end sentences)."""
    text = text.translate(_FOLD)
    if not text.isascii():
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return text.lower()


_STRETCHED_WORD = re.compile(r"[a-z']*([a-z])\1{2,}[a-z']*")


@dataclass(frozen=True)
class SometimesFiller:
    """Where a word that is a filler in some places only is dropped (tolerant.yaml,
    sometimes_fillers): by the word kept before it and the word after it."""

    kept_after: frozenset[str]
    dropped_after: frozenset[str]
    dropped_before: frozenset[str]
    kept_before: frozenset[str] | None

    def drops(self, before: str, after: str) -> bool:
        if before in self.kept_after:
            return False
        return (
            before in self.dropped_after
            or after in self.dropped_before
            or (self.kept_before is not None and after not in self.kept_before)
        )


def _group(words: Iterable[str]) -> str:
    """An alternation of words for a capture group; with none, one that never matches."""
    return "|".join(words) or "(?!)"


@dataclass(frozen=True)
class Tolerance:
    """Every locale's word lists (lexicon/<locale>/tolerant.yaml), compiled: `normalise` is
    tolerant() with them."""

    expand: dict[str, str]  # one token -> its canonical words
    doubles: dict[str, str]  # a word with a double letter, collapsed -> whole
    fillers: frozenset[str]
    multi_fillers: re.Pattern[str]
    two: re.Pattern[str]
    pu: re.Pattern[str]
    spaced_nt: re.Pattern[str]
    spaced_i: re.Pattern[str]
    spaced_s: re.Pattern[str]
    spaced_elision: re.Pattern[str]
    idioms: re.Pattern[str]
    idiom_stems: tuple[str, ...]
    sometimes: dict[str, SometimesFiller]
    rewrites: tuple[tuple[re.Pattern[str], str], ...]

    def _unstretch(self, match: re.Match[str]) -> str:
        stretched = _STRETCH.sub(r"\1", match.group(0))
        return self.doubles.get(stretched, stretched)

    def _drop_sometimes(self, words: list[str]) -> list[str]:
        kept: list[str] = []
        for i, word in enumerate(words):
            rule = self.sometimes.get(word)
            after = words[i + 1] if i + 1 < len(words) else ""
            if rule is not None and rule.drops(kept[-1] if kept else "", after):
                continue
            kept.append(word)
        return kept

    def _sentence(self, text: str) -> str:
        text = self.spaced_nt.sub(r"\1't", text)
        text = self.spaced_i.sub(r"i'\1", text)
        text = self.spaced_s.sub(r"\1's", text)
        text = self.spaced_elision.sub(r"\1'", text)
        text = self.two.sub(r"\1 to", text)
        for shape, becomes in self.rewrites:
            text = shape.sub(becomes, text)
        if _STRETCH.search(text):
            text = _STRETCHED_WORD.sub(self._unstretch, text)
        fillers, expand = self.fillers, self.expand
        words = self._drop_sometimes([expand.get(t, t) for t in _TOKEN.findall(text) if t not in fillers])
        joined = self.pu.sub(r"\1 plus", self.multi_fillers.sub("", " ".join(words)))
        if any(stem in joined for stem in self.idiom_stems):
            joined = self.idioms.sub(IDIOM, joined)
        return joined.strip(" ,")

    def normalise(self, text: str) -> str:
        """The canonical form rules match: words separated by single spaces, commas kept as
        " , " tokens, sentence ends as " . "."""
        sentences = (self._sentence(s) for s in _SENTENCE_END.split(fold(text)))
        return f" {BOUNDARY} ".join(s for s in sentences if s)


_LISTS = (
    "dropped_g",
    "doubles",
    "fillers",
    "multi_fillers",
    "two_as_to_after",
    "pu_as_plus_after",
    "spaced_nt",
    "spaced_i",
    "spaced_s",
    "spaced_elision",
    "idioms",
    "idiom_stems",
)
_DOUBLED = ("ll", "ss", "ee", "oo", "tt", "ff", "rr", "nn", "pp")


def _collapsed(word: str) -> str:
    for pair in _DOUBLED:
        word = word.replace(pair, pair[0])
    return word


_SECTIONS = ("expand", "sometimes_fillers", "rewrites", *_LISTS)
_PLACES = ("kept_after", "dropped_after", "dropped_before", "kept_before")


def _words(source: YamlSource, raw: Any, loc: Loc) -> list[str]:
    if not isinstance(raw, list):
        raise SpecError(f"{source.at(loc)}: {loc[-1]} must be a list")
    return [_text(source, w, (*loc, j), f"an entry of {loc[-1]}") for j, w in enumerate(raw)]


def _regex(source: YamlSource, phrase: Any, loc: Loc) -> re.Pattern[str]:
    try:
        return re.compile(_text(source, phrase, loc, "a phrase"))
    except re.error as exc:
        raise SpecError(f"{source.at(loc)}: not a regular expression ({exc})") from exc


def _mapping(source: YamlSource, raw: Any, loc: Loc, what: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise SpecError(f"{source.at(loc)}: {loc[-1] if loc else 'the file'} must be a mapping of {what}")
    return raw


@dataclass
class _Lists:
    """What every locale's tolerant.yaml adds, read one file after another."""

    expand: dict[str, str] = field(default_factory=dict)
    lists: dict[str, list[str]] = field(default_factory=lambda: {name: [] for name in _LISTS})
    sometimes: dict[str, SometimesFiller] = field(default_factory=dict)
    rewrites: list[tuple[re.Pattern[str], str]] = field(default_factory=list)

    def read(self, source: YamlSource) -> None:
        raw = _mapping(source, source.data, (), f"sections: {', '.join(_SECTIONS)}")
        unknown = [str(k) for k in raw if k not in _SECTIONS]
        if unknown:
            raise SpecError(
                f"{source.at((unknown[0],))}: not a section of tolerant.yaml; known: {', '.join(_SECTIONS)}"
            )
        for name in _LISTS:
            self.lists[name] += _words(source, raw.get(name, []), (name,))
        for j, idiom in enumerate(raw.get("idioms", [])):
            _regex(source, idiom, ("idioms", j))
        table = _mapping(source, raw.get("expand", {}), ("expand",), "tokens to words")
        dropped = {verb[:-1]: verb for verb in raw.get("dropped_g", []) if verb.endswith("g")}
        for token, words in [*table.items(), *dropped.items()]:
            loc: Loc = ("expand", str(token)) if token in table else ("dropped_g",)
            if not isinstance(token, str) or token in self.expand:
                raise SpecError(f"{source.at(loc)}: the token {token} is expanded twice (once in every locale)")
            self.expand[token] = _text(source, words, loc, f"the expansion of {token}")
        fillers = _mapping(source, raw.get("sometimes_fillers", {}), ("sometimes_fillers",), "words to places")
        for word, item in fillers.items():
            loc = ("sometimes_fillers", str(word))
            places = _mapping(source, item, loc, f"places ({', '.join(_PLACES)}) to words")
            if word in self.sometimes or not set(places) <= set(_PLACES):
                raise SpecError(f"{source.at(loc)}: once in every locale, with places among {', '.join(_PLACES)}")
            sets = {place: frozenset(_words(source, places[place], (*loc, place))) for place in places}
            self.sometimes[str(word)] = SometimesFiller(
                kept_after=sets.get("kept_after", frozenset()),
                dropped_after=sets.get("dropped_after", frozenset()),
                dropped_before=sets.get("dropped_before", frozenset()),
                kept_before=sets.get("kept_before"),
            )
        for j, item in enumerate(raw.get("rewrites", [])):
            item = _keys(source, item, ("rewrites", j), {"phrase", "becomes"})
            becomes = _text(source, item["becomes"], ("rewrites", j, "becomes"), "becomes")
            self.rewrites.append((_regex(source, item["phrase"], ("rewrites", j, "phrase")), becomes))


def load_tolerance(root: Path = LEXICON_DIR) -> Tolerance:
    """Every locale's word lists (lexicon/<locale>/tolerant.yaml under `root`), together; a
    token expanded, or a sometimes-filler described, by two locales is refused with its file
    and line."""
    read = _Lists()
    for _locale, source in _files("tolerant", root):
        read.read(source)
    lists = read.lists
    return Tolerance(
        expand=read.expand,
        doubles={_collapsed(w): w for w in lists["doubles"] if any(d in w for d in _DOUBLED)},
        fillers=frozenset(lists["fillers"]),
        multi_fillers=re.compile(r"\b(?:" + _group(lists["multi_fillers"]) + r")\b ?"),
        two=re.compile(r"\b(" + _group(lists["two_as_to_after"]) + r") 2\b"),
        pu=re.compile(r"\b(" + _group(lists["pu_as_plus_after"]) + r") pu\b"),
        spaced_nt=re.compile(r"\b(" + _group(lists["spaced_nt"]) + r") t\b"),
        spaced_i=re.compile(r"\bi (" + _group(lists["spaced_i"]) + r")\b"),
        spaced_s=re.compile(r"\b(" + _group(lists["spaced_s"]) + r") s\b"),
        spaced_elision=re.compile(r"(?<![a-z'])(" + _group(lists["spaced_elision"]) + r") (?=[aeiouhy])"),
        idioms=re.compile(r"\b(?:" + _group(lists["idioms"]) + r")\b"),
        idiom_stems=tuple(lists["idiom_stems"]),
        sometimes=read.sometimes,
        rewrites=tuple(read.rewrites),
    )


@cache
def bundled_tolerance() -> Tolerance:
    """The bundled word lists, loaded and compiled once."""
    return load_tolerance()


def tolerant(text: str) -> str:
    """The canonical form rules match (Tolerance.normalise with the bundled word lists)."""
    return bundled_tolerance().normalise(text)
