"""Traces for tests: spans from the SDK's in-memory exporter or decoded from OTLP, in one
shape, and a tree to walk; and a real OTLP/HTTP receiver on loopback.

The receiver is a stdlib HTTP server that accepts what the SDK's OTLP/HTTP exporter sends
(POST /v1/traces, an `ExportTraceServiceRequest` in protobuf, gzip or not) and decodes it
with opentelemetry-proto, the exporter's own wire format: no collector binary is needed.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan
from opentelemetry.sdk.trace import ReadableSpan

from tests.helpers.servers import http_handler_server


@dataclass(frozen=True)
class SpanView:
    name: str
    kind: str  # "SERVER", "INTERNAL", "CLIENT", "CONSUMER", ...
    trace_id: str  # hex
    span_id: str
    parent_id: str | None
    attributes: dict[str, Any]
    error: bool
    status_text: str  # the status's description, empty if none
    resource: dict[str, Any]
    events: tuple[str, ...] = ()  # each event's name and attributes (an exception's message, say)


def from_sdk(span: ReadableSpan) -> SpanView:
    context = span.get_span_context()
    assert context is not None
    return SpanView(
        name=span.name,
        kind=span.kind.name,
        trace_id=f"{context.trace_id:032x}",
        span_id=f"{context.span_id:016x}",
        parent_id=f"{span.parent.span_id:016x}" if span.parent is not None else None,
        attributes=dict(span.attributes or {}),
        error=span.status.status_code.name == "ERROR",
        status_text=span.status.description or "",
        resource=dict(span.resource.attributes),
        events=tuple(f"{e.name} {dict(e.attributes or {})}" for e in span.events),
    )


def _value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    if which == "array_value":
        return tuple(_value(v) for v in value.array_value.values)
    return getattr(value, which) if which else None


def from_proto(request: ExportTraceServiceRequest) -> list[SpanView]:
    views = []
    for resource_spans in request.resource_spans:
        resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                views.append(
                    SpanView(
                        name=span.name,
                        kind=ProtoSpan.SpanKind.Name(span.kind).removeprefix("SPAN_KIND_"),
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_id=span.parent_span_id.hex() or None,
                        attributes={a.key: _value(a.value) for a in span.attributes},
                        error=span.status.code == span.status.STATUS_CODE_ERROR,
                        status_text=span.status.message,
                        resource=resource,
                        events=tuple(
                            f"{e.name} { {a.key: _value(a.value) for a in e.attributes} }" for e in span.events
                        ),
                    )
                )
    return views


class Trace:
    """Spans by name and by parent, for walking a turn's tree."""

    def __init__(self, spans: Iterable[SpanView]) -> None:
        self.spans = list(spans)
        self.by_id = {s.span_id: s for s in self.spans}

    def of(self, trace_id: str) -> Trace:
        """The spans of one trace."""
        return Trace(s for s in self.spans if s.trace_id == trace_id)

    def named(self, prefix: str) -> list[SpanView]:
        return [s for s in self.spans if s.name.startswith(prefix)]

    def one(self, prefix: str) -> SpanView:
        found = self.named(prefix)
        assert len(found) == 1, f"{len(found)} spans named {prefix!r}: {[s.name for s in self.spans]}"
        return found[0]

    def children(self, parent: SpanView, prefix: str = "") -> list[SpanView]:
        return [s for s in self.spans if s.parent_id == parent.span_id and s.name.startswith(prefix)]

    def ancestors(self, span: SpanView) -> list[SpanView]:
        chain = []
        while span.parent_id is not None and span.parent_id in self.by_id:
            span = self.by_id[span.parent_id]
            chain.append(span)
        return chain

    def texts(self) -> str:
        """Everything recorded on the spans, to look for text that must not be there."""
        return "\n".join(str(v) for s in self.spans for v in [*s.attributes.values(), s.status_text, *s.events])


def check_turn_tree(trace: Trace, agents: dict[str, dict[str, Any]]) -> SpanView:
    """The turn's span and, under it, one span per agent that ran and, under each model
    agent's, its model calls with their token counts, which add up to what the turn
    reported for the agent (`agents`: the turn's agents as the API returns them)."""
    turn = trace.one("invoke_workflow ")
    agent_spans = {s.attributes["gen_ai.agent.name"]: s for s in trace.children(turn, "invoke_agent ")}
    assert set(agent_spans) == set(agents)
    for name, reported in agents.items():
        span = agent_spans[name]
        assert span.attributes["cantata.agent.status"] == reported["status"] == "ok"
        calls = trace.children(span, "chat ")
        if reported["instance"] is None:  # a function: no model call
            assert calls == []
            continue
        assert calls, f"no model call under {name}"
        for call in calls:
            assert call.attributes["gen_ai.operation.name"] == "chat"
            assert call.attributes["gen_ai.request.model"] and call.attributes["gen_ai.provider.name"]
            assert (
                call.attributes["gen_ai.usage.input_tokens"] > 0 and call.attributes["gen_ai.usage.output_tokens"] > 0
            )
        for key, field in (
            ("gen_ai.usage.input_tokens", "prompt_tokens"),
            ("gen_ai.usage.output_tokens", "completion_tokens"),
            ("gen_ai.usage.cache_read.input_tokens", "cached_tokens"),
        ):
            assert sum(c.attributes[key] for c in calls) == reported[field] == span.attributes[key]
    return turn


class Receiver:
    """The spans an OTLP/HTTP exporter sent, as they arrive."""

    def __init__(self) -> None:
        self.url = ""
        self._spans: list[SpanView] = []
        self._lock = threading.Lock()

    def add(self, spans: list[SpanView]) -> None:
        with self._lock:
            self._spans.extend(spans)

    def spans(self) -> list[SpanView]:
        with self._lock:
            return list(self._spans)

    def wait_for(self, ready: Callable[[list[SpanView]], bool], timeout_s: float = 30.0) -> list[SpanView]:
        deadline = time.monotonic() + timeout_s
        while not ready(spans := self.spans()):
            assert time.monotonic() < deadline, f"not there after {timeout_s:g} s: {[s.name for s in spans]}"
            time.sleep(0.1)
        return spans


@contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    """A real OTLP/HTTP receiver on a free loopback port; its `url` is the exporter's endpoint."""
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
                self.send_error(404 if self.path != "/v1/traces" else 415)
                return
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            receiver.add(from_proto(request))
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with http_handler_server(Handler) as url:
        receiver.url = url
        yield receiver
