"""Suicide warning signs, explicit and indirect, in English and French, as guard rules.

Each family names the sign and the public source that lists it:

- C-SSRS: the Columbia Suicide Severity Rating Scale screener (Posner et al. 2011, Am J
  Psychiatry 168:1266), items 1 wish to be dead, 2 non-specific active thoughts, 3
  method, 4 intent, 5 plan, 6 preparatory behaviour (collected pills, wrote a note, gave
  away valuables, held the means).
- 988: the 988 Suicide & Crisis Lifeline's warning signs (988lifeline.org): talking about
  wanting to die, being a burden, feeling trapped or in unbearable pain, having no reason
  to live; looking for a way (searching online, buying a gun); withdrawing; more alcohol
  or drugs.
- AFSP: the American Foundation for Suicide Prevention's warning signs (afsp.org): the
  same talk, plus saying goodbye, giving away prized possessions, isolating.
- Finality and timing: "talk of not being around" (988, AFSP); research means questions
  (doses, heights, weapons) are the "looking for a way" sign asked of a chatbot.
- Refusal of help, secrecy and hedged safety statements are what clinicians are trained
  to hear as risk, not reassurance (Stanley & Brown's Safety Planning Intervention, 2012;
  the Joint Commission's 2016 Sentinel Event Alert 56 on suicide screening).
- Command hallucinations (voices telling the person to harm themselves) are an acute
  risk factor in every psychiatric risk assessment (e.g. NICE NG225, 2022).
- Helpers: a person worried about someone else; the 988 Lifeline and the French 3114
  both answer the people around someone at risk.

Two layers. The phrase families (_PHRASES) list ways of saying each sign. The sign grammar
(_GRAMMAR, at the end) encodes the same signs as small vocabularies that combine: a
first-person frame (wish, thought, intent, doubt, ease, relief) x one's own death, ending,
absence or a method, x a future time where the sign needs one; and co-occurrences a
clinician hears as one sign (a means and how easy "it" would be; hedged safety tied to a
means). tests/data/coaching/safety/ holds the labelled set that measures them; every
fresh batch written after the rules has found wordings they lack (see its headers), so
the held-out figures, not the development ones, are the honest measure.
"""

from __future__ import annotations

from typing import Final

from cantata.pipelines.coaching.rules import END, Rule, rule, sign, vocabulary_gate
from cantata.pipelines.coaching.safety import Category

S: Final[Category] = "suicide_self_harm"
H: Final[Category] = "helper_concern"

# English building blocks (tolerant() form: lower case, no accents, apostrophes restored).
_ANYMORE = r"(?: anymore| any longer| any more)?"
_I_AM = r"(?:i'm|i am|i feel|i've been|i have been|i get|i got|i was|feeling|been)"
_THIRD = (
    r"(?:my (?:[a-z]+ )?(?:son|daughter|kid|child|boy|girl|teen|teenager|friend|partner|husband|wife|boyfriend|"
    r"girlfriend|brother|sister|mum|mom|mother|dad|father|student|cousin|nephew|niece|roommate|flatmate|colleague|"
    r"coworker|grandson|granddaughter)|he|she|they)"
)
_SELF3 = r"(?:himself|herself|themselves|themself)"
_POSS3 = r"(?:his|her|their|my [a-z]+'s|my [a-z]+ [a-z]+'s)"
_SAYS = (
    r"(?:says|said|keeps saying|kept saying|told me|tells me|texted|wrote|posted|mentioned|talks about|talked about|"
    r"has been talking about|is talking about|was talking about|(?:told|tells|texted|wrote to) (?:his|her|their|my|a) "
    r"[a-z]+)"
)
_PILLS = (
    r"(?:pills|tablets|meds|medication|medicine|sleeping pills|painkillers|paracetamol|tylenol|acetaminophen|"
    r"ibuprofen|insulin|antidepressants|xanax|oxy|opioids)"
)

# A wish, intent or thought (C-SSRS items 1, 2, 4) ...
_DESIRE = (
    r"(?:want|wants|wanted|wanting|wanna|wish|wishes|wished|wishing|hope|hopes|hoping|pray|prays|praying|"
    r"would like|'d like|ready|need|needs|trying|plan|plans|planning|long|longing|dream of|dreaming of|"
    r"feel like|felt like|feels like|so i can|so that i can|so i could|so that i could|in order|think about|"
    r"thinking about|thought about|enough to|"
    r"thinking of|think of|thoughts of|thoughts about|keep thinking about|considering|contemplating|tempted|urge|urges)"
)
# ... of dying by one's own hand (what the wish is of).
_DEATH_ACT = (
    r"(?:die|dying|be dead|being dead|end it|end it all|ending it|ending it all|end things|ending things|"
    r"end my life|ending my life|end my own life|kill myself|killing myself|take my life|taking my life|"
    r"take my own life|not wake up|never wake up|not waking up|never waking up|not be here|not being here|"
    r"not be alive|not being alive|not exist|not existing|stop existing|disappear forever|sleep forever|"
    r"go to sleep forever|not be around|be gone for good|end everything|ending everything|suicide)"
)

# French building blocks.
_TIERS_FR = (
    r"(?:mon (?:fils|ami|copain|mari|frere|pere|enfant|ado|neveu|cousin|collegue|eleve|petit-fils|compagnon|conjoint)|"
    r"ma (?:fille|amie|copine|femme|soeur|mere|niece|cousine|collegue|eleve|petite-fille|compagne|conjointe)|il|elle)"
)
_MEDS_FR = r"(?:medicaments|cachets|comprimes|pilules|somniferes|anxiolytiques|antidepresseurs|doliprane|paracetamol)"

