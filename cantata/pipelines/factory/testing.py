"""The tester's work, in code: the acceptance examples run on the new agent, checked.

The agent runs on Cantata's own runtime, on the instances the factory runs on (a
scratch runtime shares their pool, with a store of its own, so test turns never mix
with the user's); its tool, if any, runs only in the sandbox. Each example's checks
are evaluated here, never by a model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cantata import CantataError, Runtime, ScratchRuntime
from cantata.pipelines.factory.assembly import assemble
from cantata.pipelines.factory.models import Artefact, Check, Example, TestReport, TestResult

TEST_USER = "factory-tester"


def check_failure(check: Check, output: Any) -> str | None:
    """Why `output` does not have the property, or None when it has it."""
    if not isinstance(output, dict):
        return "the output is not a JSON object"
    value = output.get(check.field) if check.field else output
    if check.kind == "has_field":
        return None if value not in (None, "", [], {}) else f"field '{check.field}' is missing or empty"
    if check.kind == "equals":
        ok = str(value).strip().lower() == check.value.strip().lower()
        return None if ok else f"field '{check.field}' is {json.dumps(value)[:80]}, expected {check.value!r}"
    if check.kind == "contains":
        haystack = json.dumps(value, ensure_ascii=False).lower()
        return None if check.value.strip().lower() in haystack else f"'{check.value}' not found in '{check.field}'"
    # count_at_least
    try:
        wanted = int(check.value)
    except ValueError:
        return f"the check's count {check.value!r} is not a number"
    count = len(value) if isinstance(value, list) else 0
    return None if count >= wanted else f"'{check.field}' has {count} items, expected at least {wanted}"


async def run_examples(
    runtime: Runtime, artefact: Artefact, examples: list[Example], folder: Path, *, options: dict[str, Any]
) -> TestReport:
    """Assemble the artefact in `folder` and run every example on it."""
    report = TestReport(
        dev_total=sum(e.half == "dev" for e in examples), heldout_total=sum(e.half == "heldout" for e in examples)
    )
    try:
        pipeline = assemble(artefact, folder / "agent")
    except CantataError as exc:
        report.error = f"the artefact does not load: {exc}"
        return report
    scratch = runtime.scratch(folder / "home")
    try:
        for number, example in enumerate(examples, start=1):
            reason = await _run_one(scratch, pipeline, example, options)
            result = TestResult(id=number, half=example.half, passed=reason is None, reason=reason or "")
            if example.half == "dev":
                report.dev_passed += result.passed
                if not result.passed:
                    report.dev_failures.append(result)
            else:
                report.heldout_passed += result.passed
                if not result.passed:
                    report.heldout_failed_ids.append(number)
    finally:
        await scratch.close()
    return report


async def _run_one(runtime: ScratchRuntime, pipeline: Any, example: Example, options: dict[str, Any]) -> str | None:
    try:
        result = await runtime.run_turn(pipeline, example.input, user=TEST_USER, options=options)
    except CantataError as exc:
        return f"the agent could not run: {exc}"
    if result.final is None:
        failed = next((a for a in result.agents if a.status != "ok"), None)
        why = f"{failed.name}: {failed.error}" if failed is not None else "no final output"
        return f"the agent failed ({why})"[:300]
    output = next(a.output for a in result.agents if a.name == result.final.agent)
    for check in example.checks:
        problem = check_failure(check, output)
        if problem is not None:
            return problem
    return None
