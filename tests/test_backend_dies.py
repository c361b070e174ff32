"""A model server that dies in the middle of a turn: that agent fails with the reason,
the turn is degraded, and the store stays consistent."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cantata.config import load_config
from cantata.events import Event
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from tests.helpers.pipelines import WriteFile
from tests.helpers.servers import LlamaServer

pytestmark = pytest.mark.server


async def test_server_killed_mid_stream(write: WriteFile, home: Path, tmp_path: Path) -> None:
    pipeline = load_pipeline(
        write(
            "p.yaml",
            """
            name: dies
            agents:
              - name: talk
                model: remote
                prompt: Write a long story about a lighthouse keeper.
                max_tokens: 400
                temperature: 0.8
              - name: after
                model: local
                prompt: Summarise.
                reads: [talk]
                deliver: final
            """,
        )
    )
    with LlamaServer(tmp_path) as server:
        config = write(
            "instances.yaml",
            f"""
            instances:
              - name: remote
                backend: openai
                dialect: llama-cpp-python
                url: {server.url}
                serves: [remote]
              - name: local
                backend: scripted
                serves: [local]
            """,
        )
        app = Cantata(load_config(config), home=home)
        tokens = 0

        def kill_after_a_few_tokens(event: Event) -> None:
            nonlocal tokens
            if event.type == "agent_token" and event.agent == "talk":
                tokens += 1
                if tokens == 3:
                    server.kill()

        try:
            result = await app.run_turn(pipeline, "hello", on_event=kill_after_a_few_tokens)
        finally:
            await app.close()

    talk, after = result.agents
    assert tokens >= 3, "the stream had started before the server died"
    assert talk.status == "failed" and "instance 'remote'" in (talk.error or "")
    assert after.status == "ok"  # ran with talk marked missing
    assert result.status == "degraded"
    db = sqlite3.connect(home / "cantata.db")
    assert db.execute("SELECT status FROM turns").fetchall() == [("degraded",)]
    assert sorted(db.execute("SELECT agent, status FROM blackboard").fetchall()) == [
        ("after", "ok"),
        ("talk", "failed"),
    ]
    assert ("agent_failed", "talk") in db.execute("SELECT type, agent FROM events").fetchall()
