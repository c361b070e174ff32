"""What a pipeline asks of the hardware: per role, its need and its tokens per turn.

Function agents (guards, conflict checks) run no model: the planner ignores them,
except as nodes of the DAG that hold back the agents reading them.
"""

from __future__ import annotations

from functools import cached_property

from pydantic import BaseModel, ConfigDict

from cantata.spec import AgentSpec, Need, PipelineSpec

# Defaults for what a spec leaves unsaid (see AgentSpec.prompt_tokens/output_tokens):
# the prompt is the shared briefing (the pipeline's budget), the role's own part, and
# the outputs of the agents it reads; the output is the agent's max_tokens.
ROLE_PART_TOKENS = 512
FUNCTION_OUTPUT_TOKENS = 200


class Role(BaseModel):
    """One model agent, as the planner sees it."""

    model_config = ConfigDict(frozen=True)

    name: str
    alias: str
    need: Need
    prompt_tokens: int
    output_tokens: int
    briefing_tokens: int
    min_context: int | None
    reads: list[str]
    priority: int
    deliver: str | None
    tools: bool = False  # it calls tools: its server must parse tool calls

    @property
    def context(self) -> int:
        """Tokens one of its requests occupies at most: prompt plus output, or min_context if larger."""
        return max(self.min_context or 0, self.prompt_tokens + self.output_tokens)


class Workload:
    """The model roles of a pipeline, and the DAG they run in."""

    def __init__(self, spec: PipelineSpec) -> None:
        self.spec = spec
        self.order = spec.agent_order()
        self.agents: dict[str, AgentSpec] = {a.name: a for a in spec.agents}
        self.functions = {name for name, agent in self.agents.items() if agent.is_function}
        outputs: dict[str, int] = {}
        roles: dict[str, Role] = {}
        budget = spec.budget
        for name in self.order:
            agent = self.agents[name]
            if agent.is_function:
                outputs[name] = FUNCTION_OUTPUT_TOKENS
                continue
            output = agent.output_tokens or agent.max_tokens
            prompt = agent.prompt_tokens or (budget + ROLE_PART_TOKENS + sum(outputs[r] for r in agent.reads))
            outputs[name] = output
            roles[name] = Role(
                name=name,
                alias=agent.model,
                need=agent.needs,
                prompt_tokens=prompt,
                output_tokens=output,
                briefing_tokens=min(budget, prompt),
                min_context=agent.min_context,
                reads=list(agent.reads),
                priority=agent.priority,
                tools=bool(agent.tools),
                deliver=agent.deliver,
            )
        self.roles = roles

    @property
    def name(self) -> str:
        return self.spec.name

    @cached_property
    def ancestors(self) -> dict[str, frozenset[str]]:
        """Every agent's transitive upstream."""
        out: dict[str, frozenset[str]] = {}
        for name in self.order:
            up: set[str] = set()
            for r in self.agents[name].reads:
                up.add(r)
                up |= out[r]
            out[name] = frozenset(up)
        return out

    def concurrent(self, a: str, b: str) -> bool:
        """Two agents can run at the same time when neither waits for the other."""
        return a != b and a not in self.ancestors[b] and b not in self.ancestors[a]

    def max_parallel(self, names: list[str]) -> int:
        """The most of `names` that can be in flight at once in one turn (largest antichain)."""
        best = 0

        def grow(chosen: list[str], rest: list[str]) -> None:
            nonlocal best
            best = max(best, len(chosen))
            if len(chosen) + len(rest) <= best:
                return
            for i, name in enumerate(rest):
                if all(self.concurrent(name, c) for c in chosen):
                    grow([*chosen, name], rest[i + 1 :])

        grow([], list(names))
        return best
