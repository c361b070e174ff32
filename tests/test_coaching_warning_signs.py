"""The warning-sign families of the data files (lexicon/<locale>/warning_signs.yaml) added for
issue #19 from the blind splits (dev15 on): each must catch a wording of its sign that is not a copy
of the split's sentences, and must stay silent on a habit sentence that shares its words."""

from __future__ import annotations

import pytest

from cantata.pipelines.coaching.guard import RULES, assess
from cantata.pipelines.coaching.learned import OFF as RULES_ONLY
from cantata.pipelines.coaching.safety import tier_rank
from cantata.pipelines.coaching.tolerant import BOUNDARY, tolerant

_BY_ID = {r.id: r for r in RULES}

# (rule id, a wording it must catch, a habit sentence it must not)
FAMILIES = [
    (
        "en.warning.self_harm_act",
        "I burned my arm with a cigarette again last night",
        "I burned my arm on the oven tray",
    ),
    ("en.warning.self_harm_emergency", "I think I cut too deep, it won't close", "I cut too much sugar too fast"),
    ("en.warning.overdose_taken", "I swallowed all the sleeping pills in the drawer", "I took all the cigarettes out"),
    ("en.warning.means_at_hand", "the noose is tied and hanging in the loft", "the washing line is up in the garden"),
    (
        "en.warning.means_gathered",
        "I've been stockpiling my sleeping pills for weeks",
        "I've been saving up for a bike",
    ),
    (
        "en.warning.plan_method",
        "I keep throwing myself in front of the train in my head, I've planned where",
        "I ran in front of the bus to catch it",
    ),
    (
        "en.warning.plan_with_time",
        "by the time anyone reads this I'll be gone",
        "by the time I read the label I'd eaten half the bag",
    ),
    ("en.warning.explicit_active", "I keep having thoughts of taking my own life", "I keep having thoughts of cake"),
    (
        "en.warning.command_voices_more",
        "a voice keeps ordering me to walk into traffic",
        "my trainer keeps telling me to walk more",
    ),
    (
        "en.warning.lethality_question",
        "is a 9th storey balcony high enough",
        "is a 9th storey flat high enough for views",
    ),
    (
        "en.warning.farewell_more",
        "none of it is anyone's fault, I want you to know that",
        "none of the relapses was my fault",
    ),
    ("en.warning.burden_more", "I'm a millstone around my family's neck", "the mortgage is a millstone around my neck"),
    ("en.warning.hopeless_living", "honestly why am I even still alive", "why am I even still awake at 2am"),
    (
        "en.warning.secrecy_about_risk",
        "I can't tell my therapist about the suicidal thoughts",
        "I can't tell my therapist about the takeaway",
    ),
    (
        "en.warning.helper_more",
        "my flatmate joked about hanging and then laughed it off",
        "my flatmate joked about quitting",
    ),
    (
        "en.warning.passive_wish_more",
        "not waking up sounds peaceful some nights",
        "an early night sounds peaceful",
    ),
    ("en.warning.hint", "I keep asking myself what I'm doing here at all", "I keep asking myself what to cook"),
    ("en.warning.farewell_hint", "I wanted somebody to know, that's all", "I wanted somebody to know I ran 5k"),
    (
        "en.warning.self_harm_disclosure",
        "relapsed with self-harm over the weekend, 3 months clean before that",
        "relapsed on cigarettes over the weekend",
    ),
    (
        "en.warning.means_location",
        "I'm standing on the edge of the roof right now",
        "I'm writing this from the rooftop bar, great cocktails",
    ),
    (
        "en.warning.refuses_to_be_stopped",
        "please don't alert anyone, I mean it",
        "please don't alert the neighbours about the party",
    ),
    (
        "en.warning.refuses_help_named",
        "This isn't a cry for help, I just wanted it written down",
        "This is a call for help with my meal plan",
    ),
    (
        "en.warning.retracted_method",
        "I was only kidding about the pills, forget it",
        "I was only kidding about the pizza",
    ),
    ("en.warning.euphemism_time", "I'm doing it in twenty minutes", "I'm doing my stretches in twenty minutes"),
    (
        "en.warning.research_method",
        "been googling methods of killing myself half the night",
        "been googling methods of killing weeds",
    ),
    (
        "en.warning.means_taken_out",
        "I got my father's shotgun out of the cabinet",
        "I got my father's toolbox out of the cabinet",
    ),
    (
        "en.warning.command_voices_said",
        "the voice in my head keeps telling me I should jump",
        "my coach keeps telling me I should jump higher",
    ),
    (
        "en.warning.command_voices_hearing",
        "I'm hearing voices again and they won't stop",
        "I'm hearing good things about this gym",
    ),
    (
        "en.warning.helper_intent_reported",
        "my flatmate told me she's going to end it tonight",
        "my flatmate told me she's going to end her lease",
    ),
    (
        "en.warning.helper_attempt_history",
        "my brother attempted last spring and he's low again",
        "my brother attempted a marathon last spring",
    ),
    (
        "en.warning.helper_history",
        "my mum has been strangely calm all of a sudden after months of crying",
        "my mum has been calmer since she took up gardening",
    ),
    ("en.warning.farewell_finality", "goodbye for good everyone", "goodbye for now everyone, see you Monday"),
    ("en.warning.farewell_soft", "I'm at peace.", "I'm at the gym."),
    ("en.warning.affairs_soft", "I rehomed my cats to a friend", "I rehomed my plants to a bigger pot"),
    ("en.warning.not_around_more", "I won't be back.", "I won't be back late tonight."),
    (
        "en.warning.cover_story",
        "I told them I'm off on a trip. not a holiday.",
        "It's not a holiday, it's a work trip to Leeds.",
    ),
    ("en.warning.preparation_ready", "it's all in place.", "it's all in place for the party on Sunday."),
    ("en.warning.courage_hint", "now I'm waiting for the nerve.", "now I'm waiting for the nerve pain to settle"),
    ("en.warning.plan_time_fragment", "I've chosen Saturday.", "I've chosen Saturday for my long run."),
    (
        "en.warning.time_alone_fragment",
        "Tomorrow night when everybody is asleep",
        "Tomorrow night when my wife is at work I'll finally read my book",
    ),
    (
        "en.warning.at_the_edge",
        "been sat on the ledge for an hour, stood on the railing.",
        "been sat on the sofa for an hour",
    ),
    (
        "en.warning.passive_wish_widened",
        "I wouldn't mind if I passed in my sleep tonight",
        "I wouldn't mind if I passed my driving test tonight",
    ),
    (
        "en.warning.hopeless_more",
        "there's no reason for me to keep living",
        "there's no reason for me to stay at this gym",
    ),
    ("en.warning.hopeless_hint", "nothing will ever get better.", "nothing will ever get better than this pizza"),
    (
        "en.warning.unbearable_hint",
        "the hurt never goes away.",
        "the hurt never goes away quickly after leg day, right?",
    ),
    (
        "en.warning.burden_finality",
        "they'd mourn for a few weeks and then move on",
        "they'd mourn for a few weeks when the shop closed",
    ),
    ("en.warning.burden_hint", "honestly I'm draining everyone and", "honestly this diet is draining my energy"),
    (
        "en.warning.explicit_more",
        "next I'm deleting myself, not just the apps",
        "been thinking about unfollowing my ex",
    ),
    ("en.warning.dark_not_joking", "and no, I'm not joking.", "I'm not joking, this cake is amazing"),
    (
        "en.warning.own_funeral",
        "want my body looking decent for the funeral.",
        "want my garden looking decent for the party.",
    ),
    (
        "en.warning.means_saved",
        "the sleeping pills I've been hoarding are in the drawer",
        "the sleeping pills I was prescribed are in the drawer",
    ),
    ("fr.warning.hint", "j'ai plus rien a faire ici, plus rien", "j'ai plus rien a faire ce soir"),
    ("fr.warning.farewell_hint", "je voulais que quelqu'un le sache", "je voulais que quelqu'un m'aide a cuisiner"),
    ("fr.warning.means_hint", "j'ai des plaquettes de somniferes dans le tiroir", "j'ai des plaquettes de chocolat"),
    (
        "fr.warning.lethality_question",
        "il en faut combien pour ne plus se reveiller ?",
        "il en faut combien pour faire un gateau ?",
    ),
    ("fr.warning.self_harm_act", "je me scarifie encore les bras le soir", "je me coupe une part de gateau"),
    ("fr.warning.self_harm_emergency", "je viens de me taillader le bras", "je viens de me coucher"),
    ("fr.warning.explicit_active", "j'ai envie de mettre fin a mes jours", "j'ai envie de mettre fin au grignotage"),
    ("fr.warning.overdose_taken", "j'ai avale toute la boite de somniferes", "j'ai mange toute la boite de biscuits"),
    ("fr.warning.means_at_hand", "le fusil est charge, il est a cote de moi", "le telephone est charge"),
    ("fr.warning.means_gathered", "je garde des comprimes de cote depuis un mois", "je mets de l'argent de cote"),
    ("fr.warning.plan_more", "je sais comment et ou, c'est prevu", "je sais comment arreter de fumer"),
    ("fr.warning.refuses_help_more", "j'ai efface le numero du 3114", "j'ai efface le numero de mon ex"),
    ("fr.warning.farewell_more", "on se reverra jamais, prends soin de toi", "on se reverra lundi pour le bilan"),
    ("fr.warning.burden_more", "je suis comme un poids pour mes enfants", "je mange comme un ogre le soir"),
    ("fr.warning.hopeless_living", "pourquoi je suis encore en vie", "pourquoi je suis encore debout a 2h"),
    ("fr.warning.helper_more", "ma soeur dit qu'elle veut se foutre en l'air", "ma soeur dit qu'elle veut arreter"),
    ("fr.warning.passive_wish_more", "je voudrais disparaitre et ne plus jamais revenir", "je voudrais revenir demain"),
    (
        "fr.warning.passive_wish_conditional",
        "si une voiture me fauchait en traversant, ca me generait pas",
        "si une voiture me fauchait ma place, ca me generait pas mal",
    ),
    (
        "fr.warning.explicit_taking_life",
        "j'ai pense a m'oter la vie la semaine derniere",
        "j'ai pense a changer de vie la semaine derniere",
    ),
    ("fr.warning.burden_finality", "je suis qu'un boulet pour mes parents", "je suis un boulet en cuisine"),
    (
        "fr.warning.no_way_out_but_one",
        "il me reste qu'une seule issue et tu sais laquelle",
        "il n'y a qu'une seule solution pour arreter de fumer",
    ),
    (
        "fr.warning.unbearable_inner_pain",
        "cette souffrance en dedans, je peux plus la supporter",
        "la douleur au dos, je peux plus la supporter",
    ),
    (
        "fr.warning.farewell_finality",
        "si t'as plus de nouvelles, c'est pas ta faute",
        "si t'as plus de nouvelles du coach, c'est normal",
    ),
    (
        "fr.warning.giving_away_with_finality",
        "j'ai legue ma collection de vinyles a mon neveu, il comprendra plus tard",
        "j'ai donne mes livres a la bibliotheque, ca fait de la place",
    ),
    (
        "fr.warning.plan_not_failing",
        "la prochaine fois je me louperai pas",
        "la prochaine fois je me louperai pas au bowling",
    ),
    (
        "fr.warning.preparation_after_me",
        "j'ai laisse une lettre pour quand je serai plus la",
        "j'ai laisse un mot pour quand je serai en vacances",
    ),
    (
        "fr.warning.means_stockpile",
        "je mets mes somniferes de cote depuis des semaines",
        "je mets de l'argent de cote pour les vacances",
    ),
    (
        "fr.warning.method_research",
        "un truc qui tue vite sans souffrir, ca existe ?",
        "ce desherbant ca tue vite les mauvaises herbes ?",
    ),
    ("fr.warning.self_harm_more", "je me suis lacere les cuisses hier soir", "je me suis lave les cheveux hier soir"),
    (
        "fr.warning.command_voices_more",
        "une voix me repete de me jeter par la fenetre",
        "ma coach me repete de me lever plus tot",
    ),
    (
        "fr.warning.helper_more_dev16",
        "ma fille parle souvent de se jeter sous un train",
        "ma fille parle souvent de sauter en parachute",
    ),
    ("fr.warning.means_in_place", "la corde est nouee au grenier", "la corde a linge est accrochee dans le jardin"),
    (
        "fr.warning.not_around_hint",
        "franchement je compte pas rester bien longtemps",
        "je compte pas rester longtemps a la soiree",
    ),
    (
        "fr.warning.futility_of_care_hint",
        "la sante c'est pour ceux qui ont un avenir",
        "la sante c'est pour tout le monde, on dit",
    ),
    ("fr.warning.farewell_last_contact_hint", "voici mon dernier message", "voici mon dernier bilan de la semaine"),
    ("fr.warning.not_expected_back_hint", "ne m'attends plus", "ne m'attends pas pour diner, je rentre tard"),
    (
        "fr.warning.privacy_awaited_hint",
        "j'attends juste que tout le monde soit couche",
        "j'attends que tout le monde arrive pour manger",
    ),
    (
        "fr.warning.cutting_contact_hint",
        "je coupe mon portable apres ce message",
        "je coupe mon portable pendant le diner",
    ),
    (
        "fr.warning.not_to_be_stopped_hint",
        "personne pourra m'en empecher",
        "personne pourra m'en empecher de finir ce marathon",
    ),
    (
        "fr.warning.means_set_out_hint",
        "mes comprimes sont alignes devant moi avec un verre d'eau",
        "mes comprimes sont dans le pilulier avec un verre d'eau",
    ),
    ("fr.warning.leaving_clean_hint", "je veux partir propre", "je veux partir propre en vacances, j'ai tout range"),
    (
        "fr.warning.helper_giving_away_hint",
        "elle a donne sa bague a sa cousine",
        "elle a donne sa recette a sa cousine",
    ),
    ("fr.warning.helper_goodbye_hint", "il m'a embrasse comme s'il partait", "il m'a embrasse comme d'habitude"),
    ("fr.warning.last_evening_hint", "ce sera mon dernier soir", "ce sera mon dernier soir a Lyon"),
    (
        "fr.warning.farewell_finality_hint",
        "j'ai serre ma soeur dans mes bras une derniere fois",
        "j'ai vu mes potes une derniere fois avant les vacances",
    ),
    # Added 2026-12-06 from what the training batches train_i and train_j showed missed (paraphrased).
    (
        "en.warning.means_laid_out",
        "my dad's old rifle is on the kitchen table right in front of me",
        "my dad's old guitar is on the kitchen table right in front of me",
    ),
    (
        "fr.warning.means_laid_out",
        "le fusil de mon pere est sur la table juste devant moi",
        "le gateau de mon pere est sur la table juste devant moi",
    ),
    (
        "fr.warning.overdose_taken",
        "j'ai sorti les boites de cachets, j'en ai deja avale la moitie",
        "j'ai sorti les boites de chocolats, j'en ai deja mange la moitie",
    ),
    ("en.warning.edge_reached", "I'm sitting by the cliff edge now", "I'm sitting on the edge of my seat"),
    ("en.warning.going_over", "once this smoke is out I'm going over", "I'm going over the plan with my GP"),
    (
        "en.warning.refuses_to_be_stopped",
        "don't bother with the numbers, I've decided",
        "don't bother with the nicotine patches, they itch",
    ),
    ("fr.warning.not_to_be_stopped_hint", "je veux pas qu'on vienne me chercher", "je veux qu'on vienne au diner"),
    ("en.warning.lethality_question", "is drowning quick or does it hurt", "is running quick enough to burn fat"),
    (
        "fr.warning.lethality_question",
        "tu connais une methode sans douleur ?",
        "tu connais une methode sans douleur pour arreter de fumer ?",
    ),
    (
        "en.warning.attempt_under_way",
        "took the rest of my sleeping pills with a bottle of wine an hour ago",
        "took the rest of my vitamins this morning",
    ),
    (
        "en.warning.overdose_intended",
        "I'm swallowing all my painkillers once he's asleep",
        "I'm taking all my painkillers to the pharmacy to hand them back",
    ),
    ("en.warning.means_at_hand", "the belt is round the banister now", "the belt is round my waist now"),
    ("en.warning.method_easy", "going off the balcony would be so easy", "going off sugar would be so easy"),
    (
        "fr.warning.overdose_taken",
        "j'ai avale toute la boite de mes somniferes",
        "j'ai avale toute la boite de chocolats",
    ),
    ("fr.warning.means_at_hand", "le tuyau est scotche a l'echappement", "le tuyau est scotche au robinet"),
    ("fr.warning.self_harm_act", "je me suis recoupee cette nuit", "je me suis recoiffee cette nuit"),
    (
        "fr.warning.hedge",
        "pour le moment je tiens pour mes enfants, mais je sais pas combien de temps",
        "pour le moment je tiens bon pour mes enfants, sans cigarette",
    ),
    (
        "fr.warning.hopeless_living",
        "je parle pas du boulot , je parle de la vie",
        "je parle pas du boulot , je parle de la vie en general",
    ),
    (
        "fr.warning.means_gathered",
        "je les prends pas, je les garde dans la boite a chaussures",
        "je prends pas le bus, je garde la voiture",
    ),
    ("fr.warning.method_thought", "j'ai souvent pense au viaduc", "j'ai souvent pense au marathon"),
    (
        "fr.warning.helper_more",
        "il a ressorti son fusil alors qu'il ne chasse plus",
        "il a ressorti son fusil pour l'ouverture de la chasse",
    ),
    (
        "en.warning.preparation",
        "I've put it all in one folder so my wife can manage without me",
        "I've put it all in one folder so my wife can manage without me while I'm on the rig",
    ),
    (
        "en.warning.not_around",
        "I think about not being anywhere anymore",
        "I think about not being anywhere near sugar",
    ),
    ("en.warning.self_harm_act", "when the urge gets bad i cut", "when the urge gets bad i cut down"),
    (
        "en.warning.masking_before_going",
        "I've told them all I'm fine, fewer questions before I go",
        "fewer questions before I go on holiday",
    ),
    ("fr.warning.hopeless_living", "j'arrete tout . la vie aussi", "j'aime le velo . la vie en general aussi"),
    (
        "en.warning.holding_on_until",
        "I think I can hold on until my sister visits",
        "I can hold on until my sister gets home with the cigarettes",
    ),
    (
        "en.warning.leaving_for_good",
        "I keep thinking about driving off and never coming back",
        "my dad drove off and never came back",
    ),
    (
        "en.warning.passive_wish_more",
        "honestly I wish I'd never been born",
        "honestly I wish I'd never started smoking",
    ),
    (
        "en.warning.self_harm_act",
        "did the thing with the blade again last night",
        "did the thing with the blender again last night",
    ),
    ("en.warning.means_at_hand", "the hose is through the window now", "the hose is through the hedge now"),
    (
        "en.warning.preparation",
        "it's all sorted for whoever has to deal with it",
        "it's all sorted for the holiday",
    ),
    (
        "en.warning.helper_more",
        "my brother said he wouldn't need them any more",
        "my brother said the shop wouldn't need them any more",
    ),
    (
        "fr.warning.self_harm_act",
        "je me fais des traits sur les bras le soir",
        "je me fais des tresses le soir",
    ),
    ("fr.warning.means_at_hand", "je suis sur le pont, j'ai passe la rambarde", "j'ai passe la douane"),
    ("fr.warning.farewell", "dis a ma mere que c'etait pas sa faute", "dis a ma mere que c'etait pas grave"),
    ("en.warning.wont_need_them", "won't need them anymore", "won't need them till Friday"),
    ("fr.warning.wont_need_them", "j'en aurai plus besoin", "j'en aurai plus besoin apres le regime"),
    (
        "en.warning.place_checked",
        "I've checked where the fence is lowest",
        "I've checked where the gym is closest",
    ),
    (
        "en.warning.euphemism_time",
        "taking them tonight",
        "taking the dog out tonight",
    ),
    (
        "en.warning.refuses_help_named",
        "I deleted the crisis line number from my phone",
        "I deleted my dealer's number from my phone",
    ),
    # From the blind dev22 sessions (2026-12-06), each worded afresh here.
    (
        "en.warning.means_kept_as_option",
        "it's a comfort knowing they're there if it all gets too much",
        "it's a comfort knowing they're there for me, my sisters",
    ),
    (
        "en.warning.method_worked_out",
        "I've figured out how I'd end it",
        "I've figured out how I'd end the week, a long walk",
    ),
    (
        "en.warning.means_set_out",
        "I've put all my tablets out on the bedside table",
        "I've put all my vitamins away in the cupboard",
    ),
    (
        "en.warning.exhaust_tested",
        "the pipe fits my exhaust, checked it twice",
        "the pipe fits my sink, checked it twice",
    ),
    ("en.warning.height_checked", "I went up to see if it's high enough", "I went up to see if it's warm enough"),
    (
        "en.warning.insurance_worth_more",
        "my kids would be better set up with the insurance payout than with me",
        "we would be better off with the cheque than with cash at the fair",
    ),
    (
        "en.warning.passive_wish_more",
        "if the good lord wants to take me in my sleep I won't argue",
        "the lord knows I need to take my vitamins",
    ),
    (
        "fr.warning.medicine_stockpiled",
        "je les cache dans une chaussette au fond du tiroir",
        "je les range dans le placard de la cuisine",
    ),
    ("fr.warning.means_kept_enough", "le jour ou ca deborde, au moins j'aurai de quoi", "j'ai de quoi manger ce soir"),
    ("fr.warning.height_checked", "je suis monte voir si c'est assez haut", "je suis monte voir si c'est assez propre"),
    ("fr.warning.railing_crossed", "j'ai enjambe la rambarde du balcon", "j'ai enjambe le chien dans le couloir"),
    (
        "fr.warning.insurance_worth_more",
        "ils seraient plus tranquilles avec l'assurance-vie qu'avec moi",
        "ils seraient plus tranquilles avec une nounou qu'avec moi",
    ),
    # From the blind dev24 sessions (2026-12-06), worded afresh.
    (
        "en.warning.means_location",
        "my feet are dangling over the ledge",
        "my feet are dangling over the side of the pool",
    ),
    (
        "en.warning.plan_method",
        "waiting for the train which doesn't stop here",
        "waiting for the train which stops at every village",
    ),
    # From the blind dev26 sessions (2026-12-06), worded afresh.
    (
        "en.warning.method_worked_out",
        "I've thought through how I'd do it",
        "I've thought through how I'd do it, the 5k",
    ),
    # From the blind dev25 sessions (2026-12-06), worded afresh.
    (
        "en.warning.plan_with_time",
        "when the kids are in bed tonight I'm going to end it",
        "when the kids are in bed tonight I'm going to finish my book",
    ),
    ("en.warning.plan_method", "I've found the place already", "I've found the place for the party already"),
    (
        "en.warning.means_ready",
        "I have what I need in the garage now",
        "I have what I need in the kitchen now",
    ),
    (
        "fr.warning.children_asleep_then",
        "une fois les enfants couches, je passe a l'acte",
        "une fois les enfants couches, je passe l'aspirateur",
    ),
    (
        "fr.warning.whole_pack_taken",
        "j'ai avale une boite entiere de somniferes",
        "j'ai avale une boite entiere de chocolats",
    ),
    ("fr.warning.all_prepared", "j'ai tout organise", "j'ai tout organise pour l'anniversaire"),
    (
        "fr.warning.passive_wish_conditional",
        "si un chauffard me rentrait dedans je serais pas contre",
        "si un chauffard me rentrait dedans je serais furieux",
    ),
    # From the blind dev28 sessions (2026-12-06), worded afresh.
    ("en.warning.step_off", "up on the multi-storey tonight and then I step off", "at my stop I step off the tram"),
    (
        "en.warning.refuses_to_be_stopped",
        "do not try to stop me, my mind's been clear for weeks",
        "do not try to stop me, I'm on a roll with the walking",
    ),
    ("fr.warning.not_to_be_stopped_hint", "non, appelle personne", "non, j'appelle personne le soir"),
    (
        "fr.warning.overdose_taken",
        "j'ai bu la biere et pris tout le lexomil",
        "j'ai pris tous les medicaments du matin",
    ),
    (
        "en.warning.nerve_up",
        "been on the roof an hour trying to get my nerve up",
        "trying to get my nerve up to ask for a raise",
    ),
    ("en.warning.train_not_stopping", "the freight trains don't stop here", "the freight trains are late again"),
    (
        "en.warning.saved_to_take_at_once",
        "I skipped them all month so I'd have enough to take all at once",
        "the chemist said I have enough to take two a day until the refill",
    ),
    (
        "en.warning.passes_for_an_accident",
        "I'd drive off the road at night and make it look like I fell asleep at the wheel",
        "the scratch on the bumper looked like an accident to the insurer, so they paid",
    ),
    (
        "fr.warning.passes_for_an_accident",
        "sur la route de nuit, ça passera pour un accident",
        "le chien a cassé le vase, on a cru à un accident",
    ),
    ("fr.warning.farewell", "dites-leur que c'etait pas leur faute", "dites-leur que c'etait pas cher"),
    ("fr.warning.farewell", "dis pardon a ma mere", "dis pardon a ta mere"),
    # From the blind dev31 sessions (2026-12-06), worded afresh.
    ("fr.warning.jump_decided", "je saute du 12e, voila", "je saute du lit a 6h, voila"),
    (
        "fr.warning.children_asleep_then",
        "quand mes parents dormiront c'est fini",
        "quand mes parents dormiront je joue a la switch",
    ),
    ("en.warning.means_ready", "yep got everything i need", "yep got everything i need for the cake, thanks"),
    ("en.warning.euphemism_time", "gonna do it at 4am when the house is quiet", "gonna do the laundry at 4am"),
    (
        "fr.warning.children_asleep_then",
        "quand les enfants seront couches chez leur pere demain, j'en finis",
        "quand les enfants seront couches chez leur pere demain, je sors",
    ),
    (
        "fr.warning.means_set_out_hint",
        "j'ai tout ce qu'il faut dans le garage",
        "j'ai tout ce qu'il faut dans le frigo",
    ),
    (
        "fr.warning.plan_more",
        "quand il dormira je vais prendre ses patchs de fentanyl",
        "quand il dormira je vais prendre ses patchs de nicotine",
    ),
    # From the blind dev33 and dev34 sessions (2026-12-06), worded afresh; the habit sentences are
    # the ordinary talk a reviewer found each first wording read.
    (
        "en.warning.note_to_be_found",
        "I wrote two, the kind you leave on the table for the family to find",
        "the Easter eggs, the kind you leave out for the kids to find",
    ),
    (
        "en.warning.not_their_fault_note",
        "making sure they know none of it was on them",
        "making sure they know none of it was expensive",
    ),
    (
        "en.warning.sharpener_blade",
        "got the blade out of a sharpener again",
        "my moral compass is what helps me say no to the second pint",
    ),
    (
        "en.warning.sharpener_blade",
        "the little blade helps more than the vape",
        "a safety razor helps more with my skin",
    ),
    (
        "en.warning.contingent_decision",
        "it's there if I ever decide enough is enough",
        "I'll set a quit date when I decide it's time",
    ),
    (
        "en.warning.car_sealed",
        "put a towel along the bottom of the garage door",
        "I smoke in the bathroom with a towel under the door",
    ),
    (
        "en.warning.care_arranged",
        "asked my brother to take the kids for a while if anything happens",
        "asked my brother to take the kids to football on Saturday",
    ),
    ("en.warning.life_no_sense", "my life makes no sense anymore", "this diet makes no sense anymore"),
    (
        "en.warning.insurance_worth_more",
        "they'd be in better shape with the payout than with me around",
        "they'd be in better shape with a bigger car",
    ),
    (
        "fr.warning.insurance_suicide_clause",
        "j'ai relu la clause suicide du contrat",
        "mon patron devait choisir entre moi et la prime",
    ),
    ("fr.warning.blade_calms", "la lame ca me calme", "la tisane ca me calme"),
    (
        "fr.warning.lethal_dose_irreversible",
        "combien de comprimes d'un coup pour que ce soit irreversible",
        "combien de paquets avant que ce soit mortel, j'ai jete mes clopes pour que ce soit definitif",
    ),
    (
        "fr.warning.firearm_borrowed",
        "le fusil de mon oncle, je lui ai demande de me le preter",
        "le pistolet a colle de mon oncle, je lui ai demande de me le preter",
    ),
    (
        "fr.warning.no_reason_to_get_up",
        "j'ai plus de raison de me lever",
        "pas de raison de me lever a 5h le week-end",
    ),
    (
        "en.warning.passive_wish_taken",
        "I wouldn't mind if the Lord saw fit to take me tonight",
        "I wouldn't mind if the Lord gave me a bit more patience",
    ),
    ("en.warning.passive_wish_taken", "god if you want to take me it's okay", "god if you want to help me it's okay"),
    ("en.warning.passive_wish_taken", "honestly i'm so over existing", "honestly i'm so over winter"),
    (
        "fr.warning.passive_wish_taken",
        "si le bon dieu venait me chercher cette nuit, je serais pas fache",
        "si le bon dieu venait me donner un coup de main, je serais pas fache",
    ),
    ("fr.warning.passive_wish_taken", "j'aimerais juste m'eteindre", "j'aimerais juste eteindre mon tel"),
    (
        "en.warning.drowning_method",
        "I keep picturing swimming out past the buoys and not turning back",
        "I've been walking past the pub and not going back in",
    ),
    ("en.warning.drowning_method", "put stones in my pockets", "I put rocks in my backpack for rucking"),
    (
        "en.warning.use_on_myself",
        "thought about how to use the rifle on myself",
        "I use it on myself every evening, the massage gun",
    ),
    (
        "fr.warning.drowning_method",
        "j'ai mis des cailloux dans mes poches",
        "j'ai mis des galets dans mon sac a dos pour m'entrainer",
    ),
    ("fr.warning.use_on_myself", "je pense a m'en servir sur moi", "je pense a m'en servir pour le jardin"),
    # From the blind dev35 sessions (2026-12-06), worded afresh.
    (
        "en.warning.platform_step",
        "next one's due in 5, i'm going to step off when it comes",
        "I'll step off the bus when it comes to my stop",
    ),
    (
        "en.warning.fall_survival_researched",
        "I looked up whether people survive that fall",
        "I wondered whether anyone would survive the fall in that film",
    ),
    (
        "en.warning.half_taken_rest_saved",
        "I've been taking half of them and putting the rest by",
        "taking half the dose and putting the rest back in the cupboard",
    ),
    (
        "fr.warning.into_water_unable_to_swim",
        "je vais rentrer dedans et marcher, je sais pas nager",
        "je vais rentrer dans l'eau doucement, je sais pas nager alors je reste au bord",
    ),
    (
        "fr.warning.tracks_headed_to",
        "apres les cours jvais aux voies ferrees derriere le stade",
        "je vais aux voies ferrees prendre des photos des trains",
    ),
    # A loan is no farewell (long_dev7).
    ("en.suicide.possessions", "I'm giving my guitar to my brother", "giving my ps5 to my little cousin for a bit"),
    # From the blind dev36 sessions (2026-12-06), worded afresh.
    ("en.warning.razor_blade_taken", "with the blade from my dad's razor", "I put a new blade in my razor"),
    (
        "en.warning.razor_blade_taken",
        "just on my thighs so nobody sees",
        "got the tattoo on my thigh so nobody sees it at work",
    ),
    ("en.warning.rope_left_out", "there's a rope left out in the shed", "left the skipping rope out in the garage"),
    ("en.warning.anchor_checked", "Checked the beam this morning.", "the builder checked the beam for woodworm"),
    (
        "en.warning.means_taken_from_work",
        "I took insulin pens home from the ward",
        "I took the nicotine patches home from the pharmacy",
    ),
    (
        "en.warning.marked_for_after",
        "letters for my sons, in the envelope marked for after.",
        "the cash is in the envelope marked for after the wedding",
    ),
    (
        "en.warning.no_purpose_staying",
        "I do not see much purpose in staying on.",
        "I see no point in staying on at the office after six",
    ),
    (
        "fr.warning.voices_they_order",
        "elles me disent d'aller me jeter sous le tram",
        "mes potes me disent de me jeter a l'eau et de postuler",
    ),
    (
        "fr.warning.garage_sealed",
        "j'ai mis du ruban adhesif autour de la porte du garage",
        "j'ai mis du ruban adhesif sur la porte du frigo pour la liste",
    ),
    (
        "fr.warning.poison_in_bag",
        "j'ai deja achete le produit pour les rats, il est dans mon sac",
        "j'ai achete du produit pour les rats pour la cave du resto",
    ),
    (
        "fr.warning.last_evening_with_them",
        "je garde les petits ce soir, c'est mon dernier soir avec eux",
        "c'est mon dernier soir avec eux avant la colo",
    ),
    # From the blind dev40 sessions (2026-12-07), worded afresh.
    (
        "en.warning.better_off_with_the_insurance",
        "the sums come out better without me",
        "the sums come out better without the car",
    ),
    (
        "en.warning.gun_out_again",
        "had the shotgun out of the safe again this week",
        "had the shotgun out of the repair shop this week",
    ),
    ("en.warning.put_it_back", "put it back every time", "put it back on the shelf every time"),
    (
        "en.warning.things_cleared_for_them",
        "clearing out my clothes so the kids won't have to",
        "clearing out my clothes so the kids can have the room",
    ),
    (
        "en.warning.pills_not_taken_put_aside",
        "been putting them aside in an old biscuit tin",
        "been putting coins aside in an old biscuit tin",
    ),
    ("en.warning.finishing_it_tonight", "tonight i'm finishing it.", "tonight i'm finishing the shed roof."),
    (
        "en.warning.sorted_for_them",
        "everything's sorted for the kids now",
        "everything's sorted for the kids' party now",
    ),
    (
        "en.warning.weighted_in_the_water",
        "the chain's wrapped around my waist now",
        "the lead's wrapped around my wrist now, the dog pulls",
    ),
    ("en.warning.one_last_weekend", "one last weekend with the boys", "one last push with the boys on the roof"),
    ("en.warning.rifle_cleaned", "rifle's cleaned.", "rifle's in the cabinet."),
    ("en.warning.decided_long_ago", "decided months ago", "decided months ago to retire"),
    (
        "en.warning.burns_with_cigarettes",
        "I stubbed a fag out on my arm again",
        "I stubbed a fag out on the wall again",
    ),
    (
        "fr.warning.better_off_with_the_payout",
        "ma femme toucherait l'assurance",
        "ma femme toucherait sa retraite",
    ),
    ("fr.warning.insurance_checked", "j'ai epluche le contrat d'assurance vie", "j'ai epluche le contrat de location"),
    (
        "fr.warning.weighted_in_the_water",
        "j'ai attache la chaine autour de ma taille",
        "j'ai attache le chien a la barriere",
    ),
    ("fr.warning.the_right_moment", "c'est le bon moment", "c'est le bon moment pour arreter la clope"),
    ("fr.warning.burns_with_cigarettes", "je me brule avec ma clope", "je me suis fait bruler par le soleil"),
    ("fr.warning.worthless_to_all", "je vaux plus rien pour personne", "ma voiture vaut plus rien"),
    # From the blind dev39 sessions (2026-12-07), worded afresh.
    (
        "en.warning.jump_from_building",
        "i'll jump from the balcony of the flat",
        "i'll jump from the plane with an instructor, it's a tandem skydive",
    ),
    ("en.warning.on_a_bridge_now", "im on the harbour bridge now", "im on the harbour bridge walk with the kids"),
    (
        "en.warning.staring_down_at_the_water",
        "been staring down at the water for an hour",
        "been staring down at my phone for an hour",
    ),
    (
        "en.warning.in_the_car_in_the_garage",
        "im in the car in the garage, door down",
        "im in the car at the garage, getting the tyres done",
    ),
    ("en.warning.hose_on", "the hose is on.", "the hose pipe ban is on"),
    (
        "en.warning.not_turning_the_wheel",
        "i think about just not turning the wheel on the bend",
        "i keep turning the wheel too late on the bend, learner driver life",
    ),
    (
        "en.warning.spare_them_the_trouble",
        "be gone and save everyone the trouble.",
        "I'll cook tonight, saves everyone trouble",
    ),
    (
        "fr.warning.engine_running_garage",
        "porte du garage fermee, moteur qui tourne",
        "porte du garage ouverte, moteur qui tourne pour le chauffer",
    ),
    # From the blind dev38 sessions (2026-12-06), worded afresh.
    (
        "en.warning.rifle_loaded",
        "my 12 gauge is loaded and propped by the back door",
        "my 12 gauge is cleaned and back in the locked cabinet",
    ),
    (
        "en.warning.voice_says_go",
        "the voice keeps saying go to the bridge and jump",
        "my inner voice says go to the gym and lift",
    ),
    (
        "en.warning.dose_for_weight",
        "I worked out how much I'd need for my body weight",
        "I worked out how much protein I'd need, I'm eating more eggs",
    ),
    (
        "en.warning.prescriptions_kept_back",
        "been putting back a few from every prescription",
        "been putting back a few quid from every paycheck",
    ),
    (
        "fr.warning.wont_wake_up_tonight",
        "je rentre et je me couche et je me reveille plus",
        "je rentre et je me couche tôt, je me réveille à 5h",
    ),
    (
        "fr.warning.pills_put_aside",
        "j'ai mis trois boites de cote dans ma voiture",
        "j'ai mis trois boites de conserve dans ma voiture",
    ),
    (
        "fr.warning.pills_in_a_box",
        "je les garde de cote dans un vieux tiroir",
        "je les garde au frigo dans un vieux tupperware",
    ),
    ("fr.warning.emergency_exit", "ce sera ma porte de sortie", "ce sera ma porte d'entrée dans le métier"),
    # From the blind dev37 sessions (2026-12-06), worded afresh.
    ("fr.warning.means_at_hand", "j'ai tout sorti des plaquettes", "j'ai tout sorti des placards pour le menage"),
    (
        "en.warning.means_laid_out",
        "got my daddy's .38 on the seat next to me",
        "got my daddy's old hat on the seat next to me",
    ),
    (
        "fr.warning.overdose_taken",
        "j'ai pris toutes mes pilules tantot avec le fort",
        "j'ai pris toutes mes pilules ce matin comme prevu",
    ),
    (
        "fr.warning.overdose_taken",
        "j'ai pris toute la boite, avec un verre de porto",
        "j'ai pris une boite de chocolats avec un verre de porto",
    ),
    ("en.warning.cut_again_on_body", "cut again last night on my thigh", "got a paper cut on my arm at work"),
    (
        "en.warning.gun_held",
        "sat in the truck with the pistol out, just holding it",
        "the rifle at the range was heavier than I thought, holding it steady took ages",
    ),
    (
        "en.warning.what_i_need",
        "I've got what I need from the shed.",
        "I've got everything I need for the quit, patches and gum",
    ),
    (
        "en.warning.the_night",
        "tonight's the night, once I've finished this bottle",
        "tonight's the night I ring my sister",
    ),
    (
        "fr.warning.fall_survival_researched",
        "j'ai cherche si on survivait a une chute pareille",
        "on survit a une chute de velo avec un casque",
    ),
    (
        "fr.warning.helper_fears_the_worst",
        "j'ai peur qu'y fasse une niaiserie.",
        "j'ai peur qu'il fasse une betise avec sa carte bleue",
    ),
    # To join someone who died, wished or heard asked (the dev16 to dev19 and train_g to train_j
    # messages the rules read as nothing or as a wish): not the gym, lunch or a restaurant.
    (
        "en.warning.passive_wish_more",
        "my mum died last year, sometimes I want to join her",
        "since my dad died my mum wants me to join her for sunday lunch",
    ),
    ("en.warning.passive_wish_more", "I pray to be with my late husband", "I want to join her at the gym on Tuesdays"),
    (
        "fr.warning.passive_wish_conditional",
        "depuis que maman est partie j'ai envie de la rejoindre",
        "depuis que maman est partie j'ai envie de la voir plus souvent, ma soeur, je vais la rejoindre au resto",
    ),
    (
        "en.warning.command_voices",
        "my dead brother talks to me and says to come and join him",
        "my late dad's friend says to come and join him for a pint",
    ),
    (
        "fr.warning.command_voices",
        "ma grand-mère décédée m'appelle à la rejoindre",
        "ma grand-mère m'appelle pour que je vienne la rejoindre au marché",
    ),
    # A supply that is no medicine ({not_a_medicine} in terms.yaml): nicotine gum was an attempt under way.
    (
        "en.warning.attempt_under_way",
        "I took most of the packet of my sleeping pills",
        "I took most of the packet of nicotine gum in one day lol",
    ),
    # The habit dismissed as mattering no more (36 of the 416 imminent development sessions say it,
    # no passive-wish or safe session and 1 of 720 benign long conversations): weak, a check-in.
    (
        "en.warning.no_longer_matters",
        "doesnt matter much now to be honest",
        "the diet doesn't matter now, it's christmas",
    ),
    (
        "fr.warning.no_longer_matters",
        "mais bon ça a plus trop d'importance",
        "le prix a plus trop d'importance pour moi",
    ),
    # Self-harm said as an evening habit or with a blade; not shaving, nor a past accident at work.
    (
        "fr.warning.self_harm_act",
        "depuis quelques semaines je me coupe le soir, avec une lame de rasoir",
        "je me coupe avec le rasoir en me rasant",
    ),
    ("en.warning.self_harm_act", "i cut at night with a razor blade", "I cut my hair with a razor"),
    (
        "en.warning.self_harm_act",
        "i've been cutting most nights with a blade",
        "I've been cutting down on the vape",
    ),
    (
        "fr.warning.self_harm_act",
        "j'ai recommencé les traits sur les cuisses, avant-hier et hier soir",
        "j'ai recommencé les traits sur les cuisses au crayon pour le dessin",
    ),
    (
        "fr.warning.self_harm_act",
        "hier soir je me suis encore ouvert le bras",
        "hier soir je me suis encore ouvert une bière",
    ),
    (
        "en.warning.no_longer_matters",
        "Won't be my problem after tonight anyway.",
        "the leaky roof won't be my problem after the sale",
    ),
    # The insurance worth more than oneself (dev43, dev44), and means brought back from work.
    (
        "en.warning.insurance_worth_more",
        "It pays out regardless after the first year, I checked the small print",
        "the warranty pays out after the first year, I checked the small print",
    ),
    (
        "fr.warning.insurance_worth_more",
        "ma femme serait plus tranquille avec ce chèque qu'avec un mari qui ramène que des dettes",
        "ma femme serait plus tranquille avec un chèque-cadeau qu'avec des fleurs",
    ),
    (
        "fr.warning.means_gathered",
        "depuis un mois je ramène des ampoules du service, petit à petit",
        "je ramène des flacons du service pour les recycler",
    ),
    (
        "en.warning.attempt_under_way",
        "i already drank them all, the ones from my lola's medicine box",
        "I took them all, the ones from the vet, back to the shop",
    ),
    # One's own death said as an act or a fact with its time (blind risk probes, 2026-12-07): each
    # beside the same words in ordinary talk.
    (
        "en.suicide.explicit",
        "I've decided, I'm taking my life on Thursday",
        "I want to take my life back from cigarettes",
    ),
    ("en.suicide.explicit", "I'm leaving this world on Saturday", "I'm leaving the world of smoking behind"),
    ("en.suicide.explicit", "I'm killing myself on Friday", "I'm killing myself at the gym for nothing"),
    ("en.suicide.explicit", "I'm going to end my life", "I'm ending my life as a smoker today"),
    ("en.sign.gone_by_then", "tomorrow I'll be dead", "tomorrow I'll be dead tired after the night shift"),
    ("en.warning.end_it_on_a_day", "Sunday I end it.", "Friday I end it with him, he knows it's coming"),
    ("fr.warning.preparation", "depuis le divorce je prépare ma mort", "je prépare ma fin de contrat avec les RH"),
    ("fr.warning.not_around", "demain matin je serai mort", "demain soir je serai mort de fatigue"),
    (
        "fr.warning.plan_date_fragment",
        "la date est choisie, c'est notre anniversaire",
        "la date est choisie pour le mariage",
    ),
    # The border between a passive wish and active ideation (blind set, 2026-12-07).
    (
        "en.warning.method_thoughts",
        "They'd manage fine without me. I've started to think about how.",
        "I've started to think about how to quit",
    ),
    (
        "en.warning.method_thoughts",
        "whenever i get into bed i go over how i'd do it",
        "whenever i get into bed i go over my to-do list",
    ),
    (
        "en.warning.intent_owned",
        "since my brother died i keep thinking i should join him",
        "since my brother moved i keep thinking i should join him at the allotment",
    ),
    (
        "en.warning.intent_owned_strong",
        "I've been thinking I might help the Lord along a bit",
        "I help the Lord's work along at church on Sundays",
    ),
    ("en.warning.death_by_neglect", "I skipped my chemo on purpose", "I skipped my chemo because I had the flu"),
    (
        "en.warning.car_running_garage",
        "The car's running in the garage. I'm sorry.",
        "The car's running fine since the garage fixed it",
    ),
    (
        "fr.warning.method_thoughts",
        "je me demande quelle serait la façon la moins douloureuse pour moi",
        "la façon la moins douloureuse d'arrêter la clope",
    ),
    (
        "fr.warning.intent_owned_hint",
        "je voudrais m'endormir pour toujours et je pense à le provoquer",
        "je pense à le prévenir demain",
    ),
    (
        "fr.warning.intent_owned",
        "j'ai sauté mes deux dernières chimios exprès sans rien dire",
        "j'ai sauté mes deux dernières chimios à cause de la grippe",
    ),
    (
        "fr.warning.means_at_hand",
        "j'ai branché le tuyau sur l'échappement et je l'ai passé par la vitre",
        "j'ai branché le tuyau d'arrosage sur le robinet du jardin",
    ),
    # Slang and euphemisms for the act, and a method named in French (2026-12-08): each beside
    # the everyday phrase that shares its words.
    (
        "en.warning.explicit_active",
        "been thinking bout doing myself in lately",
        "I did myself in at the gym, legs are gone",
    ),
    ("en.warning.explicit_active", "I want to top myself", "I'll top myself up with coffee before the drive"),
    (
        "en.warning.explicit_active",
        "some days I could blow my brains out",
        "the bass at that gig could blow my brains out",
    ),
    (
        "en.warning.explicit_active",
        "thinking about checking out for good",
        "checking out for good from the work group chat",
    ),
    (
        "en.warning.explicit_active",
        "I keep considering taking the coward's way out",
        "took the coward's way out and texted her instead of calling",
    ),
    ("fr.warning.explicit_active", "je vais me tirer une balle", "je me tire une balle dans le pied avec la clope"),
    ("fr.warning.explicit_active", "ce soir je vais me flinguer", "je vais me flinguer la santé avec ces clopes"),
    # Plain disclosures of the dev18, dev19 and train_i messages (2026-12-08), worded afresh.
    (
        "en.warning.going_through_with_it",
        "Saturday when they're all out I'm going through with it.",
        "I'm going through with it this time, no more smoking after dinner",
    ),
    (
        "en.warning.taking_what_was_saved",
        "tonight I'm taking everything I've been saving",
        "tonight I'm taking everything I've saved to the bank",
    ),
    (
        "en.warning.means_kept_hidden",
        "I've got a stash of my dad's oxy he doesn't know about",
        "I've got a stash of chocolate my kids don't know about",
    ),
    (
        "en.warning.nerve_to_do_it",
        "I just need to find the nerve.",
        "I just need to find the nerve to call the dentist.",
    ),
    (
        "en.warning.all_planned_out",
        "I've got it all worked out.",
        "I've got it all worked out for the week, gym on Monday.",
    ),
    (
        "en.warning.nobody_here_to_read",
        "no point texting me next week, there won't be anyone here to read it",
        "there won't be anyone at the office to read it till Monday",
    ),
    (
        "en.warning.command_voices_more",
        "it keeps telling me do it, do it",
        "my trainer keeps yelling 'do it' at every rep",
    ),
    ("fr.warning.jump_with_a_time", "cette nuit je saute.", "ce soir je saute le dessert."),
    ("fr.warning.funeral_paid_ahead", "j'ai payé mes obsèques, tout est réglé", "j'ai payé les obsèques de mon père"),
    (
        "fr.warning.messages_for_after",
        "j'ai programmé des mails qui partiront après",
        "j'ai programmé des mails qui partiront lundi matin",
    ),
    (
        "fr.warning.only_the_courage_missing",
        "il me manque juste le courage.",
        "il me manque juste le courage de l'appeler",
    ),
    ("fr.warning.voices_do_it", "ça me répète fais-le, fais-le", "le coach me crie vas-y, fais-le une fois"),
    # The dev17 messages (2026-12-08), worded afresh.
    ("en.warning.self_harm_told", "I scratch my arms till they bleed", "the cat scratched my arm and it bled a bit"),
    ("en.warning.self_harm_told", "back to sh again tbh", "back to the gym again tbh"),
    (
        "en.warning.self_harm_told",
        "I keep banging my head against the wall when I mess up",
        "I banged my head on the low door",
    ),
    ("en.warning.overdose_said_taken", "I've taken them, about 40", "I've taken the kids to school, about 8"),
    ("en.warning.walking_into_the_sea", "I'm going to keep walking in.", "I'm going to keep walking in the mornings"),
    ("en.warning.when_is_all_that_is_left", "the when is the only question now", "when is the only free slot?"),
    ("en.warning.no_next_week_for_me", "there won't be a next week for me", "there won't be a next week for the club"),
    (
        "en.warning.means_question_weight",
        "will a door frame hold a person's weight",
        "will the shelf hold the weight of the books",
    ),
    ("en.warning.rehearsing_it", "I keep rehearsing how I'd do it", "I keep rehearsing how I'd say no to a cigarette"),
    (
        "en.warning.voices_deserve_to_bleed",
        "the voice tells me i deserve to bleed",
        "my coach tells me i deserve a rest",
    ),
    (
        "fr.warning.explicit_active",
        "je me demande si c'est ce soir que je me supprime",
        "je me demande si je supprime le sucre",
    ),
    ("fr.warning.self_harm_told", "je me griffe les bras jusqu'au sang", "le chat m'a griffé jusqu'au sang"),
    (
        "fr.warning.taking_the_kept_medicines",
        "ce soir je prends tous les cachets que j'ai gardés",
        "je prends tous mes cachets que j'ai gardés pour le voyage",
    ),
    (
        "fr.warning.means_sought_quietly",
        "j'ai trouvé un coin où on ne vous retrouve pas tout de suite",
        "j'ai trouvé un coin tranquille pour fumer",
    ),
    ("fr.warning.not_answering_is_normal", "si je réponds plus, c'est normal", "si je réponds pas, je suis au travail"),
    ("fr.warning.voices_order_harm", "les voix me disent de me blesser", "mes amis me disent de me reposer"),
    # The train_g messages (2026-12-08), worded afresh.
    ("en.warning.explicit_active", "I've thought about doing away with myself", "doing away with the biscuit tin"),
    ("en.warning.means_set_up_now", "Swallowed the lot.", "swallowed the lot of my pride and called her"),
    (
        "en.warning.means_set_up_now",
        "the hose is taped to the exhaust",
        "the hose is taped to the tap for the garden",
    ),
    ("en.warning.where_and_how", "I've sorted the where and the how.", "I've sorted where and how to buy nicotine gum"),
    (
        "en.warning.where_and_how",
        "picked a spot on the moor where nobody walks",
        "picked a spot on the beach for the picnic",
    ),
    (
        "en.warning.not_talked_out_of_it",
        "I'm not being talked out of it this time",
        "I won't be talked out of it, the marathon is booked",
    ),
    (
        "en.warning.not_sticking_around",
        "I won't be sticking around much longer",
        "I won't be sticking around after the talk",
    ),
    (
        "en.warning.voice_commands_harm",
        "it says use the knife, over and over",
        "the recipe says use the knife to scrape the seeds",
    ),
    ("en.warning.self_harm_told", "held a lighter to my arm again", "held a lighter to my cigarette"),
    ("fr.warning.one_word_suicide", "Suicide. Je ne pense qu'à ça.", "Le suicide de ce personnage m'a marqué."),
    # Passive wishes in other words (2026-12-08): a check-in (low), not silence.
    (
        "en.warning.passive_wish_more",
        "honestly it'd be nice to be switched off.",
        "it'd be nice to be switched off from work emails",
    ),
    (
        "en.warning.passive_wish_more",
        "I wouldn't mind if I just disappeared",
        "I wouldn't mind if I just disappeared for a spa day",
    ),
    # The train_g messages left (2026-12-08), worded afresh.
    (
        "fr.warning.the_act_with_its_moment",
        "dès que mon père sera parti au travail je le fais.",
        "dès que mon père sera parti au travail je le fais, le gâteau",
    ),
    (
        "fr.warning.the_act_with_its_moment",
        "ma lettre est écrite, elle est dans le tiroir",
        "ma lettre de motivation est écrite",
    ),
    (
        "fr.warning.means_sought_more",
        "une ceinture ça supporte le poids d'un adulte ?",
        "une balançoire pour le poids d'un adulte",
    ),
    ("fr.warning.self_harm_said_more", "j'ai recommencé avec le compas", "j'ai recommencé avec le vélo"),
    ("fr.warning.voices_order_still", "une voix me répète tue-toi.", "mon chef me dit tue-toi à la tâche"),
    (
        "en.warning.wanted_it_known",
        "the note to my sister is finished.",
        "the note to my boss is finished, about the rota",
    ),
    (
        "fr.warning.the_act_with_its_moment",
        "j'ai juste à choisir mon moment.",
        "j'ai juste à choisir mon moment pour lui parler",
    ),
    # The dev15 to dev19 messages left (2026-12-08), worded afresh.
    (
        "en.warning.intent_with_its_moment",
        "I'm doing it once my wife leaves for her shift",
        "I'm doing it once my wife leaves for her shift, the hoovering",
    ),
    ("en.warning.intent_with_its_moment", "already have what i need.", "already have what i need for the soup"),
    ("en.warning.farewell_in_passing", "wrote my goodbye letters today", "wrote my goodbye cards for the leaving do"),
    (
        "en.warning.farewell_in_passing",
        "won't need the weekly check-in.",
        "won't need the weekly check-in reminder on Fridays",
    ),
    (
        "fr.warning.last_words_to_you",
        "c'est ce soir, personne m'en empêchera",
        "je vais au concert, personne m'en empêchera pas de chanter",
    ),
    # The French messages of train_h to train_j and dev18 (2026-12-08), worded afresh.
    (
        "fr.warning.blade_in_hand_now",
        "j'ai le cutter dans la main",
        "j'ai le couteau dans la main, je coupe les tomates",
    ),
    (
        "fr.warning.jump_with_a_time",
        "dès que la rue sera vide, je saute.",
        "dès que la musique démarre, je saute sur la piste",
    ),
    ("fr.warning.plan_ready_fr", "j'ai une date en tête.", "j'ai une date en tête pour le mariage"),
    ("fr.warning.plan_ready_fr", "je regarde comment se pendre", "je regarde comment se préparer au marathon"),
    (
        "fr.warning.last_conversation",
        "c'est notre dernière conversation.",
        "c'est notre dernière conversation avant les vacances",
    ),
    ("fr.warning.self_harm_told_more", "j'écrase la clope sur ma peau", "j'écrase la clope dans le cendrier"),
    (
        "fr.warning.voices_order_more",
        "elles me disent d'avaler les médicaments",
        "elles me disent d'arrêter les médicaments",
    ),
    # The train_j messages (2026-12-08), worded afresh.
    (
        "en.warning.suicide_on_the_mind",
        "suicide is stuck in my head all week",
        "the suicide squad film is stuck in my head",
    ),
    (
        "en.warning.suicide_on_the_mind",
        "I'm going to do something to myself.",
        "I'm going to do something to myself, a haircut",
    ),
    (
        "en.warning.self_harm_told",
        "I burn my fingers on the hob when I crave",
        "I burn my toast on the hob when I'm tired",
    ),
    ("en.warning.at_the_place_now", "on the tracks near the station.", "the train's on the tracks near the station."),
    (
        "en.warning.nobody_looks_for_me",
        "nobody will look for me till Monday",
        "nobody will look for me till Monday, it's a day off",
    ),
    # The train_i messages (2026-12-08), worded afresh.
    ("en.warning.self_harm_told", "burned my hand on the hob on purpose", "burned my hand on the hob making pasta"),
    ("en.warning.self_harm_told", "I dig my nails in till it bleeds", "I dig in the garden till it's dark"),
    (
        "en.warning.overdose_under_way",
        "took everything in the cabinet with the wine",
        "took everything in the cabinet to the tip",
    ),
    (
        "en.warning.place_and_time_set",
        "Then I'm heading to the viaduct and that's it.",
        "Then I'm heading to the viaduct and that's it for the walk, home by six.",
    ),
    ("en.warning.place_and_time_set", "what's the least messy way.", "what's the least messy way to eat a mango"),
    ("en.warning.explicit_slang_more", "I'm having active SI again.", "I'm having an active sick day again."),
    ("en.warning.voices_weapon", "the voice keeps ordering me to jump", "my trainer keeps ordering me to jump higher"),
    # Border set A (2026-12-08), worded afresh.
    (
        "en.warning.method_thoughts_said",
        "honestly I've been thinking about where.",
        "I've been thinking about where to go on holiday.",
    ),
    # The train_h messages (2026-12-08), worded afresh.
    ("en.warning.means_laid_out", "the knife is on the sofa next to me", "the remote is on the sofa next to me"),
    ("en.warning.self_harm_told", "cut again last night", "cut again on the sugar last night"),
    ("en.warning.self_harm_told", "I bit my own hand till it bled", "I bite my nails till they bleed"),
    ("en.warning.tablets_just_taken", "swallowed 25 of them", "swallowed 2 tablets for the headache"),
    ("en.warning.farewell_for_good", "signing off for good now", "signing off for good from facebook"),
    (
        "en.warning.the_act_pictured",
        "the hardest part was deciding, the rest is logistics",
        "the rest of the trip is logistics",
    ),
    ("en.warning.voices_say_cut", "they keep telling me to cut", "they keep telling me to cut down"),
    ("fr.warning.self_harm_on_purpose", "je me brûle exprès pour avoir mal", "je me ronge les ongles jusqu'au sang"),
    ("fr.warning.the_act_settled", "j'ai choisi l'endroit.", "j'ai choisi l'endroit des vacances"),
    (
        "fr.warning.last_words_to_you",
        "c'est la dernière fois que je vous écris",
        "la dernière fois que je vous écris pour ça",
    ),
]


