"""Writing pipelines and instance configs for a test, and running one turn of a pipeline of
function agents (the `write` fixture in conftest.py is the WriteFile these take)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from cantata.config import load_config
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from cantata.store import TurnRow
from cantata.turn import TurnResult

WriteFile = Callable[[str, str], Path]

# Three model agents, each reading the one before: the simplest pipeline with a critical path.
CHAIN = """
name: chain
agents:
  - name: a
    prompt: x
  - name: b
    prompt: x
    reads: [a]
  - name: c
    prompt: x
    reads: [b]
    deliver: final
"""


def scripted_config(write: WriteFile, **instances: dict[str, object]) -> Path:
    """An instances config of scripted instances: scripted_config(write, fast={"latency_s": 0})."""
    lines = ["instances:"]
    for name, options in instances.items():
        lines.append(f"  - name: {name}")
        lines.append("    backend: scripted")
        for key, value in options.items():
            lines.append(f"    {key}: {value!r}" if not isinstance(value, list) else f"    {key}: {value}")
    return write("instances.yaml", "\n".join(lines) + "\n")


# A merged reply holding what a Markdown writer puts between sections: a rule line, which
# must reach every client whole (it once split the early and the merged reply apart).
RULED = "Before the line.\n\n---\n\nAfter the line."


def canned_config(write: WriteFile, replies: dict[str, str], **options: object) -> Path:
    """One scripted instance, `steady`, whose named agents reply as given (the others as scripted)."""
    path = write("replies.yaml", "".join(f"{agent}: {json.dumps(text)}\n" for agent, text in replies.items()))
    return scripted_config(write, steady={**options, "replies": str(path)})


def ruled_config(write: WriteFile, **options: object) -> Path:
    """One scripted instance whose final agents (the example pipeline's `answer`) reply RULED."""
    return canned_config(write, {"answer": RULED}, **options)


async def run_functions(write: WriteFile, home: Path, pipeline_yaml: str) -> tuple[TurnResult, TurnRow | None]:
    """One turn ("hello") of a pipeline of function agents, and the turn as stored."""
    app = Cantata(load_config(scripted_config(write, fake={})), home=home)
    try:
        result = await app.run_turn(load_pipeline(write("p.yaml", pipeline_yaml)), "hello")
        return result, await app.store.get_turn(result.turn_id)
    finally:
        await app.close()
