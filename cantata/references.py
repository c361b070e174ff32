"""The dotted paths a pipeline names (`function`, `shortcut`, `check`, `output`, a loop's
`until`): which code a pipeline may name, and where a path points, found without running it.

A pipeline file is data: naming `os.system`, `subprocess.run` or `builtins.eval` must not
turn it into a way to run them. So a pipeline names only its own code, modules whose file
lies in the pipeline's folder (`rules.py` beside the YAML; `cantata.pipelines.coaching.roles`
for the bundled coaching pipeline), the bundled pipelines' code (`cantata.pipelines`, so a
bundled pipeline written out elsewhere still loads), and what the operator allows in
CANTATA_ALLOWED_CALLABLES: comma-separated module prefixes or full paths (`mypackage` allows
`mypackage.rules.check`).

`refusal` decides from where a module's file is, and `locate` finds the name in the module's
syntax tree (following re-exports such as `from os import system`): neither imports, so
`cantata validate` runs none of the pipeline's code. `refusal_of_object` checks again what an
import gave, since a module may bind a name to anything when it runs.
"""

from __future__ import annotations

import ast
import importlib.machinery
import os
import sys
from pathlib import Path
from typing import Any

from cantata.pipeline_modules import find_source, local_name

ALLOWED_ENV = "CANTATA_ALLOWED_CALLABLES"
ALWAYS_ALLOWED = ("cantata.pipelines",)  # functions written to be named by a pipeline, shipped with Cantata
_MAX_HOPS = 16  # re-exports followed before giving up (a cycle of imports would loop)


def allowed() -> tuple[str, ...]:
    """The bundled pipelines' code, and the operator's list from CANTATA_ALLOWED_CALLABLES."""
    return ALWAYS_ALLOWED + tuple(part.strip() for part in os.environ.get(ALLOWED_ENV, "").split(",") if part.strip())


def _is_allowed(dotted: str) -> bool:
    return any(dotted == entry or dotted.startswith(f"{entry}.") for entry in allowed())


_INSTALLED = ("site-packages", "dist-packages")  # where installers put packages, venv or not


def _own(file: Path, base: Path, module_name: str) -> bool:
    """Whether `file`, the source of `module_name`, is one of the pipeline's own modules: a
    file or package of its folder found by that name (`rules` as rules.py, `pkg.functions` as
    functions.py when the folder is pkg), not a module of a virtualenv or a Python install
    that happens to be kept under the folder (its `os` is still the stdlib's)."""
    folder, file = base.resolve(), file.resolve()
    if not file.is_relative_to(folder):
        return False
    inside = file.relative_to(folder).parts
    path = [*inside[:-1], *([] if file.name == "__init__.py" else [file.stem])]
    names = local_name(module_name).split(".")
    if not path or names[-len(path) :] != path:
        return False
    below = [folder.joinpath(*inside[: i + 1]) for i in range(len(inside) - 1)]
    return not any(part in _INSTALLED for part in inside) and not any((d / "pyvenv.cfg").is_file() for d in below)


def _outside(dotted: str, base: Path) -> str:
    return (
        f"'{dotted}' is outside the pipeline's own modules (files in {base}): a pipeline may name"
        f" only its own code, or what {ALLOWED_ENV} allows (module prefixes, comma-separated)"
    )


def _exists(module_name: str) -> bool:
    top = module_name.partition(".")[0]
    return top in sys.builtin_module_names or importlib.machinery.PathFinder.find_spec(top) is not None


def split(dotted: str) -> tuple[str, str] | None:
    """(module, name) of `package.module.Name`, or None if it is not a dotted path."""
    module_name, _, attr = dotted.rpartition(".")
    return (module_name, attr) if module_name and attr else None


def refusal(dotted: str, base: Path) -> str | None:
    """Why a pipeline in `base` may not name `dotted` (None: it may), decided from where its
    module's file is; nothing is imported."""
    parts = split(dotted)
    if parts is None:
        return f"'{dotted}' is not a dotted path like package.module.Name"
    if _is_allowed(dotted):
        return None
    file = find_source(parts[0], base)
    if file is None and not _exists(parts[0]):
        return f"cannot import '{parts[0]}': no such module beside the pipeline (in {base}) or installed"
    if file is None or not _own(file, base, parts[0]):
        return _outside(dotted, base)
    return None


def locate(dotted: str, base: Path) -> str | None:
    """`refusal`, then whether the module's source defines the name at its top level (a def,
    a class, an assignment, or an import that is followed to its source and checked in turn).
    What this cannot tell without running the module (a name a function returns) passes here
    and is checked by `refusal_of_object` when the pipeline is loaded to run."""
    return _locate(dotted, base, hops=0)


def _locate(dotted: str, base: Path, *, hops: int) -> str | None:
    problem = refusal(dotted, base)
    if problem is not None:
        return problem
    module_name, attr = split(dotted) or ("", "")
    file = find_source(module_name, base)
    if file is None or not _own(file, base, module_name):
        return None  # allowed code outside the pipeline is trusted, and may be compiled: not parsed
    return _find_name(file, module_name, attr, dotted, base, hops=hops)


