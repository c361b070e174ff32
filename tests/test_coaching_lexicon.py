"""Phrase families as per-locale data files (issue #19, lexicon.py): a locale is a folder of
files, every family names its source, and a malformed file is refused with file, line, reason."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from cantata.errors import SpecError
from cantata.pipelines.coaching import evidence, guard, learned, signs
from cantata.pipelines.coaching.guard import RULES
from cantata.pipelines.coaching.lexicon import (
    LEXICON_DIR,
    bundled,
    bundled_concepts,
    bundled_contexts,
    load_concepts,
    load_contexts,
    load_grading,
    load_lexicon,
    load_signs,
)
from cantata.pipelines.coaching.replies import TEMPLATES, bundled_replies, load_replies
from cantata.pipelines.coaching.reply_checks import load_reply_checks
from cantata.pipelines.coaching.rules import HIGH, GateIndex
from cantata.pipelines.coaching.safety import ResourceEntry
from cantata.pipelines.coaching.tolerant import IDIOM, load_tolerance, tolerant

TOY = """\
families:
  - name: burden
    source: "a toy source"
    phrases:
      - "een last voor (?:iedereen|mijn familie)"
      - "iedereen (?:is|zou) beter af"
"""


TOY_SIGNS = """\
terms:
  kin: "(?:mijn (?:moeder|vader|zus|broer))"
signs:
  - id: farewell
    category: suicide_self_harm
    weight: 3
    source: "a toy source"
    phrases:
      - "zeg {kin} dat ik van (?:haar|hem) hou{end}"
  - id: taken
    family: attempt
    category: suicide_self_harm
    tier: imminent
    source: "a toy source"
    phrases:
      - "alle pillen (?:al )?genomen"
"""


def _toy_root(tmp_path: Path, text: str = TOY, name: str = "risk_concepts") -> Path:
    (tmp_path / "nl").mkdir(exist_ok=True)
    (tmp_path / "nl" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def _assert_refused(load: Callable[[], object], where: Path, line: int, reason: str) -> None:
    """`load()` refuses the toy file `where` in one line that names its line and the reason."""
    with pytest.raises(SpecError) as caught:
        load()
    message = str(caught.value)
    assert f"{where}:{line}" in message
    assert reason in message
    assert "\n" not in message


def test_a_toy_locale_is_built_from_files_alone(tmp_path: Path) -> None:
    lexicon = load_lexicon("risk_concepts", _toy_root(tmp_path))
    assert [(f.locale, f.name, f.source) for f in lexicon.families] == [("nl", "burden", "a toy source")]
    assert lexicon.families_in(tolerant("Ik ben een last voor iedereen.")) == ["burden"]
    assert lexicon.families_in(tolerant("een lastige klant voor iedereen")) == []  # whole words only
    assert not lexicon.matches(tolerant("ik ga wandelen"))


def test_a_toy_locale_s_warning_signs_are_rules_built_from_files_alone(tmp_path: Path) -> None:
    farewell, taken = load_signs("warning_signs", "warning", _toy_root(tmp_path, TOY_SIGNS, "warning_signs"))
    assert (farewell.id, farewell.tier, farewell.weight, farewell.family) == (
        "nl.warning.farewell",
        "high",
        3,
        "farewell",
    )
    assert farewell.pattern.search(tolerant("zeg mijn zus dat ik van haar hou"))
    assert not farewell.pattern.search(tolerant("zeg mijn zus dat ik van haar houding hou"))
    assert (taken.id, taken.tier, taken.family, taken.negatable) == ("nl.warning.taken", "imminent", "attempt", False)


TOY_SCENE = """\
signs:
  - id: closed_garage
    category: suicide_self_harm
    tier: imminent
    source: "a toy source"
    phrases:
      - "in de garage"
    with:
      - ["motor (?:draait|loopt)", "handdoeken onder de deur"]
      - ["deur (?:is )?dicht"]
"""


def test_a_toy_locale_s_scene_needs_every_part_said_somewhere_in_the_message(tmp_path: Path) -> None:
    (scene,) = load_signs("warning_signs", "warning", _toy_root(tmp_path, TOY_SCENE, "warning_signs"))
    said = tolerant("Ik zit in de garage. De motor draait. De deur is dicht.")
    assert scene.pattern.search(said) and scene.scene_holds(said)
    assert scene.scene_holds(tolerant("in de garage. handdoeken onder de deur. deur dicht"))  # either phrase of a part
    assert not scene.scene_holds(tolerant("Ik zit in de garage. De motor draait. De deur is open."))
    assert not scene.scene_holds(tolerant("in de garage, deur dicht, ik rook daar"))


TOY_TERMS = """\
terms:
  wish: "(?:ik wil|ik wens)"
  dead: "(?:dood zijn|sterven)"
  wish_dead: "{wish} (?:[a-z]+ )?{dead}"
"""

TOY_GRADED = """\
terms:
  soon: "(?:morgen|vanavond)"
