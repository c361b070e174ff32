"""The coaching pipeline on the embedded model (SmolLM2-135M, llama.cpp, this machine's cores).

Measured in this run, side by side:
  - time to the coach's first token in a full turn (five more agents queued on the same
    instance) versus the same call made alone (target: within 1.2x);
  - full-turn time (target: under 15 s);
  - prompt tokens actually computed in a turn (prompt minus reused) versus the longest
    single agent prompt (target: at most 1.5x);
  - the prompt layout: six agent calls over a 25-turn history with the shared briefing
    first versus the role first.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from contextlib import aclosing
from pathlib import Path

from cantata.backends.base import CompletionRequest, Message
from cantata.backends.embedded import EmbeddedBackend
from cantata.bundled import load as load_bundled
from cantata.config import DEFAULT_CONFIG, InstanceConfig
from cantata.events import Event
from cantata.loader import Pipeline
from cantata.runtime import Cantata
from cantata.spec import PipelineSpec

MESSAGES = [
    "I keep saying I'll go to the gym every morning but end up scrolling until nine.",
    "I told my sister I'd call her every Sunday and I've missed three in a row.",
    "Work is fine but I never start the report until the night before it is due.",
]


def early_model_agents(pipeline: Pipeline) -> list[str]:
    """The model agent(s) whose first token is the user's first sight of a reply."""
    early = pipeline.deliverer("early")
    assert early is not None, "the pipeline has no early reply"
    if not early.is_function:
        return [early.name]
    return [r for r in early.reads if not pipeline.agents[r].is_function]


def only(pipeline: Pipeline, keep: set[str]) -> Pipeline:
    """The same pipeline cut down to `keep` and everything they read."""
    needed = set(keep)
    for name in reversed(pipeline.order):
        if name in needed:
            needed.update(pipeline.agents[name].reads)
    agents = [a for a in pipeline.spec.agents if a.name in needed]
    spec = PipelineSpec.model_validate({**pipeline.spec.model_dump(exclude={"agents"}), "agents": agents})
    cut = Pipeline(
        spec,
        path=pipeline.path,
        prompts=pipeline.prompts,
        contracts=pipeline.contracts,
        functions=pipeline.functions,
        shortcuts=pipeline.shortcuts,
        checks=pipeline.checks,
    )
    # The same call: the same briefing, team section included (a cached property to pin).
    cut.__dict__["preamble"] = pipeline.preamble
    return cut


async def one_turn(
    app: Cantata, pipeline: Pipeline, agents: list[str], message: str, *, user: str, session: str | None = None
) -> dict[str, float | str]:
    """First token of the early agent, the whole turn, and the prompt tokens computed."""
    first: list[float] = []
    largest: list[int] = []

    def on_event(event: Event) -> None:
        if event.type == "agent_token" and event.agent in agents and not first:
            first.append(event.at_s)
        if event.type == "agent_finished" and event.data.get("largest_prompt"):
            largest.append(event.data["largest_prompt"])

    start = time.perf_counter()
    result = await app.run_turn(pipeline, message, user=user, session_id=session, on_event=on_event)
    model = [a for a in result.agents if a.instance]
    return {
        "first_token": first[0] if first else float("nan"),
        "turn": time.perf_counter() - start,
        "computed": sum(a.prompt_tokens - a.cached_tokens for a in model),
        "largest": max(largest, default=0),
        "ok": sum(a.status == "ok" for a in result.agents) / len(result.agents),
        "session": result.session,
    }


async def turns() -> dict[str, float]:
    pipeline = load_bundled("coaching")
    agents = early_model_agents(pipeline)
    alone = only(pipeline, set(agents))
    figures: dict[str, list[float]] = {}

    def keep(key: str, value: float | str) -> None:
        figures.setdefault(key, []).append(float(value))

    with tempfile.TemporaryDirectory() as tmp:
        app = Cantata(DEFAULT_CONFIG, home=Path(tmp))
        await one_turn(app, alone, agents, "hello", user="warm-up")  # load the model
        for i, message in enumerate(MESSAGES):
            # Each measured call starts from a briefing the cache has not seen.
            keep("alone", (await one_turn(app, alone, agents, message + " (alone)", user=f"a{i}"))["first_token"])
            full = await one_turn(app, pipeline, agents, message, user=f"f{i}")
            keep("full", full["first_token"])
            keep("turn", full["turn"])
            keep("ok", full["ok"])
        # A session with history: the briefing grows, and it is what the agents share.
        session: str | None = None
        for n in range(6):
            later = await one_turn(app, pipeline, agents, MESSAGES[n % 3], user="history", session=session)
            session = str(later["session"])
            keep("turn", later["turn"])
        keep("computed", later["computed"])
        keep("largest", later["largest"])
        await app.close()
    return {key: statistics.median(values) for key, values in figures.items()}


async def layout() -> tuple[float, float]:
    """Six calls over a 25-turn history: shared briefing first vs each role first."""
    backend = EmbeddedBackend(InstanceConfig(name="bench", backend="embedded", context=8192))
    await backend.check()
    history = "\n".join(
        f"[turn {n}] User: {MESSAGES[n % 3]}\n[turn {n}] Reply: That sounds hard. What would help?"
        for n in range(1, 26)
    )
    briefing = f"You are part of a coaching team.\n## Earlier in this conversation\n{history}\n## The new message\nHi\n"
    roles = [
        f"## Your role: {name}\nDescribe the person in one line."
        for name in ("coach", "shadow", "persona", "plasticity", "stability", "synth")
    ]

    async def six(order: str) -> float:
        start = time.perf_counter()
        for role in roles:
            messages = (
                [Message("system", briefing), Message("user", role)]
                if order == "shared-first"
                else [Message("system", role), Message("user", briefing)]
            )
            async with aclosing(
                backend.complete(CompletionRequest(messages=messages, max_tokens=4, temperature=0))
            ) as stream:
                async for _ in stream:
                    pass
        return time.perf_counter() - start

    await six("role-first")  # warm up
    shared = await six("shared-first")
    role = await six("role-first")
    await backend.close()
    return shared, role


def main() -> None:
    r = asyncio.run(turns())
    shared, role = asyncio.run(layout())
    print("coaching pipeline on the embedded model (medians)")
    print(f"  coach first token, alone          {r['alone']:.2f} s")
    print(
        f"  coach first token, full turn      {r['full']:.2f} s  = {r['full'] / r['alone']:.2f}x alone   (target <= 1.2x)"
    )
    print(
        f"  full turn                         {r['turn']:.1f} s   (target < 15 s; 9 turns); agents ok: {100 * r['ok']:.0f}%"
    )
    print(
        f"  prompt tokens computed, turn 6    {r['computed']:.0f} vs the longest single prompt {r['largest']:.0f}"
        f"  = {r['computed'] / max(r['largest'], 1):.2f}x   (target <= 1.5x)"
    )
    print(
        f"  six calls, 25-turn history        shared first {shared:.2f} s, role first {role:.2f} s = {role / shared:.1f}x faster"
    )


if __name__ == "__main__":
    main()
