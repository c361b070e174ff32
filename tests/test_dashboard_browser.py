"""The dashboard in a real browser: Debian's Chromium driven by Playwright, on the
embedded model. Chat, see the early then the merged reply, open the turn's timeline,
see every agent done; the screenshot is kept with the test's output."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.browser import chromium
from tests.helpers.pipelines import WriteFile, canned_config
from tests.helpers.servers import CantataServer

pytestmark = [pytest.mark.browser, pytest.mark.embedded, pytest.mark.server]

SHOTS = Path(os.environ.get("CANTATA_SCREENSHOTS", "test-output/screenshots"))


@pytest.fixture
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[CantataServer]:
    args: list[str] = list(getattr(request, "param", []))
    with CantataServer(tmp_path, *args) as running:
        yield running


def test_chat_then_timeline_in_chromium(server: CantataServer, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900}, color_scheme="dark")
        page.goto(f"{server.url}/#/chat")
        page.select_option("#chat-model", "example")
        page.fill("#chat-input", "I keep scrolling on my phone instead of going to the gym.")
        page.click("#chat-send")
        early = page.locator('[data-testid="early"]').last
        merged = page.locator('[data-testid="merged"]').last
        # The early reply shows while the merged one is still hidden...
        expect(early).not_to_be_empty(timeout=120_000)
        assert merged.is_hidden()  # the early reply is there before the merged one
        early_text = early.inner_text()
        # ...then the merged reply is appended below it.
        expect(merged).to_be_visible(timeout=300_000)
        expect(merged).not_to_be_empty()
        assert early.inner_text().startswith(early_text[:10])
        page.click('[data-testid="timeline-link"]')
        expect(page.locator("#turn-status")).to_have_text("ok", timeout=60_000)
        lanes = page.locator("#gantt [data-agent]")
        expect(lanes).to_have_count(4)
        statuses = [lanes.nth(i).get_attribute("data-status") for i in range(lanes.count())]
        assert statuses == ["ok"] * 4, statuses
        lanes.nth(1).click()
        expect(page.locator("#agent-detail")).to_contain_text("completion")
        shot = tmp_path / "timeline.png"
        page.screenshot(path=str(shot), full_page=True)
    SHOTS.mkdir(parents=True, exist_ok=True)
    kept = SHOTS / "dashboard-timeline.png"
    shutil.copy(shot, kept)
    print(f"\nscreenshot of the timeline: {shot} (kept as {kept.resolve()})")


def test_a_cut_and_a_repaired_reply_are_marked_on_the_timeline(write: WriteFile, tmp_path: Path) -> None:
    """On the scripted backend: quick is cut at its max_tokens (60), answer repeats itself."""
    import httpx
    from playwright.sync_api import expect

    long = " ".join(f"Step {n}: put the phone in another room before the gym." for n in range(1, 9))
    config = canned_config(write, {"quick": long, "answer": "You want to move a little more each day. " * 3})
    with CantataServer(tmp_path, "--config", str(config)) as server, chromium() as browser:
        body = {"model": "example", "messages": [{"role": "user", "content": "I skip the gym."}]}
        turn_id = httpx.post(f"{server.url}/v1/chat/completions", json=body, timeout=60).json()["cantata"]["turn_id"]
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{server.url}/#/turn/{turn_id}")
        expect(page.locator("#turn-status")).to_have_text("ok", timeout=30_000)
        quick, answer = page.locator('#gantt [data-agent="quick"]'), page.locator('#gantt [data-agent="answer"]')
        assert quick.get_attribute("data-mark-cut") == "true" and quick.get_attribute("data-mark-repaired") is None
        assert answer.get_attribute("data-mark-repaired") == "true" and answer.get_attribute("data-mark-cut") is None
        assert page.locator("#gantt [data-mark-cut], #gantt [data-mark-repaired]").count() == 2  # no other lane
        expect(quick.locator(".mark-cut")).to_be_visible()
        expect(quick.locator(".mark-cut title")).to_have_text("quick: reply cut at max_tokens")
        expect(page.locator("#turn-quality")).to_contain_text("Cantata's checks repaired the replies of answer")
        answer.click()
        expect(page.locator("#agent-detail")).to_contain_text("repeated one sentence 3 times")
        quick.click()
        expect(page.locator("#agent-detail")).to_contain_text("cut at max_tokens (length)")
        page.screenshot(path=str(tmp_path / "timeline-marks.png"), full_page=True)
