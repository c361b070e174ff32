"""Replies composed from this turn's blackboard, when a model's draft cannot be used.

A small model's draft often fails the rules (off topic, a copy of the early reply, advice
without permission). Instead of one fixed sentence, the reply is built from what the
turn's agents wrote, the way a motivational-interviewing practitioner would build it:

- a reflection of the person's own words (a clause of this turn's message, said back),
  and for a detailed voice shadow's pattern said back as a reflection;
- the next move plasticity chose (`mi_process`): an open question to engage, focus or
  evoke, or, to plan, asking permission before any suggestion; an affirmation when
  shadow sees progress or a kept commitment;
- the voice the conflicts' plan resolved from plasticity and persona: brief or detailed,
  direct or gentle.

It never suggests an action (so never a blocked one), and the check still runs over it.
Each move has several phrasings; which one is used turns with the turn's number, so
consecutive merged replies of a session differ even for the same words, and the early
reply and the merged one use different moves. Fixed templates remain for flagged
messages only (safety.py): this module is for tier "none".
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Literal

from cantata.pipelines.coaching.mi import MiProcess, content_stems, double_sided_reflection, second_person
from cantata.pipelines.coaching.safety import Locale, normalize

Length = Literal["brief", "detailed"]
Directness = Literal["direct", "gentle"]


@dataclass(frozen=True)
class Voice:
    length: Length = "detailed"
    directness: Directness = "gentle"


@dataclass(frozen=True)
class Turn:
    """What a composed reply is built from: the message and this turn's typed outputs."""

    message: str
    locale: Locale
    turn: int = 1
    session: str = ""
    mi_process: MiProcess = "engaging"
    pattern: str | None = None
    stage: str | None = None
    kept_commitment: bool = False
    voice: Voice = Voice()


def pick(options: tuple[str, ...], turn: Turn, move: str) -> str:
    """A phrasing for this move: turns with the turn's number (so a session's replies
    differ), offset per session and move (so two moves do not turn in step)."""
    offset = zlib.crc32(f"{turn.session}:{move}".encode()) % len(options)
    return options[(turn.turn - 1 + offset) % len(options)]


# -- the person's words, said back --------------------------------------------------------------

_CLAUSE_SPLIT = re.compile(
    r"(?<=[.!?;…])\s+|,\s+(?=(?:but|and|so|because|mais|et|parce|car)\b)|\s+(?=(?:but|mais|because|parce que)\s)"
)
# A clause that starts with its subject can be said back as "you ..."; others are quoted.
_SUBJECT_EN = re.compile(r"^(?:i|i'm|im|i've|i'll|i'd|my|it|it's|the|this|that|we|our|there|work|everything)\b", re.I)
_LEAD = re.compile(r"^(?:but|and|so|because|well|honestly|mais|et|donc|parce que|car|bon|bref)\b[\s,]*", re.I)


_FINER = re.compile(
    r"[,;:]\s*|\s+(?=(?:alors que|tandis que|au lieu de|instead of|that|if|when|because|and|que|qu'|si|quand|"
    r"parce que|et)\s)"
)
_OPENER = re.compile(r"^(?:that|and|que|qu'|et)\s+", re.I)  # "que je mange surtout": the piece is what follows


def _clauses(text: str, *, finer: bool = False) -> list[str]:
    """The message's clauses (split at sentence ends and before "but"); `finer` also
    splits them at commas and before "that", "if", "when", keeping those words."""
    found: list[str] = []
    parts = _CLAUSE_SPLIT.split(text)
    if finer:
        parts = [piece for part in parts for piece in _FINER.split(part)]
    for part in parts:
        part = _LEAD.sub("", part.strip(" .!?;…,")).strip(" ,")
        if finer:
            part = _OPENER.sub("", part)
        words = part.split()
        if len(words) >= (2 if finer else 3) and content_stems(part):
            found.append(" ".join(words[:18]))
    return found


