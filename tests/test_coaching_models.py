"""Output models of the coaching pipeline: what the grammar is given, and what validators
clamp, derive and refuse."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from cantata.bundled import load as load_bundled
from cantata.pipelines.coaching.models import (
    BIG_FIVE_NOTE,
    TRAITS,
    Coach,
    FollowThrough,
    Persona,
    Plasticity,
    Shadow,
    Stability,
    Synth,
    tidy,
    words_or_blank,
)
from cantata.pipelines.coaching.safety import UNIVERSAL_BLOCKED
from cantata.structured import contract_from_model

MODEL_FACING: list[type[BaseModel]] = [Coach, Shadow, Persona, Plasticity, Stability, Synth]


@pytest.mark.parametrize("model", MODEL_FACING, ids=lambda m: m.__name__)
def test_model_facing_schemas_are_small_flat_and_bounded(model: type[BaseModel]) -> None:
    schema = contract_from_model(model).schema
    text = json.dumps(schema)
    # Nothing a small model would copy into its answer, no nesting to spend tokens on.
    assert "$defs" not in text and "$ref" not in text and "description" not in text and "title" not in text
    assert schema["required"] == list(schema["properties"])
    for name, prop in schema["properties"].items():
        if prop.get("type") == "string" and "enum" not in prop:
            # Bounded, one line, valid JSON: llama.cpp's grammar enforces patterns.
            assert prop["pattern"].startswith("^") and prop["pattern"].endswith("$"), name
            assert '[^"\\\\\\n]' in prop["pattern"], name
        if prop.get("type") == "integer" and name != "evidence_turn" and name != "follow_through_pct":
            assert prop.get("enum") == [1, 2, 3, 4, 5], name  # the grammar does not enforce min/max
        if prop.get("type") == "array":
            assert "maxItems" in prop, name


def test_code_only_fields_are_not_in_the_schema() -> None:
    assert set(contract_from_model(Stability).schema["properties"]) == {
        "domain",
        "severity",
        "detectability",
        "reversibility",
    }
    assert set(contract_from_model(Synth).schema["properties"]) == {"used", "reply"}
    assert set(contract_from_model(Coach).schema["properties"]) == {"reflection", "question"}


@pytest.mark.parametrize("model", MODEL_FACING, ids=lambda m: m.__name__)
def test_every_schema_compiles_to_a_llama_cpp_grammar(model: type[BaseModel]) -> None:
    llama_grammar = pytest.importorskip("llama_cpp.llama_grammar")
    grammar = llama_grammar.json_schema_to_gbnf(json.dumps(contract_from_model(model).schema, sort_keys=True))
    assert "root ::=" in grammar


def test_the_pipeline_loads_with_its_hooks() -> None:
    pipeline = load_bundled("coaching")
    assert pipeline.order[0] == "guard"
    assert set(pipeline.agents) == {
        "guard",
        "coach",
        "shadow",
        "persona",
        "plasticity",
        "stability",
        "conflicts",
        "synth",
    }
    assert pipeline.deliverer("early").name == "coach"  # type: ignore[union-attr]
    assert pipeline.deliverer("final").name == "synth"  # type: ignore[union-attr]
    assert set(pipeline.shortcuts) == {"coach", "persona", "synth"}
    assert set(pipeline.checks) == {"coach", "shadow", "persona", "stability", "synth"}
    reads = {name: set(a.reads) for name, a in pipeline.agents.items()}
    assert reads["persona"] == reads["plasticity"] == {"shadow"} and "shadow" in reads["stability"]
    assert pipeline.agents["plasticity"].memory == ["persona"]
    assert {"coach", "guard", "conflicts"} <= reads["synth"]
    assert pipeline.agents["guard"].memory == ["guard"] and pipeline.agents["shadow"].memory == ["shadow"]


# -- validators ---------------------------------------------------------------------------------


def persona(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {t: 3 for t in TRAITS}
    return {**base, "follow_through_pct": 40, "recurring_goal": "exercise", "growth_edge": "small steps", **overrides}


def test_persona_scores_are_clamped_into_their_declared_ranges() -> None:
    p = Persona.model_validate(persona(openness=9, neuroticism=0, follow_through_pct=250))
    assert (p.openness, p.neuroticism, p.follow_through_pct) == (5, 1, 100)
    assert Persona.model_validate(persona(follow_through_pct=-7, agreeableness=3.6)).follow_through_pct == 0
    assert Persona.model_validate(persona(agreeableness=3.6)).agreeableness == 4
    with pytest.raises(ValidationError):
        Persona.model_validate(persona(openness="high"))


def test_every_big_five_score_carries_a_confidence_that_says_r_0_3() -> None:
    dumped = Persona.model_validate(persona()).model_dump(mode="json")
    assert set(dumped["confidence"]) == set(TRAITS)
    assert all(c == BIG_FIVE_NOTE and "0.3" in c and c.startswith("low") for c in dumped["confidence"].values())
    # The confidence is derived, never asked of the model.
    assert "confidence" not in contract_from_model(Persona).schema["properties"]


def test_filler_text_becomes_unknown() -> None:
    p = Persona.model_validate(persona(growth_edge="}  # 1.1.1.1.1", recurring_goal="^[^"))
    assert p.growth_edge == "" and p.recurring_goal == ""
    assert words_or_blank("go to the gym.") == "go to the gym"


def test_risk_product_is_computed_not_trusted() -> None:
    read = Stability.model_validate(
        {"domain": "eating", "severity": 4, "detectability": 3, "reversibility": 2, "product": 1}
    )
    assert read.product == 24 and read.model_dump()["product"] == 24
    clamped = Stability.model_validate({"domain": "none", "severity": 11, "detectability": 0, "reversibility": 3})
    assert (clamped.severity, clamped.detectability, clamped.product) == (5, 1, 15)


def test_stability_safety_fields_are_validated_once_set() -> None:
    base = {"domain": "none", "severity": 1, "detectability": 1, "reversibility": 1}
    Stability.model_validate(base)  # the model's read, before the check
    full = {**base, "tier": "high", "guard_tier": "high", "blocked": list(UNIVERSAL_BLOCKED), "locale": "en"}
    with pytest.raises(ValidationError, match="needs a crisis resource"):
        Stability.model_validate(full)
    with pytest.raises(ValidationError, match="below guard"):
        Stability.model_validate({**full, "tier": "low"})
    with pytest.raises(ValidationError, match="must include"):
        Stability.model_validate({**full, "tier": "none", "guard_tier": "none", "blocked": ["diagnosis"]})


def test_follow_through_is_laplace_smoothed_and_consistent() -> None:
    assert FollowThrough().probability == 0.5
    assert FollowThrough(kept=3, total=4).probability == 0.67
    with pytest.raises(ValidationError, match="cannot exceed"):
        FollowThrough(kept=3, total=2)


def test_coach_reply_is_one_reflection_and_one_question() -> None:
    draft = Coach.model_validate(
        {
            "reflection": "You want the gym. You want the gym. You want the gym",
            "question": "What helps you? How do you do it? How",
        }
    )
    assert draft.reflection == "You want the gym."
    assert draft.question == "What helps you?"
    assert draft.model_dump() == {
        "reply": "You want the gym. What helps you?",
        "source": "generated",
        "tier": None,
        "rejected": [],
    }
    with pytest.raises(ValidationError, match="reflection and a question"):
        Coach.model_validate({"reflection": "", "question": ""})
    template = Coach(reply="A template.", source="template")
    assert template.reply == "A template."


def test_synth_used_entries_must_exist() -> None:
    reply = "Mornings matter to you; what would make the first one easier?"
    assert Synth.model_validate({"used": ["coach", "coach"], "reply": reply}).used == ["coach"]
    with pytest.raises(ValidationError):
        Synth.model_validate({"used": ["blackboard"], "reply": reply})  # not an entry at all
    with pytest.raises(ValidationError, match="do not exist on the blackboard: shadow"):
        Synth.model_validate({"used": ["shadow"], "reply": reply, "available": ["guard", "conflicts"]})


def test_tidy_collapses_what_small_models_do() -> None:
    assert tidy("I'm going to start. I'm going to start. I'm going to start. I'm go") == "I'm going to start."
    assert tidy("  one   two ", end=".") == "one two."
    assert tidy("Fine? Fine? Good.") == "Fine? Good."
    cut = "Mornings matter to you. " + "x" * 30 + " but I'm here to"
    assert tidy(cut, end=".", cut_at=len(cut)) == "Mornings matter to you."
    assert tidy(cut, end=".") == cut + "."  # not at the bound: not cut off, just unfinished


def test_plasticity_tones_are_distinct() -> None:
    p = Plasticity.model_validate(
        {
            "mi_process": "evoking",
            "grow_phase": "goal",
            "directiveness": "guiding",
            "advice_mode": "none",
            "tone": ["warm", "warm"],
        }
    )
    assert p.tone == ["warm"]


def worst_case_tokens(schema: dict[str, Any]) -> int:
    """The most tokens a grammar-valid reply can take, counting a token per character of
    free text (junk like '1.1.1.1' does cost that), half a token per character of an enum
    value, and generous JSON punctuation."""
    total = 10
    for prop in schema["properties"].values():
        total += 8  # key, quotes, colon, comma, spaces
        if "pattern" in prop:
            pattern = prop["pattern"]
            total += sum(int(high) for high in re.findall(r"\{\d+,(\d+)\}", pattern))
            lead = re.match(r"\^\(([^)]*)\)", pattern)
            if lead:
                total += max(len(alt) for alt in lead.group(1).split("|")) + 1
            total += 2 if pattern.endswith("[?]$") else 0
        elif "enum" in prop:
            total += max(len(str(v)) for v in prop["enum"]) // 2 + 2
        elif prop.get("type") == "integer":
            total += 16  # llama.cpp's integer rule allows 16 digits
        elif prop.get("type") == "array":
            total += prop["maxItems"] * (max(len(str(v)) for v in prop["items"]["enum"]) // 2 + 4)
    return total


def test_max_tokens_cover_the_worst_case_reply() -> None:
    """A reply cut at max_tokens is invalid JSON, and its repair is cut the same way: the
    agent fails after twice the cost. A cap above the worst case makes that impossible."""
    pipeline = load_bundled("coaching")
    for name, agent in pipeline.agents.items():
        contract = pipeline.contracts[name]
        if agent.is_function or contract is None:
            continue
        need = worst_case_tokens(contract.schema)
        assert agent.max_tokens >= need, f"{name}: max_tokens {agent.max_tokens} < worst case {need}"
        assert agent.max_tokens <= need + 40, f"{name}: max_tokens {agent.max_tokens} far above {need}"
