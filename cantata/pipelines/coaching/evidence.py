"""The evidence score: broad concept lexicons beside the phrase rules, for the indirect
disclosures no phrase family lists.

The phrase rules (signs.py) match ways of saying a sign; people in crisis find others
("they'd be relieved", "does X actually work", "this time next week I won't be here").
Here each warning sign is a CONCEPT: a lexicon of the words that carry it, per locale,
inflected and as typed fast (the lexicons read the tolerant() form, tolerant.py). The
concepts, their weights, families and clinical sources are data a clinician reviews
(lexicon/concepts.yaml; the phrases in lexicon/<locale>/evidence.yaml). A sentence's score
is the sum of the weights of the distinct concepts it holds (a concept said twice in
different words counts one more when it `repeats`), and it counts only when one of them is
a sign in its own right (a time word or "I want" alone is nothing):

- score >= rules.HIGH: a sign a clinician acts on alone ("burden" + "if I weren't here"; a
  means + a lethality question; "goodbye" + "for good"): tier high, weight HIGH;
- a weaker score: a weak signal (tier low, weight 1; a means question weighs 2), named by
  its warning sign, which ACCUMULATES in the session with the phrase rules' signals
  (guard.accumulate: several signs of different families reach high, a means question
  after hopelessness is high at once).

Contexts that explain the words are discounts, applied per sentence (the `explains` table
of concepts.yaml; the contexts' words in lexicon/<locale>/contexts.yaml): a habit goal
explains a date, a plan, giving things away or "ending" something; a past medical event or
someone else's death explains death and means words; fiction or the news explains them
all; a figure of speech ("this diet will be the end of me") explains death words. A
sentence the phrase rules read as a denial ("I'm not suicidal") adds no evidence. Nothing
is read across a sentence end: the score is per sentence of the tolerant form.
"""

from __future__ import annotations

from dataclasses import dataclass

from cantata.pipelines.coaching import lexicon
from cantata.pipelines.coaching.lexicon import Concept, Concepts, Contexts, Lexicon
from cantata.pipelines.coaching.rules import HIGH, GateIndex, sentence_words
from cantata.pipelines.coaching.safety import Category, Tier


@dataclass(frozen=True)
class Evidence:
    """The evidence of one sentence: its score, the concepts that made it, and what it means."""

    score: int
    concepts: tuple[str, ...]
    category: Category
    tier: Tier
    family: str
    weight: int


