"""`approve: true` on a tool: the turn pauses (`waiting`) before the call, a person approves or
denies it, and the turn resumes; in the library and through the REST API (scripted backend)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cantata.config import load_config
from cantata.errors import AlreadyDecided, SessionBusy, UserError
from cantata.events import Event
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from tests.helpers.pipelines import WriteFile

ACTS = '''
import json
import os


def _log(name, **arguments):
    with open(os.environ["TOOL_TEST_LOG"], "a") as f:
        f.write(json.dumps({"tool": name, **arguments}) + "\\n")


def add(a: int, b: int) -> int:
    """Add two numbers."""
    _log("add", a=a, b=b)
    return a + b


def send(text: str) -> str:
    """Send a message to the outside world."""
    _log("send", text=text)
    return "sent"


def quick(ctx):
    return "on it"
'''

PIPELINE = """
name: guarded
agents:
  - name: quick
    function: acts.quick
  - name: worker
    prompt: Use the tools, then answer.
    deliver: final
    tools:
      - function: acts.add
      - function: acts.send
        approve: true
        side_effects: true
"""

# The step asks for both tools at once: `add` runs, `send` waits for a person.
STEPS: list[Any] = [
    {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}, {"name": "send", "arguments": {"text": "hi"}}]},
    {"final": "done"},
]


def logged(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def write_guarded(write: WriteFile, steps: list[Any] = STEPS) -> tuple[Path, Path]:
    """The pipeline file and an instances config whose scripted worker takes `steps`."""
    write("acts.py", ACTS)
    pipeline = write("p.yaml", PIPELINE)
    replies = write("replies.yaml", "worker: " + json.dumps(steps) + "\n")
    config = write("instances.yaml", f"instances:\n  - name: steady\n    backend: scripted\n    replies: {replies}\n")
    return pipeline, config


@pytest.fixture
def calls_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "calls.jsonl"
    monkeypatch.setenv("TOOL_TEST_LOG", str(path))
    return path


async def test_a_call_waits_for_approval_then_runs_once(write: WriteFile, home: Path, calls_log: Path) -> None:
    pipeline_file, config = write_guarded(write)
    pipeline = load_pipeline(pipeline_file)
    app = Cantata(load_config(config), home=home)
    events: list[Event] = []
    try:
        paused = await app.run_turn(pipeline, "send hi", on_event=events.append)
        assert paused.status == "waiting" and paused.final is None
        assert logged(calls_log) == [{"tool": "add", "a": 2, "b": 3}]  # send has not run
        (asked,) = [e for e in events if e.type == "approval_requested"]
        assert (asked.agent, asked.data["tool"], asked.data["arguments"]) == ("worker", "send", {"text": "hi"})
        assert paused.approvals == [asked.data["approval"]]
        assert events[-1].type == "turn_waiting"
        turn = await app.store.get_turn(paused.turn_id)
        assert turn is not None and turn.status == "waiting"
        # The session takes no new turn while it waits: one turn at a time per session.
        with pytest.raises(SessionBusy, match=f"approval {asked.data['approval']}"):
            await app.run_turn(pipeline, "and now?", session_id=paused.session)

        decided = await app.decide(asked.data["approval"], approved=True, by="ann")
        assert decided.resumable and decided.approval.status == "approved"
        with pytest.raises(AlreadyDecided):
            await app.decide(asked.data["approval"], approved=False, by="bob")
        with pytest.raises(UserError, match="no approval 999"):
            await app.decide(999, approved=True, by="ann")

        done = await app.resume(pipeline, paused.turn_id)
        assert done.status == "ok" and done.final is not None and done.final.text == "done"
        assert logged(calls_log) == [{"tool": "add", "a": 2, "b": 3}, {"tool": "send", "text": "hi"}]
        worker = next(a for a in done.agents if a.name == "worker")
        assert [(c["tool"], c["status"], c["result"]) for c in worker.tool_calls] == [
            ("add", "ok", "5"),
            ("send", "ok", "sent"),
        ]
        stored = [e.type for e in await app.store.events(paused.turn_id)]
        assert stored.count("approval_requested") == 1 and stored.count("approval_decided") == 1
        assert stored.count("turn_started") == 1 and stored[-1] == "turn_delivered"
    finally:
        await app.close()


async def test_a_denied_call_is_a_result_the_model_reads(write: WriteFile, home: Path, calls_log: Path) -> None:
    from cantata.backends.scripted import ScriptedBackend

    pipeline_file, config = write_guarded(write)
    pipeline = load_pipeline(pipeline_file)
    app = Cantata(load_config(config), home=home)
    try:
        paused = await app.run_turn(pipeline, "send hi")
        (approval,) = paused.approvals
        seen: list[Any] = []
        backend = app.pool.instance_for("default").backend
        assert isinstance(backend, ScriptedBackend)
        original = backend.complete

        def spy(request: Any) -> Any:
            seen.append(request)
            return original(request)

        backend.complete = spy  # type: ignore[method-assign]
        decided = await app.decide(approval, approved=False, reason="not today", by="ann")
        assert decided.resumable
        done = await app.resume(pipeline, paused.turn_id)
        assert done.status == "ok"
        assert logged(calls_log) == [{"tool": "add", "a": 2, "b": 3}]  # send never ran
        told = seen[-1].messages[-1].content
        assert "denied by a person: not today" in told and "5" in told
        worker = next(a for a in done.agents if a.name == "worker")
        assert [(c["tool"], c["status"], c["error"]) for c in worker.tool_calls] == [
            ("add", "ok", None),
            ("send", "denied", "denied by a person: not today"),
        ]
    finally:
        await app.close()
