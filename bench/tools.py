"""Tool-loop cost per step: a scripted model at zero latency asks for one no-op tool call
per step; every call is durable (recorded started and done in a SQLite file, committed
before the next step). Per step = (a run of STEPS steps - a run of one step) / (STEPS - 1),
medians over REPEATS runs; Cantata's each on a fresh runtime (the scripted model hands out
its canned steps from the first) warmed by one turn of another pipeline.

The same task, measured in the same run, in pydantic-ai's agent loop (a FunctionModel that
asks for the no-op tool until the last step) and in LangGraph's prebuilt ToolNode loop (a
graph of a scripted model node, ToolNode and tools_condition): neither records anything
durably (no checkpointer), so the ratio includes Cantata's two records per call.

Then the cached share of prompt tokens over a ten-step tool loop on the embedded model
(llama.cpp in process): the embedded backend counts the prompt tokens it reuses from the
state the step before left (llama.cpp's own KV state; cantata/backends/embedded.py). The
steps are driven here (see cached_share), not by a whole turn: the tiny model does not keep
to one call per step for ten steps."""

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

from cantata.backends import make_backend
from cantata.backends.base import CompletionRequest, Message, Usage
from cantata.config import InstanceConfig, load_config
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from cantata.spec import AgentSpec
from cantata.tool_loop import ToolLoop
from cantata.tools import FunctionTool, ToolCall

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
CACHE_PROMPT = (
    "You are a counter. Call the tick tool once per step; after the tenth tick, answer with the last number it gave."
)


def tick() -> int:
    """The next number."""
    tick.count += 1  # type: ignore[attr-defined]
    return tick.count  # type: ignore[attr-defined,no-any-return]


async def cached_share() -> list[tuple[int, int]]:
    """(prompt tokens, of them cached) of each of CACHE_STEPS steps of a tool loop on the
    embedded model: the conversation ToolLoop builds (the model's own reply appended, then the
    tool's result), with the tool called after every step whatever the model asked, so that
    the loop has all its steps (a 135M model may answer, or ask for many calls, at any step)."""
    tick.count = 0  # type: ignore[attr-defined]
    agent = AgentSpec(name="counter", prompt=CACHE_PROMPT, max_steps=CACHE_STEPS, max_tool_calls=CACHE_STEPS)

    def discard(rows: object) -> asyncio.Future[None]:  # as the store's: a write already under way
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    async def no_approvals(rows: object) -> list[int]:
        raise AssertionError("the counting tool needs no approval")

    loop = ToolLoop(
        agent=agent,
        tools=[FunctionTool(tick)],
        native=False,
        output_schema=None,
        place=(0, 0),
        record=discard,
        emit=lambda *args, **kwargs: None,
        ask=no_approvals,
    )
    await loop.begin([Message("system", CACHE_PROMPT), Message("user", "Start ticking.")])
    backend = make_backend(InstanceConfig(name="local", backend="embedded", context=4096))
    steps: list[tuple[int, int]] = []
    try:
        for step in range(CACHE_STEPS):
            loop.next_step()
            request = CompletionRequest(
                loop.messages, max_tokens=48, temperature=0, schema=loop.schema, agent="counter"
            )
            text, usage = "", Usage()
            async for chunk in backend.complete(request):
                text += chunk.text
                usage = chunk.usage or usage
            steps.append((usage.prompt_tokens, usage.cached_tokens))
            await loop.run([ToolCall(f"call_{step}", "tick", {})], text)
    finally:
        await backend.close()
    return steps


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
    steps = asyncio.run(cached_share())
    prompt, cached = sum(p for p, _ in steps), sum(c for _, c in steps)
    later_prompt, later_cached = sum(p for p, _ in steps[1:]), sum(c for _, c in steps[1:])
    print(f"Embedded model (SmolLM2-135M, llama.cpp in process), a tool loop of {CACHE_STEPS} steps:")
    print(f"  prompt tokens {prompt}, reused from the cache {cached}: {cached / prompt:.0%}")
    print(f"  steps 2-{CACHE_STEPS} (the first finds nothing cached): {later_cached / later_prompt:.0%}")
    print("  per step (prompt/cached): " + ", ".join(f"{p}/{c}" for p, c in steps))


if __name__ == "__main__":
    main()
