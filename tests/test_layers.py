"""No import cycle between Cantata's modules, type-only and deferred imports included.

import-linter (`lint-imports`, in `make test`) keeps the layers; this test keeps what it
does not see: an import under `if TYPE_CHECKING:` or inside a function is an edge here,
because a cycle that only such imports close still means that no one can tell which of
the two modules is below the other.

An edge goes to the module an import names: `from cantata.store import Store` is an edge
to `cantata.store` (its `__init__`, whose re-exports are its own edges), `from cantata
import spec` an edge to `cantata.spec`. The parents that Python runs on the way
(`cantata/__init__.py` for any `cantata.x`) are not edges: every module would otherwise
be in a cycle with every package that re-exports it.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cantata"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """Each module of `cantata/` -> the modules of `cantata/` it imports, anywhere in it."""
    files = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                # `from package import module` names the module; `from module import name`, the module.
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in files else base for alias in node.names]
            for target in targets:
                while target and target not in files:  # `import a.b.c` of an attribute path: its module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_cycle_in(graph, component) for component in components]


def _cycle_in(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A path from the component's first module back to itself, inside the component."""
    start = min(component)
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:  # breadth first: the shortest cycle through `start`
        following = []
        for node in frontier:
            for other in sorted(graph[node] & component):
                if other == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if other not in parents:
                    parents[other] = node
                    following.append(other)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # a strongly connected component has one


def test_the_graph_sees_every_kind_of_import() -> None:
    graph = import_graph()
    assert "cantata.runtime" in graph["cantata"]  # a lazy re-export, under TYPE_CHECKING
    assert "cantata.store.sqlite_store" in graph["cantata.store"]  # a package re-export
    assert "cantata.server.app" in graph["cantata.server.cli"]  # inside a function
    assert "cantata.sandbox.runner" in graph["cantata.sandbox"]  # a package's own re-export
    assert "cantata.errors" in graph["cantata.spec"]


def test_cycles_are_found_and_named() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_cantata() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles in cantata/:\n" + "\n".join(" -> ".join(cycle) for cycle in found)


def test_every_module_is_in_a_layer() -> None:
    """import-linter constrains only the modules its layers name: a new one must be placed."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["type"] == "layers" and c.get("containers") == ["cantata"]]
    named = {name.strip() for layer in contract["layers"] for name in layer.replace("|", ":").split(":")}
    top = {
        module_name(path).split(".")[1]
        for path in PACKAGE.rglob("*.py")
        if path.parent != PACKAGE or path.stem != "__init__"
    }
    assert top - named == set(), "modules of cantata/ in no layer of pyproject.toml's import-linter contract"