_PHRASES: tuple[Rule, ...] = (
    # == English, first person ========================================================
    # C-SSRS 2, 988 "talking about wanting to die or to kill themselves": explicit.
    rule(
        "en.suicide.explicit",
        S,
        "high",
        r"kill(?:ing|ed)? myself",
        r"end(?:ing)? (?:my (?:own )?life|it all|my own life)",
        r"take my (?:own )?life",
        r"(?:want|wanted|ready|plan|planning|need|trying|going) to die",
        r"(?:want|wanted) to (?:be dead|not exist|not be alive|stop existing|stop living)",
        r"commit(?:ting)? suicide",
        rf"{_I_AM} (?:[a-z]+ )?suicidal",
        r"^suicidal",
        r"suicid(?:e|al) (?:thoughts|ideation|feelings|urges|plan|note|attempt)",
        r"(?:thoughts|thinking|thought|think) (?:of|about) (?:suicide|killing myself|ending my life|ending it all|"
        r"taking my (?:own )?life|not being alive)",
        r"(?:attempt|attempted|tried|try) (?:to )?(?:suicide|kill myself|end my life|end it|hang myself|overdose)",
    ),
    # 988 / NICE NG225: self-harm. Not an injury ("hurt myself at the gym").
    rule(
        "en.self_harm",
        S,
        "high",
        r"(?:hurt|harm|hurting|harming|cut|cutting|burn|burning|hit|hitting|punch|punching|scratch|scratching|"
        r"starve|starving) myself(?! (?:at|in|during|while|lifting|running|playing|on|skiing|falling|training|cooking))",
        r"self[- ]?harm(?:ing|ed)?",
        r"(?:started|start|been|keep|back to) cutting(?: again)?",
        r"cutting again",
        r"relapsed (?:on|into) (?:self[- ]?harm|cutting)",
    ),
    # C-SSRS 1, 2, 4 as a grammar: any wish, thought or intent (_DESIRE), then, within two
    # words, any way of saying one's own death (_DEATH_ACT): "some part of me wants to
    # die", "i feel like ending it", "I keep thinking about dying", "so I can end it".
    rule(
        "en.suicide.desire",
        S,
        "high",
        rf"{_DESIRE} (?:to |of |about )?(?:[a-z'-]+ ){{0,2}}{_DEATH_ACT}(?: for good| forever| once and for all)?{END}",
        rf"{_DESIRE} (?:to |of |about )?(?:[a-z'-]+ ){{0,2}}(?:die|dying|suicide|killing myself|ending my life)",
        r"(?:if i died|if i was dead|if i were dead|if i (?:wasn't|weren't) (?:here|around|alive)|if i was gone|"
        r"if i were gone)(?: [a-z'-]+){0,6} (?:relieved|better|easier|happier|glad|fine|at peace|a relief)",
        r"(?:happier|better off|easier|relieved|better) (?:for everyone )?if i (?:was|were) (?:dead|gone)",
        r"(?:happier|better off|easier|relieved|better) (?:for everyone )?if i died",
    ),
    # C-SSRS 1 without a verb of wishing: one's own death spoken of as a relief, a peace, a
    # way out ("death sounds peaceful", "dying feels like the only way out"); not another's
    # ("her death was peaceful").
    rule(
        "en.suicide.death_as_relief",
        S,
        "high",
        r"(?<!his )(?<!her )(?<!'s )(?<!the )(?<!their )(?<!a )(?:death|dying|being dead|my funeral|my own funeral|"
        r"not waking up|never waking up) (?:[a-z'-]+ ){0,5}(?:peaceful|a relief|relieved|relief|the only way out|"
        r"only way out|the only option|the answer|appealing|tempting|nice|good|welcome|inviting|a mercy|better)",
        r"(?:disappointed|sad|upset|annoyed|angry) (?:that )?i (?:woke up|wake up|am still alive|'m still alive|"
        r"survived|didn't die)",
        family="wish_dead",
        negatable=False,
    ),
    # C-SSRS 1: wish to be dead, or to go to sleep and not wake up. Phrases that carry
    # their own negation: a negation check would misread them.
    rule(
        "en.suicide.wish_dead",
        S,
        "high",
        r"wish (?:i was|i were|i'd be|i could be|to be) dead",
        r"(?:wish|wishes|wishing|wished|want|wanting|hope|hoping|like|pray|praying) (?:i could |to |that i could )?(?:go to )?sleep "
        r"and (?:never|not) wake up",
        r"(?:don't|do not|never) want to wake up(?: again| anymore| tomorrow| in the morning)?",
        r"(?:hope|hoping|hopes|wish|wishing|pray|praying|prays) (?:that )?i (?:don't|do not|won't|never|wouldn't) wake up",
        r"(?:would|'d|will|it'd) be easier (?:for everyone )?(?:to die|if i (?:was|were) dead|if i (?:wasn't|weren't) "
        r"(?:here|around|alive)|if i died|if i was gone|if i were gone)",
        r"wish(?:es|ed|ing)? (?:i had|i'd|i) never (?:been born|woken up|existed)",
        r"wish(?:es|ed|ing)? (?:i|that i) (?:could|would) (?:die|stop existing|not exist|cease to exist|not be here)",
        r"(?:want|wanted|wanting|wish|wishes) to (?:stop existing|cease to exist|not exist)",
        rf"(?:don't|do not) want to (?:live|be alive|exist|be here|be around|be on this earth){_ANYMORE}{END}",
        rf"(?:would|'d) rather (?:be dead|die|not exist|not be alive|not wake up)(?: in the morning| tomorrow| again)?{END}",
        r"(?:would|'d) rather (?:be dead|die|not exist) than (?:keep|go on|live|living|feel|carry on|continue|face|"
        r"wake up|spend another|be like this|deal with this)",
        r"(?:be|been|i'd be|i would be) better off dead",
        r"(?:want|wanting|wish) (?:it all|everything|my life) to (?:end|be over)(?! with| so| by| before| soon so)",
        negatable=False,
    ),
    # C-SSRS 1 in its weary form: tired of living (a clinician asks directly on hearing it).
    rule(
        "en.suicide.tired_of_life",
        S,
        "high",
        r"(?:tired|sick|weary|exhausted) of (?:living|life|being alive|existing|waking up)",
        r"(?:done|finished) (?:with )?(?:living|being alive)",
        family="wish_dead",
        negatable=False,
    ),
    # 988 / AFSP: "having no reason to live"; "being a burden" in its strongest form.
    rule(
        "en.suicide.no_reason",
        S,
        "high",
        r"no (?:reason|point) (?:for me )?(?:to|in|for) (?:keep |go on |continue |carry on |keep on )?(?:live|living|go on|going on|being alive|stay alive|staying alive|"
        r"wake up|waking up|being here)",
        r"nothing (?:left )?(?:for me )?to live for",
        r"no (?:point|reason|use) (?:in|for|of) (?:me )?(?:being|staying|to stay|to be|still being) (?:alive|here|around)",
        r"(?:easier|better|happier|lighter) (?:for everyone )?if i (?:wasn't|weren't|was not|were not) (?:in (?:them|it|"
        r"their lives|the picture)|around|here|alive|in this world)",
        r"(?:don't|can't|do not|cannot) see (?:a|any|the) (?:reason|point) (?:to|in|for) (?:live|living|go on|going on|"
        r"keep going|being alive|staying alive)",
        r"what(?:'s| is) the point (?:in|of) (?:living|being alive|staying alive|going on)",
        r"(?:life|living|my life) (?:is not|isn't|ain't) worth (?:living|it)",
        r"(?:nobody|no one) would (?:miss me|care if i (?:died|was dead|were dead|was gone|were gone|wasn't here|"
        r"weren't here))",
        r"(?:everyone|everybody|they|my family|my kids|the world|people|you all|he|she) (?:would|'d|will) be "
        r"(?:better off|happier|better) without me",
        r"better off (?:dead|without me)",
        r"(?:i'll|i will) be (?:better off|happier) dead",
        negatable=False,
    ),
    # C-SSRS 3 method, 4 intent, 5 plan.
    rule(
        "en.suicide.method_plan",
        S,
        "high",
        r"(?:thought|thinking|think|thinkin) about (?:how|ways|when|where) (?:i would|i'd|i could|i might|to) "
        r"(?:do it|end it|kill myself|die|end my life|go)",
        r"(?:i )?know (?:exactly )?how (?:i'd|i would|i'm going to|i will|i'll) do it",
        r"(?:researching|researched|looked up|looking up|searched|searching|googling|googled|reading about) "
        r"(?:ways|methods|how) (?:to|of) (?:die|dying|kill myself|end (?:it|my life)|suicide)",
        r"(?:have|got|made|worked out|make) a plan (?:to|for) (?:end|kill|die|do it|how i|suicide|not be here)",
        r"(?:worked out|figured out|planned) (?:the details|how and when|when and how|how i'd do it|the date)",
        r"(?:planned|planning|plan|worked out|figured out|decided|chosen|chose|picked) (?:out )?(?:how|when|where) "
        r"(?:i'll|i will|i'd|i would|i'm going to|to|i'm gonna) (?:do it|end it|go through with it|kill myself)",
        r"(?:i'm|i am) going to (?:do it|go through with it|end it)",
        r"(?:decided|made up my mind) to (?:do it|end it|go through with it|die|kill myself)",
        r"(?:painless|easiest|quickest|fastest|quietest|surest|best) way to (?:die|go|end it|kill myself|do it)",
    ),
    # C-SSRS 6 preparatory behaviour: collected pills, a note, held the means, stood at the edge.
    rule(
        "en.suicide.preparation",
        S,
        "high",
        rf"(?:saving|saved|stockpiling|stockpiled|hoarding|hoarded|hoard|stockpile|stash|collecting|collected|stashing|stashed|keeping|"
        rf"stealing|stole|hiding|hid) (?:up )?(?:my |some |all my |all of my |a lot of |enough |the |extra |"
        rf"a stash of |these |those |[a-z]+'s |my [a-z]+'s )?(?:[a-z-]+ )?{_PILLS}(?! (?:for|to) (?:my|the|a) "
        rf"(?:pain|headache|doctor|back|pharmacy|cold|flu))",
        r"(?:see|find out|test) (?:if|whether) i (?:could|can|would) (?:do it|go through with it|jump|end it)",
        r"(?:went|go|going|drove|driven|walked|walk) (?:to|up to|out to) (?:the|a) (?:bridge|cliff|roof|tracks|edge|"
        r"top floor|railway|railway line)(?: [a-z'-]+){0,6} (?:to see|to look|to do it|to jump|and thought|and stood)",
        r"(?:suicide|goodbye|farewell) (?:note|letter|letters|notes|video|message)",
        rf"(?:stash|supply|stockpile|collection|hoard|pile) of (?:my )?{_PILLS}",
        rf"{_PILLS} (?:saved|stashed|hidden|stockpiled|put) (?:up|away)",
        r"(?:wrote|writing|written|left) (?:a |my )?(?:last |final )?(?:notes?|letters?) (?:to|for) (?:my family|everyone|"
        r"my kids|my children|my parents|my wife|my husband|my partner|each of them)(?!')",
        rf"(?:held|holding|took out|lined up|counted out) (?:the |a |my )?(?:{_PILLS}|knife|blade|razor|gun|rope)",
        r"(?:stood|standing|sat|sitting|was|i'm|i am) on (?:the|a) (?:bridge|ledge|roof|edge|tracks|railing)",
        r"(?:stood|standing|sat|sitting) (?:at|near|by) the edge(?! of (?:the |my )?(?:pool|bed|sofa|couch|seat|chair|stage))",
        r"almost (?:jumped|did it|took them|swallowed them|went through with it|killed myself)",
        r"(?:tied|bought|got|tested) (?:a |the )?(?:noose|rope to hang)",
    ),
    # AFSP "visiting or calling people to say goodbye"; the finality of a last message.
    rule(
        "en.suicide.goodbye",
        S,
        "high",
        r"this is (?:my )?goodbye",
        r"(?:wanted|want|wanna|need|needed|came) to say goodbye(?: to (?:you|everyone|someone|somebody)| before)?"
        + END,
        r"say(?:ing)? goodbye (?:to (?:you|everyone) )?(?:for good|forever|for the last time|one last time)",
        r"goodbye (?:forever|for good|everyone|world|cruel world)",
        r"(?:saying|said|say) my goodbyes",
        r"(?:this|it) (?:is|will be|'ll be) (?:my|our) last (?:message|conversation|time talking|chat|night)",
        r"(?:this|it) (?:is|will be|'s) the last time (?:we'll|we will|i'll|i will|you'll|you will) (?:talk|speak|chat|hear)",
        r"you (?:won't|will not|will never) hear from me again",
        r"(?:won't|will not) be (?:talking|writing) (?:to you )?again",
        r"(?:thank you|thanks) for everything(?: ,)? (?:goodbye|bye|i mean it|it's time)",
        negatable=False,
    ),
    # A last message to be passed on ("tell my mum I'm sorry"): AFSP "saying goodbye".
    sign(
        "en.suicide.relay",
        S,
        2,
        r"tell (?:my|them|him|her|everyone) (?:[a-z]+ )?(?:that )?(?:i'm sorry|i love (?:her|him|them|you)|i'm sorry for "
        r"everything|goodbye|it's not their fault|it wasn't their fault)",
        family="goodbye_hint",
    ),
    # Resignation about what is to come ("anyway", "it doesn't matter"): weak alone.
    sign(
        "en.suicide.resignation",
        S,
        1,
        r"(?:it|none of it|nothing) (?:doesn't|does not|won't|will not) matter (?:anyway|anymore|soon)",
        r"(?:so|because) it (?:doesn't|does not) matter" + END,
        r"(?:anyway|anyways)" + END,
        family="resignation",
    ),
    # A farewell on its own, and thanks for everything: weak alone, high together.
    sign(
        "en.suicide.farewell",
        S,
        2,
        r"^(?:ok |okay |so )?(?:goodbye|farewell|goodbye everyone|goodbye all|bye forever)$",
    ),
    # "I love you all." as a sentence of its own: weak alone, with a relayed message a goodbye.
    sign(
        "en.suicide.love_you_all",
        S,
        1,
        r"^i love (?:you|her|him|them|you all|you guys)(?: all| so much)?$",
        family="farewell_words",
    ),
    sign(
        "en.suicide.thanks_for_everything",
        S,
        1,
        r"(?:thank you|thanks|thank u) for everything",
        r"ready to go" + END,
        family="finality_hint",
    ),
    # 988 / AFSP "talking about not being around"; timing and finality cues.
    sign(
        "en.suicide.not_around_strong",
        S,
        3,
        r"you (?:won't|will not) have to (?:deal with|worry about|put up with|see|look after) me (?:much longer|anymore|"
        r"for long|again|soon|after)",
        r"(?:i )?(?:won't|will not) be a (?:problem|burden) (?:to|for) (?:anyone|you|them|anybody|everyone) (?:for )?"
        r"(?:much longer|long|soon|anymore|after)",
        r"(?:won't|will not|don't|wouldn't) need (?:[a-z'-]+ ){0,5}where i'm going",
        r"(?:won't|will not) be (?:around|here) (?:to see|for) (?:christmas|my birthday|next year|the new year|the summer)",
        r"(?:won't|will not|am not going to|i'm not going to) be (?:around|here|alive) (?:much longer|for long|"
        r"by (?:next|the end|christmas|then))",
        family="not_around",
    ),
    sign(
        "en.suicide.not_around",
        S,
        2,
        r"(?:won't|will not) be (?:around|here) (?:anymore|any longer|after (?:this|tonight))",
        r"(?:won't|will not) be (?:around|here) (?:next|by next) (?:week|month|year)",
        r"(?:made|making|make) (?:my )?peace(?: with (?:it|everything|dying|death|my decision))?",
        r"(?:soon|by [a-z]+) (?:it|none of this|nothing) (?:won't|will not|will no longer|'ll not) matter",
        r"(?:soon|by [a-z]+)(?: ,)? (?:it|none of this|nothing) (?:will|'ll) (?:matter|be over)",
        r"(?:i'll|i will) be gone (?:soon|by|before|and)",
        r"(?:everything|it all|this all|it) (?:will|'ll) (?:all )?be over soon",
        r"(?:won't|will not) (?:need|have) to (?:worry|think) about (?:that|it|the future|next year) (?:much longer|anyway)",
        r"(?:not|won't be) (?:going to be|gonna be) (?:around|here) (?:much longer|for long)",
        r"(?:won't|will not|don't|wouldn't) need (?:it|them|this|these|those|my [a-z]+|any of (?:it|this|my [a-z]+)) "
        r"(?:anymore|any longer|after|soon|much longer)",
        family="not_around",
    ),
    # Contemplating the means at hand ("thinking about using it"): weak alone.
    sign(
        "en.suicide.method_hint",
        S,
        1,
        r"(?:thinking|thought|think|been thinking) about (?:using|taking|swallowing) (?:it|them|that|those|the [a-z]+)",
        family="method_hint",
    ),
    # AFSP "giving away prized possessions"; C-SSRS 6 "gave away valuables, wrote a will".
    sign(
        "en.suicide.possessions",
        S,
        2,
        r"(?:gave|giving|give|given) away (?:my|all my|most of my|some of my) [a-z]+",
        r"(?:gave|giving|given) (?:my|all my) [a-z]+ (?:[a-z]+ )?(?:to|away)",
        r"(?:put|putting|get|getting|got|sorted|sorting) (?:out )?my affairs (?:in order)?",
        r"(?:found|finding|find) (?:a )?(?:new )?home for my (?:dog|cat|pets?|bird|fish)",
        r"(?:wrote|writing|made|updated|finished) (?:out )?my will",
        r"(?:bought|got|have|own|got hold of|ordered) (?:a )?(?:gun|firearm|pistol|rope|noose|charcoal|hose)(?! for)",
        family="preparation",
    ),
    # 988 "looking for a way to kill themselves": a means question that says its purpose.
    sign(
        "en.suicide.means_to_die",
        S,
        3,
        r"how (?:many|much|high|far|long|deep) (?:[a-z'-]+ ){0,6}(?:to|before|until) (?:die|i die|not wake up|kill myself|"
        r"end it|end my life|never wake up|be dead|not survive)",
        r"how (?:many|much) (?:[a-z'-]+ ){0,6}(?:would|will|could|to|it takes to|does it take to) (?:kill me|kill myself|"
        r"end it|end my life|be fatal|be lethal|be deadly)",
        r"(?:enough|sufficient) (?:[a-z'-]+ ){0,2}to (?:kill|die|end it|overdose|not wake up)",
        r"(?:tie|tying|make|making|made|tied) a noose",
        # Asking for a lethal amount: "looking for a way" (988), whatever the reason given.
        r"(?:lethal|fatal|deadly) (?:dose|amount|quantity)",
        r"(?:what|which) (?:dose|amount|quantity) (?:of [a-z]+ )?(?:is|would be) (?:lethal|fatal|deadly)",
        family="means",
    ),
    # 988 "looking for a way to kill themselves": research means questions (doses, heights, weapons).
    sign(
        "en.suicide.means_question",
        S,
        2,
        r"how (?:many|much) (?:[a-z]+ ){0,5}(?:would|does|will|could|do you need|would you need|to|is|are|it) "
        r"(?:it take |take |takes |need |be )?(?:to )?(?:die|kill (?:me|you|someone|a person|an adult)|overdose|od|"
        r"be (?:lethal|fatal|deadly|too much|an overdose|enough)|not wake up|stop (?:your|my|the) heart|"
        r"lethal|fatal|deadly|too many|an overdose)",
        r"(?:lethal|fatal|deadly|toxic|overdose) (?:dose|amount|quantity|limit)",
        r"(?:looking up|looked up|googling|googled|searching|searched|reading about|researching|research) (?:(?:how many|"
        rf"how much|how long|how high) (?:[a-z'-]+ ){{0,4}}(?:{_PILLS[3:-1]}|pills|tablets|to die|it takes to die|"
        r"to overdose|fatal|lethal|to jump|to fall|to bleed|to drown)|doses|overdoses?|lethal|fatal|poisons?|heights|"
        r"bridges)",
        r"(?:what|which) (?:dose|amount) (?:of [a-z]+ )?(?:is|would be) (?:lethal|fatal|deadly|too much|dangerous)",
        r"(?:can you|could you|can i|could i|can someone) (?:die|overdose|od) (?:from|on|of) (?:[a-z]+ ){0,2}"
        rf"(?:{_PILLS}|pills|tablets|alcohol and|an overdose|taking)",
        r"how (?:high|tall|far) (?:[a-z'-]+ ){0,5}(?:to|before|would|does|do|should|must) (?:[a-z]+ ){0,3}"
        r"(?:die|kill|survive|be fatal|not survive)",
        r"(?:survive|die from|die falling from|kill you) (?:a )?(?:fall|jump|drop) (?:from|off)",
        r"(?:which|what) (?:bridge|building|roof|cliff|tower|car park|parking garage) is (?:the )?(?:highest|tallest)",
        r"where (?:can|could|do|would|to) (?:i |you |someone )?(?:buy|get|find|get hold of) (?:a )?(?:gun|firearm|"
        r"pistol|rope|noose|poison|cyanide|helium|barbiturates|sleeping pills)",
        r"how (?:long|quickly|fast) (?:does it|would it|will it|do you|does it take|would it take) (?:take )?(?:to )?"
        r"(?:die|bleed out|drown|lose consciousness|suffocate|hang)",
        r"(?:does it|would it|will it|is it) (?:hurt|painful) to (?:die|drown|hang|bleed out|jump|overdose)",
        r"what happens (?:if|when) (?:you|i|someone) (?:take|takes|swallow|swallows) (?:a |the )?(?:whole|all|many|lots)",
        family="means",
    ),
    # 988 / AFSP "talking about feeling hopeless": about life as a whole, not one habit.
    sign(
        "en.suicide.hopeless",
        S,
        1,
        r"nothing (?:will |is going to |is ever going to )?(?:ever )?(?:gets?|get) better",
        r"(?:it|things|life) (?:will|is going to|are going to|are never going to|is never going to) never get better",
        rf"(?:there's|there is|i have|i've got|i see) no (?:hope|future)(?: for me| left| anymore){END}",
        rf"(?:my life|life|everything|my future) (?:is|feels|seems) (?:completely |totally )?(?:hopeless|pointless|"
        rf"meaningless|over|ruined|empty){END}",
        rf"(?:i feel|i'm|i am|feeling) (?:completely |totally )?(?:hopeless|worthless|empty inside)"
        rf"(?: about (?:everything|life|the future|it all|my life))?{END}",
        rf"what's the point(?: of| in)? (?:living|life|going on|anything|it all|being here|being alive|waking up|"
        rf"trying anymore|anymore){END}",
        rf"what's the point{END}",
        rf"(?:don't|can't|do not|cannot) see (?:the|any) point(?: anymore| in anything| of anything| in living| "
        rf"of living| in going on| in trying anymore)?{END}",
        r"(?:don't|do not) care (?:what happens to me|if i live|if i die|whether i live)",
        rf"(?:i'm|i am) (?:done|finished) with (?:everything|life|it all|all of it|living){END}",
        rf"(?:i )?give up on (?:everything|life|myself|living){END}",
        rf"tired of (?:everything|it all|fighting|being me|being alive|existing|living|life){END}",
        r"no (?:light|way forward) (?:at the end|ahead|for me)",
        family="hopeless",
    ),
    # 988 / AFSP "talking about being a burden to others".
    sign(
        "en.suicide.burden",
        S,
        1,
        r"(?:i'm|i am|i feel like|feel like|i feel|being|i've become|i have become) (?:such |only |nothing but )?"
        r"(?:a |an )?(?:burden|waste of space|drain|weight) (?:to|on|for) (?:everyone|everybody|my family|them|you|"
        r"people|others|my [a-z]+)",
        rf"(?:i'm|i am|i feel like|feel like) (?:such |only |nothing but )?(?:a |an )?burden{END}",
        r"(?:dragging|drag|bring|bringing) everyone down",
        r"(?:everyone|everybody|they) (?:would|'d) (?:be )?(?:relieved|glad) (?:if i|when i)",
        r"(?:ruin|ruining|ruined|make|making) everyone's lives? (?:worse|miserable)",
        family="burden",
    ),
    # 988 / AFSP "feeling trapped".
    sign(
        "en.suicide.trapped",
        S,
        1,
        r"(?:feel|feeling|i'm|i am|so) trapped",
        r"no way out",
        r"(?:can't|cannot) (?:escape|see a way out|get out of this)",
        rf"(?:there's|there is) no (?:way out|escape|exit){END}",
        r"stuck (?:with no|without any|and there's no) (?:way out|escape|exit)",
        family="trapped",
    ),
    # 988 / AFSP "being in unbearable pain" (emotional); exhaustion of coping.
    sign(
        "en.suicide.unbearable",
        S,
        1,
        rf"(?:can't|cannot|can not) (?:take|bear|stand|handle|cope with|deal with) (?:it|this|the pain|this pain|life|"
        rf"any of this|much more|any more of this|living like this){_ANYMORE}{END}",
        rf"(?:can't|cannot|can not) (?:do this|go on|keep going|carry on|keep doing this|live like this){_ANYMORE}{END}",
        r"(?:the )?pain is (?:unbearable|too much|too much to bear|too much to handle)",
        r"(?:it|everything|this) (?:hurts|is) too much to (?:bear|live with|handle)",
        rf"i can't anymore{END}",
        r"(?:want|need|wish) (?:the pain|it all|everything|it) to (?:stop|end)" + END,
        family="unbearable",
    ),
    # C-SSRS 1 in a milder form: passive wishes to vanish.
    sign(
        "en.suicide.passive_strong",
        S,
        2,
        r"(?:want|wanna|wish i could|wish to|would like to) (?:to )?(?:disappear|vanish|fade away) (?:forever|for good|"
        r"permanently)",
        r"(?:sleep|sleeping) forever",
        r"(?:i )?(?:don't|do not) want to do this (?:anymore|any longer)" + END,
        family="passive_wish",
    ),
    sign(
        "en.suicide.passive",
        S,
        1,
        r"(?:want|wanna|wish i could|wish to|would like to|i'd like to) (?:to )?(?:disappear|vanish|fade away)",
        r"(?:nobody|no one|no-one) would (?:notice|care) if i (?:disappeared|was gone|were gone|vanished|left)",
        r"(?:i )?(?:don't|do not) want to (?:wake up|get up) (?:tomorrow|in the morning)",
        family="passive_wish",
    ),
    # 988 / AFSP "withdrawing or isolating".
    sign(
        "en.suicide.withdrawal",
        S,
        1,
        r"(?:stopped|stop|quit) (?:talking to|seeing|answering|replying to|texting) (?:everyone|anyone|my friends|people|"
        r"my family|friends)",
        r"(?:pushed|pushing|push) everyone away",
        r"cut (?:everyone|everybody|people|them all|my friends|my family|them) off",
        r"(?:don't|do not|no longer|never) (?:talk|speak|see|text) (?:to |with )?(?:my friends|anyone|anybody|people|my "
        r"family|friends)(?: anymore| any more)?" + END,
        r"(?:haven't|have not|don't|didn't|hasn't) (?:talked|spoken|talk|speak|seen|see) (?:to |with )?(?:anyone|anybody|"
        r"my friends|a soul|my family) (?:in|for) (?:days|weeks|months|a week|a month|ages)",
        r"(?:haven't|have not|didn't|don't|can't) (?:left|leave|get out of) (?:my room|the house|my bed|bed|my flat|"
        r"my apartment) (?:in|for) (?:days|weeks|a week)",
        r"cut (?:off|myself off from) (?:everyone|my friends|my family|people)",
        r"isolat(?:ing|ed|e) myself",
        r"(?:don't|do not) want to (?:see|talk to) anyone (?:anymore|ever again)",
        family="withdrawal",
    ),
    # 988 / AFSP "increasing the use of alcohol or drugs" to cope.
    sign(
        "en.suicide.substance",
        S,
        1,
        r"(?:drinking|drink|using|taking|smoking) (?:a lot |way |much )?more (?:[a-z]+ )?(?:to|just to) (?:numb|forget|"
        r"not feel|cope|sleep|get through|escape|stop feeling)",
        r"(?:drinking|drink|drank) (?:myself )?(?:to sleep|to forget|to numb|until i pass out|to oblivion)",
        family="substance",
    ),
    # Hedged or conditional safety: "safe for now" means not safe later.
    sign(
        "en.suicide.hedge",
        S,
        1,
        r"(?:i'm|i am|i'll be|i should be|i'll probably be|probably) (?:safe|ok|okay|fine|alright|alive) "
        r"(?:for now|for tonight|for today|i think|i guess|probably|maybe|for the moment|at the moment|tonight)",
        r"(?:i )?(?:probably|think i|guess i|hopefully|likely) (?:won't|will not|wouldn't) (?:do anything|do it|"
        r"hurt myself|act on it|go through with it)",
        r"(?:i )?(?:won't|will not|wouldn't) (?:do anything|do it|act on it|hurt myself) (?:tonight|today|yet|for now|"
        r"this week|right now|again probably)",
        r"(?:can't|won't|cannot|couldn't|can not) promise (?:anything|that|i'll be safe|i won't|i'll stay safe|"
        r"to stay safe|you that)",
        r"no promises",
        r"(?:can't|won't|cannot|couldn't|can not) promise",
        r"promise (?:i'll|ill|i will) be (?:ok|okay|safe|fine|alright)",
        r"(?:don't|do not) know (?:if|whether) i (?:can|will|could) (?:stay safe|keep myself safe|hold on|"
        r"keep going|make it)",
        r"(?:safe|ok|okay|fine|won't do anything) (?:as long as|unless|until)",
        r"(?:i'll|i will) try (?:not to|to stay safe|to hold on)",
        r"i guess i'm (?:safe|ok|okay|fine)",
        family="hedge",
    ),
    # Secrecy about the risk.
    sign(
        "en.suicide.secrecy",
        S,
        1,
        r"(?:don't|do not|please don't|never) tell (?:anyone|anybody|my (?:parents|family|mum|mom|dad|wife|husband|"
        r"partner|doctor|therapist|boss|friends))",
        r"promise (?:me )?(?:you )?(?:won't|will not|not to|you won't) tell",
        r"keep (?:this|it) (?:between us|a secret|secret|to yourself)",
        r"(?:nobody|no one) knows (?:about this|how bad|what i'm|i feel this way|i'm)",
        r"(?:haven't|have not|never) told (?:anyone|anybody) (?:about this|how bad|this|i feel)",
        family="secrecy",
    ),
    # Refusal of help.
    sign(
        "en.suicide.refuses_help",
        S,
        1,
        r"(?:don't|do not) (?:want|need) (?:any |your )?(?:help|a hotline|a number|a helpline|to talk to anyone|therapy|"
        r"a therapist)" + END,
        r"(?:no one|nobody|nothing|no-one) can help me",
        r"(?:hotlines?|helplines?|therapy|therapists?|doctors?|calling someone|talking) (?:won't|doesn't|don't|can't|"
        r"never|will never) (?:help|work|change anything)",
        r"(?:i'm|i am|i'm not) not (?:going to )?(?:call|calling|ring|ringing) (?:anyone|any hotline|a hotline|them|"
        r"that number)",
        r"(?:don't|do not) (?:give|send) me (?:a|any|the|another) (?:hotline|number|helpline)",
        r"(?:beyond|past) help",
        family="refuses_help",
    ),
    # Command hallucinations: voices telling the person to harm themselves (NICE NG225).
    rule(
        "en.suicide.voices",
        S,
        "high",
        r"(?:voices?|someone|something)(?: in my head)?(?: have been| has been| are| is| keep| kept| won't stop)? "
        r"(?:tell|tells|telling|told|keep telling|keeps telling|say|says|saying|order|orders|ordering|want|wants|"
        r"command|commands) me to (?:hurt|kill|cut|jump|die|end|harm|do it|do things|do bad things|stab|burn|punish|"
        r"starve|step in front)",
        r"hear(?:ing)? (?:a )?voices? (?:that |who |which )?(?:tell|telling|say|saying|order|ordering|command)",
        negatable=False,
    ),
    # == French, first person ==========================================================
    # C-SSRS 2 / 3114 "idées suicidaires": explicit.
    rule(
        "fr.suicide.explicit",
        S,
        "high",
        r"me suicider",
        r"(?:envie de|vais|veux|voudrais|pense a|penser a|pensais a|songe a) (?:pas |plus |jamais )?me tuer",
        r"en finir(?: avec (?:la|ma) vie| une bonne fois)?",
        r"mettre fin a (?:mes jours|ma vie)",
        r"(?:je veux|j'ai envie de|envie de|je voudrais|j'aimerais|besoin de|pret a|prete a|je reve de) "
        r"(?:mourir|crever|etre morte?|en finir|disparaitre pour toujours|m'endormir pour toujours|dormir pour toujours|"
        r"ne plus me reveiller|partir pour toujours)",
        r"(?:m'endormir|dormir|partir) pour toujours",
        r"(?:j'aimerais|je voudrais|je veux|envie|j'ai besoin) que tout (?:s'arrete|finisse|se termine)",
        r"que tout (?:s'arrete|finisse|se termine) (?:pour de bon|pour toujours|definitivement|a jamais)",
        r"me donner la mort",
        r"mettre un terme a (?:ma vie|mes jours|tout)",
        r"(?:soulages?|soulagees?|mieux|plus heureux|plus heureuses?) si je (?:partais|mourais|disparaissais|n'etais plus "
        r"la|me tuais|etais morte?)",
        r"(?<!etait )(?<!etaient )(?:marre|fatiguee?|lasse?|epuisee?|degoutee?) de (?:vivre|la vie|exister)",
        r"(?:je veux|j'ai envie de|envie de) (?:ne plus exister|plus exister|arreter de vivre(?! comme))",
        r"(?:je suis|je me sens|me sens|suis|je deviens|je redeviens) (?:[a-z]+ )?suicidaire",
        r"^suicidaire",
        r"(?:pensees|idees|envies|pulsions) suicidaires",
        r"mieux sans moi",
        r"(?:mieux|mieux vaut que je sois) morte?",
        r"(?:des |mes )?(?:idees|pensees) (?:noires|suicidaires|de mort|de suicide)",
        r"(?:je pense|j'ai pense|je pensais|je songe|j'y pense) (?:souvent |beaucoup |tout le temps )?(?:a|au) "
        r"(?:la mort(?! de | d'| du | des )|mourir|suicide|en finir|disparaitre pour de bon)",
        r"(?:tente|essaye|essaie) de (?:me tuer|me suicider|mettre fin a mes jours|en finir)",
        r"tentative de suicide",
    ),
    # C-SSRS 1, 3114 "ne plus vouloir vivre", "ne plus se réveiller".
    rule(
        "fr.suicide.wish_dead",
        S,
        "high",
        r"(?:plus|pas) envie de vivre",
        r"je (?:ne |n')?veux (?:plus|pas) vivre",
        r"je (?:ne |n')?(?:veux|voudrais) (?:plus|pas|ne plus) (?:etre la|etre ici|exister|etre en vie)",
        r"(?:plus|aucune|pas de) raison de (?:continuer (?:a |de )?)?vivre",
        r"personne ne (?:me )?regretterait",
        r"(?:plus|pas|aucune) (?:la )?force de (?:vivre|rester en vie)",
        r"(?:ne (?:plus|pas|jamais)|plus) me reveiller",
        r"(?:m'endormir|dormir) (?:et|pour) (?:ne )?(?:jamais|plus|pas) me reveiller",
        r"(?:la vie|ma vie) ne vaut (?:plus |pas )?(?:la peine|le coup)(?: d'etre vecue)?",
        r"(?:plus rien|rien) ne me retient",
        r"(?:je voudrais|j'aimerais|je prefererais) (?:ne jamais etre ne(?:e)?|ne plus etre la|etre morte?)",
        r"(?:serai(?:en)?t|seront|sera|irai(?:en)?t|ira) (?:bien )?(?:mieux|plus heureu[a-z]*|soulage[a-z]*) sans moi",
        r"(?:rien|plus rien) (?:a|pour) (?:quoi )?vivre",
        negatable=False,
    ),
    # C-SSRS 3-5: method, plan, intent.
    rule(
        "fr.suicide.method_plan",
        S,
        "high",
        r"(?:je sais|je connais|choisi|decide|prevu|planifie|reflechi a|pense a) (?:deja |exactement )?comment "
        r"(?:je vais|je le ferais|je ferais|le faire|m'y prendre|je le ferai)",
        r"(?:j'ai|g) (?:un|mon) plan (?:pour (?:en finir|me tuer|mourir|le faire|me suicider))",
        r"(?:j'ai|je suis en train de) (?:cherche|chercher|regarde|regarder|fait des recherches|faire des recherches) "
        r"(?:sur internet |en ligne |sur google )?(?:comment|des moyens de|des facons de) (?:mourir|me tuer|en finir|"
        r"me suicider|se suicider)",
        r"(?:je vais|j'ai decide de|c'est decide ,? je vais) (?:passer a l'acte|le faire pour de bon|aller jusqu'au bout)",
        r"passer a l'acte",
        r"(?:moyen|facon|maniere) (?:la plus |le plus )?(?:simple|rapide|indolore|sure?|douce) (?:de|pour) (?:mourir|en "
        r"finir|me tuer|se tuer|se suicider)",
    ),
    # Self-harm ("se scarifier", "se mutiler"); not "me couper les cheveux".
    rule(
        "fr.self_harm",
        S,
        "high",
        r"me (?:faire du mal|scarifier|mutiler|bruler)",
        r"je me (?:scarifie|mutile|brule|fais du mal|suis fait du mal|suis scarifiee?|suis mutilee?)",
        r"je me suis (?:encore |de nouveau |a nouveau )?(?:fait du mal|scarifiee?|mutilee?|coupee?)(?! (?:au|a la|aux|en) )",
        r"(?:me couper|je me coupe|je me suis coupee|je me suis coupe) (?:les |le |la |aux )?(?:veines|bras|poignet|"
        r"poignets|cuisse|cuisses|jambe|jambes|peau|avant-bras)",
        r"automutilation",
        r"(?:je me suis|je me) (?:frappe|griffe)e? (?:jusqu'au sang|fort)",
    ),
    # C-SSRS 6: preparation.
    rule(
        "fr.suicide.preparation",
        S,
        "high",
        rf"(?:je garde|j'ai garde|je mets de cote|j'ai mis de cote|je stocke|j'ai stocke|j'accumule|j'ai accumule|"
        rf"je collectionne|je cache|j'ai cache|je conserve|j'ai conserve|je vole|j'ai vole) (?:des |mes |plein de |"
        rf"assez de |tous mes |toutes mes |les )?(?:[a-z-]+ )?{_MEDS_FR}",
        r"lettres? d'adieu",
        r"(?:ecrit|ecris|ecrire|laisse) (?:une |des |ma |mes )?lettres? (?:pour|a) (?:ma famille|mes enfants|tout le monde|"
        r"mes parents|mon mari|ma femme)",
        r"(?:j'ai|je viens d') achete (?:une corde|une arme|un pistolet|un fusil|du charbon)",
        r"(?:je suis|j'etais|assise?) (?:sur|au bord) (?:le|du|de la) (?:pont|toit|quai|precipice|falaise|rambarde)",
        r"pour voir si (?:j'en etais|j'etais|je serais|j'en serais|je suis) (?:capable|cap)",
        r"(?:j'ai|g) failli (?:sauter|le faire|les avaler|passer a l'acte|me tuer)",
    ),
    # AFSP: saying goodbye; the finality of a last message.
    rule(
        "fr.suicide.goodbye",
        S,
        "high",
        r"(?:c'est|ceci est) un adieu",
        r"(?:je voulais|je veux|je voudrais|je viens) (?:vous |te )?dire adieu" + END,
        r"(?:je voulais|je veux|je voudrais|je viens) (?:vous |te )?dire au revoir (?:pour toujours|une derniere fois|"
        r"avant de partir)",
        r"adieu (?:a tous|tout le monde|pour toujours|le monde)",
        r"(?:dire|faire|fais|fait) mes adieux",
        r"(?:merci|merci pour) (?:pour )?tout(?: ,)? (?:adieu|au revoir pour toujours)",
        r"c'est (?:mon|notre) dernier (?:message|echange)",
        r"(?:vous n'entendrez|tu n'entendras) plus (?:jamais )?parler de moi",
        negatable=False,
    ),
    # A last message to pass on, a farewell, resignation (AFSP "saying goodbye").
    sign(
        "fr.suicide.relay",
        S,
        2,
        r"(?:dites|dis) a (?:ma|mon|mes) [a-z]+ (?:que je (?:l'aime|les aime|suis desolee?)|adieu|pardon)",
        family="goodbye_hint",
    ),
    sign(
        "fr.suicide.farewell", S, 1, r"(?<=, )adieu$", r"^adieu$", r"adieu (?:a tous|tout le monde)$", family="farewell"
    ),
    sign(
        "fr.suicide.resignation",
        S,
        1,
        r"de toute (?:facon|maniere)" + END,
        r"(?:ca|rien) (?:n'a|n'aura) (?:plus )?(?:pas )?d'importance",
        family="resignation",
    ),
    # 988 / AFSP "not being around"; finality.
    sign(
        "fr.suicide.not_around_strong",
        S,
        3,
        r"(?:vous|tu|ils|elles|elle|il|on) (?:n'aurez|n'auras|n'auront|n'aura|aurez|auras|auront|aura) plus (?:a|besoin "
        r"de) (?:vous |te |s')?(?:occuper|soucier|supporter|inquieter|vous inquieter|t'inquieter|s'inquieter) (?:de|pour) moi",
        r"(?:je ne serai|je serai) plus (?:un (?:poids|probleme|fardeau)|une charge) (?:pour personne|pour vous|pour eux|"
        r"pour toi|pour qui que ce soit)",
        family="not_around",
    ),
    sign(
        "fr.suicide.not_around",
        S,
        2,
        r"(?:je ne serai|je serai) (?:plus la|bientot plus la|plus la longtemps|pas la longtemps)",
        r"(?:bientot|d'ici [a-z]+)(?: ,)? (?:tout|ca|ce) sera (?:fini|termine)",
        r"(?:tout|ca) sera (?:bientot )?(?:fini|termine) (?:bientot|pour moi)",
        r"(?:bientot|d'ici [a-z]+)(?: ,)? (?:plus rien|rien) n'aura (?:plus )?d'importance",
        r"je (?:serai|vais etre) (?:bientot )?partie? (?:pour de bon|bientot)",
        r"(?:je n'en aurai|j'en aurai|je n'aurai|j'aurai) plus besoin(?: de (?:rien|ca|mes [a-z]+))?",
        family="not_around",
    ),
    # AFSP: giving away possessions; C-SSRS 6.
    sign(
        "fr.suicide.possessions",
        S,
        2,
        r"(?:j'ai donne|je donne|je suis en train de donner|donner|j'ai offert) (?:toutes |tous )?mes (?:affaires|choses|"
        r"objets|[a-z]+ preferees?|[a-z]+ preferes)",
        r"(?:mettre|mis|je mets|j'ai mis|je range|ranger) (?:de l'ordre dans )?mes affaires(?: en ordre)?",
        r"(?:trouve|trouver|je cherche) (?:une famille|quelqu'un) pour (?:mon chat|mon chien|mes animaux)",
        r"(?:fait|ecrit|redige) mon testament",
        family="preparation",
    ),
    # 988 "looking for a way": a means question that says its purpose.
    sign(
        "fr.suicide.means_to_die",
        S,
        3,
        r"combien (?:de |d')(?:[a-z'-]+ ){0,5}(?:pour|avant de) (?:mourir|ne (?:plus|pas|jamais) (?:me|se) reveiller|en finir|"
        r"me tuer|y rester)",
        r"(?:quelle hauteur|combien de temps) (?:[a-z'-]+ ){0,5}pour (?:mourir|en finir|me tuer)",
        r"(?:dose|quantite) (?:mortelle|letale|fatale)",
        r"(?:quelle|quel) (?:dose|quantite) (?:de [a-z]+ )?(?:est|serait) (?:mortelle|letale|fatale)",
        family="means",
    ),
    # 988 "looking for a way": means questions.
    sign(
        "fr.suicide.means_question",
        S,
        2,
        r"combien (?:de |d')(?:[a-z'-]+ ){0,3}(?:faut-il|faut il|il faut|faudrait-il|faudrait il|faudrait|pour|avant de) "
        r"(?:pour )?(?:mourir|en finir|ne (?:plus|pas) se reveiller|une overdose|une surdose|etre mortel|tuer|y rester)",
        r"(?:dose|quantite) toxique",
        r"(?:quelle|quel) (?:dose|quantite) (?:de [a-z]+ )?(?:est|serait) dangereuse",
        r"(?:de )?quelle hauteur (?:[a-z'-]+ ){0,5}(?:pour|on|faut) (?:mourir|ne pas survivre|se tuer|y rester)",
        r"(?:ou|comment) (?:acheter|trouver|se procurer|avoir) (?:une arme|un pistolet|un fusil|une corde|du poison|"
        r"du cyanure|des barbituriques)",
        r"(?:combien de temps|en combien de temps) (?:faut-il|faut il|met-on|on met|pour) (?:pour )?(?:mourir|se vider "
        r"de son sang|se noyer|perdre connaissance)",
        r"(?:faut-il|faut il|il faut) pour (?:ne (?:plus|pas|jamais) (?:se|me) reveiller|mourir)",
        r"(?:on peut|peut-on|est-ce qu'on peut) mourir (?:d'une|avec une|en prenant|de) (?:overdose|surdose|trop de|"
        rf"boite|{_MEDS_FR})",
        r"(?:le pont|l'immeuble|le batiment|la falaise|la tour) (?:le|la) plus haute?",
        r"(?:est-ce que ca fait|ca fait) mal de (?:mourir|se noyer|se pendre|sauter)",
        family="means",
    ),
    # Hopelessness, about life as a whole.
    sign(
        "fr.suicide.hopeless",
        S,
        1,
        r"a quoi bon (?:vivre|continuer|tout ca|me lever|se lever|se battre|lutter)",
        rf"a quoi bon{END}",
        r"(?:je n'ai|j'ai|il n'y a|il y a) (?:plus|aucun|pas) (?:d')?(?:espoir|avenir)",
        r"(?:plus|aucun) d'espoir",
        r"(?:rien|ca) (?:ne )?(?:va|ira) (?:jamais )?(?:s'ameliorer|aller mieux|changer)",
        r"ma vie (?:est|n'a) (?:plus )?(?:foutue|fichue|aucun sens|pas de sens|plus de sens|nulle|un echec|finie)",
        rf"je (?:ne )?vois (?:plus|pas) (?:l'interet|le sens|d'avenir|a quoi ca sert)(?: de (?:vivre|rien|continuer))?{END}",
        r"(?:je suis|suis) (?:fatiguee?|epuisee?|lasse?) de (?:tout|me battre|lutter|exister)" + END,
        r"plus envie de rien",
        r"(?:je me fiche|je m'en fiche|je m'en fous) de (?:ce qui m'arrive|mourir|vivre)",
        family="hopeless",
    ),
    sign(
        "fr.suicide.tired_of_life",
        S,
        2,
        r"(?:je suis|suis) (?:fatiguee?|epuisee?|lasse?) de (?:vivre|la vie)",
        r"(?<!etait )(?<!etaient )fatiguee? de vivre",
        r"(?:disparaitre|partir) (?:pour toujours|pour de bon|a jamais|definitivement)",
        family="passive_wish",
    ),
    sign(
        "fr.suicide.passive",
        S,
        1,
        r"(?:envie de|voudrais|veux|j'aimerais) disparaitre",
        r"personne ne (?:le )?remarquerait si je (?:disparaissais|n'etais plus la|partais|mourais)",
        r"si je disparaissais",
        family="passive_wish",
    ),
    # Burden.
    sign(
        "fr.suicide.burden",
        S,
        1,
        r"(?:je suis|je me sens) (?:un|une) (?:poids|fardeau|boulet|charge)",
        r"(?:un poids|un fardeau|une charge|un boulet) pour (?:tout le monde|tous|les autres|ma famille|eux|vous|toi|"
        r"mes proches)",
        r"je (?:gache|pourris) la vie de (?:tout le monde|ma famille|mes proches)",
        family="burden",
    ),
    sign("fr.suicide.worthless", S, 1, r"je (?:ne )?(?:sers|servirais) (?:plus )?a rien", family="worthless"),
    # Trapped.
    sign(
        "fr.suicide.trapped",
        S,
        1,
        r"(?:je me sens|je suis|me sens) (?:pieg(?:e|ee)|coincee?|enfermee?|prise? au piege)",
        r"(?:pas|aucune) d'issue",
        r"(?:aucune|pas de) (?:porte de )?sortie",
        r"je (?:ne )?vois pas (?:comment m'en sortir|d'issue|de sortie)",
        family="trapped",
    ),
    # Unbearable pain.
    sign(
        "fr.suicide.unbearable",
        S,
        1,
        r"je n'en peux plus",
        r"(?:j'en peux plus|j'en peux vraiment plus)",
        r"je (?:ne )?(?:peux|supporte) plus (?:rien|tout ca|cette douleur|ma vie|la douleur|cette vie|vivre comme ca)",
        r"(?:c'est|la douleur est|ca devient|ma vie est) (?:insupportable|trop dur a supporter|invivable|trop lourde?)",
        r"je (?:n'arrive|arrive) plus a (?:tenir|supporter|continuer|faire face)",
        rf"je (?:ne )?tiens plus{END}",
        family="unbearable",
    ),
    # Withdrawal.
    sign(
        "fr.suicide.withdrawal",
        S,
        1,
        r"je (?:ne )?(?:vois|parle|reponds) plus a personne",
        r"je (?:ne )?vois plus (?:personne|mes amis|ma famille)",
        r"je (?:ne )?(?:sors|suis sortie?) (?:plus|pas) de (?:ma chambre|chez moi|mon lit)(?: depuis)?",
        r"je (?:m'isole|me suis isolee?|m'enferme|me coupe de tout le monde)",
        r"je (?:ne )?reponds plus (?:a mes amis|au telephone|aux messages)",
        family="withdrawal",
    ),
    sign(
        "fr.suicide.substance",
        S,
        1,
        r"je bois (?:de plus en plus|beaucoup plus|plus|trop) (?:pour|afin d'|afin de) (?:oublier|tenir|dormir|ne plus "
        r"rien sentir|supporter|ne plus penser)",
        family="substance",
    ),
    # Hedges.
    sign(
        "fr.suicide.hedge",
        S,
        1,
        r"(?:pour l'instant|pour le moment|pour ce soir|pour aujourd'hui|ce soir)(?: ,)? (?:ca va|je suis en securite|"
        r"je ne ferai rien|je vais bien|je tiens|je ne vais rien faire)",
        r"(?:ca va|je suis en securite|je ne ferai rien|je ne vais rien faire|je tiens|je vais bien) (?:pour l'instant|"
        r"pour le moment|pour ce soir|pour aujourd'hui|je crois|je pense|j'imagine)",
        r"je (?:ne )?(?:peux|peut|pourrais) (?:pas|rien) (?:promettre|vous promettre|te promettre|vous le promettre|"
        r"te le promettre)",
        r"je (?:ne )?(?:promets|promet) rien",
        r"(?:je crois|je pense|j'espere|normalement|probablement|peut-etre) (?:que )?(?:je suis en securite|ca va "
        r"aller|je ne ferai rien|je tiendrai|je ne vais rien faire)",
        r"je (?:ne )?sais pas si je (?:vais|peux|pourrai) (?:tenir|rester en securite|continuer)",
        r"je vais essayer de (?:tenir|ne rien faire|rester en securite)",
        r"(?:rien|je ne ferai rien|ca ira) tant qu",
        family="hedge",
    ),
    sign(
        "fr.suicide.secrecy",
        S,
        1,
        r"(?:ne le dites|ne le dis|ne dites|ne dis|le dites|le dis|dis|dites) (?:pas |rien )?a (?:personne|mes parents|"
        r"ma famille|mon mari|ma femme|mon medecin)",
        r"(?:promettez|promets)(?:-moi| moi)? de ne (?:rien )?(?:le )?dire",
        r"garde(?:z)? (?:ca|le) pour (?:toi|vous)",
        r"personne ne (?:le )?sait",
        r"je n'en ai (?:jamais )?parle a personne",
        family="secrecy",
    ),
    sign(
        "fr.suicide.refuses_help",
        S,
        1,
        r"(?:personne|rien) ne peut m'aider",
        r"je (?:ne )?veux pas (?:d'aide|appeler|de numero|parler a un psy|voir un psy|qu'on m'aide)",
        r"(?:le psy|les psys|la therapie|le 3114|les numeros|appeler|parler) (?:ne sert|ca sert|servent|sert|ne servent) "
        r"a rien",
        r"je n'appellerai (?:personne|pas)",
        family="refuses_help",
    ),
    rule(
        "fr.suicide.voices",
        S,
        "high",
        r"(?:des |les |une |la )?voix (?:dans ma tete )?(?:me disent|me dit|m'ordonnent|m'ordonne|me demandent|"
        r"me demande|me poussent|me pousse) (?:de|a) (?:me|sauter|mourir|tuer|faire|m'|blesser|frapper|en finir)",
        r"j'entends des voix (?:qui|me)",
        negatable=False,
    ),
    # == Helpers: someone worried about another person (988 and 3114 answer them too) ==
    rule(
        "en.helper.explicit",
        H,
        "high",
        rf"(?:kill|hurt|harm|cut|cutting|hurting|harming|killing|starve|starving|burning|burn) {_SELF3}",
        rf"(?:end|ending|take|taking) {_POSS3} (?:own )?life",
        rf"{_THIRD}(?: is| was|'s| seems| has been| might be| could be| sounds| looks| may be) (?:so )?"
        r"(?:suicidal|self-harming|self harming)",
        rf"{_SAYS} (?:that )?(?:he|she|they) (?:wants?|wanted|would like) to (?:die|be dead|not be here|not exist|"
        r"not be alive|disappear forever)",
        rf"{_SAYS} (?:that )?(?:he|she|they|everyone) (?:would|'d|will) be better off (?:without (?:him|her|them)|dead)",
        rf"{_SAYS} (?:that )?(?:there's|there is) no (?:reason|point) (?:to|in) (?:live|living|going on)",
        rf"(?:cuts|scars|burns|marks) on {_POSS3} (?:arms?|wrists?|legs?|thighs?|stomach)",
        r"(?:found|saw|read) (?:a |his |her |their )?(?:suicide note|goodbye letter|goodbye note)",
        rf"{_POSS3} (?:suicide note|goodbye letter|searches about suicide|searches about dying|searches about how to die)",
        rf"(?:searched|searching|googled|googling|looked up|looking up) (?:how to (?:die|kill {_SELF3})|suicide|"
        r"ways to die)",
        r"(?:suicide|suicidal) (?:friend|son|daughter|child|teen|partner|brother|sister)",
        rf"{_THIRD}(?: [a-z'-]+){{0,2}} (?:talks|talking|talked|talk|keeps talking|mentioned|mentions|jokes|joking|"
        rf"joked|texts|texting|posts|posting|posted|writes|writing|wrote) about (?:suicide|killing {_SELF3}|dying|"
        rf"ending {_POSS3} life|wanting to die|not wanting to live|not being here)",
        rf"(?:{_THIRD}|he's|she's|they're)(?: [a-z'-]+){{0,3}} (?:wants|wanted|wishes|wished|is going|going|is planning|"
        rf"planning|plans|tried|has tried|keeps trying|is trying|trying|is thinking of|thinks of) (?:to |about |of )?"
        rf"(?:die|dying|kill {_SELF3}|killing {_SELF3}|end {_POSS3} (?:own )?life|end it|end it all|ending it|"
        rf"overdose|be dead)",
        r"(?:she|he|they) (?:wishes|wished|wants|wanted) (?:she|he|they) (?:was|were) dead",
        rf"{_THIRD} (?:doesn't|does not|can't|cannot|don't|no longer) see(?:s)? (?:a|any|the) (?:reason|point) (?:to|in|for) "
        r"(?:live|living|go on|going on|being alive)",
        negatable=False,
    ),
    sign(
        "en.helper.signs",
        H,
        2,
        rf"{_THIRD}(?: is|'s| has been| was| keeps)? (?:giving|gave|given) (?:away {_POSS3}|{_POSS3} [a-z]+ away)",
        rf"{_THIRD} (?:said|says|has been saying|keeps saying) goodbye to (?:everyone|us|people|{_POSS3} friends)",
        rf"(?:found|finding) (?:pills|tablets|razor blades?|blades|a rope|a knife|a gun) (?:hidden )?(?:in|under) "
        rf"{_POSS3} (?:room|bed|bag|drawer|car)",
        rf"{_SAYS} (?:that )?(?:he|she|they) (?:won't|will not) be (?:around|here) (?:much longer|for long|anymore)",
        rf"{_SAYS} (?:that )?(?:he's|she's|they're|he is|she is|they are) (?:a burden|hopeless|trapped)",
        family="helper_signs",
    ),
    sign(
        "en.helper.worry",
        H,
        1,
        rf"(?:worried|scared|afraid|terrified|concerned|frightened) (?:that )?{_THIRD} (?:might|will|could|is going to|"
        r"may) (?:do something|not be safe|hurt|harm)",
        rf"{_THIRD}(?: seem| seems| is|'s| has been| was| got) (?:so |very )?(?:hopeless|withdrawn|isolating|not himself|"
        r"not herself|not themselves)",
        rf"{_THIRD} (?:stopped|has stopped|won't stop) (?:eating|talking to (?:anyone|us|everyone)|seeing {_POSS3} friends)",
        family="helper_worry",
    ),
    rule(
        "fr.helper.explicit",
        H,
        "high",
        rf"{_TIERS_FR} (?:veut|voudrait|a envie de|parle de|pense a|parle souvent de|menace de) (?:se jeter (?:sous|du|d'un|"
        r"d'une|par)|sauter (?:du|d'un|d'une|par|sous)|se pendre|se noyer|s'ouvrir les veines|se tirer une balle|"
        r"se foutre en l'air|mourir|se suicider|"
        r"se tuer|en finir|ne plus vivre|disparaitre pour toujours|mettre fin a ses jours)",
        r"(?:dit|m'a dit|a dit|ecrit|m'a ecrit|repete) qu'(?:il|elle) (?:veut|voulait|voudrait) (?:mourir|en finir|se "
        r"suicider|se tuer|disparaitre|ne plus vivre)",
        r"(?:dit|m'a dit|a dit|repete) qu'(?:il|elle) n'a plus (?:envie|de raison) de vivre",
        r"se (?:suicider|scarifier|mutiler|faire du mal|couper les veines|tuer)",
        rf"(?:il|elle|ils|elles|{_TIERS_FR}) se (?:scarifie|scarifient|mutile|mutilent|suicide|coupe|coupent|fait du mal|"
        r"tue|brule|brulent)",
        r"se (?:fasse|fait|faire) du mal",
        r"mettre fin a ses jours",
        r"(?:il|elle) est suicidaire",
        r"(?:coupures|cicatrices|marques|brulures) sur (?:ses|son|les) (?:bras|poignets|jambes|cuisses|ventre)"
        r"(?: de (?:mon|ma) [a-z]+)?",
        r"(?:sa|une) lettre d'adieu",
        r"(?:serait|seraient|serions) mieux sans (?:lui|elle)",
        negatable=False,
    ),
    sign(
        "fr.helper.signs",
        H,
        2,
        r"(?:il|elle) (?:donne|a donne|distribue|a distribue) (?:toutes |tous )?ses (?:affaires|choses|objets|jeux|vetements)",
        r"(?:il|elle) (?:a dit|dit) (?:adieu|au revoir) a tout le monde",
        rf"(?:trouve|trouver) (?:des {_MEDS_FR}|des lames|une corde|un couteau) (?:caches? )?(?:dans|sous) (?:sa|son|ses) "
        r"(?:chambre|lit|sac|tiroir)",
        r"(?:dit|m'a dit|a dit|repete) qu'(?:il|elle) (?:est|serait) un (?:poids|fardeau)",
        family="helper_signs",
    ),
    sign(
        "fr.helper.worry",
        H,
        1,
        r"(?:j'ai peur|je crains|je m'inquiete) qu'(?:il|elle) (?:fasse une betise|fasse quelque chose|ne soit pas en "
        r"securite)",
        r"(?:il|elle) (?:ne parle plus a personne|s'isole|ne sort plus de sa chambre|ne mange plus)",
        family="helper_worry",
    ),
)


