"""Several identical nodes: a replica of the one-node plan on each, or one copy spanning them.

The rule (plan.py's docstring, the README's planner section): replicas are planned only while
(n-1) x W <= n x (N - W), that is while they keep at least half the KV cache of one copy
spanning the n nodes (W: the weights of the one-node plan's instances together, N: a node's
usable memory), and while they score at least as well as the plan made for all the nodes.

Past the bound, the one copy is the plan made for all the nodes when it already uses every
node (several instances, each on a node of its own or spanning where it must), else the
one-node plan stretched: each instance keeps its GPUs, now on every node, one pipeline stage
per node. Replicas stay past the bound only where neither can be launched: servers spanning
nodes that would share a GPU (vLLM's Ray executor reserves a whole GPU for each rank), or a
model with fewer layers than nodes; the plan's first note says so, with the figures.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from cantata.planner.memory import GB, weight_bytes
from cantata.planner.placement import PackingError, Placement, stretch
from cantata.planner.selection import Planner, Selection


@dataclass(frozen=True)
class NodeMemory:
    """The rule's figures: n nodes of N usable bytes each, and W, one copy of the weights."""

    nodes: int
    node_bytes: float
    weights: float

    @property
    def replicas_kv(self) -> float:
        """What replicas keep for the KV cache: each node, less its copy of the weights."""
        return self.nodes * (self.node_bytes - self.weights)

    @property
    def spanning_kv(self) -> float:
        """What the spanning plan keeps: all the nodes, less one copy."""
        return self.nodes * self.node_bytes - self.weights

    @property
    def replicas_pay(self) -> bool:
        # 2 n (N - W) >= n N - W, which is (n - 1) W <= n (N - W).
        return (self.nodes - 1) * self.weights <= self.nodes * (self.node_bytes - self.weights)

    def figures(self) -> str:
        return (
            f"replicas would copy {self.weights / GB:.0f} GB of weights onto each node and keep "
            f"{self.replicas_kv / GB:.0f} GB for the KV cache, under half of the {self.spanning_kv / GB:.0f} GB "
            "the spanning plan keeps"
        )


@dataclass(frozen=True)
class Layout:
    """What runs on the nodes: `selection`, planned by `planner`, on each of `replicas` nodes."""

    planner: Planner
    selection: Selection
    replicas: int
    note: str | None = None  # what the rule weighed, when replicas were possible but did not pay


def lay_out(planner: Planner, whole: Selection) -> Layout:
    """Replicas of a one-node plan, the same plan spanning the nodes, or `whole` (planned for all of them)."""
    hardware = planner.hardware
    if not hardware.identical_nodes:
        return Layout(planner, whole, 1)
    count = len(hardware.nodes)
    # Each replica takes its share of the turns in flight.
    share = -(-planner.concurrency // count)
    per_node = Planner(planner.workload, hardware.first_node(), planner.catalog, planner.forced, planner.context, share)
    single = per_node.search()
    if not isinstance(single, Selection) or single.score < whole.score * (1 - 1e-9):
        return Layout(planner, whole, 1)
    weights = sum(weight_bytes(r.model, r.quant) for r in single.requests)
    memory = NodeMemory(count, hardware.first_node().usable_bytes, weights)
    if memory.replicas_pay:
        return Layout(per_node, single, count)
    why = memory.figures()
    # One copy of each instance: as planned for all the nodes if that plan already uses them all,
    # else the one-node plan stretched, each instance on the same GPUs of every node.
    if set(whole.roles_of) == set(single.roles_of) and _nodes_used(whole) == count:
        return Layout(planner, whole, 1, f"{why}: {_spans(whole, count)}")
    shaped = planner.instances(single.assignment)  # sized for all the turns in flight
    try:
        spanning = planner.simulate(replace(shaped, placements=stretch(shaped.requests, single.placements, hardware)))
    except PackingError as exc:
        return Layout(per_node, single, count, f"{why}, but {exc.reason}: each node runs a replica")
    return Layout(planner, spanning, 1, f"{why}: {_spans(spanning, count)}")


def _nodes_used(selection: Selection) -> int:
    return len({g.node for p in selection.placements.values() for g in p.gpus})


def _spans(selection: Selection, nodes: int) -> str:
    """Where the one copy of each instance runs."""
    placed = selection.placements
    if len(placed) == 1:
        (only,) = placed.values()
        if only.pipeline_parallel > 1:
            return (
                f"one instance spans the {nodes} nodes, pipeline parallel {only.pipeline_parallel} x tensor parallel "
                f"{only.tensor_parallel}"
            )
    where = "; ".join(f"{name} {_where(p)}" for name, p in placed.items())
    return f"one copy of each of the {len(placed)} instances runs across the {nodes} nodes ({where})"


def _where(placement: Placement) -> str:
    nodes = sorted({g.node for g in placement.gpus})
    if placement.pipeline_parallel > 1:
        return (
            f"on nodes {', '.join(map(str, nodes))}, pipeline parallel {placement.pipeline_parallel} x tensor "
            f"parallel {placement.tensor_parallel}"
        )
    return f"on node {nodes[0]}, tensor parallel {placement.tensor_parallel}"
