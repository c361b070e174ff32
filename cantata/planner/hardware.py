"""GPUs, nodes and hardware profiles: what the plan is packed onto.

Profiles come from `hardware.yaml`; `NODESxGPUSxTYPE` (e.g. "2x8xa100-80") names nodes
of a known GPU type without a profile; a custom spec `COUNTxMEMGB@BANDWIDTH[/TFLOPS]`
(e.g. "2x24GB@1008") describes one node of identical GPUs.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from cantata.errors import UserError

HARDWARE_FILE = Path(__file__).with_name("hardware.yaml")

# vLLM's --gpu-memory-utilization fractions of all instances on one GPU add up to at
# most this: the rest is CUDA's own reservations, fragmentation and the desktop.
USABLE_FRACTION = 0.9

# For a custom spec without TFLOPS: compute is estimated from bandwidth with the
# ratio of the A100 and RTX 4090 (about 0.15-0.16 TFLOPS per GB/s).
TFLOPS_PER_GBS = 0.155

Interconnect = Literal["pcie", "nvlink"]

CUSTOM_SPEC = re.compile(
    r"^\s*(?P<count>\d+)\s*x\s*(?P<mem>\d+(?:\.\d+)?)\s*GB\s*@\s*(?P<bw>\d+(?:\.\d+)?)"
    r"(?:\s*/\s*(?P<tflops>\d+(?:\.\d+)?))?\s*$",
    re.IGNORECASE,
)
CUSTOM_FORM = "COUNTxMEMGB@BANDWIDTH[/TFLOPS], e.g. 2x24GB@1008 (two 24 GB GPUs at 1008 GB/s)"

NODES_SPEC = re.compile(r"^\s*(?:(?P<nodes>\d+)\s*x\s*)?(?P<gpus>\d+)\s*x\s*(?P<type>[a-z0-9][a-z0-9._-]*)\s*$", re.I)
NODES_FORM = "NODESxGPUSxTYPE, e.g. 2x8xa100-80 (two nodes of eight A100 80GB), or GPUSxTYPE for one node"
# Bounds on a NODESxGPUSxTYPE spec: beyond them a typo, not a cluster (and the packer's
# time and memory grow with the GPUs it is given).
FORMS = f"{NODES_FORM}, or {CUSTOM_FORM}"
MAX_NODES = 64
MAX_GPUS_PER_NODE = 16


class GPUSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    label: str
    memory_gb: float = Field(gt=0)
    bandwidth_gbs: float = Field(gt=0)
    tflops: float = Field(gt=0)
    interconnect: Interconnect = "pcie"
    aliases: tuple[str, ...] = ()

    @property
    def memory_bytes(self) -> float:
        return self.memory_gb * 1e9

    @property
    def usable_bytes(self) -> float:
        return self.memory_bytes * USABLE_FRACTION


class GPU(BaseModel):
    """One physical GPU of a profile: node index, index within the node, and its spec."""

    model_config = ConfigDict(frozen=True)

    node: int
    index: int
    spec: GPUSpec

    @property
    def key(self) -> str:
        return f"n{self.node}:{self.index}"


class Node(BaseModel):
    model_config = ConfigDict(frozen=True)

    index: int
    gpus: list[GPU]


class Hardware(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    nodes: list[Node]

    @property
    def gpus(self) -> list[GPU]:
        return [gpu for node in self.nodes for gpu in node.gpus]

    @property
    def memory_gb(self) -> float:
        return sum(g.spec.memory_gb for g in self.gpus)

    @property
    def usable_bytes(self) -> float:
        return sum(g.spec.usable_bytes for g in self.gpus)

    @property
    def identical_nodes(self) -> bool:
        """Several nodes with the same GPUs: what one node can run, each can run a copy of."""
        first = [g.spec for g in self.nodes[0].gpus]
        return len(self.nodes) > 1 and all([g.spec for g in n.gpus] == first for n in self.nodes[1:])

    def first_node(self) -> Hardware:
        """Node 0 alone, under this hardware's name: the unit a plan with replicas is made for."""
        return Hardware(name=self.name, description=self.description, nodes=self.nodes[:1])

    def summary(self) -> str:
        parts = []
        for node in self.nodes:
            spec = node.gpus[0].spec
            parts.append(f"{len(node.gpus)}x {spec.label} ({spec.memory_gb:g} GB, {spec.bandwidth_gbs:g} GB/s)")
        where = " + ".join(parts) if len(parts) == 1 else "; ".join(f"node {i}: {p}" for i, p in enumerate(parts))
        return f"{self.name}: {where}"