# == The signs as a grammar: small vocabularies that combine =============================
# The phrase families above were written sign by sign, but each lists whole phrasings, and
# every fresh batch of personas found phrasings they lacked. The families below encode the
# SAME signs as combinations of small vocabularies: a first-person frame (a wish, a thought,
# an intent, a doubt about going on) x a way of saying one's own death, ending or absence
# (with its methods, C-SSRS item 3), x, where the sign needs one, a future time. Each
# vocabulary is a list of words and inflections, not of sentences, so a sentence nobody
# wrote down still reads as its sign. Negation is handled as above: a negation before a
# negatable frame lowers it to low; frames that contain their own negation ("not sure I
# want to keep living") are not negatable.

# One's own death, ending or absence (C-SSRS 1-2 "wish to be dead", "thoughts of killing
# oneself"; 988 "talking about wanting to die"; AFSP "talk of not being around").
_END_SELF = (
    r"(?:die|dying|death|be dead|being dead|end it|end it all|ending it|ending it all|end things|ending things|"
    r"end everything|ending everything|end my life|ending my life|kill myself|killing myself|take my (?:own )?life|"
    r"taking my (?:own )?life|suicide|not (?:be|being) (?:here|around|alive)|not wanting to (?:be here|be around|"
    r"be alive|live|exist|wake up)|stop (?:being alive|living|existing|breathing)(?! like| as| in)|(?:not|never) (?:wake|waking) up|"
    r"not exist|not existing|cease to exist|(?:fall|falling|go|going|drift|drifting) (?:asleep|to sleep|off) "
    r"(?:forever|for good|and (?:never|not) wak(?:e|ing) up)|sleep forever|disappear(?:ing)? (?:forever|for good)|"
    r"be gone (?:forever|for good)|(?:get|getting|be|being) (?:hit|run over|killed) by (?:a|the) [a-z]+|"
    r"not make it (?:through|to)|(?:my|the) (?:life|end) (?:to )?(?:be |being )?over|"
    r"(?:go|going|fall|falling) (?:to sleep|asleep) and (?:stay asleep|stay that way|never wake|not wake)|"
    r"it to end|it all to end)"
)
# Methods (C-SSRS 3): how one might do it, said of oneself.
_METHOD = (
    r"(?:hang(?:ing)? myself|overdos(?:e|ing)|od(?:ing)?|(?:slit|slitting|cut|cutting|slash|slashing) my wrists|"
    r"shoot(?:ing)? myself|drown(?:ing)? myself|gas(?:sing)? myself|poison(?:ing)? myself|"
    r"set(?:ting)? myself on fire|throw(?:ing)? myself (?:off|under|in front of|from)|"
    r"jump(?:ing)? (?:off|from) (?:a|the|my|that|this) (?:[a-z-]+ )?(?:bridge|roof|building|cliff|balcony|ledge|"
    r"tower|car park|overpass|motorway bridge|window|top floor|block of flats|platform|rooftop)|"
    r"jump(?:ing)? in front of (?:a|the) (?:train|bus|car|truck|lorry|tram)|"
    r"step(?:ping)? (?:out )?in front of (?:a|the) (?:train|bus|car|truck|lorry|tram)|"
    r"(?:crash|crashing|wreck|wrecking) my car|"
    r"(?:drive|driving|drove|crash|crashing|swerve|swerving|steer|steering) (?:my car |the car )?(?:into|off) "
    r"(?:a|the) [a-z]+|(?:take|taking|swallow|swallowing|down|downing) (?:all|every one of|every single one of|"
    r"the whole (?:box|bottle|pack|packet|strip) of)(?: of)? (?:my|the|these|those|them)(?: [a-z-]+)?"
    rf"(?: {_PILLS}| pills| tablets)?|bleed(?:ing)? out)"
)
# A wish, an intent, a thought, a picture of it (C-SSRS 1, 2, 4): the frame the object follows.
_FRAME = (
    r"(?:want|wants|wanted|wanting|wanna|wish|wishing|wished|hope|hoping|pray|praying|long|longing|welcome|"
    r"would like|'d like|ready|plan|planning|plans|intend|intending|going|decided|mean|meant|"
    r"think|thinking|thought|thoughts|thinkin|keep thinking|picture|picturing|imagine|imagining|fantasise|fantasize|"
    r"fantasising|fantasizing|dream|dreaming|tempted|urge|urges|considering|contemplating|obsessing|fixated|do anything|"
    r"give anything|ready for)"
)
_FRAME_GAP = (
    r"(?: (?:to|of|about|that|on|over|for|i could|i'd|i'll|i will|i would|i might|i|me)){0,3}(?: [a-z'-]+){0,2}"
)

