"""The dashboard's reading views in Chromium, on scripted instances: outputs as readable
fields with scores on their scale and the JSON on a toggle (blackboard, memory); the plan
as tables with headers and units; the instance chart full from the server's history at load."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers.browser import chromium
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.helpers.server_app import chat_body
from tests.helpers.servers import CantataServer

pytestmark = [pytest.mark.browser, pytest.mark.server]


@pytest.fixture
def server(write: WriteFile, tmp_path: Path) -> Iterator[CantataServer]:
    with CantataServer(tmp_path, "--config", str(scripted_config(write, steady={"latency_s": 0.3}))) as running:
        yield running


def coaching_turn(server: CantataServer) -> int:
    reply = httpx.post(
        f"{server.url}/v1/chat/completions", json=chat_body("I skip the gym", model="coaching"), timeout=120
    )
    assert reply.status_code == 200, reply.text
    return int(reply.json()["cantata"]["turn_id"])


def test_blackboard_and_memory_show_fields_and_scores_on_their_scale_with_json_on_a_toggle(
    server: CantataServer,
) -> None:
    from playwright.sync_api import expect

    turn = coaching_turn(server)
    with chromium() as browser:
        page = browser.new_page()
        page.goto(f"{server.url}/#/blackboard/{turn}")
        persona = page.locator('[data-entry="persona"]')
        expect(persona.locator(".label", has_text=re.compile("^openness$")).first).to_be_visible()
        scores = persona.locator(".score")
        expect(scores.first).to_have_text(re.compile(r"^[1-5] / 5"))
        assert scores.count() == 6  # five traits on 1-5, follow-through on 0-100
        assert re.fullmatch(r"\d+ / 100", persona.locator(".score").nth(5).inner_text().strip())
        meter = scores.first.locator("meter")
        assert (meter.get_attribute("min"), meter.get_attribute("max")) == ("1", "5")
        raw = persona.locator("details.raw pre")
        expect(raw).to_be_hidden()  # the JSON is a click away, not in the way
        persona.locator("details.raw summary").click()
        expect(raw).to_be_visible()
        assert '"openness"' in raw.inner_text()
        memory = page.locator('[data-memory="persona"]')
        expect(memory.locator(".score").first).to_have_text(re.compile(r"^[1-5] / 5"))
        expect(memory).to_contain_text(f"from turn {turn}")


def test_the_plan_is_tables_with_headers_units_and_rounded_times(server: CantataServer) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        page = browser.new_page()
        page.goto(f"{server.url}/#/plan")
        page.select_option('#plan-form select[name="pipeline"]', "coaching")
        page.select_option('#plan-form select[name="hardware"]', "2x4090")
        page.click("#plan-form button")
        times = page.locator("#plan-times")
        expect(times).to_be_visible(timeout=60_000)
        head = times.locator("thead th").all_inner_texts()
        assert head[0] == "role" and {"starts (s)", "ends (s)", "takes (s)", "prompt (tokens)"} <= set(head)
        rows = times.locator("tbody tr")
        assert rows.count() == 8  # every agent of coaching, functions included
        for i in range(rows.count()):
            cells = rows.nth(i).locator("td").all_inner_texts()
            for column in ("starts (s)", "ends (s)", "takes (s)"):
                assert re.fullmatch(r"\d+\.\d\d", cells[head.index(column)]), cells
        shown = page.locator("#view").inner_text()
        assert re.search(r"early reply \(coach\)\s+\d+\.\d\d s", shown) and not re.search(r"\d\.\d{5,}", shown)


def test_the_instance_chart_starts_full_from_the_servers_history_with_a_coloured_legend(server: CantataServer) -> None:
    coaching_turn(server)  # its agents ran on `steady` within the chart's two minutes
    with chromium() as browser:
        page = browser.new_page()
        page.goto(f"{server.url}/#/overview")
        chart = page.locator('[data-instance="steady"] svg.spark')
        chart.wait_for()
        # At once, before any poll: a full chart, showing the calls made before the page opened.
        assert chart.get_attribute("data-points") == "60" and int(chart.get_attribute("data-max") or 0) >= 1
        colours = page.evaluate(
            """() => ["q", "r"].map((k) => [
                getComputedStyle(document.querySelector(`[data-instance="steady"] .legend .swatch.${k}`)).backgroundColor,
                getComputedStyle(document.querySelector(`[data-instance="steady"] svg.spark path.${k}`)).stroke])"""
        )
    (queued_swatch, queued_line), (running_swatch, running_line) = colours
    assert queued_swatch == queued_line and running_swatch == running_line and queued_line != running_line
