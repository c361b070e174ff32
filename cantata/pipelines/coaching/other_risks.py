"""Guard rules for the risks other than suicide: abuse, harm to others, a medical
emergency, restrictive eating, in English and French (signs.py holds suicide's).

Abuse and harm-to-others phrasings follow the warning signs the US National Domestic
Violence Hotline and the French 3919 publish (hitting, choking, threats to kill, control
of money and phone, fear of going home); medical emergencies are the ones every
emergency line lists (chest pain, not breathing, unconscious, overdose, seizure,
stroke); restrictive eating follows the SCOFF screener's items (Morgan et al. 1999,
BMJ) and NEDA's warning signs (self-induced vomiting, days without food, fear of food).
"""

from __future__ import annotations

from cantata.pipelines.coaching.rules import Rule, rule

_ME = r"(?:my|my own)"
_RELATION_EN = (
    r"(?:husband|wife|partner|boyfriend|girlfriend|dad|father|mum|mom|mother|stepdad|stepfather|stepmother|parents?|"
    r"brother|sister|uncle|boss|ex|fiance|fiancee|son|daughter|kids?|children|baby|neighbou?r|coworker|colleague|"
    r"roommate|flatmate|teacher)"
)
_PARTNER_EN = rf"(?:he|she|they|my {_RELATION_EN})"
_RELATION_FR_M = (
    r"(?:mari|copain|conjoint|compagnon|pere|beau-pere|frere|oncle|patron|ex|fiance|fils|voisin|collegue|bebe)"
)
_RELATION_FR_F = r"(?:femme|copine|conjointe|compagne|mere|belle-mere|soeur|patronne|fiancee|fille|voisine|collegue)"
_PARTNER_FR = rf"(?:il|elle|ils|mon {_RELATION_FR_M}|ma {_RELATION_FR_F})"