def key_clause(message: str, *, avoid: str = "") -> tuple[str, bool] | None:
    """(words, is a piece) to say back. For the early reply (nothing to avoid): the
    message's clause, or for a one-clause message its fullest piece, leaving the rest
    for the merged reply. For the merged reply: the piece with the most content words the
    early reply (`avoid`) did not say, else the last piece it did not say verbatim.
    A piece cut from its sentence may not stand as a statement: it is quoted."""
    text = " ".join(message.replace("\u2019", "'").split())
    clauses = _clauses(text)
    pieces = _clauses(text, finer=True)
    if not clauses:
        short = text.strip(" .!?…")
        if content_stems(short) and len(short.split()) <= 12:
            return short, True  # a message of a few words: quote it whole
        return None
    if not avoid:
        if len(clauses) == 1 and len(pieces) > 1:
            return max(pieces, key=lambda p: len(content_stems(p))), True
        return clauses[-1], False
    taken = content_stems(avoid)
    fresh = [(len(content_stems(p) - taken), len(p.split()), p) for p in pieces]
    best = max(fresh, default=None)
    if best is not None and best[0] > 0:
        return best[2], True
    said = normalize(avoid)
    unsaid = [p for p in pieces if normalize(p) not in said and normalize(second_person(p)) not in said]
    return ((unsaid or pieces)[-1], True) if pieces else None


_REFLECT_EN = (
    "It sounds like {c}.",
    "So {c}.",
    "You're saying {c}.",
    "What I hear is that {c}.",
)
_QUOTE_EN = (
    "You said “{c}”.",
    "In your words: “{c}”.",
    "You put it as “{c}”.",
)
_REFLECT_FR = (
    "Vous dites : « {c} ».",
    "Si je vous entends bien : « {c} ».",
    "Ce que j'entends, c'est : « {c} ».",
)


def reflect_words(turn: Turn, *, avoid: str = "") -> str | None:
    """A simple reflection of a clause of the message, in the person's own words: said
    back as "you ..." when it starts with its subject (English), else quoted."""
    found = key_clause(turn.message, avoid=avoid)
    if found is None:
        return None
    clause, piece = found
    if turn.locale == "en":
        if piece or not _SUBJECT_EN.match(clause):
            return pick(_QUOTE_EN, turn, "quote").format(c=clause)
        said = second_person(clause)
        return pick(_REFLECT_EN, turn, "reflect").format(c=said[0].lower() + said[1:])
    return pick(_REFLECT_FR, turn, "reflect").format(c=clause[0].lower() + clause[1:])


_PATTERN: dict[Locale, dict[str, tuple[str, ...]]] = {
    "en": {
        "intention_action_gap": (
            "Part of you is clear about what you want, and the moment itself keeps pulling another way.",
            "There is a gap between what you intend and what happens when the moment comes.",
        ),
        "avoidance": (
            "It sounds like this is easier to put off than to face, and that costs you something.",
            "Putting it off gives some relief now, and you pay for it later.",
        ),
        "all_or_nothing": (
            "It sounds like it can feel as if it only counts when it is perfect.",
            "One slip seems to feel like the whole thing is lost.",
        ),
        "overcommitment": (
            "You are carrying a lot at once, and this is competing with everything else.",
            "It sounds like there is more on your plate than one person can hold.",
        ),
        "values_conflict": (
            "Two things you care about seem to be pulling against each other here.",
            "Part of this matters to you, and something else you value is in the way.",
        ),
        "self_criticism": (
            "You are being quite hard on yourself about this.",
            "It sounds like you judge yourself harshly when it does not go to plan.",
        ),
    },
    "fr": {
        "intention_action_gap": (
            "Une partie de vous sait ce qu'elle veut, et le moment venu quelque chose tire ailleurs.",
            "Il y a un écart entre ce que vous voulez faire et ce qui se passe sur le moment.",
        ),
        "avoidance": (
            "On dirait que c'est plus facile de repousser que d'y faire face, et que cela vous coûte.",
            "Repousser soulage sur le moment, et vous le payez ensuite.",
        ),
        "all_or_nothing": (
            "On dirait que cela ne compte que si c'est parfait.",
            "Un seul écart semble vous donner l'impression que tout est perdu.",
        ),
        "overcommitment": (
            "Vous portez beaucoup de choses à la fois, et ceci entre en concurrence avec le reste.",
            "On dirait qu'il y a plus sur vos épaules qu'une seule personne ne peut porter.",
        ),
        "values_conflict": (
            "Deux choses qui comptent pour vous semblent tirer dans des sens opposés.",
            "Une partie de cela compte pour vous, et autre chose à quoi vous tenez fait obstacle.",
        ),
        "self_criticism": (
            "Vous êtes plutôt dur avec vous-même à ce sujet.",
            "On dirait que vous vous jugez sévèrement quand cela ne se passe pas comme prévu.",
        ),
    },
}

