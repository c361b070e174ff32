"""Launch configs for a plan: `vllm serve` command lines (with the Ray cluster an instance
across nodes needs), a compose file with Cantata's own services, and the Cantata instances
config that binds the pipeline's aliases to the launched servers.
"""

from __future__ import annotations

import shlex
import textwrap
from typing import Any

import yaml

from cantata.config import InstanceConfig, InstancesConfig
from cantata.planner.plan import Plan, PlannedInstance

CONFIG_FILE = "cantata-instances.yaml"
SCRIPT_FILE = "vllm-launch.sh"
# Ray's default GCS port, where the other nodes join the head (vLLM's multi-node example).
RAY_PORT = 6379
RAY_WAIT_S = 900  # how long the head waits for the other nodes to join, unless RAY_WAIT_S says


def instances_config(plan: Plan, hosts: dict[str, str] | None = None) -> InstancesConfig:
    """The instances config for the plan, validated by Cantata's own model of it.

    hosts: instance -> the host name Cantata reaches it by, where not the plan's (compose's
    service names).
    """
    return InstancesConfig(
        instances=[
            InstanceConfig(
                name=inst.name,
                backend="openai",
                **_addresses(inst, hosts),
                model=inst.name,
                serves=inst.aliases,
                max_concurrency=inst.max_concurrency,
                context=inst.context,
                dialect="vllm",
                priority_scheduling=True,
            )
            for inst in plan.instances
        ]
    )


def _addresses(inst: PlannedInstance, hosts: dict[str, str] | None) -> dict[str, Any]:
    """`url`, or `urls` for replicas of one instance (one per node): the pool routes among them."""
    if hosts:
        return {"url": f"http://{hosts[inst.name]}:{inst.port}/v1"}
    if len(inst.urls) > 1:
        return {"urls": inst.urls}
    return {"url": inst.url}


def instances_yaml(plan: Plan, hosts: dict[str, str] | None = None) -> str:
    data = instances_config(plan, hosts).model_dump(mode="json", exclude_defaults=True, exclude={"path"})
    for entry in data["instances"]:
        # exclude_defaults would drop dialect: vllm; say it, the server is vLLM by construction.
        entry["dialect"] = "vllm"
    return yaml.safe_dump(data, sort_keys=False)


def model_arg(inst: PlannedInstance) -> str:
    if inst.gguf:
        # vLLM loads GGUF from a local file, with the tokenizer of the original model.
        return f"./models/{inst.name}.gguf"
    return inst.checkpoint or inst.hf_repo


def vllm_args(inst: PlannedInstance, plan: Plan) -> list[str]:
    """The arguments after `vllm serve MODEL` for one instance."""
    args = [
        "--served-model-name", inst.name,
        "--host", "0.0.0.0",
        "--port", str(inst.port),
        "--tensor-parallel-size", str(inst.tensor_parallel),
        "--pipeline-parallel-size", str(inst.pipeline_parallel),
        "--gpu-memory-utilization", f"{inst.gpu_memory_utilization:.2f}",
        "--max-model-len", str(inst.context),
        "--max-num-seqs", str(inst.max_concurrency),
        "--enable-prefix-caching",
        "--scheduling-policy", "priority",
    ]  # fmt: skip
    if inst.vllm_quantization:
        args += ["--quantization", inst.vllm_quantization]
    if inst.gguf:
        args += ["--tokenizer", inst.hf_repo]
    if inst.reasoning_parser:
        args += ["--reasoning-parser", inst.reasoning_parser]
    served = [r for r in plan.roles if r.instance == inst.name]
    if any(r.need == "tool_use" or r.tools for r in served) and inst.tool_parser:
        args += ["--enable-auto-tool-choice", "--tool-call-parser", inst.tool_parser]
    if inst.pipeline_parallel > 1:
        args += ["--distributed-executor-backend", "ray"]
    return args


def devices_on(inst: PlannedInstance, node: int) -> str:
    return ",".join(g.split(":")[1] for g in inst.gpus if g.startswith(f"n{node}:"))


def _node(gpu: str) -> int:
    return int(gpu.split(":")[0][1:])


def _starts_on(inst: PlannedInstance, plan: Plan, node: int) -> bool:
    """Whether the server of `inst` starts on `node`: every node for a replicated plan, else its first GPU's."""
    return node < plan.replicas if plan.replicas > 1 else _node(inst.gpus[0]) == node


def server_nodes(plan: Plan) -> list[int]:
    """The nodes whose script block starts servers."""
    nodes = range(plan.replicas) if plan.replicas > 1 else (_node(inst.gpus[0]) for inst in plan.instances)
    return sorted(set(nodes))


