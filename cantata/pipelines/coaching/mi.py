"""Motivational-interviewing text rules: is a reply on topic, does it give advice without
permission, and the reflective replies used when no generated reply can be.

These are quality gates, not safety rules (safety.py): a generated reply that fails them
is replaced by a template, so a small model's off-topic or advice-giving text never
reaches the person.
"""

from __future__ import annotations

import re
from typing import Literal

from cantata.pipelines.coaching.safety import Locale, normalize

AdviceMode = Literal["none", "ask_permission", "elicit_provide_elicit"]
MiProcess = Literal["engaging", "focusing", "evoking", "planning"]

_STOP = frozenset(
    """the and but for not you are was can all any had her his him its our out who how why get got did has one
    two too yes yet now off own say see way use let may try lot bit per via les des une est pas qui que mon mes
    ton tes son ses moi toi lui eux nos vos ont ete fai sur par aux ces
    about above after again against also always because been before being below between both could does doing
    down during each every from further have having here into just keep keeps kept like more most much must need
    never only other over really said same saying should some such than that their them then there these they
    thing things think this those through until very want wanted what when where which while will with would
    your yours you're know feel going make made time still even well back day days dans pour avec mais elle
    elles nous vous sont suis etre avoir fait faire tout tous toute cette comme plus moins tres bien quand
    parce alors aussi encore jamais toujours rien chaque""".split()
)


def content_stems(text: str) -> set[str]:
    """Five-letter stems of the content words: 'mornings' and 'morning' meet, 'the' does not."""
    words = re.findall(r"[a-z]+", normalize(text))
    return {w[:5] for w in words if len(w) >= 3 and w not in _STOP}


def on_topic(reply: str, *sources: str) -> bool:
    """The reply shares at least one content word with what it answers."""
    wanted: set[str] = set()
    for source in sources:
        wanted |= content_stems(source)
    return not wanted or bool(content_stems(reply) & wanted)


_ADVICE = re.compile(
    r"\b(?:you should|you need to|you must|you have to|you ought to|try to|try (?:setting|putting|using|making|"
    r"going|doing|writing)|i (?:suggest|recommend|advise)|my advice|(?:here are|some|a few) (?:tips|suggestions)|"
    r"(?:i can|let me|i'll) give you (?:some )?(?:tips|advice)|vous devriez|tu devrais|il faut que (?:vous|tu)|"
    r"essayez de|essaie de|je (?:vous|te) (?:conseille|recommande|suggere)|mon conseil|voici (?:quelques )?conseils)\b"
)
_PERMISSION = re.compile(
    r"\b(?:would you like|do you want (?:me to|some|a few)|may i|can i (?:share|offer|suggest)|is it ok(?:ay)? if i|"
    r"would it help if i|voulez-vous|aimeriez-vous|puis-je|est-ce que je peux|souhaitez-vous)\b"
)


def advice_problem(text: str, mode: AdviceMode) -> str | None:
    """Why the text breaks the advice mode, or None: advice only with permission."""
    norm = normalize(text)
    if not _ADVICE.search(norm):
        return None
    if mode == "none":
        return "gives advice where the plan allows none"
    if mode == "ask_permission" and not _PERMISSION.search(norm):
        return "gives advice without asking permission"
    if mode == "elicit_provide_elicit" and "?" not in text:
        return "gives advice without eliciting the person's view"
    return None


# -- reflections built from the message ---------------------------------------------------------

_SWAP = {
    "i": "you",
    "i'm": "you're",
    "im": "you're",
    "i've": "you've",
    "i'll": "you'll",
    "i'd": "you'd",
    "me": "you",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "am": "are",
    "was": "were",
    "we": "you",
    "our": "your",
    "us": "you",
}
_GAP_EN = (
    re.compile(
        r"\bi (?:keep saying|keep telling myself|said|promised(?: myself)?|tell myself|always say|told myself)"
        r"(?: that)? i(?:'ll| will| would|'d) (?P<want>[^.!?]{3,80}?),? but (?:then )?(?:i )?(?:always |usually |just )?"
        r"(?P<actual>[^.!?]{3,80})"
    ),
    re.compile(
        r"\bi(?:'d| would)? (?:really )?(?:want|wanted|like|need|have been trying|am trying|'m trying|try) to "
        r"(?P<want>[^.!?]{3,80}?),? but (?:then )?(?:i )?(?:always |usually |just )?(?P<actual>[^.!?]{3,80})"
    ),
)


def second_person(clause: str) -> str:
    """An English clause said back to the person: "I skip my runs" -> "you skip your runs"."""
    words = clause.strip(" ,;:").split()
    out = []
    for i, word in enumerate(words):
        low = word.lower()
        # "was" only after "I": "it was late" stays as it is.
        if low == "was" and (i == 0 or words[i - 1].lower() != "i"):
            out.append(word)
            continue
        out.append(_SWAP.get(low, word))
    return " ".join(out)


_NOUN_START = re.compile(
    r"^(?:the|a|an|your|his|her|their|it|it's|this|that|there|these|those|everything|nothing|work|life|you)\b", re.I
)


def double_sided_reflection(message: str) -> str | None:
    """'You want to X, and you end up Y instead.' from 'I keep saying I'll X but end up Y'; English only."""
    text = " ".join(message.replace("\u2019", "'").split())
    for pattern in _GAP_EN:
        match = pattern.search(text.lower())
        if match is None:
            continue
        # Take the clauses from the original text, to keep the person's own spelling.
        want = second_person(text[match.start("want") : match.end("want")])
        actual = second_person(text[match.start("actual") : match.end("actual")])
        if _NOUN_START.match(actual):  # "but the cigarette after dinner is hard": no "you" to add
            return f"You want to {want}, and {actual}."
        ending = "" if re.search(r"\binstead\b", actual.lower()) else " instead"
        return f"You want to {want}, and you {actual}{ending}."
    return None


_OPEN_QUESTION: dict[Locale, dict[MiProcess, str]] = {
    "en": {
        "engaging": "What would you like me to understand about this?",
        "focusing": "Which part of this matters most to you right now?",
        "evoking": "What would be different for you if this changed?",
        "planning": "What might a first small step look like, if you want one?",
    },
    "fr": {
        "engaging": "Qu'aimeriez-vous que je comprenne de votre situation ?",
        "focusing": "Qu'est-ce qui compte le plus pour vous en ce moment, là-dedans ?",
        "evoking": "Qu'est-ce qui serait différent pour vous si cela changeait ?",
        "planning": "À quoi pourrait ressembler un premier petit pas, si vous en voulez un ?",
    },
}


_AFFIRMATION: dict[Locale, str] = {
    "en": "Thank you for putting this into words; seeing it clearly is already a step.",
    "fr": "Merci de l'avoir mis en mots ; le voir clairement, c'est déjà un pas.",
}


def followup_reply(locale: Locale, process: MiProcess | None) -> str:
    """The merged reply's template: it follows the early reflection instead of repeating it,
    with an affirmation and the open question of the plan's MI process."""
    return f"{_AFFIRMATION[locale]} {_OPEN_QUESTION[locale][process or 'evoking']}"
