"""Plans on several nodes: NODESxGPUSxTYPE hardware, pipeline parallel across nodes over Ray,
one replica per node of what fits one node, and refusals of bad specs and of what fits nowhere."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from cantata.errors import UserError
from cantata.planner.catalog import load_catalog
from cantata.planner.hardware import USABLE_FRACTION, resolve_hardware
from cantata.planner.plan import Plan
from cantata.planner.speed import INTERNODE_HOP_S, Engine
from tests.helpers.plans import COACHING, assert_fits, config_from_script, planned, run, script_config

# Qwen3-235B-A22B in BF16 is 470 GB of weights: more than eight A100 40GB hold (288 GB usable),
# less than one node of eight A100 80GB (576 GB usable).
BIG = ("--pipeline", "coaching", "--model", "qwen3-235b-a22b:bf16")


def node_block(script: str, node: str) -> str:
    return script.split(f'if [ "$NODE" = {node} ]; then\n', 1)[1].split("\nfi\n", 1)[0]


def plan_json(*args: str) -> Plan:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    return Plan.model_validate(json.loads(result.stdout))


# -- hardware strings ---------------------------------------------------------------------


def test_nodes_x_gpus_x_type_names_nodes_of_a_known_gpu() -> None:
    hardware = resolve_hardware("2x8xa100-80")
    assert [len(n.gpus) for n in hardware.nodes] == [8, 8]
    assert {(g.spec.name, g.spec.memory_gb) for g in hardware.gpus} == {("a100-80gb", 80)}
    assert [g.key for g in hardware.nodes[1].gpus][:2] == ["n1:0", "n1:1"]
    assert hardware.identical_nodes
    # The type's own name, any case, and GPUSxTYPE for one node.
    assert resolve_hardware("2X8XA100-80GB").gpus == hardware.gpus
    single = resolve_hardware("4xh200")
    assert len(single.nodes) == 1 and len(single.gpus) == 4 and not single.identical_nodes
    # The profiles in use keep their meaning.
    assert resolve_hardware("2x4090").description == "two RTX 4090 in one box (PCIe)"
    assert not resolve_hardware("a100-211").identical_nodes


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("3x", "malformed hardware spec '3x'"),
        ("2x8x", "unknown GPU type"),
        ("2x8xtpu", "unknown GPU type 'tpu' in hardware spec '2x8xtpu'; known types: rtx4090 (4090)"),
        ("100x8xh100", "hardware spec '100x8xh100': give 1 to 64 nodes of 1 to 16 GPUs"),
        ("2x0xh100", "hardware spec '2x0xh100': give 1 to 64 nodes"),
    ],
)
def test_a_bad_hardware_spec_is_one_line_naming_it_and_the_form(spec: str, says: str) -> None:
    result = run("--pipeline", "coaching", "--hardware", spec)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and says in result.stderr
    assert "NODESxGPUSxTYPE, e.g. 2x8xa100-80" in result.stderr
    with pytest.raises(UserError):
        resolve_hardware(spec)


# -- across nodes: pipeline parallel over Ray ----------------------------------------------


def test_a_model_larger_than_a_node_runs_pipeline_parallel_2_tensor_parallel_8() -> None:
    plan = plan_json(*BIG, "--hardware", "2x8xa100-40")
    (inst,) = plan.instances
    assert (inst.pipeline_parallel, inst.tensor_parallel) == (2, 8)
    assert inst.gpus == [f"n{node}:{i}" for node in (0, 1) for i in range(8)]
    # The memory per GPU is its share of weights and KV cache plus the runtime, within the usable part.
    assert inst.per_gpu_gb * 16 >= inst.weights_gb + inst.kv_cache_gb
    assert inst.per_gpu_gb <= 40 * USABLE_FRACTION
    assert plan.replicas == 1 and inst.urls == ["http://node0:8100/v1"]
    assert_fits(plan)
    assert any("pipeline parallel 2, tensor parallel 8" in n and "100 Gb/s" in n for n in plan.notes)


def test_weights_that_fit_one_node_span_two_when_the_kv_cache_does_not_fit_beside_them() -> None:
    # Four turns at once with 40 960 tokens of context: 16 sequences, 126 GB of KV cache. Split
    # over two replicas, each needs 63 GB of it, stored twice over its 8 ranks (the model has 4
    # KV heads, tensor parallel 8 replicates each): 126 GB beside 470 GB of weights, and 8 GB of
    # runtime, is more than a node's 576 GB usable.
    plan = plan_json(*BIG, "--hardware", "2x8xa100-80", "--context", "40960", "--concurrency", "4")
    (inst,) = plan.instances
    assert (inst.pipeline_parallel, inst.tensor_parallel, plan.replicas) == (2, 8, 1)
    assert inst.max_concurrency == 16 and inst.context == 40960
    assert_fits(plan)


def test_emit_vllm_starts_a_ray_head_a_worker_and_the_server_with_both_sizes() -> None:
    result = run(*BIG, "--hardware", "2x8xa100-40", "--emit", "vllm")
    assert result.exit_code == 0, result.output
    script = result.stdout
    head, worker = node_block(script, "node0"), node_block(script, "node1")
    assert "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 ray start --head --port=6379 --num-gpus=8" in head
    assert "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 ray start --address=node0:6379 --num-gpus=8" in worker
    assert "vllm serve" not in worker
    serve = head.split("vllm serve ", 1)[1]
    for flag in ("--tensor-parallel-size 8", "--pipeline-parallel-size 2", "--distributed-executor-backend ray"):
        assert flag in serve, flag
    # The server starts once all 16 GPUs have joined the cluster, before its ranks are placed.
    assert head.index("wait_ray_gpus 16") < head.index("vllm serve")
    assert script_config(script)["instances"][0]["url"] == "http://node0:8100/v1"


def _stub(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def _launch_script(tmp_path: Path, gpus_seen: str) -> tuple[Path, Callable[..., subprocess.CompletedProcess[str]]]:
    """The multi-node script, with ray, vllm and curl stood in by recorders (and no python3
    on its PATH: a node's may lack ray); `ray status` reports the cluster's GPUs as the shell
    snippet `gpus_seen` says, given the number of times it was asked ($N). Returns the file
    the calls are recorded in, and a function that runs the script as a node."""
    result = run(*BIG, "--hardware", "2x8xa100-40", "--emit", "vllm")
    assert result.exit_code == 0, result.output
    (tmp_path / "launch.sh").write_text(result.stdout)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    _stub(
        bin_dir,
        "ray",
        f'if [ "$1" != status ]; then echo "$CUDA_VISIBLE_DEVICES ray $*" >> {calls}; exit 0; fi\n'
        f'echo "ray status" >> {calls}; N=$(grep -c "ray status" {calls}); GPUS=$({gpus_seen})\n'
        # The shape of `ray status`: the cluster's totals under Resources / Usage.
        "printf '%s\\n' '======== Autoscaler status ========' 'Resources' '-----' 'Usage:'"
        ' " 0.0/96.0 CPU" " 0.0/$GPUS.0 GPU" " 0B/1.2TiB memory" "Demands:" " (no resource demands)"\n',
    )
    _stub(bin_dir, "vllm", f'echo "${{CUDA_VISIBLE_DEVICES:-all}} vllm $*" >> {calls}\n')
    # The server "answers" once it was started.
    _stub(bin_dir, "curl", f"for i in $(seq 100); do grep -q vllm {calls} && exit 0; sleep 0.1; done; exit 1\n")
    for tool in ("sh", "grep", "sed", "head", "cat", "mkdir", "date", "sleep", "seq", "printf", "tail", "cut"):
        found = shutil.which(tool)
        if found is not None:
            (bin_dir / tool).symlink_to(found)
    env = {**os.environ, "PATH": str(bin_dir)}

    def node(name: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["sh", "launch.sh", name], cwd=tmp_path, env={**env, **extra}, capture_output=True, text=True, timeout=60
        )

    return calls, node


def test_the_emitted_script_joins_the_worker_then_starts_the_server_on_the_head(tmp_path: Path) -> None:
    # The cluster has node0's 8 GPUs at the first look and all 16 at the second.
    calls, node = _launch_script(tmp_path, 'if [ "$N" -ge 2 ]; then echo 16; else echo 8; fi')
    worker = node("node1")
    assert worker.returncode == 0, worker.stderr
    assert "node1 joined the Ray cluster at node0:6379" in worker.stdout
    assert calls.read_text().splitlines() == ["0,1,2,3,4,5,6,7 ray start --address=node0:6379 --num-gpus=8"]
    calls.unlink()
    head = node("node0")
    assert head.returncode == 0, head.stderr
    lines = calls.read_text().splitlines()
    assert lines[:3] == ["0,1,2,3,4,5,6,7 ray start --head --port=6379 --num-gpus=8", *["ray status"] * 2]
    assert "the Ray cluster has 8 GPUs of 16" in head.stderr
    (serve,) = lines[3:]
    assert serve.startswith("all vllm serve Qwen/Qwen3-235B-A22B ")
    assert "--pipeline-parallel-size 2" in serve and "--distributed-executor-backend ray" in serve
    assert (tmp_path / "cantata-instances.yaml").exists()


def test_the_head_waits_for_the_other_nodes_only_until_its_deadline(tmp_path: Path) -> None:
    """A node that never joins: the head stops after RAY_WAIT_S, saying what it waited for
    and what to do, and starts no server."""
    calls, node = _launch_script(tmp_path, "echo 8")
    head = node("node0", RAY_WAIT_S="0")
    assert head.returncode == 1
    assert head.stderr.splitlines()[-1] == (
        "the Ray cluster did not reach 16 GPUs within 0 s (it has 8): run this script on the other nodes"
        " (see `ray status`), or wait longer with RAY_WAIT_S=SECONDS"
    )
    assert "vllm" not in calls.read_text()


def test_inter_node_hops_cost_latency_and_activations_per_step() -> None:
    catalog = load_catalog()
    gpu = resolve_hardware("2x8xa100-40").gpus[0].spec
    model, quant = catalog.model("qwen3-235b-a22b"), catalog.quantization("bf16")
    one = Engine(model=model, quant=quant, gpu=gpu, tensor_parallel=8, pipeline_parallel=1)
    two = Engine(model=model, quant=quant, gpu=gpu, tensor_parallel=8, pipeline_parallel=2)
    decode_cost = two.step_seconds() - one.step_seconds()
    assert decode_cost == pytest.approx(two.internode_hop_seconds(1))
    assert INTERNODE_HOP_S < decode_cost < 1.1 * INTERNODE_HOP_S  # a decode step moves a few KB
    # A prefill's hop carries every prompt token's activations: far more than a decode step's.
    assert two.prefill_seconds(2048) - one.prefill_seconds(2048) > 10 * decode_cost


# -- what fits one node: a replica on each ------------------------------------------------


def test_a_model_that_fits_one_node_is_not_split_but_replicated_on_each_node() -> None:
    # The example: 470 GB of weights fit one node of eight A100 80GB.
    plan = plan_json(*BIG, "--hardware", "2x8xa100-80")
    (inst,) = plan.instances
    assert (inst.pipeline_parallel, inst.tensor_parallel) == (1, 8)
    assert inst.gpus == [f"n0:{i}" for i in range(8)]
    assert plan.replicas == 2
    assert inst.urls == ["http://node0:8100/v1", "http://node1:8100/v1"] and inst.url == inst.urls[0]
    assert all(g.instances == [inst.name] for g in plan.gpus)  # node 1 holds the second replica
    assert_fits(plan)

    result = run(*BIG, "--hardware", "2x8xa100-80", "--emit", "vllm")
    assert result.exit_code == 0, result.output
    script = result.stdout
    (entry,) = script_config(script)["instances"]
    assert entry["urls"] == inst.urls and "url" not in entry
    (loaded,) = config_from_script(script).instances  # as Cantata loads it: replicas of one instance
    assert [r.url for r in loaded.replicas()] == inst.urls
    for node in ("node0", "node1"):
        block = node_block(script, node)
        assert "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 vllm serve" in block
        assert "--pipeline-parallel-size 1" in block and "--tensor-parallel-size 8" in block
    assert "ray start" not in script and "--distributed-executor-backend" not in script


def test_replicas_share_the_turns_in_flight() -> None:
    two_nodes = planned(COACHING, "2x8xh100", "qwen3-8b:bf16", concurrency=4)
    one_node = planned(COACHING, "8xh100", "qwen3-8b:bf16", concurrency=2)
    assert two_nodes.replicas == 2 and two_nodes.concurrency == 4
    (mine,), (theirs,) = two_nodes.instances, one_node.instances
    assert (mine.max_concurrency, mine.kv_cache_gb) == (theirs.max_concurrency, theirs.kv_cache_gb)
    assert two_nodes.timing == one_node.timing


def test_a_model_that_fits_no_set_of_these_nodes_is_refused_with_needed_and_available_memory() -> None:
    result = run(*BIG, "--hardware", "2x4xa100-40")
    assert result.exit_code == 2 and result.stdout == ""
    message = result.stderr.strip()
    assert "\n" not in message
    assert message.startswith("error: cannot plan 'coaching' on 2x4xa100-40: qwen3-235b-a22b-bf16 needs 474.2 GB")
    assert "but 2x4xa100-40 has 288.0 GB usable" in message
    # Four such nodes hold 576 GB: the nearest node count that fits.
    assert "more nodes: --hardware 4x4xa100-40" in message


def test_compose_refuses_a_plan_on_several_nodes() -> None:
    for hardware in ("2x8xa100-40", "2x8xa100-80"):
        result = run(*BIG, "--hardware", hardware, "--emit", "compose")
        assert result.exit_code == 2 and "use --emit vllm" in result.stderr
