"""What a model server says about itself on its Prometheus `/metrics` (vLLM, llama-server)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

# Each figure, by the names the servers use for it (vLLM v1, vLLM v0, llama.cpp's llama-server).
NAMES: dict[str, tuple[str, ...]] = {
    "requests_running": ("vllm:num_requests_running", "llamacpp:requests_processing"),
    "requests_waiting": ("vllm:num_requests_waiting", "llamacpp:requests_deferred"),
    "kv_cache_usage": ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "llamacpp:kv_cache_usage_ratio"),
    "prefix_cache_hits": ("vllm:prefix_cache_hits", "vllm:gpu_prefix_cache_hits"),
    "prefix_cache_queries": ("vllm:prefix_cache_queries", "vllm:gpu_prefix_cache_queries"),
}


@dataclass
class ServerFigures:
    requests_running: float | None = None
    requests_waiting: float | None = None
    kv_cache_usage: float | None = None  # 0..1
    prefix_cache_hit_rate: float | None = None  # hits / queries since the server started

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def parse_metrics(text: str) -> ServerFigures:
    """Sum each known metric over its labels (one server may serve several models)."""
    sums: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            name = sample.name.removesuffix("_total")
            sums[name] = sums.get(name, 0.0) + sample.value
    values = {
        figure: next(sums[name] for name in names if name in sums)
        for figure, names in NAMES.items()
        if any(name in sums for name in names)
    }
    hits, queries = values.get("prefix_cache_hits"), values.get("prefix_cache_queries")
    return ServerFigures(
        requests_running=values.get("requests_running"),
        requests_waiting=values.get("requests_waiting"),
        kv_cache_usage=values.get("kv_cache_usage"),
        prefix_cache_hit_rate=round(hits / queries, 3) if hits is not None and queries else None,
    )


async def scrape(
    base_url: str, *, timeout: float = 3.0, transport: httpx.AsyncBaseTransport | None = None
) -> ServerFigures | None:
    """The server's figures, or None when it has no /metrics (or is unreachable)."""
    root = base_url.rstrip("/").removesuffix("/v1")
    try:
        async with httpx.AsyncClient(timeout=timeout, transport=transport) as client:
            response = await client.get(f"{root}/metrics")
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        return parse_metrics(response.text)
    except ValueError:
        return None
