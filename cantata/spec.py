"""Pipeline specs: the YAML a user writes, its pydantic models, and the DAG derived from it.

Everything that can be checked without running a model or reading another file is checked
here, and reported as `SpecError("pipeline.yaml:14: ...")` naming the file, the line and the
fix; a pipeline built as data (`from_dict`) gets the same checks, naming the place in the
data. This module is data only: making a spec runnable (prompt files, output models,
functions) is `loader.py`'s work.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cantata.dag import find_cycle, topological_order
from cantata.errors import SpecError
from cantata.mcp_spec import McpServerSpec
from cantata.yamlsource import DataSource, Loc, Source, describe_validation_error, dump_yaml, load_yaml

Need = Literal["reasoning", "code", "tool_use", "chat"]


TOOL_KINDS = ("function", "sandbox", "mcp", "agent", "pipeline")


class ToolEntry(BaseModel):
    """One tool of a model agent: `function: module.fn` (a Python callable, on a worker
    thread), `sandbox: module.fn` (a function beside the pipeline, run under bubblewrap),
    `mcp:` (an MCP server: its tools, listed when the agent runs), `agent: NAME[@VERSION]`
    (a deployed agent) or `pipeline: NAME` (another pipeline: a sub-team), the last two
    called with a message and run as a turn of the calling user's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    function: str | None = Field(None, description="Dotted path to a Python callable.")
    sandbox: str | None = Field(
        None, description="module.function of a module beside the pipeline, run under bubblewrap."
    )
    mcp: McpServerSpec | None = Field(
        None, description="An MCP server (stdio `command` or HTTP `url`); its tools keep their own names."
    )
    agent: str | None = Field(
        None,
        pattern=r"^[a-z][a-z0-9_-]{0,47}(@[0-9]+)?$",
        description="A deployed agent, NAME (its active version) or NAME@VERSION, called with a message.",
    )
    pipeline: str | None = Field(
        None,
        description="Another pipeline (a bundled name, or a YAML path relative to this one), called with a message.",
    )
    name: str | None = Field(
        None, pattern=r"^[A-Za-z0-9_-]{1,64}$", description="What the model calls it; default: the function's name."
    )
    description: str | None = Field(None, description="What the model reads; default: the docstring.")
    side_effects: bool = Field(
        False, description="A call that started but has no recorded result is never repeated on resume."
    )
    approve: bool = Field(
        False,
        description="A person approves or denies each call before it runs; the turn waits (status `waiting`) until then.",
    )
    timeout_s: float = Field(30.0, gt=0, description="Per call.")

    @property
    def kinds(self) -> list[str]:
        """The kinds it names (a valid entry names one)."""
        return [kind for kind in TOOL_KINDS if getattr(self, kind) is not None]

    @property
    def default_name(self) -> str:
        """What the model calls it (an `mcp:` entry's tools keep their own names)."""
        if self.name:
            return self.name
        if self.agent is not None:
            return self.agent.partition("@")[0]
        if self.pipeline is not None:  # a bundled name, a YAML file or a folder holding pipeline.yaml
            path = Path(self.pipeline.rstrip("/"))
            path = path.parent if path.name in ("pipeline.yaml", "pipeline.yml") else path
            return re.sub(r"[^A-Za-z0-9_-]", "_", path.stem)[:64] or "pipeline"
        return (self.function or self.sandbox or "").rpartition(".")[2]


