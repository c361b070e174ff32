"""A spec made runnable: `Pipeline`, what `load_pipeline` returns.

Loading reads what a spec names but `spec.py` never touches: prompt files and JSON Schema
files beside the YAML, and the Python a spec points to by dotted path (output models,
functions, shortcuts, checks, a loop's stop condition), imported from beside the pipeline
first (see pipeline_modules.py). A `sandbox:` function is never imported: each call runs it
under bubblewrap (cantata.sandbox). A `pipeline:` tool's pipeline is loaded with the one
that calls it, so that a pipeline calling itself (directly or not) is refused here.
Errors are `SpecError`s naming the file and line.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from cantata.errors import SpecError
from cantata.pipeline_modules import import_module
from cantata.references import locate, refusal, refusal_of_object
from cantata.sandbox import sandboxed_function
from cantata.spec import AgentSpec, PipelineSpec, ToolEntry, check_spec, validated_spec
from cantata.structured import OutputContract, contract_from_model, contract_from_schema
from cantata.tools import FunctionTool, SandboxTool, Tool
from cantata.yamlsource import DataSource, Loc, Source, load_yaml

BUNDLED_DIR = Path(__file__).parent / "pipelines"
# Turns calling pipelines as tools nest at most this deep, the user's own turn included.
MAX_DEPTH = 4


def bundled() -> dict[str, Path]:
    """The pipelines that ship with Cantata (cantata/pipelines/), by name."""
    return {p.parent.name: p for p in sorted(BUNDLED_DIR.glob("*/pipeline.yaml"))}


class Pipeline:
    """A loaded, checked pipeline: the spec plus what was resolved from it."""

    def __init__(
        self,
        spec: PipelineSpec,
        *,
        path: Path | None,
        prompts: dict[str, str],
        contracts: dict[str, OutputContract | None],
        functions: dict[str, Callable[..., Any]],
        shortcuts: dict[str, Callable[..., Any]] | None = None,
        checks: dict[str, Callable[..., Any]] | None = None,
        until: Callable[..., Any] | None = None,
        tools: dict[str, list[Tool]] | None = None,
        sub_pipelines: dict[str, Pipeline] | None = None,
    ) -> None:
        self.spec = spec
        self.tools = tools or {}  # a model agent's tools built at load, by agent
        self.sub_pipelines = sub_pipelines or {}  # what its `pipeline:` tools run, by what they name
        self.until = until  # the loop's stop condition
        self.shortcuts = shortcuts or {}
        self.checks = checks or {}
        self.path = path
        self.prompts = prompts
        self.contracts = contracts
        self.functions = functions
        self.agents = {a.name: a for a in spec.agents}

    @classmethod
    def from_file(cls, path: Path | str) -> Pipeline:
        """Load a pipeline YAML; prompt files, schema files and modules beside it are found."""
        path = Path(path)
        source = load_yaml(path, SpecError)
        return _resolve(validated_spec(source), source, base=path.parent, path=path, chain=(path.resolve(),))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, base: Path | None = None) -> Pipeline:
        """A pipeline from plain data; `base` is the folder its relative prompt and schema
        files and its own modules are found in (default: the current directory)."""
        source = DataSource(data)
        return _resolve(validated_spec(source), source, base=base or Path.cwd(), path=None)

    @classmethod
    def from_spec(cls, spec: PipelineSpec, *, base: Path | None = None) -> Pipeline:
        """A pipeline from a spec built in Python (checked here like any other)."""
        source = DataSource(spec.to_dict())
        check_spec(spec, source)
        return _resolve(spec, source, base=base or Path.cwd(), path=None)

    def to_file(self, path: Path | str, *, prompt_files: bool = False) -> None:
        """Write the pipeline as YAML that loads on its own wherever it is written: prompts
        inline (or, with `prompt_files`, as prompts/NAME.md beside it) and schema files
        inline. Dotted paths stay dotted paths: modules beside the old YAML are not copied."""
        path = Path(path)
        agents = []
        for agent in self.spec.agents:
            changes: dict[str, Any] = {}
            if agent.name in self.prompts:
                changes["prompt"] = self.prompts[agent.name]
                # A one-line prompt such as "Summarise notes.md" would read back as a file name.
                if prompt_files or _names_prompt_file(self.prompts[agent.name]):
                    changes["prompt"] = f"prompts/{agent.name}.md"
                    (path.parent / "prompts").mkdir(parents=True, exist_ok=True)
                    (path.parent / changes["prompt"]).write_text(self.prompts[agent.name], encoding="utf-8")
            contract = self.contracts.get(agent.name)
            if isinstance(agent.output, str) and agent.output.endswith(".json") and contract is not None:
                changes["output"] = contract.schema
            agents.append(agent.model_copy(update=changes))
        self.spec.model_copy(update={"agents": agents}).to_file(path)

    @property
    def name(self) -> str:
        return self.spec.name

    def has_tools(self, agent: str) -> bool:
        return bool(self.agents[agent].tools)

    @cached_property
    def readers(self) -> dict[str, list[str]]:
        """Who reads each agent: the DAG's edges, pointing downstream."""
        out: dict[str, list[str]] = {name: [] for name in self.agents}
        for agent in self.spec.agents:
            for upstream in agent.reads:
                out[upstream].append(agent.name)
        return out

    @cached_property
    def order(self) -> list[str]:
        """A topological order (ties in file order)."""
        return self.spec.agent_order()

    @cached_property
    def looped(self) -> frozenset[str]:
        """The agents of the loop, if the pipeline has one."""
        return frozenset(self.spec.loop.agents) if self.spec.loop else frozenset()

    def deliverer(self, kind: Literal["early", "final"]) -> AgentSpec | None:
        return self.spec.deliverer(kind)

    @cached_property
    def preamble(self) -> str:
        """The start of every briefing: the pipeline's text, plus the team section if asked for."""
        if not self.spec.team_briefing:
            return self.spec.briefing
        roles = [f"### {a.name}\n{self.prompts[a.name].strip()}" for a in self.spec.agents if not a.is_function]
        team = "## The team\nWhat each member does; you will be told which member you are.\n\n" + "\n\n".join(roles)
        return f"{self.spec.briefing.strip()}\n\n{team}"

    @cached_property
    def memory_agents(self) -> list[str]:
        """Agents whose past outputs go into the shared briefing (union over all agents)."""
        seen: list[str] = []
        for agent in self.spec.agents:
            seen.extend(m for m in agent.memory if m not in seen)
        return seen


