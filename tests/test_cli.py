"""The `cantata` command as a user runs it: a subprocess, its output, its exit code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.pipelines import WriteFile, scripted_config
from tests.helpers.servers import free_port
from tests.test_scheduler import DIAMOND


def cantata(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "cantata", *args], capture_output=True, input=stdin, cwd=cwd)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def test_hand_written_diamond_runs_in_dependency_order(write: WriteFile) -> None:
    config = scripted_config(write, fake={"latency_s": 0.02})
    done = cantata("run", str(write("diamond.yaml", DIAMOND)), "--message", "hello", "--config", str(config), "--json")
    assert done.returncode == 0, done.stderr
    turn = json.loads(done.stdout)
    assert set(turn) == {
        "pipeline",
        "user",
        "session",
        "turn",
        "status",
        "early",
        "final",
        "agents",
        "conflicts",
        "quality",
        "approvals",
    }
    assert turn["pipeline"] == "diamond" and turn["turn"] == 1 and turn["status"] == "ok"
    assert turn["quality"] == {"repaired": {}, "replies_repaired": False, "note": None}
    assert turn["early"]["agent"] == "e" and turn["final"]["agent"] == "d"
    assert turn["early"]["at_s"] < turn["final"]["at_s"]
    agents = {a["name"]: a for a in turn["agents"]}
    for agent in agents.values():
        assert set(agent) == {
            "name",
            "status",
            "instance",
            "started_s",
            "finished_s",
            "attempts",
            "prompt_tokens",
            "cached_tokens",
            "completion_tokens",
            "finish_reason",
            "output",
            "error",
            "quality",
            "tool_calls",
        }
        assert agent["finish_reason"] == "stop" and agent["tool_calls"] == []
        assert agent["status"] == "ok" and agent["instance"] == "fake" and agent["attempts"] == 1
    assert agents["a"]["finished_s"] <= agents["b"]["started_s"]
    assert agents["a"]["finished_s"] <= agents["c"]["started_s"]
    assert max(agents["b"]["finished_s"], agents["c"]["finished_s"]) <= agents["d"]["started_s"]
    assert turn["final"]["text"] == agents["d"]["output"]
    assert 1 <= agents["b"]["output"]["score"] <= 5

    # The same session continues with --session.
    again = cantata(
        "run",
        str(write("diamond.yaml", DIAMOND)),
        "-m",
        "more",
        "--config",
        str(config),
        "--json",
        "--session",
        turn["session"],
    )
    assert json.loads(again.stdout)["turn"] == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "name: x\nagents:\n  - name: a\n    prompt: p\n    reads: [b]\n  - name: b\n    prompt: p\n    reads: [a]\n",
            ":5: the reads form a cycle a -> b -> a",
        ),
        ("name: x\nagents:\n  - name: a\n    prompt: p\n    reads: [ghost]\n", ":5: agent 'a' reads 'ghost'"),
        ("name: x\nagents:\n  - name: a\n    prompt: p\n    colour: red\n", ":5: unknown key 'colour'"),
    ],
)
def test_bad_pipelines_exit_2_with_one_line(write: WriteFile, home: Path, text: str, expected: str) -> None:
    path = write("bad.yaml", text)
    for command in (["validate", str(path)], ["run", str(path), "-m", "hi"]):
        done = cantata(*command)
        assert done.returncode == 2
        assert expected in done.stderr and "bad.yaml" in done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not home.exists(), "a rejected pipeline must not create the store"


def test_bad_config_and_unreachable_backend_write_nothing(write: WriteFile, home: Path) -> None:
    pipeline = str(write("diamond.yaml", DIAMOND))
    cases = {
        "unbound alias": (scripted_config(write, only={"serves": ["fast"]}), "no instance serves the model alias"),
        "unknown key": (
            write("c1.yaml", "instances:\n  - name: x\n    backend: scripted\n    colour: red\n"),
            "c1.yaml:4: unknown key 'colour'",
        ),
        "unreachable": (
            write("c2.yaml", "instances:\n  - name: far\n    backend: openai\n    url: http://127.0.0.1:9/v1\n"),
            "instance 'far' cannot serve",
        ),
        "invalid yaml": (write("c3.yaml", "instances: [\n"), "invalid YAML"),
    }
    for name, (config, expected) in cases.items():
        done = cantata("run", pipeline, "-m", "hi", "--config", str(config))
        assert done.returncode == 2, name
        assert expected in done.stderr, (name, done.stderr)
        assert "Traceback" not in done.stderr
    assert not home.exists(), "rejected input must not create the store"


def test_empty_message_and_unknown_session(write: WriteFile) -> None:
    config = str(scripted_config(write, fake={}))
    pipeline = str(write("diamond.yaml", DIAMOND))
    done = cantata("run", pipeline, "-m", "   ", "--config", config)
    assert done.returncode == 2 and "the message is empty" in done.stderr
    done = cantata("run", pipeline, "-m", "hi", "--config", config, "--session", "nope")
    assert done.returncode == 2 and "no session 'nope'" in done.stderr


def test_a_session_cannot_be_continued_with_another_pipeline(write: WriteFile) -> None:
    config = str(scripted_config(write, fast={"model": "scripted-8B"}))
    first = cantata("run", "example", "-m", "hi", "--config", config, "--json")
    assert first.returncode == 0, first.stderr
    session = json.loads(first.stdout)["session"]
    refused = cantata("run", "coaching", "-m", "and now?", "--config", config, "--session", session)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == (
        f"error: session {session} belongs to pipeline 'example', not 'coaching';"
        " continue it with 'example' or start a new session\n"
    )
    # Nothing was written: the session's next turn is its second.
    again = cantata("run", "example", "-m", "more", "--config", config, "--json", "--session", session)
    assert json.loads(again.stdout)["turn"] == 2


def test_message_from_stdin_with_invalid_utf8(write: WriteFile) -> None:
    config = str(scripted_config(write, fake={}))
    done = cantata(
        "run",
        str(write("diamond.yaml", DIAMOND)),
        "-m",
        "-",
        "--config",
        config,
        "--json",
        stdin=b"caf\xe9 and \xff bytes",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "ok"


def test_pipelines_lists_the_bundled_ones() -> None:
    done = cantata("pipelines", "--json")
    names = [p["name"] for p in json.loads(done.stdout)]
    assert "example" in names


def test_unknown_pipeline_name() -> None:
    done = cantata("run", "nosuch", "-m", "hi")
    assert done.returncode == 2 and "unknown pipeline 'nosuch'" in done.stderr


def test_text_that_is_not_utf8_in_arguments_is_refused(write: WriteFile, home: Path) -> None:
    config = str(scripted_config(write, fake={}))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cantata",
            "run",
            str(write("diamond.yaml", DIAMOND)),
            "-m",
            b"hi \xff",
            "--config",
            config,
        ],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2 and b"the message is not valid text" in done.stderr
    assert not home.exists()


def test_a_module_that_does_not_import_is_one_line(write: WriteFile) -> None:
    write("broken_mod.py", "def f(:\n")
    path = write("p.yaml", "name: x\nagents:\n  - name: a\n    function: broken_mod.f\n")
    done = cantata("validate", str(path))
    assert done.returncode == 2 and "p.yaml:4: cannot import 'broken_mod': SyntaxError" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_instance_that_does_not_answer_is_one_line_and_exit_2(write: WriteFile, home: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"  # bound, then closed: nothing listens
    config = write("far.yaml", f"instances:\n  - name: far\n    backend: openai\n    url: {url}\n")
    pipeline = str(write("diamond.yaml", DIAMOND))
    for command in (["run", pipeline, "-m", "hi"], ["chat", pipeline]):
        done = cantata(*command, "--config", str(config), stdin=b"")
        assert done.returncode == 2, (command, done.stderr)
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("error: instance 'far' cannot serve") and f"cannot connect to {url}" in line
    assert not home.exists(), "nothing is written for a turn that could not start"


def test_a_reply_cut_at_max_tokens_is_shown_as_cut(write: WriteFile) -> None:
    text = "name: x\nagents:\n  - name: a\n    prompt: p\n    max_tokens: 2\n    deliver: final\n"
    done = cantata("run", str(write("p.yaml", text)), "-m", "hi", "--config", str(scripted_config(write, fake={})))
    assert done.returncode == 0, done.stderr
    assert "cut at max_tokens=2" in done.stdout


def test_the_cli_imports_no_server_planner_or_factory_until_a_command_needs_them() -> None:
    """`cantata validate` must start fast: FastAPI, uvicorn and the applications load lazily."""
    heavy = ("fastapi", "uvicorn", "cantata.server", "cantata.planner", "cantata.factory.run", "cantata.runtime")
    code = f"import cantata.cli, sys; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    check = subprocess.run(
        [sys.executable, "-c", "import cantata.cli, sys; print('fastapi' in sys.modules)"],
        capture_output=True,
        text=True,
    )
    assert check.stdout.strip() == "False", check.stderr


def test_help_lists_every_command_including_the_lazy_ones() -> None:
    done = cantata("--help")
    assert done.returncode == 0, done.stderr
    for command in (
        "run",
        "chat",
        "validate",
        "pipelines",
        "instances",
        "schema",
        "plan",
        "agents",
        "factory",
        "new",
        "serve",
    ):
        assert f"  {command} " in done.stdout, command
    assert "  keys " in done.stdout
