"""`cantata instances`: live figures from Cantata's events, server /metrics, and health checks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from cantata.config import load_config
from cantata.events import Event
from cantata.figures import live_figures
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from cantata.server_metrics import parse_metrics, scrape
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.test_scheduler import DIAMOND

VLLM_METRICS = """\
# HELP vllm:num_requests_running Number of requests currently running.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="Qwen/Qwen3-30B-A3B"} 3.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="Qwen/Qwen3-30B-A3B"} 5.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{model_name="Qwen/Qwen3-30B-A3B"} 0.42
# TYPE vllm:prefix_cache_queries counter
vllm:prefix_cache_queries_total{model_name="Qwen/Qwen3-30B-A3B"} 1000.0
# TYPE vllm:prefix_cache_hits counter
vllm:prefix_cache_hits_total{model_name="Qwen/Qwen3-30B-A3B"} 750.0
"""

LLAMA_SERVER_METRICS = """\
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 1
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 2
"""


def test_vllm_and_llama_server_metrics_are_read() -> None:
    vllm = parse_metrics(VLLM_METRICS)
    assert (vllm.requests_running, vllm.requests_waiting, vllm.kv_cache_usage) == (3.0, 5.0, 0.42)
    assert vllm.prefix_cache_hit_rate == 0.75
    llama = parse_metrics(LLAMA_SERVER_METRICS)
    assert (llama.requests_running, llama.requests_waiting, llama.kv_cache_usage) == (1.0, 2.0, None)


async def test_scrape_uses_the_server_root_and_tolerates_no_metrics() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, text=VLLM_METRICS) if "good" in str(request.url) else httpx.Response(404)

    transport = httpx.MockTransport(handler)
    figures = await scrape("http://good:8000/v1", transport=transport)
    assert figures is not None and figures.requests_waiting == 5.0
    assert seen == ["http://good:8000/metrics"]
    assert await scrape("http://bad:8000/v1", transport=transport) is None


async def test_live_figures_from_the_event_log(write: WriteFile, home: Path) -> None:
    config = scripted_config(
        write,
        fast={"latency_s": 0.01, "tokens_per_s": 2000, "serves": ["fast", "mid"]},
        slow={"latency_s": 0.02, "serves": ["slow"]},
    )
    app = Cantata(load_config(config), home=home)
    finished: list[Event] = []
    try:
        await app.run_turn(
            load_pipeline(write("p.yaml", DIAMOND)),
            "hello",
            on_event=lambda e: finished.append(e) if e.type == "agent_finished" else None,
        )
        figures = await live_figures(app.store, since_wall=0)
    finally:
        await app.close()
    assert set(figures) == {"fast", "slow"}
    assert figures["fast"].finished == 4 and figures["slow"].finished == 1
    assert figures["fast"].queued == 0 and figures["fast"].running == 0
    # The rate is the calls' tokens over their generation time, whatever the machine's load.
    fast = [e.data for e in finished if e.data["instance"] == "fast"]
    rate = sum(d["completion_tokens"] for d in fast) / sum(d["generation_s"] for d in fast)
    assert figures["fast"].tokens_per_s == pytest.approx(rate, abs=0.1)
    assert figures["fast"].first_token_s is not None and figures["fast"].first_token_s >= 0.01


def test_instances_command(write: WriteFile, home: Path) -> None:
    config = write(
        "instances.yaml",
        """
        instances:
          - name: fake
            backend: scripted
            serves: [a, b]
          - name: far
            backend: openai
            url: http://127.0.0.1:9/v1
            serves: ["*"]
        """,
    )
    done = subprocess.run(
        [sys.executable, "-m", "cantata", "instances", "--config", str(config), "--check", "--json"],
        capture_output=True,
        text=True,
    )
    # An unreachable instance fails the check (exit 2), after the whole report.
    assert done.returncode == 2 and done.stderr == "error: unreachable: far\n"
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["fake"]["reachable"] is True and rows["fake"]["serves"] == ["a", "b"]
    assert rows["far"]["reachable"] is False and "127.0.0.1:9" in rows["far"]["error"]
    assert not home.exists(), "looking at instances must not create the store"
    table = subprocess.run(
        [sys.executable, "-m", "cantata", "instances", "--config", str(config)], capture_output=True, text=True
    )
    assert table.returncode == 0 and "fake" in table.stdout and "far" in table.stdout
    checked = subprocess.run(
        [sys.executable, "-m", "cantata", "instances", "--config", str(config), "--check"],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 2 and "far" in checked.stdout and "UNREACHABLE" in checked.stdout
    assert checked.stderr == "error: unreachable: far\n"
    near = write("near.yaml", "instances:\n  - name: fake\n    backend: scripted\n")
    healthy = subprocess.run(
        [sys.executable, "-m", "cantata", "instances", "--config", str(near), "--check"], capture_output=True, text=True
    )
    assert healthy.returncode == 0 and "ok: " in healthy.stdout and healthy.stderr == ""