def load_pipeline(path: Path | str) -> Pipeline:
    return Pipeline.from_file(path)


def validate_pipeline(path: Path | str) -> PipelineSpec:
    """What `cantata validate` checks: all that loading checks, except that the dotted paths
    are found in their modules' source (cantata.references), so none of the pipeline's code
    runs; importing waits until the pipeline is loaded to run."""
    path = Path(path)
    source = load_yaml(path, SpecError)
    spec = validated_spec(source)
    _resolve(spec, source, base=path.parent, path=path, run=False, chain=(path.resolve(),))
    return spec


def _resolve(
    spec: PipelineSpec,
    source: Source,
    *,
    base: Path,
    path: Path | None,
    run: bool = True,
    chain: tuple[Path, ...] = (),
) -> Pipeline:
    """Read the prompt and schema files and import the callables and models a spec names
    (with `run=False`, only find them: the Pipeline is then for checking, never for running).
    `chain`: the files of the pipelines loading this one for their `pipeline:` tools, itself last."""
    prompts: dict[str, str] = {}
    contracts: dict[str, OutputContract | None] = {}
    functions: dict[str, Callable[..., Any]] = {}
    shortcuts: dict[str, Callable[..., Any]] = {}
    checks: dict[str, Callable[..., Any]] = {}
    tools: dict[str, list[Tool]] = {}
    sub_pipelines: dict[str, Pipeline] = {}
    for i, agent in enumerate(spec.agents):
        for j, entry in enumerate(agent.tools):
            loc = ("agents", i, "tools", j)
            if entry.pipeline is not None and entry.pipeline not in sub_pipelines:
                sub_pipelines[entry.pipeline] = _sub_pipeline(
                    entry.pipeline, base, source, (*loc, "pipeline"), run, chain
                )
            if entry.mcp is not None and importlib.util.find_spec("mcp") is None:
                raise SpecError(
                    f"{source.where((*loc, 'mcp'))}: MCP tools need the 'mcp' extra: pip install 'cantata[mcp]'"
                )
            tool = _tool(entry, base, source, loc, run=run)
            if tool is not None:
                tools.setdefault(agent.name, []).append(tool)
        if agent.function is not None and agent.function.startswith(SANDBOX_PREFIX):
            functions[agent.name] = _sandboxed(agent.function, base, source, ("agents", i, "function"))
        elif agent.function is not None:
            functions[agent.name] = _import(agent.function, base, source, ("agents", i, "function"), run=run)
        if agent.shortcut is not None:
            shortcuts[agent.name] = _import(agent.shortcut, base, source, ("agents", i, "shortcut"), run=run)
        if agent.check is not None:
            checks[agent.name] = _import(agent.check, base, source, ("agents", i, "check"), run=run)
        if agent.prompt is not None:
            prompts[agent.name] = _prompt_text(agent.prompt, base, source, ("agents", i, "prompt"))
        contracts[agent.name] = _contract(agent, base, source, ("agents", i, "output"), run=run)
    until = None
    if spec.loop is not None and spec.loop.until is not None:
        until = _import(spec.loop.until, base, source, ("loop", "until"), run=run)
    return Pipeline(
        spec,
        path=path,
        prompts=prompts,
        contracts=contracts,
        functions=functions,
        shortcuts=shortcuts,
        checks=checks,
        until=until,
        tools=tools,
        sub_pipelines=sub_pipelines,
    )


