"""Loading pipelines: the DAG derived from reads, and every rejection with its file and line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cantata.errors import SpecError
from cantata.loader import load_pipeline
from cantata.spec import pipeline_json_schema
from tests.helpers.pipelines import WriteFile

DIAMOND = """
name: diamond
agents:
  - name: a
    prompt: first
  - name: b
    prompt: left
    reads: [a]
  - name: c
    prompt: right
    reads: [a]
  - name: d
    prompt: merge
    reads: [b, c]
    deliver: final
  - name: e
    prompt: quick
    deliver: early
"""


def test_dag_is_derived_from_reads(write: WriteFile) -> None:
    pipeline = load_pipeline(write("p.yaml", DIAMOND))
    order = pipeline.order
    assert order.index("a") < order.index("b") < order.index("d")
    assert order.index("c") < order.index("d")
    assert pipeline.readers["a"] == ["b", "c"]
    assert pipeline.deliverer("early") is not None and pipeline.deliverer("early").name == "e"  # type: ignore[union-attr]
    assert pipeline.deliverer("final").name == "d"  # type: ignore[union-attr]


def test_prompt_from_file_relative_to_the_yaml(write: WriteFile) -> None:
    write("prompts/role.md", "You are the analyst.\n")
    path = write("sub/../p.yaml", "name: x\nagents:\n  - name: a\n    prompt: prompts/role.md\n")
    assert load_pipeline(path).prompts["a"] == "You are the analyst.\n"


def _error(write: WriteFile, text: str) -> str:
    with pytest.raises(SpecError) as info:
        load_pipeline(write("bad.yaml", text))
    return str(info.value)


def test_cycle_is_rejected_with_its_line(write: WriteFile) -> None:
    message = _error(
        write,
        """
        name: loop
        agents:
          - name: a
            prompt: x
            reads: [c]
          - name: b
            prompt: x
            reads: [a]
          - name: c
            prompt: x
            reads: [b]
        """,
    )
    assert "bad.yaml:5:" in message
    assert "cycle" in message and "a -> c -> b -> a" in message


def test_unknown_read_is_rejected_with_its_line(write: WriteFile) -> None:
    message = _error(
        write,
        """
        name: x
        agents:
          - name: a
            prompt: x
          - name: b
            prompt: x
            reads:
              - a
              - nobody
        """,
    )
    assert "bad.yaml:9:" in message
    assert "'nobody'" in message and "known agents: a, b" in message


def test_unknown_key_is_rejected_with_its_line(write: WriteFile) -> None:
    message = _error(write, "name: x\nagents:\n  - name: a\n    prompt: x\n    temprature: 0.5\n")
    assert "bad.yaml:5:" in message
    assert "unknown key 'temprature'" in message and "temperature" in message


def test_unknown_top_level_key(write: WriteFile) -> None:
    message = _error(write, "name: x\nagnets: []\n")
    assert "bad.yaml:2:" in message and "unknown key 'agnets'" in message


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("name: x\nagents:\n  - name: a\n    prompt: x\n    reads: [a]\n", 5, "reads itself"),
        (
            "name: x\nagents:\n  - name: a\n    prompt: x\n    deliver: final\n  - name: b\n    prompt: y\n    deliver: final\n",
            8,
            "two agents deliver 'final'",
        ),
        ("name: x\nagents:\n  - name: a\n    prompt: x\n  - name: a\n    prompt: y\n", 5, "defined twice"),
        ("name: x\nagents:\n  - name: a\n", 3, "either 'prompt'"),
        ("name: x\nagents:\n  - name: a\n    prompt: gone.md\n", 4, "prompt file 'gone.md' not found"),
        ("name: x\nagents:\n  - name: a\n    prompt: x\n    required: [b]\n", 5, "not an agent"),
        ("name: x\nagents:\n  - name: a\n    prompt: x\n    timeout_s: -1\n", 5, "greater than 0"),
        ("name: x\nagents:\n  - name: a\n    prompt: x\n    output: nowhere.Model\n", 5, "cannot import 'nowhere'"),
        ("name: x\nagents:\n  - name: a\n    prompt: x\n    output: {type: string}\n", 5, "must describe an object"),
        ("name: x\nagents:\n  - name: a\n    prompt: [unclosed\n", 5, "invalid YAML"),
        ("name: x\n", 1, "agents is missing"),
    ],
)
def test_rejections_name_line_and_problem(write: WriteFile, text: str, line: int, words: str) -> None:
    message = _error(write, text)
    assert f"bad.yaml:{line}:" in message
    assert words in message


def test_json_schema_of_the_spec_lists_every_agent_key() -> None:
    schema = pipeline_json_schema()
    agent = schema["$defs"]["AgentSpec"]["properties"]
    for key in (
        "name",
        "model",
        "prompt",
        "output",
        "reads",
        "memory",
        "deliver",
        "function",
        "timeout_s",
        "retries",
        "max_tokens",
        "temperature",
        "thinking",
        "priority",
        "required",
    ):
        assert key in agent
    assert schema["$defs"]["AgentSpec"]["additionalProperties"] is False


def test_cli_validate_and_schema(write: WriteFile) -> None:
    ok = write("p.yaml", DIAMOND)
    done = subprocess.run([sys.executable, "-m", "cantata", "validate", str(ok)], capture_output=True, text=True)
    assert done.returncode == 0 and "5 agents" in done.stdout
    printed = subprocess.run([sys.executable, "-m", "cantata", "schema", "pipeline"], capture_output=True, text=True)
    assert json.loads(printed.stdout)["title"] == "PipelineSpec"


def test_bundled_pipelines_all_load() -> None:
    from cantata.bundled import bundled

    for name, path in bundled().items():
        assert load_pipeline(Path(path)).name == name


def _order_by_rounds(reads: dict[str, list[str]]) -> list[str]:
    """The order as the scheduler always had it: repeatedly, the first agent in file order
    whose reads are all placed."""
    done: list[str] = []
    remaining = list(reads)
    while remaining:
        name = next(n for n in remaining if all(r in done for r in reads[n]))
        done.append(name)
        remaining.remove(name)
    return done


def test_order_keeps_file_order_wherever_the_reads_allow() -> None:
    import random

    from cantata.dag import topological_order

    rng = random.Random(7)
    for _ in range(300):
        names = [f"n{i}" for i in range(rng.randint(1, 9))]
        rank = {n: rng.random() for n in names}  # a hidden order the reads respect: no cycles
        reads = {n: [m for m in names if rank[m] < rank[n] and rng.random() < 0.4] for n in names}
        assert topological_order(reads) == _order_by_rounds(reads)


def test_cycle_is_named_from_its_first_agent_in_file_order(write: WriteFile) -> None:
    # guard is not on the cycle; it starts at x, the first of the cycle in the file.
    message = _error(
        write,
        """
        name: loop
        agents:
          - name: guard
            prompt: x
            reads: [y]
          - name: x
            prompt: x
            reads: [y]
          - name: y
            prompt: x
            reads: [x]
        """,
    )
    assert "bad.yaml:8:" in message and "x -> y -> x" in message