class _NodeEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gpu: str
    count: int = Field(gt=0)


class _Profile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str
    nodes: list[_NodeEntry] = Field(min_length=1)


class _HardwareFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gpus: dict[str, GPUSpec]
    profiles: dict[str, _Profile]


@cache
def _load(path: Path = HARDWARE_FILE) -> _HardwareFile:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    raw["gpus"] = {name: {"name": name, **body} for name, body in raw["gpus"].items()}
    data = _HardwareFile.model_validate(raw)
    for name, profile in data.profiles.items():
        for entry in profile.nodes:
            if entry.gpu not in data.gpus:
                raise ValueError(f"profile {name}: unknown GPU '{entry.gpu}'")
    return data


def profile_names() -> list[str]:
    return list(_load().profiles)


def profile(name: str) -> Hardware:
    data = _load()
    entry = data.profiles[name]
    nodes = []
    for i, node in enumerate(entry.nodes):
        spec = data.gpus[node.gpu]
        nodes.append(Node(index=i, gpus=[GPU(node=i, index=j, spec=spec) for j in range(node.count)]))
    return Hardware(name=name, description=entry.description, nodes=nodes)


def gpu_types() -> dict[str, GPUSpec]:
    """Every name a GPU type answers to in NODESxGPUSxTYPE: its key and its aliases."""
    return {name: spec for spec in _load().gpus.values() for name in (spec.name, *spec.aliases)}


def _known_types() -> str:
    return ", ".join(
        spec.name + (f" ({', '.join(spec.aliases)})" if spec.aliases else "") for spec in _load().gpus.values()
    )


def resolve_hardware(text: str) -> Hardware:
    """A profile name (any case), NODESxGPUSxTYPE or a custom spec; anything else names the forms."""
    wanted = text.strip().lower()
    if wanted in _load().profiles:
        return profile(wanted)
    nodes = NODES_SPEC.match(text)
    if nodes is not None:
        return _nodes_of(text, nodes)
    match = CUSTOM_SPEC.match(text)
    if match is None:
        if re.match(r"^\s*\d", text):
            raise UserError(f"malformed hardware spec '{text}'; expected {FORMS}")
        raise UserError(f"unknown hardware profile '{text}'; known profiles: {', '.join(profile_names())}, or {FORMS}")
    count = int(match["count"])
    memory = float(match["mem"])
    bandwidth = float(match["bw"])
    if not 1 <= count <= MAX_GPUS_PER_NODE or memory <= 0 or bandwidth <= 0:
        raise UserError(
            f"malformed hardware spec '{text}': count (1 to {MAX_GPUS_PER_NODE}), memory and bandwidth must be "
            f"positive; expected {CUSTOM_FORM}"
        )
    tflops = float(match["tflops"]) if match["tflops"] else bandwidth * TFLOPS_PER_GBS
    spec = GPUSpec(
        name="custom",
        label=f"{memory:g} GB GPU",
        memory_gb=memory,
        bandwidth_gbs=bandwidth,
        tflops=tflops,
        interconnect="pcie",
    )
    node = Node(index=0, gpus=[GPU(node=0, index=j, spec=spec) for j in range(count)])
    described = f"{count} GPUs of {memory:g} GB at {bandwidth:g} GB/s, {tflops:.0f} TFLOPS, one node (PCIe)"
    return Hardware(name=text.strip(), description=described, nodes=[node])


def _nodes_of(text: str, match: re.Match[str]) -> Hardware:
    count = int(match["nodes"] or 1)
    per_node = int(match["gpus"])
    spec = gpu_types().get(match["type"].lower())
    if spec is None:
        raise UserError(
            f"unknown GPU type '{match['type']}' in hardware spec '{text.strip()}'; known types: {_known_types()}; "
            f"expected {FORMS}"
        )
    if not (1 <= count <= MAX_NODES and 1 <= per_node <= MAX_GPUS_PER_NODE):
        raise UserError(
            f"hardware spec '{text.strip()}': give 1 to {MAX_NODES} nodes of 1 to {MAX_GPUS_PER_NODE} GPUs; "
            f"expected {FORMS}"
        )
    nodes = [Node(index=i, gpus=[GPU(node=i, index=j, spec=spec) for j in range(per_node)]) for i in range(count)]
    where = "one node" if count == 1 else f"{count} nodes"
    described = (
        f"{where} of {per_node}x {spec.label} ({spec.memory_gb:g} GB, {spec.bandwidth_gbs:g} GB/s, {spec.interconnect})"
    )
    return Hardware(name=text.strip().lower(), description=described, nodes=nodes)
