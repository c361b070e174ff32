"""The server's log: a line per request and a line per failed agent, as text or JSON lines;
never the person's message, never a configured secret."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import httpx
import pytest

from cantata.errors import register_secret
from cantata.server.logs import JsonLines, TextLines
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.helpers.server_app import chat_body, client, make_app, running
from tests.helpers.servers import CantataServer

MESSAGE = "my private words about the gym"
SECRET = "sk-planted-4a7c19e0"


async def test_each_request_and_each_failed_agent_is_one_line_without_message_or_secret(
    write: WriteFile, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    register_secret(SECRET)  # as the config loader registers an instance's api_key
    config = scripted_config(write, broken={"fail_rate": 1.0})
    caplog.set_level(logging.INFO, logger="cantata")
    async with running(make_app(config, home)) as app, client(app) as c:
        reply = await c.post("/v1/chat/completions", json=chat_body(MESSAGE))
        turn = (await c.get(f"/api/turns/{reply.json()['cantata']['turn_id']}")).json()
        missing = await c.get(f"/api/pipelines/{SECRET}")
    assert reply.status_code == 200 and missing.status_code == 404
    access = [r for r in caplog.records if r.name == "cantata.server.access"]
    assert [(r.fields["method"], r.fields["path"], r.fields["status"]) for r in access] == [  # type: ignore[attr-defined]
        ("POST", "/v1/chat/completions", 200),
        ("GET", f"/api/turns/{turn['turn_id']}", 200),
        ("GET", f"/api/pipelines/{SECRET}", 404),
    ]
    failed = sorted(a["name"] for a in turn["agents"] if a["status"] == "failed")
    agents = [r for r in caplog.records if r.name == "cantata.server.agents"]
    assert failed and sorted(r.fields["agent"] for r in agents) == failed  # type: ignore[attr-defined]
    assert all(r.levelno == logging.WARNING and "scripted failure" in r.fields["error"] for r in agents)  # type: ignore[attr-defined]
    for record in access + agents:
        for line in (JsonLines().format(record), TextLines().format(record)):
            assert MESSAGE not in line and SECRET not in line and "\n" not in line
    shown = json.loads(JsonLines().format(access[-1]))
    assert shown["path"] == "/api/pipelines/***" and shown["status"] == 404 and shown["level"] == "info"
    assert {"time", "logger", "message", "method", "bytes", "ms", "client"} <= set(shown)
    assert json.loads(JsonLines().format(agents[0]))["turn_id"] == turn["turn_id"]


def test_a_traceback_stays_on_its_json_line_and_loses_its_secret() -> None:
    register_secret(SECRET)
    try:
        raise ValueError(f"boom with {SECRET}")
    except ValueError:
        record = logging.LogRecord("cantata.server", logging.ERROR, __file__, 1, "failed", None, sys.exc_info())
    line = JsonLines().format(record)
    assert "\n" not in line and SECRET not in line
    assert "ValueError" in json.loads(line)["exception"]


@pytest.mark.server
def test_serve_with_json_logs_writes_one_object_per_line_on_stderr(write: WriteFile, tmp_path: Path) -> None:
    config = scripted_config(write, broken={"fail_rate": 1.0})
    with CantataServer(tmp_path, "--config", str(config), "--log-format", "json", stderr_apart=True) as server:
        reply = httpx.post(f"{server.url}/v1/chat/completions", json=chat_body(MESSAGE), timeout=60)
        assert reply.status_code == 200
        assert server.stderr_path is not None
    text = server.stderr_path.read_text()
    lines = [json.loads(line) for line in text.splitlines()]  # every line is one JSON object
    assert MESSAGE not in text
    requests = [
        (line["method"], line["path"], line["status"]) for line in lines if line["logger"] == "cantata.server.access"
    ]
    assert ("GET", "/healthz", 200) in requests and ("POST", "/v1/chat/completions", 200) in requests
    failed = [line for line in lines if line["logger"] == "cantata.server.agents"]
    assert failed and all(
        line["level"] == "warning" and line["turn_id"] == reply.json()["cantata"]["turn_id"] for line in failed
    )