_AFFIRM: dict[Locale, tuple[str, ...]] = {
    "en": (
        "You kept at it, and that counts.",
        "That took effort, and you did it.",
        "You followed through on something that matters to you.",
    ),
    "fr": (
        "Vous avez tenu bon, et cela compte.",
        "Cela vous a demandé un effort, et vous l'avez fait.",
        "Vous êtes allé au bout de quelque chose qui compte pour vous.",
    ),
}

_QUESTION: dict[Locale, dict[str, dict[Directness, tuple[str, ...]]]] = {
    "en": {
        "engaging": {
            "gentle": (
                "What is that like for you?",
                "How does that sit with you when it happens?",
                "What would you like me to understand about it?",
            ),
            "direct": (
                "What happens right before it goes that way?",
                "How often does that happen in a week?",
                "What is the hardest part of it?",
            ),
        },
        "focusing": {
            "gentle": (
                "Which part of this feels most important to you right now?",
                "Of all of this, what would you most like to change?",
                "Where would you like us to start?",
            ),
            "direct": (
                "Which one change would make the biggest difference?",
                "What is the one thing you want to work on first?",
                "What matters most here for you?",
            ),
        },
        "evoking": {
            "gentle": (
                "What would be different for you if this changed?",
                "What makes this worth changing for you, now?",
                "How would you like things to be a few months from now?",
            ),
            "direct": (
                "Why does this matter to you now?",
                "What would you gain if this changed?",
                "On a scale of 0 to 10, how important is this change to you, and why not lower?",
            ),
        },
        "planning": {
            "gentle": (
                "Would you like to think together about a first small step?",
                "Would it help if we looked at what a first step could be, in your own way?",
                "Would you like to hear an idea that has helped others, or find your own first?",
            ),
            "direct": (
                "Would you like to pick a first step together now?",
                "May I share one idea, and you tell me if it fits?",
                "Would you like to plan the next day this could happen?",
            ),
        },
    },
    "fr": {
        "engaging": {
            "gentle": (
                "Comment vivez-vous cela quand ça arrive ?",
                "Qu'est-ce que cela vous fait ?",
                "Qu'aimeriez-vous que je comprenne de cela ?",
            ),
            "direct": (
                "Qu'est-ce qui se passe juste avant ?",
                "Quel est le moment le plus difficile ?",
                "Combien de fois cela arrive-t-il dans une semaine ?",
            ),
        },
        "focusing": {
            "gentle": (
                "Qu'est-ce qui vous semble le plus important en ce moment ?",
                "Dans tout cela, qu'aimeriez-vous changer en premier ?",
                "Par où aimeriez-vous commencer ?",
            ),
            "direct": (
                "Quel changement ferait la plus grande différence ?",
                "Sur quoi voulez-vous travailler d'abord ?",
                "Qu'est-ce qui compte le plus pour vous ici ?",
            ),
        },
        "evoking": {
            "gentle": (
                "Qu'est-ce qui serait différent pour vous si cela changeait ?",
                "Qu'est-ce qui fait que ce changement vaut la peine pour vous, maintenant ?",
                "Comment aimeriez-vous que les choses soient dans quelques mois ?",
            ),
            "direct": (
                "Pourquoi est-ce important pour vous maintenant ?",
                "Que gagneriez-vous si cela changeait ?",
                "De 0 à 10, quelle importance a ce changement pour vous, et pourquoi pas moins ?",
            ),
        },
        "planning": {
            "gentle": (
                "Aimeriez-vous réfléchir ensemble à un premier petit pas ?",
                "Voulez-vous que nous regardions à quoi pourrait ressembler un premier pas, à votre façon ?",
                "Aimeriez-vous entendre une idée qui a aidé d'autres personnes, ou trouver la vôtre d'abord ?",
            ),
            "direct": (
                "Voulez-vous choisir un premier pas ensemble maintenant ?",
                "Puis-je vous proposer une idée, et vous me dites si elle vous convient ?",
                "Voulez-vous prévoir le prochain jour où cela pourrait arriver ?",
            ),
        },
    },
}

