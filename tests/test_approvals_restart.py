"""A pause survives a restart of `cantata serve` (marker `kill`): a turn waits for approval,
the server is killed (SIGKILL), started again, and the approval decided there: the turn
resumes and finishes, the approved call made once."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.helpers.pipelines import WriteFile
from tests.helpers.servers import CantataServer
from tests.helpers.sse import parse
from tests.test_approvals import STEPS, logged, write_guarded

pytestmark = pytest.mark.kill


def test_a_waiting_turn_survives_a_killed_server_and_resumes_on_approve(
    write: WriteFile, tmp_path: Path, home: Path, calls_log: Path
) -> None:
    pipeline, config = write_guarded(write)
    args = ("--config", str(config), "--pipeline", str(pipeline))
    body = {"model": "guarded", "messages": [{"role": "user", "content": "send hi"}]}
    with CantataServer(tmp_path, *args) as doomed:
        answer = httpx.post(f"{doomed.url}/v1/chat/completions", json=body, timeout=60).json()
        assert answer["cantata"]["status"] == "waiting"
        (approval,) = answer["cantata"]["approvals"]
        doomed.kill()
    turn_id = answer["cantata"]["turn_id"]
    assert [c["tool"] for c in logged(calls_log)] == ["add"]
    # The new process's scripted model starts from its first canned step: give it the rest.
    write("replies.yaml", "worker: " + json.dumps(STEPS[1:]) + "\n")
    with CantataServer(tmp_path, *args) as restarted:
        (pending,) = httpx.get(f"{restarted.url}/api/approvals", timeout=10).json()
        assert (pending["id"], pending["tool"], pending["arguments"]) == (approval, "send", {"text": "hi"})
        assert httpx.get(f"{restarted.url}/api/turns/{turn_id}", timeout=10).json()["status"] == "waiting"
        decided = httpx.post(f"{restarted.url}/api/approvals/{approval}", json={"decision": "approve"}, timeout=10)
        assert decided.status_code == 200, decided.text
        # The turn's event stream ends with the turn: once it is delivered.
        with httpx.stream("GET", f"{restarted.url}/api/turns/{turn_id}/events", timeout=60) as reply:
            events = [e for e in parse("".join(reply.iter_text())) if e.event is not None]
        turn = httpx.get(f"{restarted.url}/api/turns/{turn_id}", timeout=10).json()  # committed with its last event
    assert turn["status"] == "ok" and turn["final"]["text"] == "done", turn
    kinds = Counter(e.event for e in events)
    assert [kinds[k] for k in ("turn_started", "approval_requested", "turn_waiting", "approval_decided")] == [1] * 4
    assert kinds["turn_resumed"] == 1 and kinds["turn_delivered"] == 1, kinds
    assert [c["tool"] for c in logged(calls_log)] == ["add", "send"]  # the approved call, once
