"""From the builder's structured artefact to a pipeline folder that loads.

The builder never writes YAML: it fills `Artefact`, and this module builds the pipeline
through the spec models (`PipelineSpec`), its prompt files, the output JSON Schema and
the tool module, then loads the result as Cantata would. Whatever does not load is
reported with the loader's own one-line error, which goes back to the model.

The layout of an assembled agent:
    pipeline.yaml, schema.json, prompts/<step>.md, and tool.py when there is tool code.
A tool is a `sandbox:tool.run` function agent read by the first step: Cantata never
imports it; every call runs it under bubblewrap.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from cantata import AgentSpec, CantataError, Pipeline, PipelineSpec, load_pipeline
from cantata.pipelines.factory.models import Artefact, FieldType

# The new agent's output bounds, under the embedded grammar's repeat limit (256) so that
# its replies end by the grammar, within its max_tokens, even on a small model.
STRING_LIMIT = 200
ITEM_LIMIT = 120
LIST_LIMIT = 8

_JSON_TYPES: dict[FieldType, dict[str, Any]] = {
    "string": {"type": "string", "maxLength": STRING_LIMIT},
    "integer": {"type": "integer"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "list of strings": {"type": "array", "items": {"type": "string", "maxLength": ITEM_LIMIT}, "maxItems": LIST_LIMIT},
}


def output_schema(artefact: Artefact) -> dict[str, Any]:
    properties = {}
    for field in artefact.fields:
        properties[field.name] = {
            **_JSON_TYPES[field.type],
            **({"description": field.description} if field.description else {}),
        }
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def agent_name(artefact: Artefact) -> str:
    return artefact.name.replace("-", "_")


def spec_of(artefact: Artefact) -> tuple[PipelineSpec, dict[str, str]]:
    """The pipeline spec and its prompt files ({path: text})."""
    agents: list[AgentSpec] = []
    prompts: dict[str, str] = {}
    previous: list[str] = []
    if artefact.tool_code.strip():
        agents.append(AgentSpec(name="tool", function="sandbox:tool.run", timeout_s=30))
        previous = ["tool"]
    steps = [(step.name, step.instructions) for step in artefact.steps[:-1]]
    for name, instructions in steps:
        path = f"prompts/{name}.md"
        prompts[path] = instructions.strip() + "\n"
        agents.append(AgentSpec(name=name, prompt=path, reads=previous, needs=artefact.needs, max_tokens=300))
        previous = [name]
    final = agent_name(artefact)
    path = f"prompts/{final}.md"
    prompts[path] = artefact.instructions.strip() + "\n"
    agents.append(
        AgentSpec(
            name=final, prompt=path, output="schema.json", reads=previous, deliver="final", needs=artefact.needs,
            max_tokens=400, retries=1,
        )
    )  # fmt: skip
    spec = PipelineSpec(
        name=artefact.name,
        description=artefact.instructions.strip().splitlines()[0][:200] if artefact.instructions.strip() else "",
        agents=agents,
    )
    return spec, prompts


def assemble(artefact: Artefact, folder: Path) -> Pipeline:
    """Write the artefact's files into `folder` (replacing what was there) and load them.
    Raises CantataError (a SpecError, usually) when the result does not load."""
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "prompts").mkdir(parents=True)
    spec, prompts = spec_of(artefact)
    for path, text in prompts.items():
        (folder / path).write_text(text, encoding="utf-8")
    (folder / "schema.json").write_text(json.dumps(output_schema(artefact), indent=2) + "\n", encoding="utf-8")
    if artefact.tool_code.strip():
        (folder / "tool.py").write_text(artefact.tool_code.rstrip() + "\n", encoding="utf-8")
    spec.to_file(folder / "pipeline.yaml")
    return load_pipeline(folder / "pipeline.yaml")


def assembly_error(artefact: Artefact, folder: Path) -> str | None:
    """Why the artefact does not assemble into a pipeline that loads, or None."""
    try:
        assemble(artefact, folder)
    except CantataError as exc:
        return str(exc)
    return None
