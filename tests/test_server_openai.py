"""/v1: each pipeline as an OpenAI model, in process (httpx ASGITransport), on scripted instances."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from cantata.server.streaming import SEPARATOR
from tests.helpers.pipelines import RULED, WriteFile, ruled_config, scripted_config
from tests.helpers.server_app import chat_body, client, make_app, running
from tests.helpers.sse import parse


@pytest.fixture
def config(write: WriteFile) -> Path:
    # A model's size in its name: coaching's coach then writes its early reply (a model
    # too small to write one that passes, like the embedded one, has it composed at once).
    return scripted_config(write, fast={"latency_s": 0.02, "tokens_per_s": 400, "model": "scripted-8B"})


async def test_models_are_the_pipelines(config: Path, home: Path) -> None:
    async with running(make_app(config, home)) as app, client(app) as c:
        r = await c.get("/v1/models")
    assert r.status_code == 200
    ids = [m["id"] for m in r.json()["data"]]
    assert "coaching" in ids and "example" in ids
    assert all(m["object"] == "model" for m in r.json()["data"])


async def test_chat_returns_the_merged_reply_and_the_turn(config: Path, home: Path) -> None:
    async with running(make_app(config, home)) as app, client(app) as c:
        r = await c.post("/v1/chat/completions", json=chat_body("I skip the gym"))
        assert r.status_code == 200, r.text
        body = r.json()
        turn = (await c.get(f"/api/turns/{body['cantata']['turn_id']}")).json()
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"]["content"] == turn["final"]["text"]
    assert body["cantata"]["early"] == turn["early"]["text"]
    assert body["cantata"]["session"] == r.headers["x-cantata-session"] == turn["session"]
    assert {a["name"] for a in body["cantata"]["agents"]} == {"screen", "quick", "read", "answer"}
    assert all(a["status"] == "ok" for a in body["cantata"]["agents"])
    assert body["usage"]["completion_tokens"] == sum(a["completion_tokens"] for a in turn["agents"]) > 0
    assert body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]


@pytest.mark.parametrize("model", ["example", "coaching"])
async def test_stream_is_valid_chunks_early_then_separator_then_merged(config: Path, home: Path, model: str) -> None:
    async with running(make_app(config, home)) as app, client(app) as c:
        r = await c.post("/v1/chat/completions", json=chat_body("I skip the gym", model=model, stream=True))
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = [e for e in parse(r.text) if e.data]
        assert events[-1].data == "[DONE]"
        chunks = [e.json() for e in events[:-1]]
        turn = (await c.get(f"/api/turns/{chunks[-1]['cantata']['turn_id']}")).json()
    assert all(ch["object"] == "chat.completion.chunk" and len(ch["choices"]) == 1 for ch in chunks)
    text = "".join(ch["choices"][0]["delta"].get("content") or "" for ch in chunks)
    early, final = turn["early"]["text"], turn["final"]["text"]
    if model == "example":  # a plain-text early reply streams exactly as delivered
        assert text == early + SEPARATOR + final
        assert _phase(chunks, "early") == early
    else:  # coaching's scripted draft is refused by its check: the kept reply follows it
        assert text.endswith(early + SEPARATOR + final)
        assert _phase(chunks, "early").endswith(early)
    assert _phase(chunks, "separator") == SEPARATOR and _phase(chunks, "merged") == final
    assert chunks[-1]["cantata"]["early"] == early and chunks[-1]["cantata"]["merged"] == final
    # The early reply arrives in several pieces, as generated, before any agent but it finished.
    pieces = [i for i, ch in enumerate(chunks) if ch["choices"][0]["delta"].get("content")]
    assert len(pieces) > 3
    progress = [ch for ch in chunks if "cantata" in ch and ch["choices"][0]["delta"] == {}]
    finished = [p["cantata"]["agent"] for p in progress if p["cantata"].get("event") == "agent_finished"]
    assert set(finished) == {a["name"] for a in turn["agents"]}
    assert progress[-1]["cantata"]["status"] == "ok"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop" and chunks[-1]["usage"]["completion_tokens"] > 0
    assert r.headers["x-cantata-session"] == turn["session"]


def _phase(chunks: list[dict[str, Any]], phase: str) -> str:
    """The text of one phase of a streamed reply, as a client that shows them apart reads it."""
    return "".join(
        ch["choices"][0]["delta"]["content"]
        for ch in chunks
        if ch["choices"][0]["delta"].get("content") and ch["cantata"]["phase"] == phase
    )


async def test_a_merged_reply_with_a_rule_line_arrives_whole_in_its_phase(write: WriteFile, home: Path) -> None:
    config = ruled_config(write, latency_s=0.01, tokens_per_s=400)
    async with running(make_app(config, home)) as app, client(app) as c:
        streamed = await c.post("/v1/chat/completions", json=chat_body("hi", stream=True))
        plain = (await c.post("/v1/chat/completions", json=chat_body("hi again"))).json()
    chunks = [e.json() for e in parse(streamed.text) if e.data and e.data != "[DONE]"]
    assert _phase(chunks, "merged") == RULED
    text = "".join(ch["choices"][0]["delta"].get("content") or "" for ch in chunks)
    assert text == _phase(chunks, "early") + SEPARATOR + RULED
    assert plain["choices"][0]["message"]["content"] == plain["cantata"]["merged"] == RULED
    assert plain["cantata"]["early"]


async def test_every_route_declares_its_body_in_openapi(config: Path, home: Path) -> None:
    async with running(make_app(config, home)) as app, client(app) as c:
        schema = (await c.get("/openapi.json")).json()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            content = operation["responses"]["200"]["content"]
            body = content.get("application/json", {}).get("schema")
            if body is None:  # a stream or Prometheus text
                assert set(content) <= {"text/event-stream", "text/plain"}, (method, path)
                continue
            assert "$ref" in body or body.get("type") == "array", (method, path, body)
    chunk = schema["paths"]["/v1/chat/completions"]["post"]["responses"]["200"]["content"]["text/event-stream"]
    assert chunk["schema"]["$ref"].endswith("/ChatCompletionChunk")
    assert "TextInfo" in schema["components"]["schemas"] and "Task" in schema["components"]["schemas"]


async def test_resent_history_continues_the_session(config: Path, home: Path) -> None:
    async with running(make_app(config, home)) as app, client(app) as c:
        first = (await c.post("/v1/chat/completions", json=chat_body("I skip the gym"))).json()
        said = first["choices"][0]["message"]["content"]
        second = (
            await c.post("/v1/chat/completions", json=chat_body("and now?", history=[("I skip the gym", said)]))
        ).json()
        other = (
            await c.post("/v1/chat/completions", json=chat_body("and now?", history=[("something else", said)]))
        ).json()
    assert second["cantata"]["session"] == first["cantata"]["session"] and second["cantata"]["turn"] == 2
    assert other["cantata"]["session"] != first["cantata"]["session"] and other["cantata"]["turn"] == 1


async def test_history_matches_from_the_store_after_a_restart(config: Path, home: Path) -> None:
    async with running(make_app(config, home)) as app, client(app) as c:
        first = (await c.post("/v1/chat/completions", json=chat_body("I skip the gym", stream=False))).json()
    said = first["cantata"]["early"] + SEPARATOR + first["choices"][0]["message"]["content"]  # as a stream shows it
    async with running(make_app(config, home)) as app, client(app) as c:
        second = (
            await c.post("/v1/chat/completions", json=chat_body("and now?", history=[("I skip the gym", said)]))
        ).json()
    assert second["cantata"]["session"] == first["cantata"]["session"] and second["cantata"]["turn"] == 2


async def test_second_message_waits_for_the_running_turn_or_is_refused(write: WriteFile, home: Path) -> None:
    config = scripted_config(write, slow={"latency_s": 0.3})
    async with running(make_app(config, home)) as app, client(app) as c:
        first = (await c.post("/v1/chat/completions", json=chat_body("one"))).json()
        session = first["cantata"]["session"]
        headers = {"X-Cantata-Session": session}
        second = asyncio.create_task(c.post("/v1/chat/completions", json=chat_body("two"), headers=headers))
        while not app.state.service.locks.busy(session):
            await asyncio.sleep(0.01)
        refused = await c.post(
            "/v1/chat/completions", json=chat_body("three"), headers=headers | {"X-Cantata-Busy": "reject"}
        )
        waited = await c.post("/v1/chat/completions", json=chat_body("four"), headers=headers)
        second_body = (await second).json()
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "session_busy"
    assert second_body["cantata"]["turn"] == 2 and waited.json()["cantata"]["turn"] == 3
    turns = second_body["cantata"]["agents"]
    assert max(a["finished_s"] for a in turns) > 0


async def test_a_session_of_another_pipeline_is_refused_with_409(config: Path, home: Path) -> None:
    async with running(make_app(config, home)) as app, client(app) as c:
        first = await c.post("/v1/chat/completions", json=chat_body("hi"))
        session = first.headers["x-cantata-session"]
        headers = {"X-Cantata-Session": session}
        for stream in (False, True):
            refused = await c.post(
                "/v1/chat/completions", json=chat_body("more", model="coaching", stream=stream), headers=headers
            )
            assert refused.status_code == 409, refused.text
            error = refused.json()["error"]
            assert error == {
                "message": f"session {session} belongs to pipeline 'example', not 'coaching'"
                "; continue it with 'example' or start a new session",
                "type": "conflict_error",
                "code": "SessionConflict",
            }
        stored = (await c.get(f"/api/sessions/{session}")).json()
    assert len(stored["turn_list"]) == 1  # nothing was stored for the refused turns


async def test_bad_requests_get_openai_errors(config: Path, home: Path) -> None:
    async with running(make_app(config, home, max_body=10_000)) as app, client(app) as c:
        unknown = await c.post("/v1/chat/completions", json=chat_body("hi", model="nope"))
        no_user = await c.post(
            "/v1/chat/completions", json={"model": "example", "messages": [{"role": "system", "content": "x"}]}
        )
        invalid = await c.post("/v1/chat/completions", json={"model": "example", "messages": "hi"})
        empty = await c.post("/v1/chat/completions", json=chat_body("   "))
        big = await c.post("/v1/chat/completions", json=chat_body("x" * 20_000))
        session = await c.post("/v1/chat/completions", json=chat_body("hi"), headers={"X-Cantata-Session": "nope"})
        missing = await c.get("/api/turns/999")
    for r, status in (
        (unknown, 404),
        (no_user, 400),
        (invalid, 422),
        (empty, 400),
        (big, 413),
        (session, 404),
        (missing, 404),
    ):
        assert r.status_code == status, r.text
        error = r.json()["error"]
        assert set(error) == {"message", "type", "code"} and error["message"] and "Traceback" not in r.text
    assert "coaching" in unknown.json()["error"]["message"] and "example" in unknown.json()["error"]["message"]
    assert unknown.json()["error"]["code"] == "model_not_found"


async def test_long_silences_get_heartbeats_and_status_events_are_opt_in(
    write: WriteFile, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cantata.server.streaming.HEARTBEAT_S", 0.05)
    config = scripted_config(write, slow={"latency_s": 0.3})
    async with running(make_app(config, home)) as app, client(app) as c:
        plain = await c.post("/v1/chat/completions", json=chat_body("hi", stream=True))
        webui = await c.post(
            "/v1/chat/completions", json=chat_body("hi", stream=True), headers={"X-Cantata-Status-Events": "1"}
        )
    beats = [e for e in parse(plain.text) if e.comments and not e.data]
    assert beats, "no heartbeat during a 0.3 s silence with a 0.05 s heartbeat"
    chunks = [e.json() for e in parse(plain.text) if e.data and e.data != "[DONE]"]
    assert not any("event" in ch for ch in chunks)  # off by default
    status = [e.json()["event"] for e in parse(webui.text) if e.data and e.data != "[DONE]" and "event" in e.json()]
    assert status and all(s["type"] == "status" for s in status) and status[-1]["data"]["done"] is True


async def test_a_chunked_body_over_the_limit_is_413(config: Path, home: Path) -> None:
    async def chunks():  # type: ignore[no-untyped-def]
        for _ in range(20):
            yield b" " * 1000

    async with running(make_app(config, home, max_body=10_000)) as app, client(app) as c:
        r = await c.post("/v1/chat/completions", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and r.json()["error"]["code"] == "body_too_large"
