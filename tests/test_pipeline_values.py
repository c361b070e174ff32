"""Pipelines as values: built from data with the same checks as from YAML, written back as YAML."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from cantata import Pipeline, PipelineSpec, SpecError, load_pipeline
from cantata.bundled import bundled
from tests.helpers.pipelines import WriteFile


def agents(*specs: dict[str, Any]) -> dict[str, Any]:
    return {"name": "p", "agents": list(specs)}


@pytest.mark.parametrize(
    ("data", "where", "words"),
    [
        (agents({"name": "a", "prompt": "x", "reads": ["a"]}), "agents[0].reads[0]:", "reads itself"),
        (
            agents({"name": "a", "prompt": "x"}, {"name": "b", "prompt": "x", "reads": ["a", "nobody"]}),
            "agents[1].reads[1]:",
            "known agents: a, b",
        ),
        (agents({"name": "a", "prompt": "x", "memory": ["ghost"]}), "agents[0].memory[0]:", "not an agent"),
        (agents({"name": "a", "prompt": "x"}, {"name": "a", "prompt": "y"}), "agents[1].name:", "first at agents[0]"),
        (agents({"name": "a"}), "agents[0]:", "either 'prompt'"),
        (agents({"name": "a", "prompt": "x", "function": "m.f"}), "agents[0]:", "not both"),
        (
            agents({"name": "a", "prompt": "x"}, {"name": "b", "prompt": "x", "required": ["a"]}),
            "agents[1].required[0]:",
            "does not read it",
        ),
        (
            agents({"name": "a", "prompt": "x", "deliver": "early"}, {"name": "b", "prompt": "x", "deliver": "early"}),
            "agents[1].deliver:",
            "two agents deliver 'early'",
        ),
        (
            agents(
                {"name": "a", "prompt": "x", "reads": ["c"]},
                {"name": "b", "prompt": "x", "reads": ["a"]},
                {"name": "c", "prompt": "x", "reads": ["b"]},
            ),
            "agents[0].reads[0]:",
            "a -> c -> b -> a",
        ),
        (agents({"name": "a", "prompt": "x", "timeout_s": -1}), "agents[0].timeout_s:", "greater than 0"),
        (agents({"name": "a", "prompt": "x", "temprature": 1}), "agents[0].temprature:", "unknown key 'temprature'"),
        ({"agents": [{"name": "a", "prompt": "x"}]}, "name is missing", "add it"),
    ],
)
def test_every_check_names_the_place_in_the_data(data: dict[str, Any], where: str, words: str) -> None:
    with pytest.raises(SpecError) as info:
        PipelineSpec.from_dict(data)
    message = str(info.value)
    assert message.startswith(where) and words in message
    with pytest.raises(SpecError) as again:
        Pipeline.from_dict(data)
    assert str(again.value) == message


def test_a_spec_built_in_python_is_checked_too() -> None:
    spec = PipelineSpec.model_validate(agents({"name": "a", "prompt": "x", "reads": ["a"]}))
    with pytest.raises(SpecError, match=r"^agents\[0\]\.reads\[0\]: .*reads itself"):
        Pipeline.from_spec(spec)


def test_from_dict_resolves_files_and_modules_from_its_base(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "a.md").write_text("Be brief.\n", encoding="utf-8")
    (tmp_path / "rules_for_dict.py").write_text("def f(ctx):\n    return 'ruled'\n", encoding="utf-8")
    data = agents(
        {"name": "r", "function": "rules_for_dict.f"}, {"name": "a", "prompt": "prompts/a.md", "reads": ["r"]}
    )
    pipeline = Pipeline.from_dict(data, base=tmp_path)
    assert pipeline.prompts["a"] == "Be brief.\n"
    assert pipeline.functions["r"](None) == "ruled"
    assert pipeline.order == ["r", "a"] and pipeline.path is None
    with pytest.raises(SpecError, match=r"^agents\[0\]\.function: cannot import 'rules_for_dict'"):
        Pipeline.from_dict(data, base=tmp_path / "elsewhere")
    with pytest.raises(SpecError, match=r"^agents\[0\]\.prompt: prompt file 'prompts/a.md' not found"):
        Pipeline.from_dict(agents({"name": "a", "prompt": "prompts/a.md"}), base=tmp_path / "elsewhere")


@pytest.mark.parametrize("name", sorted(bundled()))
def test_bundled_specs_round_trip_through_to_file(name: str, tmp_path: Path) -> None:
    spec = PipelineSpec.from_file(bundled()[name])
    spec.to_file(tmp_path / "copy.yaml")
    assert PipelineSpec.from_file(tmp_path / "copy.yaml") == spec
    assert PipelineSpec.from_dict(spec.to_dict()) == spec


def test_to_file_writes_what_a_person_would(write: WriteFile, tmp_path: Path) -> None:
    spec = PipelineSpec.from_dict(
        agents(
            {"name": "a", "prompt": "Line one.\nLine two.\n", "max_tokens": 60},
            {"name": "b", "prompt": "x", "reads": ["a"], "deliver": "final", "output": {"type": "object"}},
        )
    )
    spec.to_file(tmp_path / "p.yaml")
    text = (tmp_path / "p.yaml").read_text(encoding="utf-8")
    assert "$schema" not in text
    assert "timeout_s" not in text and "temperature" not in text  # defaults are left out
    assert "prompt: |\n      Line one.\n      Line two.\n" in text  # several lines: a literal block
    assert "reads: [a]" in text
    assert text.startswith("name: p\nagents:\n  - name: a\n")
    assert yaml.safe_load(text) == spec.to_dict()


@pytest.mark.parametrize("prompt_files", [False, True])
def test_a_loaded_pipeline_writes_a_copy_that_loads_anywhere(prompt_files: bool, tmp_path: Path) -> None:
    original = load_pipeline(bundled()["coaching"])
    target = tmp_path / "elsewhere" / "pipeline.yaml"
    target.parent.mkdir()
    original.to_file(target, prompt_files=prompt_files)
    copy = load_pipeline(target)
    assert copy.prompts == original.prompts
    assert copy.order == original.order
    assert {n: c.schema if c else None for n, c in copy.contracts.items()} == {
        n: c.schema if c else None for n, c in original.contracts.items()
    }
    assert (target.parent / "prompts").is_dir() == prompt_files


def test_a_loop_round_trips_and_is_checked_as_data(tmp_path: Path) -> None:
    data = agents(
        {"name": "build", "prompt": "x"},
        {"name": "check", "prompt": "x", "reads": ["build"]},
        {"name": "fix", "prompt": "x", "reads": ["check", "build"]},
    )
    loop = {"agents": ["check", "fix"], "max_iterations": 2, "carry": {"fix": "build"}}
    spec = PipelineSpec.from_dict({**data, "loop": loop})
    spec.to_file(tmp_path / "loop.yaml")
    assert PipelineSpec.from_file(tmp_path / "loop.yaml") == spec
    with pytest.raises(SpecError, match=r"^loop\.agents\[0\]: the loop names 'ghost'"):
        PipelineSpec.from_dict({**data, "loop": {"agents": ["ghost"]}})


def test_a_one_line_prompt_that_looks_like_a_file_name_survives_to_file(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "role.md").write_text("Summarise notes.md", encoding="utf-8")
    original = Pipeline.from_dict(agents({"name": "a", "prompt": "role.md"}), base=tmp_path / "src")
    (tmp_path / "out").mkdir()
    original.to_file(tmp_path / "out" / "p.yaml")
    assert load_pipeline(tmp_path / "out" / "p.yaml").prompts == {"a": "Summarise notes.md"}
