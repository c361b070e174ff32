"""Replicas of an instance: several servers of the same model, and which one takes a call.

A call goes to the least loaded healthy replica. Load is Cantata's own count of the calls
each replica holds or queues (its slots are per replica: a server's capacity is its own),
plus what the server says is waiting on its `/metrics` (vLLM's `num_requests_waiting`),
scraped in the background every METRICS_INTERVAL_S and never on a call's path; a server
with no such figures (llama-cpp-python) is judged by Cantata's counts alone. Ties go round
the replicas, as any load balancer would, rather than always to the first.

Affinity, so that prefixes stay cached: the agents of one turn share a briefing, so they
go where the turn's first call went; a session's next turn goes where its last call went.
Either holds while that replica is healthy and not overloaded: a replica is overloaded
when its load exceeds the least loaded healthy replica's by more than a quarter of its
slots (at least one), or when its server reports its KV cache KV_FULL full (a cached
prefix is evicted there anyway). Then the call goes to the least loaded one, which becomes
the turn's and the session's.

Health is each replica's own circuit breaker (breaker.py): an open replica leaves the
rotation; once its cool-down is over, the background watch probes it (its model list,
as the check before a turn does) and an answer brings it back. A call whose attempt the
server failed is retried on another replica at once (model_call.py), within its retries.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from cantata.breaker import Breaker
from cantata.config import InstanceConfig
from cantata.server_metrics import ServerFigures, scrape

METRICS_INTERVAL_S = 5.0
KV_FULL = 0.95
REMEMBERED = 4096  # sessions and turns whose replica is remembered, the most recent kept


class Replica(Protocol):
    """What routing needs of a server (pool.Instance)."""

    config: InstanceConfig
    capacity: int
    breaker: Breaker

    def load(self) -> int: ...

    async def unavailable(self) -> str | None: ...


R = TypeVar("R", bound=Replica)


class Replicas(Generic[R]):
    """The replicas of one instance and the memory of which served each session and turn."""

    def __init__(self, name: str, members: list[R], *, affinity: bool) -> None:
        self.name = name
        self.members = members
        self.affinity = affinity
        self.server: dict[int, ServerFigures] = {}  # by member index, as last scraped
        self._sticky: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._rotation = itertools.count()  # ties go round the replicas
        self._watch: asyncio.Task[None] | None = None

    def choose(self, *, session: str | None, turn: str | None, failed: R | None = None) -> R:
        """The replica for a call of `turn` in `session`, not `failed` (the one its last
        attempt failed on) while another is usable; remembered for the turn and session."""
        self._start_watch()
        indexes = range(len(self.members))
        healthy = [i for i in indexes if self._healthy(i) and self.members[i] is not failed]
        if not healthy:
            # None healthy: the call goes where it fails fast (CircuitOpen says why and when).
            healthy = [i for i in indexes if self.members[i] is not failed] or list(indexes)
        keys = [("turn", turn), ("session", session)] if self.affinity else []
        lightest = min(self._load(i) for i in healthy)
        chosen = next(
            (
                i
                for kind, key in keys
                if key is not None
                and (i := self._sticky.get((kind, key), -1)) in healthy
                and not self._overloaded(i, lightest)
            ),
            None,
        )
        if chosen is None:
            least = [i for i in healthy if self._load(i) == lightest]
            least = [i for i in least if not self._cache_full(i)] or least
            chosen = least[next(self._rotation) % len(least)]
        for kind, key in keys:
            if key is not None:
                self._remember((kind, key), chosen)
        return self.members[chosen]

    def others_usable(self, member: R) -> bool:
        """Whether a call that failed on `member` has a healthy replica to go to."""
        return any(self._healthy(i) for i, m in enumerate(self.members) if m is not member)

    def _healthy(self, i: int) -> bool:
        # Half-open is not yet healthy: the watch's probe, not a user's call, finds out.
        return self.members[i].breaker.state == "closed"

    def _load(self, i: int) -> int:
        figures = self.server.get(i)
        waiting = int(figures.requests_waiting or 0) if figures else 0
        return self.members[i].load() + waiting

    def _overloaded(self, i: int, lightest: int) -> bool:
        return self._cache_full(i) or self._load(i) - lightest > max(1, self.members[i].capacity // 4)

    def _cache_full(self, i: int) -> bool:
        figures = self.server.get(i)
        return figures is not None and (figures.kv_cache_usage or 0.0) >= KV_FULL

    def _remember(self, key: tuple[str, str], index: int) -> None:
        self._sticky[key] = index
        self._sticky.move_to_end(key)
        while len(self._sticky) > 2 * REMEMBERED:
            self._sticky.popitem(last=False)

    def _start_watch(self) -> None:
        if self._watch is None or self._watch.done():
            self._watch = asyncio.get_running_loop().create_task(self._watch_servers())

    async def _watch_servers(self) -> None:
        """Scrape each server's metrics and probe each replica whose cool-down is over, in the
        background: a call never waits for either."""
        interval = min(METRICS_INTERVAL_S, min(m.breaker.base_cooldown_s for m in self.members))
        scraped_at = -METRICS_INTERVAL_S
        loop = asyncio.get_running_loop()
        while True:
            if loop.time() - scraped_at >= METRICS_INTERVAL_S:
                scraped_at = loop.time()
                found = await asyncio.gather(*(_scrape(m) for m in self.members))
                self.server = {i: figures for i, figures in enumerate(found) if figures is not None}
            due = [m for m in self.members if m.breaker.state == "half_open" and not m.breaker.probing]
            await asyncio.gather(*(m.unavailable() for m in due))
            await asyncio.sleep(interval)

    async def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)


async def _scrape(member: Replica) -> ServerFigures | None:
    return await scrape(member.config.url, timeout=2.0) if member.config.url else None


@dataclass
class Route(Generic[R]):
    """Where one agent's call goes, attempt by attempt (ModelCall)."""

    replicas: Replicas[R]
    session: str | None
    turn: str | None

    def next(self, failed: R | None = None) -> R:
        return self.replicas.choose(session=self.session, turn=self.turn, failed=failed)