signs:
  - id: sign.wish_dead
    category: suicide_self_harm
    tier: high
    negatable: false
    negation_inside: false
    gate: ["{wish}", graag]
    source: "a toy source"
    phrases:
      - "{wish_dead}"
      - "ik zou graag {dead}"
  - id: sign.voices
    family: voices
    category: suicide_self_harm
    tier: high
    escalates: false
    source: "a toy source"
    phrases:
      - "stemmen zeggen dat ik moet springen"
  - id: sign.gone
    family: not_around
    category: suicide_self_harm
    tier: low
    weight: 2
    source: "a toy source"
    phrases:
      - "ik zal er {soon} niet meer zijn{end}"
  - id: sign.burden
    category: suicide_self_harm
    weight: 1
    source: "a toy source"
    phrases:
      - "een last voor iedereen"
"""


def test_a_toy_locale_s_graded_signs_and_shared_terms_are_built_from_files_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """terms.yaml's terms (one using another) serve every sign file of the locale; a sign has a
    tier and the modifier steps it turns off, or a weight; the guard's engine reads them as its own."""
    root = _toy_root(tmp_path, TOY_TERMS, "terms")
    _toy_root(root, TOY_GRADED, "phrases")
    wish, voices, gone, burden = load_signs("phrases", root=root)
    assert [r.id for r in (wish, voices, gone, burden)] == [
        "nl.sign.wish_dead",
        "nl.sign.voices",
        "nl.sign.gone",
        "nl.sign.burden",
    ]
    assert (wish.tier, wish.weight, wish.family, wish.negatable, wish.escalates, wish.negation_inside) == (
        "high",
        3,
        "sign.wish_dead",
        False,
        True,
        False,
    )
    assert wish.gate == {"wil", "wens", "graag"}
    assert (voices.family, voices.negatable, voices.escalates) == ("voices", True, False)
    assert (gone.tier, gone.weight) == ("low", 2)
    assert (burden.tier, burden.weight, burden.negatable, burden.escalates) == ("low", 1, False, False)
    assert wish.pattern.search(tolerant("Ik wil echt sterven.")) and not wish.pattern.search(
        tolerant("ik wil sterk zijn")
    )
    assert gone.pattern.search(tolerant("ik zal er morgen niet meer zijn")) and not gone.pattern.search(
        tolerant("ik zal er morgen niet meer zijn dan een uur")
    )

    monkeypatch.setattr(guard, "RULE_INDEX", GateIndex((wish, voices, gone, burden)))
    verdict = guard.assess("Ik wil echt sterven.", session="toy", turn=1, previous=None, model=learned.OFF)
    assert (verdict.tier, [(h.rule, h.tier, h.weight) for h in verdict.hits]) == (
        "high",
        [("nl.sign.wish_dead", "high", 3)],
    )
    weak = guard.assess("Ik ben een last voor iedereen.", session="toy", turn=1, previous=None, model=learned.OFF)
    assert [(h.rule, h.tier, h.weight) for h in weak.hits] == [("nl.sign.burden", "low", 1)]
    # Two distinct weak signs of a session add up (2 + 1 is high) when one names the risk (grading.RISK_FAMILIES).
    both = guard.assess("ik zal er morgen niet meer zijn", session="toy", turn=2, previous=weak, model=learned.OFF)
    assert (weak.tier, both.tier) == ("low", "high")


def test_the_bundled_suicide_signs_load_from_their_files_in_the_guard_s_order() -> None:
    """signs.py is its files: first-person phrases, helpers, grammar, each locale in turn."""
    files = [load_signs(name) for name in ("phrases", "helpers", "grammar")]
    assert signs.RULES == tuple(r for rules in files for r in rules)
    assert RULES[: len(signs.RULES)] == signs.RULES
    assert {r.id.split(".")[0] for rules in files for r in rules} == {"en", "fr"}


def test_the_bundled_warning_signs_are_the_guard_s_rules_in_every_locale() -> None:
    signs = load_signs("warning_signs", "warning")
    assert {r.id.split(".")[0] for r in signs} == {p.name for p in LEXICON_DIR.iterdir() if p.is_dir()}
    ids = {r.id for r in RULES}
    assert all(r.id in ids for r in signs)


def test_every_bundled_locale_has_the_same_families_each_with_its_source() -> None:
    families = bundled("risk_concepts").families
    by_locale: dict[str, set[str]] = {}
    for family in families:
        assert family.source.strip(), family
        by_locale.setdefault(family.locale, set()).add(family.name)
    assert sorted(by_locale) == sorted(p.name for p in LEXICON_DIR.iterdir() if p.is_dir())
    assert len({frozenset(names) for names in by_locale.values()}) == 1, by_locale


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ('families:\n  - name: burden\n    source: x\n    phrases: ["(unclosed"]\n', 4, "not a regular expression"),
        ("families:\n  - name: burden\n    phrases: [a]\n", 2, "exactly the keys name, phrases, source"),
        ("families:\n  - name: burden\n    source: x\n    phrases: []\n", 4, "non-empty list"),
        ('families:\n  - name: burden\n    source: ""\n    phrases: [a]\n', 3, "non-empty string"),
        ("families: [\n", 2, "invalid YAML"),
        ("words: [a]\n", 1, "needs 'families', a list"),
    ],
)
def test_a_malformed_file_is_refused_with_file_line_and_reason(
    tmp_path: Path, text: str, line: int, reason: str
) -> None:
    root = _toy_root(tmp_path, text)
    _assert_refused(lambda: load_lexicon("risk_concepts", root), root / "nl" / "risk_concepts.yaml", line, reason)


