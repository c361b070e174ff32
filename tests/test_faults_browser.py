"""The dashboard's instance card says when an instance's calls fail fast: `cantata serve`
with one instance down, a turn that found it down, the overview in Chromium."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.helpers.browser import chromium
from tests.helpers.faulty_server import refused_url
from tests.helpers.pipelines import WriteFile
from tests.helpers.server_app import chat_body
from tests.helpers.servers import CantataServer
from tests.test_faults import side_pipeline, two_instances

pytestmark = pytest.mark.browser


def test_a_failing_instance_shows_a_badge_on_its_card(write: WriteFile, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    config = two_instances(write, refused_url())
    pipeline = side_pipeline(write, schema=False)
    with CantataServer(tmp_path, "--config", str(config), "--pipeline", str(pipeline)) as server:
        reply = httpx.post(f"{server.url}/v1/chat/completions", json=chat_body("hello", model="sided"), timeout=60)
        assert reply.status_code == 200, reply.text
        with chromium() as browser:
            page = browser.new_page()
            page.goto(f"{server.url}/#/overview")
            badge = page.locator('[data-instance="far"] .badge')
            expect(badge).to_have_text("failing fast", timeout=30_000)
            assert "cannot connect" in (badge.get_attribute("title") or "")
            expect(page.locator('[data-instance="near"] .badge')).to_have_count(0)
