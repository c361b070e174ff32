"""A pipeline's DAG as the API and the dashboard draw it."""

from __future__ import annotations

from cantata.loader import Pipeline
from cantata.server.protocol import AgentNode, PipelineInfo
from cantata.server.scales import scales


def critical_path(pipeline: Pipeline) -> list[str]:
    """The longest chain of model calls (functions cost next to nothing), ending at the
    final agent if there is one: what a turn must wait for at least."""
    weight = {a.name: (0 if a.is_function else 1) for a in pipeline.spec.agents}
    best: dict[str, tuple[int, list[str]]] = {}
    for name in pipeline.order:
        agent = pipeline.agents[name]
        options = [best[r] for r in agent.reads if r in best]
        cost, path = max(options, key=lambda o: o[0], default=(0, []))
        best[name] = (cost + weight[name], [*path, name])
    final = pipeline.deliverer("final")
    if final is not None and final.name in best:
        return best[final.name][1]
    return max(best.values(), key=lambda o: o[0], default=(0, []))[1]


def pipeline_info(pipeline: Pipeline, instance_of: dict[str, str | None]) -> PipelineInfo:
    agents = [
        AgentNode(
            name=a.name,
            kind="function" if a.is_function else "model",
            model=None if a.is_function else a.model,
            instance=None if a.is_function else instance_of.get(a.model),
            reads=list(a.reads),
            required=list(a.required),
            deliver=a.deliver,
            priority=a.priority,
            scales=scales(contract.schema) if (contract := pipeline.contracts.get(a.name)) else {},
        )
        for a in pipeline.spec.agents
    ]
    edges = [(r, a.name) for a in pipeline.spec.agents for r in a.reads]
    return PipelineInfo(
        name=pipeline.name,
        description=pipeline.spec.description,
        agents=agents,
        edges=edges,
        order=list(pipeline.order),
        critical_path=critical_path(pipeline),
    )
