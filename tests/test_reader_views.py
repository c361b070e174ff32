"""Reader views: an agent's prompt shows only the fields it needs of what it reads (and the
briefing only the fields of memory the pipeline names); its check still sees everything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cantata.config import load_config
from cantata.errors import SpecError
from cantata.loader import load_pipeline
from cantata.prompts import build_briefing, reader_inputs, select
from cantata.runtime import Cantata
from cantata.store import EntryRow
from tests.helpers.pipelines import WriteFile, scripted_config


def test_a_view_keeps_only_the_named_fields_nested_ones_too() -> None:
    output = {"plan": {"tone": ["warm"], "tier": "none", "missing": []}, "conflicts": [{"rule": "x"}], "n": 1}
    assert select(output, ["plan.tone", "n"]) == {"plan": {"tone": ["warm"]}, "n": 1}
    assert select(output, None) == output
    assert reader_inputs({"a": output, "b": "text"}, {"a": [], "b": ["x"]}) == {"b": "text"}


PIPELINE = """
name: viewed
agents:
  - name: a
    prompt: Write the record.
    output:
      type: object
      properties:
        secret: {type: string, const: hidden-bookkeeping}
        shown: {type: string, const: visible-field}
      required: [secret, shown]
  - name: b
    prompt: Read a.
    reads: [a]
    view: {a: [shown]}
    deliver: final
"""


async def test_the_readers_prompt_shows_its_view_only(write: WriteFile, home: Path) -> None:
    config = scripted_config(write, only={"serves": ["*"]})
    app = Cantata(load_config(config), home=home)
    prompts: dict[str, str] = {}
    try:
        instance = app.pool.instance_for("default")
        original = instance.backend.complete

        def spy(request):  # type: ignore[no-untyped-def]
            prompts[request.agent or ""] = "\n".join(m.content for m in request.messages)
            return original(request)

        instance.backend.complete = spy  # type: ignore[method-assign]
        result = await app.run_turn(load_pipeline(write("p.yaml", PIPELINE)), "hello")
    finally:
        await app.close()
    assert result.status == "ok"
    assert json.loads(json.dumps(result.agents[0].output))["secret"] == "hidden-bookkeeping"  # stored whole
    assert "visible-field" in prompts["b"] and "hidden-bookkeeping" not in prompts["b"]


def test_a_view_of_an_agent_not_read_is_a_spec_error(write: WriteFile) -> None:
    bad = PIPELINE.replace("view: {a: [shown]}", "view: {c: [shown]}")
    with pytest.raises(SpecError, match="view of 'c' but does not read it"):
        load_pipeline(write("p.yaml", bad))


def test_a_memory_view_of_an_agent_no_one_remembers_is_a_spec_error(write: WriteFile) -> None:
    bad = PIPELINE.replace("agents:\n", "memory_view: {a: [shown]}\nagents:\n", 1)
    with pytest.raises(SpecError, match="'a' is in no agent's memory"):
        load_pipeline(write("p.yaml", bad))


def test_the_briefing_shows_the_memory_view_only() -> None:
    memory = {
        "guard": EntryRow(1, "guard", "ok", {"tier": "none", "signals": ["bookkeeping"]}, None),
        "shadow": EntryRow(1, "shadow", "ok", {"stated_goal": "run twice a week", "dropped_evidence": 3}, None),
    }
    briefing = build_briefing(
        preamble="Team.",
        memory=memory,
        past_turns=[],
        message="hello",
        budget=1000,
        count=lambda text: len(text) // 4,
        memory_view={"guard": [], "shadow": ["stated_goal"]},
    )
    assert "run twice a week" in briefing.text
    assert "bookkeeping" not in briefing.text and "dropped_evidence" not in briefing.text
