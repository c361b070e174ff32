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

Everything here is a table or a regex compiled once: a message costs a few microseconds.
"""

from __future__ import annotations

import re
import unicodedata

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

# Words whose double letter a stretch collapses to one ("killll" -> "kil"): put it back.
_DOUBLES = {
    w.replace("ll", "l")
    .replace("ss", "s")
    .replace("ee", "e")
    .replace("oo", "o")
    .replace("tt", "t")
    .replace("ff", "f")
    .replace("rr", "r")
    .replace("nn", "n")
    .replace("pp", "p"): w
    for w in (
        "kill",
        "killing",
        "all",
        "will",
        "still",
        "pills",
        "feel",
        "need",
        "sorry",
        "better",
        "off",
        "tell",
        "well",
        "full",
        "good",
        "goodbye",
        "too",
        "really",
        "anymore",
        "tellement",
        "marre",
        "personne",
        "elle",
        "belle",
        "arreter",
        "aller",
        "nulle",
        "hell",
        "alone",
        "sleep",
        "see",
        "free",
        "need",
        "bullied",
        "happy",
    )
    if any(d in w for d in ("ll", "ss", "ee", "oo", "tt", "ff", "rr", "nn", "pp"))
}

# One token -> its canonical words. English then French; none of these is an ordinary word
# of the other language that a rule relies on.
_EXPAND: dict[str, str] = {
    # English contractions typed without the apostrophe
    "im": "i'm",
    "ive": "i've",
    "id": "i'd",
    "dont": "don't",
    "cant": "can't",
    "wont": "won't",
    "didnt": "didn't",
    "doesnt": "doesn't",
    "isnt": "isn't",
    "wasnt": "wasn't",
    "arent": "aren't",
    "werent": "weren't",
    "wouldnt": "wouldn't",
    "couldnt": "couldn't",
    "shouldnt": "shouldn't",
    "havent": "haven't",
    "hasnt": "hasn't",
    "hadnt": "hadn't",
    "aint": "ain't",
    "youre": "you're",
    "theyre": "they're",
    "thats": "that's",
    "whats": "what's",
    "theres": "there's",
    "hes": "he's",
    "shes": "she's",
    "idc": "i don't care",
    # English text-speak
    "u": "you",
    "ur": "your",
    "r": "are",
    "rn": "right now",
    "idk": "i don't know",
    "kms": "kill myself",
    "kys": "kill yourself",
    "unalive": "kill",
    "unaliving": "killing",
    "unalived": "killed",
    "sewerslide": "suicide",
    "suicidal": "suicidal",
    "gonna": "going to",
    "wanna": "want to",
    "gotta": "got to",
    "dunno": "don't know",
    "imma": "i'm going to",
    "ima": "i'm going to",
    "tmrw": "tomorrow",
    "tmr": "tomorrow",
    "tmw": "tomorrow",
    "2morrow": "tomorrow",
    "2nite": "tonight",
    "tonite": "tonight",
    "2night": "tonight",
    "2day": "today",
    "nvm": "never mind",
    "jk": "just kidding",
    "ppl": "people",
    "every1": "everyone",
    "some1": "someone",
    "no1": "no one",
    "any1": "anyone",
    "noone": "no one",
    "bf": "boyfriend",
    "gf": "girlfriend",
    "pls": "please",
    "plz": "please",
    "tho": "though",
    "abt": "about",
    "b4": "before",
    "wat": "what",
    "wut": "what",
    "ded": "dead",
    "alot": "a lot",
    "cuz": "because",
    "coz": "because",
    "bc": "because",
    "bcuz": "because",
    "bcoz": "because",
    "mom": "mom",
    "anymore": "anymore",
    # French elisions typed without the apostrophe
    "jai": "j'ai",
    "jen": "j'en",
    "jetais": "j'etais",
    "jaimerais": "j'aimerais",
    "jarrive": "j'arrive",
    "jy": "j'y",
    "cest": "c'est",
    "cetait": "c'etait",
    "nai": "n'ai",
    "narrive": "n'arrive",
    "nen": "n'en",
    "ny": "n'y",
    "quon": "qu'on",
    "quil": "qu'il",
    "jsuis": "je suis",
    "jsui": "je suis",
    "chuis": "je suis",
    "chui": "je suis",
    "jveux": "je veux",
    "jvais": "je vais",
    "jvai": "je vais",
    "jpeux": "je peux",
    "jme": "je me",
    "jte": "je te",
    "jsais": "je sais",
    "jcrois": "je crois",
    "jpense": "je pense",
    "jfais": "je fais",
    "jdois": "je dois",
    "jmen": "je m'en",
    "jmerde": "je merde",
    "jveu": "je veux",
    "veu": "veux",
    "bout": "about",
    "w": "with",
    "4ever": "forever",
    "wud": "would",
    "wld": "would",
    "cud": "could",
    "shud": "should",
    "srsly": "seriously",
    "n": "and",
    "diee": "die",
    "deadd": "dead",
    # French text-speak
    "jsp": "je sais pas",
    "chepa": "je sais pas",
    "chpa": "je sais pas",
    "jpp": "j'en peux plus",
    "jenpeuxplus": "j'en peux plus",
    "tkt": "t'inquiete",
    "mtn": "maintenant",
    "mnt": "maintenant",
    "auj": "aujourd'hui",
    "ajd": "aujourd'hui",
    "aujd": "aujourd'hui",
    "bcp": "beaucoup",
    "pk": "pourquoi",
    "pq": "pourquoi",
    "pkoi": "pourquoi",
    "qqn": "quelqu'un",
    "qqun": "quelqu'un",
    "qqch": "quelque chose",
    "tt": "tout",
    "tjr": "toujours",
    "tjrs": "toujours",
    "tjs": "toujours",
    "ms": "mais",
    "pr": "pour",
    "ds": "dans",
    "ke": "que",
    "ki": "qui",
    "koi": "quoi",
    "kan": "quand",
    "g": "j'ai",
    "c": "c'est",
    "ct": "c'etait",
    "ya": "il y a",
    "jamai": "jamais",
    "persone": "personne",
    "plu": "plus",
}

# Dropped final g's ("thinkin bout killin myself"): only these verbs, so "matin", "besoin"
# and "cousin" stay as they are.
_EXPAND.update(
    {
        f"{verb[:-1]}": verb
        for verb in (
            "thinking killing trying going feeling ending dying living wanting hoping planning cutting hurting saying "
            "doing nothing something anything everything taking sleeping waking giving leaving praying wishing looking "
            "searching googling saving collecting writing starving throwing drinking"
        ).split()
    }
)

# Dropped wherever they are: they carry emphasis, not meaning, and sit inside phrases
# ("I just really want to die", "j'ai genre plus envie de vivre"). Not dropped: words a
# rule or a hedge needs ("maybe", "probably", "like", "never", "quoi", "trop").
_FILLERS = frozenset(
    "just really literally honestly actually seriously basically totally truly genuinely kinda sorta lowkey "
    "highkey fucking fuckin fking effing freaking frickin bloody damn very tbh ngl fr lol lmao lmfao haha "
    "hahaha omg um umm uh uhh ugh even still completely utterly absolutely extremely incredibly "
    "deeply super rly realy "
    "juste vraiment franchement genre carrement grave tellement sincerement honnetement putain ptn bordel "
    "merde euh bah ben bref mdr ptdr meme limite serieux serieusement completement totalement hyper "
    "absolument profondement".split()
)
_MULTI_FILLERS = re.compile(r"\b(?:kind of|sort of|you know|i mean|a bit|un peu|en fait|tu vois|vous voyez)\b ?")

# Elisions typed as a space ("j ai", "don t", "i m"): joined back.
_SPACED_ELISION = re.compile(r"(?<![a-z'])(j|l|m|t|n|c|d|s|qu) (?=[aeiouhy])")
# "want 2 die", "going 2": the digit as "to" after a verb that takes one, not in "ate 2 burgers".
_TWO = re.compile(
    r"\b(want|wanna|going|gonna|need|have|got|like|love|try|trying|ready|plan|planning|used|how|ways|reason|enough|"
    r"point|way) 2\b"
)
# "w/o", "w/": without, with (typed before the tokens, whose pattern drops "/").
_SLASHED = ((re.compile(r"\bw/o\b"), "without"), (re.compile(r"\bw/(?=\s|[a-z])"), "with "))
# Quebec and SMS "pu" for "plus" after a verb ("je veux pu vivre"), not the participle of
# "pouvoir" ("j'ai pu venir").
_PU = re.compile(r"\b(veux|peux|sais|suis|vais|vois|en|voulais|fais|supporte|aime|sers) pu\b")
_NO_MORE = re.compile(r"\bno more(?= *$| *[,.!?])")  # "don't wanna live no more"
_SPACED_NT = re.compile(r"\b(don|can|won|didn|doesn|isn|wasn|aren|wouldn|couldn|shouldn|haven|hasn) t\b")
_SPACED_I = re.compile(r"\bi (m|ve|ll|d)\b")
_SPACED_S = re.compile(r"\b(it|that|what|there|he|she|let|who) s\b")

# Figures of speech that use the words of a crisis. Each becomes one neutral token.
IDIOM = "xidiom"
_IDIOMS = re.compile(
    r"\b(?:"
    # English
    r"(?:die|dying|died|dead) (?:of|from) (?:embarrassment|boredom|laughter|laughing|shame|cringe|heat|hunger|"
    r"thirst|curiosity|excitement|jealousy|envy|exhaustion|old age)|"
    r"(?:die|dying|died) (?:laughing|happy)|dying to|to die for|dead (?:tired|beat|serious|funny|on my feet)|"
    r"(?:killing|killed|kill|nailed|nail) it|kill(?:ing)? (?:time|the (?:mood|vibe))|"
    r"(?:kill|murder|die) for (?:a|an|some|the) [a-z]+|could (?:murder|kill|eat) (?:a|an|some|the) [a-z]+|"
    r"(?:is|are|was|were|'s|'re) killing me|kills me|the death of me|over my dead body|"
    r"(?:bored|scared|worried|sick|tired) to death|(?:frightened|worried) sick|i'm dead lol|"
    r"(?:my|his|her) (?:legs|feet|back|knees) (?:are|is) killing me|(?:dy|di)(?:e|ing|ed) (?:my|her|his|their|your) (?:hair|beard|roots|clothes|shirt|jeans)|"
    # "so boring I wanted to die": hyperbole about a dull or awkward moment.
    r"(?:(?:so|too|that) )?(?:boring|embarrassing|awkward|cringe|cringey|hot|cold|full|funny|hungry|long|loud|tedious) "
    r"(?:that )?i (?:wanted to|could have|could|thought i'd|thought i would|nearly|almost) (?:die|died)|"
    r"(?:about|going) to die (?:of|from|at|in) (?:this|that|the) [a-z]+|"
    # A past fear of dying ("that hill, I thought I was going to die"): hyperbole or a past
    # scare, not a wish.
    r"(?:thought|felt like|was sure|was convinced|swear) (?:that )?i (?:was|were) (?:going to|about to) die|"
    r"(?:felt|feel|feels|feeling) like i (?:was|am|'m|were) (?:dying|going to die|about to die)(?! inside)|"
    r"overdos(?:e|ed|ing) on (?:sugar|coffee|caffeine|chocolate|netflix|tv|carbs|sweets|candy|cake|pizza|junk food)|"
    # French
    r"(?:je )?meurs de (?:faim|soif|chaud|froid|rire|envie|fatigue|honte|peur|sommeil)|"
    r"morte? de (?:rire|fatigue|faim|honte|peur|froid|chaud)|mourir de (?:rire|honte|faim|soif|chaud|froid|ennui)|"
    r"(?:ca|ce [a-z]+|cette [a-z]+|il|elle|tu|le [a-z]+|la [a-z]+|les [a-z]+) me tue(?:nt)?|"
    r"(?:me|se) tuer a la tache|(?:me|se) tuer au (?:travail|boulot)|tuer le temps|"
    r"(?:tuerais|tuer) pour (?:un|une|des) [a-z]+|crev(?:e|er|es) de (?:faim|chaud|froid|soif)|"
    r"(?:ennuie|ennuyeux|ennuyeuse|m'ennuyer|belle|beau|drole|chiant|chiante|bete) a mourir|"
    r"(?:je suis|chuis) morte? (?:de fatigue|de rire|lol|mdr)|"
    r"(?:j'ai cru|j'ai bien cru|je croyais|je pensais|j'etais sure?) (?:que j'allais |que j'allais y )?(?:mourir|y rester)|"
    # "en finir avec la cigarette": ending a habit or a thing, not a life (a ", avec tout"
    # or "avec la vie" stays as it is).
    r"en finir avec (?:la |le |les |l'|mon |ma |mes |ce |cet |cette |ces |mes )(?!vie\b|tout\b|moi\b)[a-z]+"
    r")\b"
)


# Every figure of speech above contains one of these: without any, the idiom pass is skipped.
_IDIOM_STEMS = (
    "die",
    "dying",
    "dead",
    "kill",
    "murder",
    "death",
    "nail",
    "eat",
    "sick",
    "overdos",
    "meur",
    "mort",
    "mour",
    "tue",
    "crev",
    "bored",
    "scared",
    "worried",
    "tired",
    "frightened",
    "finir",
)


def fold(text: str) -> str:
    """Accents and typographic quotes folded, lower case; newlines kept (they end sentences)."""
    text = text.translate(_FOLD)
    if not text.isascii():
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return text.lower()


def _unstretch(match: re.Match[str]) -> str:
    word = match.group(0)
    stretched = _STRETCH.sub(r"\1", word)
    return _DOUBLES.get(stretched, stretched)


_STRETCHED_WORD = re.compile(r"[a-z']*([a-z])\1{2,}[a-z']*")


def _token(word: str) -> str:
    if word in _FILLERS:
        return ""
    return _EXPAND.get(word, word)


# "like" as a filler ("I want to like disappear", "it's like pointless"), not as a verb
# ("I like running") or in "feel like", "would like", "like a burden".
_LIKE_VERB_BEFORE = frozenset(
    "feel feels felt feeling would i'd we'd you'd look looks looked seem seems sounds".split()
)
_LIKE_FILLER_BEFORE = frozenset("to i'm it's was is am be and but so um uh".split())
_LIKE_FILLER_AFTER = frozenset("want so be i i'm you just kill die end totally completely never can't don't".split())


# "so" as an intensifier ("I'm so done"), not as a conjunction ("so I could end it").
_SO_KEPT_BEFORE = frozenset("i that we you he she they it much many what nobody everyone everybody my".split())


def _drop_filler_like(words: list[str]) -> list[str]:
    kept: list[str] = []
    for i, word in enumerate(words):
        if word == "so" and (i + 1 == len(words) or words[i + 1] not in _SO_KEPT_BEFORE):
            continue
        if word == "like":
            before = kept[-1] if kept else ""
            after = words[i + 1] if i + 1 < len(words) else ""
            if before not in _LIKE_VERB_BEFORE and (before in _LIKE_FILLER_BEFORE or after in _LIKE_FILLER_AFTER):
                continue
        kept.append(word)
    return kept


def _sentence(text: str) -> str:
    text = _SPACED_NT.sub(r"\1't", text)
    text = _SPACED_I.sub(r"i'\1", text)
    text = _SPACED_S.sub(r"\1's", text)
    text = _SPACED_ELISION.sub(r"\1'", text)
    text = _TWO.sub(r"\1 to", text)
    if "/" in text:
        for slashed, word in _SLASHED:
            text = slashed.sub(word, text)
    text = _NO_MORE.sub("anymore", text)
    if _STRETCH.search(text):
        text = _STRETCHED_WORD.sub(_unstretch, text)
    words = _drop_filler_like([w for w in (_token(t) for t in _TOKEN.findall(text)) if w])
    joined = _PU.sub(r"\1 plus", _MULTI_FILLERS.sub("", " ".join(words)))
    if any(stem in joined for stem in _IDIOM_STEMS):
        joined = _IDIOMS.sub(IDIOM, joined)
    return joined.strip(" ,")


def tolerant(text: str) -> str:
    """The canonical form rules match: words separated by single spaces, commas kept as
    " , " tokens, sentence ends as " . "."""
    sentences = (_sentence(s) for s in _SENTENCE_END.split(fold(text)))
    return f" {BOUNDARY} ".join(s for s in sentences if s)
