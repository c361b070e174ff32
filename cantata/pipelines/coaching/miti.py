"""Counting rules for motivational-interviewing fidelity, in the spirit of MITI 4 coding:
reflections, questions, advice given without permission, references to earlier sessions.

They are rules, not a coder: a sentence counts as a question when it ends with "?", as a
reflection when it is a statement that says the person's experience back to them ("You
...", "It sounds like ...", "Vous ...", "On dirait ...", or a statement in the second
person without the speaker in it: "Mornings matter to you") and gives no advice. The
benchmark (bench/coaching_quality.py) counts with them; the unit tests hold them to
labelled examples, so a change of rule shows up as a changed count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cantata.pipelines.coaching.mi import advice_problem
from cantata.pipelines.coaching.safety import normalize

_SENTENCES = re.compile(r"(?<=[.!?…])\s+")
_REFLECTIVE_START = re.compile(
    r"^(?:so,? )?(?:you(?:'re|'ve|'d|'ll)?|your|it sounds like|sounds like|it seems|it seems like|"
    r"it looks like|part of you|on one hand|on the one hand|what i hear|i hear|in your words|vous|votre|vos|"
    r"on dirait|si je comprends bien|si je vous entends bien|une partie de vous|d'un cote|j'entends|"
    r"ce que j'entends)\b"
)
# Sentences that start like a reflection but tell the person what to do or feel.
_NOT_REFLECTION = re.compile(
    r"^(?:you (?:should|need|must|have to|ought|could try|might try|can try)|vous devriez|vous devez|"
    r"vous pourriez essayer)\b"
)
# Or a statement about the person ("Mornings at the gym matter to you"): second person,
# no first person singular ("I'm here to help you" is about the speaker), no thanks.
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|vous|votre|vos)\b")
_FIRST_PERSON = re.compile(r"(?:^|\s)(?:i|i'm|i'll|i've|i'd|me|my|je|j'|moi|mon|ma|mes)(?:\s|$|')")
_THANKS = re.compile(r"^(?:thank|thanks|merci)\b")
_EARLIER_SESSION = re.compile(
    r"\b(?:last time|last session|last week you|our (?:last|previous) (?:session|conversation|talk|chat)|"
    r"when we (?:last )?(?:spoke|talked|met)|as we discussed|you (?:told|mentioned to) me (?:before|last)|"
    r"in (?:a|our) previous session|la derniere fois|notre derniere (?:seance|conversation|discussion)|"
    r"la seance precedente|lors de notre (?:derniere|precedente)|comme nous en avons parle)\b"
)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(" ".join(text.split())) if s.strip()]


def is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?")


def is_reflection(sentence: str) -> bool:
    """A statement saying the person's experience back: not a question, not advice."""
    norm = normalize(sentence)
    if is_question(sentence) or _NOT_REFLECTION.match(norm):
        return False
    if advice_problem(sentence, "none") is not None:
        return False
    if _REFLECTIVE_START.match(norm):
        return True
    return bool(_SECOND_PERSON.search(norm)) and not _FIRST_PERSON.search(norm) and not _THANKS.match(norm)


@dataclass(frozen=True)
class Counts:
    reflections: int
    questions: int
    advice_without_permission: int
    earlier_session_references: int


def count(text: str, *, earlier_sessions: bool = False) -> Counts:
    """The counts for one reply. A reference to an earlier session counts only when the
    person has none (`earlier_sessions` False): then it is invented."""
    parts = sentences(text)
    advice = 1 if advice_problem(text, "ask_permission") else 0
    invented = 0 if earlier_sessions else len(_EARLIER_SESSION.findall(normalize(text)))
    return Counts(
        reflections=sum(is_reflection(s) for s in parts),
        questions=sum(is_question(s) for s in parts),
        advice_without_permission=advice,
        earlier_session_references=invented,
    )
