"""Model instances shared by many roles: a concurrency cap, a priority queue and a circuit
breaker each.

When an instance is busy, waiting requests are served in order of rank: the early
reply first, then by the agent's priority, then by arrival. An instance that does not
answer fails only the agents that use it: its breaker opens and their calls fail fast.
An instance with several servers (`urls`) has each of them as an Instance of its own, with
its own slots and breaker; which one takes a call is replicas.py's to say.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from cantata.backends import make_backend
from cantata.backends.base import Backend
from cantata.breaker import Breaker
from cantata.config import InstanceConfig, InstancesConfig
from cantata.errors import BackendError, BackendUnavailable, CircuitOpen, ConfigError
from cantata.replicas import Replicas, Route
from cantata.speed import Speed


def rank(*, early: bool, priority: int) -> int:
    """Lower is served first (vLLM's convention), so it can be sent to vLLM as is."""
    return (0 if early else 1_000) - priority


@dataclass
class InstanceStats:
    """What the queue needs; figures over time come from the event log (figures.py)."""

    queued: int = 0
    running: int = 0


@dataclass
class _Waiter:
    rank: int
    seq: int
    prefix: str | None
    future: asyncio.Future[None]


class Instance:
    """One server (or the embedded model): its slots, queue, breaker and measured speed.

    One of several replicas of an instance (replicas.py) is an Instance too: its config is
    the instance's with its own `url` and a name of its own (`gpu#1`, in its breaker's and
    its backend's messages), and `name` stays the instance's, for events and figures."""

    def __init__(self, config: InstanceConfig, backend: Backend, *, replica_of: str | None = None) -> None:
        self.config = config
        self.backend = backend
        self.name = replica_of or config.name
        self.replica = config.name if replica_of else None  # None: the instance's one server
        self.capacity = config.concurrency()
        self.stats = InstanceStats()
        self.speed = Speed()  # measured from the calls it serves: each call's deadline follows it
        self.breaker = Breaker(config.name, failures=config.breaker_failures, cooldown_s=config.breaker_cooldown_s)
        self._verified = False  # answered a check since the breaker last closed
        self._waiting: list[_Waiter] = []
        self._seq = itertools.count()
        self._dispatch_scheduled = False
        self._last_prefix: str | None = None

    @asynccontextmanager
    async def slot(self, rank: int, prefix: str | None = None) -> AsyncIterator[None]:
        """Hold one of the instance's slots; while all are taken, wait by rank.

        Slots are granted by a dispatch scheduled for the end of the current loop tick,
        not on the spot: agents that become ready together (coach and shadow after the
        guard) all join the queue first, and the early reply wins even on a free instance.
        Among equal ranks, a call with the same `prefix` (briefing) as the last one goes
        next, so the instance's prefix cache is reused instead of evicted by another turn.
        """
        if not self._waiting and self.stats.running + 1 < self.capacity:
            # Plenty of room: no one can be displaced, so no need to wait for the tick's end.
            # The last free slot is always handed out by rank.
            self.stats.running += 1
            self._last_prefix = prefix
            try:
                yield
            finally:
                self._release()
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(_Waiter(rank, next(self._seq), prefix, future))
        self.stats.queued += 1
        self._schedule_dispatch()
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release()  # granted just as we were cancelled: pass the slot on
            raise
        finally:
            self.stats.queued -= 1
        try:
            yield
        finally:
            self._release()

    @property
    def ready(self) -> bool:
        """Checked already and taking calls: nothing to ask it before a turn."""
        return self._verified and self.breaker.state == "closed"

    def load(self) -> int:
        """The calls it holds or queues: what routing between replicas compares."""
        return self.stats.running + self.stats.queued

    async def unavailable(self) -> str | None:
        """Why the instance cannot take calls now, or None when it can: checked once (and
        again as the probe once its breaker's cool-down is over); one found down trips it."""
        if self.ready:
            return None
        try:
            self.breaker.admit()
        except CircuitOpen as exc:
            return str(exc)
        try:
            await self.backend.check()
        except BackendError as exc:
            self.breaker.trip(str(exc))
            self._verified = False
            return str(exc)
        except BaseException:
            self.breaker.released()
            raise
        self.breaker.succeeded()
        self._verified = True
        return None

    def _schedule_dispatch(self) -> None:
        if not self._dispatch_scheduled:
            self._dispatch_scheduled = True
            asyncio.get_running_loop().call_soon(self._dispatch)

    def _dispatch(self) -> None:
        self._dispatch_scheduled = False
        self._waiting = [w for w in self._waiting if not w.future.done()]  # drop the cancelled
        while self._waiting and self.stats.running < self.capacity:
            last = self._last_prefix
            waiter = min(self._waiting, key=lambda w: (w.rank, w.prefix != last, w.seq))
            self._waiting.remove(waiter)
            self.stats.running += 1
            self._last_prefix = waiter.prefix
            waiter.future.set_result(None)

    def _release(self) -> None:
        self.stats.running -= 1
        self._dispatch()


class Pool:
    """The instances of one config, and which serves each alias.

    `instances` holds every server by its own name: an instance's one server under the
    instance's name, each replica of one with several `urls` as `NAME#0`, `NAME#1`, ...;
    `replicas` holds, by instance name, the routing between them (replicas.py)."""

    def __init__(self, config: InstancesConfig) -> None:
        self.config = config
        self.instances: dict[str, Instance] = {}
        self.replicas: dict[str, Replicas[Instance]] = {}
        self._by_alias: dict[str, Instance] = {}  # every model call asks: answered once per alias

    def instance_for(self, alias: str) -> Instance:
        """The instance serving `alias`; of replicas, the first (its config and tokenizer are
        theirs all): a call is routed by `route_for`."""
        found = self._by_alias.get(alias)
        if found is not None:
            return found
        inst_config = self.config.instance_for(alias)
        if inst_config is None:
            where = self.config.path or "the built-in config"
            raise ConfigError(
                f"{where}: no instance serves the model alias '{alias}'; add it to an instance's 'serves'"
            )
        if inst_config.urls:
            group = self.replicas.get(inst_config.name) or self._replicate(inst_config)
            found = group.members[0]
        else:
            if inst_config.name not in self.instances:
                self.instances[inst_config.name] = Instance(inst_config, make_backend(inst_config))
            found = self.instances[inst_config.name]
        self._by_alias[alias] = found
        return found

    def route_for(self, alias: str, *, session: str | None, turn: str | None) -> Route[Instance] | None:
        """Where a call of `turn` in `session` goes, attempt by attempt; None when the
        instance has one server."""
        group = self.replicas.get(self.instance_for(alias).name)
        return Route(group, session, turn) if group is not None else None

    def _replicate(self, config: InstanceConfig) -> Replicas[Instance]:
        members = [Instance(own, make_backend(own), replica_of=config.name) for own in config.replicas()]
        self.instances.update((member.config.name, member) for member in members)
        group = self.replicas[config.name] = Replicas(config.name, members, affinity=config.affinity)
        return group

    async def check(self, aliases: list[str]) -> None:
        """Before a turn writes anything: every alias bound (else ConfigError), and some
        instance able to answer (else BackendUnavailable: the config may be right and the
        servers down). An instance that does not answer fails only the agents that use it."""
        needed: dict[str, tuple[Instance, str]] = {}
        for alias in aliases:
            instance = self.instance_for(alias)
            needed.setdefault(instance.name, (instance, alias))
        # Those checked already need no task (the usual case: a task per instance per turn
        # was a fifth of a zero-latency turn's event-loop work). The rest are asked at once: a
        # half-open instance that hangs until its timeout must not hold up the others' answers
        # (nor, through them, the turn's early reply).
        asked = [(instance, alias) for instance, alias in needed.values() if not self._ready(instance)]
        reasons = await asyncio.gather(*(self._unavailable(instance) for instance, _ in asked)) if asked else []
        down = [
            f"instance '{instance.name}' cannot serve '{alias}': {reason}"
            for (instance, alias), reason in zip(asked, reasons, strict=True)
            if reason is not None
        ]
        if down and len(down) == len(needed):
            raise BackendUnavailable("; ".join(down))

    def _ready(self, instance: Instance) -> bool:
        """Nothing to ask before a turn: of replicas, one is ready (a call that fails on
        another moves to it; an open one is probed in the background, replicas.py)."""
        group = self.replicas.get(instance.name)
        return any(member.ready for member in group.members) if group is not None else instance.ready

    async def _unavailable(self, instance: Instance) -> str | None:
        """Why the instance cannot take calls now: of replicas, why none of them can."""
        group = self.replicas.get(instance.name)
        if group is None:
            return await instance.unavailable()
        reasons = await asyncio.gather(*(member.unavailable() for member in group.members))
        return None if None in reasons else "; ".join(r for r in reasons if r is not None)

    async def close(self) -> None:
        for group in self.replicas.values():
            await group.close()
        for instance in self.instances.values():
            await instance.backend.close()
