"""What `cantata instances` reports: each instance's config, live figures, health and server metrics."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from cantata.backends import make_backend
from cantata.config import InstanceConfig, InstancesConfig, database_url
from cantata.errors import CantataError
from cantata.figures import CLOSED, LiveFigures, live_figures, serving_circuit
from cantata.server_metrics import scrape
from cantata.store import open_store

WINDOW_S = 3600.0  # live figures cover the last hour


async def instances_report(config: InstancesConfig, home: Path, *, check: bool) -> list[dict[str, Any]]:
    live: dict[str, LiveFigures] = {}
    url = database_url(config)
    if url or (home / "cantata.db").exists():  # never create the SQLite file just to look at it
        store = open_store(home, url)
        try:
            live = await live_figures(store, since_wall=time.time() - WINDOW_S)
        finally:
            await store.close()
    rows = []
    for inst in config.instances:
        figures = live.get(inst.name, LiveFigures())
        row: dict[str, Any] = {
            "name": inst.name,
            "backend": inst.backend,
            "model": inst.model,
            "url": inst.url,
            "serves": inst.serves,
            "max_concurrency": inst.concurrency(),
            "live": figures.as_json(),
            # As last told in the event log by the process that ran its calls (breaker.py).
            "circuit": figures.circuit or CLOSED,
        }
        if inst.urls:
            row["replicas"] = [
                {"name": own.name, "url": own.url, "circuit": figures.replicas.get(own.name, CLOSED)}
                for own in inst.replicas()
            ]
            row["circuit"] = serving_circuit([replica["circuit"] for replica in row["replicas"]])
        if check:
            await _check_row(row, inst)
        rows.append(row)
    return rows


async def _check_row(row: dict[str, Any], inst: InstanceConfig) -> None:
    """Reachable, and the server's own metrics: of each replica, and of the instance (reachable
    while any replica is)."""
    if not inst.urls:
        row.update(await _check(inst))
        if inst.backend == "openai" and inst.url:
            row["server"] = await _server(inst.url)
        return
    for replica, own in zip(row["replicas"], inst.replicas(), strict=True):
        replica.update(await _check(own))
        replica["server"] = await _server(own.url or "")
    reachable = [replica for replica in row["replicas"] if replica["reachable"]]
    row.update(
        reachable=bool(reachable),
        error=None if reachable else "; ".join(replica["error"] for replica in row["replicas"]),
        serving=reachable[0]["serving"] if reachable else None,
        details=reachable[0]["details"] if reachable else None,
    )


async def _server(url: str) -> dict[str, Any] | None:
    server = await scrape(url)
    return server.as_json() if server else None


async def _check(inst: InstanceConfig) -> dict[str, Any]:
    try:
        backend = make_backend(inst)
        try:
            info = await backend.check()
        finally:
            await backend.close()
    except CantataError as exc:
        return {"reachable": False, "error": str(exc)}
    return {"reachable": True, "error": None, "serving": info.model, "details": info.details}
