"""The README's "From the embedded model to vLLM", followed as written: its three commands,
against two llama-cpp-python servers on loopback standing in for vLLM.

The plan is the test's own (the example pipeline on two instances, on free ports); the
script it emits runs as is, with a `vllm` on PATH that starts llama-cpp-python's server
with the embedded model (tests/helpers/servers.py, VLLM_STANDIN). Then the README's
commands run word for word, `cantata` being this tree's.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from cantata.planner.emit import CONFIG_FILE, SCRIPT_FILE
from tests.helpers.readme import commands
from tests.helpers.servers import CantataServer, free_port_run, stop_pid, vllm_standin

pytestmark = pytest.mark.server

SECTION = "## From the embedded model to vLLM"
START_S = 300  # two servers, each loading the model on a busy machine
# Two instances: quick on one, read and answer (the alias `default`) on the other.
PLAN = ["--pipeline", "example", "--hardware", "2x4090", "--model", "quick=qwen3-4b", "--emit", "vllm"]


def cantata(line: str) -> list[str]:
    """A README command line, with this tree's `cantata`."""
    words = shlex.split(line)
    return [sys.executable, "-m", "cantata", *words[1:]] if words[0] == "cantata" else words


def test_the_readme_takes_a_pipeline_to_served_model_servers_in_three_commands(tmp_path: Path) -> None:
    _, start, check, serve = commands(SECTION)
    base = free_port_run(2)
    script = subprocess.run(
        [*cantata("cantata plan"), *PLAN, "--port-base", str(base)], capture_output=True, text=True, timeout=60
    )
    assert script.returncode == 0, script.stderr
    (tmp_path / SCRIPT_FILE).write_text(script.stdout)
    pids = tmp_path / "pids"
    pids.mkdir()
    env = {
        **os.environ,
        "PATH": f"{vllm_standin(tmp_path / 'bin')}{os.pathsep}{os.environ['PATH']}",
        "VLLM_STANDIN_PIDS": str(pids),
    }
    try:
        # 1. Start the servers: the script returns once both list their model.
        started = subprocess.run(cantata(start), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=START_S)
        assert started.returncode == 0, started.stderr + _logs(tmp_path)
        assert sorted(p.name for p in pids.iterdir()) == ["gpt-oss-20b-mxfp4", "qwen3-4b-awq"]
        assert f"  {check}\n  {serve}" in started.stdout  # it names the next two commands
        config = (tmp_path / CONFIG_FILE).read_text()
        assert f"url: http://localhost:{base}/v1" in config and f"url: http://localhost:{base + 1}/v1" in config
        # The stand-in is llama-cpp-python, whose schema dialect differs from vLLM's: the one
        # line a user would change for it (the README's Instances section names both).
        assert config.count("dialect: vllm") == 2
        (tmp_path / CONFIG_FILE).write_text(config.replace("dialect: vllm", "dialect: llama-cpp-python"))

        # 2. Check them.
        checked = subprocess.run(cantata(check), cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert checked.stdout.count(" ok: ") == 2

        # 3. Serve the pipelines on them, and chat through Cantata.
        assert serve.startswith("cantata serve ")  # CantataServer adds only a free --port to it
        with CantataServer(tmp_path, *shlex.split(serve)[2:], cwd=tmp_path) as server:
            body = {"model": "example", "messages": [{"role": "user", "content": "I keep skipping the gym."}]}
            reply = httpx.post(f"{server.url}/v1/chat/completions", json=body, timeout=START_S)
            assert reply.status_code == 200, reply.text
            answer = reply.json()
            assert answer["choices"][0]["message"]["content"].strip()
            turn = answer["cantata"]
            ran = {a["name"]: a for a in turn["agents"] if a["instance"]}
            # Every model agent asks for `default`, which the plan bound to the instance of most roles.
            assert {name: a["instance"] for name, a in ran.items()} == dict.fromkeys(
                ("quick", "read", "answer"), "gpt-oss-20b-mxfp4"
            ), turn
            # The replies came from it (read, a structured call, may fail on a 135M model: not a path matter).
            assert ran["quick"]["status"] == ran["answer"]["status"] == "ok", turn
            assert answer["choices"][0]["message"]["content"] == turn["merged"]

        # A server that goes away fails the check.
        stop_pid(int((pids / "qwen3-4b-awq").read_text()))
        failed = subprocess.run(cantata(check), cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert failed.returncode == 2, failed.stdout + failed.stderr
        assert "qwen3-4b-awq" in failed.stdout and "UNREACHABLE" in failed.stdout
        assert failed.stderr.strip() == "error: unreachable: qwen3-4b-awq"
    finally:
        for pid in pids.iterdir():
            stop_pid(int(pid.read_text()))


def _logs(folder: Path) -> str:
    return "".join(f"\n--- {log.name}\n{log.read_text()[-2000:]}" for log in sorted((folder / "logs").glob("*.log")))
