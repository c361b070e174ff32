"""The factory's roles in code: each model role's shortcut and check, and the function roles.

Where a decision must hold whatever the model writes, code makes it: a request for
internet access, credentials or acting on the world is refused before any model runs;
the analyst's examples are split into halves by code; an artefact that does not load is
sent back with the loader's error; the critic's blocking findings come from static
checks only (a model may add warnings); the tester and the deployer are code.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from cantata import CantataError, CheckContext, FunctionContext, Rejected, Skip
from cantata.config import cantata_home
from cantata.factory import registry
from cantata.pipelines.factory.assembly import assemble, assembly_error, output_schema
from cantata.pipelines.factory.models import (
    Artefact,
    Card,
    Check,
    Deployment,
    Design,
    Example,
    Finding,
    Requirements,
    Review,
    Task,
    TestReport,
)
from cantata.pipelines.factory.review import static_findings
from cantata.pipelines.factory.testing import run_examples

M = TypeVar("M", bound=BaseModel)

# What Cantata cannot build: an agent is a function from text to JSON, with no network,
# no secrets and no effect on the world (its tool runs in a sandbox without them).
CANNOT = [
    (
        re.compile(
            r"\b(internet|web ?site|website|the web|browse|brows(?:er|ing)|scrap(?:e|ing)|crawl|https?://|url|"
            r"download|online search|search (?:the )?(?:web|online|google)|api calls?|live (?:data|prices))\b"
        ),
        "it needs internet access, and generated agents run with no network",
    ),
    (
        re.compile(
            r"\b(log(?:s|ging)? ?in(?:to)?|sign(?:s|ing)? in|credentials?|api[ -]?keys?|access tokens?|ssh keys?|"
            r"my (?:password|account|bank)|bank accounts?)\b"
        ),
        "it needs credentials, and generated agents are given none",
    ),
    (
        re.compile(
            r"\bsend(?:s|ing)?\b(?:\s+\w+){0,3}?\s+(?:e-?mails?|messages?|sms|texts?|invitations?|notifications?)\b|"
            r"\be-?mail(?:s|ing)?\s+(?:them|people|customers|everyone|every|all)\b|"
            r"\b(?:post(?:s|ing)? (?:on|to)|tweets?|pay(?:s|ing)?|buy(?:s|ing)?|purchas\w*|orders? (?:food|products)|"
            r"books? (?:a|the) (?:flight|table|room|hotel)|transfer\w* money|delet\w* (?:files?|my|the)|"
            r"run(?:s|ning)? (?:shell|commands?)|execut\w* commands?|control\w* (?:my|the))\b"
        ),
        "it would act on the world (send, buy, post, delete, execute), and generated agents only answer",
    ),
]


def parsed(model: type[M], value: Any) -> M | None:
    try:
        return model.model_validate(value)
    except ValidationError:
        return None


def refusal(request: str) -> str | None:
    """Why Cantata cannot build what is asked, or None."""
    words = re.findall(r"[A-Za-zÀ-ÿ]{2,}", request)
    if len(words) < 3:
        return "the request is empty or too short to say what the agent should do"
    if sum(len(w) for w in words) < 0.5 * len(request.replace(" ", "")):
        return "the request does not read as a description of an agent"
    lowered = request.lower()
    for pattern, reason in CANNOT:
        if pattern.search(lowered):
            return reason
    return None


# -- orchestrator -----------------------------------------------------------------------------


def orchestrator_shortcut(ctx: FunctionContext) -> Task | None:
    reason = refusal(ctx.message)
    if reason is None:
        return None
    return Task(feasible=False, reason=reason, reply=f"I cannot build this: {reason}.")


def orchestrator_check(ctx: CheckContext) -> Task:
    task = parsed(Task, ctx.output)
    if task is None:
        if ctx.last_chance:
            return Task(
                feasible=False,
                reason="the orchestrator could not state the task",
                reply="I could not plan this request.",
            )
        raise Rejected("the task does not match the schema")
    reason = refusal(ctx.message)  # code's refusal stands whatever the model said
    if reason is not None:
        return Task(feasible=False, reason=reason, reply=f"I cannot build this: {reason}.")
    if not task.feasible:
        # A model's refusal stands only for a reason Cantata recognises (internet, credentials,
        # acting on the world): a small model refuses ordinary requests with junk reasons.
        stated = refusal(f"an agent that {task.reason}")
        if stated is not None:
            return task.model_copy(update={"reason": stated, "reply": f"I cannot build this: {stated}."})
        doubt = task.reason.strip()
        task = task.model_copy(update={"feasible": True, "constraints": [*task.constraints, f"doubt: {doubt}"[:80]][:4]}
                               if doubt else {"feasible": True})  # fmt: skip
    goal = task.goal.strip() or ctx.message.strip()[:200]
    return task.model_copy(update={"goal": goal, "reply": f"Building an agent: {goal}"})


# -- analyst ----------------------------------------------------------------------------------


def analyst_shortcut(ctx: FunctionContext) -> Requirements | None:
    """A refused task stops the team here: everything that requires the analyst is skipped."""
    task = parsed(Task, ctx.inputs.get("orchestrator"))
    if task is not None and not task.feasible:
        raise Skip(f"the task was refused: {task.reason}")
    return None


def analyst_check(ctx: CheckContext) -> Requirements:
    """Halves are split by code, alternately: the fixer will only ever see the first.
    Checks that cannot mean anything are dropped (see `meaningful`)."""
    requirements = parsed(Requirements, ctx.output)
    if requirements is None or len(requirements.examples) < 6:
        raise Rejected("write at least six examples, each an input and the checks its output must pass")
    examples = []
    for i, example in enumerate(requirements.examples):
        # With none left, the example still asks for an output valid against the schema.
        checks = [c for c in example.checks if meaningful(c)] or [Check(kind="has_field")]
        examples.append(example.model_copy(update={"checks": checks, "half": "dev" if i % 2 == 0 else "heldout"}))
    return requirements.model_copy(update={"examples": examples})


def tests_a_property(example: Example) -> bool:
    """Whether an example checks more than a valid, non-empty output."""
    return any(c.kind != "has_field" or c.field.strip() for c in example.checks)


def meaningful(check: Check) -> bool:
    """Whether a check says something (a small model writes `equals ""` on no field):
    a value to compare needs a field and a value, a count a field and a whole number."""
    if check.kind in ("equals", "contains"):
        return bool(check.field.strip() and check.value.strip())
    if check.kind == "count_at_least":
        return bool(check.field.strip()) and check.value.strip().isdigit()
    return True  # has_field: on no field, that the output is not empty


# -- builder and fixer ------------------------------------------------------------------------


def builder_check(ctx: CheckContext) -> Artefact:
    """The builder writes the instructions and the tool code; the rest is the design's,
    filled here. Tool code the design did not ask for is dropped: it could only block."""
    design = parsed(Design, ctx.inputs.get("architect"))
    if design is None:
        raise Rejected("there is no design to build from")  # `required` keeps this from happening
    # The reply was validated against BuiltArtefact: its two strings are there (the fields
    # code fills are still empty, so it is read as a dict, not parsed as an Artefact).
    draft: dict[str, Any] = ctx.output if isinstance(ctx.output, dict) else {}
    if not draft and not ctx.last_chance:
        raise Rejected("the artefact does not match the schema")
    # On its last chance (no usable reply) the builder's artefact is the design as it stands.
    instructions = str(draft.get("instructions") or "").strip() or design.instructions
    artefact = Artefact(
        name=design.name, instructions=instructions, fields=design.fields, steps=design.steps, needs=design.needs,
        tool_code=str(draft.get("tool_code") or "") if design.tool else "",
    )  # fmt: skip
    return loadable(artefact)


def fixer_check(ctx: CheckContext) -> Artefact:
    """The fixer patches instructions, fields and tool code; name, steps and needs stay."""
    before = latest_artefact(ctx)
    if before is None:
        raise Rejected("there is no artefact to fix")  # `required` keeps this from happening
    patch: dict[str, Any] = ctx.output if isinstance(ctx.output, dict) else {}  # validated as FixedArtefact
    if not patch:
        if not ctx.last_chance:
            raise Rejected("the artefact does not match the schema")
        return before.model_copy(update={"changes": "the fixer gave no usable patch: unchanged"})
    artefact = Artefact(
        name=before.name, steps=before.steps, needs=before.needs,
        instructions=str(patch.get("instructions") or "").strip() or before.instructions,
        fields=patch.get("fields") or before.fields,
        # It may correct or drop the tool, not add one the design did not ask for.
        tool_code=str(patch.get("tool_code") or "") if before.tool_code.strip() else "",
        changes=str(patch.get("changes") or ""),
    )  # fmt: skip
    return loadable(artefact)


def loadable(artefact: Artefact) -> Artefact:
    """The artefact, if the pipeline it assembles into loads; else it goes back with the error."""
    with tempfile.TemporaryDirectory() as tmp:
        problem = assembly_error(artefact, Path(tmp) / "agent")
    if problem is not None:
        raise Rejected(f"the pipeline it makes does not load: {problem}")
    return artefact


def latest_artefact(ctx: FunctionContext) -> Artefact | None:
    """The artefact this iteration works on: the builder's, or (carried) the fixer's last."""
    return parsed(Artefact, ctx.inputs.get("builder"))


def fixer_shortcut(ctx: FunctionContext) -> Artefact | None:
    """Nothing to fix: the artefact passes as it is, so the model is not asked."""
    artefact = latest_artefact(ctx)
    review = parsed(Review, ctx.inputs.get("critic"))
    report = parsed(TestReport, ctx.inputs.get("tester"))
    if artefact is not None and review is not None and report is not None and not review.blocking and report.all_passed:
        return artefact.model_copy(update={"changes": "nothing to change: no blocking finding, every test passed"})
    return None


# -- critic -----------------------------------------------------------------------------------


def critic_check(ctx: CheckContext) -> Review:
    """The model's findings, capped at warning, plus the static checks, which alone block."""
    review = parsed(Review, ctx.output) or Review()
    model_findings = [f.model_copy(update={"severity": "warning" if f.severity == "blocking" else f.severity})
                      for f in review.findings]  # fmt: skip
    artefact = latest_artefact(ctx)
    if artefact is None:
        static = [Finding(severity="blocking", where="artefact", problem="there is no artefact to review")]
    else:
        with tempfile.TemporaryDirectory() as tmp:
            static = static_findings(artefact, Path(tmp) / "agent")
    return Review(findings=model_findings, static=static, blocking=any(f.severity == "blocking" for f in static))


