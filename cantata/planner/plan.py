"""A plan: the chosen instances, where they run, what they hold, how fast a turn goes.

`make_plan` is the entry point; an infeasible request raises PlanInfeasible (a
UserError: exit 2) with the reason and the nearest changes that would fit.

Aliases. The instances config binds model *aliases* (an agent's `model:`) to
instances, not roles. The planner chooses per role, so the roles sharing an alias
may land on different instances. Then the alias stays bound to the instance serving
most of its roles, which keeps the pipeline runnable unchanged, and every instance
also serves an alias of its own name; the plan lists, as `alias_changes`, the roles
whose `model:` should be set to that name to run on the instance planned for them.

Nodes. On several identical nodes, a plan that fits one node is made for node 0 and may run
on every node, one replica per node (the config lists them as `urls:` of one instance),
each sized for its share of the turns in flight. A plan spanning n nodes (pipeline parallel
across them) holds one copy of the weights; a replica per node holds n. Replicas are planned
only while they keep at least half the KV cache the spanning plan would have, i.e. while
(n-1) x W <= n x (N - W) (W: the instance's weights, N: a node's usable memory; for one
model that is W <= n N / (2n - 1), two thirds of a node for two nodes). Past that, the copies
of the weights take more memory than the cache they leave; the plan spans the nodes instead.
As before, replicas also need to score at least as well as the plan made for all the nodes.
With several instances W is their weights together; spanning, each keeps its GPUs on every
node (nodes.py). What does not fit one node spans nodes whatever the rule.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from cantata.errors import UserError
from cantata.planner.catalog import NEED_BENCHMARK, PROXY_DISCOUNT, Benchmark, Catalog, ModelChoice, load_catalog
from cantata.planner.hardware import MAX_NODES, Hardware, gpu_types, profile, profile_names, resolve_hardware
from cantata.planner.memory import GB, RUNTIME_OVERHEAD_BYTES, kv_bytes_per_token, kv_replication, weight_bytes
from cantata.planner.nodes import Layout, lay_out
from cantata.planner.selection import CONTEXT_STEP, MIN_CONTEXT, Failure, Planner, Selection
from cantata.planner.speed import INTERNODE_BANDWIDTH_GBS, INTERNODE_HOP_S, TurnTiming
from cantata.planner.workload import Workload
from cantata.spec import Need, PipelineSpec

# Model servers listen from here up, one port per instance: clear of `cantata serve`'s 8000,
# so the servers and Cantata run side by side on one machine as the plan emits them.
DEFAULT_PORT_BASE = 8100


class PlanInfeasible(UserError):
    """The roles need more than the hardware can hold; the message says why and what would fit."""


class PlannedRole(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    need: Need
    alias: str
    instance: str
    model: str
    quantization: str
    score: float
    benchmark: Benchmark | None
    score_source: str | None
    proxy: bool
    prompt_tokens: int
    output_tokens: int
    context: int
    tools: bool = False  # it calls tools (the pipeline lists some for it)


class PlannedInstance(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    model: str
    hf_repo: str
    checkpoint: str | None
    quantization: str
    quantization_label: str
    vllm_quantization: str | None
    roles: list[str]
    aliases: list[str]
    gpus: list[str]
    gpu_label: str
    host: str
    port: int
    url: str
    urls: list[str]  # one per replica, `url` first
    tensor_parallel: int
    pipeline_parallel: int
    weights_gb: float
    kv_cache_gb: float
    runtime_gb: float
    memory_gb: float
    per_gpu_gb: float
    gpu_memory_utilization: float
    context: int
    max_concurrency: int
    kv_bytes_per_token: int
    kv_tokens: int
    decode_tokens_per_s: float
    prefill_tokens_per_s: float
    reasoning_parser: str | None
    tool_parser: str | None
    gguf: bool


class PlannedGPU(BaseModel):
    model_config = ConfigDict(frozen=True)

    gpu: str
    label: str
    memory_gb: float
    used_gb: float
    free_gb: float
    instances: list[str]


class AliasChange(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: str
    alias: str
    use: str


class Plan(BaseModel):
    model_config = ConfigDict(frozen=True)

    pipeline: str
    hardware: str
    hardware_description: str
    concurrency: int
    replicas: int
    instances: list[PlannedInstance]
    roles: list[PlannedRole]
    gpus: list[PlannedGPU]
    memory_used_gb: float
    memory_total_gb: float
    timing: TurnTiming
    alias_changes: list[AliasChange]
    notes: list[str]
    # Why the plan spans the nodes where a replica on each was possible (the first note too).
    span_reason: str | None = None


def make_plan(
    spec: PipelineSpec,
    hardware: Hardware,
    forced: list[ModelChoice] | None = None,
    context: int | None = None,
    concurrency: int = 1,
    catalog: Catalog | None = None,
    port_base: int = DEFAULT_PORT_BASE,
) -> Plan:
    catalog = catalog or load_catalog()
    workload = Workload(spec)
    forced = forced or []
    _check_arguments(workload, forced, context, concurrency)
    planner = Planner(workload, hardware, catalog, forced, context, concurrency)
    result = planner.search()
    if isinstance(result, Failure):
        changes = _nearest_changes(planner)
        hint = f"; nearest feasible change: {'; or '.join(changes)}" if changes else ""
        raise PlanInfeasible(f"cannot plan '{workload.name}' on {hardware.name}: {result.reason}{hint}")
    layout = lay_out(planner, result)
    last_port = port_base + len(layout.selection.roles_of) - 1
    if not 1 <= port_base <= last_port <= 65535:
        raise UserError(
            f"--port-base {port_base}: the {len(layout.selection.roles_of)} server(s) need ports up to {last_port}"
        )
    return _assemble(layout, port_base, hardware, concurrency)


def _check_arguments(workload: Workload, forced: list[ModelChoice], context: int | None, concurrency: int) -> None:
    if not workload.roles:
        raise UserError(f"pipeline '{workload.name}' has only function agents: there is no model to plan")
    if concurrency < 1:
        raise UserError("--concurrency must be at least 1")
    for choice in forced:
        if choice.role is not None and choice.role not in workload.roles:
            kind = "a function agent (it runs no model)" if choice.role in workload.functions else "not an agent"
            raise UserError(
                f"--model {choice.role}=...: '{choice.role}' is {kind} of '{workload.name}'; "
                f"model agents: {', '.join(workload.roles)}"
            )
    if context is not None:
        if context < 256:
            raise UserError(f"--context {context} is too small; give at least 256 tokens")
        for role in workload.roles.values():
            if role.min_context and role.min_context > context:
                raise UserError(
                    f"--context {context} is below what role '{role.name}' states it needs (min_context "
                    f"{role.min_context})"
                )


def _nearest_changes(planner: Planner) -> list[str]:
    """Changes of one argument that make the plan feasible: quantisation, model, context, GPUs."""
    catalog = planner.catalog
    out: list[str] = []

    def feasible(
        forced: list[ModelChoice] | None = None, context: int | None = None, hardware: Hardware | None = None
    ) -> Selection | None:
        trial = Planner(
            planner.workload,
            hardware or planner.hardware,
            catalog,
            planner.forced if forced is None else forced,
            context or planner.context,
            planner.concurrency,
        )
        result = trial.search()
        return result if isinstance(result, Selection) else None

    for choice in planner.forced:
        prefix = f"{choice.role}=" if choice.role else ""
        others = [c for c in planner.forced if c is not choice]
        if choice.quant is not None:
            bits = choice.quant.bits_per_weight
            smaller = sorted(
                (q for q in catalog.quantizations_for(choice.model) if q.bits_per_weight < bits),
                # Nearest first: what keeps the most quality, then the most bits.
                key=lambda q: (-q.quality, -q.bits_per_weight),
            )
            for quant in smaller:
                swapped = ModelChoice(role=choice.role, model=choice.model, quant=quant)
                if feasible(forced=[*others, swapped]):
                    out.append(f"a smaller quantisation: --model {prefix}{choice.model.name}:{quant.name}")
                    break
        roles = [r for r in planner.workload.roles.values() if choice.role in (None, r.name)]
        smaller_models = sorted(
            (m for m in catalog.models if m.params < choice.model.params),
            key=lambda m: -sum(catalog.role_score(m, r.need).value for r in roles),
        )
        for model in smaller_models:
            selection = feasible(forced=[*others, ModelChoice(role=choice.role, model=model, quant=None)])
            if selection is not None:
                chosen = selection.assignment[roles[0].name].quant.name
                out.append(f"a smaller model: --model {prefix}{model.name}:{chosen}")
                break

    all_roles = list(planner.workload.roles.values())
    longest = planner.context or max(max(MIN_CONTEXT, -(-r.context // CONTEXT_STEP) * CONTEXT_STEP) for r in all_roles)
    floor = max((r.min_context or 0 for r in all_roles), default=0)
    for context in (32768, 16384, 8192, 4096, 2048):
        if floor <= context < longest and feasible(context=context):
            out.append(f"a shorter context: --context {context}")
            break

    total = planner.hardware.memory_gb
    for name in sorted(profile_names(), key=lambda p: profile(p).memory_gb):
        bigger = profile(name)
        if bigger.memory_gb > total and feasible(hardware=bigger):
            out.append(f"more GPUs: --hardware {name}")
            break
    more = _more_nodes(planner.hardware, feasible)
    if more:
        out.append(f"more nodes: --hardware {more}")
    return out


# How many nodes beyond the given ones the suggestions try (each try is a search).
MORE_NODES_TRIED = 4


def _more_nodes(hardware: Hardware, feasible: Callable[..., Selection | None]) -> str | None:
    """The fewest more nodes like these that hold the plan, as a NODESxGPUSxTYPE spec."""
    spec = hardware.nodes[0].gpus[0].spec
    if not (len(hardware.nodes) == 1 or hardware.identical_nodes) or spec.name not in gpu_types():
        return None
    per_node = len(hardware.nodes[0].gpus)
    for count in range(len(hardware.nodes) + 1, min(len(hardware.nodes) + MORE_NODES_TRIED, MAX_NODES) + 1):
        text = f"{count}x{per_node}x{spec.aliases[0] if spec.aliases else spec.name}"
        if feasible(hardware=resolve_hardware(text)):
            return text
    return None


def _assemble(layout: Layout, port_base: int, full: Hardware, concurrency: int) -> Plan:
    """The plan as planned on its planner's hardware (node 0 alone when replicas > 1), laid onto `full`."""
    planner, selection, replicas = layout.planner, layout.selection, layout.replicas
    workload, hardware, catalog = planner.workload, planner.hardware, planner.catalog
    keys = list(selection.roles_of)  # in pipeline order of their first role
    # The nodes the plan uses, not those the profile has: servers that all run on one node are
    # started there by one script, and Cantata beside them reaches them on localhost.
    multi_node = replicas > 1 or len({g.node for p in selection.placements.values() for g in p.gpus}) > 1

    # Spare memory on each GPU goes to the KV cache of the instances on it, in equal shares,
    # so the --gpu-memory-utilization fractions add up to the usable fraction exactly.
    placements = selection.placements
    on_gpu: dict[str, list[str]] = {}
    used: dict[str, float] = {}
    for key, placement in placements.items():
        for gpu in placement.gpus:
            on_gpu.setdefault(gpu.key, []).append(key)
            used[gpu.key] = used.get(gpu.key, 0.0) + placement.per_gpu_bytes
    spare = {g.key: g.spec.usable_bytes - used.get(g.key, 0.0) for g in hardware.gpus}

    alias_home = _alias_homes(workload, selection)
    instances: list[PlannedInstance] = []
    for i, key in enumerate(keys):
        candidate = selection.assignment[selection.roles_of[key][0]]
        model, quant = candidate.model, candidate.quant
        placement = placements[key]
        engine = selection.engines[key]
        shards = placement.tensor_parallel * placement.pipeline_parallel
        extra = min(spare[g.key] / len(on_gpu[g.key]) for g in placement.gpus)
        memory = min(g.spec.memory_bytes for g in placement.gpus)
        fraction = math.floor(100 * (placement.per_gpu_bytes + extra) / memory) / 100
        weights = weight_bytes(model, quant)
        request = next(r for r in selection.requests if r.name == key)
        kv_per_gpu = fraction * memory - weights / shards - RUNTIME_OVERHEAD_BYTES
        kv_total = kv_per_gpu * shards / kv_replication(model, placement.tensor_parallel)
        per_token = kv_bytes_per_token(model)
        host = f"node{placement.gpus[0].node}" if multi_node else "localhost"
        port = port_base + i
        # Replica k runs on node k, on the same GPUs as replica 0 on node 0.
        urls = [f"http://{host}:{port}/v1"] if replicas == 1 else [f"http://node{k}:{port}/v1" for k in range(replicas)]
        aliases = sorted({a for a, home in alias_home.items() if home == key} | {key})
        instances.append(
            PlannedInstance(
                name=key,
                model=model.name,
                hf_repo=model.hf_repo,
                checkpoint=model.checkpoints.get(quant.name),
                quantization=quant.name,
                quantization_label=quant.label,
                vllm_quantization=quant.vllm_flag,
                roles=selection.roles_of[key],
                aliases=aliases,
                gpus=[g.key for g in placement.gpus],
                gpu_label=placement.gpus[0].spec.label,
                host=host,
                port=port,
                url=urls[0],
                urls=urls,
                tensor_parallel=placement.tensor_parallel,
                pipeline_parallel=placement.pipeline_parallel,
                weights_gb=round(weights / GB, 2),
                kv_cache_gb=round(request.kv_budget / GB, 2),
                runtime_gb=round(RUNTIME_OVERHEAD_BYTES * shards / GB, 2),
                memory_gb=round((weights + request.kv_budget + RUNTIME_OVERHEAD_BYTES * shards) / GB, 2),
                per_gpu_gb=round(placement.per_gpu_bytes / GB, 2),
                gpu_memory_utilization=fraction,
                context=selection.contexts[key],
                max_concurrency=selection.max_seqs[key],
                kv_bytes_per_token=int(per_token),
                kv_tokens=max(0, int(kv_total / per_token)),
                decode_tokens_per_s=round(engine.decode_tokens_per_s(), 1),
                prefill_tokens_per_s=round(engine.prefill_tokens_per_s(), 0),
                reasoning_parser=model.reasoning_parser,
                tool_parser=model.tool_parser,
                gguf=quant.format == "gguf",
            )
        )

    roles = []
    for name, role in workload.roles.items():
        candidate = selection.assignment[name]
        score = catalog.role_score(candidate.model, role.need)
        roles.append(
            PlannedRole(
                name=name,
                need=role.need,
                alias=role.alias,
                instance=candidate.key,
                model=candidate.model.name,
                quantization=candidate.quant.name,
                score=round(score.value * candidate.quant.quality, 2),
                benchmark=score.benchmark,
                score_source=score.source,
                proxy=score.proxy,
                prompt_tokens=role.prompt_tokens,
                output_tokens=role.output_tokens,
                context=role.context,
                tools=role.tools,
            )
        )

    # Every node holds what node 0 holds when the plan is replicated.
    planned_as = {g.key: (f"n0:{g.index}" if replicas > 1 else g.key) for g in full.gpus}
    gpus = [
        PlannedGPU(
            gpu=g.key,
            label=g.spec.label,
            memory_gb=g.spec.memory_gb,
            used_gb=round(used.get(planned_as[g.key], 0.0) / GB, 2),
            free_gb=round((g.spec.memory_bytes - used.get(planned_as[g.key], 0.0)) / GB, 2),
            instances=on_gpu.get(planned_as[g.key], []),
        )
        for g in full.gpus
    ]
    changes = [
        AliasChange(role=r.name, alias=r.alias, use=r.instance)
        for r in roles
        if alias_home.get(r.alias) != selection.assignment[r.name].key
    ]
    return Plan(
        pipeline=workload.name,
        hardware=full.name,
        hardware_description=full.description,
        concurrency=concurrency,
        replicas=replicas,
        instances=instances,
        roles=roles,
        gpus=gpus,
        memory_used_gb=round(replicas * sum(used.values()) / GB, 2),
        memory_total_gb=full.memory_gb,
        timing=selection.timing,
        alias_changes=changes,
        notes=([layout.note] if layout.note else [])
        + _notes(instances, roles, changes, gpus, multi_node, replicas, planner.concurrency),
        span_reason=layout.note if replicas == 1 else None,
    )


