"""OpenTelemetry traces of turns: the turn, each agent, each model call and tool call.

A turn is one trace. Its spans, with the GenAI semantic conventions (the
semantic-conventions-genai registry; `gen_ai.system` is its deprecated name for
`gen_ai.provider.name`, not emitted):

    POST /v1/chat/completions       SERVER, FastAPI's own request span (server/app.py)
      invoke_workflow PIPELINE      the turn: cantata.turn.id, gen_ai.conversation.id (the
                                    session), user.id, cantata.worker (host:pid running it)
        invoke_agent AGENT          each agent that runs: cantata.agent.status, token sums
          chat MODEL                each generation: gen_ai.request.model, gen_ai.provider.name,
                                    gen_ai.usage.input_tokens / output_tokens /
                                    cache_read.input_tokens, gen_ai.response.finish_reasons
          execute_tool TOOL         each tool call (`tool_span`, for the tool loop)

No text of a message, prompt, reply, tool argument or result, nor an agent's error (which
may quote the reply), is recorded unless the operator sets the GenAI instrumentations'
own switch, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.

Off unless asked for, and then free: without an exporter configured the callers get no
tracer (`tracer()` is None, checked once per turn) and make no call here per agent or
model call. `configure_from_env()` (every `cantata` command) exports over OTLP/HTTP when
OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; the SDK and the
exporter are the `otel` extra, and without them a line says so and nothing is exported.
A program that embeds Cantata and configures OpenTelemetry itself gets the spans in its
own provider; a test passes one to `use()`.

Across processes (a turn queued by `cantata serve`, run by `cantata worker`), the trace
goes with the turn as its W3C `traceparent`: `current_traceparent()` where the turn is
queued, and `Cantata.resume(..., traceparent=...)` / `run_turn(..., traceparent=...)`
where it runs, which start the turn's span under it.

Tool calls, for the tool loop: wrap each call in `tool_span`, in the agent's task (its
span is then the parent), and hand it the result:

    with telemetry.tool_span(tool.name, call_id=call.id, arguments=call.arguments) as span:
        result = await tool.call(call.arguments)
        span.result(result)

An exception leaving the block marks the span failed, with its class as `error.type`.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer, TracerProvider
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from cantata.turn import AgentResult

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider

CONTENT_SWITCH = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
# Values of the switch that turn content on: the older boolean and the newer span modes.
_CONTENT_ON = frozenset({"true", "1", "yes", "span_only", "span_and_event"})
ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
PROTOCOLS = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
# gen_ai.provider.name per backend: the API's flavour (server.address says whose server).
PROVIDERS = {"openai": "openai", "embedded": "llama_cpp", "scripted": "cantata.scripted"}

_W3C = TraceContextTextMapPropagator()
_provider: TracerProvider | None = None  # given by use(); else the global one, if configured
_tracer: tuple[TracerProvider, Tracer] | None = None
_exporting: SdkTracerProvider | None = None  # what configure_from_env() set up: flush() sends its queue


class _Message(Protocol):
    """A chat message (backends.base.Message), as recorded when content is on."""

    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...


def use(provider: TracerProvider | None) -> None:
    """Send Cantata's spans to `provider` (None: back to the global provider)."""
    global _provider
    _provider = provider


def provider() -> TracerProvider | None:
    """The provider given to `use()`, for the server's request spans to share."""
    return _provider


def tracer() -> Tracer | None:
    """The tracer, or None while tracing is off: what a turn asks once, at its start."""
    global _tracer
    current = _provider if _provider is not None else trace.get_tracer_provider()
    if _unconfigured(current):
        return None
    if _tracer is None or _tracer[0] is not current:
        _tracer = (current, current.get_tracer("cantata"))
    return _tracer[1]


def _unconfigured(provider: TracerProvider) -> bool:
    # The API's stand-ins before a provider is set, and its explicit no-op: spans go nowhere.
    return isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider))


def capture_content() -> bool:
    """Whether the operator asked for message text in spans (CONTENT_SWITCH)."""
    return os.environ.get(CONTENT_SWITCH, "").strip().lower() in _CONTENT_ON


