"""YAML loading that remembers where every value came from.

Pydantic reports an error at a location such as ('agents', 2, 'reads', 0); users need
"pipeline.yaml:14". We compose the YAML node tree once and record the line of every
key and item, so any error found later (by pydantic or by the DAG checks) can name it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Iterable
from typing import Any

import yaml
from pydantic import ValidationError

from cantata.errors import UserError

Loc = tuple[str | int, ...]


@dataclass
class YamlSource:
    path: Path
    data: Any
    lines: dict[Loc, int] = field(default_factory=dict)

    def line_of(self, loc: Loc) -> int:
        """The line of `loc`, or of its nearest enclosing value that has one."""
        while loc:
            if loc in self.lines:
                return self.lines[loc]
            loc = loc[:-1]
        return self.lines.get((), 1)

    def where(self, loc: Loc) -> str:
        return f"{self.path}:{self.line_of(loc)}"


def load_yaml(path: Path, error: type[UserError]) -> YamlSource:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise error(f"{path}: no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {exc}") from exc
    return parse_yaml(text, path, error)


def parse_yaml(text: str, path: Path, error: type[UserError]) -> YamlSource:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        raise error(f"{path}:{line}: invalid YAML: {exc.problem or exc.context}") from exc
    except yaml.YAMLError as exc:
        raise error(f"{path}: invalid YAML: {exc}") from exc
    source = YamlSource(path=path, data=None)
    if node is None:
        source.data = {}
        return source
    source.data = _convert(node, (), source.lines, path, error)
    return source


def _convert(
    node: yaml.Node, loc: Loc, lines: dict[Loc, int], path: Path, error: type[UserError]
) -> Any:
    lines.setdefault(loc, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node)
            if not isinstance(key, str):
                raise error(f"{path}:{key_node.start_mark.line + 1}: keys must be text, got {key!r}")
            if key in result:
                raise error(f"{path}:{key_node.start_mark.line + 1}: key '{key}' appears twice")
            lines[(*loc, key)] = key_node.start_mark.line + 1
            result[key] = _convert(value_node, (*loc, key), lines, path, error)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, (*loc, i), lines, path, error) for i, item in enumerate(node.value)]
    return _scalar(node)


def _scalar(node: yaml.Node) -> Any:
    return yaml.constructor.SafeConstructor().construct_object(node, deep=True)


def describe_validation_error(
    exc: ValidationError, source: YamlSource, allowed_keys: Callable[[Loc], Iterable[str]]
) -> str:
    """One line for the most useful of pydantic's errors: an unknown key explains the rest."""
    errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
    err = errors[0]
    loc: Loc = tuple(err["loc"])
    where = source.where(loc)
    if err["type"] == "extra_forbidden":
        allowed = ", ".join(allowed_keys(loc[:-1]))
        return f"{where}: unknown key '{loc[-1]}' in {loc_text(loc[:-1]) or 'the file'}; allowed keys: {allowed}"
    if err["type"] == "missing":
        return f"{where}: {loc_text(loc)} is missing; add it"
    return f"{where}: {loc_text(loc)}: {err['msg'].removeprefix('Value error, ')}"


def loc_text(loc: Loc) -> str:
    """('agents', 2, 'reads') -> 'agents[2].reads'"""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