# Going on living, as an object: "keep living", "carry on", "go on".
_LIVE_ON = (
    r"(?:(?:keep|keep on|go on|carry on|continue|continuing|carrying on|going on|keep going) (?:living|"
    r"being alive|with (?:my )?life|with this life)|live|living|to live|be alive|being alive|stay alive|"
    r"staying alive|be here|being here|exist|existing|wake up|waking up|(?:keep|keep on|go on|carry on|"
    r"continue|keep going|going on|carrying on|continuing)(?= ,| \.|$))"
)
# A future time, for the finality signs ("after this week", "by Christmas").
_LATER = (
    r"(?:soon|much longer|for long|long|anymore|any longer|after (?:this|that|today|tonight|tomorrow|the weekend|"
    r"next [a-z]+|[a-z]+day)(?: [a-z]+)?|by (?:then|next [a-z]+|the [a-z]+|[a-z]+)(?: [a-z]+)?|"
    r"for (?:my|the|his|her|their|our|next|christmas|easter)(?: [a-z']+){0,2}|next (?:week|month|year|[a-z]+day)|"
    r"(?:this|next) time next [a-z]+|to see [a-z]+(?: [a-z]+)?|in (?:a|one|two|three|a few|six|ten) (?:days?|weeks?|"
    r"months?|years?)|(?:a|one) (?:week|month|year) from now|before (?:my|the|christmas|easter|next|[a-z]+day)(?: [a-z']+)?)"
)
_WITHOUT_ME = (
    r"(?:fine|ok|okay|alright|better|better off|happier|easier|lighter|freer|relieved|at peace|move on|"
    r"cope|manage|be fine|get over it) without me"
)
_ME_GONE = (
    r"if i (?:was|were|wasn't|weren't|was not|were not) (?:gone|dead|around|here|alive|in the picture|"
    r"in (?:their|the|his|her|your) lives?|in the way)|if i (?:died|disappeared|left for good|went away for good)|"
    r"if i (?:wasn't|weren't|was not|were not|was no longer|were no longer) (?:their|his|her|your|a|the) "
    r"(?:dad|father|mum|mom|mother|parent|husband|wife|partner|son|daughter|brother|sister|friend)|"
    r"if (?:something|anything) (?:happened|happens|were to happen|was to happen) to me|"
    r"if i (?:vanished|disappeared|ceased to exist|had never been born|was never born|wasn't born)|"
    r"once i'm gone|when i'm gone|after i'm gone"
)
_RESEARCH = (
    r"(?:reading|read|researching|researched|looking|looked|looked up|looking up|googling|googled|searching|searched|"
    r"watching videos|checking|checked|asking|finding out|find out|wondering|wonder|want to know|need to know)"
)
_LETHAL = (
    r"(?:die|dying|kill (?:me|myself|you|someone|a person)|be (?:fatal|lethal|deadly)|fatal|lethal|deadly|"
    r"the most (?:dangerous|lethal|deadly|toxic)|most (?:dangerous|lethal|deadly|toxic)|"
    r"(?:dangerous|lethal|deadly|toxic|fatal) in (?:large|big|high|huge) (?:amounts|doses|quantities|numbers)|"
    r"bleed out|drown|suffocate|lose consciousness|not wake up|never wake up|stop (?:your|my|the|a) heart|"
    r"overdose|od)"
)
_MEANS = (
    rf"(?:{_PILLS[3:-1]}|pills|tablets|drugs|painkillers|bleach|poison|rope|noose|gun|firearm|bullets|knife|blade|"
    r"razor|razors|charcoal|helium|hose|antifreeze)"
)

