"""What `cantata instances` reports: each instance's config, live figures, health and server metrics."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from cantata.backends import make_backend
from cantata.config import InstancesConfig, database_url
from cantata.errors import CantataError
from cantata.figures import LiveFigures, live_figures
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
            "circuit": figures.circuit or {"state": "closed", "failures": 0, "reason": None, "probe_at": None},
        }
        if check:
            row.update(await _check(inst.name, config))
            if inst.backend == "openai" and inst.url:
                server = await scrape(inst.url)
                row["server"] = server.as_json() if server else None
        rows.append(row)
    return rows


async def _check(name: str, config: InstancesConfig) -> dict[str, Any]:
    inst = next(i for i in config.instances if i.name == name)
    try:
        backend = make_backend(inst)
        try:
            info = await backend.check()
        finally:
            await backend.close()
    except CantataError as exc:
        return {"reachable": False, "error": str(exc)}
    return {"reachable": True, "error": None, "serving": info.model, "details": info.details}
