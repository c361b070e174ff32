"""The official `openai` client against a real `cantata serve` on loopback (scripted instances)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from cantata.server.streaming import SEPARATOR
from tests.helpers.pipelines import RULED, WriteFile, ruled_config, scripted_config
from tests.helpers.servers import CantataServer
from tests.helpers.sse import parse

pytestmark = pytest.mark.server


@pytest.fixture
def server(write: WriteFile, tmp_path: Path) -> Iterator[CantataServer]:
    config = scripted_config(write, steady={"latency_s": 0.2, "tokens_per_s": 100})
    with CantataServer(tmp_path, "--config", str(config)) as running:
        yield running


@pytest.fixture
def ruled(write: WriteFile, tmp_path: Path) -> Iterator[CantataServer]:
    """A server whose final agents all reply RULED."""
    config = ruled_config(write, latency_s=0.05, tokens_per_s=200)
    with CantataServer(tmp_path, "--config", str(config)) as running:
        yield running


def _client(server: CantataServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused-on-loopback", max_retries=0)


def _turn(server: CantataServer, turn_id: int) -> dict[str, object]:
    body: dict[str, object] = httpx.get(f"{server.url}/api/turns/{turn_id}", timeout=10).json()
    return body


def test_openai_client_chats_streaming_and_not_and_continues_from_history(server: CantataServer) -> None:
    client = _client(server)
    raw = client.chat.completions.with_raw_response.create(
        model="example", messages=[{"role": "user", "content": "I keep scrolling at night."}]
    )
    first = raw.parse()
    info = first.model_extra["cantata"]  # type: ignore[index]
    assert raw.headers["x-cantata-session"] == info["session"]
    said = first.choices[0].message.content or ""
    assert said == _turn(server, info["turn_id"])["final"]["text"]  # type: ignore[index]

    history = [
        {"role": "user", "content": "I keep scrolling at night."},
        {"role": "assistant", "content": said},
        {"role": "user", "content": "What could I try?"},
    ]
    pieces: list[str] = []
    first_content_at, last = None, None
    for chunk in client.chat.completions.create(model="example", messages=history, stream=True):  # type: ignore[arg-type]
        assert chunk.choices and chunk.object == "chat.completion.chunk"
        delta = chunk.choices[0].delta.content
        if delta:
            pieces.append(delta)
            first_content_at = first_content_at or time.monotonic()
        last = chunk
    assert last is not None
    ending = last.model_extra["cantata"]  # type: ignore[index]
    assert ending["session"] == info["session"] and ending["turn"] == 2  # the same chat, no header
    turn = _turn(server, ending["turn_id"])
    text = "".join(pieces)
    assert text == turn["early"]["text"] + SEPARATOR + turn["final"]["text"]  # type: ignore[index]
    assert text.index(turn["early"]["text"]) < text.index(SEPARATOR)  # type: ignore[index]


def test_a_client_that_leaves_mid_stream_leaves_a_finished_stored_turn(server: CantataServer) -> None:
    body = {"model": "example", "stream": True, "messages": [{"role": "user", "content": "hello"}]}
    with httpx.stream("POST", f"{server.url}/v1/chat/completions", json=body, timeout=30) as response:
        turn_id = int(response.headers["x-cantata-turn"])
        for line in response.iter_lines():
            if '"content":"' in line and '"content":""' not in line:
                break  # the early reply has started: go away
    deadline = time.monotonic() + 30
    while (turn := _turn(server, turn_id))["status"] == "running":
        assert time.monotonic() < deadline, "the turn never finished"
        time.sleep(0.1)
    assert turn["status"] == "ok" and turn["final"] is not None
    assert all(a["status"] == "ok" for a in turn["agents"])  # type: ignore[union-attr, index]


def test_last_event_id_replays_exactly_the_missed_events(server: CantataServer) -> None:
    seen: list[str] = []
    with httpx.stream("GET", f"{server.url}/api/events", timeout=30) as events:
        lines = events.iter_lines()
        with httpx.Client(timeout=30) as other:
            chat = {"model": "example", "messages": [{"role": "user", "content": "hi"}]}
            turn_id = other.post(f"{server.url}/v1/chat/completions", json=chat).json()["cantata"]["turn_id"]
        for line in lines:
            if line.startswith("id: "):
                seen.append(line.removeprefix("id: "))
            if len(seen) == 3:
                break  # disconnect, missing the rest of the turn
    full = [e for e in parse(httpx.get(f"{server.url}/api/turns/{turn_id}/events", timeout=30).text) if e.id]
    assert [e.id for e in full[:3]] == seen
    replay: list[str] = []
    with httpx.stream("GET", f"{server.url}/api/events", headers={"Last-Event-ID": seen[-1]}, timeout=30) as events:
        for line in events.iter_lines():
            if line.startswith("id: "):
                replay.append(line.removeprefix("id: "))
            if line == "event: turn_delivered":
                break
    assert replay == [e.id for e in full[3:]]
    assert full[-1].event == "turn_delivered"


def test_a_merged_reply_with_a_rule_line_reaches_the_openai_client_whole(ruled: CantataServer) -> None:
    client = _client(ruled)
    pieces: dict[str, list[str]] = {"early": [], "separator": [], "merged": []}
    text = ""
    for chunk in client.chat.completions.create(
        model="example", messages=[{"role": "user", "content": "Say it in two parts."}], stream=True
    ):
        delta = chunk.choices[0].delta.content
        if delta:
            text += delta
            pieces[(chunk.model_extra or {})["cantata"]["phase"]].append(delta)
    early, merged = "".join(pieces["early"]), "".join(pieces["merged"])
    assert merged == RULED and early and "---" not in early
    assert text == early + SEPARATOR + RULED  # a plain client: one text, a blank line between
    reply = client.chat.completions.create(model="example", messages=[{"role": "user", "content": "Once more."}])
    assert reply.choices[0].message.content == RULED
    assert (reply.model_extra or {})["cantata"]["merged"] == RULED