def configure_from_env() -> None:
    """Export spans over OTLP/HTTP when the standard endpoint variable is set; else nothing.
    Spans still queued are sent when the process exits (the SDK's own exit hook), or by
    `flush()` where a signal ends the process without it."""
    if not any(os.environ.get(name) for name in ENDPOINTS):
        return
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return
    if os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() == "none":
        return
    protocol = next((os.environ[name] for name in PROTOCOLS if os.environ.get(name)), "http/protobuf")
    if protocol.strip() != "http/protobuf":
        _warn(f"{protocol!r} is not an OTLP protocol Cantata exports; set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf")
        return
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        _warn("the OpenTelemetry SDK is not installed: pip install 'cantata[otel]'")
        return
    attributes: dict[str, Any] = {"process.pid": os.getpid(), "host.name": socket.gethostname()}
    if not os.environ.get("OTEL_SERVICE_NAME"):
        attributes["service.name"] = "cantata"
    global _exporting
    sdk = SdkTracerProvider(resource=Resource.create(attributes))
    sdk.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(sdk)  # global: FastAPI's request spans use it too
    _exporting = sdk


def flush() -> None:
    """Send the spans still queued now, for a process about to end without its exit hooks
    (`cantata serve`: uvicorn re-raises the SIGTERM it shut down on). Nothing if not exporting."""
    if _exporting is not None:
        _exporting.force_flush()


def _warn(reason: str) -> None:
    print(f"warning: OTEL_EXPORTER_OTLP_ENDPOINT is set, but {reason}; traces are not exported", file=sys.stderr)


# -- across processes ---------------------------------------------------------------------


def current_traceparent() -> str | None:
    """The W3C `traceparent` of the current span, to store with a turn another process
    runs; None when no span is recording (tracing off)."""
    carrier: dict[str, str] = {}
    _W3C.inject(carrier)
    return carrier.get("traceparent")


def _parent(traceparent: str | None) -> Context | None:
    """The context to start a span under: the remote parent, or None for the current one."""
    return _W3C.extract({"traceparent": traceparent}) if traceparent else None


def mark_request(*, turn_id: int, session_id: str, user_id: str) -> None:
    """Name the turn on the current span (the HTTP request that started it)."""
    span = trace.get_current_span()
    if span.is_recording():
        span.set_attributes({"cantata.turn.id": turn_id, "gen_ai.conversation.id": session_id, "user.id": user_id})


# -- the turn and its agents ----------------------------------------------------------------


@contextmanager
def turn_span(
    tracer: Tracer,
    *,
    pipeline: str,
    turn_id: int,
    number: int,
    session_id: str,
    user_id: str,
    resumed: bool,
    traceparent: str | None = None,
) -> Iterator[trace.Span]:
    """The turn's span, under `traceparent` (another process's) or the current span."""
    attributes = {
        "gen_ai.operation.name": "invoke_workflow",
        "gen_ai.workflow.name": pipeline,
        "cantata.turn.id": turn_id,
        "cantata.turn.number": number,
        "cantata.turn.resumed": resumed,
        "gen_ai.conversation.id": session_id,
        "user.id": user_id,
        "cantata.worker": f"{socket.gethostname()}:{os.getpid()}",
    }
    kind = SpanKind.CONSUMER if traceparent else SpanKind.INTERNAL
    with _span(tracer, f"invoke_workflow {pipeline}", kind, attributes, _parent(traceparent)) as span:
        yield span


def turn_finished(span: trace.Span, status: str) -> None:
    span.set_attribute("cantata.turn.status", status)
    if status == "failed":
        span.set_status(Status(StatusCode.ERROR))
        span.set_attribute("error.type", "turn_failed")


@contextmanager
def agent_span(tracer: Tracer, agent: str, *, model: str | None, iteration: int) -> Iterator[trace.Span]:
    """One agent's run; `model` is its alias (None for a function agent)."""
    attributes: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}
    if model is not None:
        attributes["cantata.model_alias"] = model
    if iteration:
        attributes["cantata.iteration"] = iteration
    with _span(tracer, f"invoke_agent {agent}", SpanKind.INTERNAL, attributes) as span:
        yield span


def agent_finished(span: trace.Span, result: AgentResult) -> None:
    span.set_attributes({"cantata.agent.status": result.status, "cantata.agent.attempts": result.attempts})
    if result.instance is not None:  # a model answered (not a function, nor a shortcut): its sums
        span.set_attributes(
            {
                "cantata.instance": result.instance,
                "gen_ai.usage.input_tokens": result.prompt_tokens,
                "gen_ai.usage.output_tokens": result.completion_tokens,
                "gen_ai.usage.cache_read.input_tokens": result.cached_tokens,
            }
        )
    if result.status == "failed":
        # The error may quote the model's reply: text, like the rest, only when asked for.
        span.set_status(Status(StatusCode.ERROR, result.error if capture_content() else None))
        span.set_attribute("error.type", "_OTHER")


