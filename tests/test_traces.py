"""Traces of turns (cantata/telemetry.py): one trace from the HTTP request through the turn
to each agent and model call, with token counts; no text unless the operator turns it on;
across a process hop by `traceparent`; free while off; and exported over OTLP by a real
`cantata serve` to a real receiver (marker `server`)."""

from __future__ import annotations

import cProfile
import json
import os
import pstats
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_types import TextContent
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from cantata import telemetry
from cantata.bundled import bundled
from cantata.config import load_config
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from cantata.turn import TurnResult
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.helpers.postgres import PostgresServer
from tests.helpers.server_app import chat_body, client, make_app, mcp_over, running
from tests.helpers.servers import CantataServer, LlamaServer
from tests.helpers.traces import SpanView, Trace, check_turn_tree, from_sdk, otlp_receiver
from tests.helpers.workers import WorkerProcess, pg_config

MESSAGE = "I keep skipping the gym on Mondays"


@pytest.fixture
def config(write: WriteFile) -> Path:
    return scripted_config(write, fast={"latency_s": 0.01, "tokens_per_s": 2000, "model": "scripted-8B"})


@pytest.fixture
def exported() -> Iterator[InMemorySpanExporter]:
    """Cantata's spans (and the server's request spans) into memory, for this test only."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.use(provider)
    try:
        yield exporter
    finally:
        telemetry.use(None)
        provider.shutdown()


def finished(exporter: InMemorySpanExporter) -> Trace:
    return Trace(from_sdk(span) for span in exporter.get_finished_spans())


async def chat(config: Path, home: Path, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A chat completion through the app, and its turn as the API reports it."""
    async with running(make_app(config, home)) as app, client(app) as c:
        r = await c.post("/v1/chat/completions", json=body)
        assert r.status_code == 200, r.text
        turn_id = int(r.headers["x-cantata-turn"])
        turn = (await c.get(f"/api/turns/{turn_id}")).json()
    return r.json() if not body["stream"] else {}, turn


@pytest.mark.parametrize("stream", [False, True])
async def test_a_turn_is_one_trace_from_the_request_to_each_model_call(
    config: Path, home: Path, exported: InMemorySpanExporter, stream: bool
) -> None:
    _, turn = await chat(config, home, chat_body(MESSAGE, stream=stream))
    request = finished(exported).one("POST /v1/chat/completions")
    spans = finished(exported).of(request.trace_id)  # not the API's answer to the turn's GET
    assert request.kind == "SERVER" and request.parent_id is None
    assert request.attributes["http.response.status_code"] == 200
    agents = {a["name"]: a for a in turn["agents"]}
    turn_span = check_turn_tree(spans, agents)
    assert request in spans.ancestors(turn_span)
    for span in (request, turn_span):  # the turn, its session and its user, on both
        assert span.attributes["cantata.turn.id"] == turn["turn_id"]
        assert span.attributes["gen_ai.conversation.id"] == turn["session"]
        assert span.attributes["user.id"] == turn["user"] == "local"
    assert turn_span.attributes["gen_ai.workflow.name"] == "example"
    assert turn_span.attributes["cantata.turn.status"] == turn["status"]
    assert turn_span.attributes["cantata.worker"].endswith(f":{os.getpid()}")  # the process that ran it
    call = spans.children(spans.one("invoke_agent answer"), "chat ")[0]
    assert call.name == "chat scripted-8B" and call.attributes["gen_ai.provider.name"] == "cantata.scripted"
    assert call.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    # No text by default: not the message, not a prompt, not a reply.
    texts = spans.texts()
    assert MESSAGE not in texts and turn["final"]["text"] not in texts
    assert not [key for s in spans.spans for key in s.attributes if key.endswith(".messages")]