def _find_name(file: Path, module_name: str, attr: str, dotted: str, base: Path, *, hops: int) -> str | None:
    if hops > _MAX_HOPS:
        return f"'{dotted}': too many re-exports to follow"
    try:
        tree = ast.parse(file.read_bytes(), filename=str(file))
    except SyntaxError as exc:
        return f"cannot import '{module_name}': SyntaxError: {exc.msg} ({file.name}, line {exc.lineno})"
    except (OSError, ValueError) as exc:
        return f"cannot import '{module_name}': {exc}"
    stars: list[ast.ImportFrom] = []
    nodes = _top_level(tree.body)
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            stars.append(node)
        binding = _binding(node, attr)
        if binding is not None:
            return _follow(binding, node, nodes, file, dotted, base, hops=hops)
    for star in stars:
        if star.level == 0:
            return f"'{dotted}' may come from 'from {star.module} import *': " + _outside(f"{star.module}.*", base)
        target = _relative_file(file, star)
        if target is not None and _find_name(target, module_name, attr, dotted, base, hops=hops + 1) is None:
            return None
    return f"module '{module_name}' has no '{attr}'"


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """A module's statements, with those under a top-level if/try/with (they run at import too)."""
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if isinstance(node, ast.If | ast.With):
            out.extend(_top_level(node.body + getattr(node, "orelse", [])))
        elif isinstance(node, ast.Try):
            out.extend(_top_level(node.body + node.orelse + node.finalbody))
            for handler in node.handlers:
                out.extend(_top_level(handler.body))
    return out


def _binding(node: ast.stmt, name: str) -> Any:
    """What `node` binds `name` to: the node itself, an import alias, an assigned value, or None."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node if node.name == name else None
    if isinstance(node, ast.Import | ast.ImportFrom):
        return next((a for a in node.names if (a.asname or a.name.partition(".")[0]) == name), None)
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
        return node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
        return node.value if node.value is not None else node
    return None


def _follow(
    binding: Any, node: ast.stmt, nodes: list[ast.stmt], file: Path, dotted: str, base: Path, *, hops: int
) -> str | None:
    """Where a top-level binding of `file` points, checked like the path itself."""
    if hops > _MAX_HOPS:
        return f"'{dotted}': too many re-exports to follow"
    if isinstance(binding, ast.alias) and isinstance(node, ast.Import):
        return f"'{dotted}' is the module '{binding.name}', not a function or class"
    if isinstance(binding, ast.alias) and isinstance(node, ast.ImportFrom):
        if node.level == 0:  # from package import name: the same rules for that path
            return _locate(f"{node.module}.{binding.name}", base, hops=hops + 1)
        target = _relative_file(file, node)
        if target is None:
            return f"'{dotted}' is imported from a module that is not beside it (line {node.lineno})"
        return _find_name(target, target.stem, binding.name, dotted, base, hops=hops + 1)
    path = _attribute_path(binding)
    if path is not None:  # name = os.system, or name = other_name: where that points
        root, _, rest = path.partition(".")
        for earlier in nodes:
            imported = _binding(earlier, root)
            if isinstance(imported, ast.alias) and isinstance(earlier, ast.Import) and rest:
                module = imported.name if imported.asname else root  # import os.path binds os
                return _locate(f"{module}.{rest}", base, hops=hops + 1)
            if imported is not None and imported is not binding and not rest:
                return _follow(imported, earlier, nodes, file, dotted, base, hops=hops + 1)
    return None  # defined here (a def, a class, or a value computed when the module runs)


def _attribute_path(value: Any) -> str | None:
    """`a.b.c` for an expression that is only names and attributes, else None."""
    parts: list[str] = []
    while isinstance(value, ast.Attribute):
        parts.append(value.attr)
        value = value.value
    if not isinstance(value, ast.Name):
        return None
    return ".".join([value.id, *reversed(parts)])


def _relative_file(file: Path, node: ast.ImportFrom) -> Path | None:
    """The file `from .module import x` in `file` reads (no import: paths only)."""
    folder = file.parent
    for _ in range(node.level - 1):
        folder = folder.parent
    where = folder.joinpath(*(node.module or "__init__").split("."))
    for candidate in (where / "__init__.py", where.with_name(f"{where.name}.py")):
        if candidate.is_file():
            return candidate
    return None


def refusal_of_object(value: Any, dotted: str, base: Path) -> str | None:
    """Why what importing `dotted` gave may not be named (None: it may): its defining module
    must be one of the pipeline's own, or allowed. Judged by that module, not by the path: an
    allowed module's re-export of another module's function is that function."""
    module_name = getattr(value, "__module__", None)
    file = getattr(sys.modules.get(module_name or ""), "__file__", None)
    if module_name and file is not None and _own(Path(file), base, module_name):
        return None
    if module_name and _is_allowed(f"{module_name}.{getattr(value, '__qualname__', '')}"):
        return None
    real = f"{module_name}.{getattr(value, '__qualname__', type(value).__name__)}"
    return f"'{dotted}' is {real}, and " + _outside(real, base)