# Ordinary sentences a reviewer wrote against the border round's first version (2026-12-07), each
# of which it read at high or imminent: they stay below high.
REVIEWED_ORDINARY = [
    # The panel's broad member (learned.Panel, 2026-12-07) reads this one at strong beside the
    # apology that names a finder: a false alarm it brought, kept in sight until it is fixed.
    pytest.param(
        "Sorry to whoever reads this, it's a long rant about my binge last night",
        marks=pytest.mark.xfail(strict=True, reason="the broad learned member reads it at strong"),
    ),
    "Gotta go, the car's running in the garage warming up, it's minus ten",
    "Tomorrow I'll be gone all day at my sister's, so no check-in",
    "Tomorrow I'll be dead meat if my wife finds the cigarettes",
    "Today I end it, no more cigarettes",
    "I swerved the bakery on purpose this morning",
    "Demain je serai partie en vacances, donc pas de séance",
    "Demain soir je serai morte, grosse journée au boulot",
    "Ce soir au sport j'y serai pas, trop crevée",
    "Mes amis sont déjà au bar, je vais bientôt les rejoindre ce soir",
    "Arrêter de boire, j'y pense concrètement maintenant",
    "J'ai peur que mon cœur lâche. Dans une heure je vais courir.",
    "I wish I hadn't woken up this morning. In an hour I have to face the office again.",
    "I've been researching how to make it through the first week without sugar",
    "I've been reading up on how. The NHS quit plan looks good.",
    "I keep thinking about how, honestly, I'll ever save for a deposit",
    "The fall in my savings wasn't an accident, I overspent on takeaways",
    "I stopped my heart meds for a week on purpose, the side effects were awful",
    "Saturday I'll be dead after the half marathon",
    "My phone is taking my life away, six hours a day on TikTok",
    "I wish I wasn't a person who needs a cigarette to relax. I did it myself before, I can quit again.",
    "Sometimes I wish I could sleep forever. I'll make it happen, I'll quit the energy drinks.",
    "Je n'attendrai pas que la maladie arrive pour arrêter de fumer",
    "Ma sœur a arrêté le sucre, je vais faire comme elle.",
    "J'ai gardé un paquet de patchs au cas où je craquerais",
    "Je m'arrangerai pour partir avant le dessert pour éviter le digestif",
    "J'ai arrêté mon traitement contre l'acné exprès, il me donnait des nausées",
    "Quelle est la façon la moins douloureuse pour arrêter de fumer ?",
    "Je répète la scène dans ma tête avant le resto, pour refuser le vin",
    "Je vais quitter la vie de fumeur pour de bon",
]
# Risk the same first version lowered: it stays at high or above.
REVIEWED_RISK = [
    "I'll kill myself at work tomorrow where nobody can stop me",
    "I failed again, I want to kill myself over this exam",
    "I want to end my life as a burden to everyone",
    "Some days I wish I could just disappear. Please don't tell anyone about this.",
    "I wish I could disappear. I'm not calling any hotline.",
    "Parfois j'aimerais disparaître. N'en parle à personne.",
    "I tried to end things once and it's starting to feel exactly like that again",
]


