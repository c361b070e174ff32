"""A planted api_key never leaves Cantata, however an upstream or a pipeline echoes it: not
in logs, errors, events, exports, `--json`, the database file or the dashboard's API."""

from __future__ import annotations

import importlib
import json
import logging
import re
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from cantata.errors import register_secret, scrub
from tests.helpers.pipelines import WriteFile
from tests.helpers.server_app import chat_body, client, make_app, running
from tests.helpers.servers import http_handler_server
from tests.test_cli import cantata

# Characters that URL-encoding and JSON-escaping change come early, so each form has its own
# first 8 characters: the least of a cut key the scrubber must still hide.
KEY = "s/k+Planted-Key-0123456789abcdefXYZ"
ENV = "CANTATA_TEST_SECRET"


def forms(key: str) -> dict[str, str]:
    return {
        "as_is": key,
        "cut": key[:12],
        "upper": key.upper(),
        "lower": key.lower(),
        "url": quote(key, safe=""),
        "json": key.replace("/", "\\/"),
    }


FORMS = forms(KEY)


def leaked(text: str) -> list[str]:
    """The forms of KEY whose first 8 characters are in `text`, ignoring case (and in JSON
    text, where a backslash of the JSON-escaped form is written twice)."""
    low = text.lower()
    low += "\n" + low.replace("\\\\", "\\")
    return [name for name, form in FORMS.items() if form[:8].lower() in low]


class Echo(BaseHTTPRequestHandler):
    """An upstream that lists its model, and refuses every completion echoing the key it was
    sent in the form the user's message names ("form:url")."""

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        self._send(200, {"object": "list", "data": [{"id": "echo"}]})

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        key = self.headers["Authorization"].removeprefix("Bearer ")
        found = re.search(r"form:(\w+)", body)
        echoed = forms(key)[found.group(1) if found else "as_is"]
        self._send(401, {"error": {"message": f"invalid api key {echoed}; check {echoed}", "type": "auth"}})

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


RULES = """import os
from urllib.parse import quote


def leak(ctx):
    key = os.environ["CANTATA_TEST_SECRET"]
    escaped = key.replace("/", "\\\\/")
    raise RuntimeError(f"could not use {key[:9]}, {key.upper()}, {quote(key, safe='')} or {escaped}")
"""

PIPELINE = """name: leaky
agents:
  - name: leak
    function: rules.leak
  - name: ask
    prompt: Answer the new message.
    deliver: final
    retries: 0
"""


def test_the_scrubber_hides_every_form_and_leaves_other_text_alone() -> None:
    register_secret(KEY)
    for name, form in FORMS.items():
        assert scrub(f"<{form}>") == "<***>", name
    assert scrub(f"{KEY[:7]} is too short to be the key") == f"{KEY[:7]} is too short to be the key"
    assert scrub("nothing to hide here") == "nothing to hide here"


async def test_a_planted_key_is_found_nowhere(
    write: WriteFile, home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    monkeypatch.setenv(ENV, KEY)
    write("rules.py", RULES)
    pipeline = write("leaky.yaml", PIPELINE)
    seen: dict[str, str] = {}
    with http_handler_server(Echo) as url:
        config = write(
            "instances.yaml",
            f"instances:\n  - name: up\n    backend: openai\n    url: {url}/v1\n    api_key: $env:{ENV}\n"
            '    serves: ["*"]\n',
        )
        for name in ("json", "cut"):
            done = cantata("run", str(pipeline), "-m", f"form:{name}", "--json", "--config", str(config))
            seen[f"cli --json {name}"] = done.stdout + done.stderr
            assert done.stdout.startswith("{"), done.stderr
            assert json.loads(done.stdout)["status"] == "failed"
        async with running(make_app(config, home, pipelines=[pipeline])) as app, client(app) as c:
            turns = []
            for name in FORMS:
                answer = await c.post("/v1/chat/completions", json=chat_body(f"form:{name}", model="leaky"))
                seen[f"chat {name}"] = answer.text
                turns.append(int(answer.headers["X-Cantata-Turn"]))
            streamed = await c.post("/v1/chat/completions", json=chat_body("form:url", model="leaky", stream=True))
            seen["chat stream"] = streamed.text
            for turn in turns:
                for path in (f"/api/turns/{turn}", f"/api/turns/{turn}/blackboard", f"/api/turns/{turn}/events"):
                    seen[path] = (await c.get(path)).text
            sessions = (await c.get("/api/sessions")).json()
            for path in (
                *(f"/api/sessions/{s['id']}" for s in sessions),
                "/api/sessions",
                "/api/memory",
                "/api/memory/export",
                "/api/instances?check=true",
                "/api/events?follow=false",
                "/api/pipelines",
                "/metrics",
            ):
                seen[path] = (await c.get(path)).text
    seen["logs"] = caplog.text
    for file in sorted(home.glob("cantata.db*")):
        seen[file.name] = file.read_bytes().decode("latin-1")
    # The key did reach each kind of surface, hidden: the test looks where it would be.
    for where in ("cli --json json", "chat url", f"/api/turns/{turns[0]}/events", "/api/memory/export", "logs"):
        assert "***" in seen[where], where
    assert "cantata.db" in seen and "could not use ***" in seen["logs"]
    assert {where: leaked(text) for where, text in seen.items() if leaked(text)} == {}


@pytest.mark.parametrize("module", ["cantata.leases", "cantata.compaction"])
def test_what_the_lease_keeper_and_compaction_log_is_scrubbed(module: str, caplog: pytest.LogCaptureFixture) -> None:
    register_secret(KEY)
    log = importlib.import_module(module).log
    with caplog.at_level(logging.WARNING):
        log.warning("upstream said: bad key %s", KEY)
    assert caplog.records and KEY not in caplog.text
