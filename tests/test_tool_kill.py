"""Kill-and-resume in the middle of a tool loop (marker `kill`): a `cantata run` process is
stopped with SIGKILL at a point of the loop (cantata/killpoints.py), `cantata resume` then
finishes the turn. No completed call runs again, and a side-effecting call whose outcome
was not recorded is not repeated: the model is told its outcome is unknown.

The scripted model of each process hands out its canned steps from the first, so the
resuming process is given the steps that remain: a resumed loop asks the model only for
the steps after those recorded."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.pipelines import WriteFile

pytestmark = pytest.mark.kill

TOOLS = '''
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
    """Send a message to the outside world (a side effect)."""
    _log("send", text=text)
    return "sent"
'''

PIPELINE = """
name: killed-tools
agents:
  - name: worker
    prompt: Use the tools, then answer.
    deliver: final
    tools:
      - function: acts.add
      - function: acts.send
        side_effects: true
"""


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def step(*logged: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools' log lines of one step, in a set order: a step's calls run at once
    (ToolLoop.run), so the order in which they reach the log is not defined."""
    return sorted(logged, key=lambda line: json.dumps(line, sort_keys=True))


class Rounds:
    def __init__(self, write: WriteFile, tmp_path: Path, home: Path) -> None:
        write("acts.py", TOOLS)
        self.pipeline = write("p.yaml", PIPELINE)
        self.write = write
        self.home = home
        self.log = tmp_path / "calls.jsonl"

    def config(self, steps: list[Any]) -> Path:
        replies = self.write("replies.yaml", "worker: " + json.dumps(steps) + "\n")
        return self.write("instances.yaml", f"instances:\n  - name: s\n    backend: scripted\n    replies: {replies}\n")

    def cantata(self, *args: str, steps: list[Any], kill_at: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "TOOL_TEST_LOG": str(self.log), "CANTATA_HOME": str(self.home)}
        env.pop("CANTATA_TEST_KILL_AT", None)
        if kill_at is not None:
            env["CANTATA_TEST_KILL_AT"] = kill_at
        command = [sys.executable, "-m", "cantata", *args, "--config", str(self.config(steps))]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)

    def run_killed(self, steps: list[Any], kill_at: str) -> None:
        done = self.cantata("run", str(self.pipeline), "-m", "go", steps=steps, kill_at=kill_at)
        assert done.returncode == -signal.SIGKILL, done.stderr

    def resume(self, steps: list[Any]) -> list[dict[str, Any]]:
        done = self.cantata("resume", "--pipeline", str(self.pipeline), "--json", steps=steps)
        assert done.returncode == 0, done.stderr
        results: list[dict[str, Any]] = json.loads(done.stdout)
        return results

    def calls(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def steps(self, *sizes: int) -> list[list[dict[str, Any]]]:
        """The tools' log cut into consecutive steps of these sizes, each as `step` orders it:
        the steps follow one another, the calls within one do not."""
        calls, steps = self.calls(), []
        assert len(calls) == sum(sizes), calls
        for size in sizes:
            steps.append(step(*calls[:size]))
            calls = calls[size:]
        return steps

    def rows(self) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.home / "cantata.db") as db:
            return db.execute("SELECT step, idx, tool, status FROM tool_calls ORDER BY step, idx").fetchall()


def test_a_kill_between_steps_reruns_no_completed_call(write: WriteFile, tmp_path: Path, home: Path) -> None:
    rounds = Rounds(write, tmp_path, home)
    first = [{"tool_calls": [call("add", a=1, b=2), call("send", text="a")]}, {"tool_calls": [call("add", a=3, b=4)]}]
    rounds.run_killed([*first, {"final": "never reached"}], kill_at="tool_step:2")
    assert rounds.rows() == [(1, 0, "add", "ok"), (1, 1, "send", "ok"), (2, 0, "add", "ok")]
    (result,) = rounds.resume([{"tool_calls": [call("send", text="b")]}, {"final": "all done"}])
    assert result["status"] == "ok" and result["final"]["text"] == "all done"
    assert rounds.steps(2, 1, 1) == [
        step({"tool": "add", "a": 1, "b": 2}, {"tool": "send", "text": "a"}),
        step({"tool": "add", "a": 3, "b": 4}),
        step({"tool": "send", "text": "b"}),
    ]
    assert rounds.rows() == [(1, 0, "add", "ok"), (1, 1, "send", "ok"), (2, 0, "add", "ok"), (3, 0, "send", "ok")]
    (agent,) = result["agents"]
    assert [(c["step"], c["tool"], c["result"]) for c in agent["tool_calls"]] == [
        (1, "add", "3"),
        (1, "send", "sent"),
        (2, "add", "7"),
        (3, "send", "sent"),
    ]


def test_a_side_effect_with_unknown_outcome_is_not_repeated(write: WriteFile, tmp_path: Path, home: Path) -> None:
    rounds = Rounds(write, tmp_path, home)
    # Killed as the send starts (its start recorded, its result not): the add beside it never ran.
    # Deterministic: the step's calls start as tasks in the order asked (asyncio.gather), and the
    # send's kill point is reached before its first await, so the add's task never gets to run.
    rounds.run_killed([{"tool_calls": [call("send", text="pay"), call("add", a=1, b=1)]}], kill_at="tool_call:send")
    assert rounds.calls() == []
    assert rounds.rows() == [(1, 0, "send", "started"), (1, 1, "add", "started")]
    (result,) = rounds.resume([{"final": "told"}])
    assert result["status"] == "ok"
    assert rounds.calls() == [{"tool": "add", "a": 1, "b": 1}]  # the send, never again
    assert rounds.rows() == [(1, 0, "send", "unknown"), (1, 1, "add", "ok")]
    (agent,) = result["agents"]
    unknown = agent["tool_calls"][0]
    assert unknown["status"] == "unknown" and unknown["error"].startswith("outcome unknown")