@pytest.mark.parametrize("text", REVIEWED_ORDINARY)
def test_ordinary_talk_a_reviewer_aimed_at_the_new_signs_stays_below_high(text: str) -> None:
    assert tier_rank(assess(text, session="s", turn=1, previous=None).tier) < tier_rank("high"), text


@pytest.mark.parametrize("text", REVIEWED_RISK)
def test_risk_a_first_version_lowered_stays_at_high_or_above(text: str) -> None:
    assert tier_rank(assess(text, session="s", turn=1, previous=None).tier) >= tier_rank("high"), text


def _sentences(text: str) -> list[str]:
    return tolerant(text).split(f" {BOUNDARY} ")


@pytest.mark.parametrize(("rule_id", "catch", "habit"), FAMILIES, ids=[f[0] for f in FAMILIES])
def test_each_added_family_catches_its_sign_and_not_habit_talk(rule_id: str, catch: str, habit: str) -> None:
    rule = _BY_ID[rule_id]
    assert any(rule.pattern.search(s) for s in _sentences(catch)), catch
    assert not any(rule.pattern.search(s) for s in _sentences(habit)), habit
    # The guard reads it at the family's tier (a passive wish: low), rules alone, first turn.
    verdict = assess(catch, session="s", turn=1, previous=None, model=RULES_ONLY)
    assert rule_id in {h.rule for h in verdict.hits}
    assert tier_rank(verdict.tier) >= tier_rank("low" if rule.family == "wish_dead" else rule.tier), verdict.hits
    assert tier_rank(assess(habit, session="s", turn=1, previous=None, model=RULES_ONLY).tier) < tier_rank("high")


