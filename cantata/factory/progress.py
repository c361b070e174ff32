"""A factory task's progress, from its events: the role at work, its stage, the loop's
iteration, the tests passed so far and the tokens spent.

One reading of the events for both views of a task: the terminal's live line
(`cantata factory`, run.py) folds the events as they happen; the dashboard's task board
(board.py) folds the stored ones, plus the stored tester and deployer entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cantata.events import Event


def tests_line(report: dict[str, Any]) -> str:
    return (
        f"dev {report.get('dev_passed', 0)}/{report.get('dev_total', 0)}, "
        f"held-out {report.get('heldout_passed', 0)}/{report.get('heldout_total', 0)}"
    )


@dataclass
class TaskProgress:
    role: str = "-"
    stage: str = "starting"
    iteration: int = 0
    tests: str = "-"
    tokens: int = 0
    seconds: float = 0.0

    def add(self, event: Event) -> None:
        if event.type == "agent_token":
            return
        if event.agent:
            self.role = event.agent
            self.stage = event.type.removeprefix("agent_")
        self.iteration = int(event.data.get("iteration", self.iteration) or self.iteration)
        self.tokens += int(event.data.get("prompt_tokens") or 0) + int(event.data.get("completion_tokens") or 0)
        self.seconds = max(self.seconds, event.at_s)

    def tested(self, report: dict[str, Any]) -> None:
        self.tests = tests_line(report)
