"""The critic's static checks, in code: what generated tool code may and may not do.

A tool function is pure computation on JSON: it may import a short list of standard
modules and nothing else, open no file, start no process, reach no network, and not
reach into the interpreter (exec, eval, dunder attributes). Anything else is a blocking
finding. The sandbox enforces isolation anyway; these checks catch it before a run and
tell the fixer what to change.
"""

from __future__ import annotations

import ast
from pathlib import Path

from cantata.pipelines.factory.assembly import assembly_error
from cantata.pipelines.factory.models import Artefact, Finding

ALLOWED_MODULES = frozenset({
    "collections", "dataclasses", "datetime", "decimal", "enum", "fractions", "functools", "itertools",
    "json", "math", "re", "statistics", "string", "textwrap", "typing", "unicodedata",
})  # fmt: skip
FORBIDDEN_NAMES = frozenset({
    "open", "exec", "eval", "compile", "__import__", "globals", "locals", "vars", "input", "breakpoint",
    "getattr", "setattr", "delattr", "memoryview",
})  # fmt: skip


def static_findings(artefact: Artefact, scratch: Path) -> list[Finding]:
    findings: list[Finding] = []
    problem = assembly_error(artefact, scratch)
    if problem is not None:
        findings.append(Finding(severity="blocking", where="pipeline", problem=f"does not load: {problem}"[:300]))
    if artefact.tool_code.strip():
        findings.extend(tool_findings(artefact.tool_code))
    return findings


def tool_findings(code: str) -> list[Finding]:
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return [Finding(severity="blocking", where=f"tool.py:{exc.lineno}", problem=f"does not parse: {exc.msg}")]
    findings: list[Finding] = []

    def block(node: ast.AST, problem: str) -> None:
        findings.append(Finding(severity="blocking", where=f"tool.py:{getattr(node, 'lineno', 0)}", problem=problem))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in ALLOWED_MODULES:
                    block(node, f"imports '{alias.name}', which a tool may not use")
        elif isinstance(node, ast.ImportFrom):
            if node.level or (node.module or "").split(".")[0] not in ALLOWED_MODULES:
                block(node, f"imports from '{node.module or '.'}', which a tool may not use")
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            block(node, f"uses '{node.id}': no file access, no dynamic code")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            block(node, f"reaches into '{node.attr}'")
    runs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run"]
    if not runs:
        findings.append(Finding(severity="blocking", where="tool.py", problem="defines no top-level run(value)"))
    elif len(runs[0].args.args) != 1:
        findings.append(Finding(severity="blocking", where="tool.py", problem="run must take exactly one argument"))
    return findings