# -- tester -----------------------------------------------------------------------------------


async def tester(ctx: FunctionContext) -> TestReport:
    artefact = latest_artefact(ctx)
    requirements = parsed(Requirements, ctx.inputs.get("analyst"))
    if artefact is None or requirements is None:
        return TestReport(error="no artefact or no examples to test")
    if ctx.runtime is None:
        return TestReport(error="the tester needs the runtime that runs the factory")
    folder = iteration_dir(ctx)
    return await run_examples(ctx.runtime, artefact, requirements.examples, folder, options=ctx.options)


def iteration_dir(ctx: FunctionContext) -> Path:
    """Where this iteration's artefact is kept: every version stays on disk."""
    home = ctx.runtime.home if ctx.runtime is not None else cantata_home()
    return registry.turn_dir(home, ctx.turn_id) / f"iteration-{ctx.iteration or 1}"


def done(ctx: FunctionContext) -> bool:
    """The loop's stop condition: no blocking finding and every test passed, or nothing
    left to iterate on (no artefact came out of this iteration's fixer)."""
    if "fixer" in ctx.missing:
        return True
    review = parsed(Review, ctx.inputs.get("critic"))
    report = parsed(TestReport, ctx.inputs.get("tester"))
    return review is not None and report is not None and not review.blocking and report.all_passed


