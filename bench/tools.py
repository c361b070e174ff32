"""Tool-loop cost per step: a scripted model at zero latency asks for one no-op tool call
per step; every call is durable (recorded started and done in a SQLite file, committed
before the next step). Per step = (a run of STEPS steps - a run of one step) / (STEPS - 1),
medians over REPEATS runs; Cantata's each on a fresh runtime (the scripted model hands out
its canned steps from the first) warmed by one turn of another pipeline.

The same task, measured in the same run, in pydantic-ai's agent loop (a FunctionModel that
asks for the no-op tool until the last step) and in LangGraph's prebuilt ToolNode loop (a
graph of a scripted model node, ToolNode and tools_condition): neither records anything
durably (no checkpointer), so the ratio includes Cantata's two records per call.

Then the cached share of prompt tokens over a ten-step loop on the embedded model (llama.cpp
in process): the embedded backend counts the prompt tokens it reuses from the state the step
before left (cantata/backends/embedded.py), summed over the agent's steps. The model decides
when to stop calling its tool; the figure says how many steps it took."""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

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


def calls_so_far(count: int, steps: int) -> bool:
    """Whether a scripted model that has answered `count` times asks for the tool again."""
    return count < steps - 1


async def pydantic_ai_s(steps: int) -> float:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if calls_so_far(sum(isinstance(m, ModelResponse) for m in messages), steps):
            return ModelResponse(parts=[ToolCallPart("noop", {})])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model))

    @agent.tool_plain
    def noop() -> str:
        """Does nothing."""
        return "ok"

    start = time.perf_counter()
    result = await agent.run("go")
    elapsed = time.perf_counter() - start
    assert result.output == "done" and len(result.all_messages()) == 2 * steps, result.all_messages()
    return elapsed


@tool
def lg_noop() -> str:
    """Does nothing."""
    return "ok"


async def langgraph_s(steps: int) -> float:
    def model(state: MessagesState) -> dict[str, list[AIMessage]]:
        count = sum(isinstance(m, AIMessage) for m in state["messages"])
        if calls_so_far(count, steps):
            return {"messages": [AIMessage("", tool_calls=[{"name": "lg_noop", "args": {}, "id": f"call_{count}"}])]}
        return {"messages": [AIMessage("done")]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tools", ToolNode([lg_noop]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    app = graph.compile()
    start = time.perf_counter()
    result = await app.ainvoke({"messages": [("user", "go")]}, {"recursion_limit": 4 * steps})
    elapsed = time.perf_counter() - start
    assert result["messages"][-1].content == "done" and len(result["messages"]) == 2 * steps, result
    return elapsed


async def per_step_s(run: Callable[[int], Awaitable[float]]) -> tuple[float, float, float]:
    """(median of a one-step run, median of a STEPS-step run, cost per step), runs interleaved."""
    await run(STEPS)  # warm up: imports, first compilations
    ones, manys = [], []
    for _ in range(REPEATS):
        ones.append(await run(1))
        manys.append(await run(STEPS))
    one, many = statistics.median(ones), statistics.median(manys)
    return one, many, (many - one) / (STEPS - 1)


async def measure() -> dict[str, tuple[float, float, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "noop.py").write_text('def noop() -> str:\n    """Does nothing."""\n    return "ok"\n')
        (folder / "warm.yaml").write_text(WARM)
        for steps in (1, STEPS):
            (folder / f"loop{steps}.yaml").write_text(PIPELINE.format(steps=steps))
        return {
            "Cantata (durable)": await per_step_s(lambda steps: turn_s(folder, steps)),
            "pydantic-ai (FunctionModel)": await per_step_s(pydantic_ai_s),
            "LangGraph (ToolNode)": await per_step_s(langgraph_s),
        }


CACHE_STEPS = 10
CACHE_PIPELINE = f"""
name: counting
agents:
  - name: counter
    prompt: |
      Call the tick tool once per step, {CACHE_STEPS - 1} times in all, one call per step.
      After the last tick, answer with the last number it gave.
    deliver: final
    temperature: 0
    max_tokens: 48
    max_steps: {CACHE_STEPS}
    max_tool_calls: {CACHE_STEPS - 1}
    timeout_s: 1800
    tools:
      - function: ticks.tick
"""
TICKS = 'COUNT = [0]\n\n\ndef tick() -> int:\n    """The next number."""\n    COUNT[0] += 1\n    return COUNT[0]\n'


async def cached_share() -> tuple[int, int, int, str]:
    """(model calls, prompt tokens, of them cached, how the loop ended) of one embedded loop."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "ticks.py").write_text(TICKS)
        (folder / "p.yaml").write_text(CACHE_PIPELINE)
        (folder / "instances.yaml").write_text(
            "instances:\n  - name: local\n    backend: embedded\n    context: 4096\n"
        )
        app = Cantata(load_config(folder / "instances.yaml"), home=folder / "home")
        try:
            result = await app.run_turn(load_pipeline(folder / "p.yaml"), "Start ticking.")
        finally:
            await app.close()
    (agent,) = result.agents
    ended = "a final answer" if agent.status == "ok" else f"failed: {agent.error}"
    return agent.attempts, agent.prompt_tokens, agent.cached_tokens, ended


def main() -> None:
    figures = asyncio.run(measure())
    print("Tool loop, scripted model at zero latency, a no-op tool; Cantata records every call (SQLite file)")
    print(f"  medians of {REPEATS} runs of 1 and of {STEPS} steps, in one process; a noisy shared machine")
    cantata = figures["Cantata (durable)"][2]
    for name, (one, many, per_step) in figures.items():
        print(
            f"  {name:<28} 1 step {one * 1e3:7.2f} ms, {STEPS} steps {many * 1e3:7.2f} ms: "
            f"{per_step * 1e6:6.0f} us per step; Cantata/this {cantata / per_step:5.2f}x"
        )
    steps, prompt, cached, ended = asyncio.run(cached_share())
    share = cached / prompt if prompt else 0.0
    print(f"Embedded model (SmolLM2-135M), a loop of up to {CACHE_STEPS} steps asked to call a tool each step:")
    print(
        f"  {steps} model calls ({ended}); prompt tokens {prompt}, of them reused from the cache {cached}: {share:.0%}"
    )


if __name__ == "__main__":
    main()
