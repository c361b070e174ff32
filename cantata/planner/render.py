"""The plan as a person reads it: instances, GPUs, roles and the predicted turn."""

from __future__ import annotations

from cantata.planner.catalog import load_catalog
from cantata.planner.plan import Plan


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    out = []
    for row in [header, *rows]:
        out.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return out


def render_plan(plan: Plan) -> str:
    benchmarks = load_catalog().benchmarks
    lines = [
        f"Plan for '{plan.pipeline}' on {plan.hardware}: {plan.hardware_description}",
        f"{len(plan.instances)} instance(s) for {len(plan.roles)} model role(s); "
        f"{plan.memory_used_gb:.1f} GB of {plan.memory_total_gb:g} GB planned"
        + (f"; {plan.concurrency} turns at once" if plan.concurrency > 1 else "")
        + (f"; one replica on each of {plan.replicas} nodes" if plan.replicas > 1 else ""),
        "",
    ]
    lines += _table(
        ["INSTANCE", "MODEL", "QUANT", "SERVER", "GPUS", "TP", "PP", "WEIGHTS", "KV", "MEMORY", "UTIL", "CONTEXT",
         "SEQS", "KV TOKENS", "TOK/S", "ROLES"],
        [
            [
                i.name,
                i.model,
                i.quantization_label,
                f"{i.host}:{i.port}" + (f" x{len(i.urls)}" if len(i.urls) > 1 else ""),
                ",".join(i.gpus),
                str(i.tensor_parallel),
                str(i.pipeline_parallel),
                f"{i.weights_gb:.1f} GB",
                f"{i.kv_cache_gb:.1f} GB",
                f"{i.memory_gb:.1f} GB",
                f"{i.gpu_memory_utilization:.2f}",
                str(i.context),
                str(i.max_concurrency),
                str(i.kv_tokens),
                f"{i.decode_tokens_per_s:.0f}",
                ", ".join(i.roles),
            ]
            for i in plan.instances
        ],
    )  # fmt: skip
    lines.append("")
    lines += _table(
        ["GPU", "TYPE", "MEMORY", "USED", "FREE", "INSTANCES"],
        [
            [
                g.gpu,
                g.label,
                f"{g.memory_gb:g} GB",
                f"{g.used_gb:.1f} GB",
                f"{g.free_gb:.1f} GB",
                ", ".join(g.instances),
            ]
            for g in plan.gpus
        ],
    )
    lines.append("")
    rows = []
    for r in plan.roles:
        if r.benchmark is None:
            basis = "no published score"
        else:
            basis = f"{benchmarks[r.benchmark]} {r.score:.1f}" + (" (proxy)" if r.proxy else "")
        timing = next(a for a in plan.timing.agents if a.name == r.name)
        rows.append([r.name, r.need, r.alias, r.instance, basis, f"{timing.start_s:.1f}-{timing.end_s:.1f} s"])
    lines += _table(["ROLE", "NEEDS", "ALIAS", "INSTANCE", "SCORE", "RUNS"], rows)
    lines.append("")
    early = (
        f"early reply ({plan.timing.early_agent}) {plan.timing.early_s:.1f} s, "
        if plan.timing.early_s is not None
        else ""
    )
    final = plan.timing.final_agent or "last agent"
    lines.append(f"Predicted turn: {early}merged reply ({final}) {plan.timing.final_s:.1f} s")
    for note in plan.notes:
        lines.append(f"note: {note}")
    lines.append(
        'Launch: --emit vllm writes the script that starts these servers (README: "From the embedded model to vLLM")'
    )
    return "\n".join(lines)
