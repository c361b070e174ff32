"""The evidence score: broad concept lexicons beside the phrase rules, for the indirect
disclosures no phrase family lists.

The phrase rules (signs.py) match ways of saying a sign; people in crisis find others
("they'd be relieved", "does X actually work", "this time next week I won't be here").
Here each warning sign is a CONCEPT: a lexicon of the words that carry it, in English and
French, inflected and as typed fast (the lexicons read the tolerant() form, tolerant.py).
A sentence's score is the sum of the weights of the distinct concepts it holds (a concept
said twice in different words counts one more), and it counts only when one of them is a
sign in its own right (a time word or "I want" alone is nothing):

- score >= HIGH: a sign a clinician acts on alone ("burden" + "if I weren't here"; a
  means + a lethality question; "goodbye" + "for good"): tier high, weight 3;
- a weaker score: a weak signal (tier low, weight 1; a means question weighs 2), named by
  its warning sign, which ACCUMULATES in the session with the phrase rules' signals
  (guard.accumulate: several signs of different families reach high, a means question
  after hopelessness is high at once).

Contexts that explain the words are discounts, applied per sentence: a habit goal
explains a date, a plan, giving things away or "ending" something; a past medical event
or someone else's death explains death and means words; fiction or the news explains
them all; a figure of speech ("this diet will be the end of me") explains death words.
A sentence the phrase rules read as a denial ("I'm not suicidal") adds no evidence.
Nothing is read across a sentence end: the score is per sentence of the tolerant form.

Sources of the signs (one per lexicon below): C-SSRS screener items 1-6 (Posner et al.
2011); the 988 Suicide & Crisis Lifeline and AFSP warning signs; the French 3114 line's
signs d'alerte; Stanley & Brown's Safety Planning Intervention (2012) and the Joint
Commission's Sentinel Event Alert 56 (2016) for hedges, refusal and secrecy; NICE NG225
(2022) for command hallucinations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cantata.pipelines.coaching.rules import gate_of, regex_depths, sentence_words
from cantata.pipelines.coaching.safety import Category, Tier

HIGH = 3  # as guard.HIGH_SCORE: the weight of one sign a clinician acts on alone


def _lex(*parts: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(parts) + r")\b")


@dataclass(frozen=True)
class Concept:
    name: str
    weight: int
    pattern: re.Pattern[str]
    family: str  # the warning sign a weak signal of this concept is counted as ("" : not a sign alone)
    sign: bool  # a sign in its own right: a sentence scores only with one of these
    # Words one of which every match contains (rules.gate_of), None when none is known: a
    # sentence without any is not searched, which keeps the score in microseconds.
    gate: frozenset[str] | None = None

    def __post_init__(self) -> None:
        source = self.pattern.pattern
        if self.gate is None and source.startswith(r"\b(?:") and source.endswith(r")\b"):
            object.__setattr__(self, "gate", gate_of(_top_level(source[5:-3])))


def _top_level(body: str) -> tuple[str, ...]:
    """The top-level alternatives of a regex body."""
    parts, start = [], 0
    for i, c, depth in regex_depths(body):
        if c == "|" and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return tuple(parts)


_T = r"(?:soon|before long|now|bientot|sous peu|maintenant|tonight|tomorrow|today|this (?:weekend|week|evening|friday|saturday|sunday)|next (?:week|month)|"
_T += r"this month|cette semaine|ce mois-ci|monday|tuesday|wednesday|thursday|friday|saturday|sunday|the [0-9]+(?:st|nd|rd|th)|ce soir|cette nuit|demain|"
_T += r"aujourd'hui|ce week-end|la semaine prochaine|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|le [0-9]+)"

CONCEPTS: tuple[Concept, ...] = (
    # C-SSRS items 1-2 (wish to be dead, thoughts of killing oneself); 988 "talking about
    # wanting to die": one's own death, ending and absence.
    Concept(
        "death",
        1,
        _lex(
            r"die|dying|dead|death|suicid\w*|kill (?:myself|me)|end (?:it|it all|things|"
            r"my life|everything|myself)|ending (?:it|it all|things|my life|everything)|take my (?:own )?life|"
            r"disap\w*|dissap\w*|vanish\w*|be over|over with|(?:be|being|still) (?:here|around)|(?:i'm|i am) gone|"
            r"go through with it|gone through with it|hit me|run me over|(?:plane|car) (?:goes|went|crash\w*)|"
            r"mourir|morte?s?|meurs|disparai\w*|disparu\w*|en finir|mettre fin|me tuer|"
            r"(?:plus|pas|encore) la|plus ici"
        ),
        "passive_wish",
        True,
    ),
    # C-SSRS item 2 (non-specific active thoughts): the euphemisms for the act.
    Concept(
        "euphemism",
        2,
        _lex(
            r"if i (?:ended|end) it|si j'en finissais|go through with it|gone through with it|went through with it|going through with it|end it all|ending it all|"
            r"passer a l'acte|en finir une bonne fois"
        ),
        "passive_wish",
        True,
    ),
    # 988 "no reason to live": one's own life, which counts beside hopelessness, pain or a
    # wish not to live ("I don't want to live like this"), never alone ("I love my life").
    Concept(
        "life",
        1,
        _lex(
            r"alive|live|living|life|exist|existing|carry(?:ing)? on|keep(?:ing)? going|go(?:ing)? on|vivre|vie|exister|"
            r"continuer"
        ),
        "",
        False,
    ),
    Concept(
        "neg_wish",
        1,
        _lex(
            r"(?:don't|do not|no longer|not|never) (?:want|wanna|wish) to|(?:ne )?veux plus|n'ai plus envie de|ne veux pas"
        ),
        "",
        False,
    ),
    # Ease with one's death, no fear of it (the "acquired capability" clinicians hear; 988).
    Concept(
        "ease",
        1,
        _lex(
            r"(?:doesn't|does not|don't|no longer) (?:scare|frighten) me|sounds like (?:rest|peace|relief|a relief)|"
            r"(?:me fait|m'effraie) (?:plus|pas) peur|ne me fait plus peur|ressemble a du repos|(?:feel|felt|i'm) (?:so )?calm|"
            r"at peace|made (?:my )?peace|serein\w*|en paix|(?:suis|me sens) calme"
        ),
        "passive_wish",
        False,
    ),
    # C-SSRS item 2: thinking about it.
    Concept(
        "thoughts",
        2,
        _lex(
            r"thinking (?:a lot )?about|thought (?:a lot )?about|thoughts (?:of|about)|keep thinking|pense\w* a|l'idee de"
        ),
        "",
        False,
    ),
    # C-SSRS item 1 (wish to be dead, to go to sleep and not wake up): the passive wish.
    Concept(
        "passive",
        2,
        _lex(
            r"(?:not|didn't|did not) (?:wake|waking) up|never (?:wake|waking) up|don't wake up|(?:don't|not|never) make it (?:to|through)|"
            r"stop(?:ped)? (?:existing|being alive|being here)|"
            r"(?:ne )?(?:jamais|plus|pas) me reveiller|ne plus exister|ne plus etre la|plus etre la|"
            r"m'endormir pour toujours"
        ),
        "passive_wish",
        True,
    ),
    # C-SSRS item 1: the wish itself, or ease with the thought ("I wouldn't mind").
    Concept(
        "wish",
        1,
        _lex(
            r"wish\w*|hop(?:e|es|ing)|want\w*|wanna|ready|waiting (?:for|to)|wouldn't mind|okay with|ok with|fine with|sounds (?:peaceful|"
            r"nice|better|easier|simpler)|rather|prefer|keep thinking|thinking about|thought of|idea of|"
            r"aimerais|voudrais|veux|envie|pret|prete|ca me (?:paraît|parait)|plus simple|idee de|l'idee|soulagement|"
            r"paisible|tranquille"
        ),
        "",
        False,
    ),
    # 988 / AFSP "talking about being a burden to others".
    Concept(
        "burden",
        2,
        _lex(
            r"burden\w*|dead weight|better off|easier (?:without|once|if|when)|have it easier|"
            r"happier (?:without|if|once|when)|out of (?:the|their|your|everyone's) way|(?:won't|wouldn't) be "
            r"(?:a|anyone's|their|your) (?:problem|burden)|problem for (?:anyone|everyone)|carry(?:ing)? me|"
            r"cost (?:\w+ ){1,2}so much|(?:doesn't|don't|does not|won't) need me|(?:nobody|no one) needs me|"
            r"(?:i'm|i am) useless|good for nothing|forget (?:about )?me|move on (?:quickly|without me|fast)|"
            r"m'oublier\w*|(?:not|never) (?:going to )?be a (?:problem|burden)|ne serai (?:plus|pas) un (?:probleme|poids|fardeau)|(?:nobody|no one|anyone) (?:would|will) (?:even )?(?:notice|care|miss me)|"
            r"would anyone (?:even )?(?:care|notice)|personne ne (?:remarquerait|verrait|me regretterait)|"
            r"(?:easier|simpler|better) for (?:everyone|everybody|you all|them|all of you)|plus (?:simple|facile) pour "
            r"(?:tout le monde|vous|eux)|worthless|ne sers (?:plus )?a rien|(?:personne )?n'a (?:pas |plus )?besoin de moi|tired of me|sick of me|deal with me|fardeau|un poids|mieux sans|"
            r"pes\w* sur (?:tout le monde|les autres|mes proches|ma famille)|"
            r"embeterai plus|embeter plus|plus (?:un|une) (?:poids|charge)|a (?:leur|ta|votre) charge|debarrass\w*"
        ),
        "burden",
        True,
    ),
    # Burden with relief: others relieved by one's absence (never "I'm relieved the exam is over").
    Concept("relief", 2, _lex(r"relieved|relief|soulage\w*"), "burden", False),
    # Where the person is absent: "if I weren't here", "without me", "anymore".
    Concept(
        "absence",
        1,
        _lex(
            r"anymore|any more|no longer|if i didn't exist|si je n'existais pas|once i'm gone|when i'm gone|without me|not around|if i (?:wasn't|weren't|"
            r"was gone|were gone|disappeared|died|wasn't here|weren't here)|me included|including me|sans moi|"
            r"si je (?:n'etais|disparaissais|mourais|partais)|plus jamais|moi compris"
        ),
        "",
        False,
    ),
    # 988 / AFSP "feeling trapped".
    Concept(
        "trapped",
        2,
        _lex(
            r"trapped|no way out|walls (?:are )?closing in|murs se (?:referment|rapprochent)|no escape|no exit|piege\w*|aucune issue|pas d'issue|sans issue|impasse"
        ),
        "trapped",
        True,
    ),
    Concept("stuck", 1, _lex(r"stuck|cornered|coince\w*|bloque\w*"), "trapped", True),
    # Trapped with a permanent exit: "only one way out", "except one".
    Concept(
        "exit",
        2,
        _lex(
            r"(?:only|one) way out|only way|only one way|except one|but one|one option left|one solution|qu'une (?:seule )?"
            r"(?:sortie|issue|solution)|a part une|seule (?:sortie|issue|solution)|une seule (?:facon|maniere)"
        ),
        "trapped",
        True,
    ),
    # 988 / AFSP "being in unbearable pain".
    Concept(
        "pain",
        1,
        _lex(
            r"can't (?:bear|stand|cope|handle) (?:it|this|any|anymore|the pain)|too much pain|can't cope|"
            r"can't keep (?:doing|going)|never lets up|the pain (?:to )?(?:stops?|ends?)|make (?:it|the pain) stop|"
            r"que (?:ca|la douleur) s'arrete|can't survive|supporte plus|trop mal|plus la force"
        ),
        "unbearable",
        True,
    ),
    Concept(
        "pain_strong",
        2,
        _lex(
            r"unbearable|insupportable|n'en peux plus(?! (?:de|du|des|d'))|can't go on|can't take (?:it|this|any) ?(?:any ?more|no more)|"
            r"je ne tiens plus|a (?:a)?bout(?! de souffle)|au bout du rouleau"
        ),
        "unbearable",
        True,
        # the lookaheads hide the words from rules.gate_of: every match holds one of these
        frozenset({"unbearable", "insupportable", "peux", "go", "take", "tiens", "bout", "about"}),
    ),
    # Resignation about it ("they'd forget me anyway").
    Concept("resigned", 1, _lex(r"anyway|de toute (?:facon|maniere)|quoi qu'il arrive"), "", False),
    # The scope of hopelessness: everything, not one thing ("no point to any of it").
    Concept("global", 1, _lex(r"any of it|anything|everything|it all|all of it|de tout|tout ca"), "", False),
    # 988 / AFSP "having no reason to live"; hopelessness about a future with oneself.
    Concept(
        "hopeless",
        1,
        _lex(
            r"no point|what's the point|(?:not )?(?:much|any) point|(?:don't|can't) see (?:the point|why|a reason)|why (?:i )?bother|no reason|"
            r"only reason|nothing left|never (?:going to )?(?:change|get better)|(?:nothing|it) (?:is |will )?(?:ever )?(?:going to|"
            r"won't|isn't going to|will) (?:ever )?(?:change|get better)|done fighting|no fight left|(?:tired|sick) of (?:everything|"
            r"living|life|it all|trying|being alive)|given up|give up on (?:life|everything|myself)|hopeless|"
            r"a quoi bon|aucune raison|plus (?:de|aucune) raison|seule (?:chose|raison) qui|me battre|rien ne va|"
            r"ne sert a rien|plus d'interet|fatigue\w* de (?:vivre|tout)|retient ici|me retient|plus d'espoir|"
            r"sans espoir|s'arranger"
        ),
        "hopeless",
        True,
    ),
    # Hopelessness about a future with oneself in it.
    Concept(
        "future",
        2,
        _lex(
            r"(?:no|see no|can't see a|can't picture a|can't imagine a|don't see a) future|"
            r"(?:any|no|a) way (?:this|it|things) (?:ends|turns out|works out) (?:well|ok|okay)|"
            r"future (?:with|that has|"
            r"that includes|for) me|pas d'avenir|(?:imaginer|vois pas|voir) (?:un|d') ?avenir|aucun avenir"
        ),
        "hopeless",
        True,
    ),
    # 988 / AFSP "having no reason to live": having given up the fight for one's life.
    Concept(
        "given_up",
        2,
        _lex(
            r"done fighting|no fight left|can't fight (?:it )?(?:anymore|any more)|given up on (?:life|myself|everything)|"
            r"(?:tired|sick) of (?:living|being alive)|plus (?:la force|envie) de (?:me battre|lutter|vivre)|"
            r"fatigue\w* (?:de vivre|de lutter|d'etre en vie)|j'abandonne tout|baiss\w* les bras"
        ),
        "hopeless",
        True,
    ),
    # One's own self, which hopelessness about one's life is about ("no future for me").
    Concept("self", 1, _lex(r"for me|in me|left in me|myself|je|j'ai|j'\w+|pour moi|en moi"), "", False),
    # 988 "talking about not being around"; finality and timing cues.
    Concept(
        "final",
        2,
        _lex(
            r"for good|forever|for ever|permanently|last (?:message|goodbye)|tonight's the night|"
            r"(?:is|it's) the (?:day|night)|this time next (?:week|month|year)|by next (?:week|month)|"
            r"won't need (?:it|them|any|anything)|(?:for )?much longer|(?:plus|tres|bien) longtemps|in case$|"
            r"for one thing|one thing only|only need it for|"
            r"pour de bon|pour toujours|a jamais|dernier message|derniere fois|a la meme heure|plus besoin|"
            r"n'en aurai plus besoin|ce sera"
        ),
        "finality_hint",
        False,
    ),
    # C-SSRS item 5 (plan): a decision or date whose object is unnamed.
    Concept(
        "plan",
        2,
        _lex(
            r"made up my mind|my mind is made up|(?:picked|chosen|set|chose) (?:a|the) (?:date|day|time)|"
            r"(?:everything's|it's all|everything is) (?:arranged|sorted|ready|planned)|i've decided(?= ,|$)|"
            r"i know (?:what|how) i'm going to do|waiting for the right (?:moment|time|day)|j'attends le bon moment|"
            r"c'est decide(?= ,|$)|j'ai decide(?= ,|$)|la date est (?:choisie|fixee)|"
            r"tout est (?:pret|prevu|organise)|j'ai choisi (?:la|le) (?:date|jour)"
        ),
        "finality_hint",
        True,
    ),
    # A time: raises a plan or a finality cue.
    Concept("time", 1, re.compile(r"\b" + _T + r"\b"), "", False),
    # AFSP "saying goodbye".
    Concept(
        "farewell",
        1,
        _lex(
            r"(?:just )?so (?:he|she|you|they) knows?|goodbyes?|good-bye|bye|take care of (?:yourself|them|mum|mom)|au revoir"
        ),
        "goodbye_hint",
        True,
    ),
    # The definitive farewell ("adieu", "farewell") and the apology for everything.
    Concept(
        "farewell_final",
        2,
        _lex(r"farewell|adieu|sorry for everything|sorry for (?:it all|all of it)|pardon pour tout|desole pour tout"),
        "goodbye_hint",
        True,
    ),
    Concept(
        "gratitude", 1, _lex(r"thanks for everything|thank you for everything|merci pour tout|merci de tout"), "", False
    ),
    # AFSP "giving away prized possessions": the possessions.
    Concept(
        "possessions",
        1,
        _lex(
            r"my (?:guitar|books|watch|jewel\w*|games|records|collection|cat|dog)|(?:his|her) (?:\w+ )?(?:stuff|things)|"
            r"mes (?:bijoux|livres|jeux)|mon (?:chat|chien|velo)|ma (?:guitare|montre|collection)|ses affaires"
        ),
        "",
        False,
    ),
    # All of one's belongings, not one thing.
    Concept(
        "belongings",
        2,
        _lex(r"my (?:stuff|things|belongings|possessions)|mes (?:affaires|choses)"),
        "",
        False,
    ),
    # AFSP "giving away prized possessions"; C-SSRS item 6 (preparatory behaviour).
    Concept(
        "giving",
        1,
        _lex(
            r"giv\w* away|gave (?:away|my|him my|her my)|giving (?:my|him my|her my|away)|hand\w* out (?:all )?my|"
            r"donne\w* (?:toutes |tous )?(?:mes|mon|ma|ses|son|sa)|distribu\w* (?:mes|mon|ma|ses)|legu\w*"
        ),
        "preparation",
        True,
    ),
    # C-SSRS item 6: putting affairs in order.
    Concept(
        "affairs",
        2,
        _lex(
            r"loose ends|paid off (?:all )?my debts|settled my debts|regle\w* mes dettes|"
            r"(?:no one's|nobody's|no one is|nobody is) stuck with|aucun souci a personne|ne laisser aucun|"
            r"made a list|a list of who|range\w* (?:toutes |tous )?mes affaires|(?:tidied|sorted) (?:up |out )?(?:all )?my (?:things|stuff)|affairs in order|my will|passwords|bank details|who gets|just in case|mess to deal with|"
            r"after i'm gone|sort(?:ed|ing) (?:out )?everything|mes affaires en ordre|testament|mots de passe|en ordre"
        ),
        "preparation",
        True,
    ),
    # C-SSRS item 6: a note written and left.
    Concept(
        "note",
        2,
        _lex(
            r"wrote (?:a|my|the) (?:note|letter|letters)|wrote (?:letters|notes) (?:to|for)|written (?:a|my) (?:note|letter)|left a (?:note|letter)|"
            r"letters? for my|ecrit (?:une|ma|des) lettres?|lettre pour (?:ma|mes|mon)"
        ),
        "preparation",
        True,
    ),
    Concept(
        "left",
        1,
        _lex(
            r"tore it up|ripped it up|deleted it|dechire\w*|left it|hid\w*|hidden|under my pillow|on the table|sur la table|laisse\w*|cache\w*"
        ),
        "",
        False,
    ),
    # 988 "looking for a way to kill oneself": means.
    Concept(
        "means",
        1,
        _lex(
            r"pills?|tablets?|paracetamol|tylenol|ibuprofen|aspirin|insulin|antihistamines?|sleeping (?:pills|tablets)|"
            r"vodka|alcohol|rope|noose|hang\w*|guns?|firearm|bullets?|shotgun|bridges?|jump\w*|fall|falls|height|"
            r"storeys?|stories|floors?|roof|ledge|cliff|bleed\w*|wrists?|razors?|blades?|drown\w*|noie\w*|noy\w*|carbon monoxide|"
            r"exhaust|train|tracks|poison\w*|bleach|somniferes?|cachets?|comprimes?|medicaments?|doliprane|corde|"
            r"pendre|pendaison|armes?|fusil|pont|sauter|saut|etages?|hauteur|noyer|veines|poignets?|lame|train"
        ),
        "means",
        True,
    ),
    # C-SSRS item 3 (method): an overdose names the act, not only a means.
    Concept("overdose", 2, _lex(r"overdos\w*|od|surdose|overdose"), "means", True),
    # Contemplating a means held ("looking at the pills and wondering"; 988 "looking for a way").
    Concept(
        "contemplate",
        2,
        _lex(
            r"(?:keep |been |kept )?(?:looking|staring) at|wondering|(?:je )?(?:regarde|fixe)\w*|en me disant|"
            r"ce serait (?:simple|facile|rapide)|it would be (?:so )?(?:easy|simple|quick)"
        ),
        "",
        False,
    ),
    # Two substances together (the potentiation a means question asks about).
    Concept(
        "mix",
        1,
        _lex(
            r"mix\w*|combin\w*|melang\w*|(?:with|and|avec|et) (?:de l'|du |my |mes )?(?:alcohol|alcool|vodka|wine|beer|pills|cachets|vin)"
        ),
        "",
        False,
    ),
    # C-SSRS item 3 (method): questions of lethality.
    Concept(
        "lethal",
        2,
        _lex(
            r"painless|fatal|lethal|deadly|survive|how high|how deep|quelle profondeur|how many (?:storeys|floors|stories)|combien d.etages|to die|bleed out|not wake up|no nets|no railings|unguarded|"
            r"kill (?:you|a person|someone)|quickest|fastest way|sans douleur|mortel\w*|letale?|survivre|pour mourir|"
            r"ne pas se reveiller|sans filet|le plus rapide"
        ),
        "means",
        False,
    ),
    Concept(
        "lethal_weak",
        1,
        _lex(
            r"actually work|really work|(?:would|does|will) (?:it|that) work|enough|how (?:many|much|long|far)|what happens if|does it hurt|"
            r"would it hurt|hurt|[0-9]{2,}|ca marche|marche vraiment|suffit|suffisant|combien|fait mal|hauteur"
        ),
        "",
        False,
    ),
    Concept(
        "question",
        1,
        re.compile(
            r"^(?:(?:so|and|but|ok|hey|honestly|seriously|just|quick question|et|mais|alors|bon) )?(?:does|do|did|would|will|"
            r"is|are|can|could|how|what|which|where|wat|est-ce|combien|quel\w*|de quelle|faut-il|ca fait|on peut|peut-on)\b"
        ),
        "",
        False,
    ),
    Concept(
        "acquire",
        1,
        _lex(
            r"bought|buy\w*|got hold of|pick(?:ed|ing)? up|get(?:ting)? (?:a|my|hold)|order\w*|saved up|stockpil\w*|"
            r"putting aside|put aside|hoard\w*|achete\w*|procure\w*|mis de cote|garde\w* de cote"
        ),
        "",
        False,
    ),
    # Stanley & Brown; Joint Commission SEA 56: refusal of help.
    Concept(
        "refusal",
        2,
        _lex(
            r"no point (?:calling|ringing|talking|telling|asking)|(?:nobody|no one|noone) can help|don't send (?:me )?"
            r"(?:any )?(?:hotline|numbers|helplines?|help)|don't want (?:any )?help|won't call|not calling|"
            r"personne ne peut (?:m'aider|rien)|sert a rien d'appeler|pas besoin d'aide|n'appellerai pas"
        ),
        "refuses_help",
        True,
    ),
    # Secrecy (same sources).
    Concept(
        "secrecy",
        2,
        _lex(
            r"don't tell|do not tell|not tell anyone|keep (?:this|it) (?:between us|secret|to yourself)|between you and me|"
            r"n'en parle\w* a personne|ne (?:le |lui |leur )?(?:dites|dis) (?:rien|pas)|ne dis rien|garde\w* ca pour"
        ),
        "secrecy",
        True,
    ),
    # Hedged or conditional safety (same sources).
    Concept(
        "hedge",
        1,
        _lex(r"probably|i guess|not sure|i don't know|i suppose|je (?:ne )?sais pas|j'imagine|sans doute|pas sur"),
        "",
        False,
    ),
    Concept(
        "doubt",
        2,
        _lex(
            r"can't (?:promise|guarantee|say for sure)|no promises|can't be sure|won't promise|"
            r"(?:peux|peut) (?:rien|pas) (?:promettre|garantir)|sais pas si je (?:vais|serai)|pas sur de tenir"
        ),
        "hedge",
        True,
    ),
    Concept(
        "safe",
        1,
        _lex(r"fine|ok|okay|alright|all right|safe|be good|aller|tenir|en securite|rien faire|do anything"),
        "",
        False,
    ),
    # NICE NG225: command hallucinations.
    Concept("voice", 1, _lex(r"voices?|voix|whisper\w*|hear (?:someone|something)"), "command_voices", False),
    Concept(
        "command",
        1,
        _lex(
            r"tell\w* me (?:to|i|that i)|told me (?:to|i)|say\w* i (?:should|need|must)|me dis\w* de|me dit de|ordonne\w*|commande\w*"
        ),
        "",
        False,
    ),
    Concept(
        "harm",
        1,
        _lex(r"hurt|harm|kill|end it|jump|die|punish\w*|cut|mal|sauter|tuer|mourir|punir|couper|en finir|do it"),
        "",
        False,
    ),
)

# 988 / AFSP / 3114 guidance for the people around someone at risk: a helper names the
# other person and says they worry.
_OTHER = _lex(
    r"my (?:son|daughter|child|kid|kids|teen\w*|boy|girl|husband|wife|partner|boyfriend|girlfriend|friend|best friend|"
    r"mate|best mate|brother|sister|mum|mom|dad|father|mother|student|flatmate|roommate)|a friend|"
    r"mon (?:fils|mari|copain|ami|frere|pere|ado|enfant|compagnon)|ma (?:fille|femme|copine|amie|soeur|mere|compagne)"
)
_WORRY = _lex(
    r"worried|worry|scared|panick\w*|panique\w*|frightened|afraid|concerned|terrified|what (?:do|should|can) i do|how (?:do|can) i help|"
    r"should i|not answering|won't answer|can't reach|ne repond (?:plus|pas)|inquiet\w*|peur|que (?:dois|faire)|je fais quoi|comment l'aider|angoiss\w*"
)
_HELPER_SIGNS = frozenset(
    {"death", "passive", "burden", "farewell", "farewell_final", "giving", "harm", "hopeless", "note", "final"}
)
_THIRD = _lex(r"he|she|his|her|him|he's|she's|il|elle|lui|ses|son|sa")

# Discounts: the sentence explains the words.
_HABIT = _lex(
    r"quit\w*|stop smoking|smoke-free|cut(?:ting)? down|patch(?:es)?|vap\w*|cigarettes?|smok\w*|run|running|runs|"
    r"marathon|race|gym|diet|exercise|training|workout|sober|drinking|alcohol|habit|junk food|sugar|"
    r"arret\w* de fumer|arreter|arrete|fumer|clopes?|tabac|courir|sport|regime|salle|patchs|malbouffe"
)
_ORDINARY_GIVING = _lex(
    r"old|spare|upgrade\w*|new one|outgrown|replaced|vieux|vieil|vieille|ancien\w*|christmas|birthday|wedding|secret santa|gifts?|presents?|noel|anniversaire|cadeaux?|charity|donat\w*|thrift|recycl\w*|vinted|ebay|emmaus|association|vide-grenier"
)
# A note with an ordinary addressee or purpose.
_ORDINARY_NOTE = _lex(
    r"(?:to|for) (?:my |the )?(?:boss|teacher|landlord|neighbou?r|colleague|manager|milkman|flatmate|roommate|school|"
    r"office|team|class)|reminder|to remind|shopping|grocery|thank-you|thank you (?:note|card)|"
    r"(?:a|au|pour) (?:mon|ma|le|la) (?:patron|chef|prof|voisin\w*|proprio|collegue)|liste de courses"
)
# An ordinary occasion explains a farewell, a date, a plan or a "last" ("my last day at that
# company", "a date for the wedding"); a limited scope explains hopelessness ("no future in
# this job").
_ORDINARY_OCCASION = _lex(
    r"colleagues|coworkers|co-workers|company|job|school|class|team|neighbou?rs|holidays?|vacation|trip|party|wedding|"
    r"birthday|appointment|interview|exams?|moving|concert|meeting|flight|match|game|leaving do|retirement|"
    r"collegues|boulot|travail|ecole|equipe|voisins|vacances|voyage|fete|mariage|anniversaire|rendez-vous|examen|"
    r"demenage\w*|entretien|concert|reunion|match"
)
_OCCASION_EXPLAINS = frozenset({"farewell", "final", "time", "plan", "gratitude"})
_ORDINARY_TRAP = _lex(
    r"traffic|queue|lift|elevator|meeting|office|at home|at work|snow|airport|train|rut|routine|plateau|bouchons|"
    r"embouteillage|bureau|reunion|a la maison|neige|aeroport|au travail|ascenseur"
)
_LIMITED_SCOPE = _lex(
    r"(?:in|at|with) (?:this|that|my|the) (?:job|company|relationship|team|town|city|career|place|school|club)|"
    r"dans (?:ce|cette|mon|ma|la|le) (?:boulot|travail|job|entreprise|relation|ville|equipe|poste|ecole|club)"
)
_HABIT_EXPLAINS = frozenset({"final", "plan", "time", "giving", "affairs", "death", "exit", "doubt", "hedge", "safe"})
_HISTORY = _lex(
    r"(?:years?|months?|weeks?) ago|last (?:year|month|summer|winter|spring|autumn|fall)|in (?:19|20)[0-9]{2}|"
    r"when i was|history of|survived|recovered|after my|since my|back in|in my (?:teens|twenties|thirties|forties)|"
    r"il y a (?:[a-z0-9]+ ){1,2}(?:ans|an|mois|semaines)|l'an dernier|l'annee derniere|en (?:19|20)[0-9]{2}|"
    r"quand j'etais|antecedents?|apres mon|apres ma"
)
_MEDICAL = _lex(
    r"doctor|gp|prescri\w*|for my (?:cough|pain|headache|back|cold|flu|allergies|sleep|asthma)|medecin|ordonnance|"
    r"contre (?:la|le|les|mes|mon|ma) \w+|pharmac\w*"
)
_OTHER_DEATH = _lex(
    r"(?:died|passed away|passed|was killed|took (?:his|her|their) own life|killed (?:himself|herself)) |"
    r"passed|put down|funeral of|death of|la mort de|mort de (?:mon|ma|mes)|(?:est|sont) (?:mort|morte|morts|decede\w*)|decede\w*|deuil|his death|"
    r"her death|died"
)
_FICTION = _lex(
    r"film|movie|book|novel|thriller|story|series|show|episode|character|the news|news about|article|documentary|"
    r"podcast|video game|song|lyrics|polar|roman|serie|personnage|les infos|journal|detective|enqueteur"
)
_IDIOM = _lex(
    r"(?:be|is|was|'ll be) the (?:end|death) of me|finish(?:es|ed)? me off|(?:will|gonna|going to|'ll) kill me|"
    r"shoot me|dead on my feet|dying (?:to|for)|to death|if (?:i|i'm) (?:hear|see|have to|get|eat)|one more time|"
    r"rather die than|plutot mourir que|xidiom|va m'achever|va me tuer|cru mourir|mort de rire|crever de|si j'entends|encore une fois"
)
_DENIAL = _lex(
    r"(?:i'm|i am|i'd|i would|i will|i'll) (?:not|never) (?:suicidal|going to (?:hurt|kill|do anything)|hurt myself|"
    r"kill myself|do anything)|(?:not|never) (?:suicidal|going to hurt myself)|je ne (?:vais|suis) pas (?:me|suicidaire)|"
    r"je ne ferai rien"
)
_EXPLAINED_BY_PAST = frozenset({"death", "means", "passive", "life", "given_up"})
# Someone else's state, told in the past ("my grandfather was tired of living at the end").
_OTHER_PAST = _lex(
    r"(?:grand-pere|grand-mere|grandpa|grandma|grandfather|grandmother|granddad|uncle|aunt|oncle|tante|he|she|il|elle) "
    r"(?:was|were|had|etait|avait)"
)


@dataclass(frozen=True)
class Evidence:
    """The evidence of one sentence: its score, the concepts that made it, and what it means."""

    score: int
    concepts: tuple[str, ...]
    category: Category
    tier: Tier
    family: str
    weight: int


# The words of every sign's lexicon (and a hedge's, a voice's): a sentence with none of
# them holds no sign, so no lexicon is searched (most of what a coach hears).
_SIGN_WORDS: frozenset[str] = frozenset().union(
    *(c.gate or () for c in CONCEPTS if c.sign or c.name in ("hedge", "voice"))
)
_GATELESS_SIGN = any(c.gate is None for c in CONCEPTS if c.sign or c.name in ("hedge", "voice"))


def _concepts(sentence: str, words: frozenset[str]) -> dict[str, int]:
    """Each concept found in the sentence, with the number of distinct words that carry it."""
    found: dict[str, int] = {}
    for concept in CONCEPTS:
        if concept.gate is not None and concept.gate.isdisjoint(words):
            continue
        if concept.pattern.search(sentence) is None:
            continue
        found[concept.name] = len({m.group(0) for m in concept.pattern.finditer(sentence)})
    return found


_BY_NAME = {c.name: c for c in CONCEPTS}
_FAMILY_ORDER = ("means", "burden", "future", "exit", "passive", "refusal", "doubt", "plan", "note", "affairs")


def _discount(sentence: str, found: dict[str, int]) -> dict[str, int]:
    if _FICTION.search(sentence):
        return {}
    drop: set[str] = set()
    if _IDIOM.search(sentence):
        drop |= {"death", "means", "final", "harm", "lethal_weak"}
    if _HABIT.search(sentence):
        drop |= _HABIT_EXPLAINS
    # A named death is never explained by an occasion ("hope the plane goes down on my flight").
    if _ORDINARY_OCCASION.search(sentence) and not {"death", "passive", "euphemism"} & found.keys():
        drop |= _OCCASION_EXPLAINS
    if _ORDINARY_TRAP.search(sentence):
        drop |= {"stuck", "trapped"}
    if _LIMITED_SCOPE.search(sentence):
        drop |= {"future", "hopeless", "trapped", "exit", "self"}
    if _ORDINARY_GIVING.search(sentence):
        drop |= {"giving", "possessions", "belongings", "affairs"}
    if _ORDINARY_NOTE.search(sentence):
        drop |= {"note", "left"}
    if _HISTORY.search(sentence) or _OTHER_DEATH.search(sentence) or _OTHER_PAST.search(sentence):
        drop |= _EXPLAINED_BY_PAST
    if _MEDICAL.search(sentence) and "lethal" not in found:
        drop |= {"means", "lethal_weak"}
    return {k: v for k, v in found.items() if k not in drop}


_REPEATS = frozenset(
    {"burden", "affairs", "refusal", "hopeless", "plan", "pain"}
)  # said twice in other words: one more
_FRAMES = {  # a concept that counts only beside one of these (a wish for one's death, a time for a plan)
    "wish": {"death", "passive", "absence", "final"},
    "relief": {"absence", "death", "passive", "euphemism", "burden"},
    "question": {"lethal", "overdose"},
    "contemplate": {"means"},
    "thoughts": {"death", "passive", "euphemism"},
    "ease": {"death", "passive", "affairs", "plan"},
    "life": {"hopeless", "pain", "given_up", "absence", "neg_wish", "death"},
    "neg_wish": {"life", "death"},
    "left": {"note"},
    "belongings": {"giving", "final", "affairs"},
    "time": {"plan", "final", "farewell", "farewell_final", "giving", "acquire", "note", "death", "passive", "burden"},
    "self": {"given_up", "future", "hopeless"},
    "safe": {"hedge", "doubt"},
    "hedge": {"safe", "doubt"},
    "global": {"hopeless", "pain", "given_up", "pain_strong"},
    "resigned": {"burden", "hopeless"},
    # "anymore" adds to one's absence, not to exhaustion ("I can't take it anymore, this printer").
    "absence": {"burden", "relief", "death", "passive", "wish", "farewell", "final", "euphemism", "life"},
    "gratitude": {"farewell", "farewell_final", "final"},
    "possessions": {"giving", "final"},
}


_ABOUT_MEANS = frozenset({"lethal", "lethal_weak", "question", "acquire", "mix", "contemplate"})
_VOICES = frozenset({"voice", "command", "harm"})


def _score(found: dict[str, int]) -> int:
    counted = {n for n in found if n not in _FRAMES or _FRAMES[n] & found.keys()}
    # A lethality word only counts about a means; a voice only when it commands harm.
    if not {"means", "overdose"} & found.keys():
        counted -= _ABOUT_MEANS
    if not _VOICES <= found.keys():
        counted -= _VOICES
    score = sum(_BY_NAME[n].weight + (1 if found[n] > 1 and n in _REPEATS else 0) for n in counted)
    if "hopeless" in counted and {"death", "life"} & counted:
        score += 1  # 988 "no reason to live": hopelessness about one's own life
    return score


def assess_sentence(sentence: str, words: frozenset[str] | None = None) -> Evidence | None:
    """The evidence in one sentence of the tolerant form, or None when there is none.
    `words`: its rules.sentence_words(), when the caller has them."""
    words = sentence_words(sentence) if words is None else words
    if not _GATELESS_SIGN and _SIGN_WORDS.isdisjoint(words):
        return None
    found = _concepts(sentence, words)
    if (
        not any(_BY_NAME[n].sign for n in found)
        and not _VOICES <= found.keys()
        and not {"hedge", "safe"} <= found.keys()
    ):
        return None  # most sentences: no sign at all, so no discount need be read
    if _DENIAL.search(sentence):
        return None
    found = _discount(sentence, found)
    if not found:
        return None
    other = _OTHER.search(sentence) is not None
    if other and _WORRY.search(sentence) and _HELPER_SIGNS & found.keys():
        return Evidence(HIGH, tuple(found), "helper_concern", "high", "helper_worry", HIGH)
    if other and _THIRD.search(sentence) and _score(found) >= HIGH:
        return Evidence(_score(found), tuple(found), "helper_concern", "high", "helper_worry", HIGH)
    voices = _VOICES <= found.keys()
    hedged = {"hedge", "safe"} <= found.keys()  # a hedged statement of safety
    if not voices and not hedged and not any(_BY_NAME[n].sign for n in found):
        return None
    score = _score(found)
    family = next((_BY_NAME[n].family for n in _FAMILY_ORDER if n in found), "")
    if voices:
        family = "command_voices"
    elif not family and hedged:
        family = "hedge"
    if not family:
        family = next((_BY_NAME[n].family for n in found if _BY_NAME[n].sign), "")
    if score >= HIGH:
        return Evidence(score, tuple(found), "suicide_self_harm", "high", family, HIGH)
    means_question = bool({"means", "overdose"} & found.keys()) and (
        "question" in found or "lethal_weak" in found or "acquire" in found
    )
    if means_question:
        return Evidence(score, tuple(found), "suicide_self_harm", "low", "means", 2)
    # A weak signal needs a sign beyond one's own-death words (which the phrase rules read):
    # "I'm scared of dying young" is no sign.
    if score >= 2 and (hedged or any(_BY_NAME[n].sign and n != "death" for n in found)):
        return Evidence(score, tuple(found), "suicide_self_harm", "low", family, 1)
    return None


def sign_family(sentence: str, words: frozenset[str] | None = None) -> str:
    """The warning sign a sentence's words name (a concept family: burden, hedge, farewell...),
    after the discounts, or "" when they name none: what a weak learned signal (learned.py) is
    counted as, so that the same sign said in other words is counted once in a session."""
    words = sentence_words(sentence) if words is None else words
    found = _discount(sentence, _concepts(sentence, words))
    if _VOICES <= found.keys():
        return "command_voices"
    family = next((_BY_NAME[n].family for n in _FAMILY_ORDER if n in found), "")
    if not family and {"hedge", "safe"} <= found.keys():
        family = "hedge"
    return family or next((_BY_NAME[n].family for n in found if _BY_NAME[n].family), "")


_THIRD_SUBJECT = _lex(r"he|she|he's|she's|il|elle|il est|elle est")


def about_someone_else(sentence: str) -> bool:
    """A helper speaking of the person they worry about ("my son says he...", "I'm worried
    about my wife"): someone close named, and they are the subject or the worry; not "I gave
    my sister my keys and told her where everything is"."""
    return _OTHER.search(sentence) is not None and (
        _THIRD_SUBJECT.search(sentence) is not None or _WORRY.search(sentence) is not None
    )
