"""The numbers of an agent's output that lie on a bounded scale (a score from 1 to 5, a
percentage), read from its JSON Schema: the dashboard shows "4 / 5", not a bare 4.

Paths name a field as the dashboard walks an output: `openness`, `risk.severity` for a
nested object, `scores[]` for the items of a list, `hits[].weight` for a field of them."""

from __future__ import annotations

from typing import Any, TypeGuard

from cantata.structured import resolve_ref

MAX_DEPTH = 6  # outputs are shallow; a recursive schema ($ref to itself) stops here


def scales(schema: dict[str, Any]) -> dict[str, tuple[float, float]]:
    found: dict[str, tuple[float, float]] = {}
    _walk(schema, schema, "", found, MAX_DEPTH)
    return found


def _walk(
    schema: dict[str, Any], root: dict[str, Any], path: str, found: dict[str, tuple[float, float]], depth: int
) -> None:
    if depth == 0:
        return
    try:
        schema = resolve_ref(schema, root)
    except LookupError:
        return
    bounds = _bounds(schema)
    if bounds is not None and path:
        found[path] = bounds
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, dict):
            _walk(sub, root, f"{path}.{name}" if path else name, found, depth - 1)
    items = schema.get("items")
    if isinstance(items, dict):
        _walk(items, root, f"{path}[]", found, depth - 1)
    for option in schema.get("anyOf") or []:  # Optional[int] is anyOf [integer, null]
        if isinstance(option, dict):
            _walk(option, root, path, found, depth - 1)


def _bounds(schema: dict[str, Any]) -> tuple[float, float] | None:
    enum = schema.get("enum")
    if isinstance(enum, list) and len(enum) > 1 and all(_is_number(v) for v in enum):
        return (min(enum), max(enum))
    low, high = schema.get("minimum"), schema.get("maximum")
    if _is_number(low) and _is_number(high) and low < high:
        return (low, high)
    return None


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
