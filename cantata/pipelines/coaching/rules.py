"""A guard rule: a named family of phrasings of one warning sign, with its tier and weight.

Rules match the tolerant() form of a message (see tolerant.py), one sentence at a time:
no pattern may use "." or a negated character class, so none can cross a sentence end. A
scene said over several sentences is a rule with parts (`also`), each of which the whole
message must hold once the rule's own phrase matched its sentence.

- `tier` is what a hit means on its own: "high" for a sign a clinician acts on alone (a
  wish to be dead, a plan, a goodbye), "low" for a weaker sign (hopelessness, a burden,
  a hedge), "imminent" for a medical emergency.
- `weight` is how much a hit counts towards the session's accumulated risk (guard.py):
  3 is enough alone, 2 needs one more weak sign (a means question, giving things away),
  1 needs two more. It defaults from the tier.
- `family` names the warning sign; a session counts each family once, so three ways of
  saying "I'm a burden" are one sign, not three.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Generic, Protocol, TypeVar

from cantata.pipelines.coaching.safety import Category, Tier

# The weight of one sign a clinician acts on alone, and what weaker signs of a session must add
# up to for high (guard.accumulate); an evidence score that reaches it is high (evidence.py).
HIGH = 3


@dataclass(frozen=True)
class Rule:
    id: str
    category: Category
    tier: Tier
    pattern: re.Pattern[str]
    family: str
    weight: int
    negatable: bool = True  # a negation just before lowers a high hit to low
    escalates: bool = True  # a time or means cue raises a high hit of an actionable category
    # Whether a negation inside the match's first words counts ("I'm not suicidal"). Not for
    # the sign grammar (lexicon/<locale>/grammar.yaml), whose objects carry their own ("thoughts
    # about not wanting to be here", "j'aimerais ne plus exister"): only a negation before counts.
    negation_inside: bool = True
    # Words one of which every match contains (None: no such set is known). A sentence
    # without any of them cannot match, so the regex is not run: most rules are skipped
    # on most sentences (GateIndex), which keeps a screen in microseconds.
    gate: frozenset[str] | None = None
    # Parts of a scene said over several sentences ("in the garage. engine's running. door's
    # down"): each must also be found somewhere in the message for the rule to match.
    also: tuple[re.Pattern[str], ...] = ()

    def scene_holds(self, message: str) -> bool:
        """Whether every part the rule needs besides its phrase is said in the message."""
        return all(part.search(message) is not None for part in self.also)


class Gated(Protocol):
    """Anything with a word gate: a rule, an evidence concept (lexicon.Concept), a lexicon family."""

    @property
    def gate(self) -> frozenset[str] | None: ...


G = TypeVar("G", bound=Gated)


class GateIndex(Generic[G]):
    """Rules (or evidence concepts, or lexicon families) in their order, found for a sentence
    by its words: each gate word names the items it opens, so a sentence's candidates take a
    lookup per word rather than a gate test per item (hundreds of rules, a handful of which
    may match any one sentence). The candidates are exactly the items whose gate the words
    pass, in order."""

    def __init__(self, items: Sequence[G]) -> None:
        self.items = tuple(items)
        self._ungated = frozenset(i for i, item in enumerate(items) if item.gate is None)
        opens: dict[str, set[int]] = {}
        for i, item in enumerate(items):
            for word in item.gate or ():
                opens.setdefault(word, set()).add(i)
        self._opens = {word: frozenset(found) for word, found in opens.items()}

    def candidates(self, words: frozenset[str]) -> list[G]:
        """`words`: the sentence's words (see sentence_words)."""
        found = set(self._ungated)
        for word in words & self._opens.keys():
            found |= self._opens[word]
        return [self.items[i] for i in sorted(found)]


def sentence_words(sentence: str) -> frozenset[str]:
    """The words a rule's gate is checked against: every token, the pieces of those with
    an apostrophe or hyphen ("i'd" also gives "i", "d", "'d"), since a rule's \\b can start
    or end a match inside them, and each word's first letters as "^kil" (a gate for
    "kill(?:ing|ed)?")."""
    words = set(sentence.split())
    for token in [w for w in words if "'" in w or "-" in w]:
        for piece in token.replace("-", "'").split("'"):
            words.update((piece, f"'{piece}"))
        # And each run of pieces that starts or ends the token: "qu'aujourd'hui" also gives
        # "aujourd'hui", a gate word of its own.
        cuts = [i for i, c in enumerate(token) if c in "'-"]
        words.update(token[i + 1 :] for i in cuts)
        words.update(token[:i] for i in cuts)
    words.update([_prefix_key(w) for w in words if len(w) >= _PREFIX])
    return frozenset(words)