RULES: tuple[Rule, ...] = (
    # -- abuse -----------------------------------------------------------------------------
    rule(
        "en.abuse",
        "abuse",
        "high",
        rf"{_PARTNER_EN} (?:hits|hit|beats|beat|chokes|choked|kicks|kicked|slaps|slapped|punches|punched|rapes|raped|"
        r"strangles|strangled|threatens to kill|threatened to kill|locks|locked) me",
        r"(?:being|was|been|i'm|am) (?:sexually |physically |emotionally )?abused",
        r"abusive (?:partner|relationship|husband|wife|boyfriend|girlfriend|parents?|father|mother|home)",
        r"domestic (?:violence|abuse)",
        r"touched me (?:without|against)",
    ),
    rule(
        "en.abuse.fear",
        "abuse",
        "low",
        rf"(?:afraid|scared|terrified) (?:of my {_RELATION_EN}|to go home)",
        r"controls (?:my|all my) (?:money|phone)",
        escalates=False,
    ),
    rule(
        "fr.abuse",
        "abuse",
        "high",
        rf"{_PARTNER_FR} me (?:frappe|bat|battait|frappait|viole|violait|etrangle|menace de (?:me )?tuer)",
        rf"{_PARTNER_FR} m'a (?:frappee?|battue?|violee?|etranglee?)",
        r"je suis (?:battue?|violee?|maltraitee?)",
        r"violences? (?:conjugales?|familiales?)",
    ),
    rule(
        "fr.abuse.fear",
        "abuse",
        "low",
        rf"peur de (?:mon {_RELATION_FR_M}|ma {_RELATION_FR_F}|rentrer chez moi)",
        escalates=False,
    ),
    # -- harm to others ----------------------------------------------------------------------
    rule(
        "en.harm_others",
        "harm_to_others",
        "high",
        r"(?:want|going|gonna|plan(?:ning)?|ready) to (?:kill|hurt|stab|shoot|strangle|attack|beat up) "
        rf"(?:him|her|them|my {_RELATION_EN}|someone|somebody|people|everyone)",
        rf"(?:thoughts|urges?) (?:of|about) (?:hurting|killing) (?:him|her|them|my {_RELATION_EN}|someone|people)",
    ),
    rule(
        "en.harm_others.hyperbole",
        "harm_to_others",
        "low",
        r"i could (?:kill|strangle) (?:him|her|them)",
        escalates=False,
    ),
    rule(
        "fr.harm_others",
        "harm_to_others",
        "high",
        r"(?:envie de|vais|veux) (?:le|la|les) (?:tuer|buter|frapper|poignarder)",
        rf"(?:envie de|vais|veux) (?:tuer|frapper|poignarder) (?:quelqu'un|mon {_RELATION_FR_M}|ma {_RELATION_FR_F}|"
        r"mes enfants)",
        rf"faire du mal a (?:quelqu'un|mon {_RELATION_FR_M}|ma {_RELATION_FR_F}|mes enfants|lui|elle|eux)",
    ),
    rule(
        # Command hallucinations directed at others (NICE NG225): acute risk of violence.
        "en.harm_others.voices",
        "harm_to_others",
        "high",
        r"(?:voices?|someone|something)(?: in my head)? (?:tell|tells|telling|told|keep telling|keeps telling|say|says|"
        rf"saying|order|orders|want|wants) me to (?:hurt|kill|attack|stab|shoot|strangle) (?:him|her|them|people|"
        rf"someone|everyone|my {_RELATION_EN}|the baby|my baby)",
        r"(?:des |les )?voix (?:me disent|me dit|m'ordonnent|m'ordonne) de (?:le |la |les )?(?:tuer|frapper|"
        r"poignarder|faire du mal)",
        negatable=False,
    ),
    # -- medical emergency -------------------------------------------------------------------
    # Medical emergencies: a present, acute event. The same words about the past or tied to
    # a habit ("I had a heart attack in 2019", "I get chest pains when I smoke") are
    # lowered by _medical_context(), sentence by sentence.
    rule(
        "en.medical",
        "medical_emergency",
        "imminent",
        r"chest pains?",
        r"pain in my chest",
        r"(?:can't|cannot|can not) (?:breathe|catch my breath)",
        r"(?:i|i've|i have|i just) (?:took|taken|had) an overdose",
        r"(?:i|he|she|they|someone|my [a-z]+) (?:overdosed|is overdosing|are overdosing|took an overdose)",
        r"i'm overdosing",
        r"took (?:too many|a (?:bunch|handful) of|all (?:my|the|of my)|a whole (?:bottle|box|pack|packet) of) "
        r"(?:pills|tablets|meds|[a-z]+ pills|painkillers|paracetamol|sleeping pills)",
        r"swallowed (?:[a-z]+ )?(?:pills|tablets|bleach|a whole (?:bottle|box|pack))",
        r"unconscious",
        r"(?:he|she|they|someone|my [a-z]+) (?:is not|isn't|stopped|not) (?:breathing|waking up|responding)",
        r"(?:i'm|i am|i think i'm|i think i am|think i'm|he's|she's|he is|she is|they're|is) having a "
        r"(?:seizure|stroke|heart attack)",
        r"(?:just|is|he|she) (?:had|having) a (?:seizure|stroke|heart attack)",
        r"bleeding (?:a lot|heavily|badly)",
        r"won't stop bleeding",
        negatable=False,
    ),
    rule(
        "fr.medical",
        "medical_emergency",
        "imminent",
        r"(?:douleurs?|mal) (?:a|dans) la poitrine",
        r"(?:je n'arrive|j'arrive|je ne peux|je peux) (?:plus|pas) (?:a )?respirer",
        r"(?:j'ai|je viens de|il a|elle a) (?:fait|faire) une (?:surdose|overdose)",
        r"j'ai (?:pris|avale) (?:tous mes|toute la boite de|trop de|une boite de|plein de|toute la plaquette de) "
        r"(?:medicaments|cachets|comprimes|pilules|somniferes|doliprane)",
        r"(?:inconscient|inconsciente|ne respire plus|ne se reveille pas|ne repond plus)",
        r"(?:je fais|je suis en train de faire|il fait|elle fait|il fait une|elle fait une) (?:une )?(?:crise "
        r"d'epilepsie|convulsions|avc|crise cardiaque|infarctus)",
        r"(?:vient de faire|viens de faire) (?:une crise d'epilepsie|un avc|une crise cardiaque|un infarctus)",
        r"je saigne (?:beaucoup|enormement)",
        negatable=False,
    ),
    # -- restrictive eating -------------------------------------------------------------------
    rule(
        "en.eating.severe",
        "restrictive_eating",
        "high",
        r"starv(?:e|ing) myself",
        r"make myself (?:throw up|vomit|sick)",
        r"making myself (?:throw up|vomit|sick)",
        r"(?:purge|purging|purged) (?:after|every)",
        r"haven'?t eaten (?:in|for) (?:\d+|two|three|four|five|several|a few) days",
        r"not (?:allowed|allowing myself) to eat",
        r"punish(?:ing)? myself (?:by not eating|for eating)",
    ),
    rule(
        "en.eating",
        "restrictive_eating",
        "low",
        r"skip(?:ping|ped)? meals",
        r"(?:under|less than|fewer than|only) \d{3} (?:calories|kcal)",
        r"(?:only|barely) (?:eat|ate|eating) (?:once a day|one meal)",
        r"feel (?:fat|disgusting|gross) (?:after|when) (?:i )?eat",
        r"(?:afraid|scared|terrified) of (?:eating|food|gaining weight)",
    ),
    rule(
        "fr.eating.severe",
        "restrictive_eating",
        "high",
        r"(?:je me fais|me faire) vomir",
        r"je m'affame",
        r"(?:pas|rien) mange depuis (?:\d+|deux|trois|quatre|cinq|plusieurs) jours",
        r"je ne mange (?:plus|presque plus|plus rien|rien)",
        r"je n'ai pas le droit de manger",
    ),
    rule(
        "fr.eating",
        "restrictive_eating",
        "low",
        r"(?:je saute|sauter) (?:des|les|mes) repas",
        r"moins de \d{3} (?:calories|kcal)",
        r"peur de (?:manger|grossir|prendre du poids)",
        r"(?:je me sens|me sentir) (?:grosse?|degoutante?) (?:apres|quand je) mange",
    ),
)