_GENERAL: dict[Locale, tuple[str, ...]] = {
    "en": (
        "It sounds like part of you wants this change, and another part keeps pulling the other way.",
        "This matters to you, and it has not been easy.",
    ),
    "fr": (
        "On dirait qu'une partie de vous veut ce changement, et qu'une autre tire dans l'autre sens.",
        "Cela compte pour vous, et ce n'est pas facile.",
    ),
}


def question(turn: Turn, *, move: str = "question") -> str:
    process = turn.mi_process
    return pick(_QUESTION[turn.locale][process][turn.voice.directness], turn, move)


def _same(a: str, b: str) -> bool:
    return normalize(a).strip(" .?!") == normalize(b).strip(" .?!")


def _fresh(sentence: str | None, early: str) -> bool:
    """A sentence the early reply did not say (nor most of it)."""
    if not sentence:
        return False
    said = normalize(early)
    if normalize(sentence).strip(" .?!") in said:
        return False
    words = content_stems(sentence)
    return not words or len(words & content_stems(early)) < 0.8 * len(words)


def early_reply(turn: Turn) -> str:
    """The early reply composed: a reflection of the message and one open question."""
    reflection = (double_sided_reflection(turn.message) if turn.locale == "en" else None) or reflect_words(turn)
    if reflection is None:
        reflection = pick(_GENERAL[turn.locale], turn, "general")
    early_turn = Turn(**{**vars(turn), "mi_process": "engaging" if turn.mi_process == "planning" else turn.mi_process})
    return f"{reflection} {question(early_turn, move='early')}"


def merged_reply(turn: Turn, *, early: str = "", model_sentence: str | None = None) -> str:
    """The merged reply composed: what the early reply did not say, in the plan's voice.

    Detailed: a reflection (the model's own sentence if one passed the rules, else the
    person's words), shadow's pattern or an affirmation, and the next move. Brief: one
    reflection and the next move."""
    parts: list[str] = []
    reflection = model_sentence if _fresh(model_sentence, early) else None
    if reflection is None:
        candidate = reflect_words(turn, avoid=early)
        reflection = candidate if _fresh(candidate, early) else None
    meaning: str | None = None
    if reflection is None:
        # The early reply said back all there was: ask what the person's own words mean
        # to them instead of saying them back a second time.
        phrase = key_phrase(turn.message)
        if phrase is not None:
            meaning = pick(_MEANING[turn.locale], turn, "meaning").format(p=phrase)
    if reflection is not None:
        parts.append(reflection)
    detailed = turn.voice.length == "detailed"
    affirm = turn.kept_commitment or turn.pattern == "steady_progress" or turn.stage in ("action", "maintenance")
    if affirm and (detailed or not parts):
        parts.append(pick(_AFFIRM[turn.locale], turn, "affirm"))
    elif turn.pattern in _PATTERN[turn.locale] and (detailed or not parts):
        parts.append(pick(_PATTERN[turn.locale][turn.pattern], turn, "pattern"))
    if not parts:
        parts.append(next(g for g in _GENERAL[turn.locale] if _fresh(g, early)) if early else _GENERAL[turn.locale][0])
    ask = meaning or question(turn)
    if meaning is None and (not _fresh(ask, early) or any(_same(ask, p) for p in parts)):
        ask = question(Turn(**{**vars(turn), "turn": turn.turn + 1}))
    parts.append(ask)
    return " ".join(parts)


_MEANING: dict[Locale, tuple[str, ...]] = {
    "en": ("What does “{p}” mean for you?", "What is behind “{p}”, for you?"),
    "fr": ("Que représente « {p} » pour vous ?", "Qu'y a-t-il derrière « {p} », pour vous ?"),
}


def key_phrase(message: str) -> str | None:
    """The last few words of the message's shortest piece that carries content: a phrase
    to ask about ("a few days a week")."""
    pieces = _clauses(" ".join(message.split()), finer=True)
    if not pieces:
        return None
    words = min(pieces, key=lambda p: len(p.split())).split()
    return " ".join(words[-4:])