def _alias_homes(workload: Workload, selection: Selection) -> dict[str, str]:
    """Each alias goes to the instance serving most of its roles (ties: the earliest role's)."""
    homes: dict[str, str] = {}
    for alias in dict.fromkeys(r.alias for r in workload.roles.values()):
        names = [n for n, r in workload.roles.items() if r.alias == alias]
        counts = Counter(selection.instance_of[n] for n in names)
        top = max(counts.values())
        homes[alias] = next(selection.instance_of[n] for n in names if counts[selection.instance_of[n]] == top)
    return homes


def _notes(
    instances: list[PlannedInstance],
    roles: list[PlannedRole],
    changes: list[AliasChange],
    gpus: list[PlannedGPU],
    multi_node: bool,
    replicas: int,
    turns_per_replica: int,
) -> list[str]:
    notes = []
    if replicas > 1:
        notes.append(
            f"the plan fits one node, so each of the {replicas} nodes runs a replica of every instance on the same "
            "GPUs; the config lists them as urls: of one instance and Cantata spreads calls over them; the predicted "
            f"turn is for {turns_per_replica} turn(s) at once on one replica"
        )
    idle = [g.gpu for g in gpus if not g.instances]
    if idle:
        notes.append(
            f"idle GPUs: {', '.join(idle)}: the chosen models fit without them and spreading onto them "
            "would not speed the turn up; they are free for more turns at once (--concurrency) or other work"
        )
    if multi_node:
        notes.append(
            "the servers run on several nodes, named node0, node1, ... after the profile's: run the --emit vllm "
            "script on each node with its name (sh vllm-launch.sh node0), and make the names resolve where Cantata runs, "
            "or put the machines' addresses in the config"
        )
    for role in roles:
        if role.proxy:
            wanted = NEED_BENCHMARK[role.need]
            basis = f"its GPQA score x {PROXY_DISCOUNT} stands in" if role.benchmark else "it has no score at all"
            notes.append(f"{role.name} ({role.need}): no {wanted} score is recorded for {role.model}; {basis}")
    contexts = {inst.name: inst.context for inst in instances}
    for role in roles:
        if role.context > contexts[role.instance]:
            notes.append(
                f"{role.name} needs about {role.context} tokens of context but {role.instance} is planned with "
                f"{contexts[role.instance]}: its prompt will be cut to fit"
            )
    for inst in instances:
        if inst.checkpoint is None:
            notes.append(
                f"{inst.name}: no published {inst.quantization_label} checkpoint of {inst.model} is recorded; "
                f"the command points at {inst.hf_repo}: replace it with a {inst.quantization_label} checkpoint"
                + (" or keep it (vLLM quantises to FP8 on load)" if inst.quantization == "fp8" else "")
            )
        if inst.gguf:
            notes.append(f"{inst.name}: GGUF in vLLM is experimental; llama.cpp's llama-server is the usual runtime")
        if inst.pipeline_parallel > 1:
            notes.append(
                f"{inst.name}: spans {inst.pipeline_parallel} nodes (pipeline parallel {inst.pipeline_parallel}, "
                f"tensor parallel {inst.tensor_parallel} within each) over a Ray cluster, which the --emit vllm "
                f"script starts (ray start --head on the first node, ray start --address on the others); its "
                f"speed counts {INTERNODE_HOP_S * 1e6:.0f} us per hop between nodes per step plus the step's "
                f"activations at {INTERNODE_BANDWIDTH_GBS:g} GB/s (a 100 Gb/s network assumed)"
            )
    if changes:
        by_use: dict[str, list[str]] = {}
        for change in changes:
            by_use.setdefault(change.use, []).append(change.role)
        moves = "; ".join(f"model: {use} for {', '.join(rs)}" for use, rs in by_use.items())
        notes.append(
            "roles sharing an alias were planned on different instances; the alias stays with the instance "
            f"serving most of its roles, so the pipeline runs as is. To run each role where planned, set {moves}"
        )
    return notes
