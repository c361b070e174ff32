"""A real tool loop on the embedded model (SmolLM2-135M, llama.cpp in process; marker
`embedded`). It has no native tool format: each step is grammar-constrained JSON, either
{"tool_calls": [...]} or {"final": ...}, with each tool's arguments constrained by its
schema. The test asks for a sum the calculator tool computes; it checks what the loop did
with a real model, and prints what the model asked for and answered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cantata.config import load_config
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from tests.helpers.pipelines import WriteFile

pytestmark = pytest.mark.embedded

TOOLS = '''
def add(a: int, b: int) -> int:
    """Add two whole numbers and return their sum."""
    return a + b
'''

PIPELINE = """
name: sums
agents:
  - name: answer
    prompt: |
      You cannot add numbers yourself. First call the add tool with the two numbers.
      When the tool result is there, give it as your final answer.
    deliver: final
    temperature: 0
    max_tokens: 96
    max_steps: 3
    max_tool_calls: 2
    timeout_s: 900
    tools:
      - function: calc.add
"""


async def test_the_embedded_model_runs_a_real_tool_loop(write: WriteFile, home: Path) -> None:
    write("calc.py", TOOLS)
    pipeline = load_pipeline(write("p.yaml", PIPELINE))
    config = write("instances.yaml", "instances:\n  - name: local\n    backend: embedded\n    context: 2048\n")
    app = Cantata(load_config(config), home=home)
    try:
        result = await app.run_turn(pipeline, "What is 17 + 25?")
        events = await app.store.events(result.turn_id)
    finally:
        await app.close()
    (agent,) = result.agents
    got = f"status {agent.status}, error {agent.error}, final {result.final}, calls {json.dumps(agent.tool_calls)}"
    print("\n" + got)
    # A real loop: the model called the tool with arguments its grammar kept valid, the tool
    # ran, and its result went back to the model for the next step.
    assert agent.tool_calls, f"the model never called the tool: {got}"
    first = agent.tool_calls[0]
    assert first["tool"] == "add" and first["status"] == "ok", got
    assert first["result"] == str(first["arguments"]["a"] + first["arguments"]["b"]), got
    assert agent.attempts >= 2, got  # at least one step after the call, which read its result
    assert [e.type for e in events].count("tool_finished") == len(agent.tool_calls)
    # Whether a 135M model then stops and answers is its own affair: either way the loop is bounded.
    limits = ("max_steps=3", "max_tool_calls=2")
    assert agent.status == "ok" or any(limit in (agent.error or "") for limit in limits), got
