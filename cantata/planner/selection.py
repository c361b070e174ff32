"""Choosing models: per role the best catalogue model that fits, then one instance per choice.

Roles cannot be chosen one at a time: nine roles each taking the best model that fits
alone would never fit together. The search therefore walks *assignments* (a
(model, quantisation) candidate for every group of roles with the same need and the
same options) from the highest total score down, best first, and stops at the first
one whose instances pack onto the hardware. Roles that chose the same candidate share
one instance. The score of a role is the benchmark score of its need (see
catalog.role_score) times what the quantisation keeps of it.

Speed then decides between quantisations: among the feasible assignments that use the
same models as the best one and score within QUALITY_TOLERANCE of it, the one with the
fastest predicted turn wins (say AWQ on one GPU over FP8 split over two).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace

from cantata.planner.catalog import Catalog, ModelChoice, ModelSpec, Quantization
from cantata.planner.hardware import USABLE_FRACTION, Hardware
from cantata.planner.memory import GB, RUNTIME_OVERHEAD_BYTES, kv_bytes_for_sequence, kv_bytes_per_token, weight_bytes
from cantata.planner.placement import InstanceRequest, PackingError, Placement, pack
from cantata.planner.speed import Engine, TurnTiming, simulate_turn
from cantata.planner.workload import Role, Workload

# Assignments using the same models as the best one and scoring within this fraction
# of it are equally good; the fastest wins. 2.5 % covers the quality the catalogue
# assumes any 4-bit quantisation costs against FP8 (0.975-0.98 against 0.995).
QUALITY_TOLERANCE = 0.025

# Bounds on the best-first walk: assignments looked at in all, and feasible
# near-best ones simulated to find the fastest.
MAX_VISITED = 200_000
MAX_SIMULATED = 40

# Widening tensor parallelism onto idle GPUs must make the turn at least this much faster.
SPREAD_GAIN = 0.05

# A context is rounded up to a multiple of this, and never planned below MIN_CONTEXT.
CONTEXT_STEP = 1024
MIN_CONTEXT = 4096


@dataclass(frozen=True)
class Candidate:
    model: ModelSpec
    quant: Quantization

    @property
    def key(self) -> str:
        return f"{self.model.name}-{self.quant.name}"

    @property
    def weights(self) -> float:
        return weight_bytes(self.model, self.quant)

    @property
    def bytes_per_token(self) -> float:
        return self.model.active_params * self.quant.bytes_per_weight

    @property
    def launchable(self) -> bool:
        """Published weights exist: a recorded checkpoint, the BF16 original, or FP8 made on load."""
        return self.quant.name in self.model.checkpoints or self.quant.name in ("bf16", "fp8")


@dataclass
class Fit:
    """An assignment whose instances pack onto the hardware."""

    assignment: dict[str, Candidate]
    requests: list[InstanceRequest]
    roles_of: dict[str, list[str]]
    contexts: dict[str, int]
    max_seqs: dict[str, int]
    placements: dict[str, Placement]
    score: float


@dataclass
class Selection(Fit):
    """A feasible assignment with its engines and predicted turn."""

    engines: dict[str, Engine]
    timing: TurnTiming
    instance_of: dict[str, str]


@dataclass
class Failure:
    """Why the best-scoring assignment did not fit."""

    reason: str
    assignment: dict[str, Candidate]


class Planner:
    def __init__(
        self,
        workload: Workload,
        hardware: Hardware,
        catalog: Catalog,
        forced: list[ModelChoice] | None = None,
        context: int | None = None,
        concurrency: int = 1,
    ) -> None:
        self.workload = workload
        self.hardware = hardware
        self.catalog = catalog
        self.forced = forced or []
        self.context = context
        self.concurrency = concurrency
        self._quality: dict[tuple[str, str], float] = {}

    # -- candidates -------------------------------------------------------------------

    def role_context(self, role: Role) -> int:
        return self.context if self.context is not None else role.context

    def quality(self, candidate: Candidate, role: Role) -> float:
        cached = self._quality.get((candidate.key, role.need))
        if cached is None:
            cached = self.catalog.role_score(candidate.model, role.need).value * candidate.quant.quality
            self._quality[(candidate.key, role.need)] = cached
        return cached

    def allowed(self, role: Role) -> list[Candidate]:
        """The candidates a role may use: what --model forces for it, else every catalogue model."""
        forced = next((c for c in self.forced if c.role == role.name), None)
        if forced is None:
            forced = next((c for c in self.forced if c.role is None), None)
        if forced is not None:
            quants = [forced.quant] if forced.quant else self.catalog.quantizations_for(forced.model)
            return [Candidate(forced.model, q) for q in quants]
        out: list[Candidate] = []
        for model in self.catalog.models:
            if model.native_context < self.role_context(role):
                continue
            out.extend(Candidate(model, q) for q in self.catalog.quantizations_for(model))
        return out

    def _fits_alone(self, candidate: Candidate) -> bool:
        request = InstanceRequest(
            name=candidate.key,
            model=candidate.model,
            quant=candidate.quant,
            kv_budget=kv_bytes_for_sequence(candidate.model, MIN_CONTEXT),
        )
        try:
            pack([request], self.hardware)
        except PackingError:
            return False
        return True

    def _prune(self, groups: list[list[Role]], options: list[list[Candidate]]) -> list[list[Candidate]]:
        """Drop what cannot fit alone, and what is dominated.

        A candidate is dominated when another one, allowed for every group that may use
        it, is at least as good for each of them and no larger, no hungrier for KV
        cache and no slower per token: no assignment is worse off swapping it out.
        """
        fits: dict[str, bool] = {}
        users: dict[str, list[int]] = {}
        pool: dict[str, Candidate] = {}
        for g, opts in enumerate(options):
            for c in opts:
                pool[c.key] = c
                users.setdefault(c.key, []).append(g)
        for key, c in pool.items():
            fits[key] = self._fits_alone(c)
        allowed_keys = [{c.key for c in opts} for opts in options]
        # Costs compare "no worse" element-wise; a candidate without published weights
        # costs more than one with them (the plan could not be launched as is).
        costs = {
            k: (c.weights, kv_bytes_per_token(c.model), c.bytes_per_token, 0.0 if c.launchable else 1.0)
            for k, c in pool.items()
        }

        def dominated(c: Candidate) -> bool:
            mine = [self.quality(c, groups[g][0]) for g in users[c.key]]
            for d in pool.values():
                if d.key == c.key or not fits[d.key] or any(d.key not in allowed_keys[g] for g in users[c.key]):
                    continue
                theirs = [self.quality(d, groups[g][0]) for g in users[c.key]]
                cheaper = all(x <= y for x, y in zip(costs[d.key], costs[c.key], strict=True))
                if cheaper and all(t >= m for t, m in zip(theirs, mine, strict=True)):
                    if theirs != mine or costs[d.key] != costs[c.key]:
                        return True
            return False

        keep = {k for k, c in pool.items() if fits[k] and not dominated(c)}
        return [[c for c in opts if c.key in keep] for opts in options]

    # -- instances -------------------------------------------------------------------

    def instance_shape(self, candidate: Candidate, roles: list[Role]) -> tuple[int, int, float]:
        """Context, sequences in flight and KV budget of one instance serving `roles`."""
        if self.context is not None:
            context = self.context
        else:
            longest = max(r.context for r in roles)
            context = max(MIN_CONTEXT, -(-longest // CONTEXT_STEP) * CONTEXT_STEP)
        context = min(context, candidate.model.native_context)
        seqs = self.concurrency * self.workload.max_parallel([r.name for r in roles])
        return context, seqs, seqs * kv_bytes_for_sequence(candidate.model, context)

    def instances(self, assignment: dict[str, Candidate]) -> Fit:
        """The instances an assignment implies, sized for the turns in flight, not yet placed."""
        roles = self.workload.roles
        by_key: dict[str, list[str]] = {}
        members: dict[str, Candidate] = {}
        for name in self.workload.order:
            if name in assignment:
                c = assignment[name]
                by_key.setdefault(c.key, []).append(name)
                members[c.key] = c
        requests = []
        contexts: dict[str, int] = {}
        seqs: dict[str, int] = {}
        for key, names in by_key.items():
            context, n, kv = self.instance_shape(members[key], [roles[r] for r in names])
            contexts[key], seqs[key] = context, n
            requests.append(InstanceRequest(name=key, model=members[key].model, quant=members[key].quant, kv_budget=kv))
        score = sum(self.quality(assignment[r], roles[r]) for r in assignment)
        return Fit(assignment, requests, by_key, contexts, seqs, {}, score)

    def fit(self, assignment: dict[str, Candidate]) -> Fit | Failure:
        """Build the instances an assignment implies and pack them, or say why they do not fit."""
        shaped = self.instances(assignment)
        requests = shaped.requests
        total = sum(r.kv_budget + weight_bytes(r.model, r.quant) + RUNTIME_OVERHEAD_BYTES for r in requests)
        if total > self.hardware.usable_bytes:
            verb = "need" if len(requests) > 1 else "needs"
            return Failure(
                f"{' + '.join(shaped.roles_of)} {verb} {total / GB:.1f} GB with KV cache and runtime, but "
                f"{self.hardware.name} has {self.hardware.usable_bytes / GB:.1f} GB usable "
                f"({self.hardware.memory_gb:g} GB, {USABLE_FRACTION:.0%} of each GPU for vLLM)",
                assignment,
            )
        try:
            placements = pack(requests, self.hardware)
        except PackingError as exc:
            return Failure(exc.reason, assignment)
        return replace(shaped, placements=placements)

    def simulate(self, fit: Fit) -> Selection:
        engines = {}
        gpus_of = {}
        for key, placement in fit.placements.items():
            candidate = fit.assignment[fit.roles_of[key][0]]
            engines[key] = Engine(
                model=candidate.model,
                quant=candidate.quant,
                gpu=min((g.spec for g in placement.gpus), key=lambda s: s.bandwidth_gbs),
                tensor_parallel=placement.tensor_parallel,
                pipeline_parallel=placement.pipeline_parallel,
            )
            gpus_of[key] = [g.key for g in placement.gpus]
        instance_of = {name: c.key for name, c in fit.assignment.items()}
        timing = simulate_turn(self.workload, instance_of, engines, gpus_of, turns=self.concurrency)
        return Selection(
            fit.assignment,
            fit.requests,
            fit.roles_of,
            fit.contexts,
            fit.max_seqs,
            fit.placements,
            fit.score,
            engines=engines,
            timing=timing,
            instance_of=instance_of,
        )

    def evaluate(self, assignment: dict[str, Candidate]) -> Selection | Failure:
        result = self.fit(assignment)
        return result if isinstance(result, Failure) else self.simulate(result)

    # -- search -----------------------------------------------------------------------

    def search(self) -> Selection | Failure:
        roles = list(self.workload.roles.values())
        if not roles:
            raise ValueError("a pipeline without model agents needs no plan")
        allowed = {r.name: self.allowed(r) for r in roles}
        for role in roles:
            if not allowed[role.name]:
                longest = max(m.native_context for m in self.catalog.models)
                return Failure(
                    f"no catalogue model has the context role '{role.name}' needs "
                    f"({self.role_context(role)} tokens; the longest native context is {longest})",
                    {},
                )
        # Roles with the same need choose alike: one group per need (and one per role that
        # --model names), whose options are what every role of the group may use. This
        # keeps the search to a handful of groups whatever the number of roles.
        grouped: dict[tuple[str, str], list[Role]] = {}
        for role in roles:
            own = any(c.role == role.name for c in self.forced)
            grouped.setdefault((role.need, role.name if own else ""), []).append(role)
        groups = list(grouped.values())
        wanted = []
        for group in groups:
            keys = set.intersection(*({c.key for c in allowed[r.name]} for r in group))
            wanted.append([c for c in allowed[group[0].name] if c.key in keys])
        for group, opts in zip(groups, wanted, strict=True):
            if not opts:
                names = ", ".join(r.name for r in group)
                return Failure(f"no catalogue model has the context all of {names} need together", {})
        options = self._prune(groups, wanted)
        if any(not o for o in options):
            # Something the roles need fits nowhere, even alone: explain with what they asked for.
            return self.evaluate(self._best_unconstrained(groups, wanted))
        for group, opts in zip(groups, options, strict=True):
            lead = group[0]
            opts.sort(key=lambda c: (-self.quality(c, lead), c.weights))
        weights = [len(g) for g in groups]
        values = [[self.quality(c, groups[g][0]) * weights[g] for c in opts] for g, opts in enumerate(options)]

        def total(state: tuple[int, ...]) -> float:
            return sum(values[g][i] for g, i in enumerate(state))

        def consistent(state: tuple[int, ...]) -> bool:
            # Each group must hold the best member of the set the assignment forms; other
            # assignments of that set score lower and were (or will be) seen as it.
            chosen = {options[g][i].key for g, i in enumerate(state)}
            for g, i in enumerate(state):
                for j in range(i):
                    if options[g][j].key in chosen and values[g][j] > values[g][i]:
                        return False
            return True

        usable = self.hardware.usable_bytes
        start = tuple(0 for _ in groups)
        heap: list[tuple[float, tuple[int, ...]]] = [(-total(start), start)]
        seen = {start}
        best: Selection | None = None
        near: list[Fit] = []
        first_failure: Failure | None = None
        visited = 0
        while heap and visited < MAX_VISITED:
            negative, state = heapq.heappop(heap)
            visited += 1
            if best is not None and -negative < best.score * (1 - QUALITY_TOLERANCE):
                break
            for g in range(len(groups)):
                if state[g] + 1 < len(options[g]):
                    child = state[:g] + (state[g] + 1,) + state[g + 1 :]
                    if child not in seen:
                        seen.add(child)
                        heapq.heappush(heap, (-total(child), child))
            if not consistent(state):
                continue
            distinct = {options[g][i].key: options[g][i] for g, i in enumerate(state)}
            if sum(c.weights + RUNTIME_OVERHEAD_BYTES for c in distinct.values()) > usable:
                # Weights alone do not fit: no need to build the instances to know it.
                if first_failure is None:
                    first_failure = Failure(self._too_big(list(distinct.values())), {})
                continue
            assignment = {r.name: options[g][i] for g, i in enumerate(state) for r in groups[g]}
            if best is not None and not _same_models(assignment, best.assignment):
                continue
            result = self.fit(assignment)
            if isinstance(result, Failure):
                first_failure = first_failure or result
                continue
            if best is None:
                best = self.simulate(result)
            elif len(near) < MAX_SIMULATED:
                near.append(result)
        if best is None:
            return first_failure or Failure("no assignment of models fits (search bound reached)", {})
        candidates = [best, *(self.simulate(f) for f in near)]
        return self._spread(min(candidates, key=lambda s: (s.timing.final_s, _unpublished(s), -s.score)))

    def _spread(self, selection: Selection) -> Selection:
        """Put idle GPUs to work: widen an instance's tensor parallelism while that speeds the turn.

        Each step doubles one instance's tensor parallelism, re-packs everything and keeps
        the change only if the predicted turn gets at least SPREAD_GAIN faster (more
        ranks also cost all-reduces, and GPUs shared with other instances help less).
        """
        current = selection
        improved = True
        while improved:
            improved = False
            for key in current.roles_of:
                min_tp = {k: p.tensor_parallel for k, p in current.placements.items()}
                min_tp[key] *= 2
                try:
                    placements = pack(current.requests, self.hardware, min_tp)
                except PackingError:
                    continue
                trial = self.simulate(
                    Fit(
                        current.assignment,
                        current.requests,
                        current.roles_of,
                        current.contexts,
                        current.max_seqs,
                        placements,
                        current.score,
                    )
                )
                if trial.timing.final_s < current.timing.final_s * (1 - SPREAD_GAIN):
                    current = trial
                    improved = True
                    break
        return current

    def _too_big(self, candidates: list[Candidate]) -> str:
        total = sum(c.weights + RUNTIME_OVERHEAD_BYTES for c in candidates)
        verb = "need" if len(candidates) > 1 else "needs"
        return (
            f"{' + '.join(c.key for c in candidates)} {verb} {total / GB:.1f} GB for weights and runtime alone, "
            f"but {self.hardware.name} has {self.hardware.usable_bytes / GB:.1f} GB usable "
            f"({self.hardware.memory_gb:g} GB, {USABLE_FRACTION:.0%} of each GPU for vLLM)"
        )

    def _best_unconstrained(self, groups: list[list[Role]], wanted: list[list[Candidate]]) -> dict[str, Candidate]:
        """Each group's best candidate regardless of fit: what the user asked for, to explain why not."""
        out = {}
        for group, opts in zip(groups, wanted, strict=True):
            best = max(opts, key=lambda c: (self.quality(c, group[0]), -c.weights))
            out.update({r.name: best for r in group})
        return out


def _unpublished(selection: Selection) -> int:
    """How many of the instances would need weights nobody published."""
    return sum(not selection.assignment[names[0]].launchable for names in selection.roles_of.values())


def _same_models(a: dict[str, Candidate], b: dict[str, Candidate]) -> bool:
    return all(a[r].model.name == b[r].model.name for r in a)
