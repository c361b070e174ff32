"""Scheduler overhead on a coaching-shaped DAG with scripted instances of fixed latency.

guard (function) -> coach (early); guard -> shadow -> {persona, plasticity, stability}
-> synth (final, also reads coach). Every figure is measured in this run:
  - one turn's wall time / the DAG's critical path;
  - per-node overhead at zero latency (whole turns, store writes included), and the
    marginal cost of a node (7-node turn minus 1-node turn, per extra node), on a SQLite
    file, in-memory SQLite and PostgreSQL (a throwaway local cluster on a unix socket, as
    the tests make it), and the SQLite ones again in a process confined to one CPU, where
    a crossing to a thread wakes no idle CPU;
  - 200 sessions at once: wall time / critical path;
  - one crossing from the event loop to the store's thread and back, which the per-node
    figures at zero latency include a few times per turn.
Targets (issue 2): <= 1.02x, <= 50 us per node, <= 1.10x.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from cantata.config import InstanceConfig, InstancesConfig
from cantata.loader import Pipeline, load_pipeline
from cantata.runtime import Cantata
from cantata.store import SqliteStore, Store
from cantata.store.postgres_store import PostgresStore

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' PostgreSQL helper
from tests.helpers.postgres import running_postgres  # noqa: E402

LATENCY = {"coach": 0.4, "shadow": 0.3, "persona": 0.5, "plasticity": 0.3, "stability": 0.4, "synth": 0.3}
READS = {
    "coach": ["guard"],
    "shadow": ["guard"],
    "persona": ["shadow"],
    "plasticity": ["shadow"],
    "stability": ["shadow"],
    "synth": ["coach", "persona", "plasticity", "stability"],
}
NODES = 1 + len(LATENCY)


def critical_path(latency: dict[str, float]) -> float:
    finish: dict[str, float] = {"guard": 0.0}
    for name in READS:  # listed in dependency order
        finish[name] = max(finish[r] for r in READS[name]) + latency[name]
    return finish["synth"]


def lock_step_path(latency: dict[str, float]) -> float:
    """What a runtime advancing in rounds would take: each level waits for its slowest node."""
    levels = [["coach", "shadow"], ["persona", "plasticity", "stability"], ["synth"]]
    return sum(max(latency[n] for n in level) for level in levels)


def write_pipeline(folder: Path, *, only: str | None = None, timeout_s: float | None = None) -> Path:
    """The coaching-shaped DAG, or with `only`, a one-agent pipeline (to separate per-turn costs);
    `timeout_s` for every model agent, if given."""
    if only is not None:
        path = folder / "single.yaml"
        path.write_text(f"name: single\nagents:\n  - name: {only}\n    model: {only}\n    prompt: x\n")
        return path
    lines = ["name: bench", "agents:", "  - name: guard", "    function: bench_guard.guard"]
    for name, reads in READS.items():
        lines += [f"  - name: {name}", f"    model: {name}", "    prompt: x", f"    reads: [{', '.join(reads)}]"]
        if timeout_s is not None:
            lines.append(f"    timeout_s: {timeout_s}")
        if name == "coach":
            lines.append("    deliver: early")
        if name == "synth":
            lines.append("    deliver: final")
    (folder / "bench_guard.py").write_text("def guard(ctx):\n    return {'tier': 'none'}\n")
    path = folder / "pipeline.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def config(latency: dict[str, float]) -> InstancesConfig:
    return InstancesConfig(
        instances=[
            InstanceConfig(name=name, backend="scripted", latency_s=seconds, serves=[name])
            for name, seconds in latency.items()
        ]
    )


async def turns(app: Cantata, pipeline: Pipeline, count: int, *, concurrent: bool) -> float:
    start = time.perf_counter()
    if concurrent:
        await asyncio.gather(*(app.run_turn(pipeline, f"message {i}", user=f"user{i}") for i in range(count)))
    else:
        for i in range(count):
            await app.run_turn(pipeline, f"message {i}")
    return time.perf_counter() - start


async def measure() -> dict[str, float]:
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, running_postgres() as postgres:
        folder = Path(tmp)
        pipeline = load_pipeline(write_pipeline(folder))
        path = critical_path(LATENCY)

        app = Cantata(config(LATENCY), home=folder / "home")
        await turns(app, pipeline, 1, concurrent=False)  # warm up: imports, store creation
        walls = [await turns(app, pipeline, 1, concurrent=False) for _ in range(5)]
        results["critical_path_s"] = path
        results["turn_s"] = statistics.median(walls)
        results["turn_ratio"] = results["turn_s"] / path
        results["lock_step_ratio"] = lock_step_path(LATENCY) / path
        results["sessions_200_s"] = await turns(app, pipeline, 200, concurrent=True)
        results["sessions_200_ratio"] = results["sessions_200_s"] / path
        await app.close()

        results.update(await zero_latency(folder, postgres_url=postgres.new_database()))
        results["crossing_us"] = await crossing_us()
        results["crossing_after_work_us"] = await crossing_us(500, work_s=0.001)
    results.update({f"{key}_one_cpu": value for key, value in zero_latency_on_one_cpu().items()})
    return results


async def zero_latency(
    folder: Path, blocks: int = 12, block: int = 25, *, postgres_url: str | None = None
) -> dict[str, float]:
    """Sequential turns on instances that answer at once: what the runtime costs per node.
    Timed in blocks of `block` turns, the two pipelines' blocks alternating, and the median
    block kept: on a shared machine one long run takes in whatever else ran meanwhile.
    On PostgreSQL too if given its URL."""
    results: dict[str, float] = {}
    zero = {name: 0.0 for name in LATENCY}
    pipeline = load_pipeline(write_pipeline(folder))
    single = load_pipeline(write_pipeline(folder, only="coach"))
    stores: list[tuple[str, Store | None]] = [("file", None), ("memory", SqliteStore(":memory:"))]
    if postgres_url is not None:
        stores.append(("postgres", PostgresStore(postgres_url)))
    for label, store in stores:
        app = Cantata(config(zero), home=folder / f"home-{label}", store=store)
        await turns(app, pipeline, 20, concurrent=False)
        await turns(app, single, 20, concurrent=False)
        walls: list[float] = []
        walls_single: list[float] = []
        for _ in range(blocks):
            walls.append(await turns(app, pipeline, block, concurrent=False) / block)
            walls_single.append(await turns(app, single, block, concurrent=False) / block)
        wall, wall_single = statistics.median(walls), statistics.median(walls_single)
        results[f"per_node_us_{label}"] = wall / NODES * 1e6
        # What one more node costs: the turn's fixed costs (session, message, delivery) cancel out.
        results[f"marginal_node_us_{label}"] = (wall - wall_single) / (NODES - 1) * 1e6
        await app.close()
    return results


def zero_latency_on_one_cpu() -> dict[str, float]:
    """The zero-latency figures again, in a fresh process confined to one CPU. The loop and
    the threads it hands work to (the store's, the functions') then share that CPU, and a
    crossing costs a switch between threads rather than the wake-up of an idle CPU, which
    some hosts charge several times more for (a nested virtual machine, a CPU in a deep
    sleep state). Side by side with the figures above, this separates what the runtime
    itself costs per node from what the host charges for its crossings."""
    if not hasattr(os, "sched_setaffinity"):
        return {}  # not Linux: no way to confine a process to one CPU from here
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(_zero_latency_pinned)


def _zero_latency_pinned() -> dict[str, float]:
    # Pinned before the runtime starts a thread: its threads inherit the main thread's CPU.
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(zero_latency(Path(tmp)))


async def crossing_us(count: int = 2000, *, work_s: float = 0.0) -> float:
    """One crossing from the event loop to the store's thread and back: a commit that
    writes nothing, to an in-memory database (median of `count`). Store I/O and synchronous
    functions run off the loop, so a sequential turn waits on a few of these: the store at
    the turn's start (its context read with it) and for its last commits, plus each
    function agent.

    With `work_s`, the loop first works that long (holding the GIL, as a turn's agents do)
    while the store's thread waits: what a crossing costs within a turn, where the thread
    has been idle since the last one. Waking an idle CPU costs more on some machines than
    on others (on a nested virtual machine, several times more)."""
    store = SqliteStore(":memory:")
    times = []
    for _ in range(count):
        if work_s:
            busy_until = time.perf_counter() + work_s
            while time.perf_counter() < busy_until:
                pass
        start = time.perf_counter()
        await store.commit(lambda db: None)
        times.append(time.perf_counter() - start)
    await store.close()
    return statistics.median(times) * 1e6


def main() -> None:
    r = asyncio.run(measure())
    print("scheduler overhead, coaching-shaped DAG (7 nodes) on scripted instances")
    print(f"  critical path                     {r['critical_path_s']:.3f} s")
    print(
        f"  one turn                          {r['turn_s']:.3f} s  = {r['turn_ratio']:.3f}x critical path   (target <= 1.02x)"
    )
    print(
        f"  lock-step rounds, same latencies  {r['lock_step_ratio']:.3f}x critical path (what rounds would cost at best)"
    )
    print(
        f"  200 sessions at once              {r['sessions_200_s']:.3f} s  = {r['sessions_200_ratio']:.3f}x critical path   (target <= 1.10x)"
    )
    print("  per-node overhead at zero latency (target <= 50 us):")
    print(
        f"    turn time / 7 nodes             {r['per_node_us_file']:.1f} us (SQLite file)   {r['per_node_us_memory']:.1f} us (in-memory SQLite)"
    )
    print(
        f"    each node beyond the first      {r['marginal_node_us_file']:.1f} us (SQLite file)   {r['marginal_node_us_memory']:.1f} us (in-memory SQLite)"
    )
    print(
        f"    on PostgreSQL (local socket)    {r['per_node_us_postgres']:.1f} us per node   {r['marginal_node_us_postgres']:.1f} us each node beyond the first"
    )
    if "per_node_us_file_one_cpu" in r:
        print(
            f"    turn time / 7 nodes, one CPU    {r['per_node_us_file_one_cpu']:.1f} us (SQLite file)   {r['per_node_us_memory_one_cpu']:.1f} us (in-memory SQLite)   (no idle CPU to wake at a crossing)"
        )
        print(
            f"    each node beyond the first, one CPU {r['marginal_node_us_file_one_cpu']:.1f} us (SQLite file)   {r['marginal_node_us_memory_one_cpu']:.1f} us (in-memory SQLite)"
        )
    print(
        f"    one crossing to a thread        {r['crossing_us']:.1f} us (loop -> store thread -> loop; a sequential turn of this DAG waits on 3)"
    )
    print(
        f"      after 1 ms of work on the loop {r['crossing_after_work_us']:.1f} us (= {r['crossing_after_work_us'] / r['crossing_us']:.2f}x: the thread's CPU had gone idle, as within a turn)"
    )


if __name__ == "__main__":
    main()