# -- documenter -------------------------------------------------------------------------------


def documenter_check(ctx: CheckContext) -> Card:
    card = parsed(Card, ctx.output)
    if card is None:
        if not ctx.last_chance:
            raise Rejected("the card does not match the schema")
        card = Card(summary="")
    artefact = parsed(Artefact, ctx.inputs.get("fixer"))
    requirements = parsed(Requirements, ctx.inputs.get("analyst"))
    report = parsed(TestReport, ctx.inputs.get("tester")) or TestReport(error="not tested")
    return card.model_copy(update={"card": render_card(card, artefact, requirements, report)})


def render_card(card: Card, artefact: Artefact | None, requirements: Requirements | None, report: TestReport) -> str:
    name = artefact.name if artefact else "agent"
    lines = [f"# {name}", "", card.summary.strip() or (artefact.instructions.strip()[:300] if artefact else ""), ""]
    if requirements is not None:
        lines += ["## Input", requirements.input or "a text message", "", "## Output", requirements.output or "", ""]
    if artefact is not None:
        lines.append("Fields: " + ", ".join(f"`{f.name}` ({f.type})" for f in artefact.fields))
        lines.append("Tool: sandboxed Python function" if artefact.tool_code.strip() else "Tool: none")
        lines.append("")
    lines += ["## Tests", f"- development: {report.dev_passed}/{report.dev_total} passed",
              f"- held-out: {report.heldout_passed}/{report.heldout_total} passed"]  # fmt: skip
    if report.error:
        lines.append(f"- error: {report.error}")
    if card.limits:
        lines += ["", "## Limits", *[f"- {limit}" for limit in card.limits]]
    return "\n".join(lines).strip() + "\n"


