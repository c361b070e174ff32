"""Contrast of the dashboard's main controls, in Chromium, in the dark and the light scheme:
each control's text against the background it is drawn on (computed styles, backgrounds
composited from the page down), at least WCAG AA's 4.5:1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.helpers.browser import chromium
from tests.helpers.pipelines import WriteFile, ruled_config
from tests.helpers.servers import CantataServer

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.server]

AA = 4.5

# WCAG 2's contrast ratio: (L1 + 0.05) / (L2 + 0.05) of the relative luminances.
CONTRAST = """
(selectors) => {
  const rgba = (text) => {
    const parts = text.match(/rgba?\\(([^)]+)\\)/)[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
  };
  const over = (top, below) => [0, 1, 2].map((i) => top[i] * top[3] + below[i] * (1 - top[3])).concat([1]);
  const background = (node) => {
    const chain = [];
    for (let n = node; n; n = n.parentElement) chain.unshift(n);
    return chain.reduce((below, n) => over(rgba(getComputedStyle(n).backgroundColor), below), [255, 255, 255, 1]);
  };
  const luminance = (c) => {
    const [r, g, b] = c.slice(0, 3).map((v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const found = {};
  for (const selector of selectors) {
    const node = document.querySelector(selector);
    if (!node) { found[selector] = null; continue; }
    const bg = background(node);
    const [a, b] = [luminance(over(rgba(getComputedStyle(node).color), bg)), luminance(bg)];
    found[selector] = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  }
  return found;
}
"""

# The controls of each view a person uses most: the chat's, the header's, the Sessions
# view's buttons (export, and delete in the failure colour), the Plan's button.
CONTROLS = {
    "chat": [
        "#chat-send",
        "#chat-input",
        "#chat-model",
        "#new-chat",
        '[data-testid="mine"]',
        '[data-testid="early"]',
        '[data-testid="progress"]',
        "#key-button",
        ".brand",
        'nav a[data-view="chat"]',
        'nav a[data-view="sessions"]',
        "#who",
    ],
    "sessions": ["#view p button:not(.danger)", "#view button.danger", '[data-testid="continue"]'],
    "plan": ["#plan-form button", "#plan-form select"],
}


@pytest.fixture
def server(write: WriteFile, tmp_path: Path) -> Iterator[CantataServer]:
    with CantataServer(tmp_path, "--config", str(ruled_config(write))) as running:
        yield running


def ratios(page: Page, url: str) -> dict[str, float]:
    found: dict[str, float] = {}
    for view, selectors in CONTROLS.items():
        page.goto(f"{url}/#/{view}")
        if view == "chat":  # a turn, for the bubbles (and a session for the Sessions view)
            page.select_option("#chat-model", "example")
            page.fill("#chat-input", "How do these colours read?")
            page.click("#chat-send")
            page.wait_for_selector('[data-testid="progress"]:text("ok")', timeout=60_000)
        for selector in selectors:
            page.wait_for_selector(selector)
        measured = page.evaluate(CONTRAST, selectors)
        missing = [s for s, ratio in measured.items() if ratio is None]
        assert not missing, f"not on the {view} view: {missing}"
        found.update(measured)
    return found


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_the_main_controls_text_has_at_least_aa_contrast(server: CantataServer, scheme: str) -> None:
    with chromium() as browser:
        page = browser.new_page(color_scheme=scheme)  # type: ignore[arg-type]
        found = ratios(page, server.url)
    print(f"\ncontrast ({scheme}): " + ", ".join(f"{s} {r:.2f}" for s, r in sorted(found.items(), key=lambda i: i[1])))
    low = {s: round(r, 2) for s, r in found.items() if r < AA}
    assert not low, f"under {AA}:1 in the {scheme} scheme: {low}"