_COMMON = frozenset(
    "to for is am on in of the and i'm me my you it be do have will would could can't not no with about "
    "je de pas plus pour rien ca se me le la les un une est suis j'ai vie mal faire".split()
)
_LITERAL = frozenset("abcdefghijklmnopqrstuvwxyz0123456789' -,")
_QUANTIFIERS = frozenset("?*{")


def regex_depths(pattern: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """(index, character, group depth after it) for each character of `pattern` from
    `start` that is not escaped or inside a character class: how a regex's structure is read."""
    depth, i = 0, start
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = pattern.index("]", i + 1) + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        yield i, c, depth
        i += 1


def _group_end(pattern: str, start: int) -> int:
    """Index just past the group opening at `start`."""
    for i, c, depth in regex_depths(pattern, start):
        if c == ")" and depth == 0:
            return i + 1
    raise ValueError(f"unbalanced group in {pattern!r}")


def _words(text: str, *, left: bool, right: bool) -> list[str]:
    """The whole words of a literal run (its edge words only where the run's edge is a word
    edge), and for a last word cut by what follows ("kill" in "kill(?:ing|ed)?"), the key
    of the words it begins (see sentence_words)."""
    parts = text.split(" ")
    words: list[str] = []
    for i, part in enumerate(parts):
        starts = i > 0 or left
        if not starts or len(part) < 2 or part == ",":
            continue
        if i < len(parts) - 1 or right:
            words.append(part)
        elif len(part) >= _PREFIX and "'" not in part and "-" not in part:
            words.append(_prefix_key(part))
    return words


_PREFIX = 3


def _prefix_key(word: str) -> str:
    return f"^{word[:_PREFIX]}"


def _options(inner: str) -> list[str]:
    """A group's options: its text split at its own top-level "|"."""
    cuts = [i for i, c, depth in regex_depths(inner) if c == "|" and depth == 0]
    return [inner[a + 1 : b] for a, b in pairwise((-1, *cuts, len(inner)))]


def _union(found: list[tuple[str, ...] | None]) -> tuple[str, ...] | None:
    """The words of every option together (one of which any match holds), None when an option has none."""
    if any(f is None for f in found):
        return None
    return tuple(sorted({w for f in found if f is not None for w in f}))


def _word_end(alternative: str, end: int) -> bool:
    """Whether a word ends at `end` of the alternative whatever the text: at its end (the rule's
    closing \\b), a space or "$", seen past any lookarounds there (they take no text) and any
    group whose every option starts with a space ("(?: [a-z'-]+){0,3}": a space, or what follows)."""
    while end < len(alternative) and alternative[end] == "(":
        after = _group_end(alternative, end)
        if alternative.startswith(("(?=", "(?!", "(?<=", "(?<!"), end):
            end = after
            continue
        inner = alternative[end + 1 : after - 1].removeprefix("?:")
        if not all(o.startswith(" ") for o in _options(inner)):
            return False
        optional = re.match(r"\?|\*|\{0,[0-9]*\}", alternative[after:])
        if optional is None:
            return True  # a space follows
        end = after + optional.end()
    return end == len(alternative) or alternative[end] in " $"


def _necessary(alternative: str) -> tuple[str, ...] | None:
    """Whole words one of which any match of `alternative` contains: a word of a mandatory
    top-level literal run, one word per option of a mandatory group of literal options, or
    the words of each option of a mandatory group whose options are phrasings of their own
    ("(?:(?<!his )(?:death|dying) sounds|being dead)"): any match holds one option's match.
    Options at the top level: the words of each."""
    options = _options(alternative)
    if len(options) > 1:
        found = [_necessary(o) for o in options]
        return _union(found)
    candidates: list[tuple[str, ...]] = []
    run, run_start, i = "", 0, 0
    # After an optional group that starts at a word edge and whose options end with a
    # space ("(?:sexually |physically )?abused"), the next literal starts a word either way.
    word_start_at = -1

    def close_run(end: int, right: bool, word_end: bool = False) -> None:
        if run:
            left = run_start in (0, word_start_at) or run.startswith(" ") or alternative[run_start - 1] == "^"
            right = right and (word_end or end == len(alternative) or run.endswith(" "))
            words = _words(run, left=left, right=right)
            if words:
                candidates.append((max(words, key=len),))

    while i < len(alternative):
        c = alternative[i]
        if c in _LITERAL:
            if not run:
                run_start = i
            run += c
            i += 1
            continue
        if c in _QUANTIFIERS:
            run = run[:-1]  # the quantified character is optional
            close_run(i, right=False)
        else:
            # A lookaround after a word ("burden(?= ,|$)") ends it: every one here starts with a space or $.
            close_run(i, right=True, word_end=alternative.startswith(("(?=", "(?!"), i))
        run = ""
        if c == "{":
            i = alternative.index("}", i) + 1
        elif c == "(":
            end = _group_end(alternative, i)
            optional = end < len(alternative) and alternative[end] in _QUANTIFIERS
            plain = alternative.startswith("(?:", i) or not alternative.startswith("(?", i)
            inner = alternative[i + 1 : end - 1].removeprefix("?:")
            starts_word = i in (0, word_start_at) or alternative[i - 1] == " " or alternative.endswith("^", 0, i)
            bounded = starts_word and _word_end(alternative, end)
            literal = plain and bool(inner) and all(ch in _LITERAL or ch == "|" for ch in inner)
            if literal and bounded and not optional:
                options = [max(o.split(), key=len, default="") for o in inner.split("|")]
                if all(len(o) >= 2 for o in options):
                    candidates.append(tuple(options))
            elif plain and bounded and not optional and inner:
                union = _union([_necessary(o) for o in _options(inner)])
                if union is not None:
                    candidates.append(union)
            if starts_word and alternative.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
                # A lookaround takes no text: what follows it starts where it does, at a word edge.
                word_start_at = end
            if (
                literal
                and optional
                and starts_word
                and alternative[end] == "?"
                and all(o.endswith(" ") for o in inner.split("|"))
            ):
                word_start_at = end + 1
            i = end
        elif c == "\\":
            i += 2
        elif c == "[":
            i = alternative.index("]", i + 1) + 1
        else:
            i += 1
    close_run(len(alternative), right=True)
    if not candidates:
        return None
    # The fewest, longest, least common words: the gate that lets the fewest sentences through.
    return max(candidates, key=lambda ws: (_COMMON.isdisjoint(ws), min(map(len, ws)) / len(ws)))


def gate_of(alternatives: tuple[str, ...]) -> frozenset[str] | None:
    gates: set[str] = set()
    for alternative in alternatives:
        found = _necessary(alternative)
        if found is None:
            return None
        gates.update(found)
    return frozenset(gates)


def rule(
    id: str,
    category: Category,
    tier: Tier,
    *alternatives: str,
    family: str = "",
    weight: int | None = None,
    negatable: bool = True,
    escalates: bool = True,
    negation_inside: bool = True,
    gate: frozenset[str] | None = None,
    also: Sequence[Sequence[str]] = (),
) -> Rule:
    """`gate`: the words one of which every match contains, for a rule whose regex the
    derivation below cannot read (a vocabulary group followed by an optional gap); the
    set test checks it against every sentence of the labelled set. `also`: the phrases of
    each further part of a scene, one of which the message must hold (Rule.also)."""
    body = "|".join(f"(?:{a})" for a in alternatives)
    if weight is None:
        weight = {"none": 0, "low": 1, "high": HIGH, "imminent": HIGH}[tier]
    return Rule(
        id,
        category,
        tier,
        re.compile(rf"\b(?:{body})\b"),
        family or id.split(".", 1)[1],
        weight,
        negatable,
        escalates,
        negation_inside,
        gate if gate is not None else gate_of(alternatives),
        tuple(re.compile(r"\b(?:" + "|".join(f"(?:{p})" for p in part) + r")\b") for part in also),
    )


def vocabulary_gate(*groups: str) -> frozenset[str]:
    """The longest word of every option of literal groups ("(?:want|keep thinking)" gives "want",
    "thinking"): a gate for a rule that starts with one of these groups."""
    words: set[str] = set()
    for group in groups:
        for option in group.removeprefix("(?:").removesuffix(")").split("|"):
            words.add(max(option.split(), key=len))
    return frozenset(words)


def sign(
    id: str,
    category: Category,
    weight: int,
    *alternatives: str,
    family: str = "",
    gate: frozenset[str] | None = None,
    also: Sequence[Sequence[str]] = (),
) -> Rule:
    """An indirect warning sign: its tier follows its weight (3: high alone; else low), a
    negation is part of its wording ("don't see the point"), and it is never escalated
    by a time cue on its own (a hedge such as "not tonight" names a time, and means later)."""
    tier: Tier = "high" if weight >= HIGH else "low"
    return rule(
        id,
        category,
        tier,
        *alternatives,
        family=family,
        weight=weight,
        negatable=False,
        escalates=weight >= HIGH,
        gate=gate,
        also=also,
    )


# Where a phrase must end: the sentence ends, or a clause starts. "I can't take it" at a
# clause end, not "I can't take it to the gym".
END = r"(?= ,| \.| and\b| but\b| or\b| i\b| et\b| mais\b| je\b|$)"
