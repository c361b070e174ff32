"""Approving a tool call from the dashboard (Chromium, marker `browser`): the turn waits,
its timeline shows the call waiting with Approve / Deny; approved there, the turn resumes,
finishes, and each tool call is a mark in its agent's lane whose click shows the call and
its result."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.helpers.browser import chromium
from tests.helpers.pipelines import WriteFile
from tests.helpers.servers import CantataServer
from tests.test_approvals import logged, write_guarded

pytestmark = [pytest.mark.browser, pytest.mark.server]

SCREENSHOTS = Path("test-output/screenshots")


def test_approve_from_the_dashboard_and_see_the_tool_marks(write: WriteFile, tmp_path: Path, calls_log: Path) -> None:
    from playwright.sync_api import expect

    pipeline, config = write_guarded(write)
    with CantataServer(tmp_path, "--config", str(config), "--pipeline", str(pipeline)) as server:
        body = {"model": "guarded", "messages": [{"role": "user", "content": "send hi"}]}
        answer = httpx.post(f"{server.url}/v1/chat/completions", json=body, timeout=60).json()
        turn_id = answer["cantata"]["turn_id"]
        assert answer["cantata"]["status"] == "waiting"
        with chromium() as browser:
            page = browser.new_page()
            page.goto(f"{server.url}/#/turn/{turn_id}")
            expect(page.locator("#turn-status")).to_have_text("waiting")
            waiting = page.locator("#approvals .approval")
            expect(waiting).to_contain_text("worker would call send")
            expect(waiting.locator("pre")).to_contain_text('"text": "hi"')
            lane = page.locator('[data-agent="worker"]')
            expect(lane.locator('.tool-mark[data-tool="send"]')).to_have_attribute("data-status", "waiting")
            assert [c["tool"] for c in logged(calls_log)] == ["add"]

            waiting.locator("button.approve").click()
            expect(page.locator("#turn-status")).to_have_text("ok", timeout=30_000)
            expect(page.locator("#approvals")).to_have_count(0)
            send = lane.locator('.tool-mark[data-tool="send"]')
            expect(send).to_have_attribute("data-status", "ok")
            expect(lane.locator('.tool-mark[data-tool="add"]')).to_have_attribute("data-status", "ok")
            send.click()
            detail = page.locator("#agent-detail")
            expect(detail).to_contain_text("worker called send")
            expect(detail).to_contain_text('"text": "hi"')
            expect(detail).to_contain_text("sent")
            expect(detail).to_contain_text("approved")
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "approval-tool-marks.png"), full_page=True)
    assert [c["tool"] for c in logged(calls_log)] == ["add", "send"]