# -- deployer ---------------------------------------------------------------------------------


async def deployer(ctx: FunctionContext) -> Deployment:
    """Deploy only a reviewed, fully passing artefact, or with --force (recorded as such)."""
    task = parsed(Task, ctx.inputs.get("orchestrator"))
    if task is not None and not task.feasible:
        return Deployment(deployed=False, reason=task.reason, reply=f"Not built: {task.reason}.")
    artefact = parsed(Artefact, ctx.inputs.get("fixer"))
    review = parsed(Review, ctx.inputs.get("critic"))
    report = parsed(TestReport, ctx.inputs.get("tester"))
    missing = [name for name in ("orchestrator", "analyst", "architect", "builder") if name in ctx.missing]
    if artefact is None or review is None or report is None:
        why = f"{', '.join(missing)} did not finish" if missing else "the artefact was never reviewed and tested"
        return Deployment(deployed=False, reason=why, reply=f"Not deployed: {why}.")
    failing = [f"dev #{r.id}: {r.reason}" for r in report.dev_failures]
    failing += [f"held-out #{i}: failed" for i in report.heldout_failed_ids]
    if report.error:
        failing.append(report.error)
    blocking = [f"{f.where}: {f.problem}" for f in review.static if f.severity == "blocking"]
    # Passing tests that test nothing are no reason to deploy (a small model's analyst). The
    # rule is the deployer's, not a finding of the critic's: it is reported as a rule.
    rules = []
    requirements = parsed(Requirements, ctx.inputs.get("analyst"))
    if requirements is not None and not any(tests_a_property(e) for e in requirements.examples):
        rules.append("test quality: every example checks only that the output is valid, none a property of it")
    force = bool(ctx.options.get("force"))
    if (failing or blocking or rules or not report.all_passed) and not force:
        reason = "; ".join(rules + blocking[:3] + failing[:5]) or "no test ran"
        draft = keep_draft(ctx, artefact)
        return Deployment(deployed=False, name=artefact.name, reason=reason, failing_tests=failing, blocking=blocking,
                          rules=rules, draft=str(draft or ""), reply=f"Not deployed: {reason}.")  # fmt: skip
    if ctx.runtime is None:
        return Deployment(deployed=False, name=artefact.name, reason="the deployer needs the runtime")
    return await _deploy(ctx, artefact, report, failing, force)