class Scorer:
    """The evidence score's engine over one set of data files: the concepts, the contexts
    that explain them, and the risk concepts said without naming death (names_risk)."""

    def __init__(self, concepts: Concepts, contexts: Contexts, risk_concepts: Lexicon) -> None:
        self.concepts = concepts.concepts
        self._index = GateIndex(self.concepts)
        self._by_name = {c.name: c for c in self.concepts}
        self._family_order = concepts.family_order
        self._explains = concepts.explains
        self._risk_concepts = concepts.sets["risk_concepts"]
        self._helper_signs = concepts.sets["helper_signs"]
        self._about_means = concepts.sets["about_means"]
        self._means = concepts.sets["means_words"]
        self._voices = concepts.sets["voices"]
        self._risk_lexicon = risk_concepts
        self._means_named = Lexicon(tuple(f for f in risk_concepts.families if f.name == "means_named"))
        self._means_index = GateIndex([c for c in self.concepts if c.name in self._means])
        # The words of every sign's lexicon (and a hedge's, a voice's): a sentence with none
        # of them holds no sign, so no lexicon is searched (most of what a coach hears).
        read = [c for c in self.concepts if c.sign or c.name in ("hedge", "voice")]
        self._sign_words: frozenset[str] = frozenset().union(*(c.gate or () for c in read))
        self._gateless_sign = any(c.gate is None for c in read)
        ctx = contexts.pattern
        self._fiction, self._idiom, self._denial = ctx("fiction"), ctx("idiom"), ctx("denial")
        self._contrast, self._denial_hedge = ctx("contrast"), ctx("denial_hedges")
        self._habit = ctx("habit_goal_for_concepts")
        self._occasion, self._trap = ctx("ordinary_occasion"), ctx("ordinary_trap")
        self._scope, self._giving, self._note = ctx("limited_scope"), ctx("ordinary_giving"), ctx("ordinary_note")
        self._ordinary_means = ctx("ordinary_means")
        self._note_purpose = ctx("note_purpose")  # a birthday, where the key is: as an ordinary addressee
        self._refers_back = ctx("refers_back")
        self._past = (ctx("own_past"), ctx("other_death"), ctx("other_past"))
        self._medical = ctx("medical")
        self._other, self._worry = ctx("helper_other"), ctx("helper_worry")
        self._third, self._third_subject = ctx("third_person"), ctx("third_subject")
        self._self_harm, self._risk_words = ctx("self_harm"), ctx("risk_words")
        self._death_words = ctx("death_words")
        self._passive_risk, self._others_spared = ctx("passive_risk"), ctx("others_spared")
        self._weariness = ctx("weariness")

    def _concepts(self, sentence: str, words: frozenset[str]) -> dict[str, int]:
        """Each concept found in the sentence, with the number of distinct words that carry it."""
        found: dict[str, int] = {}
        for concept in self._index.candidates(words):
            if concept.pattern.search(sentence) is None:
                continue
            found[concept.name] = len({m.group(0) for m in concept.pattern.finditer(sentence)})
        return found

    def _discount(self, sentence: str, found: dict[str, int]) -> dict[str, int]:
        if self._fiction.search(sentence):
            return {}
        explains = self._explains
        drop: set[str] = set()
        if self._idiom.search(sentence):
            drop |= explains["idiom"]
        if self._habit.search(sentence):
            drop |= explains["habit_goal"]
        # A named death is never explained by an occasion ("hope the plane goes down on my flight").
        if self._occasion.search(sentence) and not {"death", "passive", "euphemism"} & found.keys():
            drop |= explains["ordinary_occasion"]
        if self._trap.search(sentence):
            drop |= explains["ordinary_trap"]
        if self._scope.search(sentence):
            drop |= explains["limited_scope"]
        if self._giving.search(sentence):
            drop |= explains["ordinary_giving"]
        if self._note.search(sentence) or (self._note_purpose.search(sentence) and "death" not in found):
            drop |= explains["ordinary_note"]
        if self._ordinary_means.search(sentence):
            drop |= explains["ordinary_means"]
        if any(p.search(sentence) for p in self._past):
            drop |= explains["past"]
        if self._medical.search(sentence) and "lethal" not in found:
            drop |= explains["medical"]
        return {k: v for k, v in found.items() if k not in drop}

    def _counted(self, found: dict[str, int]) -> set[str]:
        """The concepts found that count: each beside one of its frames, when it has some."""
        return {n for n in found if not self._by_name[n].frames or self._by_name[n].frames & found.keys()}

    def _score(self, found: dict[str, int]) -> int:
        by_name = self._by_name
        counted = self._counted(found)
        # A lethality word only counts about a means; a voice only when it commands harm.
        if not self._means & found.keys():
            counted -= self._about_means
        if not self._voices <= found.keys():
            counted -= self._voices
        score = sum(by_name[n].weight + (1 if found[n] > 1 and by_name[n].repeats else 0) for n in counted)
        if "hopeless" in counted and {"death", "life"} & counted:
            score += 1  # 988 "no reason to live": hopelessness about one's own life
        return score

    def _is_sign(self, name: str) -> bool:
        return self._by_name[name].sign

    def assess_sentence(
        self, sentence: str, words: frozenset[str] | None = None, *, means_before: bool = False
    ) -> Evidence | None:
        """The evidence in one sentence of the tolerant form, or None when there is none.
        `words`: its rules.sentence_words(), when the caller has them. `means_before`: a means
        was named a moment ago (earlier in the message or a turn or two before), so "they're
        on the table", "il est sur mes genoux" set out that means (the context `refers_back`)."""
        words = sentence_words(sentence) if words is None else words
        referred = means_before and self._refers_back.search(sentence) is not None
        if not referred and not self._gateless_sign and self._sign_words.isdisjoint(words):
            return None
        found = self._concepts(sentence, words)
        if referred and "at_hand" in found and not self._means & found.keys():
            found["lethal_means"] = 1  # the means named before, set out now
        if (
            not any(self._is_sign(n) for n in found)
            and not self._voices <= found.keys()
            and not {"hedge", "safe"} <= found.keys()
        ):
            return None  # most sentences: no sign at all, so no discount need be read
        if self._denial.search(sentence):
            return None
        found = self._discount(sentence, found)
        if not found:
            return None
        other = self._other.search(sentence) is not None
        if other and self._worry.search(sentence) and self._helper_signs & found.keys():
            return Evidence(HIGH, tuple(found), "helper_concern", "high", "helper_worry", HIGH)
        if other and self._third.search(sentence) and self._score(found) >= HIGH:
            return Evidence(self._score(found), tuple(found), "helper_concern", "high", "helper_worry", HIGH)
        voices = self._voices <= found.keys()
        hedged = {"hedge", "safe"} <= found.keys()  # a hedged statement of safety
        if not voices and not hedged and not any(self._is_sign(n) for n in found):
            return None
        score = self._score(found)
        family = self._family(found)
        if score >= HIGH:
            # A concept marked `imminent` (concepts.yaml: a lethal means set up or within reach,
            # "the pills are out on the table") makes the sign imminent.
            close = any(self._by_name[n].imminent for n in self._counted(found))
            return Evidence(score, tuple(found), "suicide_self_harm", "imminent" if close else "high", family, HIGH)
        means_question = bool(self._means & found.keys()) and (
            "question" in found or "lethal_weak" in found or "acquire" in found
        )
        if means_question:
            return Evidence(score, tuple(found), "suicide_self_harm", "low", "means", 2)
        # A weak signal needs a sign beyond one's own-death words (which the phrase rules read):
        # "I'm scared of dying young" is no sign.
        if score >= 2 and (hedged or any(self._is_sign(n) and n != "death" for n in found)):
            return Evidence(score, tuple(found), "suicide_self_harm", "low", family, 1)
        return None

    def _family(self, found: dict[str, int]) -> str:
        """The warning sign an assessed sentence's evidence is named by."""
        family = next((self._by_name[n].family for n in self._family_order if n in found), "")
        if self._voices <= found.keys():
            return "command_voices"
        if not family and {"hedge", "safe"} <= found.keys():
            return "hedge"
        return family or next((self._by_name[n].family for n in found if self._is_sign(n)), "")

    def names_risk(self, sentence: str, words: frozenset[str] | None = None) -> bool:
        """Whether the sentence names a risk concept (death, ending, self-harm, hopelessness about
        living, a means, a farewell with finality), unless a figure of speech or a story explains
        it: what a strong learned read needs to be high (guard._learned)."""
        if self._fiction.search(sentence) or self._idiom.search(sentence):
            return False
        if self._death_named(sentence) or self._risk_words.search(sentence):
            return True
        # The warning signs said without naming death (a burden, no way out, to disappear...): data
        # files a clinician reviews (lexicon/<locale>/risk_concepts.yaml).
        words = sentence_words(sentence) if words is None else words
        if self._risk_lexicon.matches(sentence, words):
            return True
        found = self._concepts(sentence, words)
        # The discounts only take concepts away: most sentences name none, and are not read again.
        return self._names_a_risk(found) and self._names_a_risk(self._discount(sentence, found))

    def _names_a_risk(self, found: dict[str, int]) -> bool:
        return bool(self._risk_concepts & found.keys()) or (
            "hopeless" in found and bool({"life", "death"} & found.keys())
        )

    def names_only_a_wish(self, sentences: list[str]) -> bool:
        """Whether the risk the sentences name is a passive wish and nothing more (C-SSRS item 1:
        not to exist, not to wake up, to be taken in one's sleep, never to have been born): with
        each such phrase (`passive_risk`) cut out, no sentence names a risk concept any more.
        What a strong learned read of words that name no sign of their own then reads."""
        wished = False
        for sentence in sentences:
            if self._others_spared.search(sentence):
                return False  # others spared by one's absence: a burden, a sign of its own
            rest = self._passive_risk.sub(" ", sentence)
            wished = wished or rest != sentence
            rest = self._weariness.sub(" ", rest)  # said with the wish, weariness is its picture
            if self.names_risk(rest):
                return False
        return wished

    def names_means(self, sentence: str, words: frozenset[str]) -> bool:
        """Whether the sentence names a means (a concept of `means_words`), after the discounts."""
        return bool(self._means & self._discount(sentence, self._concepts(sentence, words)).keys())

    def refers_back(self, sentence: str) -> bool:
        """Whether a pronoun in the sentence sets something out within reach (`refers_back`)."""
        return self._refers_back.search(sentence) is not None

    def mentions_means(self, sentence: str) -> bool:
        """Whether the sentence names a medicine, a weapon, a height or another means in any way
        (risk_concepts' `means_named`, or a means concept), unless a story or a figure of speech
        explains it: what a pronoun a moment later may refer to. Read on every sentence, so only
        those lexicons are searched (the means concepts behind their gate words)."""
        words = sentence_words(sentence)
        named = self._means_named.matches(sentence, words) or any(
            c.pattern.search(sentence) is not None for c in self._means_index.candidates(words)
        )
        return named and not (self._fiction.search(sentence) or self._idiom.search(sentence))

    def names_explicitly(self, sentence: str) -> bool:
        """Whether the sentence names death, dying, suicide, self-harm (the contexts `self_harm`
        and `death_words`) or a lethal means (the concepts `lethal_means` and `overdose`, less what
        the past explains) in so many words, unless a figure of speech or a story explains it: the
        narrowest of the risk concepts, on which a strong learned read needs a lower score
        (learned.Model.explicit)."""
        if self._fiction.search(sentence) or self._idiom.search(sentence):
            return False
        if self._death_named(sentence):
            return True
        found = self._discount(sentence, self._concepts(sentence, sentence_words(sentence)))
        return bool({"lethal_means", "overdose"} & found.keys())

    def _death_named(self, sentence: str) -> bool:
        return self._self_harm.search(sentence) is not None or self._death_words.search(sentence) is not None

    def sign_family(self, sentence: str, words: frozenset[str] | None = None) -> str:
        """The warning sign a sentence's words name (a concept family: burden, hedge, farewell...),
        after the discounts, or "" when they name none: what a weak learned signal (learned.py) is
        counted as, so that the same sign said in other words is counted once in a session."""
        words = sentence_words(sentence) if words is None else words
        found = self._discount(sentence, self._concepts(sentence, words))
        if self._voices <= found.keys():
            return "command_voices"
        family = next((self._by_name[n].family for n in self._family_order if n in found), "")
        if not family and {"hedge", "safe"} <= found.keys():
            family = "hedge"
        return family or next((self._by_name[n].family for n in found if self._by_name[n].family), "")

    def denies(self, sentence: str, message: str) -> bool:
        """A denial of intent or of a plan ("I'm not going to hurt myself", "no plans", "je vais
        pas me faire de mal") in a message that nothing qualifies (a hedge, a condition or a time
        anywhere in it, or a "but" after the denial: "as long as my mum is alive I won't do
        anything", "not suicidal but I wish I'd never wake up"): no evidence, and the learned
        signal does not read it either (guard._rules), whose n-grams see only the risk words."""
        denial = self._denial.search(sentence)
        if denial is None or self._contrast.search(sentence, denial.end()):
            return False
        if self._denial_hedge.search(message):
            return False
        return "hedge" not in self._concepts(sentence, sentence_words(sentence))

    def denial_holds(self, sentence: str, message: str, start: int, end: int) -> bool:
        """Whether the words from `start` to `end` of the sentence lie inside a denial that
        nothing in the message qualifies (as in `denies`): "c'est pas que je veux me faire du
        mal hein" denies the self-harm it names, as "I'm not suicidal" does."""
        return self.denies(sentence, message) and any(
            m.start() <= start and end <= m.end() for m in self._denial.finditer(sentence)
        )

    def about_someone_else(self, sentence: str) -> bool:
        """A helper speaking of the person they worry about ("my son says he...", "I'm worried
        about my wife"): someone close named, and they are the subject or the worry; not "I gave
        my sister my keys and told her where everything is"."""
        return self._other.search(sentence) is not None and (
            self._third_subject.search(sentence) is not None or self._worry.search(sentence) is not None
        )


_SCORER = Scorer(lexicon.bundled_concepts(), lexicon.bundled_contexts(), lexicon.bundled("risk_concepts"))
CONCEPTS: tuple[Concept, ...] = _SCORER.concepts
assess_sentence = _SCORER.assess_sentence
names_risk = _SCORER.names_risk
names_explicitly = _SCORER.names_explicitly
names_means = _SCORER.names_means
names_only_a_wish = _SCORER.names_only_a_wish
mentions_means = _SCORER.mentions_means
refers_back = _SCORER.refers_back
sign_family = _SCORER.sign_family
about_someone_else = _SCORER.about_someone_else
denies = _SCORER.denies
denial_holds = _SCORER.denial_holds