class AgentSpec(BaseModel):
    """One agent: a role backed by a model (or a Python function) and what it reads."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_-]*$", description="Unique within the pipeline.")
    model: str = Field("default", description="Model alias; the instances config binds it to an instance.")
    prompt: str | None = Field(
        None, description="Role instructions, inline, or a path to a .md/.txt file relative to the YAML."
    )
    output: str | dict[str, Any] | None = Field(
        None,
        description="Dotted path to a pydantic model, an inline JSON Schema, or a .json schema file; "
        "absent means free text.",
    )
    reads: list[str] = Field(default_factory=list, description="Agents of this turn whose output it needs.")
    memory: list[str] = Field(
        default_factory=list,
        description="Agents whose latest output from this user's earlier turns and sessions it needs.",
    )
    deliver: Literal["early", "final"] | None = Field(None, description="Deliver this agent's reply to the user.")
    function: str | None = Field(None, description="Dotted path to a Python callable, instead of a model.")
    shortcut: str | None = Field(
        None,
        description="Dotted path to fn(ctx) -> output or None, called before the model: an output "
        "(e.g. a safe template) is used as is and the model is not called.",
    )
    check: str | None = Field(
        None,
        description="Dotted path to fn(ctx) -> output, called on the validated reply (ctx.output): it may "
        "correct it, or raise cantata.Rejected to have the model write it once more; on "
        "ctx.last_chance it must return a safe output.",
    )
    tools: list[ToolEntry] = Field(
        default_factory=list, description="Tools the model may call before it answers (model agents only)."
    )
    max_steps: int = Field(8, ge=1, le=100, description="Model calls of a tool loop, the final answer's included.")
    max_tool_calls: int = Field(16, ge=1, le=1000, description="Tool calls of a tool loop, failed ones included.")
    timeout_s: float = Field(120.0, gt=0, description="Per attempt.")
    retries: int = Field(0, ge=0, le=10, description="Extra attempts after a failure, with backoff.")
    max_tokens: int = Field(512, gt=0)
    temperature: float = Field(0.2, ge=0, le=2)
    thinking: bool | None = Field(None, description="For reasoning models: think before answering.")
    priority: int = Field(0, description="Higher goes first on a shared instance (after early agents).")
    required: list[str] = Field(
        default_factory=list, description="Reads that must have succeeded, else this agent is skipped."
    )
    view: dict[str, list[str]] = Field(
        default_factory=dict,
        description="A reader view: for an agent it reads, the fields of its output this agent's prompt "
        "shows (dotted for nested ones, e.g. plan.tone; [] shows none). Its check sees the whole output.",
    )
    # What the planner needs to know about the role (see `cantata plan`).
    needs: Need = Field("chat", description="What the role is mostly doing, for model choice.")
    min_context: int | None = Field(None, gt=0)
    prompt_tokens: int | None = Field(None, gt=0, description="Expected prompt tokens per turn.")
    output_tokens: int | None = Field(None, gt=0, description="Expected output tokens per turn.")

    @property
    def is_function(self) -> bool:
        return self.function is not None


class LoopSpec(BaseModel):
    """A bounded loop over some agents: they run again, iteration after iteration, until
    `until` says stop or `max_iterations` is reached (a critic, a tester and a fixer)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agents: list[str] = Field(min_length=1, description="The agents repeated together, once per iteration.")
    max_iterations: int = Field(3, ge=1, le=50)
    until: str | None = Field(
        None,
        description="Dotted path to fn(ctx) -> bool, called after each iteration with that iteration's "
        "outputs in ctx.inputs: true stops the loop. Absent: run max_iterations.",
    )
    carry: dict[str, str] = Field(
        default_factory=dict,
        description="{a: b}: from the second iteration on, loop agents that read b read a's output of "
        "the iteration before instead (a fixer's patched artefact in place of the builder's).",
    )


