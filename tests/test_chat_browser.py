"""The dashboard's chat in a real browser (Debian's Chromium driven by Playwright) on
scripted instances: each reply in its own bubble, placed by the chunks' `cantata.phase`,
so a merged reply holding a rule line (`---`) shows whole, text before and after it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.browser import chromium
from tests.helpers.pipelines import RULED, WriteFile, ruled_config
from tests.helpers.servers import CantataServer

pytestmark = [pytest.mark.browser, pytest.mark.server]


@pytest.fixture
def server(write: WriteFile, tmp_path: Path) -> Iterator[CantataServer]:
    config = ruled_config(write, latency_s=0.3, tokens_per_s=50)
    with CantataServer(tmp_path, "--config", str(config)) as running:
        yield running


def test_a_merged_reply_with_a_rule_line_shows_whole_in_its_own_bubble(server: CantataServer) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        page = browser.new_page()
        page.goto(f"{server.url}/#/chat")
        page.select_option("#chat-model", "example")
        page.fill("#chat-input", "Say it in two parts.")
        page.click("#chat-send")
        early = page.locator('[data-testid="early"]').last
        merged = page.locator('[data-testid="merged"]').last
        expect(early).not_to_be_empty(timeout=60_000)
        expect(merged).to_be_visible(timeout=60_000)
        expect(page.locator('[data-testid="progress"]').last).to_contain_text("ok:", timeout=60_000)
        assert merged.text_content() == RULED
        early_text = early.text_content() or ""
        assert early_text.startswith("[quick] scripted reply") and "---" not in early_text
