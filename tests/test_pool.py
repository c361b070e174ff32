"""An instance shared by many roles: concurrency cap, early first, then priority, prefix affinity."""

from __future__ import annotations

import asyncio

import pytest

from cantata.backends.scripted import ScriptedBackend
from cantata.config import InstanceConfig, load_config
from cantata.pool import Instance, Pool, rank
from tests.helpers.pipelines import WriteFile, scripted_config


def instance(capacity: int) -> Instance:
    config = InstanceConfig(name="one", backend="scripted", max_concurrency=capacity)
    return Instance(config, ScriptedBackend(config))


async def order_of(inst: Instance, waiters: list[tuple[str, int, str | None]], holder_prefix: str | None) -> list[str]:
    """Hold the only slot, queue `waiters` (name, rank, prefix), release, and return who ran in order."""
    ran: list[str] = []
    release = asyncio.Event()

    async def hold() -> None:
        async with inst.slot(rank(early=False, priority=0), holder_prefix):
            await release.wait()

    async def wait(name: str, r: int, prefix: str | None) -> None:
        async with inst.slot(r, prefix):
            ran.append(name)
            await asyncio.sleep(0)

    holder = asyncio.create_task(hold())
    await asyncio.sleep(0.01)
    tasks = [asyncio.create_task(wait(*w)) for w in waiters]
    await asyncio.sleep(0.01)
    assert inst.stats.queued == len(waiters) and inst.stats.running == 1
    release.set()
    await asyncio.gather(holder, *tasks)
    assert inst.stats.running == 0 and inst.stats.queued == 0
    return ran


async def test_rank_then_arrival() -> None:
    normal, important, early = (
        rank(early=False, priority=0),
        rank(early=False, priority=5),
        rank(early=True, priority=0),
    )
    ran = await order_of(instance(1), [("a", normal, None), ("b", important, None), ("c", early, None)], None)
    assert ran == ["c", "b", "a"]


async def test_same_briefing_goes_next_among_equal_ranks() -> None:
    normal = rank(early=False, priority=0)
    waiters = [("other-turn", normal, "turn:2"), ("same-turn-1", normal, "turn:1"), ("same-turn-2", normal, "turn:1")]
    ran = await order_of(instance(1), waiters, holder_prefix="turn:1")
    assert ran == ["same-turn-1", "same-turn-2", "other-turn"]
    # ...but never ahead of a higher rank.
    early = rank(early=True, priority=0)
    ran = await order_of(instance(1), [("same", normal, "turn:1"), ("early", early, "turn:2")], holder_prefix="turn:1")
    assert ran == ["early", "same"]


async def test_cap_is_respected_and_cancelled_waiters_are_dropped() -> None:
    inst = instance(2)
    peak = 0

    async def use() -> None:
        nonlocal peak
        async with inst.slot(0):
            peak = max(peak, inst.stats.running)
            await asyncio.sleep(0.01)

    tasks = [asyncio.create_task(use()) for _ in range(6)]
    await asyncio.sleep(0)
    tasks[-1].cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert peak == 2 and inst.stats.running == 0


async def test_instances_are_checked_at_once_so_a_hanging_one_holds_up_no_other(
    write: WriteFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`hanging` answers only once `quick` has been asked: checked one after the other, the
    check would never end."""
    pool = Pool(load_config(scripted_config(write, hanging={"serves": ["a"]}, quick={"serves": ["b"]})))
    asked = asyncio.Event()

    async def hang() -> None:
        await asked.wait()

    async def answer() -> None:
        asked.set()

    monkeypatch.setattr(pool.instance_for("a").backend, "check", hang)
    monkeypatch.setattr(pool.instance_for("b").backend, "check", answer)
    try:
        await asyncio.wait_for(pool.check(["a", "b"]), timeout=60)  # a deadlock fails, not a slow check
    finally:
        await pool.close()
    assert asked.is_set()
