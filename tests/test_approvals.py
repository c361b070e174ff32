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
from tests.test_tool_kill import TOOLS

# The kill tests' tools (`add`; `send`, a side effect), and a function agent beside them.
ACTS = (
    TOOLS
    + """

def quick(ctx):
    return "on it"
"""
)

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
        (session,) = (await app.store.export_user(paused.user))["sessions"]
        (exported,) = session["turns"][0]["approvals"]
        assert (exported["tool"], exported["status"], exported["decided_by"]) == ("send", "approved", "ann")
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


# -- the REST API ---------------------------------------------------------------------------


async def wait_for_status(c: Any, turn_id: int, want: str) -> dict[str, Any]:
    """The turn once its status is `want` (the resumed turn runs in the server's background)."""
    import asyncio

    for _ in range(400):
        turn: dict[str, Any] = (await c.get(f"/api/turns/{turn_id}")).json()
        if turn["status"] == want:
            return turn
        await asyncio.sleep(0.05)
    raise AssertionError(f"turn {turn_id} is {turn['status']}, not {want}")


@pytest.mark.parametrize("decision", ["approve", "deny"])
async def test_rest_approve_and_deny_with_per_user_isolation(
    write: WriteFile, home: Path, calls_log: Path, decision: str
) -> None:
    from tests.helpers.server_app import chat_body, client, make_app, new_key, running

    pipeline, config = write_guarded(write)
    ann, bob, admin = await new_key(home, "ann"), await new_key(home, "bob"), await new_key(home, "root", admin=True)
    async with running(make_app(config, home, pipelines=[pipeline])) as app:
        async with client(app, ann) as c, client(app, bob) as other, client(app, admin) as root:
            body = (await c.post("/v1/chat/completions", json=chat_body("send hi", model="guarded"))).json()
            turn_id = body["cantata"]["turn_id"]
            assert body["cantata"]["status"] == "waiting"
            (pending,) = (await c.get("/api/approvals")).json()
            assert (pending["turn_id"], pending["agent"], pending["tool"], pending["arguments"]) == (
                turn_id,
                "worker",
                "send",
                {"text": "hi"},
            )
            assert pending["status"] == "pending" and body["cantata"]["approvals"] == [pending["id"]]
            assert (await c.get("/api/approvals", params={"turn_id": turn_id})).json() == [pending]
            assert (await c.get(f"/api/turns/{turn_id}")).json()["status"] == "waiting"
            # Another user sees nothing of it and cannot decide it; an admin sees it.
            assert (await other.get("/api/approvals")).json() == []
            refused = await other.post(f"/api/approvals/{pending['id']}", json={"decision": "approve"})
            assert refused.status_code == 404 and refused.json()["error"]["code"] == "approval_not_found"
            assert [a["id"] for a in (await root.get("/api/approvals")).json()] == [pending["id"]]
            # The session takes no new turn meanwhile.
            busy = await c.post(
                "/v1/chat/completions",
                json=chat_body("again", model="guarded"),
                headers={"X-Cantata-Session": body["cantata"]["session"]},
            )
            assert busy.status_code == 409 and "approve or deny" in busy.json()["error"]["message"]

            answer = await c.post(f"/api/approvals/{pending['id']}", json={"decision": decision, "reason": "not today"})
            assert answer.status_code == 200, answer.text
            assert answer.json()["status"] == ("approved" if decision == "approve" else "denied")
            assert answer.json()["decided_by"] == "ann"
            twice = await c.post(f"/api/approvals/{pending['id']}", json={"decision": "approve"})
            assert twice.status_code == 409 and twice.json()["error"]["code"] == "approval_decided"
            turn = await wait_for_status(c, turn_id, "ok")
            assert turn["status"] == "ok"
            assert (await c.get("/api/approvals")).json() == []
            board = (await c.get(f"/api/turns/{turn_id}/blackboard")).json()
            detail = (await c.get(f"/api/turns/{turn_id}")).json()
    sent = [call for call in logged(calls_log) if call["tool"] == "send"]
    assert sent == ([{"tool": "send", "text": "hi"}] if decision == "approve" else [])
    worker = next(e for e in board["entries"] if e["agent"] == "worker")
    send = next(c for c in worker["tool_calls"] if c["tool"] == "send")
    # The timeline's marks: each call in its agent's lane, with its approval.
    marks = next(a for a in detail["agents"] if a["name"] == "worker")["tool_calls"]
    assert [(m["tool"], m["status"], m["approval"], m["approval_status"]) for m in marks] == [
        ("add", "ok", None, None),
        ("send", "ok" if decision == "approve" else "denied", pending["id"], answer.json()["status"]),
    ]
    if decision == "approve":
        assert (send["status"], send["result"]) == ("ok", "sent")
    else:
        assert (send["status"], send["error"]) == ("denied", "denied by a person: not today")


async def test_a_bad_decision_is_a_422_in_the_one_error_shape(write: WriteFile, home: Path) -> None:
    from tests.helpers.server_app import client, make_app, running

    pipeline, config = write_guarded(write)
    async with running(make_app(config, home, pipelines=[pipeline])) as app, client(app) as c:
        bad = await c.post("/api/approvals/1", json={"decision": "maybe"})
        assert bad.status_code == 422 and set(bad.json()) == {"error"}
        missing = await c.post("/api/approvals/1", json={"decision": "approve"})
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "approval_not_found"


# -- cantata chat -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answers", "sent", "told"), [(b"y\n", True, "(approved)"), (b"n\nnot today\n", False, "(denied)")]
)
def test_cantata_chat_asks_in_the_terminal(
    write: WriteFile, home: Path, calls_log: Path, answers: bytes, sent: bool, told: str
) -> None:
    import subprocess
    import sys

    pipeline, config = write_guarded(write)
    done = subprocess.run(
        [sys.executable, "-m", "cantata", "chat", str(pipeline), "--config", str(config)],
        input=b"send hi\n" + answers + b"/quit\n",
        capture_output=True,
        timeout=120,
    )
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    assert 'worker would call send({"text": "hi"}) [approval 1]' in out and told in out
    assert "worker: done" in out
    assert [c for c in logged(calls_log) if c["tool"] == "send"] == ([{"tool": "send", "text": "hi"}] if sent else [])


def test_a_turn_left_waiting_by_cantata_run_is_decided_in_a_later_chat(
    write: WriteFile, home: Path, calls_log: Path
) -> None:
    """The pause outlives its process: `cantata run` ends with the turn waiting; a later
    `cantata chat --session` asks about it, and the turn finishes there."""
    import subprocess
    import sys

    pipeline, config = write_guarded(write)
    command = [sys.executable, "-m", "cantata"]
    ran = subprocess.run(
        [*command, "run", str(pipeline), "-m", "send hi", "--config", str(config), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    paused = json.loads(ran.stdout)
    assert paused["status"] == "waiting" and paused["approvals"] == [1]
    # The second process's scripted model starts from its first canned step: give it the rest.
    write("replies.yaml", "worker: " + json.dumps(STEPS[1:]) + "\n")
    chat = subprocess.run(
        [*command, "chat", str(pipeline), "--config", str(config), "--session", paused["session"]],
        input="y\n/quit\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert chat.returncode == 0, chat.stderr
    assert "worker would call send" in chat.stdout and "worker: done" in chat.stdout
    assert [c["tool"] for c in logged(calls_log)] == ["add", "send"]  # each once