class PipelineSpec(BaseModel):
    """A pipeline as data. `from_dict`/`from_file` run every check a load runs that needs
    no file system (keys, values, names, the DAG); `to_file` writes YAML they read back."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""
    briefing: str = Field("", description="Preamble every agent sees first, byte for byte.")
    budget: int = Field(2048, gt=0, description="Token budget of the shared briefing.")
    team_briefing: bool = Field(
        False,
        description="Put every model agent's instructions in the shared briefing (the team section), "
        "so they are computed once per turn, and cached across turns, instead of once per agent.",
    )
    memory_view: dict[str, list[str]] = Field(
        default_factory=dict,
        description="For an agent listed under some agent's memory: the fields of its latest output the "
        "shared briefing shows (dotted for nested ones; [] shows none). Agents' memory sees the whole output.",
    )
    agents: list[AgentSpec] = Field(min_length=1)
    loop: LoopSpec | None = Field(None, description="A bounded loop over some of the agents.")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PipelineSpec:
        """Errors name the place in the data: "agents[2].reads[0]: ..."."""
        return validated_spec(DataSource(data))

    @classmethod
    def from_file(cls, path: Path | str) -> PipelineSpec:
        """Errors name the file and line: "pipeline.yaml:14: ..."."""
        return validated_spec(load_yaml(Path(path), SpecError))

    def to_dict(self) -> dict[str, Any]:
        """The keys a user would write: values left at their defaults are left out."""
        return self.model_dump(mode="json", exclude_defaults=True)

    def to_yaml(self) -> str:
        return dump_yaml(self.to_dict())

    def to_file(self, path: Path | str) -> None:
        """Write the spec as YAML; prompt and schema files it names stay names, relative
        to the folder written to."""
        Path(path).write_text(self.to_yaml(), encoding="utf-8")

    def agent_order(self) -> list[str]:
        """A topological order of the agents (ties in file order)."""
        return topological_order({a.name: a.reads for a in self.agents})

    def deliverer(self, kind: Literal["early", "final"]) -> AgentSpec | None:
        return next((a for a in self.agents if a.deliver == kind), None)


def pipeline_json_schema() -> dict[str, Any]:
    return PipelineSpec.model_json_schema()


def validated_spec(source: Source) -> PipelineSpec:
    """The spec in `source` (YAML read with its lines, or plain data), validated and checked."""
    if not isinstance(source.data, Mapping):
        raise SpecError(f"{source.where(())}: a pipeline is a mapping with 'name' and 'agents'")
    try:
        spec = PipelineSpec.model_validate(source.data)
    except ValidationError as exc:
        raise SpecError(describe_validation_error(exc, source, _allowed_keys)) from None
    check_spec(spec, source)
    return spec


def check_spec(spec: PipelineSpec, source: Source) -> None:
    """What pydantic cannot check alone: names, the DAG, the loop; errors name places in `source`."""
    _check_graph(spec, source)
    _check_loop(spec, source)


def _allowed_keys(loc: Loc) -> list[str]:
    models: dict[str, type[BaseModel]] = {"agents": AgentSpec, "loop": LoopSpec}
    if len(loc) >= 4 and loc[0] == "agents" and loc[2] == "tools":
        return list((McpServerSpec if len(loc) >= 5 and loc[4] == "mcp" else ToolEntry).model_fields)
    return list(models.get(str(loc[0]) if loc else "", PipelineSpec).model_fields)


def _check_graph(spec: PipelineSpec, source: Source) -> None:
    names: dict[str, int] = {}
    for i, agent in enumerate(spec.agents):
        if agent.name in names:
            raise SpecError(
                f"{source.where(('agents', i, 'name'))}: agent '{agent.name}' is defined twice "
                f"(first at {source.mention(('agents', names[agent.name]))}); rename one"
            )
        names[agent.name] = i
    for i, agent in enumerate(spec.agents):
        here = ("agents", i)
        if (agent.function is None) == (agent.prompt is None):
            raise SpecError(
                f"{source.where(here)}: agent '{agent.name}' needs either 'prompt' (a model agent) "
                "or 'function' (a Python callable), not both and not neither"
            )
        for key in ("shortcut", "check"):
            if agent.function is not None and getattr(agent, key) is not None:
                raise SpecError(
                    f"{source.where((*here, key))}: agent '{agent.name}' is a function; '{key}' is for model agents"
                )
        _check_tools(agent, source, here)
        for key in ("reads", "memory", "required"):
            for j, other in enumerate(getattr(agent, key)):
                if other not in names:
                    raise SpecError(
                        f"{source.where((*here, key, j))}: agent '{agent.name}' {key} '{other}', "
                        f"which is not an agent of this pipeline; known agents: {', '.join(names)}"
                    )
        for j, other in enumerate(agent.reads):
            if other == agent.name:
                raise SpecError(
                    f"{source.where((*here, 'reads', j))}: agent '{agent.name}' reads itself; "
                    "to see its own earlier outputs, list it under 'memory' instead"
                )
        for other in agent.view:
            if other not in agent.reads:
                raise SpecError(
                    f"{source.where((*here, 'view', other))}: agent '{agent.name}' has a view of '{other}' "
                    "but does not read it; add it to 'reads'"
                )
        for j, other in enumerate(agent.required):
            if other not in agent.reads:
                raise SpecError(
                    f"{source.where((*here, 'required', j))}: agent '{agent.name}' requires '{other}' "
                    "but does not read it; add it to 'reads'"
                )
    remembered = {m for a in spec.agents for m in a.memory}
    for other in spec.memory_view:
        if other not in remembered:
            raise SpecError(
                f"{source.where(('memory_view', other))}: '{other}' is in no agent's memory; "
                f"agents remembered: {', '.join(sorted(remembered)) or 'none'}"
            )
    for kind in ("early", "final"):
        chosen = [i for i, a in enumerate(spec.agents) if a.deliver == kind]
        if len(chosen) > 1:
            first, second = chosen[0], chosen[1]
            raise SpecError(
                f"{source.where(('agents', second, 'deliver'))}: two agents deliver '{kind}' "
                f"('{spec.agents[first].name}' and '{spec.agents[second].name}'); keep one"
            )
    cycle = find_cycle({a.name: a.reads for a in spec.agents})
    if cycle:
        i = names[cycle[0]]
        j = spec.agents[i].reads.index(cycle[1])
        raise SpecError(
            f"{source.where(('agents', i, 'reads', j))}: the reads form a cycle "
            f"{' -> '.join(cycle)}; remove one of these reads"
        )


def _check_tools(agent: AgentSpec, source: Source, here: Loc) -> None:
    """Tools belong to model agents; each names one function; no two share a name."""
    if agent.tools and agent.function is not None:
        raise SpecError(
            f"{source.where((*here, 'tools'))}: agent '{agent.name}' is a function; 'tools' are for model agents"
        )
    names: dict[str, int] = {}
    for j, tool in enumerate(agent.tools):
        at = (*here, "tools", j)
        kinds = tool.kinds
        if len(kinds) != 1:
            raise SpecError(
                f"{source.where((*at, kinds[1]) if len(kinds) > 1 else at)}: a tool is one of "
                + ", ".join(f"'{kind}:'" for kind in TOOL_KINDS)
                + f", not {' and '.join(kinds) if kinds else 'none'}"
            )
        if tool.mcp is not None:
            for key in ("name", "description", "timeout_s", "approve"):
                if key in tool.model_fields_set:
                    raise SpecError(
                        f"{source.where((*at, key))}: an 'mcp:' entry offers its server's tools under their own "
                        f"names and descriptions; '{key}' is not for it (timeout_s and approve go inside 'mcp:')"
                    )
            continue
        name = tool.default_name
        if name in names:
            raise SpecError(
                f"{source.where(at)}: agent '{agent.name}' has two tools named '{name}' "
                f"(the first at {source.mention((*here, 'tools', names[name]))}); give one a 'name'"
            )
        names[name] = j


def _check_loop(spec: PipelineSpec, source: Source) -> None:
    """A loop repeats a closed part of the DAG: its agents exist, deliver nothing, and what
    it carries replaces an input its agents read."""
    loop = spec.loop
    if loop is None:
        return
    agents = {a.name: a for a in spec.agents}
    for j, name in enumerate(loop.agents):
        if name not in agents:
            raise SpecError(
                f"{source.where(('loop', 'agents', j))}: the loop names '{name}', which is not an agent of this "
                f"pipeline; known agents: {', '.join(agents)}"
            )
        if agents[name].deliver is not None:
            raise SpecError(
                f"{source.where(('loop', 'agents', j))}: '{name}' delivers a reply, so it cannot be in the loop "
                "(a reply is delivered once); deliver from an agent after the loop"
            )
    if len(set(loop.agents)) != len(loop.agents):
        raise SpecError(f"{source.where(('loop', 'agents'))}: the loop lists an agent twice")
    looped = set(loop.agents)
    read_in_loop = {r for name in looped for r in agents[name].reads}
    for source_agent, replaced in loop.carry.items():
        here = source.where(("loop", "carry", source_agent))
        if source_agent not in looped:
            raise SpecError(f"{here}: carry from '{source_agent}', which is not in the loop")
        if replaced not in agents or replaced in looped or replaced not in read_in_loop:
            raise SpecError(
                f"{here}: carry into '{replaced}': it must be an agent outside the loop that a loop agent reads"
            )
