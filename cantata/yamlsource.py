"""YAML loading that remembers where every value came from.

Pydantic reports an error at a location such as ('agents', 2, 'reads', 0); users need
"pipeline.yaml:14". We compose the YAML node tree once and record the line of every
key and item, so any error found later (by pydantic or by the DAG checks) can name it.
Data that never was YAML (a dict built in Python) is a `DataSource`: its errors name the
path instead, e.g. "agents[2].reads[0]".

What a file may cost is bounded while it is read (`YamlLimits`): its size, nesting,
aliases, values and entries of one list or mapping, so that a hostile file (an alias bomb,
50 MB of agents, 100k nested brackets) is refused in milliseconds with its line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, NoReturn, Protocol

import yaml
from pydantic import ValidationError

from cantata.errors import UserError

Loc = tuple[str | int, ...]

# libyaml's parser where PyYAML was built with it (its wheels are): some 30 times faster.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class YamlLimits:
    """What one YAML file may cost to load (a pipeline, an instances config, canned replies):
    checked while it is read, so a hostile file is refused in a fraction of a second and a
    few megabytes. Each is set by CANTATA_YAML_<NAME>, e.g. CANTATA_YAML_MAX_BYTES."""

    max_bytes: int = 1024 * 1024  # the file's size
    max_depth: int = 64  # mappings and lists inside one another
    max_aliases: int = 100  # uses of an anchor (*name)
    max_values: int = 50_000  # every key's value and item, an alias counting all it repeats
    max_items: int = 1_000  # entries of one mapping or list: agents, instances, replies

    @classmethod
    def from_env(cls, error: type[UserError]) -> YamlLimits:
        values: dict[str, int] = {}
        for limit in fields(cls):
            raw = os.environ.get(cls.env_name(limit.name))
            if raw is None:
                continue
            if not raw.strip().isdigit() or int(raw) < 1:
                raise error(f"{cls.env_name(limit.name)} must be a positive whole number, got {raw!r}")
            values[limit.name] = int(raw)
        return cls(**values)

    @staticmethod
    def env_name(name: str) -> str:
        return f"CANTATA_YAML_{name.upper()}"

    def describe(self, name: str, unit: str) -> str:
        """ "(limit 64 levels, CANTATA_YAML_MAX_DEPTH)": what a refusal says of its limit."""
        return f"(limit {getattr(self, name)} {unit}, {self.env_name(name)})"


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


def load_yaml(path: Path, error: type[UserError], limits: YamlLimits | None = None) -> YamlSource:
    """`path`'s one YAML document, within `limits` (default: `YamlLimits.from_env()`);
    anything wrong is an `error` naming the file, the line and the reason."""
    limits = limits or YamlLimits.from_env(error)
    try:
        with path.open("rb") as file:
            data = file.read(limits.max_bytes + 1)  # never more than the limit and one byte
        _check_size(data, path, error, limits)
        text = data.decode("utf-8")
    except FileNotFoundError as exc:
        raise error(f"{path}: no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {exc}") from exc
    return parse_yaml(text, path, error, limits)


def parse_yaml(text: str, path: Path, error: type[UserError], limits: YamlLimits | None = None) -> YamlSource:
    limits = limits or YamlLimits.from_env(error)
    _check_size(text.encode("utf-8"), path, error, limits)
    composer = _Composer(path, error, limits)
    try:
        data = composer.compose(yaml.parse(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        raise error(f"{path}:{line}: invalid YAML: {exc.problem or exc.context}") from exc
    except yaml.YAMLError as exc:
        raise error(f"{path}: invalid YAML: {_one_line(str(exc))}") from exc
    return YamlSource(path=path, data=data, lines=composer.lines)


def _check_size(data: bytes, path: Path, error: type[UserError], limits: YamlLimits) -> None:
    if len(data) > limits.max_bytes:
        line = data.count(b"\n", 0, limits.max_bytes) + 1
        raise error(f"{path}:{line}: the file is too long {limits.describe('max_bytes', 'bytes')}")


_NOTHING = object()
_STR = "tag:yaml.org,2002:str"


@dataclass
class _Open:
    """A mapping or sequence being composed."""

    value: dict[str, Any] | list[Any]
    loc: Loc
    anchor: str | None
    line: int  # where it starts
    size: int = 1  # values in it, itself included, aliases counted as expanded
    key: str | None = None  # a mapping's key waiting for its value


class _Composer:
    """Python data from YAML's events, with the line of every key and item: iteratively, so
    nesting costs no stack, and within `limits`. An alias is the anchored value itself (as
    yaml.safe_load has it), never composed again, and counts as many values as it holds, so
    an alias bomb is refused before anything is expanded; the lines inside an alias are the
    alias's own line."""

    def __init__(self, path: Path, error: type[UserError], limits: YamlLimits) -> None:
        self.path = path
        self.error = error
        self.limits = limits
        self.lines: dict[Loc, int] = {}
        self.anchors: dict[str, tuple[Any, int]] = {}  # the value and its size
        self.aliases = 0
        self.values = 0
        self.stack: list[_Open] = []
        self.root: Any = _NOTHING
        self.constructor = yaml.constructor.SafeConstructor()
        self.resolver = yaml.resolver.Resolver()

    def compose(self, events: Iterable[yaml.Event]) -> Any:
        documents = 0
        for event in events:
            line = event.start_mark.line + 1 if event.start_mark else 1
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    self.fail(line, "a YAML file here holds one document; a second one starts here")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                done = self.stack.pop()
                self.anchor(done.anchor, done.value, done.size, done.line)
                self.attach(done.value, done.size, done.line)
            elif isinstance(event, yaml.AliasEvent):
                self.attach(*self.alias(event.anchor or "", line), line)
            elif isinstance(event, yaml.ScalarEvent):
                self.count(1, line)
                value = self.scalar(event)
                self.anchor(event.anchor, value, 1, line)
                self.attach(value, 1, line)
            elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                self.start(event, line)
        return {} if self.root is _NOTHING else self.root

    def start(self, event: yaml.CollectionStartEvent, line: int) -> None:
        if len(self.stack) >= self.limits.max_depth:
            self.fail(line, f"values nest too deep {self.limits.describe('max_depth', 'levels')}")
        self.count(1, line)
        loc = self.next_loc(line, "a mapping" if isinstance(event, yaml.MappingStartEvent) else "a list")
        self.lines.setdefault(loc, line)
        value: dict[str, Any] | list[Any] = {} if isinstance(event, yaml.MappingStartEvent) else []
        self.stack.append(_Open(value=value, loc=loc, anchor=event.anchor, line=line))

    def next_loc(self, line: int, what: str) -> Loc:
        """Where the next value goes; a value that is not text cannot be a key."""
        if not self.stack:
            return ()
        parent = self.stack[-1]
        if isinstance(parent.value, list):
            return (*parent.loc, len(parent.value))
        if parent.key is None:
            self.fail(line, f"keys must be text, got {what}")
        return (*parent.loc, parent.key)

    def attach(self, value: Any, size: int, line: int) -> None:
        if not self.stack:
            self.root = value
            self.lines.setdefault((), line)
            return
        parent = self.stack[-1]
        parent.size += size
        if isinstance(parent.value, list):
            self.lines.setdefault((*parent.loc, len(parent.value)), line)
            parent.value.append(value)
        elif parent.key is None:
            if not isinstance(value, str):
                self.fail(line, f"keys must be text, got {value!r}"[:200])
            if value in parent.value:
                self.fail(line, f"key '{value}' appears twice")
            parent.key = value
            self.lines[(*parent.loc, value)] = line
            return
        else:
            self.lines.setdefault((*parent.loc, parent.key), line)
            parent.value[parent.key] = value
            parent.key = None
        if len(parent.value) > self.limits.max_items:
            where = loc_text(parent.loc) or "the top level"
            self.fail(line, f"{where} has too many entries {self.limits.describe('max_items', 'entries')}")

    def alias(self, anchor: str, line: int) -> tuple[Any, int]:
        self.aliases += 1
        if self.aliases > self.limits.max_aliases:
            self.fail(line, f"too many aliases {self.limits.describe('max_aliases', 'aliases')}")
        if anchor not in self.anchors:
            if any(open.anchor == anchor for open in self.stack):
                self.fail(line, f"alias *{anchor} is inside the value it names")
            self.fail(line, f"alias *{anchor} names no anchor before it")
        value, size = self.anchors[anchor]
        self.count(size, line, f"alias *{anchor} repeats {size} values, too many in all")
        return value, size

    def anchor(self, anchor: str | None, value: Any, size: int, line: int) -> None:
        if anchor is None:
            return
        if anchor in self.anchors:
            self.fail(line, f"anchor &{anchor} is defined twice")
        self.anchors[anchor] = (value, size)

    def count(self, values: int, line: int, what: str = "the file holds too many values") -> None:
        self.values += values
        if self.values > self.limits.max_values:
            self.fail(line, f"{what} {self.limits.describe('max_values', 'values')}")

    def scalar(self, event: yaml.ScalarEvent) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolver.resolve(yaml.ScalarNode, event.value, event.implicit)  # type: ignore[no-untyped-call]
        if tag == _STR:
            return event.value  # the common case, as the constructor would have it
        # libyaml's marks serve as PyYAML's: the constructor reads only their line and column.
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)  # type: ignore[arg-type]
        return self.constructor.construct_object(node, deep=True)

    def fail(self, line: int, reason: str) -> NoReturn:
        raise self.error(f"{self.path}:{line}: {reason}")


def _one_line(text: str) -> str:
    return " ".join(text.split())


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
