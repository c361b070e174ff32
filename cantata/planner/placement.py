"""Packing instances onto GPUs: tensor parallel inside a node, pipeline parallel across nodes.

Instances are placed largest first. Each takes the fewest GPUs that hold it: one GPU,
else tensor parallelism over 2, 4 or 8 GPUs of one node, else pipeline stages on
several nodes. Among GPUs that fit, the emptiest go first, which spreads instances
over the cards (each gets more bandwidth to itself) while the big ones are still
placed before the small ones fragment the memory.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from cantata.planner.catalog import ModelSpec, Quantization
from cantata.planner.hardware import GPU, Hardware, Node
from cantata.planner.memory import GB, per_gpu_bytes

TP_SIZES = (1, 2, 4, 8)


class InstanceRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    model: ModelSpec
    quant: Quantization
    kv_budget: float


class Placement(BaseModel):
    model_config = ConfigDict(frozen=True)

    gpus: list[GPU]
    tensor_parallel: int
    pipeline_parallel: int
    per_gpu_bytes: float


class PackingError(Exception):
    """An instance does not fit; `reason` says by how much, for the user."""

    def __init__(self, request: InstanceRequest, reason: str) -> None:
        super().__init__(reason)
        self.request = request
        self.reason = reason


def _tp_sizes(model: ModelSpec, limit: int) -> list[int]:
    # vLLM splits attention heads evenly over tensor-parallel ranks.
    return [tp for tp in TP_SIZES if tp <= limit and model.attention_heads % tp == 0]


def _fit_in_node(
    node: Node, free: dict[str, float], tp: int, need: float, taken: frozenset[str] = frozenset()
) -> list[GPU] | None:
    gpus = sorted((g for g in node.gpus if g.key not in taken), key=lambda g: -free[g.key])[:tp]
    if len(gpus) == tp and all(free[g.key] >= need for g in gpus):
        return gpus
    return None


def _place_one(
    request: InstanceRequest, hardware: Hardware, free: dict[str, float], min_tp: int, on_ray: frozenset[str]
) -> Placement:
    """on_ray: the GPUs holding a stage of an instance across nodes already; Ray reserves a whole
    GPU for each rank (vLLM's Ray executor), so no second such instance goes there."""
    model, quant, kv = request.model, request.quant, request.kv_budget
    nodes = sorted(hardware.nodes, key=lambda n: -sum(free[g.key] for g in n.gpus))
    for tp in _tp_sizes(model, max(len(n.gpus) for n in hardware.nodes)):
        if tp < min_tp:
            continue
        need = per_gpu_bytes(model, quant, kv, tp, 1)
        for node in nodes:
            gpus = _fit_in_node(node, free, tp, need)
            if gpus is not None:
                return Placement(gpus=gpus, tensor_parallel=tp, pipeline_parallel=1, per_gpu_bytes=need)
    # Pipeline stages go on nodes with cards of one size: vLLM gives every rank the same
    # --gpu-memory-utilization fraction, which on a larger card would claim more than planned.
    sizes = sorted({n.gpus[0].spec.memory_gb for n in hardware.nodes}, reverse=True)
    for size in sizes:
        alike = [n for n in nodes if n.gpus[0].spec.memory_gb == size]
        for pp in range(2, min(len(alike), model.layers) + 1):
            for tp in _tp_sizes(model, min(len(n.gpus) for n in alike)):
                if tp < min_tp:
                    continue
                need = per_gpu_bytes(model, quant, kv, tp, pp)
                stages: list[GPU] = []
                for node in alike:
                    gpus = _fit_in_node(node, free, tp, need, on_ray)
                    if gpus is not None:
                        stages.extend(gpus)
                    if len(stages) == tp * pp:
                        return Placement(gpus=stages, tensor_parallel=tp, pipeline_parallel=pp, per_gpu_bytes=need)
    raise PackingError(request, _shortfall(request, hardware, free, on_ray))


def _shortfall(
    request: InstanceRequest, hardware: Hardware, free: dict[str, float], on_ray: frozenset[str] = frozenset()
) -> str:
    """Why it does not fit, in the terms of its best chance (all GPUs of the largest node, or all nodes)."""
    model, quant, kv = request.model, request.quant, request.kv_budget
    total_need = per_gpu_bytes(model, quant, kv, 1, 1)
    free_total = sum(free.values())
    usable = hardware.usable_bytes
    largest = max(free.values())
    return (
        f"{model.name} {quant.name} needs {total_need / GB:.1f} GB (weights, KV cache, runtime) "
        f"but {hardware.name} has {free_total / GB:.1f} GB free of {usable / GB:.1f} GB usable, "
        f"at most {largest / GB:.1f} GB on one GPU, and no split over GPUs holds it"
        + (
            f" ({len(on_ray)} GPU(s) hold a stage of a server spanning nodes, where Ray gives each rank a whole GPU)"
            if on_ray
            else ""
        )
    )


def pack(
    requests: list[InstanceRequest], hardware: Hardware, min_tp: dict[str, int] | None = None
) -> dict[str, Placement]:
    """Place every request or raise PackingError naming the first that does not fit.

    min_tp asks for at least that much tensor parallelism for an instance (to use idle
    GPUs for speed); by default each instance takes the fewest GPUs that hold it.
    """
    free = {g.key: g.spec.usable_bytes for g in hardware.gpus}
    on_ray: set[str] = set()
    placed: dict[str, Placement] = {}
    for request in sorted(requests, key=lambda r: -per_gpu_bytes(r.model, r.quant, r.kv_budget, 1, 1)):
        placement = _place_one(request, hardware, free, (min_tp or {}).get(request.name, 1), frozenset(on_ray))
        for gpu in placement.gpus:
            free[gpu.key] -= placement.per_gpu_bytes
        if placement.pipeline_parallel > 1:
            on_ray.update(g.key for g in placement.gpus)
        placed[request.name] = placement
    return placed


def stretch(
    requests: list[InstanceRequest], one_node: dict[str, Placement], hardware: Hardware
) -> dict[str, Placement]:
    """A plan made for node 0 laid across every node of `hardware`: each instance keeps its GPUs,
    now on every node, one pipeline stage per node (one copy of its weights instead of one per node).

    Raises PackingError for an instance with fewer layers than stages, for instances sharing a
    GPU (over one Ray cluster each rank claims a whole GPU, see _place_one), or for one that no
    longer fits (its KV budget in `requests` is for all the turns in flight, not one node's share).
    """
    by_key = {g.key: g for g in hardware.gpus}
    free = {g.key: g.spec.usable_bytes for g in hardware.gpus}
    placed: dict[str, Placement] = {}
    for request in requests:
        own = one_node[request.name]
        stages = own.pipeline_parallel * len(hardware.nodes)
        need = per_gpu_bytes(request.model, request.quant, request.kv_budget, own.tensor_parallel, stages)
        gpus = [by_key[f"n{node.index}:{gpu.index}"] for node in hardware.nodes for gpu in own.gpus]
        if stages > request.model.layers:
            raise PackingError(request, f"{request.model.name} has fewer layers ({request.model.layers}) than stages")
        shared = next((name for name, other in placed.items() if set(other.gpus) & set(gpus)), None)
        if shared is not None:
            raise PackingError(
                request,
                f"{request.name} and {shared} share GPUs, and over one Ray cluster each rank of a server "
                "spanning nodes claims a whole GPU",
            )
        if any(free[g.key] < need for g in gpus):
            raise PackingError(request, _shortfall(request, hardware, free))
        for gpu in gpus:
            free[gpu.key] -= need
        placed[request.name] = Placement(
            gpus=gpus, tensor_parallel=own.tensor_parallel, pipeline_parallel=stages, per_gpu_bytes=need
        )
    return placed
