"""A function beside the pipeline as a tool that runs only under bubblewrap (cantata.sandbox),
as the factory's generated tool functions do: it is never imported into Cantata's process,
so its JSON Schema and description are read from its source's syntax tree. Parameters
may be annotated with JSON's types (str, int, float, bool, list, dict, with or without
items, and `| None`); others are refused at load."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from cantata.errors import ToolError
from cantata.sandbox import Limits, run_tool
from cantata.tools.base import result_text

_JSON_TYPES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "list": "array",
    "dict": "object",
}


class SandboxTool:
    def __init__(
        self,
        folder: Path,
        module: str,
        function: str,
        *,
        name: str | None = None,
        description: str | None = None,
        side_effects: bool = False,
        approve: bool = False,
        timeout_s: float = 30.0,
    ) -> None:
        """Raises ValueError when the source does not define `function` with a usable signature."""
        self.folder, self.module, self.function = folder, module, function
        parameters, doc = signature_schema(folder / f"{module}.py", function)
        self.name = name or function
        self.description = description or doc
        self.parameters = parameters
        self.side_effects = side_effects
        self.approve = approve
        self.timeout_s = timeout_s

    async def call(self, arguments: dict[str, Any]) -> str:
        run = await run_tool(
            self.folder, self.module, self.function, arguments, limits=Limits(wall_s=self.timeout_s), keywords=True
        )
        if not run.ok:
            raise ToolError(run.error or "the sandboxed tool failed")
        return result_text(run.output)


def signature_schema(file: Path, function: str) -> tuple[dict[str, Any], str]:
    """The JSON Schema of `function`'s arguments and its docstring, from `file`'s source."""
    try:
        tree = ast.parse(file.read_bytes(), filename=str(file))
    except (OSError, SyntaxError, ValueError) as exc:
        raise ValueError(f"cannot read {file.name}: {exc}") from None
    found = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == function), None
    )
    if found is None:
        raise ValueError(f"{file.name} defines no function '{function}' at its top level")
    args = found.args
    if args.vararg or args.kwarg or args.posonlyargs:
        raise ValueError(f"'{function}' takes *args, **kwargs or positional-only parameters; a tool takes named ones")
    named = [*args.args, *args.kwonlyargs]
    defaults = [None] * (len(args.args) - len(args.defaults)) + list(args.defaults) + list(args.kw_defaults)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for arg, default in zip(named, defaults, strict=True):
        properties[arg.arg] = _schema_of(arg.annotation, function, arg.arg)
        if default is None:
            required.append(arg.arg)
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema, ast.get_docstring(found) or ""


def _schema_of(annotation: ast.expr | None, function: str, name: str) -> dict[str, Any]:
    if annotation is None:
        return {}
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):  # a quoted hint
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            raise ValueError(f"'{function}': the hint of '{name}' is not an expression") from None
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        options = [_schema_of(side, function, name) for side in (annotation.left, annotation.right)]
        return {"anyOf": options}
    if isinstance(annotation, ast.Constant) and annotation.value is None:
        return {"type": "null"}
    if isinstance(annotation, ast.Name) and annotation.id in _JSON_TYPES:
        return {"type": _JSON_TYPES[annotation.id]}
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name):
        if annotation.value.id == "list":
            return {"type": "array", "items": _schema_of(annotation.slice, function, name)}
        if annotation.value.id == "dict":
            return {"type": "object"}
    raise ValueError(
        f"'{function}': the hint of '{name}' ({ast.unparse(annotation)}) is not one a sandboxed tool may use: "
        "str, int, float, bool, list, dict (list[...] too), or X | None"
    )
