"""Replicas with and without affinity (replicas.py), on the same workload, side by side:
two llama-cpp-python servers on loopback with the embedded model file (SmolLM2-135M), one
instance listing both (`urls`), one slot per replica (that server generates one sequence at
a time). The workload: SESSIONS sessions at once, TURNS turns each, three model agents per
turn over a shared briefing (the pipeline's text, the session's past turns, the message).

Measured in this run, for each mode:
  - the cached-token share: prompt tokens the server reused from its KV cache over all
    prompt tokens. llama-cpp-python reports no cached tokens (its streams carry no usage at
    all), so it is read from the servers' own logs: "Llama.generate: H prefix-match hit"
    (H tokens reused) and "prompt eval time = ... / N tokens" (N computed) per call;
  - time to first token, p50 and p90, per model call: from the request to the first text,
    as Cantata measures it (agent_finished's first_token_s);
  - turn time p50 (from the message to the merged reply).
Its cache holds one sequence: a call reuses only the prefix it shares with the call before
it on the same server, which is what affinity keeps together. With a server that caches
many prefixes (vLLM's APC, SGLang) the gap would show at higher load instead.

`python bench/replicas.py --sessions 2 --turns 1` checks that it runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent.parent))  # the repository, for tests.helpers
sys.path.insert(0, str(Path(__file__).parent))

from server_http import pct  # noqa: E402

from cantata import speed  # noqa: E402
from cantata.config import load_config  # noqa: E402
from cantata.events import Event  # noqa: E402
from cantata.loader import load_pipeline  # noqa: E402
from cantata.runtime import Cantata  # noqa: E402
from tests.helpers.servers import LlamaServer  # noqa: E402

SESSIONS = 4
TURNS = 3

BRIEFING = (
    "You are part of a small team that helps one person plan their week. The person writes "
    "short messages about what they want to get done, what got in the way, and how they feel "
    "about it. Read the conversation so far, keep to what the person actually said, never "
    "invent events, and keep every answer to one or two short sentences. The team shares this "
    "briefing; each member then gets its own task below. Be warm, concrete and brief. Prefer "
    "one small next step over a plan. Do not repeat the person's words back at length. "
)
PIPELINE = f"""
name: week
briefing: {json.dumps(BRIEFING * 3)}
agents:
  - name: talk
    prompt: Answer the person in one sentence.
    deliver: early
    max_tokens: 8
    timeout_s: 300
  - name: step
    prompt: Suggest one small next step.
    reads: [talk]
    max_tokens: 8
    timeout_s: 300
  - name: merge
    prompt: Merge the answer and the step into one reply.
    reads: [talk, step]
    deliver: final
    max_tokens: 8
    timeout_s: 300
