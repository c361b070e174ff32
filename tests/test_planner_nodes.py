"""Plans on several nodes: NODESxGPUSxTYPE hardware, pipeline parallel across nodes over Ray,
one replica per node of what fits one node while the copies leave at least half the KV cache
of one copy spanning the nodes, and refusals of bad specs and of what fits nowhere."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from cantata.errors import UserError
from cantata.loader import load_pipeline
from cantata.planner.catalog import load_catalog
from cantata.planner.emit import devices_on
from cantata.planner.hardware import USABLE_FRACTION, resolve_hardware
from cantata.planner.memory import GB, RUNTIME_OVERHEAD_BYTES, kv_replication, weight_bytes
from cantata.planner.nodes import NodeMemory
from cantata.planner.placement import InstanceRequest, PackingError, pack
from cantata.planner.plan import Plan
from cantata.planner.speed import INTERNODE_HOP_S, Engine
from cantata.planner.workload import Workload
from tests.helpers.plans import COACHING, FACTORY, assert_fits, config_from_script, planned, run, script_config

# Qwen3-235B-A22B in BF16 is 470 GB of weights: more than eight A100 40GB hold (288 GB usable),
# less than one node of eight A100 80GB (576 GB usable).
BIG = ("--pipeline", "coaching", "--model", "qwen3-235b-a22b:bf16")


def node_block(script: str, node: str) -> str:
    return script.split(f'if [ "$NODE" = {node} ]; then\n', 1)[1].split("\nfi\n", 1)[0]


def assert_two_node_script(script: str) -> str:
    """The checks every PP2 x TP8 script over two 8-GPU nodes passes: the Ray head on node0,
    node1 joining it, one `vllm serve` on the head with both sizes and the Ray executor,
    started once all 16 GPUs have joined; its instance reached on the head. Returns node0's block."""
    head, worker = node_block(script, "node0"), node_block(script, "node1")
    assert "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 ray start --head --port=6379 --num-gpus=8" in head
    assert "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 ray start --address=node0:6379 --num-gpus=8" in worker
    assert "vllm serve" not in worker
    (serve,) = [line for line in head.splitlines() if "vllm serve" in line]
    command = head[head.index(serve) :].split("> logs/", 1)[0]
    for flag in ("--tensor-parallel-size 8", "--pipeline-parallel-size 2", "--distributed-executor-backend ray"):
        assert flag in command, flag
    assert head.index("wait_ray_gpus 16") < head.index("vllm serve")
    (entry,) = script_config(script)["instances"]
    assert entry["url"] == "http://node0:8100/v1" and "urls" not in entry
    return head


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
    assert_two_node_script(result.stdout)


