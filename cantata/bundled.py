"""Pipelines that ship with Cantata (cantata/pipelines/), found by name; anything else is a
path to a YAML file.

It lives beside the loader, not in `cantata.pipelines`: the CLI, the server and the planner
find pipelines by name, and the bundled pipelines sit above them all."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from cantata.errors import UserError
from cantata.loader import BUNDLED_DIR, Pipeline, bundled, load_pipeline

__all__ = ["BUNDLED_DIR", "bundled", "load", "resolve"]  # BUNDLED_DIR, bundled: the loader's (pipeline: tools)


def resolve(name_or_path: str) -> Path:
    known = bundled()
    if name_or_path in known:
        return known[name_or_path]
    path = Path(name_or_path)
    if path.is_dir():
        path = path / "pipeline.yaml"
    if path.suffix in (".yaml", ".yml") or path.exists():
        return path
    raise UserError(f"unknown pipeline '{name_or_path}'; bundled pipelines: {', '.join(known)}, or give a YAML file")


def load(name_or_path: str) -> Pipeline:
    return load_pipeline(resolve(name_or_path))


def served(extra: Iterable[Path] = ()) -> dict[str, Pipeline]:
    """The pipelines a server or worker runs, by name: every bundled one, then `extra` files
    (one of the same name replaces it)."""
    pipelines = {name: load_pipeline(path) for name, path in bundled().items()}
    for path in extra:
        pipeline = load_pipeline(path)
        pipelines[pipeline.name] = pipeline
    return pipelines
