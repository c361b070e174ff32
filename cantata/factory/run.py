"""`cantata factory "REQUEST"`: one turn of the factory pipeline, with a live line of its progress.

The live line shows the role at work, its stage, the loop's iteration, the tests passed
so far and the tokens spent, then the outcome in a few lines (cantata/factory/outcome.py);
`--json` prints the turn and the task's outcome instead.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, TextIO

import click

from cantata import bundled as bundled_pipelines
from cantata.config import DEFAULT_USER, load_config
from cantata.events import Event
from cantata.factory.outcome import outcome_lines
from cantata.factory.progress import TaskProgress
from cantata.loader import Pipeline
from cantata.runtime import Cantata
from cantata.turn import TurnResult


def with_max_iterations(pipeline: Pipeline, count: int | None) -> Pipeline:
    loop = pipeline.spec.loop
    if count is not None and loop is not None:
        pipeline.spec = pipeline.spec.model_copy(update={"loop": loop.model_copy(update={"max_iterations": count})})
    return pipeline


class LiveLine:
    """role, stage, iteration, tests passed, tokens so far: redrawn on one terminal line."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.live = out.isatty()
        self.progress = TaskProgress()

    def __call__(self, event: Event) -> None:
        if event.type == "agent_token":
            return
        self.progress.add(event)
        if event.type == "early_delivered":
            self.print(f"{event.agent}: {event.data['text']}")
        self.draw()

    def tested(self, report: dict[str, Any]) -> None:
        self.progress.tested(report)

    def draw(self) -> None:
        if self.live:
            p = self.progress
            loop = f"iteration {p.iteration}" if p.iteration else "before the loop"
            self.out.write(f"\r\x1b[K[{p.role}: {p.stage} | {loop} | tests {p.tests} | {p.tokens} tokens]")
            self.out.flush()

    def print(self, line: str) -> None:
        if self.live:
            self.out.write("\r\x1b[K")
        self.out.write(line + "\n")
        self.out.flush()


def task_json(result: TurnResult) -> dict[str, Any]:
    outputs = {a.name: a.output for a in result.agents}
    deployment = outputs.get("deployer") or {}
    return {
        "deployed": bool(deployment.get("deployed")),
        "agent": deployment.get("name") or None,
        "version": deployment.get("version"),
        "forced": bool(deployment.get("forced")),
        "reason": deployment.get("reason", ""),
        "failing_tests": deployment.get("failing_tests", []),
        "blocking": deployment.get("blocking", []),
        "rules": deployment.get("rules", []),
        "draft": deployment.get("draft") or None,
        "refused": (outputs.get("orchestrator") or {}).get("feasible") is False,
        "tests": outputs.get("tester"),
        "turn_id": result.turn_id,
        "turn": result.as_json(),
    }


@click.command("factory")
@click.argument("request")
@click.option("--json", "as_json", is_flag=True, help="Print the task and the turn as one JSON object.")
@click.option("--max-iterations", type=click.IntRange(1, 50), default=None, help="Loop at most N times (default 3).")
@click.option("--force", is_flag=True, help="Deploy even if tests fail or the critic blocks (recorded on the card).")
@click.option("--no-sandbox", is_flag=True, help="Run generated tool code without bubblewrap (recorded on the card).")
@click.option("--user", default=DEFAULT_USER, show_default=True)
@click.option("--config", "config_path", type=click.Path(path_type=Path), default=None, help="Instances config.")
def factory(
    request: str, as_json: bool, max_iterations: int | None, force: bool, no_sandbox: bool, user: str,
    config_path: Path | None,
) -> None:  # fmt: skip
    """Design, write, test and deploy an agent that does what REQUEST says."""
    pipeline = with_max_iterations(bundled_pipelines.load("factory"), max_iterations)
    config = load_config(config_path)
    view = LiveLine(sys.stderr if as_json else sys.stdout)

    def on_event(event: Event) -> None:
        view(event)

    async def go() -> TurnResult:
        app = Cantata(config)
        try:
            options = {"force": force, "no_sandbox": no_sandbox}
            return await app.run_turn(pipeline, request, user=user, on_event=on_event, options=options)
        finally:
            await app.close()

    result = asyncio.run(go())
    task = task_json(result)
    if as_json:
        click.echo(json.dumps(task, ensure_ascii=False, indent=2))
    else:
        if isinstance(task["tests"], dict):
            view.tested(task["tests"])
        for line in outcome_lines(task, request):
            view.print(line)
    if not task["deployed"]:
        sys.exit(1)
