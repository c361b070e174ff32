"""Plans: model choice, packing, speed, infeasibility, and the `plan` command end to end."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from cantata import bundled as bundled_pipelines
from cantata.config import InstancesConfig
from cantata.loader import load_pipeline
from cantata.planner.catalog import load_catalog, parse_model_arg
from cantata.planner.compose import CANTATA_PORT, CONFIG_TARGET
from cantata.planner.emit import SCRIPT_FILE, emit_vllm, next_steps, vllm_args
from cantata.planner.hardware import GPU, Hardware, Node, resolve_hardware
from cantata.planner.memory import GB
from cantata.planner.plan import PlanInfeasible, make_plan
from cantata.planner.speed import Engine
from tests.helpers.plans import COACHING, FACTORY, assert_fits, config_from_script, planned, run
from tests.helpers.postgres import PostgresServer
from tests.helpers.readme import commands
from tests.helpers.servers import ServerProcess, free_port

REAL_MODEL_SECTION = "## From the embedded model to vLLM"

# -- the nine-role team on one RTX 4090 ---------------------------------------------------


def test_nine_roles_fit_one_4090_on_at_most_four_instances() -> None:
    result = run("--pipeline", str(FACTORY), "--hardware", "1x4090", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    instances = data["instances"]
    assert 1 <= len(instances) <= 4
    served = [role for inst in instances for role in inst["roles"]]
    assert sorted(served) == sorted(
        ["orchestrator", "analyst", "architect", "builder", "critic", "tester", "fixer", "documenter", "deployer"]
    )
    assert sum(inst["memory_gb"] for inst in instances) <= 24
    (gpu,) = data["gpus"]
    assert gpu["used_gb"] <= 24 and gpu["free_gb"] >= 0
    assert sum(inst["gpu_memory_utilization"] for inst in instances) <= 0.9


def test_roles_get_a_model_suited_to_their_need() -> None:
    plan = planned(FACTORY, "1x4090")
    by_role = {r.name: r for r in plan.roles}
    # A code model for the code roles, chosen on its published HumanEval score.
    assert {by_role[n].model for n in ("builder", "tester", "fixer")} == {"qwen2.5-coder-7b"}
    assert by_role["builder"].benchmark == "humaneval" and not by_role["builder"].proxy
    # Reasoning roles share one instance with a model chosen on GPQA.
    assert len({by_role[n].instance for n in ("orchestrator", "analyst", "architect", "critic")}) == 1
    assert by_role["analyst"].benchmark == "gpqa"
    assert_fits(plan)


def test_more_memory_buys_larger_models() -> None:
    small = planned(FACTORY, "1x4090")
    large = planned(FACTORY, "8xh100")
    catalog = load_catalog()
    for role in ("builder", "architect", "deployer"):
        before = next(r for r in small.roles if r.name == role)
        after = next(r for r in large.roles if r.name == role)
        assert catalog.model(after.model).params >= catalog.model(before.model).params
        assert after.score >= before.score
    assert_fits(large)


def test_function_agents_are_not_planned() -> None:
    plan = planned(COACHING, "h100")
    names = {r.name for r in plan.roles}
    assert "guard" not in names and "conflicts" not in names
    assert names == {"coach", "shadow", "persona", "plasticity", "stability", "synth"}


# -- speed --------------------------------------------------------------------------------


def test_two_4090s_with_qwen3_30b_beat_an_a40_pod_with_qwen3_235b_by_2_to_4_times() -> None:
    fast = planned(COACHING, "2x4090", "qwen3-30b-a3b")
    slow = planned(COACHING, "4xa40", "qwen3-235b-a22b")
    assert {i.model for i in fast.instances} == {"qwen3-30b-a3b"}
    assert {i.model for i in slow.instances} == {"qwen3-235b-a22b"}
    ratio = slow.timing.final_s / fast.timing.final_s
    assert 2 <= ratio <= 4, ratio
    assert fast.timing.early_s is not None and slow.timing.early_s is not None
    assert fast.timing.early_s < slow.timing.early_s


def test_the_early_reply_comes_before_the_merged_one() -> None:
    plan = planned(COACHING, "2x4090", "qwen3-30b-a3b")
    timing = {a.name: a for a in plan.timing.agents}
    assert plan.timing.early_agent == "coach" and plan.timing.final_agent == "synth"
    assert plan.timing.early_s is not None and plan.timing.early_s < plan.timing.final_s
    # The DAG holds: the three analyses start after shadow, synth after all of them.
    for name in ("persona", "plasticity", "stability"):
        assert timing[name].start_s >= timing["shadow"].end_s
        assert timing["synth"].start_s >= timing[name].end_s
    assert timing["synth"].start_s >= timing["coach"].end_s


def test_decode_is_bounded_by_bandwidth_over_bytes_per_token() -> None:
    catalog = load_catalog()
    gpu = resolve_hardware("h100").gpus[0].spec
    dense = Engine(model=catalog.model("qwen3-32b"), quant=catalog.quantization("bf16"), gpu=gpu)
    moe = Engine(model=catalog.model("qwen3-30b-a3b"), quant=catalog.quantization("bf16"), gpu=gpu)
    # Same total size, one tenth of the parameters read per token: several times faster.
    assert moe.decode_tokens_per_s() > 3 * dense.decode_tokens_per_s()
    # Never faster than the bandwidth allows.
    assert dense.decode_tokens_per_s() < gpu.bandwidth_gbs * 1e9 / (32.8e9 * 2)
    # Batching costs a mixture-of-experts more weight reads than a dense model.
    assert moe.weight_bytes_read(8) > 2 * moe.weight_bytes_read(1)
    assert dense.weight_bytes_read(8) == dense.weight_bytes_read(1)


# -- packing ------------------------------------------------------------------------------


def test_a_model_larger_than_one_gpu_runs_tensor_parallel_in_a_node() -> None:
    plan = planned(COACHING, "8xh100", "llama-3.1-70b:bf16")
    (inst,) = plan.instances
    assert inst.tensor_parallel >= 2 and inst.pipeline_parallel == 1
    assert inst.weights_gb == pytest.approx(141.2, rel=0.01)
    assert_fits(plan)


def two_a40_boxes() -> Hardware:
    a40 = resolve_hardware("a40").gpus[0].spec
    return Hardware(
        name="two-a40-boxes",
        description="two machines with one A40 each",
        nodes=[Node(index=i, gpus=[GPU(node=i, index=0, spec=a40)]) for i in range(2)],
    )


def test_a_model_larger_than_any_node_runs_pipeline_parallel_across_nodes() -> None:
    catalog = load_catalog()
    plan = make_plan(load_pipeline(COACHING).spec, two_a40_boxes(), [parse_model_arg("qwen3-32b:bf16", catalog)])
    (inst,) = plan.instances
    assert (inst.tensor_parallel, inst.pipeline_parallel) == (1, 2)
    assert inst.gpus == ["n0:0", "n1:0"]
    assert any("Ray" in note for note in plan.notes)


def test_kv_budget_grows_with_concurrency_and_context() -> None:
    base = planned(COACHING, "h100", "qwen3-8b:bf16")
    busy = planned(COACHING, "h100", "qwen3-8b:bf16", concurrency=4)
    long = planned(COACHING, "h100", "qwen3-8b:bf16", context=16384)
    assert busy.instances[0].max_concurrency == 4 * base.instances[0].max_concurrency
    assert busy.instances[0].kv_cache_gb == pytest.approx(4 * base.instances[0].kv_cache_gb, rel=0.01)
    assert long.instances[0].context == 16384
    assert long.instances[0].kv_cache_gb > base.instances[0].kv_cache_gb
    # The three parallel analyses can be in flight at once, plus the coach: four sequences.
    assert base.instances[0].max_concurrency == 4


# -- refusals -----------------------------------------------------------------------------


def test_qwen3_235b_bf16_on_one_4090_is_refused_with_a_reason_and_a_suggestion() -> None:
    result = run("--pipeline", str(COACHING), "--hardware", "1x4090", "--model", "qwen3-235b-a22b:bf16")
    assert result.exit_code == 2
    assert result.stdout == ""
    message = result.stderr.strip()
    assert "\n" not in message
    assert message.startswith("error: cannot plan 'coaching' on 1x4090")
    assert "qwen3-235b-a22b-bf16" in message and "21.6 GB usable" in message
    assert "nearest feasible change" in message
    assert "--hardware 8xh100" in message
    assert re.search(r"--model \S+", message.split("nearest feasible change")[1])


def test_a_smaller_quantisation_is_suggested_when_it_fits() -> None:
    with pytest.raises(PlanInfeasible) as caught:
        planned(COACHING, "4xa40", "qwen3-235b-a22b:fp8")
    assert "a smaller quantisation: --model qwen3-235b-a22b:awq" in str(caught.value)


def test_a_shorter_context_is_suggested_when_the_kv_cache_is_what_does_not_fit() -> None:
    with pytest.raises(PlanInfeasible) as caught:
        planned(COACHING, "1x4090", "qwen3-14b:awq", context=40960, concurrency=8)
    assert "a shorter context: --context" in str(caught.value)


def test_bad_input_exits_2_with_one_line() -> None:
    cases = {
        ("--model", "qwen9-1t"): "known models: qwen3-0.6b",
        ("--hardware", "tpu-v5"): "known profiles: 1x4090",
        ("--hardware", "2x24@1008"): "COUNTxMEMGB@BANDWIDTH",
        ("--model", "nobody=qwen3-8b"): "model agents: orchestrator",
        ("--context", "100"): "too small",
    }
    for extra, expected in cases.items():
        args = ["--pipeline", str(FACTORY), "--hardware", "1x4090", *extra]
        if extra[0] == "--hardware":
            args = ["--pipeline", str(FACTORY), *extra]
        result = run(*args)
        assert result.exit_code == 2, (extra, result.output)
        assert expected in result.stderr, (extra, result.stderr)
        assert result.stderr.count("\n") == 1


def test_a_function_agent_cannot_be_given_a_model() -> None:
    result = run("--pipeline", str(COACHING), "--hardware", "h100", "--model", "guard=qwen3-8b")
    assert result.exit_code == 2
    assert "function agent" in result.stderr


def test_an_unknown_pipeline_is_refused() -> None:
    result = run("--pipeline", "no-such-pipeline", "--hardware", "h100")
    assert result.exit_code == 2
    assert "unknown pipeline 'no-such-pipeline'" in result.stderr


# -- choosing per role, aliases -----------------------------------------------------------


def test_model_for_one_role_overrides_the_choice_for_that_role_only() -> None:
    plan = planned(FACTORY, "2x4090", "builder=qwen3-8b:awq")
    by_role = {r.name: r for r in plan.roles}
    assert (by_role["builder"].model, by_role["builder"].quantization) == ("qwen3-8b", "awq")
    assert by_role["tester"].model != "qwen3-8b"


def test_roles_of_one_alias_on_different_instances_keep_the_pipeline_runnable(tmp_path: Path) -> None:
    # Everything under one alias, but the code roles still get a code model.
    spec = yaml.safe_load(FACTORY.read_text())
    for agent in spec["agents"]:
        agent["model"] = "default"
    single = tmp_path / "factory.yaml"
    single.write_text(yaml.safe_dump(spec))
    plan = planned(single, "1x4090")
    assert len(plan.instances) >= 2
    homes = [i for i in plan.instances if "default" in i.aliases]
    assert len(homes) == 1  # the alias is bound exactly once: to the instance with most of its roles
    home = homes[0]
    assert len(home.roles) >= 5
    moved = {c.role: c.use for c in plan.alias_changes}
    assert set(moved) == {r for i in plan.instances if i is not home for r in i.roles}
    for role, instance in moved.items():
        target = next(i for i in plan.instances if i.name == instance)
        assert role in target.roles and instance in target.aliases
    assert any("model:" in note and "runs as is" in note for note in plan.notes)


# -- launch configs -----------------------------------------------------------------------


def test_emit_vllm_prints_launchable_commands_and_the_instances_config() -> None:
    result = run("--pipeline", str(COACHING), "--hardware", "a100-211", "--emit", "vllm")
    assert result.exit_code == 0, result.output
    script = result.stdout
    commands = [block for block in script.split("\n\n") if " vllm serve " in block]
    assert commands
    for command in commands:
        for flag in (
            "--tensor-parallel-size",
            "--pipeline-parallel-size",
            "--gpu-memory-utilization",
            "--max-model-len",
            "--enable-prefix-caching",
            "--scheduling-policy priority",
            "--served-model-name",
        ):
            assert flag in command, flag
    config = config_from_script(script)
    pipeline = load_pipeline(COACHING)
    aliases = {a.model for a in pipeline.spec.agents if not a.is_function}
    for alias in aliases:
        instance = config.instance_for(alias)
        assert instance is not None and instance.backend == "openai"
        assert instance.url is not None and instance.url.endswith("/v1")
        assert instance.priority_scheduling and instance.dialect == "vllm"
        assert f"--served-model-name {instance.model}" in script
    utilisation: dict[str, float] = {}
    for command in commands:
        match = re.search(r"CUDA_VISIBLE_DEVICES=([\d,]+)", command)
        fraction = re.search(r"--gpu-memory-utilization ([\d.]+)", command)
        assert match and fraction
        for device in match.group(1).split(","):
            utilisation[device] = utilisation.get(device, 0) + float(fraction.group(1))
    assert all(total <= 0.9 for total in utilisation.values())


def _ports(script: str) -> list[int]:
    return [int(port) for port in re.findall(r"--port (\d+)", script)]


def test_emitted_servers_listen_clear_of_cantatas_port_where_the_config_looks() -> None:
    two = ("--pipeline", "example", "--hardware", "2x4090", "--model", "quick=qwen3-4b", "--emit", "vllm")
    for extra, first in (((), 8100), (("--port-base", "9200"), 9200)):
        result = run(*two, *extra)
        assert result.exit_code == 0, result.output
        config = config_from_script(result.stdout)
        assert _ports(result.stdout) == [first, first + 1]
        # The script starts the servers where it runs: the config reaches them there.
        assert [i.url for i in config.instances] == [f"http://localhost:{p}/v1" for p in (first, first + 1)]
        for port in (first, first + 1):
            assert f"wait_ready http://localhost:{port}/v1 $!" in result.stdout
    refused = run(*two, "--port-base", "65535")
    assert refused.exit_code == 2 and "--port-base 65535" in refused.output and "65536" in refused.output


def test_servers_on_one_node_of_a_multi_node_profile_are_reached_on_localhost() -> None:
    result = run("--pipeline", str(COACHING), "--hardware", "a100-211", "--emit", "vllm")
    assert result.exit_code == 0, result.output
    config = config_from_script(result.stdout)
    assert all(i.url and i.url.startswith("http://localhost:") for i in config.instances)
    assert "# Every server runs on node0: run this script there" in result.stdout
    assert "NODE" not in result.stdout


def test_servers_on_several_nodes_start_on_the_node_the_script_is_given(tmp_path: Path) -> None:
    catalog = load_catalog()
    models = ["coach=qwen3-32b:q8_0", "synth=qwen3-30b-a3b:q8_0"]  # 35 and 32 GB: one A40 each
    plan = make_plan(load_pipeline(COACHING).spec, two_a40_boxes(), [parse_model_arg(m, catalog) for m in models])
    script = emit_vllm(plan)
    config = config_from_script(script)
    hosts = {i.name: (i.url or "").split("/")[2] for i in config.instances}
    assert hosts == {inst.name: f"{inst.host}:{inst.port}" for inst in plan.instances}
    assert sorted(h.split(":")[0] for h in hosts.values()) == ["node0", "node1"]
    for inst in plan.instances:  # each server in its node's block, waited on where it runs
        block = script.split(f'if [ "$NODE" = {inst.host} ]; then\n', 1)[1].split("\nfi\n", 1)[0]
        assert f"--port {inst.port}" in block and f"wait_ready http://localhost:{inst.port}/v1" in block
    assert next_steps(plan)[0] == "sh vllm-launch.sh NODE"
    (tmp_path / "launch.sh").write_text(script)
    unnamed = subprocess.run(["sh", "launch.sh"], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert unnamed.returncode == 2 and "node0|node1" in unnamed.stderr
    assert list(tmp_path.iterdir()) == [tmp_path / "launch.sh"]  # nothing started, nothing written


def test_the_readme_takes_the_three_commands_the_script_names() -> None:
    plan_line, *steps = commands(REAL_MODEL_SECTION)
    result = run(*shlex.split(plan_line.split(">")[0])[2:])
    assert result.exit_code == 0, result.output
    header = result.stdout.split("\nset -e\n")[0]
    plan = make_plan(load_pipeline(bundled_pipelines.bundled()["coaching"]).spec, resolve_hardware("2x4090"))
    assert steps == next_steps(plan)
    for step in steps:
        assert step in header
    assert plan_line.endswith(f"> {SCRIPT_FILE}")
    assert all(f'echo "  {step}"' in result.stdout for step in steps[1:])


def test_emit_vllm_passes_quantisation_and_reasoning_parser_flags() -> None:
    result = run("--pipeline", str(COACHING), "--hardware", "2x4090", "--model", "qwen3-30b-a3b:awq", "--emit", "vllm")
    assert result.exit_code == 0, result.output
    assert "--quantization awq_marlin" in result.stdout
    assert "--reasoning-parser qwen3" in result.stdout


def test_emit_compose_runs_the_model_servers_beside_postgres_and_cantata(tmp_path: Path) -> None:
    out = tmp_path / "instances.yaml"
    result = run(
        "--pipeline", str(FACTORY), "--hardware", "1x4090", "--emit", "compose", "--config-out", str(out)
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    compose = yaml.safe_load(result.stdout)
    services = compose["services"]
    own = {"postgres", "cantata", "cantata-worker", "cantata-admin"}
    servers = {name: s for name, s in services.items() if name not in own}
    assert servers and own <= set(services)
    for service in servers.values():
        assert service["image"].startswith("vllm/vllm-openai")
        assert "--enable-prefix-caching" in service["command"]
        devices = service["deploy"]["resources"]["reservations"]["devices"][0]
        assert devices["device_ids"] == ["0"]
    # Servers sharing the one GPU start one after the other.
    assert any(set(s.get("depends_on", {})) <= set(servers) and s.get("depends_on") for s in servers.values())

    # Cantata's server and worker share one PostgreSQL and the plan's instances config,
    # which reaches each model server by its service name on its own port.
    inline = InstancesConfig.model_validate(yaml.safe_load(compose["configs"]["cantata-instances"]["content"]))
    written = InstancesConfig.model_validate(yaml.safe_load(out.read_text()))
    assert [i.name for i in inline.instances] == [i.name for i in written.instances]
    assert len(inline.instances) == len(servers)
    for instance in inline.instances:
        host, port = (instance.url or "").split("/")[2].split(":")
        assert servers[host]["ports"] == [f"{port}:{port}"]
        assert f"--served-model-name {instance.model}" in " ".join(servers[host]["command"])
    assert all((i.url or "").startswith("http://localhost:") for i in written.instances)
    db = services["postgres"]["environment"]
    for name, command in (("cantata", "serve"), ("cantata-worker", "worker")):
        service = services[name]
        assert service["command"][:2] == ["cantata", command]
        config = service["command"][service["command"].index("--config") + 1]
        assert service["configs"] == [{"source": "cantata-instances", "target": config}]
        url = service["environment"]["CANTATA_DB"]
        assert url.startswith(f"postgresql://{db['POSTGRES_USER']}:") and url.endswith(
            f"@postgres:5432/{db['POSTGRES_DB']}"
        )
        assert {n: c["condition"] for n, c in service["depends_on"].items()} == dict.fromkeys(
            ["postgres", *servers], "service_healthy"
        )
    assert services["cantata"]["ports"] == ["8000:8000"] and "--host" in services["cantata"]["command"]
    # The server queues the turns for the workers.
    assert services["cantata"]["environment"]["CANTATA_WORKERS"] == "queue"
    # CANTATA_HOME on a named volume, the same for every Cantata container, so what one writes
    # there outlives it; the state and the keys are in the one PostgreSQL.
    cantata_services = [services[name] for name in ("cantata", "cantata-worker", "cantata-admin")]
    for service in cantata_services:
        (volume,) = service["volumes"]
        name, _, target = volume.partition(":")
        assert name in compose["volumes"] and target == service["environment"]["CANTATA_HOME"]
        assert service["environment"]["CANTATA_DB"] == services["cantata"]["environment"]["CANTATA_DB"]
    # The admin service runs `cantata` commands by hand: left out of `up` (a profile), only
    # PostgreSQL started for it, never restarted.
    admin = services["cantata-admin"]
    assert admin["entrypoint"] == ["cantata"] and admin["profiles"] and "restart" not in admin
    assert list(admin["depends_on"]) == ["postgres"]
    assert "docker compose run --rm cantata-admin keys create --user admin --admin" in result.stdout


def test_the_composed_server_waits_for_the_first_key_that_the_header_says_to_make(
    tmp_path: Path, postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What compose runs, run here as processes: each Cantata service's command and environment,
    with this machine's names for the compose file's (the database, the config file, a home
    per container, a free port)."""
    result = run("--pipeline", str(FACTORY), "--hardware", "1x4090", "--emit", "compose")
    compose = yaml.safe_load(result.stdout)
    config = tmp_path / "instances.yaml"
    config.write_text(compose["configs"]["cantata-instances"]["content"])
    url, port = postgres.new_database(), free_port()

    def container(name: str, *args: str) -> list[str]:
        """The command of service `name` (with `args`, as `docker compose run` gives them), its
        environment set; each container has a CANTATA_HOME of its own."""
        service = compose["services"][name]
        for key, value in service["environment"].items():
            monkeypatch.setenv(key, str(config) if value == CONFIG_TARGET else value)
        monkeypatch.setenv("CANTATA_DB", url)
        monkeypatch.setenv("CANTATA_HOME", str(tmp_path / name))
        command = [*service.get("entrypoint", []), *(args or service["command"])]
        here = {CONFIG_TARGET: str(config), str(CANTATA_PORT): str(port)}
        assert command[0] == "cantata"
        return [sys.executable, "-m", "cantata", *(here.get(part, part) for part in command[1:])]

    serve = container("cantata")
    assert "0.0.0.0" in serve
    refused = subprocess.run(serve, capture_output=True, text=True, timeout=60)  # compose restarts it meanwhile
    assert refused.returncode == 2 and "refusing to serve on 0.0.0.0 without API keys" in refused.stderr
    # Step 1 of the header, as it says.
    step = re.search(r"^# 1\. docker compose run --rm cantata-admin (.+)$", result.stdout, re.MULTILINE)
    assert step is not None
    made = subprocess.run(container("cantata-admin", *shlex.split(step[1])), capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    with ServerProcess(tmp_path / "serve.log", container("cantata"), f"http://127.0.0.1:{port}/healthz"):
        who = httpx.get(f"http://127.0.0.1:{port}/api/whoami", headers={"Authorization": f"Bearer {key}"})
        assert who.json() == {"user": "admin", "admin": True, "auth": "keys"}
        assert httpx.get(f"http://127.0.0.1:{port}/api/whoami").status_code == 401


def test_the_table_shows_instances_gpus_roles_and_times() -> None:
    result = run("--pipeline", str(COACHING), "--hardware", "2x4090", "--model", "qwen3-30b-a3b")
    assert result.exit_code == 0, result.output
    text = result.stdout
    for heading in ("INSTANCE", "QUANT", "SERVER", "GPUS", "KV TOKENS", "ROLES", "USED", "FREE"):
        assert heading in text
    assert " localhost:8100 " in text  # where the emitted script starts the server
    assert "qwen3-30b-a3b" in text
    assert re.search(r"early reply \(coach\) [\d.]+ s, merged reply \(synth\) [\d.]+ s", text)


def test_a_bundled_pipeline_is_found_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import cantata.bundled as bundled

    (tmp_path / "coaching").mkdir()
    shutil.copy(COACHING, tmp_path / "coaching" / "pipeline.yaml")
    shutil.copy(COACHING.with_name("stand_ins.py"), tmp_path / "coaching")
    monkeypatch.setattr(bundled, "BUNDLED_DIR", tmp_path)
    result = run("--pipeline", "coaching", "--hardware", "a100-211", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["pipeline"] == "coaching"


def test_memory_per_instance_adds_up() -> None:
    plan = planned(FACTORY, "2x4090")
    for inst in plan.instances:
        assert inst.memory_gb == pytest.approx(inst.weights_gb + inst.kv_cache_gb + inst.runtime_gb, abs=0.02)
        shards = inst.tensor_parallel * inst.pipeline_parallel
        assert inst.per_gpu_gb * shards >= inst.weights_gb
    assert plan.memory_used_gb * GB <= sum(g.memory_gb for g in plan.gpus) * GB


def test_many_roles_with_different_needs_and_contexts_still_plan(tmp_path: Path) -> None:
    needs = ["reasoning", "code", "tool_use", "chat"]
    agents = []
    for i in range(12):
        agent: dict[str, Any] = {
            "name": f"r{i}",
            "model": f"alias{i}",
            "needs": needs[i % 4],
            "min_context": [8192, 36000, 50000][i % 3],
            "prompt": "x",
        }
        if i:
            agent["reads"] = [f"r{i - 1}"]
        agents.append(agent)
    path = tmp_path / "wide.yaml"
    path.write_text(yaml.safe_dump({"name": "wide", "agents": agents}))
    plan = planned(path, "1x4090")
    assert len(plan.roles) == 12 and len(plan.instances) <= 4
    catalog = load_catalog()
    for inst in plan.instances:
        # Roles that need 50 000 tokens only get models whose native context holds them.
        assert inst.context <= catalog.model(inst.model).native_context
    for role in plan.roles:
        assert catalog.model(role.model).native_context >= role.context
    assert_fits(plan)


def test_the_json_plan_reports_kv_cache_per_token() -> None:
    result = run("--pipeline", str(COACHING), "--hardware", "2x4090", "--model", "qwen3-30b-a3b", "--json")
    assert result.exit_code == 0, result.output
    (inst,) = json.loads(result.stdout)["instances"]
    assert inst["kv_bytes_per_token"] == 96 * 1024
    assert inst["kv_tokens"] * inst["kv_bytes_per_token"] <= inst["gpu_memory_utilization"] * 24e9


def test_emit_vllm_enables_tool_calls_for_instances_whose_roles_have_tools(tmp_path: Path) -> None:
    (tmp_path / "acts.py").write_text("def look(key: str) -> str:\n    return key\n")
    agents = [
        {"name": "talker", "model": "chat", "prompt": "x"},
        {"name": "actor", "model": "act", "prompt": "x", "reads": ["talker"], "tools": [{"function": "acts.look"}]},
    ]
    path = tmp_path / "tooled.yaml"
    path.write_text(yaml.safe_dump({"name": "tooled", "agents": agents}))
    plan = planned(path, "2x4090", "actor=qwen3-30b-a3b:awq", "talker=qwen3-8b:awq")
    flagged = {inst.name for inst in plan.instances if "--tool-call-parser" in " ".join(vllm_args(inst, plan))}
    actor = next(r for r in plan.roles if r.name == "actor")
    talker = next(r for r in plan.roles if r.name == "talker")
    assert actor.tools and actor.need == "chat"  # the tools alone ask for the flags
    assert actor.instance in flagged and talker.instance not in flagged
    script = emit_vllm(plan)
    assert script.count("--enable-auto-tool-choice") == 1 and script.count("--tool-call-parser hermes") == 1
