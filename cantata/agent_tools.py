"""An agent's tools as its turn runs them: those built at load (Python functions, sandboxed
ones), the tools of its MCP servers, listed now from the runtime's servers (each started once
per process and reused across turns; cantata/mcp_client.py), and its `agent:` and
`pipeline:` tools, each call of which is a turn of the calling user's own (a sub-turn, stored
as any turn is) whose merged reply is the result.

An MCP server that cannot be listed leaves the turn going: the tools its `include` names are
offered still, and a call of one tries the server again or fails with why; without an
`include` its tools are missing from this agent's run (the log says why).

A pipeline calling itself, directly or through others, is refused at load for `pipeline:`
tools (loader.py); a deployed agent is found only when called, so every sub-turn checks the
pipelines whose turns run above it (CALLERS, a context variable that the tasks of a sub-turn
inherit) and refuses one already among them, or a chain deeper than MAX_DEPTH.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from cantata.deployed import AGENT_PREFIX, pipeline_path
from cantata.errors import CantataError, ToolError, get_logger
from cantata.loader import MAX_DEPTH, Pipeline, load_pipeline
from cantata.mcp_spec import McpServerSpec
from cantata.spec import AgentSpec, ToolEntry
from cantata.store import Store
from cantata.tools import Tool
from cantata.turn import TurnResult
from cantata.turn_tool import INPUT_SCHEMA, TurnToolInput, turn_output

log = get_logger(__name__)

# The pipelines whose turns are running above this one, outermost first (empty in a user's turn).
CALLERS: ContextVar[tuple[str, ...]] = ContextVar("cantata_tool_callers", default=())


class ToolHost(Protocol):
    """What agents' tools use of the runtime running their turn (`cantata.Cantata`)."""

    @property
    def home(self) -> Path: ...

    @property
    def store(self) -> Store: ...

    async def mcp_tools(self, spec: McpServerSpec) -> list[Tool]:
        """An MCP server's tools, the server started on first use (once per runtime). Raises ToolError."""
        ...

    async def run_turn(
        self, pipeline: Pipeline, message: str, *, user: str = ..., session_id: str | None = None, wait: bool = ...
    ) -> TurnResult: ...


async def agent_tools(pipeline: Pipeline, agent: AgentSpec, *, host: ToolHost, user: str) -> list[Tool]:
    """Every tool of `agent` for its run in a turn of `user`'s; MCP servers listed now.
    A tool whose name another one of the agent's already has is left out (logged)."""
    tools: list[Tool] = list(pipeline.tools.get(agent.name, []))  # function: and sandbox:, built at load
    for entry in agent.tools:
        if entry.mcp is not None:
            tools += await _mcp_tools(entry, host)
        elif entry.pipeline is not None or entry.agent is not None:
            target = pipeline.sub_pipelines.get(entry.pipeline) if entry.pipeline is not None else None
            tools.append(SubTurnTool(entry, host=host, user=user, caller=pipeline.name, target=target))
    offered: dict[str, Tool] = {}
    for tool in tools:  # the pipeline's own tools come first, and keep their names
        if tool.name in offered:
            log.warning("agent '%s': a second tool named '%s' (an MCP server's) is left out", agent.name, tool.name)
            continue
        offered[tool.name] = tool
    return list(offered.values())


async def _mcp_tools(entry: ToolEntry, host: ToolHost) -> list[Tool]:
    spec = entry.mcp
    assert spec is not None
    try:
        found = await host.mcp_tools(spec)
    except ToolError as failed:
        log.warning("agent tools: %s", failed.message)
        return [_Unlisted(name, spec, host, failed.message) for name in spec.include or []]
    names = {tool.name for tool in found}
    for missing in [name for name in spec.include or [] if name not in names and spec.offers(name)]:
        log.warning("MCP server '%s' has no tool '%s' (named in its include)", spec.label, missing)
    if entry.side_effects:  # the pipeline says so, whatever the server's annotations say
        for tool in found:
            tool.side_effects = True
    return found


class _Unlisted:
    """A tool an MCP server's `include` names, offered while the server could not be listed:
    a call lists it again, and calls the tool if it is there now."""

    def __init__(self, name: str, spec: McpServerSpec, host: ToolHost, why: str) -> None:
        self.name, self.spec, self.host = name, spec, host
        self.description = f"(Its MCP server could not be reached when this step began: {why})"
        self.parameters: dict[str, Any] = {"type": "object"}
        self.side_effects = True  # its annotations are unknown: counted as having side effects
        self.approve = spec.approve
        self.timeout_s = spec.start_timeout_s + spec.timeout_s

    async def call(self, arguments: dict[str, Any]) -> str:
        tool = next((tool for tool in await self.host.mcp_tools(self.spec) if tool.name == self.name), None)
        if tool is None:
            raise ToolError(f"MCP server '{self.spec.label}' offers no tool '{self.name}'")
        return await tool.call(arguments)


class SubTurnTool:
    """`agent: NAME[@VERSION]` or `pipeline: NAME` as a tool: a call runs one turn of that
    pipeline as the calling user, in a new session of theirs or the one the model passes."""

    def __init__(self, entry: ToolEntry, *, host: ToolHost, user: str, caller: str, target: Pipeline | None) -> None:
        self.host, self.user, self.caller = host, user, caller
        self.reference = AGENT_PREFIX + entry.agent if entry.agent is not None else None
        self.target = target  # a `pipeline:` one, loaded with the calling pipeline
        self.name = entry.default_name
        what = f"The deployed agent '{entry.agent}'" if target is None else f"The pipeline '{target.name}'"
        about = target.spec.description if target is not None and target.spec.description else what
        self.description = entry.description or (
            f"{about}: a team of agents. Call it with a message; it answers with its reply and the session to pass"
            " back to continue that conversation."
        )
        self.parameters: dict[str, Any] = INPUT_SCHEMA
        self.side_effects = entry.side_effects
        self.approve = entry.approve
        self.timeout_s = entry.timeout_s

    async def call(self, arguments: dict[str, Any]) -> str:
        try:
            asked = TurnToolInput.model_validate(arguments)
        except ValidationError as exc:  # the loop checked them against its schema: a rule JSON Schema lacks
            raise ToolError(f"invalid arguments for {self.name}: {exc.errors()[0]['msg']}") from None
        pipeline = self.target or await self._deployed()
        above = (*CALLERS.get(), self.caller)
        if pipeline.name in above:
            raise ToolError(
                f"{self.name} would run pipeline '{pipeline.name}' inside its own turn "
                f"({' -> '.join((*above, pipeline.name))}); a pipeline may not call itself"
            )
        if len(above) >= MAX_DEPTH:
            raise ToolError(f"{self.name}: sub-turns nest at most {MAX_DEPTH} deep ({' -> '.join(above)})")
        token = CALLERS.set(above)
        try:
            result = await self.host.run_turn(
                pipeline, asked.message, user=self.user, session_id=asked.session, wait=False
            )
        except CantataError as exc:  # a session not the user's or of another pipeline, an instance down
            raise ToolError(f"{self.name}: {exc.message}") from exc
        finally:
            CALLERS.reset(token)
        return turn_output(result).model_dump_json()

    async def _deployed(self) -> Pipeline:
        """The deployed agent's version as it is now (a rollback changes which one answers)."""
        assert self.reference is not None
        try:
            path = await pipeline_path(self.host.store, self.host.home, self.reference)
            return await asyncio.to_thread(load_pipeline, path)
        except CantataError as exc:
            raise ToolError(f"{self.name}: {exc.message}") from exc