class RayCluster:
    """One Ray cluster over the nodes the instances spanning nodes use; its head is the first one's node."""

    def __init__(self, spanning: list[PlannedInstance]) -> None:
        self.head = _node(spanning[0].gpus[0])
        devices: dict[int, set[str]] = {}
        for inst in spanning:
            for gpu in inst.gpus:
                devices.setdefault(_node(gpu), set()).add(gpu.split(":")[1])
        # Each node's raylet sees only the GPUs planned for these instances, so Ray never hands
        # vLLM a card another server on the node holds.
        self.devices = {node: sorted(found, key=int) for node, found in sorted(devices.items())}
        self.gpus = sum(inst.tensor_parallel * inst.pipeline_parallel for inst in spanning)

    @classmethod
    def of(cls, plan: Plan) -> RayCluster | None:
        spanning = [inst for inst in plan.instances if inst.pipeline_parallel > 1]
        return cls(spanning) if spanning else None

    def start(self, node: int) -> str:
        devices = self.devices[node]
        joins = "--head" if node == self.head else f"--address=node{self.head}:{RAY_PORT}"
        port = f" --port={RAY_PORT}" if node == self.head else ""
        return f"CUDA_VISIBLE_DEVICES={','.join(devices)} ray start {joins}{port} --num-gpus={len(devices)}"


def script_nodes(plan: Plan) -> list[int]:
    """The nodes the script runs on: those starting servers and those only joining the Ray cluster."""
    ray = RayCluster.of(plan)
    return sorted(set(server_nodes(plan)) | set(ray.devices if ray else ()))


def next_steps(plan: Plan) -> list[str]:
    """The three commands from the emitted script to Cantata serving on the servers:
    start them, check them, serve (the README's "From the embedded model to vLLM")."""
    start = f"sh {SCRIPT_FILE}" + (" NODE" if len(script_nodes(plan)) > 1 else "")
    return [start, f"cantata instances --check --config {CONFIG_FILE}", f"cantata serve --config {CONFIG_FILE}"]


def _header(plan: Plan) -> list[str]:
    start, check, serve = next_steps(plan)
    nodes = [f"node{n}" for n in script_nodes(plan)]
    ports = sorted(inst.port for inst in plan.instances)
    lines = [
        "#!/bin/sh",
        f"# Cantata plan: pipeline '{plan.pipeline}' on {plan.hardware} ({plan.hardware_description}).",
        f"# Save it as {SCRIPT_FILE}; then three commands take you to Cantata on these servers:",
        f"#   {start:<58} start the servers, write {CONFIG_FILE}",
        f"#   {check:<58} exits 2 if one is unreachable",
        f"#   {serve:<58} the pipelines, on port 8000",
        f"# The servers listen on port(s) {', '.join(map(str, ports))} (clear of Cantata's 8000).",
        "# One `vllm serve` per instance. Servers sharing a GPU start one after the other: each takes",
        "# its --gpu-memory-utilization share of the card (they add up to at most 0.9 per GPU).",
    ]
    if len(nodes) > 1:
        lines += [
            f"# The plan uses {', '.join(nodes)}: run this script on each of them, naming it",
            f"# (sh {SCRIPT_FILE} {nodes[0]}). The config reaches them as http://NODE:PORT: make those",
            "# names resolve where Cantata runs, or put the machines' addresses in the config.",
        ]
    elif len({_node(g.gpu) for g in plan.gpus}) > 1:
        lines.append(f"# Every server runs on {nodes[0]}: run this script there, and Cantata beside them.")
    if plan.replicas > 1:
        lines.append("# Each node runs a replica of every server; the config lists them under urls:.")
    ray = RayCluster.of(plan)
    if ray is not None:
        others = [f"node{n}" for n in ray.devices if n != ray.head]
        lines += [
            f"# A server spans nodes (pipeline parallel) over one Ray cluster: on node{ray.head} this script",
            f"# starts the Ray head (port {RAY_PORT}) and waits until the cluster has {ray.gpus} GPUs; on",
            f"# {', '.join(others)} it joins that head. Start node{ray.head} first.",
        ]
    if plan.span_reason:
        # The rule that chose spanning over a replica per node, with its figures (README, planner).
        # A no-break space keeps each figure on one line with its unit.
        text = f"Why not a replica per node: {plan.span_reason}.".replace(" GB", "\xa0GB")
        lines += [f"# {line}".replace("\xa0", " ") for line in textwrap.wrap(text, 94)]
    return lines


