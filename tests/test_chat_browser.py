"""The dashboard's chat in a real browser (Debian's Chromium driven by Playwright) on
scripted instances: each reply in its own bubble, placed by the chunks' `cantata.phase`,
so a merged reply holding a rule line (`---`) shows whole, text before and after it; a
session has its URL, survives a reload (even mid-turn) and goes on from Sessions."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from tests.helpers.browser import chromium
from tests.helpers.pipelines import RULED, WriteFile, ruled_config
from tests.helpers.server_app import chat_body
from tests.helpers.servers import CantataServer

if TYPE_CHECKING:
    from playwright.sync_api import Page

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


SESSION_URL = re.compile(r".*#/chat/(?P<id>[^/]+)$")


def session_of(page: Page) -> str:
    found = SESSION_URL.match(page.url)
    assert found, page.url
    return found["id"]


def say(page: Page, text: str) -> None:
    """Send a message and wait for its turn to end (its status line says ok)."""
    from playwright.sync_api import expect

    page.fill("#chat-input", text)
    page.click("#chat-send")
    expect(page.locator('[data-testid="mine"]').last).to_have_text(text)
    expect(page.locator('[data-testid="progress"]').last).to_contain_text("ok", timeout=60_000)


def turns_of(server: CantataServer, session: str) -> list[str]:
    detail = httpx.get(f"{server.url}/api/sessions/{session}", timeout=10).json()
    return [t["message"] for t in detail["turn_list"]]


def test_a_chat_has_its_url_survives_a_reload_and_goes_on_in_the_same_session(server: CantataServer) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        page = browser.new_page()
        page.goto(f"{server.url}/#/chat")
        page.select_option("#chat-model", "example")
        say(page, "First, the gym.")
        session = session_of(page)
        page.reload()
        # Read back from the API: the message, both replies in their own bubbles, the status.
        expect(page.locator('[data-testid="mine"]')).to_have_text(["First, the gym."])
        expect(page.locator('[data-testid="merged"]')).to_have_text(RULED)
        assert (page.locator('[data-testid="early"]').text_content() or "").startswith("[quick] scripted reply")
        expect(page.locator('[data-testid="progress"]')).to_have_text("ok")
        assert page.locator("#chat-model").input_value() == "example"
        say(page, "Then, the phone.")
        expect(page.locator('[data-testid="mine"]')).to_have_text(["First, the gym.", "Then, the phone."])
        assert session_of(page) == session
    assert turns_of(server, session) == ["First, the gym.", "Then, the phone."]


def test_a_reload_while_the_turn_runs_shows_its_replies_when_it_ends(write: WriteFile, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    slow = ruled_config(write, latency_s=3.0)  # two model calls in a row: the turn runs 6 s and more
    with CantataServer(tmp_path, "--config", str(slow)) as server, chromium() as browser:
        page = browser.new_page()
        page.goto(f"{server.url}/#/chat")
        page.select_option("#chat-model", "example")
        page.fill("#chat-input", "Quick, reload me.")
        page.click("#chat-send")
        page.wait_for_url(SESSION_URL, timeout=30_000)  # the session exists: its turn runs
        session = session_of(page)
        page.reload()
        expect(page.locator('[data-testid="mine"]')).to_have_text(["Quick, reload me."])
        expect(page.locator('[data-testid="progress"]')).to_have_text("still running…")
        expect(page.locator('[data-testid="merged"]')).to_have_text(RULED, timeout=60_000)
        expect(page.locator('[data-testid="progress"]')).to_have_text("ok")
        say(page, "And on.")
        assert turns_of(server, session) == ["Quick, reload me.", "And on."]


def test_a_past_session_opens_from_sessions_and_goes_on(server: CantataServer) -> None:
    from playwright.sync_api import expect

    def start(text: str) -> str:
        reply = httpx.post(f"{server.url}/v1/chat/completions", json=chat_body(text), timeout=60)
        return str(reply.json()["cantata"]["session"])

    past, other = start("An older worry."), start("Something else.")
    with chromium() as browser:
        page = browser.new_page()
        page.goto(f"{server.url}/#/sessions")
        page.locator(f'[data-session="{past}"] [data-testid="continue"]').click()
        page.wait_for_url(f"**/#/chat/{past}")
        expect(page.locator('[data-testid="mine"]')).to_have_text(["An older worry."])
        expect(page.locator('[data-testid="merged"]')).to_have_text(RULED)
        say(page, "Back to it.")
    assert turns_of(server, past) == ["An older worry.", "Back to it."]
    assert turns_of(server, other) == ["Something else."]