def _sign(grade: str, phrase: str = "a", category: str = "suicide_self_harm") -> str:
    """A sign file of one entry: `grade` is its weight or tier line(s)."""
    return f'signs:\n  - id: plan\n    category: {category}\n    {grade}\n    source: x\n    phrases: ["{phrase}"]\n'


_TWICE = _sign("weight: 3") + _sign("weight: 3").removeprefix("signs:\n")


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        (_sign("weight: 3", "{day} then"), 6, "unknown term {day}"),
        (_sign("tier: high", "(unclosed"), 6, "not a regular expression"),
        (_sign("weight: 5"), 4, "weight must be 1, 2 or 3"),
        (_sign("weight: 3", category="smoking"), 3, "category must be one of"),
        (_sign("tier: urgent"), 4, "tier must be one of"),
        (_sign("weight: 2\n    negatable: false"), 2, "exactly the keys"),
        (_sign("tier: high\n    negatable: maybe"), 5, "true or false"),
        (_sign("tier: low\n    weight: 4"), 5, "weight must be 1, 2 or 3"),
        (_sign("weight: 3\n    gate: [two words]"), 5, "one lower-case word"),
        (_sign("weight: 3\n    gate: ['{day}']"), 5, "unknown term {day}"),
        (_TWICE, 7, "used twice"),
        (_sign("tier: high\n    with: []"), 5, "with must be a non-empty list of parts"),
        (_sign("tier: high\n    with: [a]"), 5, "a part must be a non-empty list of phrases"),
        (_sign("tier: high\n    with: [[a, '(b']]"), 5, "not a regular expression"),
        (_sign("tier: high\n    with: [['{day}']]"), 5, "unknown term {day}"),
        ("terms: [a]\nsigns: []\n", 1, "terms must be a mapping"),
        ("terms:\n  a: x\n  b: '{c}'\n  c: y\nsigns: []\n", 3, "unknown term {c}"),
    ],
)
def test_a_malformed_sign_file_is_refused_with_file_line_and_reason(
    tmp_path: Path, text: str, line: int, reason: str
) -> None:
    root = _toy_root(tmp_path, text, "warning_signs")
    _assert_refused(
        lambda: load_signs("warning_signs", "warning", root), root / "nl" / "warning_signs.yaml", line, reason
    )


def test_a_risk_concept_said_without_naming_death_lets_a_strong_learned_read_count() -> None:
    """evidence.names_risk (the gate of a strong learned read) reads the lexicon's families, in
    English and French; ordinary habit talk names none of them."""
    for text in (
        "honestly I feel like such a burden",
        "there's no way out of this for me",
        "I've been giving away my things",
        "je suis un poids pour ma famille",
        "c'est sans issue",
        "I'm so tired of living",
        "everyone would be fine if I'm not here",
    ):
        assert evidence.names_risk(tolerant(text)), text
    for text in (
        "my lungs are a burden on my running",
        "I gave away my last pack of cigarettes",
        "je range mon bureau",
        "I keep comparing my living room to strangers' on instagram",
        "the cost of living is mad right now",
    ):
        assert not evidence.names_risk(tolerant(text)), text


@pytest.mark.parametrize(
    ("absence", "ordinary"),
    [
        ("life would be easier if I wasn't in it", "the photo would be nicer if I wasn't in it blinking"),
        ("there won't be a me next year", "there won't be a meeting next year"),
        ("some days I'd be fine if my counter ran out", "my counter app says twenty days smoke-free"),
        ("I've been checking which balconies are high enough", "the ladder reaches the gutter easily"),
        ("ce serait plus simple si j'existais pas", "ce serait plus simple si le bus existait"),
        ("tout le monde serait tranquille si j'étais plus dans le décor", "j'ai changé le décor du salon"),
        ("parfois j'aimerais ne pas voir le lendemain", "j'aimerais voir le lendemain de la fête"),
    ],
)
def test_an_absence_said_in_other_words_is_a_risk_concept_and_its_everyday_twin_is_not(
    absence: str, ordinary: str
) -> None:
    """From the dev17 to dev19 and train_g to train_j messages (2026-12-08), worded afresh: a
    strong learned read of these sentences was not let count (names no risk)."""
    assert evidence.names_risk(tolerant(absence)), absence
    assert not evidence.names_risk(tolerant(ordinary)), ordinary


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("terms:\n  day: (?:maandag|dinsdag)\n  Week: x\n", 3, "lower-case letters, once in a locale"),
        ("terms:\n  day: '{days}'\n", 2, "unknown term {days}"),
        ("terms:\n  day: ''\n", 2, "non-empty string"),
        ("terms: [day]\n", 1, "terms must be a mapping"),
        ("terms:\n  day: [\n", 3, "invalid YAML"),
    ],
)
def test_a_malformed_terms_file_is_refused_with_file_line_and_reason(
    tmp_path: Path, text: str, line: int, reason: str
) -> None:
    root = _toy_root(tmp_path, text, "terms")
    _toy_root(root, TOY_SIGNS, "warning_signs")
    _assert_refused(lambda: load_signs("warning_signs", "warning", root), root / "nl" / "terms.yaml", line, reason)