# French vocabularies.
_FIN_SOI = (
    r"(?:mourir|crever|la mort(?! de | d'| du | des )|etre morte?|en finir|me tuer|me suicider|me foutre en l'air|me flinguer|me pendre|"
    r"me noyer|m'empoisonner|me tirer une balle|m'ouvrir les veines|me couper les veines|"
    r"me jeter (?:sous|du|d'un|d'une|de|par|dans|a l'eau)(?: [a-z'-]+){0,2}|sauter (?:du|d'un|d'une|de|par|sous)"
    r"(?: [a-z'-]+){0,2}|(?:ne (?:plus|pas|jamais)|plus) (?:exister|etre la|vivre|me reveiller|etre en vie|etre de ce monde)|"
    r"disparaitre (?:pour toujours|a jamais|pour de bon|definitivement)|m'endormir (?:pour toujours|a jamais|"
    r"et ne (?:plus|pas|jamais) me reveiller)|partir pour (?:toujours|de bon)|arreter de vivre(?! comme)|que tout s'arrete|que tout (?:soit|serait) (?:fini|termine)|"
    r"que (?:ca|tout ca) (?:soit fini|s'arrete pour de bon)|"
    r"avaler (?:tous mes|toutes mes|toute la boite|tous les|toute la plaquette)(?: [a-z'-]+){0,2})"
)
_ENVIE_FR = (
    r"(?:je veux|je voudrais|j'aimerais|j'ai envie de|j'ai envie d'|envie de|envie d'|je souhaite|je souhaiterais|"
    r"je prefererais|je reve de|je reve d'|j'ai besoin de|besoin de|je pense a|je pense souvent a|j'ai pense a|"
    r"je pensais a|je songe a|je reflechis a|l'idee de|pret a|prete a|je vais|j'ai decide de|j'ai decide d'|"
    r"je compte|je prevois de|tente de|tentee? de|je suis tentee? de|j'espere|j'imagine|je m'imagine)"
)
_ENVIE_GAP_FR = r"(?: [a-z'-]+){0,2}"
_SANS_MOI = (
    r"(?:mieux|plus heureux|plus heureuses?|plus tranquilles?|soulages?|soulagees?|plus libres?|en paix|"
    r"mieux lotis?|mieux loties?) (?:sans moi|si je (?:n'etais plus la|n'etais pas la|disparaissais|partais|"
    r"mourais|etais morte?|n'existais pas|n'existais plus))|(?:porterait|porteraient|porteront|portera|porte|portent) "
    r"mieux sans moi"
)
_PLUS_TARD_FR = (
    r"(?:pour (?:noel|paques|mon anniversaire|son anniversaire|l'ete|la rentree|le nouvel an|les fetes|"
    r"(?:la|le) [a-z]+ (?:prochaine?|d'apres))|(?:la|le) [a-z]+ prochaine?|longtemps|apres (?:ce|cette|demain|"
    r"ce soir)(?: [a-z-]+)?|bientot|dans (?:un|une|deux|trois|quelques|six) (?:semaines?|jours|mois|ans?))"
)