def keep_draft(ctx: FunctionContext, artefact: Artefact) -> Path | None:
    """The artefact that was not deployed, assembled where its person can read, run or fix it."""
    if ctx.runtime is None:
        return None
    folder = registry.turn_dir(ctx.runtime.home, ctx.turn_id) / "draft"
    try:
        assemble(artefact, folder)
    except CantataError:
        return None  # it loaded when the builder or fixer wrote it; if not now, there is nothing to run
    return folder


async def _deploy(
    ctx: FunctionContext, artefact: Artefact, report: TestReport, failing: list[str], force: bool
) -> Deployment:
    assert ctx.runtime is not None
    runtime = ctx.runtime
    card = parsed(Card, ctx.inputs.get("documenter"))
    cost = await task_cost(ctx)
    sandboxed = not ctx.options.get("no_sandbox")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "agent"
        assemble(artefact, folder)
        text = card.card if card is not None and card.card else f"# {artefact.name}\n"
        notes = [
            f"\nCost to make: {cost['tokens']} tokens, {cost['seconds']} s over {cost['iterations']} iteration(s)."
        ]
        if force:
            notes.append("Deployed with --force: its tests did not all pass.")
        if not sandboxed:
            notes.append("Tested with --no-sandbox: its tool code ran without isolation.")
        (folder / "card.md").write_text(text + "\n".join(notes) + "\n", encoding="utf-8")
        requirements = ctx.inputs.get("analyst") or {}
        (folder / "tests.json").write_text(json.dumps(requirements.get("examples", []), indent=2) + "\n")
        (folder / "task.json").write_text(json.dumps({
            "request": ctx.message, "turn_id": ctx.turn_id, "cost": cost, "forced": force, "sandboxed": sandboxed,
            "tests": report.model_dump(), "artefact": artefact.model_dump(), "schema": output_schema(artefact),
        }, indent=2, ensure_ascii=False) + "\n")  # fmt: skip
        summary: dict[str, object] = {
            "tests": f"dev {report.dev_passed}/{report.dev_total}, held-out {report.heldout_passed}/{report.heldout_total}",
            "cost": cost,
            "failing": failing,
        }
        version = await registry.deploy(runtime.store, runtime.home, artefact.name, folder, forced=force,
                                        sandboxed=sandboxed, task_turn=ctx.turn_id, summary=summary)  # fmt: skip
    return Deployment(deployed=True, name=artefact.name, version=version.version, forced=force,
                      failing_tests=failing, reply=f"Deployed {artefact.name} version {version.version}: "
                      f"run it with `cantata run agent:{artefact.name} -m ...`.")  # fmt: skip


async def task_cost(ctx: FunctionContext) -> dict[str, Any]:
    """Tokens and seconds per role and per iteration, from this turn's events so far."""
    assert ctx.runtime is not None
    per_role: dict[str, dict[str, float]] = {}
    iterations = 0
    elapsed = 0.0
    started: dict[tuple[str, int], float] = {}
    for event in await ctx.runtime.store.events(ctx.turn_id):
        elapsed = max(elapsed, event.at_s)
        if event.agent is None:
            continue
        iteration = int(event.data.get("iteration", 0))
        iterations = max(iterations, iteration)
        key = f"{event.agent}@{iteration}" if iteration else event.agent
        if event.type == "agent_started":
            started[(event.agent, iteration)] = event.at_s
        elif event.type in ("agent_finished", "agent_failed"):
            row = per_role.setdefault(key, {"tokens": 0, "seconds": 0.0})
            row["tokens"] += int(event.data.get("prompt_tokens") or 0) + int(event.data.get("completion_tokens") or 0)
            row["seconds"] += round(event.at_s - started.get((event.agent, iteration), event.at_s), 3)
    return {
        "tokens": int(sum(r["tokens"] for r in per_role.values())),
        "seconds": round(elapsed, 1),
        "iterations": max(iterations, 1),
        "per_role": per_role,
    }