def test_a_term_of_terms_yaml_is_not_defined_again_by_a_file(tmp_path: Path) -> None:
    root = _toy_root(tmp_path, 'terms:\n  kin: "(?:mijn zus)"\n', "terms")
    _toy_root(root, TOY_SIGNS, "warning_signs")
    where = root / "nl" / "warning_signs.yaml"
    _assert_refused(lambda: load_signs("warning_signs", "warning", root), where, 2, "once in a locale")


# -- the contexts, the evidence score's concepts and the grading as data ----------------------

# A toy locale's contexts: one phrase for each lexicon the evidence score's steps read.
TOY_CONTEXTS = {
    "fiction": ["film", "boek"],
    "idiom": ["ik schrik me dood"],
    "denial": ["niet suicidaal"],
    "contrast": ["maar"],
    "denial_hedges": ["denk ik", "vannacht"],
    "habit_goal_for_concepts": ["stoppen met roken"],
    "ordinary_occasion": ["bruiloft"],
    "ordinary_trap": ["file"],
    "limited_scope": ["in deze baan"],
    "ordinary_giving": ["oude"],
    "ordinary_note": ["boodschappenlijst"],
    "note_purpose": ["verjaardag"],
    "ordinary_means": ["jacht"],
    "refers_back": ["ze liggen (?:op|naast) (?:de|het|me)"],
    "own_past": ["jaren geleden"],
    "other_death": ["overleden"],
    "other_past": ["opa was"],
    "medical": ["dokter"],
    "helper_other": ["mijn (?:zoon|dochter)"],
    "helper_worry": ["bezorgd"],
    "third_person": ["hij", "zij"],
    "third_subject": ["hij", "zij"],
    "self_harm": ["mezelf (?:snijden|pijn doen)"],
    "death_words": ["dood", "sterven"],
    "risk_words": ["afscheid"],
    "passive_risk": ["niet meer wakker worden", "niet bestaan"],
    "others_spared": ["makkelijker voor (?:iedereen|hen)"],
    "weariness": ["moe van alles"],
}
# A toy locale's concepts: the bundled concepts.yaml (the same for every locale) says what they weigh.
TOY_EVIDENCE = {
    "burden": ["een last", "beter af"],
    "absence": ["zonder mij", "als ik er niet (?:meer )?ben"],
    "means": ["pillen", "brug"],
    "lethal_weak": ["genoeg"],
    "question": ["^(?:zijn|is|hoeveel)"],
}


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


def _toy_engine_root(tmp_path: Path) -> Path:
    """A root with the locale-neutral files of the bundle and one toy locale, nl, from files alone."""
    for name in ("concepts.yaml", "grading.yaml"):
        shutil.copy(LEXICON_DIR / name, tmp_path / name)
    lexicons = [{"name": n, "note": "a toy note", "phrases": p} for n, p in TOY_CONTEXTS.items()]
    words = [{"name": "function_words", "note": "a toy note", "words": ["ik", "het", "een", "niet"]}]
    _write(tmp_path / "nl" / "contexts.yaml", {"lexicons": lexicons, "words": words})
    _write(
        tmp_path / "nl" / "evidence.yaml", {"concepts": [{"name": n, "phrases": p} for n, p in TOY_EVIDENCE.items()]}
    )
    (tmp_path / "nl" / "risk_concepts.yaml").write_text(TOY, encoding="utf-8")
    return tmp_path


def test_a_toy_locale_s_evidence_score_is_built_from_files_alone(tmp_path: Path) -> None:
    root = _toy_engine_root(tmp_path)
    scorer = evidence.Scorer(load_concepts(root), load_contexts(root), load_lexicon("risk_concepts", root))
    burden = scorer.assess_sentence(tolerant("Iedereen is beter af zonder mij"))
    assert burden is not None
    assert (burden.tier, burden.family, burden.concepts) == ("high", "burden", ("burden", "absence"))
    means = scorer.assess_sentence(tolerant("Zijn twintig pillen genoeg"))
    assert means is not None and (means.tier, means.family, means.weight) == ("low", "means", 2)
    # The contexts' discounts: a story explains the words, and a denial adds no evidence.
    assert scorer.assess_sentence(tolerant("In de film is iedereen beter af zonder mij")) is None
    assert scorer.assess_sentence(tolerant("Ik ben niet suicidaal, ik ben een last zonder mij")) is None
    assert scorer.sign_family(tolerant("ik ben een last")) == "burden"
    assert scorer.names_risk(tolerant("ik wil dood"))
    assert scorer.names_risk(tolerant("ik ben een last voor iedereen"))  # risk_concepts.yaml's family
    assert not scorer.names_risk(tolerant("ik ga fietsen"))
    assert scorer.about_someone_else(tolerant("ik ben bezorgd om mijn zoon"))
    assert scorer.assess_sentence(tolerant("ik ga morgen fietsen")) is None
    # A denial that nothing qualifies; a "but" after it, or a hedge in the message, takes it back.
    assert scorer.denies(tolerant("ik ben niet suicidaal"), tolerant("ik ben niet suicidaal"))
    assert not scorer.denies(tolerant("niet suicidaal maar moe"), tolerant("niet suicidaal maar moe"))
    assert not scorer.denies(tolerant("ik ben niet suicidaal"), tolerant("ik ben niet suicidaal, denk ik"))