def _sub_pipeline(value: str, base: Path, source: Source, loc: Loc, run: bool, chain: tuple[Path, ...]) -> Pipeline:
    """What `pipeline: VALUE` names: a YAML file (or a folder with pipeline.yaml) relative to
    the calling pipeline's folder, else a bundled pipeline; loaded now, refusing a cycle."""
    known = bundled()
    path = base / value
    if path.is_dir():
        path = path / "pipeline.yaml"
    if not path.is_file():
        if value not in known:
            raise SpecError(
                f"{source.where(loc)}: no pipeline '{value}': not a file beside this one ({path}) nor a bundled "
                f"pipeline ({', '.join(known)})"
            )
        path = known[value]
    here = path.resolve()
    if here in chain:
        names = " -> ".join(p.name if p.name != "pipeline.yaml" else p.parent.name for p in (*chain, here))
        raise SpecError(f"{source.where(loc)}: the pipeline calls itself through its tools ({names}); remove one")
    if len(chain) >= MAX_DEPTH:
        raise SpecError(f"{source.where(loc)}: pipeline tools nest more than {MAX_DEPTH} deep; call fewer in turn")
    sub_source = load_yaml(path, SpecError)
    return _resolve(validated_spec(sub_source), sub_source, base=path.parent, path=path, run=run, chain=(*chain, here))


def _tool(entry: ToolEntry, base: Path, source: Source, loc: Loc, *, run: bool) -> Tool | None:
    """A tool entry made callable (with `run=False`, a `function:` one only found: None)."""
    settings: dict[str, Any] = {
        "name": entry.default_name,
        "description": entry.description,
        "side_effects": entry.side_effects,
        "approve": entry.approve,
        "timeout_s": entry.timeout_s,
    }
    if entry.function is None and entry.sandbox is None:
        return None  # an MCP server's tools, a deployed agent or a pipeline: made when the agent runs
    try:
        if entry.sandbox is not None:
            module, function = _beside(entry.sandbox, "sandbox: module.function", base, source, (*loc, "sandbox"))
            return SandboxTool(base, module, function, **settings)
        assert entry.function is not None
        fn = _import(entry.function, base, source, (*loc, "function"), run=run)
        if fn is None:
            return None
        if not callable(fn):
            raise ValueError(f"'{entry.function}' is not callable")
        return FunctionTool(fn, **settings)
    except ValueError as exc:
        raise SpecError(f"{source.where(loc)}: {exc}") from None


