"""Speed: how long each step of decoding and each prefill takes, and a turn through the DAG.

Decoding one token is bounded by memory bandwidth: every step reads the weights it
uses (the active experts only, for mixture-of-experts) and the KV cache of every
sequence in the batch. Prefill is bounded by compute: 2 FLOPs per active parameter
per prompt token. On top come fixed costs per layer (kernel launches), tensor
parallelism's all-reduces (two per layer per step) and pipeline-parallel hops between
nodes (latency plus the step's activations over the network).
A turn is then simulated event by event: agents start when what they read is
written, roles on one instance share its batch, instances on one GPU share the GPU.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from cantata.planner.catalog import ModelSpec, Quantization
from cantata.planner.hardware import GPUSpec
from cantata.planner.memory import kv_bytes_per_token, kv_replication, weight_bytes
from cantata.planner.workload import Workload

# Fractions of the data-sheet peaks that serving engines reach: decoding attains
# 60-80 % of memory bandwidth, prefill about half of the dense tensor throughput.
BANDWIDTH_EFFICIENCY = 0.75
COMPUTE_EFFICIENCY = 0.5

# Fixed cost per layer per step (kernel launches and synchronisation), the gap
# between bandwidth-bound and observed single-stream decode speeds of small models.
LAYER_OVERHEAD_S = 50e-6

# Latency of one small all-reduce between GPUs of a node; tensor parallelism pays it
# twice per layer per step. Consumer cards without P2P go through host memory.
ALLREDUCE_LATENCY_S = {"nvlink": 10e-6, "pcie": 30e-6}

# Pipeline-parallel stages sit on different nodes: each step hands its activations
# (hidden size x tokens in the step, BF16) to the next node. Assumed: a 100 Gb/s network
# (12.5 GB/s, RoCE or plain Ethernet; InfiniBand HDR is twice that) and 100 us per hop
# for NCCL's send and receive. A decode step moves a few KB, so the latency is its cost;
# a 2048-token prefill moves 16 MB per hop, about 1.3 ms at this bandwidth.
INTERNODE_HOP_S = 100e-6
INTERNODE_BANDWIDTH_GBS = 12.5
ACTIVATION_BYTES = 2


class Engine(BaseModel):
    """One model instance's speed: its model, quantisation, slowest GPU and parallelism."""

    model_config = ConfigDict(frozen=True)

    model: ModelSpec
    quant: Quantization
    gpu: GPUSpec
    tensor_parallel: int = 1
    pipeline_parallel: int = 1

    @property
    def _bandwidth(self) -> float:
        return self.tensor_parallel * self.gpu.bandwidth_gbs * 1e9 * BANDWIDTH_EFFICIENCY

    @property
    def _flops(self) -> float:
        return self.tensor_parallel * self.gpu.tflops * 1e12 * COMPUTE_EFFICIENCY

    def _fixed_step_cost(self, tokens: float = 1.0) -> float:
        """What a step of `tokens` pays beyond reading weights and computing: launches, all-reduces, hops."""
        cost = self.model.layers * LAYER_OVERHEAD_S
        if self.tensor_parallel > 1:
            cost += 2 * self.model.layers * ALLREDUCE_LATENCY_S[self.gpu.interconnect]
        return cost + (self.pipeline_parallel - 1) * self.internode_hop_seconds(tokens)

    def internode_hop_seconds(self, tokens: float) -> float:
        """One hand-over between pipeline stages on two nodes, for a step of `tokens`."""
        activations = tokens * self.model.hidden_size * ACTIVATION_BYTES
        return INTERNODE_HOP_S + activations / (INTERNODE_BANDWIDTH_GBS * 1e9)

    def weight_bytes_read(self, batch: int) -> float:
        """Weight bytes one decode step reads for `batch` sequences.

        Dense models read everything. A mixture-of-experts reads its dense part and
        the experts the batch routes to: with k of E experts per token, a batch of b
        touches E * (1 - (1 - k/E)^b) experts per layer, so batching costs it more.
        """
        total = weight_bytes(self.model, self.quant)
        if not self.model.is_moe or self.model.experts is None or self.model.experts_per_token is None:
            return total
        experts, per_token = self.model.experts, self.model.experts_per_token
        ratio = experts / per_token
        # total = dense + experts_total and active = dense + experts_total / ratio.
        dense = max(0.0, (ratio * self.model.active_params - self.model.params) / (ratio - 1))
        dense_share = dense / self.model.params
        touched = 1 - (1 - per_token / experts) ** max(1, batch)
        return total * (dense_share + (1 - dense_share) * touched)

    def step_seconds(self, batch: int = 1, context_tokens: float = 0.0) -> float:
        """One decode step for `batch` sequences holding `context_tokens` of context in all."""
        kv = kv_bytes_per_token(self.model) * context_tokens * kv_replication(self.model, self.tensor_parallel)
        memory = (self.weight_bytes_read(batch) + kv) / self._bandwidth
        compute = 2 * self.model.active_params * max(1, batch) / self._flops
        return max(memory, compute) + self._fixed_step_cost(max(1, batch))

    def prefill_seconds(self, tokens: float) -> float:
        if tokens <= 0:
            return 0.0
        compute = 2 * self.model.active_params * tokens / self._flops
        # A long prompt routes to every expert: all weights are read at least once.
        memory = self.weight_bytes_read(int(min(tokens, 1 << 16))) / self._bandwidth
        return max(compute, memory) + self._fixed_step_cost(tokens)

    def decode_tokens_per_s(self, context_tokens: float = 0.0) -> float:
        return 1.0 / self.step_seconds(1, context_tokens)

    def prefill_tokens_per_s(self) -> float:
        return 2048 / self.prefill_seconds(2048)