_GRAMMAR: tuple[Rule, ...] = (
    # C-SSRS 1-2 (Posner et al. 2011), 988 "talking about wanting to die": a first-person
    # frame x one's own death or a method, within a few words.
    rule(
        "en.sign.wish_or_thought",
        S,
        "high",
        rf"{_FRAME}{_FRAME_GAP} (?:{_END_SELF}|{_METHOD})(?: for good| forever| once and for all)?{END}",
        rf"{_FRAME}{_FRAME_GAP} (?:{_METHOD})",
        r"(?:i'd|i would|i'll|i will|i could) (?:gladly )?(?:welcome|embrace|accept|take) (?:death|dying|the end)",
        # A wished-for accident is a wish to be dead (C-SSRS 1 "passive ideation").
        r"(?:wish|wishing|hope|hoping|pray|praying|want|wanting)(?: that)? (?:i'd|i'll|i will|i would|i could|i might|"
        r"i) (?:get|be|got) (?:hit|run over|killed|knocked down) by",
        negation_inside=False,
        gate=vocabulary_gate(_FRAME, "(?:welcome|embrace|accept|take)"),
    ),
    # C-SSRS 1 as a doubt about going on: "not sure I want to keep living" (it carries its
    # own negation, so a negation check would misread it).
    rule(
        "en.sign.doubt_going_on",
        S,
        "high",
        rf"(?:not sure|unsure|don't know|do not know|no longer sure|not certain)(?: if| whether)? i (?:want|wanna|can|"
        rf"could|should) (?:to )?{_LIVE_ON}",
        rf"(?:don't|do not|no longer|never) (?:want|wanna|feel like) (?:to )?(?:keep|go on|carry on|continue)"
        rf"(?: living| being alive| with (?:my )?life)?{END}",
        rf"(?:had|have had|i've had) enough of (?:life|living|being alive|existing|this life){END}",
        rf"(?:i'm|i am|i feel) (?:so )?(?:done|finished|through) with (?:life|living|being alive|existing|this life){END}",
        negatable=False,
    ),
    # 988 / AFSP "having no reason to live": no reason or point x going on.
    rule(
        "en.sign.no_reason",
        S,
        "high",
        rf"(?:no|any|a|the) (?:reason|point|purpose) (?:left )?(?:for me )?(?:to|in|for|of) (?:me )?{_LIVE_ON}",
        r"(?:nothing|no one|nobody|nothing left|no one left) (?:left )?(?:for me )?(?:to live for|here for me|"
        r"keeping me here|to stay for)",
        rf"(?:there's|there is) nothing (?:left )?(?:for me )?(?:here|in this world|anymore){END}",
        r"(?:this|it) is the end (?:for me|of me|of the road for me)" + END,
        negatable=False,
    ),
    # 988 / AFSP "being a burden" in its strongest form: the others better off without me.
    sign(
        "en.sign.without_me",
        S,
        3,
        rf"(?:be|been|being|are|is|'d|'ll|would|will) (?:so |much |a lot |all |so much )?{_WITHOUT_ME}",
        rf"(?:better|easier|happier|lighter|simpler|an easier time|a better life|relieved|glad|free) (?:for "
        rf"(?:everyone|everybody|them|my [a-z]+) )?(?:, )?(?:[a-z'-]+ , )?{_ME_GONE}",
        family="without_me",
        gate=frozenset({"without", "if", "gone"}),
    ),
    # AFSP "talking about not being around" x a future time: finality.
    sign(
        "en.sign.not_around_later",
        S,
        3,
        rf"(?:won't|will not|wont|not going to|not gonna|don't plan on|do not plan on|not planning on|don't intend to|"
        rf"don't expect to|don't see myself|can't see myself|won't still) (?:be |being |still be |still being )?"
        rf"(?:around|here|alive) {_LATER}",
        r"(?:not|don't|won't|do not) (?:planning on |plan on |going to |intend to )?(?:stick|sticking|stay|staying) "
        r"(?:around|here) (?:much longer|for long|to (?:find out|see))",
        rf"(?:won't|will not) be (?:anyone's|anybody's|your|their|a|an) (?:problem|burden|worry) {_LATER}",
        rf"{_LATER}(?: ,)? (?:it|nothing|none of (?:this|it)|none of that) (?:won't|will not|will no longer|isn't going to) "
        r"matter (?:anymore|any longer|at all)",
        r"(?:after|by|come) [a-z]+(?: [a-z]+)?(?: ,)? i (?:won't|will not) be (?:anyone's|a|your|their) "
        r"(?:problem|burden|worry)",
        family="not_around",
    ),
    # C-SSRS 6 preparatory behaviour: letters to each of them; a plan with a date; the
    # means saved or bought (988 "buying a gun, stockpiling pills").
    sign(
        "en.sign.preparation",
        S,
        3,
        r"(?:written|wrote|writing|write|left|leaving) (?:everyone|each of them|all of them|my (?:family|kids|children|"
        r"parents|wife|husband|partner|mum|mom|dad)(?!')|them) (?:a |my )?(?:last |final |goodbye )?(?:letter|letters|"
        r"note|notes)",
        r"(?:written|wrote|writing|left) (?:a |my )?(?:last |final |goodbye )?(?:letter|letters|note|notes) (?:for|to) "
        r"(?:each|everyone|all|my (?:family|kids|children|parents|wife|husband|partner|mum|mom|dad))(?!')",
        r"(?:a|my|the) plan and (?:a|the) (?:date|time|place)",
        r"(?:a|the) date and (?:a|the) plan",
        rf"(?:enough|plenty of|lots of|a lot of|all my|all of my|all the) (?:[a-z-]+ )?{_PILLS}"
        rf"(?: [a-z'-]+){{0,2}} (?:saved|stashed|hidden|put away|stockpiled|kept|collected|stored|ready)",
        rf"(?:saved|stashed|stockpiled|collected|kept|hidden|put aside|putting aside|setting aside|set aside) (?:up )?"
        rf"(?:[a-z'-]+ ){{0,3}}(?:{_PILLS}|tablets|pills)(?: [a-z'-]+){{0,4}} (?:to do it|for when|for the end|"
        rf"for a while|for weeks|for months|for a few [a-z]+|quite a lot|a lot)",
        rf"(?:{_PILLS}|tablets|pills) (?:saved|stashed|put aside|collected) (?:up )?(?:to do it|for it|for when)",
        r"(?:bought|buy|buying|got hold of|ordered|ordering) (?:a |some |the )?(?:rope|noose|gun|firearm|pistol|"
        r"charcoal|hose|helium)(?! (?:for|to (?:tie|hang (?:the|a|my) (?:washing|hammock|picture|swing)))\b)",
        family="preparation",
    ),
    # 988 "looking for a way to kill themselves": researching how lethal a means is.
    sign(
        "en.sign.means_research",
        S,
        3,
        rf"{_RESEARCH} (?:about |up |into |for |on |at |if |whether )?(?:how|what|which|ways|whether|if)"
        rf"(?: [a-z'-]+){{0,6}} (?:to |it takes to |would |will |could |is |are |be )?{_LETHAL}",
        rf"(?:which|what) (?:[a-z-]+ ){{0,4}}(?:{_PILLS}|pills|tablets|drugs|medications|medicines) (?:are|is|would be) "
        rf"(?:the )?(?:most )?(?:dangerous|lethal|deadly|toxic|fatal) (?:in (?:large|big|high) (?:amounts|doses)|"
        r"to (?:overdose|take)|if you take)",
        rf"(?:which|what) (?:[a-z-]+ ){{0,4}}(?:{_PILLS}|pills|tablets|drugs|medications|medicines) (?:are|is) "
        r"(?:the )?most (?:dangerous|lethal|deadly|toxic)",
        r"(?:is|would) (?:drowning|hanging|jumping|an overdose|overdosing|bleeding out|gas|carbon monoxide|"
        r"freezing) (?:a )?(?:painless|peaceful|quick|quiet|easy|gentle|fast) (?:way|death)",
        r"(?:painless|peaceful|quick|quiet|easy|gentle) (?:way|ways) to (?:go|die|end it|do it)",
        family="means",
    ),
    # C-SSRS 6, 988 "looking for a way": at a height or by the tracks, thinking of jumping.
    sign(
        "en.sign.at_the_edge",
        S,
        3,
        r"(?:platform|tracks|bridge|roof|ledge|cliff|balcony|edge|rooftop|car park|parking garage|top floor)"
        r"(?: [a-z'-]+){0,6} (?:thinking|thought|think|wondering|wanted|wanting|tempted) (?:about |of |to )?"
        r"(?:jumping|jump|stepping off|falling|letting go|stepping (?:out|forward))",
        r"(?:stood|standing|stand|sat|sitting|waited|waiting) (?:at|on|near|by) (?:the|a) (?:edge|ledge|railing|"
        r"parapet)(?: of (?:the|a) (?:roof|bridge|building|car park|cliff|platform|balcony|tower))?(?: [a-z'-]+){0,3} "
        r"(?:for (?:a long time|ages|an hour|hours|a while)|and (?:thought|looked down|wanted))",
        r"(?:went|go|going|drove|walked|climbed) (?:up )?(?:to|onto) (?:the|a) (?:multi-storey|top of the|top of a|roof "
        r"of the|roof of a)?(?: [a-z-]+){0,2} (?:and stood|to stand|and sat|and looked down)",
        family="preparation",
    ),
    # Helpers (988 and AFSP guidance for the people around someone): what the other person
    # said, reported, with a few words between ("wrote in her diary that she...").
    rule(
        "en.sign.helper_reported",
        H,
        "high",
        rf"{_SAYS}(?: [a-z'-]+){{0,5}} (?:that )?(?:he|she|they) (?:wants?|wanted|wishes|wished|would like|'d like|"
        rf"is going|was going|plans|planned|is planning|was planning|hopes|hoped) (?:to )?(?:be dead|die|not be here|"
        rf"not be alive|not exist|kill {_SELF3}|end (?:it|it all|things|{_POSS3} life)|disappear forever)",
        rf"{_SAYS}(?: [a-z'-]+){{0,5}} (?:that )?(?:he|she|they) (?:doesn't|does not|don't|no longer) (?:want|wants) to "
        r"(?:live|be alive|be here|exist|wake up|go on|carry on|keep living)",
        rf"{_POSS3} (?:search history|searches|browser history|internet history|google history|history)(?: [a-z'-]+){{0,6}} "
        r"(?:suicide|ways to die|how to die|killing (?:himself|herself|themselves)|overdoses?|lethal doses?|"
        r"methods)",
        rf"(?:scared|afraid|terrified|worried|frightened|fear) (?:that )?{_THIRD} (?:is going to|will|might|may|could|"
        rf"wants to) (?:take {_POSS3} (?:own )?life|kill {_SELF3}|end {_POSS3} life|end it|do something to {_SELF3})",
        negatable=False,
    ),
    # C-SSRS 1 as acceptance: one's own death would be fine, no loss ("I wouldn't mind if
    # I never woke up", "nobody would notice if I was dead").
    sign(
        "en.sign.death_accepted",
        S,
        3,
        r"(?:wouldn't|would not|won't|don't|do not|'d not) (?:mind|care) (?:if|when) (?:i )?(?:never|didn't|did not|"
        r"don't|do not) (?:wake|woke|waking) up",
        r"(?:wouldn't|would not|won't|don't|do not) (?:mind|care) (?:if|when) i (?:died|was dead|were dead|was gone|"
        r"were gone|never came back|got hit|got killed)",
        r"(?:i'd|i would|i'll|i will|i'm|i am) (?:be )?(?:ok|okay|fine|alright|at peace|relieved|glad) (?:with )?"
        r"(?:if|when) i (?:never|didn't|did not) (?:wake|woke) up",
        r"(?:nobody|no one|no-one|not one person|not a single person) would (?:even )?(?:notice|care|mind|miss me)"
        r"(?: [a-z'-]+){0,2} (?:if|when) i (?:was dead|were dead|died|killed myself|was gone for good|"
        r"didn't wake up|never woke up)",
        r"(?:better off|be fine|be okay|be provided for|be looked after) with (?:my|the) (?:life )?insurance",
        r"(?:life )?insurance (?:would|will|could) (?:pay out|cover|look after|take care of) (?:them|my family|"
        r"everyone|my kids|the kids)",
        family="wish_dead",
    ),
    # 988 / AFSP "having no reason to live", as a doubt: is living worth it; the only way
    # out is dying (988 "feeling trapped" at its end).
    rule(
        "en.sign.worth_living",
        S,
        "high",
        r"(?:isn't|is not|not|if it's|whether it's|if it is|whether it is|if life is|whether life is|if living is|"
        r"wondering if it's|no longer) (?:even )?worth (?:staying alive|being alive|living|going on|carrying on|"
        r"keeping going|waking up|it anymore|the fight anymore)",
        r"(?:only (?:way|option|answer|escape|solution|choice|way out)|way out|escape|solution)(?: [a-z'-]+){0,3} "
        r"(?:is |except |other than |but |apart from |besides )(?:to )?(?:die|dying|death|end it|ending it|suicide|"
        r"kill myself|killing myself|end my life|ending my life)",
        negatable=False,
    ),
    # C-SSRS 3-6: a method chosen, the means laid out; research of how much "it would take".
    sign(
        "en.sign.method_chosen",
        S,
        3,
        r"(?:know|knew|picked|chosen|chose|decided|worked out|figured out|found) (?:exactly )?(?:which|what|where) "
        r"(?:bridge|building|pills|tablets|method|way|gun|rope|tree|spot|place|cliff|roof|train|road|dose)"
        r"(?: [a-z'-]+){0,2} (?:i'd|i would|i will|i'll|i'm going to|i'm gonna|to) (?:use|go|do it|jump|take)",
        rf"(?:{_PILLS}|pills|tablets) (?:are |all )?(?:lined up|counted out|laid out|sorted out|all out|spread out|"
        r"in a pile|ready) (?:on|in front of|next to|beside) (?:the|my|me)",
        rf"{_RESEARCH} (?:about |up |into )?how (?:much|many) (?:of )?(?:my |the |these |those )?(?:[a-z-]+ )?"
        rf"(?:{_PILLS[3:-1]}|pills|tablets|medication|meds)(?: [a-z'-]+){{0,3}} (?:it would take|it'd take|it will take|"
        r"it takes|would do it|would be enough|is enough|it would need)",
        family="method",
    ),
    # AFSP "saying goodbye": goodbyes said, on their own (with giving away, high together).
    sign(
        "en.sign.saying_goodbye",
        S,
        2,
        rf"(?:saying|said|say|been saying|started saying|going around saying) (?:my )?goodbyes?(?: to (?:people|"
        rf"everyone|everybody|friends|my friends|my family|them|the people i love|the (?:important|people|ones)"
        rf"(?: [a-z]+){{0,3}}))?{END}",
        family="goodbye_hint",
    ),
    # A wish for it all to stop, permanently: the "permanently" makes it a wish to be dead.
    rule(
        "en.sign.stop_for_good",
        S,
        "high",
        r"(?:want|wish|need|wanted|wanting) (?:it all|everything|it|this|the pain|my life|life|the world|my head|"
        r"the noise) to (?:stop|end|be over|go quiet|go dark|go black|be still|fade)"
        r"(?: ,)? (?:permanently|forever|for good|for ever|once and for all)",
        negation_inside=False,
    ),
    # NICE NG225 command hallucinations, whatever the grammar of the command.
    rule(
        "en.sign.command_voices",
        S,
        "high",
        r"(?:voices?|they|it|someone|something|my head|my brain|my mind|a voice|the voice)(?: in my head)?"
        r"(?: [a-z'-]+){0,2} (?:screaming at|screams at|shouting at|shouts at|yelling at|yells at|"
        r"say|says|saying|said|tell|tells|"
        r"telling|told|whisper|whispers|whispering|keep saying|keeps saying) (?:that )?(?:i|me) (?:have to|must|should|"
        r"need to|deserve to|ought to|to|am going to|will) (?:hurt|kill|punish|die|cut|harm|burn|starve|jump|end|"
        r"be punished|do it)",
        negatable=False,
    ),
    # C-SSRS 1: death spoken of as rest or peace, without fear of it (Joiner's "acquired
    # capability": fearlessness about death), a wish for a fatal illness so it ends.
    sign(
        "en.sign.death_as_rest",
        S,
        3,
        r"(?<!his )(?<!her )(?<!their )(?:death|dying|being dead|not existing|not waking up) (?:[a-z'-]+ ){0,4}"
        r"(?:sounds|seems|feels|looks|would be|would feel|is) (?:like )?(?:a )?(?:rest|peace|peaceful|freedom|release|"
        r"an escape|escape|sleep|home|a mercy|a gift|a way out|relief|so easy|easier)",
        r"(?:wish|wishing|wished|hope|hoping|pray|praying)(?: that)? i (?:had|would get|'d get|got|could get) "
        r"(?:cancer|a terminal [a-z]+|something terminal|a fatal [a-z]+|an incurable [a-z]+)",
        r"so (?:it|everything|it all|this|my life|the pain) (?:would|could|will|can) (?:all )?(?:be over|end|stop)"
        r"(?: for good| forever)?" + END,
        family="wish_dead",
    ),
    sign(
        "en.sign.death_no_fear",
        S,
        2,
        r"(?:death|dying) (?:doesn't|does not|no longer|don't|won't) (?:scare|frighten|bother) me(?: anymore| at all)?",
        r"(?:i'm|i am) (?:not|no longer) (?:scared|afraid|frightened) of (?:death|dying)(?: anymore)?",
        family="no_fear",
    ),
    # 988 "being in unbearable pain", at its limit: not surviving more of it.
    sign(
        "en.sign.cannot_survive",
        S,
        2,
        r"(?:can't|cannot|won't|don't think i can|don't think i'll|not sure i can|not sure i'll|doubt i'll|doubt i can) "
        r"(?:survive|make it through|get through|last|live through) (?:another|one more|much longer|the (?:night|week|"
        r"weekend))",
        r"(?:at|reached) the end of my (?:rope|tether)",
        family="unbearable",
    ),
    sign("en.sign.want_out", S, 2, rf"(?:i )?(?:want|need) out{END}", family="passive_wish"),
    # "I'd rather be dead than...": the continuation named is ordinary at times ("than
    # wear that"): weak alone, high with one more sign; with life as its object (above), high.
    sign("en.sign.rather_die", S, 2, r"(?:would|'d) rather die than", family="rather_dead"),
    # "I'd rather be dead" is the C-SSRS item 1 statement itself, whatever follows.
    sign("en.sign.rather_dead", S, 3, r"(?:would|'d) rather be dead", family="wish_dead"),
    # C-SSRS 6 preparatory behaviour: counting the means, the engine running in a closed
    # garage, practising a knot, the affairs put in order so nobody has to deal with it.
    sign(
        "en.sign.means_handled",
        S,
        2,
        rf"(?:counting|counted|count|staring at|lined up) (?:out )?(?:[a-z'-]+ ){{0,2}}(?:{_PILLS}|pills|tablets)",
        rf"(?:{_PILLS}|pills|tablets)(?: [a-z'-]+){{0,5}} (?:and )?(?:counting|counted) them",
        r"(?:sorting|sorted|sort|putting|put|getting|got) (?:out )?(?:all )?my (?:paperwork|affairs|finances|accounts|"
        r"passwords|papers) (?:in order|out|so)",
        family="preparation",
    ),
    # C-SSRS 6 rates rehearsal with the means as preparatory behaviour: high alone.
    sign(
        "en.sign.rehearsal",
        S,
        3,
        r"(?:practising|practicing|practised|practiced|practise|practice|testing|tested|trying out|rehearsing|"
        r"rehearsed) (?:tying )?(?:knots|a knot|the knot|a noose|the noose|hanging|how to hang)(?: with (?:the|a|my) "
        r"(?:rope|belt|cord))?",
        rf"(?:looking at|staring at|holding|sat with|sitting with) (?:the |my |all the |all my )?(?:{_PILLS}|pills|"
        rf"tablets)(?: [a-z'-]+){{0,4}} (?:and )?(?:counting|counted|lining up|lined up) them",
        family="preparation",
    ),
    sign(
        "en.sign.engine_running",
        S,
        3,
        r"(?:garage|closed car|car)(?: [a-z'-]+){0,5} (?:with )?the engine (?:running|on)",
        family="method",
    ),
    sign(
        "en.sign.nobody_left_to_deal",
        S,
        2,
        r"so (?:that )?(?:nobody|no one|they|my family|my kids|you|everyone) (?:has|have|will have|won't have|doesn't "
        r"have|don't have|will not have) to (?:deal with|sort out|clean up|worry about|find|go through) (?:it|anything|"
        r"my [a-z]+|everything|the mess)",
        rf"{_LATER}(?: ,)? (?:it|everything|it all|this|this all)(?: will|'ll) (?:all )?be over",
        family="not_around",
    ),
    # 988 / AFSP "being a burden": the others free to live once I am gone.
    sign(
        "en.sign.others_free",
        S,
        2,
        r"(?:they|everyone|my family|my kids|he|she) (?:can|could|will|'ll) (?:finally )?(?:get on|move on|be happy|"
        r"be free|live) (?:with (?:their|his|her) li(?:fe|ves)|in peace|without me)",
        family="burden",
    ),
    # 988 "looking for a way": how much would do irreparable harm; the fastest way out.
    sign(
        "en.sign.irreparable",
        S,
        3,
        r"how (?:many|much) (?:[a-z'-]+ ){0,6}(?:to|would|will|could|does it take to|do you need to|it takes to) "
        r"(?:damage|destroy|shut down|fail|wreck|kill) (?:your|my|the|a person's|someone's) (?:liver|kidneys|heart|"
        r"organs)(?: beyond repair| for good| permanently)?",
        family="means",
    ),
    sign(
        "en.sign.fastest_way",
        S,
        2,
        r"(?:fastest|quickest|easiest|surest|most painless|least painful|simplest) way to (?:lose consciousness|"
        r"stop breathing|stop (?:my|your|the) heart|overdose|od|bleed out|pass out for good)",
        family="means",
    ),
    # AFSP "saying goodbye": apologies to everyone, then "ready".
    sign(
        "en.sign.amends",
        S,
        2,
        r"(?:said|saying|say|been saying|apologi[sz]ed|apologi[sz]ing) (?:sorry )?to (?:everyone|everybody|all the "
        r"people|the people)(?: i (?:ever )?(?:hurt|love|know))?",
        family="goodbye_hint",
    ),
    sign("en.sign.ready", S, 1, r"(?:now )?(?:i'm|i am) ready(?: now)?$", family="finality_hint"),
    # C-SSRS 1: pretending to want to live; no future with oneself in it.
    rule(
        "en.sign.no_future_with_me",
        S,
        "high",
        r"pretend(?:ing|ed)? (?:that )?(?:i want|to want|i still want) to (?:be alive|live|be here|exist|keep going)",
        r"no (?:future|version|world|scenario|timeline) (?:where|in which) i(?:'m| am)? (?:still )?(?:here|alive|around|"
        r"exist|make it)",
        rf"(?:can't|cannot|don't|do not) (?:see|imagine|picture) (?:myself|me) (?:being |still )?(?:here|alive|around) "
        rf"{_LATER}",
        negatable=False,
    ),
    # Hedged safety tied to a means or a time limit (Stanley & Brown 2012: a conditional
    # promise is not safety): high alone.
    sign(
        "en.sign.hedge_with_means",
        S,
        3,
        r"(?:fine|safe|ok|okay|alright|all right) (?:as long as|unless|until|if|provided) (?:[a-z'-]+ ){0,6}(?:knife|"
        r"knives|pills|tablets|meds|medication|gun|rope|bridge|blade|blades|razor|drawer|cupboard|balcony|roof)",
        r"(?:can't|cannot|won't|couldn't) promise (?:anything )?(?:about|for|after) (?:tomorrow|next week|later|"
        r"tonight|the weekend|after that)",
        family="hedge",
    ),
    # Ideation that recurs: "the thoughts come back" names thoughts the person knows.
    sign(
        "en.sign.thoughts_return",
        S,
        2,
        r"the thoughts (?:come back|keep coming|are back|return|won't stop|don't stop|get louder|get worse|keep "
        r"getting worse)",
        family="thoughts",
    ),
    # Helpers: what another person says or does, with the signs above.
    sign(
        "en.sign.helper_signs",
        H,
        2,
        r"(?:giving|gave|given|gives) (?:me |us |away )?(?:his|her|their) (?:stuff|things|belongings|possessions|clothes|games|"
        r"[a-z]+ collection|[a-z]+)(?: away)?",
        rf"(?:{_THIRD}|he|she|they)(?:'s| has| is)? (?:bought|got|ordered|got hold of) (?:a |some )?(?:rope|gun|"
        r"noose|charcoal|firearm)",
        family="helper_signs",
    ),
    rule(
        "en.sign.helper_ready_to_go",
        H,
        "high",
        rf"{_SAYS}(?: [a-z'-]+){{0,3}} (?:that )?(?:he's|she's|they're|he is|she is|they are) ready to (?:go|die|leave "
        r"this world|be gone|be with [a-z]+)" + END,
        rf"{_THIRD}(?:'s| has| is)?(?: been)? (?:talking|talks|talked|writing|posting|joking) about (?:not wanting to "
        r"(?:be here|be alive|live|be around|exist)|being better off dead|ending it)",
        rf"{_THIRD}(?:'s| is| was| seems| might be| could be) (?:so )?suicidal",
        negatable=False,
    ),
    # C-SSRS 1 as relief or ease: an ease, a relief or gratitude, and one's own end or
    # absence, in either order, in one sentence ("it would be so easy to not be here",
    # "jumping would be the easiest thing", "if my heart stopped I'd be grateful").
    sign(
        "en.sign.ease_of_ending",
        S,
        3,
        r"(?:easy|easier|easiest|simpler|simplest|quick|quicker|grateful|relieved|a relief|peaceful|at peace|a mercy) "
        r"(?:[a-z'-]+ ){0,6}(?:to not be here|to not be around|not to be here|to not exist|to die|to just die|to jump|"
        r"to end it|to disappear for good|to let go|to step off|to not wake up|if i (?:died|was gone|were gone|was dead|"
        r"were dead|wasn't here|weren't here|didn't wake up|never woke up|used the [a-z]+|jumped|did it)|if my heart "
        r"(?:stopped|gave out|just stopped)|if i just (?:died|stopped breathing|didn't wake up))",
        r"(?:jumping|dying|death|ending it|not being here|not waking up|an overdose|overdosing|not existing) "
        r"(?:[a-z'-]+ ){0,3}(?:would be|is|seems|feels|sounds) (?:the |so |like the )?(?:easiest|easy|simplest|best|"
        r"quickest|only) (?:thing|way|option|way out|answer|solution)",
        r"if (?:my heart|i) (?:just )?(?:stopped|stopped breathing|didn't wake up|never woke up|died)(?: [a-z'-]+){0,4} "
        r"i'd be (?:grateful|relieved|glad|happy|at peace|fine with it|ok with it|okay with it)",
        r"(?:wish|wishing|wished) i (?:didn't|did not|wouldn't|would not) have to (?:come up|wake up|come back|breathe)",
        family="wish_dead",
    ),
    # C-SSRS 6: the means kept in mind; an interrupted attempt (C-SSRS "aborted or
    # self-interrupted attempt"); research in forums.
    sign(
        "en.sign.means_in_mind",
        S,
        3,
        rf"(?:got|have|i've got|kept|keeping|stopped taking) (?:my |[a-z]+'s |my [a-z]+'s |the |some |all )?(?:old )?"
        rf"(?:[a-z-]+ )?(?:{_PILLS}|pills|tablets)(?: [a-z'-]+){{0,4}} (?:thinking about them|thinking of them|"
        r"keeping them|saving them|kept them|and (?:i've been|i keep|i can't stop) (?:thinking|looking at them))",
        r"(?:got as far as|came close to|almost|nearly|started) (?:tying|taking|swallowing|jumping|cutting|doing it|"
        r"going through with it|climbing over)(?: [a-z'-]+){0,4} (?:before i stopped|but i stopped|then i stopped|"
        r"but i couldn't|but didn't|and then stopped|before i (?:backed out|froze|changed my mind))",
        r"(?:forums?|websites?|sites|videos|threads|articles|pages|subreddits?|groups) (?:about|on|for|with) "
        r"(?:suicide|suicide methods|ways to die|how to die|killing yourself|methods|painless ways)",
        r"(?<!his )(?<!her )(?<!their )suicide methods",
        family="method",
    ),
    # AFSP "not being around": intent not to be alive at a date; arrangements "if
    # anything happens to me".
    sign(
        "en.sign.gone_by_then",
        S,
        3,
        rf"(?:no intention of|not intending to|don't intend to|no plans? (?:on|to|of)|make sure i'm|make sure i am) "
        rf"(?:being |be |staying |stay )?(?:alive|here|around|gone) {_LATER}",
        rf"(?:i'll|i will|i'm going to) be (?:gone|dead) {_LATER}",
        family="not_around",
    ),
    sign(
        "en.sign.if_anything_happens",
        S,
        2,
        r"(?:look after|take care of|have|keep|feed) (?:my|the) [a-z]+ (?:if|when|in case) (?:anything|something) "
        r"(?:happens|happened) to me",
        r"(?:when|after|once) i'm (?:gone|not here|not around)(?! for)",
        family="preparation",
    ),
    # Self-hatred and the wish that it be over: weak each; together a clinician asks.
    sign(
        "en.sign.self_hate",
        S,
        1,
        r"(?:can't stand|hate|sick of|tired of) being me",
        r"(?:can't stand|hate|loathe|despise) myself(?: so much)?" + END,
        family="self_hate",
    ),
    sign(
        "en.sign.want_it_over",
        S,
        2,
        r"(?:want|wish|need) (?:it|this|everything|it all|all of it|all of this) to (?:be over|end|stop)" + END,
        family="passive_wish",
    ),
    # Helpers: the other person's words reported, their goodbyes, their worry.
    rule(
        "en.sign.helper_without_them",
        H,
        "high",
        r"(?:says|said|saying|thinks|feels|believes|keeps saying|has been saying|told me)(?: that)? (?:his|her|their|"
        r"the) (?:[a-z]+ ){0,2}(?:would|'d|will) be (?:better|better off|happier|fine|easier) without (?:him|her|them)",
        r"(?:voices?|someone|something|a [a-z]+'s voice|a voice)(?: [a-z'-]+){0,3} (?:telling|tells|told|saying|says) me "
        r"(?:that )?i (?:don't|do not) deserve to (?:live|be alive|exist)",
        r"(?:voices?|a [a-z]+'s voice|a voice)(?: [a-z'-]+){0,3} (?:telling|tells|told|saying|says) me (?:that )?i "
        r"(?:deserve to die|should die|should be dead|should kill myself|must die)",
        negatable=False,
    ),
    sign(
        "en.sign.helper_goodbye",
        H,
        2,
        rf"(?:{_THIRD}|he|she|they)(?:'s| has| have| is)?(?: been)? (?:saying|said|says) goodbyes? (?:to (?:people|everyone|"
        r"us|friends|his friends|her friends|their friends))?",
        family="helper_goodbye",
    ),
    sign(
        "en.sign.helper_worried_about",
        H,
        1,
        rf"(?:worried|scared|concerned|frightened|afraid) (?:about|for) {_THIRD}",
        family="helper_worry",
    ),
    # C-SSRS 1: indifference to waking or living; reunion with someone who died (a wish
    # to die that names them: "I want to be with my wife again").
    sign(
        "en.sign.indifferent_to_living",
        S,
        3,
        r"(?:stopped caring|don't care|do not care|no longer care|don't really care|wouldn't care|couldn't care less) "
        r"(?:whether|if) i (?:wake up|live|die|make it|survive|see tomorrow|am alive|'m alive|stay alive)",
        r"(?:want|wish|long|ready|going|need) to (?:be with|join|see|rejoin|meet) (?:my [a-z]+|him|her|them) "
        r"(?:again|in heaven|on the other side|wherever (?:he|she|they) (?:is|are))(?: [a-z'-]+){0,8} (?:passed|died|"
        r"gone|lost|dead|death)",
        r"(?:don't|do not) want to (?:be here|live|go on|carry on) without (?:her|him|them)",
        family="wish_dead",
    ),
    # C-SSRS 4-5 intent and plan: how I'd do it, made to look like an accident; the means
    # kept at hand "in case I decide"; the decision made, and peace with it; the night.
    sign(
        "en.sign.intent_plan",
        S,
        3,
        r"how (?:i'd|i would|i'll|i will|i could|i'm going to|i am going to|to) do it (?:so (?:it|that it) (?:looks|seems) "
        r"like an accident|without (?:anyone|them) knowing)",
        r"(?:look|looks|seem|seems|appear) like an accident",
        r"(?:just )?in case i (?:decide|decide to|go through with it|need it|want to)" + END,
        r"(?:tonight|today|this weekend|this is|tomorrow) (?:is|feels like|might be|could be|will be|'s) (?:the night|"
        r"the day|the time|it)(?= ,| \.|$)",
        family="plan",
    ),
    sign(
        "en.sign.working_out_how",
        S,
        2,
        r"(?:working out|worked out|figuring out|figured out|planning|deciding|thinking through|lying awake (?:working "
        r"out|thinking about)) how (?:i'd|i would|i'll|i will|i could|i'm going to) do it",
        family="plan",
    ),
    sign(
        "en.sign.decision",
        S,
        2,
        r"(?:i've |i have )?(?:made|reached) (?:my|the|a) (?:decision|choice)" + END,
        family="decision",
    ),
    sign(
        "en.sign.at_peace",
        S,
        2,
        r"(?:at peace|made peace|ok|okay|fine) with (?:it|my decision|the decision|my choice|that decision)" + END,
        r"nothing matters (?:now|anymore|any more)" + END,
        family="peace",
    ),
    sign(
        "en.sign.who_gets_what",
        S,
        2,
        r"(?:list|note|plan) of who (?:gets|will get|should get|can have) (?:what|my [a-z]+)" + END,
        family="preparation",
    ),
    sign(
        "en.sign.researching_overdoses",
        S,
        3,
        rf"{_RESEARCH} (?:about |up |into |on )?(?:overdoses|overdosing|how to overdose|lethal doses|fatal doses|"
        r"suicide|ways to die|how to die|ways of dying|how people die)",
        r"(?:take|taking|swallow|swallowing|took|swallowed|avale) (?:a |the )?(?:whole|entire|full) (?:bottle|box|pack|"
        r"packet|strip|tub|jar) of",
        family="means",
    ),
    # C-SSRS 6 and its "interrupted attempt": the means in hand, or everything in the
    # medicine cabinet; 988 "looking for a way": what a number of tablets would do.
    sign(
        "en.sign.means_in_hand",
        S,
        3,
        rf"(?:sit|sat|sitting|hold|holding|held|holding onto) (?:with )?(?:the|a|my) (?:bottle|box|packet|pack|handful|"
        rf"strip|tub) of (?:[a-z-]+ )?(?:{_PILLS}|pills|tablets)",
        rf"(?:{_PILLS}|pills|tablets|knife|blade|razor|rope|gun) in my (?:hand|hands|lap|pocket)",
        r"(?:take|taking|swallow|swallowing|down) (?:everything|all|every pill|all the pills|whatever is) (?:in|from) "
        r"(?:the|my) (?:medicine cabinet|medicine cupboard|bathroom cabinet|first aid kit|pill box|pill drawer)",
        rf"what (?:would|will|does|could) happen (?:if|when) (?:you|i|someone|a person|one|somebody) (?:take|took|takes|"
        rf"swallow|swallowed|swallows) (?:[0-9]+|ten|twenty|thirty|forty|fifty|a hundred|all|lots of|loads of|a whole) "
        rf"(?:[a-z-]+ )?(?:{_PILLS}|pills|tablets)",
        family="means",
    ),
    # 988 "looking for a way" x ease: a means or a place, and how easy "it" would be.
    sign(
        "en.sign.means_and_ease",
        S,
        3,
        r"(?:train|trains|tracks|bridge|roof|ledge|pills|tablets|rope|gun|knife|cliff|river|sea|balcony|traffic|"
        r"motorway)(?: [a-z'-]+){0,8} (?:thinking|think|thought|wondering) (?:about )?how (?:easy|quick|simple|fast) "
        r"it(?:'d| would| could| might) be",
        r"(?:walk|walked|walking|step|stepped|stepping|run|ran|wander|wandered) (?:out )?into (?:the )?(?:traffic|road)"
        r"(?: [a-z'-]+){0,4} (?:and|hoping|wishing) (?:hope|hoping|wish|wishing)?",
        family="method",
    ),
    # "It", "do it", "the day": euphemisms that carry the sign only with what is around
    # them: isolation arranged (nobody there to stop it), a day to be picked, a plan held.
    sign(
        "en.sign.arranged_alone",
        S,
        2,
        r"(?:when|while|once) (?:everyone|everybody|nobody|no one|they|the kids|my wife|my husband|my partner) "
        r"(?:is|are|'s|'re) (?:out|away|asleep|gone|not home|at work)",
        family="alone",
    ),
    sign(
        "en.sign.euphemism",
        S,
        1,
        r"(?:i'll|i will|i'm going to|going to|i'm gonna) do it (?:on|this|next|tonight|tomorrow|soon)",
        rf"(?:i )?(?:have|i've got|got|made) a plan{END}",
        family="euphemism",
    ),
    sign(
        "en.sign.pick_the_day",
        S,
        2,
        r"(?:pick|choose|set|picked|chose|chosen|set) (?:the|a) (?:day|date)(?= ,| \.|$)",
        family="plan",
    ),
    sign(
        "en.sign.note_torn",
        S,
        2,
        r"(?:wrote|written|writing) (?:a|the) (?:note|letter) (?:and|then)(?: [a-z'-]+){0,2} (?:tore|ripped|deleted|"
        r"burned|burnt|threw|hid) it",
        family="preparation",
    ),
    # 988 "no reason to live", as a question; finality "if I'm not here tomorrow".
    rule(
        "en.sign.why_bother_living",
        S,
        "high",
        r"why (?:bother|even bother|keep|go on|carry on|should i keep|should i go on) (?:living|being alive|trying to "
        r"live|waking up|staying alive|existing)",
        rf"if i'm (?:not|no longer) (?:here|around|alive) (?:tomorrow|tonight|in the morning|next week|{_LATER})",
        r"(?:thinking|thought|think|imagining|imagine|picturing|planning|plan) (?:about )?(?:how )?my (?:own )?funeral",
        negatable=False,
    ),
    # 988 / AFSP burden: the others stuck with me; kinder to let them go.
    sign(
        "en.sign.stuck_with_me",
        S,
        1,
        r"(?:stuck|saddled|burdened) with me",
        r"(?:have to|has to) (?:put up with|deal with|look after) me",
        family="burden",
    ),
    sign(
        "en.sign.kinder_to_go",
        S,
        2,
        r"(?:kinder|fairer|better for them|better for everyone) to (?:let them go|leave|go|disappear|not be here|"
        r"not be around|set them free)",
        family="without_me",
    ),
    # == French ==========================================================================
    # C-SSRS 1-2, 3114 "idées suicidaires": a first-person frame x one's own end or a method.
    rule(
        "fr.sign.wish_or_thought",
        S,
        "high",
        rf"{_ENVIE_FR}{_ENVIE_GAP_FR} {_FIN_SOI}",
        r"(?:si je (?:ne )?(?:me reveillais|me reveille) (?:pas|plus)(?: [a-z'-]+){0,3}|mourir|la mort)(?: ,)? "
        r"(?:ce serait|ca serait|serait|c'est|ca a l'air|me semble) (?:un )?(?:soulagement|une delivrance|la paix|"
        r"reposant|apaisant|doux|une liberation|mieux)",
        r"(?:je pense|je pense de plus en plus|je pense souvent|je pense tout le temps|je ne pense qu') a la mort(?! de | d'| du | des )",
        negation_inside=False,
        gate=vocabulary_gate(_ENVIE_FR) | {"mourir", "mort", "reveillais", "reveille"},
    ),
    # C-SSRS 1, 3114 "ne plus vouloir vivre": no more wish to live or to go on.
    rule(
        "fr.sign.no_wish_to_live",
        S,
        "high",
        r"(?:n'ai|ai) (?:plus|pas|plus aucune|aucune) envie (?:de |d')(?:vivre|etre en vie|etre la|exister|continuer a "
        r"vivre|me reveiller|etre vivante?)",
        r"je (?:ne |n')?(?:veux|voudrais|souhaite|peux) (?:plus|pas) (?:continuer (?:a |de )?)?(?:vivre|exister|etre la|"
        r"etre en vie|me reveiller)",
        rf"je (?:ne |n')?(?:veux|voudrais) (?:plus|pas) continuer{END}",
        negatable=False,
    ),
    # C-SSRS 1 / 3114: death as the only solution; rather dying than going on.
    rule(
        "fr.sign.death_as_solution",
        S,
        "high",
        r"(?:la mort|mourir|en finir|le suicide|disparaitre) (?:me )?(?:parait|semble|est|serait|reste|devient) "
        r"(?:etre )?(?:la seule|l'unique|ma seule|une|la) (?:solution|issue|option|porte de sortie|delivrance|"
        r"soulagement|echappatoire)",
        r"(?:je prefere|je prefererais|plutot) (?:mourir|etre morte?|crever|en finir) (?:que de |que d'|qu'|que |plutot "
        r"que )(?:continuer|vivre|rester|supporter|tenir)",
        r"personne (?:ne )?(?:le )?(?:remarquerait|verrait|s'apercevrait|regretterait|pleurerait) (?:rien )?si je "
        r"(?:mourais|etais morte?|me tuais|me suicidais)",
        rf"je (?:ne )?me vois (?:pas|mal|plus) (?:encore )?(?:la|ici|en vie|vivante?) {_PLUS_TARD_FR}",
        r"(?:je ne promets|je promets|je peux pas promettre|je ne peux pas promettre) rien pour (?:demain|apres|la suite|"
        r"plus tard|ce week-end)",
        negatable=False,
    ),
    sign(
        "fr.sign.preferer_mourir",
        S,
        2,
        r"(?:je prefere|je prefererais|plutot) (?:mourir|etre morte?|crever) (?:que|plutot que)",
        family="rather_dead",
    ),
    sign(
        "fr.sign.possessions",
        S,
        2,
        r"donn(?:er|e|es|ent|ais|ait|ant) (?:toutes |tous )?mes (?:affaires|choses|objets|bijoux|vetements|livres|"
        r"jeux|[a-z]+ preferee?s?)",
        family="preparation",
    ),
    sign(
        "fr.sign.helper_means",
        H,
        2,
        rf"(?:{_TIERS_FR}|il|elle) (?:a achete|achete|s'est procure|a commande|a trouve) (?:une corde|une arme|un pistolet|"
        r"un fusil|du charbon|des medicaments|des cachets)",
        family="helper_signs",
    ),
    # C-SSRS 1 / 3114 as relief: simpler, a relief, if I died; the wish to leave.
    sign(
        "fr.sign.ease_of_ending",
        S,
        3,
        r"(?:plus simple|plus facile|un soulagement|mieux|la paix|reposant|une delivrance|tellement simple) si je "
        r"(?:mourais|disparaissais|n'etais plus la|etais plus la|partais pour de bon|etais morte?|ne me reveillais pas|"
        r"ne me reveillais plus|me tuais)",
        r"si je (?:mourais|disparaissais|n'etais plus la|etais plus la|ne me reveillais (?:pas|plus))(?: ,)? (?:ce serait|"
        r"ca serait|tout serait) (?:plus simple|plus facile|un soulagement|mieux|la paix)",
        r"personne (?:ne )?(?:verrait|remarquerait|s'apercevrait)(?: [a-z'-]+){0,2} si (?:j'etais|je n'etais|je ne serais) "
        r"(?:plus|pas) la",
        r"(?:ne )?(?:supporte|supporter) plus d'etre (?:en vie|vivante?)",
        family="wish_dead",
    ),
    sign("fr.sign.want_to_leave", S, 2, rf"je (?:veux|voudrais|vais) (?:juste )?partir{END}", family="passive_wish"),
    sign(
        "fr.sign.will_not_last",
        S,
        2,
        r"je (?:ne )?(?:tiendrai|vais tenir|tiens) (?:pas|plus) (?:jusqu'a|jusqu'au|longtemps|encore)",
        family="unbearable",
    ),
    # C-SSRS 6 and 988 "looking for a way": means bought bit by bit to have enough; the
    # urge to jump where one could.
    sign(
        "fr.sign.means_gathered",
        S,
        3,
        r"(?:achete|accumule|garde|stocke|mis de cote|recupere|collecte|amasse) (?:[a-z'-]+ ){0,5}(?:pour|afin d') en "
        r"avoir assez",
        r"(?:pont|toit|fenetre|falaise|quai|train|balcon|voie ferree|rails|immeuble)(?: [a-z'-]+){0,6} (?:j'ai eu )?envie "
        r"de (?:sauter|me jeter|me laisser tomber)",
        r"envie de (?:sauter|me jeter|me laisser tomber) (?:du|d'un|d'une|de la|par la|sous le|sous un) (?:pont|toit|"
        r"fenetre|falaise|quai|train|balcon|immeuble|metro)",
        family="method",
    ),
    rule(
        "fr.sign.helper_weary",
        H,
        "high",
        r"qu'(?:il|elle) (?:est|se sent) (?:fatiguee?|lasse?|epuisee?) de vivre",
        r"qu'(?:il|elle) veut (?:rejoindre|retrouver) (?:mon|ma|son|sa|ses) [a-z]+ (?:au ciel|la-haut|dans la mort)?",
        negatable=False,
    ),
    # C-SSRS 1-5 in French, as the English above: no fear of dying, reunion with the dead,
    # a plan made to look like an accident, the decision and peace with it, who gets what.
    sign(
        "fr.sign.intent_plan",
        S,
        3,
        r"(?:ressemble|ressemblerait|passe|passerait|paraisse) (?:a|pour) un accident",
        r"(?:je veux|je voudrais|j'aimerais|je vais) (?:rejoindre|retrouver) (?:ma|mon|mes) [a-z]+(?: (?:[a-z'-]+|,)){0,8} "
        r"(?:partie?|decedee?|morte?|disparue?|l'an dernier|au ciel|la-haut)",
        r"(?:je ferais|je donnerais) (?:n'importe quoi|tout) pour (?:ne plus exister|ne plus etre la|mourir|disparaitre|"
        r"ne plus me reveiller|ne plus vivre)",
        r"(?:qu'est-ce qui se passe|que se passe-t-il|ca fait quoi) si (?:on|je|tu) (?:avale|avales|prend|prends|prenait) "
        r"(?:toute une|toute la|une) (?:boite|plaquette|bouteille|tube)",
        family="plan",
    ),
    sign(
        "fr.sign.decision",
        S,
        2,
        r"(?:c'est decide|j'ai pris ma decision|ma decision est prise)" + END,
        family="decision",
    ),
    sign("fr.sign.at_peace", S, 2, r"(?:en paix|sereine?) avec (?:ma|cette) decision", family="peace"),
    sign(
        "fr.sign.no_fear",
        S,
        2,
        r"je n'ai (?:plus|pas) peur de (?:mourir|la mort)",
        r"(?:la mort|mourir) ne me fait (?:plus|pas) peur",
        family="no_fear",
    ),
    sign(
        "fr.sign.who_gets_what",
        S,
        2,
        r"(?:la )?liste de qui (?:aura|recevra|prendra|gardera) quoi",
        family="preparation",
    ),
    sign("fr.sign.after_me", S, 2, r"(?:apres moi|quand je ne serai plus la|apres ma mort)" + END, family="not_around"),
    sign(
        "fr.sign.thinking_each_night",
        S,
        1,
        r"j'y pense (?:tous les soirs|tout le temps|chaque jour|chaque soir|tous les jours|sans arret)",
        family="thoughts",
    ),
    sign("fr.sign.nobody_would_miss", S, 3, r"personne (?:ne )?(?:me )?regretterait", family="wish_dead"),
    sign(
        "fr.sign.without_a_parent_like_me",
        S,
        3,
        r"(?:mieux|plus heureux|plus heureuses?) sans (?:un|une) (?:pere|mere|mari|femme|fils|fille|ami|amie) comme moi",
        family="without_me",
    ),
    # The same signs in French: the means in hand, the medicine cabinet, a number of
    # tablets; ease and a means; "le faire cette fois"; a day to choose; "si je ne suis
    # plus la demain"; "pourquoi continuer a vivre"; tired of existing.
    sign(
        "fr.sign.means_in_hand",
        S,
        3,
        rf"(?:je tiens|je tenais|j'ai tenu|tenir) (?:la|une|ma) (?:boite|plaquette|tube|poignee) (?:de |d')(?:[a-z-]+ )?"
        rf"{_MEDS_FR}",
        rf"{_MEDS_FR} dans (?:ma|mes) main",
        r"prendre (?:tout ce qu'il y a|tous les medicaments|toute la boite|tout) (?:dans|de) (?:l'armoire a pharmacie|"
        r"la pharmacie|la boite a pharmacie|la trousse)",
        rf"(?:qu'est-ce qui arriverait|que se passerait-il|qu'est-ce qui se passerait|ca ferait quoi) si (?:quelqu'un|on|je|"
        rf"une personne) (?:prenait|avalait|prends|prenais|avalais) (?:[0-9]+|dix|vingt|trente|quarante|cinquante|cent|"
        rf"tous|toute une boite de) (?:[a-z-]+ )?{_MEDS_FR}",
        r"(?:train|trains|pont|voie|rails|medicaments|corde|fenetre|toit)(?: [a-z'-]+){0,8} (?:en pensant|je pense|je me "
        r"dis|pense) (?:que )?(?:ce serait|ca serait|c'est|ce sera) (?:facile|simple|rapide)",
        family="means",
    ),
    rule(
        "fr.sign.finality",
        S,
        "high",
        r"(?:je vais|je compte|je veux) (?:le faire|passer a l'acte|aller jusqu'au bout) (?:cette fois|pour de bon|"
        r"ce soir|demain)(?=$)",
        r"pourquoi (?:continuer a vivre|vivre encore|rester en vie|continuer de vivre|se battre pour vivre)",
        rf"si je (?:ne suis|suis) (?:plus|pas) la (?:demain|ce soir|la semaine prochaine|{_PLUS_TARD_FR})",
        r"(?:fatiguee?|lasse?|epuisee?|marre) d'exister",
        negatable=False,
    ),
    sign("fr.sign.pick_the_day", S, 2, r"choisir (?:le jour|la date)(?= ,| \.|$)", family="plan"),
    sign("fr.sign.have_a_plan", S, 1, rf"j'ai un plan{END}", family="euphemism"),
    # 3114 / 988 "no reason to live": nothing worth going on for.
    rule(
        "fr.sign.no_reason",
        S,
        "high",
        r"(?:rien|plus rien|la vie|ma vie|ca|cette vie) ne vaut (?:plus )?(?:la peine|le coup) (?:de (?:continuer|vivre|"
        r"se battre|me battre|rester)|d'etre vecue?)",
        r"(?:plus|aucune|pas de|plus aucune|pas une) (?:seule )?raison de (?:continuer|vivre|rester|me battre|tenir)",
        r"je (?:ne )?vois (?:pas|plus) (?:comment|pourquoi) (?:continuer a vivre|vivre|rester en vie|continuer comme ca)",
        negatable=False,
    ),
    # 988 / AFSP burden, strongest form: better off without me.
    sign("fr.sign.without_me", S, 3, _SANS_MOI, family="without_me"),
    # AFSP "not being around" x a future time; "no longer a problem for anyone".
    sign(
        "fr.sign.not_around_later",
        S,
        3,
        rf"je (?:ne )?(?:serai|vais etre) (?:plus|pas) (?:la|ici|en vie) {_PLUS_TARD_FR}",
        r"(?:je ne serai|je serai) plus (?:un |une )?(?:probleme|poids|fardeau|charge|souci) pour (?:personne|"
        r"vous|toi|eux|qui que ce soit|ma famille)",
        family="not_around",
    ),
    # AFSP "saying goodbye": thanks and adieu, the final farewell of French.
    sign(
        "fr.sign.adieu",
        S,
        3,
        r"merci(?: [a-z'-]+){0,6}(?: ,)? (?:et )?adieu",
        r"(?:vous|te) dire (?:merci et )?adieu",
        family="goodbye",
    ),
    # C-SSRS 6: the letter written, the means put aside; 988 "looking for a way".
    sign(
        "fr.sign.preparation",
        S,
        3,
        r"(?:ecrit|ecrire|ecris|redige|laisse|prepare|preparee) (?:ma|mes|une|des) (?:derniere |dernieres )?lettres?(?! de (?:motivation|"
        r"demission|candidature|reclamation|recommandation))(?: (?:a|pour) (?:mes|ma|mon|tout|chacun))?",
        rf"(?:mis|mets|mettre) de cote (?:tous |toutes )?(?:mes |des |les )?(?:[a-z-]+ )?{_MEDS_FR}",
        rf"(?:quels?|quelles?) (?:[a-z-]+ ){{0,3}}{_MEDS_FR} (?:sont|est|seraient|serait) (?:les plus )?(?:mortel(?:le)?s?|"
        r"letales?|dangereu(?:x|ses?)) (?:a forte dose|a haute dose|en grande quantite|si on en prend beaucoup)",
        rf"(?:quels?|quelles?) (?:[a-z-]+ ){{0,3}}{_MEDS_FR} (?:sont|est) (?:mortel(?:le)?s?|letales?)",
        family="preparation",
    ),
)

RULES: tuple[Rule, ...] = _PHRASES + _GRAMMAR