def test_a_toy_locale_s_contexts_and_grading_load_from_files_alone(tmp_path: Path) -> None:
    contexts = load_contexts(_toy_engine_root(tmp_path))
    assert contexts.pattern("idiom").search(tolerant("Ik schrik me dood!"))
    assert not contexts.pattern("idiom").search(tolerant("ik schrik"))
    assert contexts.per_locale("function_words") == {"nl": frozenset({"ik", "het", "een", "niet"})}
    with pytest.raises(SpecError, match="no locale's contexts.yaml has the lexicon 'time_cues'"):
        contexts.pattern("time_cues")
    grading = load_grading(tmp_path)
    assert grading.passive_weight < HIGH and grading.wish_families < grading.risk_families


def test_a_context_uses_the_terms_of_its_locale(tmp_path: Path) -> None:
    """A context's phrases may use the {terms} of the locale's terms.yaml, written once there."""
    _toy_root(tmp_path, 'terms:\n  means: "(?:pillen|touw)"\n', "terms")
    _toy_root(tmp_path, _CONTEXT.format(name="close_in_session", phrase="'{means} liggen klaar'"), "contexts")
    pattern = load_contexts(tmp_path).pattern("close_in_session")
    assert pattern.search("de pillen liggen klaar") and not pattern.search("de boeken liggen klaar")


def test_the_shared_part_of_two_steps_lexicons_is_written_once_and_each_extends_it() -> None:
    """The guard's and the evidence score's history and habit-goal lexicons had drifted apart: the
    shared part is one lexicon, and what each step reads beyond it is named."""
    contexts = bundled_contexts()
    for name in ("symptom_history", "own_past"):
        assert contexts.pattern(name).search(tolerant("I survived it years ago")), name
        assert contexts.pattern(name).search(tolerant("il y a deux ans")), name
    assert contexts.pattern("symptom_history").search(tolerant("j'ai survecu"))
    assert not contexts.pattern("own_past").search(tolerant("j'ai survecu"))
    assert contexts.pattern("own_past").search(tolerant("in my teens"))
    assert not contexts.pattern("symptom_history").search(tolerant("in my teens"))
    assert contexts.pattern("habit_goal_for_euphemism").search(tolerant("cutting out coffee"))
    assert not contexts.pattern("habit_goal_for_concepts").search(tolerant("cutting out coffee"))
    assert contexts.pattern("habit_goal_for_concepts").search(tolerant("this habit"))
    for name in ("habit_goal_for_euphemism", "habit_goal_for_concepts"):
        assert contexts.pattern(name).search(tolerant("I quit smoking")), name


def test_no_bundled_context_phrase_is_written_twice() -> None:
    """Within a locale, a phrase is in one lexicon's list once, and an extension never repeats
    its base (what the drifted copies of the history and habit lexicons did)."""
    for folder in sorted(p for p in LEXICON_DIR.iterdir() if p.is_dir()):
        lexicons = yaml.safe_load((folder / "contexts.yaml").read_text(encoding="utf-8"))["lexicons"]
        phrases = {entry["name"]: entry["phrases"] for entry in lexicons}
        for entry in lexicons:
            assert len(set(entry["phrases"])) == len(entry["phrases"]), (folder.name, entry["name"])
            base = set(phrases.get(entry.get("extends", ""), []))
            assert not base & set(entry["phrases"]), (folder.name, entry["name"], base & set(entry["phrases"]))


def test_the_risks_other_than_suicide_are_sign_files_that_keep_their_rule_ids() -> None:
    """Abuse, harm to others, a medical emergency, restrictive eating (lexicon/<locale>/other_risks.yaml)."""
    rules = load_signs("other_risks")
    assert {r.id for r in rules} == {
        f"{locale}.{kind}"
        for locale in ("en", "fr")
        for kind in ("abuse", "abuse.fear", "harm_others", "medical", "eating.severe", "eating")
    } | {"en.harm_others.hyperbole", "en.harm_others.voices", "fr.harm_others"}
    assert set(rules) <= set(RULES)
    by_id = {r.id: r for r in rules}
    assert (by_id["en.medical"].tier, by_id["en.medical"].negatable) == ("imminent", False)
    assert (by_id["en.abuse.fear"].tier, by_id["en.abuse.fear"].escalates) == ("low", False)
    assert by_id["en.abuse"].pattern.search(tolerant("My husband hits me"))
    assert by_id["fr.abuse"].pattern.search(tolerant("Mon mari me frappe"))


def test_every_bundled_concept_names_its_source_and_has_phrases() -> None:
    concepts = bundled_concepts().concepts
    raw = yaml.safe_load((LEXICON_DIR / "concepts.yaml").read_text(encoding="utf-8"))["concepts"]
    assert [c["name"] for c in raw] == [c.name for c in concepts]
    assert all(c["source"].strip() for c in raw)
    assert all(c.pattern.pattern != "(?!)" for c in concepts)
    assert {c.weight for c in concepts} <= set(range(1, HIGH + 1))


