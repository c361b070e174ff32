"""Launch configs for a plan: `vllm serve` command lines, a compose file, and the Cantata
instances config that binds the pipeline's aliases to the launched servers.
"""

from __future__ import annotations

import shlex
from typing import Any

import yaml

from cantata.config import InstanceConfig, InstancesConfig
from cantata.errors import UserError
from cantata.planner.plan import Plan, PlannedInstance

CONFIG_FILE = "cantata-instances.yaml"
SCRIPT_FILE = "vllm-launch.sh"
VLLM_IMAGE = "vllm/vllm-openai:latest"


def instances_config(plan: Plan) -> InstancesConfig:
    """The instances config for the plan, validated by Cantata's own model of it."""
    return InstancesConfig(
        instances=[
            InstanceConfig(
                name=inst.name,
                backend="openai",
                url=inst.url,
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


def instances_yaml(plan: Plan) -> str:
    data = instances_config(plan).model_dump(mode="json", exclude_defaults=True, exclude={"path"})
    # exclude_defaults would drop dialect: vllm; say it, the server is vLLM by construction.
    for entry in data["instances"]:
        entry["dialect"] = "vllm"
    return yaml.safe_dump(data, sort_keys=False)


def _model_arg(inst: PlannedInstance) -> str:
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
    needs = {r.need for r in plan.roles if r.instance == inst.name}
    if "tool_use" in needs and inst.tool_parser:
        args += ["--enable-auto-tool-choice", "--tool-call-parser", inst.tool_parser]
    if inst.pipeline_parallel > 1:
        args += ["--distributed-executor-backend", "ray"]
    return args


def _devices(inst: PlannedInstance, node: int) -> str:
    return ",".join(g.split(":")[1] for g in inst.gpus if g.startswith(f"n{node}:"))


def _node(gpu: str) -> int:
    return int(gpu.split(":")[0][1:])


def server_nodes(plan: Plan) -> list[int]:
    """The nodes whose script block starts servers (an instance starts on its first GPU's node)."""
    return sorted({_node(inst.gpus[0]) for inst in plan.instances})


def next_steps(plan: Plan) -> list[str]:
    """The three commands from the emitted script to Cantata serving on the servers:
    start them, check them, serve (the README's "From the embedded model to vLLM")."""
    start = f"sh {SCRIPT_FILE}" + (" NODE" if len(server_nodes(plan)) > 1 else "")
    return [start, f"cantata instances --check --config {CONFIG_FILE}", f"cantata serve --config {CONFIG_FILE}"]


def _header(plan: Plan) -> list[str]:
    start, check, serve = next_steps(plan)
    nodes = [f"node{n}" for n in server_nodes(plan)]
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
            f"# The servers run on {', '.join(nodes)}: run this script on each of them, naming it",
            f"# (sh {SCRIPT_FILE} {nodes[0]}). The config reaches them as http://NODE:PORT: make those",
            "# names resolve where Cantata runs, or put the machines' addresses in the config.",
        ]
    elif len({_node(g.gpu) for g in plan.gpus}) > 1:
        lines.append(f"# Every server runs on {nodes[0]}: run this script there, and Cantata beside them.")
    return lines


def emit_vllm(plan: Plan) -> str:
    """A shell script: write the instances config, start each server in turn, wait until it
    answers, then say the next two commands."""
    nodes = server_nodes(plan)
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
    for node in nodes:
        block: list[str] = []
        for inst in plan.instances:
            if _node(inst.gpus[0]) == node:
                block += ["", *_server(inst, plan, node)]
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


def _server(inst: PlannedInstance, plan: Plan, node: int) -> list[str]:
    """One server's lines: what it holds, its command in the background, the wait for it."""
    lines = [
        f"# {inst.name}: {inst.model} {inst.quantization_label} for {', '.join(inst.roles)}",
        f"# {inst.weights_gb:g} GB weights + {inst.kv_cache_gb:g} GB KV cache planned on {', '.join(inst.gpus)}",
    ]
    if inst.checkpoint is None and not inst.gguf:
        lines.append(f"# no published {inst.quantization_label} checkpoint is recorded: replace the model path")
    if inst.gguf:
        lines.append(f"# download the {inst.quantization_label} file from {inst.checkpoint or inst.hf_repo} first")
    if inst.pipeline_parallel > 1:
        lines.append("# spans nodes: start a Ray cluster over them first (ray start --head / --address)")
    command = [f"CUDA_VISIBLE_DEVICES={_devices(inst, node)}", "vllm", "serve", _model_arg(inst)]
    body = " ".join(shlex.quote(a) if i else a for i, a in enumerate(command))
    text = body + " \\\n" + " \\\n".join(f"  {p}" for p in _pairs(vllm_args(inst, plan)))
    lines += (text + f" \\\n  > logs/{inst.name}.log 2>&1 &").split("\n")
    # The script runs on the server's own node: it waits on the local port.
    lines.append(f"wait_ready http://localhost:{inst.port}/v1 $! {inst.name}")
    return lines


def _pairs(args: list[str]) -> list[str]:
    """Group flags with their values, one flag per line."""
    out: list[str] = []
    for arg in args:
        if arg.startswith("--") or not out:
            out.append(arg)
        else:
            out[-1] += " " + shlex.quote(arg)
    return out


def emit_compose(plan: Plan) -> str:
    """A docker compose file for one machine; the instances config rides along under x-cantata."""
    if len({inst.host for inst in plan.instances}) > 1 or any(i.pipeline_parallel > 1 for i in plan.instances):
        raise UserError(
            f"a compose file describes one machine, and this plan spans {len(plan.gpus)} GPUs on several nodes; "
            "use --emit vllm"
        )
    services: dict[str, Any] = {}
    previous_on_gpu: dict[str, str] = {}
    for inst in plan.instances:
        command = ["--model", _model_arg(inst), *vllm_args(inst, plan)]
        service: dict[str, Any] = {
            "image": VLLM_IMAGE,
            "command": command,
            "ports": [f"{inst.port}:{inst.port}"],
            "ipc": "host",
            "volumes": ["${HOME}/.cache/huggingface:/root/.cache/huggingface"],
            "environment": {"HF_TOKEN": "${HF_TOKEN:-}"},
            "deploy": {
                "resources": {
                    "reservations": {
                        "devices": [
                            {"driver": "nvidia", "device_ids": _devices(inst, 0).split(","), "capabilities": ["gpu"]}
                        ]
                    }
                }
            },
            "healthcheck": {
                "test": ["CMD", "curl", "-sf", f"http://localhost:{inst.port}/health"],
                "interval": "10s",
                "retries": 90,
                "start_period": "60s",
            },
        }
        # Servers sharing a GPU start one after the other (each claims its memory share).
        before = sorted({previous_on_gpu[g] for g in inst.gpus if g in previous_on_gpu})
        if before:
            service["depends_on"] = {name: {"condition": "service_healthy"} for name in before}
        for g in inst.gpus:
            previous_on_gpu[g] = inst.name
        services[inst.name] = service
    document: dict[str, Any] = {
        "name": f"cantata-{plan.pipeline}".lower(),
        "services": services,
        "x-cantata-instances": instances_config(plan).model_dump(mode="json", exclude={"path"}),
    }
    header = (
        f"# Cantata plan: pipeline '{plan.pipeline}' on {plan.hardware}. Start with: docker compose up -d\n"
        f"# The Cantata instances config is under x-cantata-instances (compose ignores x- keys);\n"
        f"# `cantata plan ... --config-out {CONFIG_FILE}` writes it as a file.\n"
    )
    return header + yaml.safe_dump(document, sort_keys=False)
