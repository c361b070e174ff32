"""Every pipeline and deployed agent as an MCP tool, for other agents and IDEs: `cantata mcp`
on stdio (mcp_cli.py) and `/mcp` on `cantata serve` (mcp_http.py).

A call runs one turn as the caller's user through the server's Service, exactly as a chat
request does (the same session checks, per-session order and resumable turns): its input
is the message and, to continue a conversation, the session of an earlier result; its
result is the merged reply, with the early reply, the turn and the session. What keeps a
turn from running (a session of another user's, or of another pipeline, an unreachable
instance) is an error result with one line saying why, never someone else's data.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from opentelemetry import context as trace_context
from pydantic import ValidationError

from cantata import __version__
from cantata.errors import CantataError, ToolError, get_logger
from cantata.factory import registry
from cantata.loader import Pipeline, load_pipeline
from cantata.server.keys import Principal
from cantata.server.service import Service
from cantata.turn import TurnResult
from cantata.turn_tool import INPUT_SCHEMA, OUTPUT_SCHEMA, TurnToolInput, turn_output

log = get_logger("cantata.mcp")

# A deployed agent's tool name: `agent:NAME` is how Cantata names it elsewhere, but MCP
# clients (and the model APIs behind them) take only letters, digits, '_', '-' in a name.
AGENT_TOOL = "agent-"

PrincipalOf = Callable[[ServerRequestContext[Any, Any]], Principal]
# The trace context a call's turn starts in (over HTTP, the request's span), None for the current.
TraceOf = Callable[[ServerRequestContext[Any, Any]], trace_context.Context | None]


# A turn adds to the user's sessions and memory; it deletes nothing and reaches nothing
# outside Cantata but its own model instances.
ANNOTATIONS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)


class CantataTools:
    """The tools one Service offers: its pipelines by name, the active version of each
    deployed agent as `agent-NAME`. Deployed agents are read from the store at each listing
    and call, so that an agent deployed or rolled back meanwhile is the one that answers."""

    def __init__(self, service: Service, principal_of: PrincipalOf, trace_of: TraceOf) -> None:
        self.service = service
        self.principal_of = principal_of
        self.trace_of = trace_of
        self._loaded: dict[Path, Pipeline] = {}  # a deployed version's files never change

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        tools = [_tool(name, pipeline) for name, pipeline in self.service.pipelines.items()]
        for version in await self.service.store.agent_versions():
            name = AGENT_TOOL + version.name
            if not version.active or name in self.service.pipelines:
                continue
            try:
                tools.append(_tool(name, await self._agent(version.name)))
            except CantataError as exc:  # its files gone or broken: the others are still offered
                log.warning("deployed agent '%s' is not offered as an MCP tool: %s", version.name, exc)
        return ListToolsResult(tools=tools)

    async def call_tool(self, ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams) -> CallToolResult:
        pipeline = await self._pipeline(params.name)
        try:
            asked = TurnToolInput.model_validate(params.arguments or {})
        except ValidationError as exc:
            return _error(f"arguments: {_first_problem(exc)}")
        parent = self.trace_of(ctx)
        # The turn's task copies the context it is started in: the SDK's tools/call span is
        # current here, but one trace should go from the HTTP request to the turn.
        attached = trace_context.attach(parent) if parent is not None else None
        try:
            handle = await self.service.start_turn(
                self.principal_of(ctx),
                pipeline,
                asked.message,
                session_id=asked.session,
                history=[],
                reject_if_busy=False,
            )
            result = await self.service.wait(handle)
        except CantataError as exc:  # the HTTPErrors of the Service, the runtime's own
            return _error(exc.message)
        except Exception as exc:  # noqa: BLE001 (a bug): the SDK would put its text in the trace
            log.exception("the MCP call of '%s' failed", params.name)  # the log handler scrubs secrets
            return _error(
                f"the turn could not run: an internal error ({type(exc).__name__}); the server's log has more"
            )
        finally:
            if attached is not None:
                trace_context.detach(attached)
        return _answer(result)

    async def _pipeline(self, name: str) -> Pipeline:
        found = self.service.pipelines.get(name)
        if found is not None:
            return found
        if name.startswith(AGENT_TOOL):
            try:
                return await self._agent(name.removeprefix(AGENT_TOOL))
            except CantataError:
                pass  # no such agent: said below, as for any unknown name
        raise MCPError(INVALID_PARAMS, f"unknown tool '{name}'; tools/list names them")

    async def _agent(self, name: str) -> Pipeline:
        path = await registry.pipeline_path(self.service.store, self.service.runtime.home, registry.AGENT_PREFIX + name)
        if path not in self._loaded:
            self._loaded[path] = load_pipeline(path)
        return self._loaded[path]


def _tool(name: str, pipeline: Pipeline) -> Tool:
    description = pipeline.spec.description or f"The Cantata pipeline '{pipeline.name}'."
    return Tool(
        name=name,
        title=pipeline.name,
        description=f"{description} One turn of a team of agents: the reply to the message, with the session"
        " to continue the conversation.",
        input_schema=INPUT_SCHEMA,
        output_schema=OUTPUT_SCHEMA,
        annotations=ANNOTATIONS,
    )


def _answer(result: TurnResult) -> CallToolResult:
    try:
        output = turn_output(result)
    except ToolError as no_reply:
        return _error(no_reply.message)
    return CallToolResult(content=[TextContent(type="text", text=output.reply)], structured_content=output.model_dump())


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _first_problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "arguments"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


def mcp_server(service: Service, principal_of: PrincipalOf, trace_of: TraceOf = lambda ctx: None) -> Server[Any]:
    """The MCP server (the SDK's low-level one: the tools are Cantata's pipelines, listed as
    they are, not functions to decorate)."""
    tools = CantataTools(service, principal_of, trace_of)
    return Server(
        "cantata",
        version=__version__,
        instructions="Each tool is a Cantata pipeline (a team of agents) or a deployed agent: call it with the"
        " user's message, and pass the result's `session` back to continue the conversation.",
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
    )