_CONTEXT = "lexicons:\n  - name: {name}\n    note: x\n    phrases: [{phrase}]\n"


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        (_CONTEXT.format(name="history", phrase='"(unclosed"'), 4, "not a regular expression"),
        (_CONTEXT.format(name="History", phrase="a"), 2, "lower-case letters"),
        ("lexicons:\n  - name: history\n    phrases: [a]\n", 2, "exactly the keys name, note, phrases"),
        (_CONTEXT.format(name="history", phrase="a") + "    whole_words: maybe\n", 5, "must be true or false"),
        (
            _CONTEXT.format(name="history", phrase="a") + "words:\n  - name: negations\n    note: x\n    words: []\n",
            8,
            "non-empty list",
        ),
        ("words: []\n", 1, "needs 'lexicons', a list"),
        (_CONTEXT.format(name="history", phrase="'{kin} ging dood'"), 4, "unknown term {kin}"),
    ],
)
def test_a_malformed_contexts_file_is_refused_with_file_line_and_reason(
    tmp_path: Path, text: str, line: int, reason: str
) -> None:
    root = _toy_root(tmp_path, text, "contexts")
    _assert_refused(lambda: load_contexts(root), root / "nl" / "contexts.yaml", line, reason)


def test_a_lexicon_that_extends_another_in_one_locale_extends_it_in_all(tmp_path: Path) -> None:
    _toy_root(
        tmp_path,
        _CONTEXT.format(name="history", phrase="a")
        + "  - name: past\n    note: x\n    extends: history\n    phrases: [b]\n",
        "contexts",
    )
    (tmp_path / "xx").mkdir()
    (tmp_path / "xx" / "contexts.yaml").write_text(_CONTEXT.format(name="past", phrase="c"), encoding="utf-8")
    with pytest.raises(SpecError, match=r"xx/contexts.yaml:2: .*'past' has another extends"):
        load_contexts(tmp_path)


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("concepts:\n  - name: dread\n    phrases: [a]\n", 2, "'dread' is not a concept of concepts.yaml"),
        (
            "concepts:\n  - name: burden\n    gate: []\n    phrases: [a]\n",
            3,
            "gate must be a non-empty list",
        ),
        ('concepts:\n  - name: burden\n    phrases: ["a)"]\n', 3, "not a regular expression"),
    ],
)
def test_a_malformed_evidence_file_is_refused_with_file_line_and_reason(
    tmp_path: Path, text: str, line: int, reason: str
) -> None:
    shutil.copy(LEXICON_DIR / "concepts.yaml", tmp_path / "concepts.yaml")
    root = _toy_root(tmp_path, text, "evidence")
    _assert_refused(lambda: load_concepts(root), root / "nl" / "evidence.yaml", line, reason)


@pytest.mark.parametrize(
    ("name", "old", "new", "reason"),
    [
        ("concepts", "weight: 2\n", "weight: 7\n", "weight must be 1 to 3"),
        ("concepts", "frames: [death, passive, absence, final]", "frames: [death, dread]", "'dread' is not a concept"),
        ("concepts", "sign: true", "sign: yes please", "sign must be true or false"),
        ("concepts", "explains:\n  # A figure", "explains:\n  fiction: [death]\n  # A figure", "explains maps each of"),
        ("grading", "window: 8", "window: soon", "window must be a whole number"),
        ("grading", "passive_weight: 2", "passive_weight: 3", "weighs less than a high sign"),
        ("grading", "  - passive_wish\n", "  - ''\n", "a family must be a non-empty string"),
        ("grading", "  reads: 2\n", "  reads: 9\n", "reads must be at least 2 and at most the window"),
        ("grading", "  score: 0.85\n", "  score: 85\n", "score must be a probability"),
        ("grading", "  weight: 2\n", "  weight: 3\n", "under a high sign"),
        ("grading", "  turns: 3\n", "  turns: 1\n", "turns must be a whole number, at least 2"),
        ("grading", "  score: 0.97\n", "  score: 1.5\n", "score must be a probability"),
        ("grading", "pure_wish_families:\n", "pure_wish_families:\n  - burden\n", "not among wish_families: burden"),
    ],
)
def test_a_malformed_locale_neutral_file_is_refused_with_file_line_and_reason(
    tmp_path: Path, name: str, old: str, new: str, reason: str
) -> None:
    """concepts.yaml and grading.yaml, the same for every locale: a bundled file with one fault,
    refused at the line of the fault."""
    text = (LEXICON_DIR / f"{name}.yaml").read_text(encoding="utf-8")
    assert old in text
    (tmp_path / f"{name}.yaml").write_text(text.replace(old, new, 1), encoding="utf-8")
    _write(tmp_path / "nl" / "evidence.yaml", {"concepts": []})
    line = text[: text.index(old)].count("\n") + 1
    load = load_concepts if name == "concepts" else load_grading
    _assert_refused(lambda: load(tmp_path), tmp_path / f"{name}.yaml", line, reason)


# -- reply templates and reply checks (replies.py, reply_checks.py) -----------------------------


def _toy_replies(tmp_path: Path, drop: str | None = None) -> Path:
    """A toy locale's replies.yaml from files alone: the English file's shape, every text
    replaced by a marker "nl:<template>.<key>" so the test reads what went where."""
    raw = yaml.safe_load((LEXICON_DIR / "en" / "replies.yaml").read_text(encoding="utf-8"))
    for name, template in raw["templates"].items():
        for shape in ("by_category", "by_sign", "by_action"):
            if shape in template:
                template[shape] = {key: f"nl:{name}.{key}" for key in template[shape]}
        if "text" in template:
            template["text"] = "nl:correction {what}" if name == "correction" else f"nl:{name}"
    if drop is not None:
        del raw["templates"][drop]
    return _toy_root(tmp_path, yaml.safe_dump(raw, allow_unicode=True), "replies")