class AgentTiming(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    instance: str | None
    start_s: float
    end_s: float


class TurnTiming(BaseModel):
    model_config = ConfigDict(frozen=True)

    agents: list[AgentTiming]
    early_agent: str | None
    early_s: float | None
    final_agent: str | None
    final_s: float


def simulate_turn(
    workload: Workload,
    assignment: dict[str, str],
    engines: dict[str, Engine],
    instance_gpus: dict[str, list[str]],
    turns: int = 1,
) -> TurnTiming:
    """Run one turn (or `turns` identical turns at once) through the DAG on the planned instances.

    assignment: role -> instance; engines: instance -> Engine; instance_gpus:
    instance -> GPU keys it runs on (instances sharing a GPU take turns on it).
    """
    agents = workload.agents
    roles = workload.roles
    done: dict[str, float] = {}
    started: dict[str, float] = {}
    prefill_end: dict[str, float] = {}
    remaining: dict[str, float] = {}  # output tokens still to decode
    warmed: set[str] = set()  # instances whose briefing is in the prefix cache this turn
    now = 0.0

    def start_ready() -> None:
        progressed = True
        while progressed:
            progressed = False
            for name in workload.order:
                if name in started or not all(r in done for r in agents[name].reads):
                    continue
                started[name] = now
                if name in workload.functions:
                    done[name] = now
                    progressed = True
                    continue
                role = roles[name]
                instance = assignment[name]
                tokens = role.prompt_tokens - (role.briefing_tokens if instance in warmed else 0)
                warmed.add(instance)
                prefill_end[name] = now + engines[instance].prefill_seconds(tokens * turns)

    def step_times(decoding: list[str]) -> dict[str, float]:
        busy: dict[str, set[str]] = {}
        for name in [*decoding, *(n for n in prefill_end if n not in done and n not in remaining)]:
            for gpu in instance_gpus[assignment[name]]:
                busy.setdefault(gpu, set()).add(assignment[name])
        out: dict[str, float] = {}
        for instance in {assignment[n] for n in decoding}:
            batch = [n for n in decoding if assignment[n] == instance]
            context = turns * sum(roles[n].prompt_tokens + roles[n].output_tokens / 2 for n in batch)
            share = max(len(busy.get(g, {instance})) for g in instance_gpus[instance])
            out[instance] = engines[instance].step_seconds(len(batch) * turns, context) * share
        return out

    start_ready()
    while len(done) < len(agents):
        decoding = [n for n in remaining if n not in done]
        prefilling = [n for n in prefill_end if n not in done and n not in remaining]
        if not decoding and not prefilling:
            raise RuntimeError("the DAG cannot make progress")  # load_pipeline rejects cycles
        steps = step_times(decoding)
        candidates = [prefill_end[n] for n in prefilling]
        candidates += [now + remaining[n] * steps[assignment[n]] for n in decoding]
        nxt = min(candidates)
        for n in decoding:
            remaining[n] -= (nxt - now) / steps[assignment[n]]
        now = nxt
        for n in prefilling:
            if prefill_end[n] <= now + 1e-12:
                remaining[n] = float(roles[n].output_tokens)
        for n in decoding:
            if remaining[n] <= 1e-6:
                done[n] = now
        start_ready()

    timings = [
        AgentTiming(name=n, instance=assignment.get(n), start_s=started[n], end_s=done[n]) for n in workload.order
    ]
    early = workload.spec.deliverer("early")
    final = workload.spec.deliverer("final")
    return TurnTiming(
        agents=timings,
        early_agent=early.name if early else None,
        early_s=done[early.name] if early else None,
        final_agent=final.name if final else None,
        final_s=done[final.name] if final else max(done.values()),
    )