def emit_vllm(plan: Plan) -> str:
    """A shell script: write the instances config, start each server in turn, wait until it
    answers, then say the next two commands."""
    nodes = script_nodes(plan)
    names = [f"node{n}" for n in nodes]
    multi = len(nodes) > 1
    lines = [*_header(plan), "set -e"]
    if multi:
        lines += [
            'NODE="${1:-}"',
            'case "$NODE" in',
            f"  {'|'.join(names)}) ;;",
            f'  *) echo "usage: sh $0 {"|".join(names)}: run it on each node, naming that node" >&2; exit 2 ;;',
            "esac",
        ]
    lines += [
        "mkdir -p logs",
        "",
        f"cat > {CONFIG_FILE} <<'YAML'",
        instances_yaml(plan).rstrip(),
        "YAML",
        "",
        "# URL PID NAME: wait until the server lists its model; stop if it exited first.",
        "wait_ready() {",
        '  until curl -sf "$1/models" > /dev/null; do',
        '    if ! kill -0 "$2" 2> /dev/null; then',
        '      echo "$3 exited before it answered: see logs/$3.log" >&2',
        "      exit 1",
        "    fi",
        "    sleep 2",
        "  done",
        "}",
    ]
    ray = RayCluster.of(plan)
    if ray is not None:
        lines += [
            "",
            "# GPUS: wait until the Ray cluster holds that many GPUs (every node has joined), for",
            f"# at most RAY_WAIT_S seconds (default {RAY_WAIT_S}).",
            "wait_ray_gpus() {",
            "  deadline=$(( $(date +%s) + ${RAY_WAIT_S:-" + str(RAY_WAIT_S) + "} ))",
            "  while :; do",
            # `ray status` itself, not a python3 from PATH that may lack ray: its cluster totals
            # under Usage read " 0.0/16.0 GPU"; no such line (no cluster yet) counts as none.
            "    have=$(ray status 2> /dev/null | sed -n 's|^ *[0-9.]*/\\([0-9]*\\)[.0-9]* GPU$|\\1|p' | head -n 1)",
            '    if [ "${have:-0}" -ge "$1" ] 2> /dev/null; then return 0; fi',
            '    if [ "$(date +%s)" -ge "$deadline" ]; then',
            '      echo "the Ray cluster did not reach $1 GPUs within ${RAY_WAIT_S:-'
            + str(RAY_WAIT_S)
            + "} s (it has ${have:-none}): run this script on the other nodes (see \\`ray status\\`),"
            ' or wait longer with RAY_WAIT_S=SECONDS" >&2',
            "      exit 1",
            "    fi",
            '    echo "the Ray cluster has ${have:-no} GPUs of $1: run this script on the other nodes" >&2',
            "    sleep 5",
            "  done",
            "}",
        ]
    for node in nodes:
        block: list[str] = []
        if ray is not None and node in ray.devices:
            block += ["", "# the Ray cluster for the server(s) spanning nodes", ray.start(node)]
            if node not in server_nodes(plan):
                block += [f'echo "$NODE joined the Ray cluster at node{ray.head}:{RAY_PORT}"', "exit 0"]
        for inst in plan.instances:
            if _starts_on(inst, plan, node):
                block += ["", *_server(inst, plan, node, ray)]
        if multi:
            lines += ["", f'if [ "$NODE" = node{node} ]; then', *[f"  {line}" if line else "" for line in block[1:]]]
            lines.append("fi")
        else:
            lines += block
    _, check, serve = next_steps(plan)
    lines += [
        "",
        f'echo "the servers{" of $NODE" if multi else ""} are up; {CONFIG_FILE} is written. Next:"',
        f'echo "  {check}"' + ("  # once every node's servers are up" if multi else ""),
        f'echo "  {serve}"',
        "",
    ]
    return "\n".join(lines)


def _server(inst: PlannedInstance, plan: Plan, node: int, ray: RayCluster | None) -> list[str]:
    """One server's lines: what it holds, its command in the background, the wait for it."""
    lines = [
        f"# {inst.name}: {inst.model} {inst.quantization_label} for {', '.join(inst.roles)}",
        f"# {inst.weights_gb:g} GB weights + {inst.kv_cache_gb:g} GB KV cache planned on {', '.join(_on(inst, plan, node))}",
    ]
    if inst.checkpoint is None and not inst.gguf:
        lines.append(f"# no published {inst.quantization_label} checkpoint is recorded: replace the model path")
    if inst.gguf:
        lines.append(f"# download the {inst.quantization_label} file from {inst.checkpoint or inst.hf_repo} first")
    if inst.pipeline_parallel > 1 and ray is not None:
        # Ray places the ranks on the GPUs each raylet was started with.
        lines += [
            f"# spans {inst.pipeline_parallel} nodes: pipeline parallel across them, tensor parallel within",
            f"wait_ray_gpus {ray.gpus}",
        ]
        command = ["vllm", "serve", model_arg(inst)]
    else:
        # A replica runs on the same GPUs of its node as replica 0 on node 0.
        devices = devices_on(inst, 0 if plan.replicas > 1 else node)
        command = [f"CUDA_VISIBLE_DEVICES={devices}", "vllm", "serve", model_arg(inst)]
    body = " ".join(a if a.startswith("CUDA_") or a == "vllm" else shlex.quote(a) for a in command)
    text = body + " \\\n" + " \\\n".join(f"  {p}" for p in _pairs(vllm_args(inst, plan)))
    lines += (text + f" \\\n  > logs/{inst.name}.log 2>&1 &").split("\n")
    # The script runs on the server's own node: it waits on the local port.
    lines.append(f"wait_ready http://localhost:{inst.port}/v1 $! {inst.name}")
    return lines


def _on(inst: PlannedInstance, plan: Plan, node: int) -> list[str]:
    """The GPUs of `inst` as started on `node`: a replica's are node 0's, renamed."""
    if plan.replicas == 1:
        return inst.gpus
    return [f"n{node}:{gpu.split(':')[1]}" for gpu in inst.gpus]


def _pairs(args: list[str]) -> list[str]:
    """Group flags with their values, one flag per line."""
    out: list[str] = []
    for arg in args:
        if arg.startswith("--") or not out:
            out.append(arg)
        else:
            out[-1] += " " + shlex.quote(arg)
    return out
