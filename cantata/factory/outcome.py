"""What a factory task came to, in a few lines (`cantata factory` without --json): the
outcome, each reason by its kind (a deployer's rule, a blocking finding of the critic's, a
failing test), where the draft is, and what to try next."""

from __future__ import annotations

import shlex
from typing import Any

SHOWN = 5  # reasons of one kind listed; the rest are counted
BIGGER_MODEL = 'a bigger model writes better agents: --config (README: "From the embedded model to vLLM")'


def outcome_lines(task: dict[str, Any], request: str) -> list[str]:
    """`task` is what `cantata factory --json` prints (cantata.factory.run.task_json)."""
    agent = task["agent"]
    if task["deployed"]:
        forced = " with --force, though its tests did not all pass (its card says so)" if task["forced"] else ""
        return [f"Deployed {agent} version {task['version']}{forced}.", f'Run it: cantata run agent:{agent} -m "..."']
    if task["refused"]:
        return [f"Not built: {task['reason']}.", "Next: ask for an agent that works only on the text it is given."]
    if not agent:
        why = task["reason"] or f"the factory turn {task['turn']['status']}"
        return [f"Not deployed: {why}.", f"Next: check the instances (cantata instances --check); {BIGGER_MODEL}."]
    lines = [f"Not deployed: {agent}"]
    for kind, reasons in (
        ("rule", task["rules"]),
        ("blocking finding (critic)", task["blocking"]),
        ("failing test", task["failing_tests"]),
    ):
        lines += [f"  {kind}: {reason}" for reason in reasons[:SHOWN]]
        if len(reasons) > SHOWN:
            lines.append(f"  ... and {len(reasons) - SHOWN} more {kind}s (--json lists them)")
    if len(lines) == 1:
        lines.append(f"  {task['reason'] or 'no test ran'}")
    if task["draft"]:
        lines.append(f'Draft: {task["draft"]}  (try it: cantata run {task["draft"]}/pipeline.yaml -m "...")')
    again = f"cantata factory {shlex.quote(request)} --force"
    lines.append(f"Next: {again} deploys it anyway (its card says so); {BIGGER_MODEL}.")
    return lines