# -- model calls ----------------------------------------------------------------------------


@contextmanager
def chat_span(
    tracer: Tracer,
    *,
    backend: str,
    model: str,
    instance: str,
    url: str | None,
    agent: str,
    session_id: str | None,
    max_tokens: int,
    temperature: float,
    structured: bool,
    messages: Sequence[_Message],
) -> Iterator[trace.Span]:
    """One generation on an instance (an attempt, a repair, a regeneration after a check)."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": PROVIDERS.get(backend, backend),
        "gen_ai.request.model": model,
        "gen_ai.request.max_tokens": max_tokens,
        "gen_ai.request.temperature": temperature,
        "gen_ai.output.type": "json" if structured else "text",
        "gen_ai.agent.name": agent,
        "cantata.instance": instance,
    }
    if session_id is not None:
        attributes["gen_ai.conversation.id"] = session_id
    kind = SpanKind.INTERNAL  # a model in this process
    if url:
        kind = SpanKind.CLIENT
        parts = urlsplit(url)
        if parts.hostname:
            attributes["server.address"] = parts.hostname
            attributes["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
    if capture_content():
        attributes["gen_ai.input.messages"] = json.dumps(
            [{"role": m.role, "parts": [{"type": "text", "content": m.content}]} for m in messages]
        )
    with _span(tracer, f"chat {model}", kind, attributes) as span:
        yield span


def chat_finished(
    span: trace.Span,
    *,
    input_tokens: int,
    output_tokens: int,
    cached_tokens: int,
    finish_reason: str | None,
    first_token_s: float | None,
    text: str,
) -> None:
    span.set_attributes(
        {
            "gen_ai.usage.input_tokens": input_tokens,
            "gen_ai.usage.output_tokens": output_tokens,
            "gen_ai.usage.cache_read.input_tokens": cached_tokens,
        }
    )
    if finish_reason is not None:
        span.set_attribute("gen_ai.response.finish_reasons", [finish_reason])
    if first_token_s is not None:
        span.set_attribute("gen_ai.response.time_to_first_chunk", first_token_s)
    if capture_content():
        output = {"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": finish_reason}
        span.set_attribute("gen_ai.output.messages", json.dumps([output]))


# -- tool calls -----------------------------------------------------------------------------


class ToolSpan:
    """What a tool call tells its span; does nothing while tracing is off."""

    __slots__ = ("span",)

    def __init__(self, span: trace.Span | None) -> None:
        self.span = span

    def result(self, text: str) -> None:
        """The tool's result: its size always, its text only when content is on."""
        if self.span is None:
            return
        self.span.set_attribute("cantata.tool.result_bytes", len(text.encode("utf-8", "replace")))
        if capture_content():
            self.span.set_attribute("gen_ai.tool.call.result", text)


_NO_TOOL_SPAN = ToolSpan(None)


@contextmanager
def tool_span(
    name: str,
    *,
    call_id: str | None = None,
    arguments: Mapping[str, Any] | str | None = None,
    tool_type: str = "function",
) -> Iterator[ToolSpan]:
    """One tool call (see the module's docstring); `tool_type` as the convention names
    them: "function" (runs here), "extension" (an MCP server, say), "datastore"."""
    active = tracer()
    if active is None:
        yield _NO_TOOL_SPAN
        return
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.type": tool_type,
    }
    if call_id is not None:
        attributes["gen_ai.tool.call.id"] = call_id
    if arguments is not None and capture_content():
        attributes["gen_ai.tool.call.arguments"] = arguments if isinstance(arguments, str) else json.dumps(arguments)
    with _span(active, f"execute_tool {name}", SpanKind.INTERNAL, attributes) as span:
        yield ToolSpan(span)


@contextmanager
def _span(
    tracer: Tracer, name: str, kind: SpanKind, attributes: dict[str, Any], context: Context | None = None
) -> Iterator[trace.Span]:
    """A span current in this task; an exception leaving it marks it failed, with its class
    as `error.type`, and is recorded without its message, which may hold text."""
    with tracer.start_as_current_span(
        name, context=context, kind=kind, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        try:
            yield span
        except BaseException as exc:
            span.set_attribute("error.type", type(exc).__qualname__)
            span.set_status(Status(StatusCode.ERROR, str(exc) if capture_content() else None))
            raise
