"""YAML loading that remembers where every value came from.

Pydantic reports an error at a location such as ('agents', 2, 'reads', 0); users need
"pipeline.yaml:14". We compose the YAML node tree once and record the line of every
key and item, so any error found later (by pydantic or by the DAG checks) can name it.
Data that never was YAML (a dict built in Python) is a `DataSource`: its errors name the
path instead, e.g. "agents[2].reads[0]".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

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
        """Where an error about `loc` is: "pipeline.yaml:14"."""
        return f"{self.path}:{self.line_of(loc)}"

    def at(self, loc: Loc) -> str:
        """Where, and what: "pipeline.yaml:14: agents[2].timeout_s"."""
        return f"{self.where(loc)}: {loc_text(loc)}" if loc else self.where(loc)

    def mention(self, loc: Loc) -> str:
        """A second place in the same message: "line 9"."""
        return f"line {self.line_of(loc)}"


@dataclass
class DataSource:
    """Data with no file behind it: places are named by their path in the data."""

    data: Any

    def where(self, loc: Loc) -> str:
        return loc_text(loc) or "the top level"

    def at(self, loc: Loc) -> str:
        return self.where(loc)

    def mention(self, loc: Loc) -> str:
        return self.where(loc)


class Source(Protocol):
    """Where values came from, for error messages: a YAML file or plain data."""

    @property
    def data(self) -> Any: ...

    def where(self, loc: Loc) -> str: ...

    def at(self, loc: Loc) -> str: ...

    def mention(self, loc: Loc) -> str: ...


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


def _convert(node: yaml.Node, loc: Loc, lines: dict[Loc, int], path: Path, error: type[UserError]) -> Any:
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


class _Dumper(yaml.SafeDumper):
    """The layout a person would write: lists indented under their key, text of several
    lines as a literal block, short lists of names on one line."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


def _sequence(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    flow = all(isinstance(v, (str, int, float, bool)) and "\n" not in str(v) for v in value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


_Dumper.add_representer(str, _text)
_Dumper.add_representer(list, _sequence)


def dump_yaml(data: Any) -> str:
    """YAML that `load_yaml` reads back to equal data; keys in the order given."""
    # No folding: a long line stays one line, as its author wrote it.
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1_000_000)


def describe_validation_error(
    exc: ValidationError, source: Source, allowed_keys: Callable[[Loc], Iterable[str]]
) -> str:
    """One line for the most useful of pydantic's errors: an unknown key explains the rest."""
    errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
    err = errors[0]
    loc: Loc = tuple(err["loc"])
    if err["type"] == "extra_forbidden":
        allowed = ", ".join(allowed_keys(loc[:-1]))
        return (
            f"{source.where(loc)}: unknown key '{loc[-1]}' in {loc_text(loc[:-1]) or 'the top level'}; "
            f"allowed keys: {allowed}"
        )
    if err["type"] == "missing":
        return f"{source.at(loc)} is missing; add it"
    return f"{source.at(loc)}: {err['msg'].removeprefix('Value error, ')}"


def loc_text(loc: Loc) -> str:
    """('agents', 2, 'reads') -> 'agents[2].reads'"""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
