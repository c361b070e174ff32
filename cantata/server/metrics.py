"""Prometheus metrics of one server, in a registry of its own (two apps in one process,
as in tests, never share counters). Turn figures are recorded from each TurnResult;
queue depth and running calls are read from the pool when scraped."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from cantata.breaker import STATE_VALUES
from cantata.pool import Pool
from cantata.turn import TurnResult

_SECONDS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300)


class _Live(Collector):
    def __init__(self, pool: Pool, running_turns: Callable[[], int]) -> None:
        self.pool = pool
        self.running_turns = running_turns

    def collect(self) -> Iterator[GaugeMetricFamily]:
        queued = GaugeMetricFamily("cantata_instance_queued", "Calls waiting for a slot", labels=["instance"])
        running = GaugeMetricFamily("cantata_instance_running", "Calls generating now", labels=["instance"])
        circuit = GaugeMetricFamily(
            "cantata_instance_circuit",
            "Circuit breaker: 0 closed, 1 half-open (one probe may go), 2 open (calls fail fast)",
            labels=["instance"],
        )
        for name, instance in sorted(self.pool.instances.items()):
            queued.add_metric([name], instance.stats.queued)
            running.add_metric([name], instance.stats.running)
            circuit.add_metric([name], STATE_VALUES[instance.breaker.state])
        yield queued
        yield running
        yield circuit
        turns = GaugeMetricFamily("cantata_turns_running", "Turns in flight")
        turns.add_metric([], self.running_turns())
        yield turns


class Metrics:
    def __init__(self, pool: Pool, running_turns: Callable[[], int]) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.turns = Counter("cantata_turns", "Turns finished", ["pipeline", "status"], registry=r)
        self.early = Histogram(
            "cantata_early_reply_seconds", "Time to the early reply", ["pipeline"], buckets=_SECONDS, registry=r
        )
        self.final = Histogram(
            "cantata_final_reply_seconds", "Time to the final reply", ["pipeline"], buckets=_SECONDS, registry=r
        )
        self.agent = Histogram(
            "cantata_agent_seconds",
            "Agent latency, start to finish",
            ["pipeline", "agent"],
            buckets=_SECONDS,
            registry=r,
        )
        self.failures = Counter("cantata_agent_failures", "Agents failed or skipped", ["pipeline", "agent"], registry=r)
        self.retries = Counter("cantata_agent_retries", "Extra attempts", ["pipeline", "agent"], registry=r)
        self.tokens = Counter("cantata_tokens", "Tokens by kind", ["pipeline", "kind"], registry=r)
        r.register(_Live(pool, running_turns))

    def record(self, result: TurnResult) -> None:
        p = result.pipeline
        self.turns.labels(p, result.status).inc()
        if result.early is not None:
            self.early.labels(p).observe(result.early.at_s)
        if result.final is not None:
            self.final.labels(p).observe(result.final.at_s)
        for agent in result.agents:
            if agent.status == "ok" and agent.started_s is not None and agent.finished_s is not None:
                self.agent.labels(p, agent.name).observe(agent.finished_s - agent.started_s)
            if agent.status in ("failed", "skipped"):
                self.failures.labels(p, agent.name).inc()
            if agent.attempts > 1:
                self.retries.labels(p, agent.name).inc(agent.attempts - 1)
            self.tokens.labels(p, "prompt").inc(agent.prompt_tokens)
            self.tokens.labels(p, "cached").inc(agent.cached_tokens)
            self.tokens.labels(p, "completion").inc(agent.completion_tokens)

    def render(self) -> bytes:
        return generate_latest(self.registry)