def test_a_toy_locale_s_safe_replies_are_built_from_files_alone(tmp_path: Path) -> None:
    nl = load_replies(_toy_replies(tmp_path))["nl"]
    resource = ResourceEntry("Bel 113.", ("113",))
    assert nl.safety_template("suicide_self_harm", "imminent", resource, sign="burden") == (
        "nl:thanks nl:sign_ack.burden nl:safety_question.suicide_self_harm Bel 113. nl:human_support nl:staying"
    )
    assert (
        nl.safety_template("abuse", "high", resource, sign="burden")
        == "nl:ack.abuse nl:safety_question.abuse Bel 113. nl:staying"
    )
    assert (
        nl.safety_template("smoking", "high", resource)
        == "nl:ack.default nl:safety_question.default Bel 113. nl:staying"
    )
    assert nl.safety_followup("abuse", "imminent", resource) == (
        "nl:follow_ack.default nl:follow_question.abuse Bel 113. nl:human_support"
    )
    assert nl.low_template("suicide_self_harm") == "nl:low_ack.suicide_self_harm nl:low_question.suicide_self_harm"
    assert nl.low_template("suicide_self_harm", resource=resource) == (
        "nl:low_follow_ack nl:low_follow_question nl:if_too_much bel 113. nl:staying"
    )
    assert (
        nl.low_template("restrictive_eating", resource=resource)
        == "nl:low_follow_ack nl:if_too_much bel 113. nl:staying"
    )
    assert nl.correction_sentence(["diagnosis", "ending_conversation"]) == (
        "nl:correction nl:blocked_words.diagnosis nl:and nl:blocked_words.ending_conversation"
    )


def test_every_bundled_locale_has_every_reply_template() -> None:
    replies = bundled_replies()
    assert sorted(replies) == sorted(p.name for p in LEXICON_DIR.iterdir() if p.is_dir())
    for locale in replies.values():
        assert set(locale.texts) | set(locale.keyed) == set(TEMPLATES), locale.locale


def test_a_locale_missing_a_template_is_refused_naming_the_file_and_the_template(tmp_path: Path) -> None:
    root = _toy_replies(tmp_path, drop="human_support")
    _assert_refused(lambda: load_replies(root), root / "nl" / "replies.yaml", 1, "missing template human_support")


_TEMPLATE = "templates:\n  {name}:\n    tier: {tier}\n    situation: x\n    source: x\n    {body}\n"


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        (_TEMPLATE.format(name="staying", tier="[low]", body="text: ''"), 6, "text must be a non-empty string"),
        (_TEMPLATE.format(name="staying", tier="[urgent]", body="text: a"), 3, "tier must be a non-empty list"),
        (_TEMPLATE.format(name="correction", tier="[low]", body="text: a"), 6, "{what}"),
        (_TEMPLATE.format(name="ack", tier="[high]", body="by_category: {abuse: a}"), 6, "no text for default"),
        (_TEMPLATE.format(name="ack", tier="[high]", body="text: a"), 2, "exactly the keys by_category, situation"),
        (_TEMPLATE.format(name="greeting", tier="[low]", body="text: a"), 2, "unknown template"),
        ("replies: []\n", 1, "needs 'templates'"),
    ],
)
def test_a_malformed_replies_file_is_refused_with_file_line_and_reason(
    tmp_path: Path, text: str, line: int, reason: str
) -> None:
    """Every template but the one under test comes from the English file, so the error is that one's."""
    root = _toy_replies(tmp_path)
    raw = yaml.safe_load((root / "nl" / "replies.yaml").read_text(encoding="utf-8"))
    broken = yaml.safe_load(text)
    if isinstance(broken, dict) and "templates" in broken:
        name = next(iter(broken["templates"]))
        rest = {k: v for k, v in raw["templates"].items() if k != name}
        text = text + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in rest.items())
    (root / "nl" / "replies.yaml").write_text(text, encoding="utf-8")
    _assert_refused(lambda: load_replies(root), root / "nl" / "replies.yaml", line, reason)


TOY_CHECKS = """\
blocked:
  diagnosis: {source: x, phrases: ['\\bje hebt (?:een )?depressie\\b']}
  medication_advice: {source: x, phrases: ['\\bneem (?:je |meer )?(?:pillen|medicijnen)\\b']}
  method_information: {source: x, phrases: ['\\bdodelijke dosis\\b']}
  restriction_advice: {source: x, phrases: ['\\bsla (?:het )?ontbijt over\\b']}
  no_suicide_contract: {source: x, phrases: ['\\bbeloof me\\b']}
  claiming_to_be_human: {source: x, phrases: ['\\bik ben een mens\\b']}
  ending_conversation: {source: x, phrases: ['\\btot ziens[.!]*$']}
asks_about_safety: {source: x, phrases: ['veilig\\w*']}
points_to_support: {source: x, phrases: ['iemand die je vertrouwt']}
"""


