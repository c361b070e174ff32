"""Tool-loop cost per step: a scripted model at zero latency asks for one no-op tool call
per step; every call is durable (recorded started and done in a SQLite file, committed
before the next step). Per step = (a turn of STEPS steps - a turn of one step) / (STEPS - 1),
medians over REPEATS turns, each on a fresh runtime (the scripted model hands out its canned
steps from the first) warmed by one turn of another pipeline. Issue 20 also asks for the
same loop in pydantic-ai and LangGraph side by side: not measured here yet."""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from cantata.config import load_config
from cantata.loader import load_pipeline
from cantata.runtime import Cantata

STEPS = 20
REPEATS = 10

PIPELINE = """
name: loop
agents:
  - name: worker
    prompt: Call the tool until done.
    deliver: final
    max_steps: {steps}
    max_tool_calls: {steps}
    tools:
      - function: noop.noop
"""
WARM = "name: warm\nagents:\n  - name: w\n    prompt: hi\n    deliver: final\n"


async def turn_s(folder: Path, steps: int) -> float:
    canned = [{"tool_calls": [{"name": "noop", "arguments": {}}]}] * (steps - 1) + [{"final": "done"}]
    (folder / "replies.yaml").write_text("worker: " + json.dumps(canned) + "\n")
    (folder / "instances.yaml").write_text(
        f"instances:\n  - name: s\n    backend: scripted\n    replies: {folder / 'replies.yaml'}\n"
    )
    pipeline = load_pipeline(folder / f"loop{steps}.yaml")
    app = Cantata(load_config(folder / "instances.yaml"), home=folder / "home")
    try:
        await app.run_turn(load_pipeline(folder / "warm.yaml"), "warm up")
        start = time.perf_counter()
        result = await app.run_turn(pipeline, "go")
        elapsed = time.perf_counter() - start
    finally:
        await app.close()
    assert result.status == "ok" and len(result.agents[0].tool_calls) == steps - 1, result.agents
    return elapsed


async def measure() -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "noop.py").write_text('def noop() -> str:\n    """Does nothing."""\n    return "ok"\n')
        (folder / "warm.yaml").write_text(WARM)
        for steps in (1, STEPS):
            (folder / f"loop{steps}.yaml").write_text(PIPELINE.format(steps=steps))
        one = statistics.median([await turn_s(folder, 1) for _ in range(REPEATS)])
        many = statistics.median([await turn_s(folder, STEPS) for _ in range(REPEATS)])
    return one, many


def main() -> None:
    one, many = asyncio.run(measure())
    per_step = (many - one) / (STEPS - 1)
    print("Tool loop, scripted model at zero latency, a no-op tool, every call durable (SQLite file)")
    print(f"  turn of 1 step: {one * 1e3:.2f} ms; of {STEPS} steps: {many * 1e3:.2f} ms (medians of {REPEATS})")
    print(f"  per step (model call + tool call + its records): {per_step * 1e6:.0f} us")


if __name__ == "__main__":
    main()