"""
MESSAGES = [
    "I wanted to write the report on Monday but meetings ate the day.",
    "Tuesday I went running before work, which felt good.",
    "I keep putting off calling the dentist.",
    "My sister visits on Friday and the flat is a mess.",
]

HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit")
EVAL = re.compile(r"prompt eval time = .*/\s*(\d+) tokens")


@dataclass
class Figures:
    cached_share: float
    ttft_p50: float
    ttft_p90: float
    turn_p50: float
    calls: int


def cache_counts(log: str) -> tuple[int, int]:
    """(tokens reused, tokens computed) over the calls logged in `log`."""
    reused = computed = 0
    pending = 0
    for line in log.splitlines():
        if hit := HIT.search(line):
            pending = int(hit.group(1))
        elif evaluated := EVAL.search(line):
            reused += pending
            computed += int(evaluated.group(1))
            pending = 0
    return reused, computed


async def workload(
    config: Path, pipeline_path: Path, home: Path, sessions: int, turns: int
) -> tuple[list[float], list[float]]:
    """(each call's time to first token, each turn's time) of the workload."""
    app = Cantata(load_config(config), home=home)
    pipeline = load_pipeline(pipeline_path)
    firsts: list[float] = []
    turn_s: list[float] = []

    def listen(event: Event) -> None:
        if event.type == "agent_finished" and event.data.get("first_token_s") is not None:
            firsts.append(event.data["first_token_s"])

    async def session(i: int) -> None:
        session_id = None
        for turn in range(turns):
            start = time.perf_counter()
            message = f"{MESSAGES[(i + turn) % len(MESSAGES)]} (person {i})"
            result = await app.run_turn(pipeline, message, session_id=session_id, on_event=listen)
            if result.status != "ok":
                raise SystemExit(f"a turn failed: {[a.error for a in result.agents if a.error]}")
            session_id = result.session
            turn_s.append(time.perf_counter() - start)

    try:
        await asyncio.gather(*(session(i) for i in range(sessions)))
    finally:
        await app.close()
    return firsts, turn_s


def warm(url: str) -> None:
    """One call first, so the model's pages are in memory before anything is measured."""
    body = {"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 2}
    httpx.post(f"{url}/chat/completions", json=body, timeout=300).raise_for_status()


def measure(folder: Path, servers: list[LlamaServer], affinity: bool, sessions: int, turns: int) -> Figures:
    config = folder / f"instances-{affinity}.yaml"
    urls = ", ".join(server.url for server in servers)
    config.write_text(
        "instances:\n  - name: llama\n    backend: openai\n    dialect: llama-cpp-python\n"
        f"    urls: [{urls}]\n    max_concurrency: 1\n    affinity: {str(affinity).lower()}\n"
    )
    pipeline = folder / "pipeline.yaml"
    pipeline.write_text(PIPELINE)
    offsets = [server.log_path.stat().st_size for server in servers]
    firsts, turn_s = asyncio.run(workload(config, pipeline, folder / f"home-{affinity}", sessions, turns))
    reused = computed = 0
    for server, offset in zip(servers, offsets, strict=True):
        with server.log_path.open("rb") as log:
            log.seek(offset)
            r, c = cache_counts(log.read().decode(errors="replace"))
        reused, computed = reused + r, computed + c
    return Figures(
        cached_share=reused / (reused + computed) if reused + computed else 0.0,
        ttft_p50=statistics.median(firsts),
        ttft_p90=pct(firsts, 0.9),
        turn_p50=statistics.median(turn_s),
        calls=len(firsts),
    )


def main(sessions: int = SESSIONS, turns: int = TURNS) -> None:
    # Deadlines are not measured here: on a CPU shared with other processes, one that
    # follows the measured speed (speed.py) fires on a call merely slowed by a neighbour,
    # and its retry would be counted as a second first token. The agents' timeout_s stays.
    speed.FLOOR_S = 300.0
    print(f"== replicas: {sessions} sessions x {turns} turns x 3 agents, two llama-cpp-python servers, one slot each")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in ("a", "b"):
            (folder / name).mkdir()
        with LlamaServer(folder / "a") as first, LlamaServer(folder / "b") as second:
            servers = [first, second]
            for server in servers:
                warm(server.url)
            rows = {
                "without affinity": measure(folder, servers, False, sessions, turns),
                "with affinity": measure(folder, servers, True, sessions, turns),
            }
    print(f"{'':<18} {'cached share':>12} {'TTFT p50':>9} {'TTFT p90':>9} {'turn p50':>9} {'calls':>6}")
    for label, f in rows.items():
        print(
            f"{label:<18} {100 * f.cached_share:>11.0f}% {f.ttft_p50:>8.2f}s {f.ttft_p90:>8.2f}s"
            f" {f.turn_p50:>8.2f}s {f.calls:>6}"
        )
    without, with_ = rows["without affinity"], rows["with affinity"]
    if without.ttft_p50 > 0:
        print(f"TTFT p50 with affinity: {100 * (1 - with_.ttft_p50 / without.ttft_p50):.0f}% lower")
    print("(cached share from the servers' logs: llama-cpp-python reports no cached tokens)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--turns", type=int, default=TURNS)
    args = parser.parse_args()
    main(args.sessions, args.turns)