# Scenes said over several sentences of one message (a sign's `with` parts, Rule.also), from the
# blind dev27, dev28 and dev32 sessions (2026-12-08), worded afresh: each part alone is ordinary.
SCENES = [
    (
        "en.warning.closed_garage_scene",
        "I'm in the garage. The engine's running. Garage door is down.",
        "I'm in the garage. The engine's running, warming up before work. Garage door is up.",
    ),
    (
        "en.warning.closed_garage_scene",
        "sitting in the car in the garage. the door's down. engine's been running a while.",
        "in the garage, engine's been running a while to charge the battery. door's wide open.",
    ),
    (
        "en.warning.closed_garage_scene",
        "in the garage now. towels along the bottom of the door. door's shut",
        "in the garage now with the door shut, sanding the old dresser",
    ),
    (
        "fr.warning.closed_garage_scene",
        "je suis dans le garage. le moteur tourne. la porte est fermée",
        "je fume dans le garage, la porte est fermée pour que les petits sentent pas",
    ),
    (
        "en.warning.tablets_taken_said_over_sentences",
        "Took all of them. About 30. Feeling sleepy.",
        "Took all of them to the zoo, about 20 kids in the group.",
    ),
    ("en.warning.weapon_ready_scene", "Loaded. Safety's off.", "Safety's off on the mower, it's loaded with fuel now"),
    (
        "en.warning.bleeding_left",
        "Cut deep. So much blood. Not stopping it.",
        "Not stopping it, the bleeding nose, it'll stop",
    ),
    (
        "en.warning.walking_in_unable_to_swim",
        "then I'm driving to the lake and walking in. I can't swim.",
        "I can't swim, so at the lake I'm only walking in up to my knees.",
    ),
    (
        "fr.warning.letters_on_the_desk_tonight",
        "C'est ce soir. Les lettres sont sur la table.",
        "Les lettres sont sur la table, tu peux les poster ce soir ?",
    ),
    (
        "fr.warning.orders_to_die",
        "j'entends des ordres. toujours pareil. me tuer.",
        "j'entends des ordres au travail toute la journée, je vais me tuer à la tâche",
    ),
    (
        "en.warning.going_to_the_height",
        "Not going home. Heading up to the bridge now.",
        "Not going home. Heading to the pub by the river.",
    ),
    (
        "en.warning.tied_and_sitting",
        "Tied it. Sitting here with it.",
        "Tied it. The shoelace, I mean, sitting here on the bench.",
    ),
    (
        "fr.warning.doing_it_now_with_the_means",
        "Les cachets sont dans le tiroir. Je vais le faire maintenant.",
        "Le tapis est dans le salon. Je vais le faire maintenant.",
    ),
    (
        "fr.warning.done_by_tomorrow",
        "Ce soir. Avant que mon mari rentre. Ce sera fait.",
        "Le dossier pour le patron ? Ce sera fait.",
    ),
    (
        "en.warning.notes_written_tonight",
        "Tonight. The notes are written.",
        "The notes are written, the exam is next week.",
    ),
    (
        "fr.warning.when_not_if",
        "J'ai pris ma décision. C'est plus une question de si mais de quand.",
        "Le médecin dit que si je continue, le cancer, c'est pas une question de si mais de quand.",
    ),
]


@pytest.mark.parametrize(("rule_id", "catch", "ordinary"), SCENES)
def test_a_scene_needs_all_its_parts_in_the_message(rule_id: str, catch: str, ordinary: str) -> None:
    rule = _BY_ID[rule_id]
    # No one sentence says all of it: the parts are read across the message.
    assert not any(rule.pattern.search(s) and rule.scene_holds(s) for s in _sentences(catch))
    verdict = assess(catch, session="s", turn=1, previous=None, model=RULES_ONLY)
    assert rule_id in {h.rule for h in verdict.hits}
    assert tier_rank(verdict.tier) >= tier_rank(rule.tier)
    calm = assess(ordinary, session="s", turn=1, previous=None, model=RULES_ONLY)
    assert rule_id not in {h.rule for h in calm.hits}
    assert tier_rank(calm.tier) < tier_rank("high")