def test_a_toy_locale_s_reply_checks_are_built_from_files_alone(tmp_path: Path) -> None:
    checks = load_reply_checks(_toy_root(tmp_path, TOY_CHECKS, "reply_checks"))
    assert checks.detect_blocked("Neem je pillen en je hebt een depressie.") == ["diagnosis", "medication_advice"]
    assert checks.detect_blocked("Neem je pillen.", among=["diagnosis"]) == []
    assert checks.detect_blocked("Neem je pillendoos mee.") == []  # whole words
    assert checks.asks_about_safety("Ben je veilig?") and not checks.asks_about_safety("Je bent veilig.")
    assert checks.points_to_support("Bel iemand die je vertrouwt.") and not checks.points_to_support("Bel 113.")


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        (
            TOY_CHECKS.replace("  diagnosis: {source: x, phrases: ['\\bje hebt (?:een )?depressie\\b']}\n", ""),
            1,
            "missing diagnosis",
        ),
        (TOY_CHECKS.replace("depressie\\b'", "(depressie'"), 2, "not a regular expression"),
        (TOY_CHECKS.replace("asks_about_safety: {source: x, ", "asks_about_safety: {"), 9, "exactly the keys"),
        (
            TOY_CHECKS.replace("  method_information", "  smoking: {source: x, phrases: [a]}\n  method_information"),
            1,
            "unknown smoking",
        ),
    ],
)
def test_a_malformed_reply_checks_file_is_refused_with_file_line_and_reason(
    tmp_path: Path, text: str, line: int, reason: str
) -> None:
    root = _toy_root(tmp_path, text, "reply_checks")
    _assert_refused(lambda: load_reply_checks(root), root / "nl" / "reply_checks.yaml", line, reason)


# -- tolerant normalisation's word lists (tolerant.py) ----------------------------------------

TOY_TOLERANT = """\
expand:
  idd: inderdaad
  wss: waarschijnlijk
fillers: [echt, gewoon]
multi_fillers: [weet je]
doubles: [alle]
idioms:
  - 'ga dood van (?:de )?(?:honger|dorst|verveling)'
idiom_stems: [dood]
sometimes_fillers:
  zo:
    kept_before: [ik, het]
rewrites:
  - {phrase: '\\bz/m\\b', becomes: zonder mij}
"""


def test_spoken_french_elisions_are_read_as_written() -> None:
    # Québec and texting (blind dev22/dev23): "j'me suis coupé" is "je me suis coupé" to the rules.
    assert tolerant("J'me suis coupé les bras") == "je me suis coupe les bras"
    assert tolerant("chu su'l pont") == "je suis sur le pont"
    # English "bout" is "about" before what English puts after it, never in French "au bout de".
    assert tolerant("im bout to end it") == "i'm about to end it"
    assert tolerant("je suis a bout, au bout du rouleau") == "je suis a bout , au bout du rouleau"


def test_a_toy_locale_s_tolerant_word_lists_are_built_from_files_alone(tmp_path: Path) -> None:
    toy = load_tolerance(_toy_root(tmp_path, TOY_TOLERANT, "tolerant"))
    assert toy.normalise("Ik ga ECHT dood van de honger, idd!! Weet je, wss morgen") == (
        f"ik {IDIOM} , inderdaad . waarschijnlijk morgen"
    )
    assert toy.normalise("ik wil gewoon dood") == "ik wil dood"  # a wish is not an idiom
    assert toy.normalise("allllle dagen") == "alle dagen"  # a stretch keeps the word's double letter
    assert toy.normalise("dont u know") == "dont u know"  # no English list in the toy root
    assert toy.normalise("zo moe , zo ik het zie") == "moe , zo ik het zie"  # "zo" kept before "ik" only
    assert toy.normalise("een feest z/m") == "een feest zonder mij"


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("expand:\n  idd: inderdaad\nslang: [a]\n", 3, "not a section of tolerant.yaml"),
        ("expand: [idd]\n", 1, "expand must be a mapping"),
        ("fillers: echt\n", 1, "fillers must be a list"),
        ("idioms:\n  - 'ga dood'\n  - '(unclosed'\n", 3, "not a regular expression"),
        ("expand:\n  idd: ''\n", 2, "non-empty string"),
        ("- idd\n", 1, "must be a mapping of sections"),
        ("sometimes_fillers:\n  zo:\n    kept_before: ik\n", 3, "kept_before must be a list"),
        ("sometimes_fillers:\n  zo:\n    always: [ik]\n", 2, "with places among kept_after"),
        ("rewrites:\n  - {phrase: '(z/m', becomes: zonder}\n", 2, "not a regular expression"),
        ("rewrites:\n  - {phrase: 'z/m'}\n", 2, "exactly the keys becomes, phrase"),
    ],
)
def test_a_malformed_tolerant_file_is_refused_with_file_line_and_reason(
    tmp_path: Path, text: str, line: int, reason: str
) -> None:
    root = _toy_root(tmp_path, text, "tolerant")
    _assert_refused(lambda: load_tolerance(root), root / "nl" / "tolerant.yaml", line, reason)


def test_a_token_expanded_by_two_locales_is_refused(tmp_path: Path) -> None:
    root = _toy_root(tmp_path, TOY_TOLERANT, "tolerant")
    (root / "xx").mkdir()
    (root / "xx" / "tolerant.yaml").write_text("expand:\n  wss: wissen\n", encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_tolerance(root)
    assert f"{root / 'xx' / 'tolerant.yaml'}:2" in str(caught.value)
    assert "wss is expanded twice" in str(caught.value)