_PROMPT_SUFFIXES = (".md", ".txt", ".j2", ".prompt")


def _names_prompt_file(value: str) -> bool:
    return "\n" not in value.strip() and value.strip().endswith(_PROMPT_SUFFIXES)


def _prompt_text(value: str, base: Path, source: Source, loc: Loc) -> str:
    """Inline text, unless the value is one line naming a prompt file next to the YAML."""
    if not _names_prompt_file(value):
        return value
    file = base / value.strip()
    try:
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(f"{source.where(loc)}: prompt file '{value.strip()}' not found (looked in {base})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"{source.where(loc)}: cannot read prompt file '{value.strip()}': {exc}") from None


def _contract(agent: AgentSpec, base: Path, source: Source, loc: Loc, *, run: bool) -> OutputContract | None:
    output = agent.output
    if output is None:
        return None
    if isinstance(output, dict):
        return contract_from_schema(output, name=agent.name, where=source.where(loc))
    if output.endswith(".json"):
        file = base / output
        try:
            schema = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SpecError(f"{source.where(loc)}: schema file '{output}' not found (looked in {base})") from None
        except (OSError, ValueError) as exc:
            raise SpecError(f"{source.where(loc)}: cannot read schema file '{output}': {exc}") from None
        return contract_from_schema(schema, name=agent.name, where=source.where(loc))
    model = _import(output, base, source, loc, run=run)
    if not run:
        return None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise SpecError(f"{source.where(loc)}: '{output}' is not a pydantic model class")
    return contract_from_model(model)


SANDBOX_PREFIX = "sandbox:"


def _sandboxed(reference: str, base: Path, source: Source, loc: Loc) -> Callable[..., Any]:
    """`sandbox:module.function`: a function beside the pipeline that is never imported here;
    every call runs it under bubblewrap (cantata.sandbox), as generated code must."""
    module, function = _beside(reference.removeprefix(SANDBOX_PREFIX), "sandbox:module.function", base, source, loc)
    return sandboxed_function(base, module, function)


def _beside(reference: str, form: str, base: Path, source: Source, loc: Loc) -> tuple[str, str]:
    """(module, function) of `module.function`, a module beside the pipeline (not imported)."""
    module, _, function = reference.rpartition(".")
    if not module or not function or "." in module:
        raise SpecError(f"{source.where(loc)}: '{reference}' must be {form}, a module beside the pipeline")
    if not (base / f"{module}.py").exists():
        raise SpecError(f"{source.where(loc)}: '{reference}': no file {module}.py beside the pipeline (in {base})")
    return module, function


def _import(dotted: str, base: Path, source: Source, loc: Loc, *, run: bool) -> Any:
    """Import `package.module.Name`; modules beside the pipeline file first (see pipeline_modules).
    Only what the pipeline may name (cantata.references) is imported; with `run=False`,
    nothing is: the name is found in its module's source, and None stands for it."""
    problem = refusal(dotted, base) if run else locate(dotted, base)
    if problem is not None:
        raise SpecError(f"{source.where(loc)}: {problem}")
    if not run:
        return None
    module_name, _, attr = dotted.rpartition(".")
    try:
        module = import_module(module_name, base)
    except Exception as exc:  # ImportError, or the module's own SyntaxError or any error it raises
        missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
        hint = (
            "; modules beside the pipeline import each other relatively (from .models import X)"
            if missing and "." not in missing and missing != module_name.partition(".")[0]
            else ""
        )
        problem = f"cannot import '{module_name}': {type(exc).__name__}: {exc}{hint}"
        raise SpecError(f"{source.where(loc)}: {problem}") from exc
    try:
        value = getattr(module, attr)
    except AttributeError:
        raise SpecError(f"{source.where(loc)}: module '{module_name}' has no '{attr}'") from None
    problem = refusal_of_object(value, dotted, base)
    if problem is not None:
        raise SpecError(f"{source.where(loc)}: {problem}")
    return value
