"""Model instances shared by many roles: a concurrency cap and a priority queue each.

When an instance is busy, waiting requests are served in order of rank: the early
reply first, then by the agent's priority, then by arrival.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from cantata.backends import make_backend
from cantata.backends.base import Backend, Usage
from cantata.config import InstanceConfig, InstancesConfig
from cantata.errors import BackendError, ConfigError


def rank(*, early: bool, priority: int) -> int:
    """Lower is served first (vLLM's convention), so it can be sent to vLLM as is."""
    return (0 if early else 1_000) - priority


@dataclass
class InstanceStats:
    queued: int = 0
    running: int = 0
    completed: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    running_agents: set[str] = field(default_factory=set)

    def record(self, usage: Usage) -> None:
        self.completed += 1
        self.prompt_tokens += usage.prompt_tokens
        self.cached_tokens += usage.cached_tokens
        self.completion_tokens += usage.completion_tokens


@dataclass(order=True)
class _Waiter:
    rank: int
    seq: int
    future: asyncio.Future[None] = field(compare=False)


class Instance:
    def __init__(self, config: InstanceConfig, backend: Backend) -> None:
        self.config = config
        self.backend = backend
        self.name = config.name
        self.capacity = config.concurrency()
        self.stats = InstanceStats()
        self._waiting: list[_Waiter] = []
        self._seq = itertools.count()

    @asynccontextmanager
    async def slot(self, rank: int) -> AsyncIterator[None]:
        """Hold one of the instance's slots; wait by rank while all are taken."""
        if self.stats.running >= self.capacity or self._waiting:
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            waiter = _Waiter(rank, next(self._seq), future)
            heapq.heappush(self._waiting, waiter)
            self.stats.queued += 1
            try:
                await future
            except asyncio.CancelledError:
                if future.done() and not future.cancelled():
                    # We were handed a slot just as we were cancelled: pass it on.
                    self._release()
                else:
                    self._waiting.remove(waiter)
                    heapq.heapify(self._waiting)
                raise
            finally:
                self.stats.queued -= 1
        else:
            self.stats.running += 1
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        while self._waiting:
            waiter = heapq.heappop(self._waiting)
            if not waiter.future.done():
                # The slot passes straight to the waiter: `running` does not change.
                waiter.future.set_result(None)
                return
        self.stats.running -= 1


class Pool:
    """The instances of one config, and which serves each alias."""

    def __init__(self, config: InstancesConfig) -> None:
        self.config = config
        self.instances: dict[str, Instance] = {}

    def instance_for(self, alias: str) -> Instance:
        inst_config = self.config.instance_for(alias)
        if inst_config is None:
            where = self.config.path or "the built-in config"
            raise ConfigError(f"{where}: no instance serves the model alias '{alias}'; add it to an instance's 'serves'")
        if inst_config.name not in self.instances:
            self.instances[inst_config.name] = Instance(inst_config, make_backend(inst_config))
        return self.instances[inst_config.name]

    async def check(self, aliases: list[str]) -> None:
        """Before a turn writes anything: every alias bound, every instance reachable."""
        for alias in aliases:
            instance = self.instance_for(alias)
            try:
                await instance.backend.check()
            except BackendError as exc:
                raise ConfigError(f"instance '{instance.name}' cannot serve '{alias}': {exc}") from None

    async def close(self) -> None:
        for instance in self.instances.values():
            await instance.backend.close()
