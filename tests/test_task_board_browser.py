"""The dashboard's task board in a real browser: a factory task started while the board is
open shows up on it live (over the event stream), with its role, stage, tests and tokens.
The factory runs on the scripted backend with its canned replies, so this is quick."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cantata import sandbox
from tests.helpers.browser import chromium
from tests.helpers.servers import CantataServer
from tests.test_factory import CANNED, REQUEST

pytestmark = [pytest.mark.browser, pytest.mark.server]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[CantataServer]:
    config = tmp_path / "instances.yaml"
    config.write_text(f"instances:\n  - name: canned\n    backend: scripted\n    replies: {CANNED}\n")
    with CantataServer(tmp_path, "--config", str(config)) as running:
        yield running


def test_a_factory_task_shows_on_the_task_board_as_it_runs(server: CantataServer) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        page = browser.new_page()
        page.goto(f"{server.url}/#/tasks")
        expect(page.locator('[data-testid="tasks-empty"]')).to_be_visible(timeout=30_000)
        # The request goes in while the board is open: the row must come from the live stream.
        body = {"model": "factory", "messages": [{"role": "user", "content": REQUEST}]}
        post = threading.Thread(target=lambda: httpx.post(f"{server.url}/v1/chat/completions", json=body, timeout=300))
        post.start()
        row = page.locator('[data-testid="task"]')
        expect(row).to_have_count(1, timeout=60_000)
        expect(row).to_have_attribute("data-status", "ok", timeout=120_000)
        post.join(timeout=60)
        expect(row.locator('[data-field="role"]')).to_have_text("deployer")
        assert int(row.locator('[data-field="tokens"]').inner_text()) > 0
        outcome = row.locator('[data-field="outcome"]')
        if sandbox.sandbox_problem() is None:
            expect(row.locator('[data-field="iteration"]')).to_have_text("2")  # the planted failure, fixed
            expect(row.locator('[data-field="tests"]')).to_have_text("dev 3/3, held-out 3/3")
            expect(outcome).to_have_text("deployed action-items v1")
        else:  # the tester may not run the agent's tool: the task stops, and says why
            expect(outcome).to_contain_text("not deployed")
