"""Replicas against two real llama-cpp-python servers on loopback, with the embedded model
file: a session's calls stay on one replica; when that server is killed, its turns still
complete on the other; when it is started again, its breaker's probe brings it back and
calls reach it again. Short on purpose: the model is small, but the CPU is shared."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from cantata.config import load_config
from cantata.events import Event
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from tests.helpers.pipelines import WriteFile
from tests.helpers.servers import LlamaServer

pytestmark = pytest.mark.server

RETURN_S = 120.0  # a safety net for the probe: the cool-down doubles while the server is down

PIPELINE = """
name: relay
briefing: You help one person with one small question at a time. Be brief and kind.
agents:
  - name: talk
    prompt: Answer in a few words.
    deliver: early
    max_tokens: 6
    retries: 1
    timeout_s: 120
  - name: again
    prompt: Say the answer again, shorter.
    reads: [talk]
    deliver: final
    max_tokens: 6
    retries: 1
    timeout_s: 120
"""


async def test_affinity_failover_and_return_on_two_llama_servers(
    write: WriteFile, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Routing is tested here, not deadlines: on a CPU shared with other processes a deadline
    # that follows the measured speed may fire on a slow call, and its retry would move the
    # session to the other replica, rightly, but not what this test looks at.
    monkeypatch.setattr("cantata.speed.FLOOR_S", 120.0)
    for folder in ("a", "b", "again"):
        (tmp_path / folder).mkdir()
    with LlamaServer(tmp_path / "a") as first, LlamaServer(tmp_path / "b") as second:
        config = write(
            "instances.yaml",
            f"""
            instances:
              - name: llama
                backend: openai
                dialect: llama-cpp-python
                urls: [{first.url}, {second.url}]
                max_concurrency: 1
                breaker_failures: 1
                breaker_cooldown_s: 0.5
            """,
        )
        app = Cantata(load_config(config), home=home)
        pipeline = load_pipeline(write("p.yaml", PIPELINE))
        ids: dict[str, str] = {}

        async def turn(name: str) -> set[str]:
            """One turn of the test's session `name`: the replicas that served it."""
            events: list[Event] = []
            result = await app.run_turn(pipeline, "What is 2 plus 2?", session_id=ids.get(name), on_event=events.append)
            assert result.status == "ok", [a.error for a in result.agents]
            ids[name] = result.session
            return {e.data["replica"] for e in events if e.type == "agent_finished"}

        try:
            # Affinity: each session's calls on one replica, the two sessions on different ones.
            used = {name: await turn(name) | await turn(name) for name in ("s1", "s2")}
            assert all(len(replicas) == 1 for replicas in used.values()), used
            assert used["s1"] != used["s2"]
            (s1_replica,) = used["s1"]
            killed = first if s1_replica == "llama#0" else second

            # Failover: s1's server is killed; its next turn completes on the other.
            killed.kill()
            assert await turn("s1") == used["s2"]
            assert await turn("s2") == used["s2"]
            assert app.pool.instances[s1_replica].breaker.state != "closed"

            # Return: the same server started again; its probe closes the breaker, and new
            # sessions reach it again.
            with LlamaServer(tmp_path / "again", port=killed.port):
                deadline = time.monotonic() + RETURN_S
                while app.pool.instances[s1_replica].breaker.state != "closed":
                    assert time.monotonic() < deadline, "the restarted replica never came back"
                    await asyncio.sleep(0.5)
                back = await turn("s3") | await turn("s4")
                assert s1_replica in back
        finally:
            await app.close()