async def test_text_only_when_the_operator_turns_it_on(
    config: Path, home: Path, exported: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(telemetry.CONTENT_SWITCH, "true")
    body, turn = await chat(config, home, chat_body(MESSAGE))
    spans = finished(exported)
    call = spans.children(spans.one("invoke_agent answer"), "chat ")[-1]
    assert MESSAGE in call.attributes["gen_ai.input.messages"]
    assert body["choices"][0]["message"]["content"] in call.attributes["gen_ai.output.messages"]


async def test_a_turn_run_elsewhere_goes_under_the_traceparent_it_was_given(
    config: Path, home: Path, exported: InMemorySpanExporter
) -> None:
    """The hop to a worker: the traceparent stored where the turn was asked for is the
    parent of the turn's span where it runs, whatever is current there."""
    tracer = telemetry.tracer()
    assert tracer is not None
    with tracer.start_as_current_span("enqueue") as enqueue:
        traceparent = telemetry.current_traceparent()
    assert traceparent is not None
    assert telemetry.current_traceparent() is None  # no span current here: nothing to carry
    runtime = Cantata(load_config(config), home=home)
    try:
        result = await runtime.run_turn(load_pipeline(bundled()["example"]), MESSAGE, traceparent=traceparent)
    finally:
        await runtime.close()
    spans = finished(exported)
    turn = spans.one("invoke_workflow ")
    assert turn.kind == "CONSUMER"
    assert turn.parent_id == f"{enqueue.get_span_context().span_id:016x}"
    assert turn.trace_id == f"{enqueue.get_span_context().trace_id:032x}"
    assert turn.attributes["cantata.turn.id"] == result.turn_id


async def flaky_turn(write: WriteFile, home: Path) -> TurnResult:
    """A turn of the example pipeline on an instance whose every call fails once (HTTP 500)."""
    config = scripted_config(write, flaky={"fail_first": 1, "faults": ["http_500"]})
    runtime = Cantata(load_config(config), home=home)
    try:
        return await runtime.run_turn(load_pipeline(bundled()["example"]), MESSAGE)
    finally:
        await runtime.close()


async def test_failed_calls_and_agents_are_marked_failed_without_their_text(
    write: WriteFile, home: Path, exported: InMemorySpanExporter
) -> None:
    """Every call's first attempt fails: `read` (one retry) succeeds on its second,
    `quick` and `answer` (none) fail, and so does the turn, whose final agent failed."""
    result = await flaky_turn(write, home)
    spans = finished(exported)
    statuses = {a.name: a.status for a in result.agents}
    assert statuses == {"screen": "ok", "quick": "failed", "read": "ok", "answer": "failed"}
    turn = spans.one("invoke_workflow ")
    assert turn.error and turn.attributes["cantata.turn.status"] == result.status == "failed"
    for name, status in statuses.items():
        agent = spans.one(f"invoke_agent {name}")
        assert agent.attributes["cantata.agent.status"] == status and agent.error == (status == "failed")
    first, second = spans.children(spans.one("invoke_agent read"), "chat ")
    assert first.error and first.attributes["error.type"] == "BackendHTTPError"
    assert "gen_ai.usage.input_tokens" not in first.attributes
    assert not second.error and second.attributes["gen_ai.usage.input_tokens"] > 0
    errors = [a.error for a in result.agents if a.error]
    assert errors and not any(error in spans.texts() for error in errors)


async def test_an_agents_error_is_its_spans_status_when_text_is_on(
    write: WriteFile, home: Path, exported: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(telemetry.CONTENT_SWITCH, "true")
    result = await flaky_turn(write, home)
    failed = next(a for a in result.agents if a.name == "answer")
    assert failed.error and finished(exported).one("invoke_agent answer").status_text == failed.error


async def test_a_tool_call_is_a_span_under_its_agent(exported: InMemorySpanExporter) -> None:
    tracer = telemetry.tracer()
    assert tracer is not None
    with telemetry.agent_span(tracer, "builder", model="code", iteration=0):
        with telemetry.tool_span("lookup", call_id="call-1", arguments={"city": "Oslo"}) as span:
            span.result("12 degrees")
        with pytest.raises(TimeoutError), telemetry.tool_span("slow"):
            raise TimeoutError("the tool took too long")
    spans = finished(exported)
    agent = spans.one("invoke_agent builder")
    lookup, slow = spans.one("execute_tool lookup"), spans.one("execute_tool slow")
    assert lookup.parent_id == slow.parent_id == agent.span_id
    assert lookup.attributes["gen_ai.tool.call.id"] == "call-1"
    assert lookup.attributes["cantata.tool.result_bytes"] == len("12 degrees")
    assert "gen_ai.tool.call.arguments" not in lookup.attributes  # text only when turned on
    assert slow.error and slow.attributes["error.type"] == "TimeoutError"
    assert "too long" not in spans.texts()


def _telemetry_calls(profile: cProfile.Profile) -> int:
    """Calls made into OpenTelemetry or cantata/telemetry.py."""
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    return sum(
        calls
        for (filename, _, _), (_, calls, *_) in stats.items()
        if "opentelemetry" in filename or filename.endswith("telemetry.py")
    )


async def test_tracing_off_makes_no_call_per_agent(write: WriteFile, home: Path) -> None:
    """While off, a turn asks once whether tracing is on, and its agents and model calls
    make no call at all for it: the per-node cost is what it was (counted, not timed)."""
    assert telemetry.tracer() is None
    config = load_config(scripted_config(write, fast={"latency_s": 0}))
    agents = [f"  - name: a{i}\n    model: m\n    prompt: x\n" for i in range(6)]
    one = load_pipeline(write("one.yaml", "name: one\nagents:\n" + agents[0]))
    six = load_pipeline(write("six.yaml", "name: six\nagents:\n" + "".join(agents)))
    counts = []
    runtime = Cantata(config, home=home)
    try:
        await runtime.run_turn(one, "warm up")
        for pipeline in (one, six):
            profile = cProfile.Profile()
            profile.enable()
            await runtime.run_turn(pipeline, "hello")
            profile.disable()
            counts.append(_telemetry_calls(profile))
    finally:
        await runtime.close()
    assert counts[0] == counts[1] > 0  # the one question per turn, whatever its size


def test_without_the_sdk_a_turn_runs_and_one_line_says_why_nothing_is_exported(config: Path, tmp_path: Path) -> None:
    blocked = "import sys; sys.modules['opentelemetry.sdk'] = None; from cantata.cli import main; main()"
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}
    done = subprocess.run(
        [sys.executable, "-c", blocked, "run", "example", "-m", MESSAGE, "--config", str(config), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "OTEL_EXPORTER_OTLP_ENDPOINT" in line]
    assert warnings == [
        "warning: OTEL_EXPORTER_OTLP_ENDPOINT is set, but the OpenTelemetry SDK is not installed: "
        "pip install 'cantata[otel]'; traces are not exported"
    ]
    assert '"status": "ok"' in done.stdout


@pytest.mark.server
def test_cantata_serve_exports_the_turn_over_otlp(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real `cantata serve` sends its spans over OTLP/HTTP to a real receiver on loopback,
    under the trace context the client sent."""
    client_trace, client_span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    with otlp_receiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
        monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "100")  # ms: spans arrive while the server runs
        monkeypatch.setenv("OTEL_SERVICE_NAME", "cantata-under-test")
        with CantataServer(tmp_path, "--config", str(config)) as server:
            r = httpx.post(
                f"{server.url}/v1/chat/completions",
                json=chat_body(MESSAGE),
                headers={"traceparent": f"00-{client_trace}-{client_span}-01"},
                timeout=60,
            )
            assert r.status_code == 200, r.text
            turn = httpx.get(f"{server.url}/api/turns/{r.headers['x-cantata-turn']}", timeout=10).json()
            expected = 1 + 1 + len(turn["agents"]) + sum(a["attempts"] for a in turn["agents"] if a["instance"])

            def whole(spans: list[SpanView]) -> bool:
                return len([s for s in spans if s.trace_id == client_trace]) >= expected

            spans = Trace(receiver.wait_for(whole)).of(client_trace)
    request = spans.one("POST /v1/chat/completions")
    assert request.parent_id == client_span and request.kind == "SERVER"
    turn_span = check_turn_tree(spans, {a["name"]: a for a in turn["agents"]})
    assert request in spans.ancestors(turn_span)
    assert turn_span.resource["service.name"] == "cantata-under-test"
    assert turn_span.attributes["cantata.worker"].endswith(f":{turn_span.resource['process.pid']}")
    assert MESSAGE not in spans.texts()


@pytest.mark.server
async def test_a_call_to_a_model_server_is_a_client_span_naming_the_server(
    write: WriteFile, home: Path, tmp_path: Path, exported: InMemorySpanExporter
) -> None:
    """Against llama-cpp-python's OpenAI-compatible server on loopback."""
    pipeline = load_pipeline(
        write("p.yaml", "name: hello\nagents:\n  - name: talk\n    prompt: Say hello.\n    max_tokens: 8\n")
    )
    with LlamaServer(tmp_path) as server:
        instances = (
            f"instances:\n  - name: remote\n    backend: openai\n    dialect: llama-cpp-python\n    url: {server.url}\n"
        )
        runtime = Cantata(load_config(write("instances.yaml", instances)), home=home)
        try:
            result = await runtime.run_turn(pipeline, MESSAGE)
        finally:
            await runtime.close()
    (call,) = finished(exported).named("chat ")
    assert call.kind == "CLIENT" and call.attributes["gen_ai.provider.name"] == "openai"
    assert (call.attributes["server.address"], call.attributes["server.port"]) == ("127.0.0.1", server.port)
    assert call.name == f"chat {call.attributes['gen_ai.request.model']}"
    talk = result.agents[0]
    assert call.attributes["gen_ai.usage.input_tokens"] == talk.prompt_tokens > 0
    assert call.attributes["gen_ai.usage.output_tokens"] == talk.completion_tokens > 0


async def test_a_tool_loop_traces_each_call_under_its_agent_between_its_model_calls(
    write: WriteFile, home: Path, exported: InMemorySpanExporter
) -> None:
    write("acts.py", 'def add(a: int, b: int) -> int:\n    """Add."""\n    return a + b\n')
    pipeline = load_pipeline(
        write(
            "tooled.yaml",
            "name: tooled\nagents:\n  - name: calc\n    prompt: Add.\n    tools: [{function: acts.add}]\n",
        )
    )
    steps = [{"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}, {"name": "nope", "arguments": {}}]}]
    replies = write("replies.yaml", "calc: " + json.dumps([*steps, {"final": "5"}]) + "\n")
    runtime = Cantata(load_config(scripted_config(write, fast={"replies": str(replies)})), home=home)
    try:
        result = await runtime.run_turn(pipeline, "2 + 3?")
    finally:
        await runtime.close()
    assert result.status == "ok"
    spans = finished(exported)
    agent = spans.one("invoke_agent calc")
    assert [s.name for s in spans.children(agent)].count("execute_tool add") == 1
    assert len(spans.children(agent, "chat ")) == 2
    add = spans.one("execute_tool add")
    assert add.attributes["gen_ai.tool.call.id"] == "call_1_0" and add.attributes["cantata.tool.result_bytes"] == 1
    assert spans.named("execute_tool nope") == []  # a tool the agent does not have is never called


def mcp_sdk_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    """The MCP SDK's own spans (of each MCP request) into the test's exporter too: the SDK
    takes OpenTelemetry's global provider, which a test cannot set more than once."""
    provider = telemetry.provider()
    assert provider is not None
    monkeypatch.setattr("mcp.shared._otel._tracer", provider.get_tracer("mcp-python-sdk"))


async def test_an_mcp_call_that_fails_unexpectedly_leaves_no_text_in_its_spans(
    config: Path, home: Path, exported: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception that is no CantataError leaving the tool (here, one from the service that
    quotes the message) becomes a one-line error result, not the SDK's span event and status
    with its text."""

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"something broke while reading {MESSAGE!r}")

    mcp_sdk_spans(monkeypatch)
    async with running(make_app(config, home)) as app, mcp_over(app) as mcp:
        monkeypatch.setattr(app.state.service, "start_turn", broken)
        result = await mcp.call_tool("example", {"message": MESSAGE})
    assert result.is_error
    said = "".join(block.text for block in result.content if isinstance(block, TextContent))
    assert said == "the turn could not run: an internal error (RuntimeError); the server's log has more"
    spans = finished(exported)
    assert spans.named("tools/call example") and MESSAGE not in spans.texts()


async def test_a_turn_started_through_mcp_is_under_the_http_request(
    config: Path, home: Path, exported: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One trace from POST /mcp to the turn and its agents, not the turn under the SDK's
    tools/call span alone (whose parent is the MCP client's, in another trace)."""
    mcp_sdk_spans(monkeypatch)
    async with running(make_app(config, home)) as app, mcp_over(app) as mcp:
        result = await mcp.call_tool("example", {"message": MESSAGE})
    assert not result.is_error and result.structured_content is not None
    spans = finished(exported)
    turn = spans.one("invoke_workflow ")
    request = next(s for s in spans.named("POST /mcp") if s.trace_id == turn.trace_id)
    assert request.kind == "SERVER" and request in spans.ancestors(turn)
    assert request.attributes["cantata.turn.id"] == turn.attributes["cantata.turn.id"]
    assert request.attributes["cantata.turn.id"] == result.structured_content["turn_id"]
    assert MESSAGE not in spans.texts()


@pytest.mark.server
def test_a_turn_run_by_a_worker_is_one_trace_across_the_two_processes(
    write: WriteFile, tmp_path: Path, postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cantata serve --workers queue` and `cantata worker`, real processes on one PostgreSQL,
    each exporting over OTLP/HTTP: the server's request span and, under it by the
    `traceparent` queued with the turn, the worker's turn span, its agents and model calls.
    Nothing is exported while they run (a batch delay of ten minutes): what arrives was sent
    as each process stopped, so a worker stopping with spans still queued loses none."""
    config = pg_config(write, postgres.new_database(), latency_s=0.01, tokens_per_s=2000, model="scripted-8B")
    with otlp_receiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
        monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "600000")  # ms
        with (
            WorkerProcess(tmp_path / "worker", config, concurrency=2) as worker,
            CantataServer(tmp_path, "--workers", "queue", "--config", str(config)) as server,
        ):
            r = httpx.post(f"{server.url}/v1/chat/completions", json=chat_body(MESSAGE), timeout=60)
            assert r.status_code == 200, r.text
            turn = httpx.get(f"{server.url}/api/turns/{r.headers['x-cantata-turn']}", timeout=10).json()
            assert turn["status"] == "ok", turn
            pids = {"serve": server.process and server.process.pid, "worker": worker.process and worker.process.pid}
            assert receiver.spans() == []  # none sent yet: each process sends its spans as it stops
        request = next(s for s in receiver.spans() if s.name == "POST /v1/chat/completions")
        spans = Trace(receiver.spans()).of(request.trace_id)
    assert request.kind == "SERVER" and request.resource["process.pid"] == pids["serve"]
    turn_span = check_turn_tree(spans, {a["name"]: a for a in turn["agents"]})
    assert turn_span.kind == "CONSUMER" and turn_span.parent_id == request.span_id
    assert turn_span.resource["process.pid"] == pids["worker"] != pids["serve"]
    assert turn_span.attributes["cantata.worker"].endswith(f":{pids['worker']}")
    assert turn_span.attributes["cantata.turn.id"] == request.attributes["cantata.turn.id"] == turn["turn_id"]
    # Every span of the turn below the request is the worker's.
    assert {s.resource["process.pid"] for s in spans.spans if s is not request} == {pids["worker"]}
    assert MESSAGE not in spans.texts()
