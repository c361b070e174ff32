"""The agent factory on the embedded model (SmolLM2-135M, llama.cpp, this machine's cores).

For three requests, in one run: whether an agent was deployed, the loop's iterations,
tests passed on the development and the held-out halves, tokens spent and wall time.
On a 135M model the team rarely produces an agent that passes its own tests; the point
of these figures is what the factory costs and where it stops, on models people host.

In `make bench`. The builder writes two bounded strings (the rest of the artefact comes
from the design), so on 2 cores one request took about four minutes with three loop
iterations; with at most two, the three requests take about ten. Each request is bounded
by REQUEST_LIMIT_S, so the whole stays under half an hour whatever the model does.
Alone: .venv/bin/python bench/factory.py
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from cantata.bundled import load as load_bundled
from cantata.config import DEFAULT_CONFIG
from cantata.events import Event
from cantata.factory.run import task_json, with_max_iterations
from cantata.runtime import Cantata

REQUESTS = [
    "an agent that extracts action items with owners and due dates from meeting notes",
    "an agent that rates the tone of a customer review as positive, neutral or negative",
    "an agent that counts the words and the sentences of a paragraph",
]
MAX_ITERATIONS = 2
REQUEST_LIMIT_S = 540.0


async def one(request: str, home: Path) -> dict[str, Any]:
    pipeline = with_max_iterations(load_bundled("factory"), MAX_ITERATIONS)
    app = Cantata(DEFAULT_CONFIG, home=home)
    tokens = 0
    iterations = 0

    def count(event: Event) -> None:
        nonlocal tokens, iterations
        tokens += int(event.data.get("prompt_tokens") or 0) + int(event.data.get("completion_tokens") or 0)
        if event.type == "loop_finished":
            iterations = int(event.data["iterations"])

    start = time.perf_counter()
    try:
        async with asyncio.timeout(REQUEST_LIMIT_S):
            result = await app.run_turn(pipeline, request, on_event=count)
    except TimeoutError:
        return {"deployed": False, "stopped_at": "time limit", "reason": "time limit", "iterations": iterations, "dev": "-", "heldout": "-",
                "tokens": tokens, "seconds": time.perf_counter() - start}  # fmt: skip
    finally:
        await app.close()
    task = task_json(result)
    tests = task["tests"] or {}
    return {
        "deployed": task["deployed"],
        "reason": task["reason"],
        "stopped_at": next((a.name for a in result.agents if a.status != "ok"), "-"),
        "iterations": iterations,
        "dev": f"{tests.get('dev_passed', 0)}/{tests.get('dev_total', 0)}",
        "heldout": f"{tests.get('heldout_passed', 0)}/{tests.get('heldout_total', 0)}",
        "tokens": tokens,
        "seconds": time.perf_counter() - start,
    }


def main() -> None:
    print(f"agent factory on the embedded model (loop at most {MAX_ITERATIONS} iterations)")
    print(f"  {'request':<62} deployed  first not ok  iters  dev    held-out  tokens   time")
    with tempfile.TemporaryDirectory() as tmp:
        for i, request in enumerate(REQUESTS):
            row = asyncio.run(one(request, Path(tmp) / f"home-{i}"))
            print(
                f"  {request[:62]:<62} {'yes' if row['deployed'] else 'no':<9} {row['stopped_at']:<13} "
                f"{row['iterations']:<6} {row['dev']:<6} {row['heldout']:<9} {row['tokens']:<8} {row['seconds']:.0f} s"
            )
            if not row["deployed"]:
                print(f"    not deployed: {row['reason'][:110]}")


if __name__ == "__main__":
    main()
