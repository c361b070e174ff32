"""What the coaching guard checks in a reply before it is sent, as data:
lexicon/<locale>/reply_checks.yaml.

`blocked`: per blocked action (safety.BLOCKED_ACTIONS), with its source, the phrases that
suggest it; `asks_about_safety` and `points_to_support`: the words that make a reply do those
required actions. Every locale's phrases are matched together (a reply's language is not
checked here), on the normalize()d reply; each locale lists every blocked action, so that none
goes unchecked in its language. A malformed file is refused at load with file, line, reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from cantata.errors import SpecError
from cantata.pipelines.coaching.lexicon import LEXICON_DIR, _alternation, _checked, _files, _keys
from cantata.pipelines.coaching.safety import BLOCKED_ACTIONS, BlockedAction, normalize
from cantata.yamlsource import Loc, YamlSource


@dataclass(frozen=True)
class ReplyChecks:
    blocked: dict[BlockedAction, re.Pattern[str]]
    safety_words: re.Pattern[str]
    support_words: re.Pattern[str]

    def detect_blocked(self, text: str, among: Iterable[BlockedAction] = BLOCKED_ACTIONS) -> list[BlockedAction]:
        """The blocked actions `text` suggests, among `among`, in declaration order."""
        norm = normalize(text)
        wanted = set(among)
        return [a for a in BLOCKED_ACTIONS if a in wanted and self.blocked[a].search(norm)]

    def asks_about_safety(self, text: str) -> bool:
        """The `ask_about_safety` action, as far as code can tell: a question, and safety words."""
        return "?" in text and self.safety_words.search(normalize(text)) is not None

    def points_to_support(self, text: str) -> bool:
        """The `human_support` action: the reply points to a person who can be there."""
        return self.support_words.search(normalize(text)) is not None


def _words(source: YamlSource, raw: dict[str, object], key: str) -> list[str]:
    return _checked(source, _keys(source, raw[key], (key,), {"source", "phrases"}), (key,))


def load_reply_checks(root: Path = LEXICON_DIR) -> ReplyChecks:
    """Every locale's reply checks (lexicon/<locale>/reply_checks.yaml under `root`), together."""
    blocked: dict[BlockedAction, list[str]] = {a: [] for a in BLOCKED_ACTIONS}
    safety: list[str] = []
    support: list[str] = []
    for _locale, source in _files("reply_checks", root):
        raw = _keys(source, source.data, (), {"blocked", "asks_about_safety", "points_to_support"})
        actions = raw["blocked"]
        if not isinstance(actions, dict):
            raise SpecError(f"{source.at(('blocked',))}: blocked must be a mapping of blocked actions")
        missing = [a for a in BLOCKED_ACTIONS if a not in actions]
        unknown = [str(a) for a in actions if a not in BLOCKED_ACTIONS]
        if missing or unknown:
            raise SpecError(
                f"{source.at(('blocked',))}: blocked lists every action of {', '.join(BLOCKED_ACTIONS)}"
                + (f"; missing {', '.join(missing)}" if missing else f"; unknown {', '.join(unknown)}")
            )
        for action in BLOCKED_ACTIONS:
            loc: Loc = ("blocked", action)
            item = _keys(source, actions[action], loc, {"source", "phrases"})
            blocked[action] += _checked(source, item, loc)
        safety += _words(source, raw, "asks_about_safety")
        support += _words(source, raw, "points_to_support")
    return ReplyChecks(
        blocked={a: re.compile("|".join(f"(?:{p})" for p in phrases)) for a, phrases in blocked.items()},
        safety_words=_alternation(safety, whole_words=True),
        support_words=_alternation(support, whole_words=True),
    )


@cache
def bundled_checks() -> ReplyChecks:
    """The bundled reply checks, loaded and compiled once."""
    return load_reply_checks()


def detect_blocked(text: str, among: Iterable[BlockedAction] = BLOCKED_ACTIONS) -> list[BlockedAction]:
    return bundled_checks().detect_blocked(text, among)


def asks_about_safety(text: str) -> bool:
    return bundled_checks().asks_about_safety(text)


def points_to_support(text: str) -> bool:
    return bundled_checks().points_to_support(text)