def _stub(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def _launch_script(
    tmp_path: Path, gpus_seen: str, hardware: str = "2x8xa100-40"
) -> tuple[Path, Callable[..., subprocess.CompletedProcess[str]]]:
    """The multi-node script, with ray, vllm and curl stood in by recorders (and no python3
    on its PATH: a node's may lack ray); `ray status` reports the cluster's GPUs as the shell
    snippet `gpus_seen` says, given the number of times it was asked ($N). Returns the file
    the calls are recorded in, and a function that runs the script as a node."""
    result = run(*BIG, "--hardware", hardware, "--emit", "vllm")
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


# A node too small for the model, and the issue's command: a node holds it, but two copies do not pay.
@pytest.mark.parametrize("hardware", ["2x8xa100-40", "2x8xa100-80"])
def test_the_emitted_script_joins_the_worker_then_starts_the_server_on_the_head(tmp_path: Path, hardware: str) -> None:
    # The cluster has node0's 8 GPUs at the first look and all 16 at the second.
    calls, node = _launch_script(tmp_path, 'if [ "$N" -ge 2 ]; then echo 16; else echo 8; fi', hardware)
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


# -- what fits one node: a replica on each, while the copies leave room for the KV cache ----


def test_a_model_under_two_thirds_of_a_node_runs_a_replica_on_each_node() -> None:
    # Qwen3-235B-A22B in FP8 on H100s (which run FP8 natively): half the weights of BF16.
    hardware = resolve_hardware("2x8xh100")
    catalog = load_catalog()
    weights = weight_bytes(catalog.model("qwen3-235b-a22b"), catalog.quantization("fp8"))
    assert weights <= 2 * hardware.first_node().usable_bytes / 3
    plan = plan_json("--pipeline", "coaching", "--model", "qwen3-235b-a22b:fp8", "--hardware", "2x8xh100")
    (inst,) = plan.instances
    assert (inst.pipeline_parallel, inst.tensor_parallel, plan.replicas, plan.span_reason) == (1, 8, 2, None)
    assert all(g.startswith("n0:") for g in inst.gpus)
    assert inst.urls == ["http://node0:8100/v1", "http://node1:8100/v1"] and inst.url == inst.urls[0]
    assert all(g.instances == [inst.name] for g in plan.gpus if g.gpu.split(":")[1] in devices_on(inst, 0))
    assert not any("replicas would copy" in n for n in plan.notes)
    assert_fits(plan)

    result = run("--pipeline", "coaching", "--model", "qwen3-235b-a22b:fp8", "--hardware", "2x8xh100", "--emit", "vllm")
    assert result.exit_code == 0, result.output
    script = result.stdout
    (entry,) = script_config(script)["instances"]
    assert entry["urls"] == inst.urls and "url" not in entry
    (loaded,) = config_from_script(script).instances  # as Cantata loads it: replicas of one instance
    assert [r.url for r in loaded.replicas()] == inst.urls
    for node in ("node0", "node1"):
        block = node_block(script, node)
        assert f"CUDA_VISIBLE_DEVICES={devices_on(inst, 0)} vllm serve" in block
        assert "--pipeline-parallel-size 1" in block and f"--tensor-parallel-size {inst.tensor_parallel}" in block
    assert "ray start" not in script and "--distributed-executor-backend" not in script


def _one_copy_figures(weights: float, node_bytes: float, nodes: int) -> str:
    """The note's figures, from the rule's terms: what n replicas and one spanning copy keep."""
    return (
        f"replicas would copy {weights / GB:.0f} GB of weights onto each node and keep "
        f"{nodes * (node_bytes - weights) / GB:.0f} GB for the KV cache, under half of the "
        f"{(nodes * node_bytes - weights) / GB:.0f} GB the spanning plan keeps"
    )


def test_the_issues_command_spans_both_nodes_pipeline_parallel_2_tensor_parallel_8_over_ray() -> None:
    """The Done-when command: 470 GB of weights fit one node of eight A100 80GB, but two
    copies would leave 212 GB of KV cache where one copy over both nodes leaves 682 GB."""
    args = (*BIG, "--hardware", "2x8xa100-80")
    plan = plan_json(*args)
    (inst,) = plan.instances
    assert (inst.pipeline_parallel, inst.tensor_parallel, plan.replicas) == (2, 8, 1)
    assert inst.gpus == [f"n{node}:{i}" for node in (0, 1) for i in range(8)]
    assert inst.urls == ["http://node0:8100/v1"]  # served from the head node
    catalog = load_catalog()
    weights = weight_bytes(catalog.model("qwen3-235b-a22b"), catalog.quantization("bf16"))
    node_bytes = resolve_hardware("2x8xa100-80").first_node().usable_bytes
    assert weights > 2 * node_bytes / 3
    reason = f"{_one_copy_figures(weights, node_bytes, 2)}: one instance spans the 2 nodes, pipeline parallel 2 x tensor parallel 8"
    assert plan.span_reason == reason and plan.notes[0] == reason
    # Each GPU holds half the weights a replica's GPU would; the rest, all but the runtime, is KV
    # cache (stored twice over: tensor parallel 8 replicates the model's 4 KV heads).
    assert inst.per_gpu_gb < (weights / 8 + RUNTIME_OVERHEAD_BYTES) / GB
    kv_room = 2 * node_bytes - weights - 16 * RUNTIME_OVERHEAD_BYTES
    stored = inst.kv_tokens * inst.kv_bytes_per_token * kv_replication(catalog.model("qwen3-235b-a22b"), 8)
    assert 0.98 * kv_room < stored <= kv_room
    assert_fits(plan)

    result = run(*args, "--emit", "vllm")
    assert result.exit_code == 0, result.output
    script = result.stdout
    assert_two_node_script(script)
    # The script's header says why, with the same figures.
    header = " ".join(line[2:] for line in script.split("set -e", 1)[0].splitlines() if line.startswith("# "))
    assert f"Why not a replica per node: {reason}." in header

    composed = run(*args, "--emit", "compose")
    assert composed.exit_code == 2 and composed.stdout == ""
    assert (
        composed.stderr
        == "error: a compose file describes one machine, and this plan uses 2 nodes (16 GPUs); use --emit vllm\n"
    )


def _near_the_bound() -> tuple[tuple[str, str, float, float, int], tuple[str, str, float, float, int]]:
    """The catalogue's model and hardware closest to the bound W = n N / (2n - 1) on each side:
    (model:quant, hardware, W, N, n), from the planner's own weights and usable memory."""
    catalog = load_catalog()
    longest = max(role.context for role in Workload(load_pipeline(COACHING).spec).roles.values())
    cases = []
    for model in catalog.models:
        if model.native_context < longest:
            continue
        for quant in catalog.quantizations_for(model):
            weights = weight_bytes(model, quant)
            for gpu in ("rtx4090", "a40", "a100-40gb", "a100-80gb", "h100", "h200"):
                for nodes, per_node in ((2, 4), (2, 8), (3, 4), (3, 8)):
                    hardware = f"{nodes}x{per_node}x{gpu}"
                    node_bytes = resolve_hardware(hardware).first_node().usable_bytes
                    ratio = weights * (2 * nodes - 1) / (nodes * node_bytes)
                    cases.append((ratio, (f"{model.name}:{quant.name}", hardware, weights, node_bytes, nodes)))
    below = max((c for c in cases if c[0] <= 1), key=lambda c: c[0])
    above = min((c for c in cases if c[0] > 1), key=lambda c: c[0])
    return below[1], above[1]


def test_the_choice_between_replicas_and_spanning_follows_the_bound() -> None:
    below, above = _near_the_bound()
    model, hardware, weights, node_bytes, nodes = below
    replicated = planned(COACHING, hardware, model)
    assert plan_shape(replicated) == ("replicas", nodes), below
    # One step past the bound, the weights are copied more than the cache they leave.
    model, hardware, weights, node_bytes, nodes = above
    spanning = planned(COACHING, hardware, model)
    assert plan_shape(spanning) == ("spanning", nodes), above
    assert spanning.span_reason is not None
    assert spanning.span_reason.startswith(_one_copy_figures(weights, node_bytes, nodes))


def plan_shape(plan: Plan) -> tuple[str, int]:
    if plan.replicas > 1:
        assert all(i.pipeline_parallel == 1 for i in plan.instances)
        return "replicas", plan.replicas
    (inst,) = plan.instances
    return "spanning", inst.pipeline_parallel


@pytest.mark.parametrize("nodes", [2, 3, 8])
def test_replicas_pay_while_they_keep_half_the_cache_of_one_copy(nodes: int) -> None:
    node_bytes = resolve_hardware("8xa100-80").usable_bytes
    bound = nodes * node_bytes / (2 * nodes - 1)
    for weights in (0.1 * bound, 0.999 * bound, 1.001 * bound, 1.5 * bound, node_bytes):
        memory = NodeMemory(nodes, node_bytes, weights)
        assert memory.replicas_pay == (2 * memory.replicas_kv >= memory.spanning_kv) == (weights <= bound)
        assert memory.spanning_kv == nodes * node_bytes - weights


def test_several_instances_past_the_bound_keep_one_copy_each_across_the_nodes() -> None:
    # 235 GB and 212 GB: both fit one node of eight A100 80GB together, but two copies of the
    # pair would leave 258 GB of KV cache where one copy leaves 705 GB.
    plan = planned(COACHING, "2x8xa100-80", "coach=glm-4.5-air:bf16", "qwen3-235b-a22b:fp8")
    assert plan.replicas == 1 and len(plan.instances) == 2
    assert sorted(i.gpus[0][:2] for i in plan.instances) == ["n0", "n1"]  # one node each
    assert (
        plan.span_reason is not None
        and "one copy of each of the 2 instances runs across the 2 nodes" in plan.span_reason
    )
    assert all(len(i.urls) == 1 for i in plan.instances)
    assert_fits(plan)


def test_instances_sharing_gpus_stay_replicated_and_the_note_says_why() -> None:
    """Stretched over the nodes, two servers' Ray ranks would share a GPU, which Ray cannot place."""
    shared = planned(FACTORY, "2x4xa40")
    assert shared.replicas == 2 and shared.span_reason is None
    weights = sum(i.weights_gb for i in shared.instances)
    node_gb = sum(g.memory_gb for g in shared.gpus if g.gpu.startswith("n0:")) * USABLE_FRACTION
    assert weights > 2 * node_gb / 3  # past the bound: spanning was wanted
    instances = [set(i.gpus) for i in shared.instances]
    assert any(a & b for a in instances for b in instances if a is not b)
    assert shared.notes[0].startswith(f"replicas would copy {weights:.0f} GB of weights onto each node")
    assert (
        "share GPUs, and over one Ray cluster each rank of a server spanning nodes claims a whole GPU"
        in (shared.notes[0])
    )


def test_no_gpu_holds_stages_of_two_servers_spanning_nodes() -> None:
    """GLM-4.5-Air in BF16 spans both nodes of four A40 on every GPU; gpt-oss-120b would fit
    beside it only as a second set of Ray ranks on the same GPUs, which Ray cannot place."""
    catalog = load_catalog()
    requests = [
        InstanceRequest(name=name, model=model, quant=catalog.quantization(quant), kv_budget=0.0)
        for name, model, quant in (
            ("glm", catalog.model("glm-4.5-air"), "bf16"),
            ("gpt-oss", catalog.model("gpt-oss-120b"), "mxfp4"),
        )
    ]
    hardware = resolve_hardware("2x4xa40")
    (glm,) = pack(requests[:1], hardware).values()
    assert glm.pipeline_parallel == 2 and len(glm.gpus) == len(hardware.gpus)
    with pytest.raises(PackingError) as refused:
        pack(requests, hardware)
    assert refused.value.request.name == "gpt-oss"
    assert "(8 GPU(s) hold a stage of a server spanning nodes, where Ray gives each rank a whole GPU)" in (
        refused.value.reason
    )


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


def test_a_model_with_fewer_layers_than_nodes_stays_replicated_and_the_note_says_why() -> None:
    catalog = load_catalog()
    model = catalog.model("gpt-oss-20b")
    weights = weight_bytes(model, catalog.quantization("mxfp4"))
    nodes = model.layers + 8
    hardware = f"{nodes}x1x4090"
    node_bytes = resolve_hardware(hardware).first_node().usable_bytes
    assert weights > nodes * node_bytes / (2 * nodes - 1)  # past the bound: spanning was wanted
    plan = planned(COACHING, hardware, "gpt-oss-20b:mxfp4")
    assert plan.replicas == nodes and plan.span_reason is None
    assert plan.notes[0] == (
        f"{_one_copy_figures(weights, node_bytes, nodes)}, but gpt-oss-20b has fewer layers ({model.layers}) than "
        "stages: each node runs a replica"
    )
