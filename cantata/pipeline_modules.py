"""A pipeline's own modules (functions, shortcuts, checks, output models beside its YAML),
imported without touching `sys.path`.

Putting the pipeline's folder on `sys.path` would make its `rules.py` the one and only
`rules` of the process: a second pipeline with a `rules.py` would get the first one's, and
a changed `rules.py` would never be read again. Instead every folder gets a private
package (`_cantata_<folder>_<n>`) whose modules are that folder's files, compiled from
source (never from a stale `__pycache__`). When a file the package loaded has changed,
the next load of a pipeline from that folder gets a new package, so the new code runs;
pipelines already loaded keep the code they were loaded with.

Inside such a module, import its neighbours relatively (`from .models import Mood`).
Dotted paths whose first part is not a file or folder beside the YAML (installed packages,
`cantata.pipelines.coaching...`) are imported the ordinary way.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import itertools
import re
import sys
import threading
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.util import spec_from_file_location
from pathlib import Path

_PREFIX = "_cantata_"


@dataclass
class _Package:
    name: str
    folder: Path
    sources: dict[Path, bytes] = field(default_factory=dict)  # every file loaded, as it was read

    def unchanged(self) -> bool:
        for path, data in list(self.sources.items()):
            try:
                if path.read_bytes() != data:
                    return False
            except OSError:
                return False
        return True


_lock = threading.Lock()
_counter = itertools.count(1)
_newest: dict[Path, _Package] = {}  # folder -> the package new loads use
_by_name: dict[str, _Package] = {}  # every package made, so modules loaded later still find their files


def import_module(module_name: str, base: Path | None) -> types.ModuleType:
    """`module` or `package.module`, from beside `base` if its first part is there.

    Raises what importing raises: ImportError, or the module's own error."""
    top = module_name.partition(".")[0]
    if base is not None and _is_beside(base, top):
        return importlib.import_module(f"{_package_for(base).name}.{module_name}")
    return importlib.import_module(module_name)


def find_source(module_name: str, base: Path | None) -> Path | None:
    """The file `import_module(module_name, base)` would run, found without importing
    anything (not even a parent package's `__init__.py`): `None` for a module with no
    Python source (built in, compiled) or none at all."""
    top = module_name.partition(".")[0]
    if base is not None and _is_beside(base, top):
        where = base.joinpath(*module_name.split("."))
        for file in (where / "__init__.py", where.with_name(f"{where.name}.py")):
            if file.is_file():
                return file
        return None
    locations: list[str] | None = None
    spec = None
    parts = module_name.split(".")
    for i in range(len(parts)):
        spec = importlib.machinery.PathFinder.find_spec(".".join(parts[: i + 1]), locations)
        if spec is None:
            return None
        locations = list(spec.submodule_search_locations or [])
    origin = spec.origin if spec is not None else None
    return Path(origin) if origin and origin.endswith(".py") else None


def local_name(module_name: str) -> str:
    """`module_name` as named beside its pipeline: `rules` for `_cantata_x_1.rules` (one of
    the private packages' modules); any other name as it is."""
    top, _, rest = module_name.partition(".")
    return rest if top in _by_name and rest else module_name


def _is_beside(base: Path, top: str) -> bool:
    where = base / top
    if not ((where / "__init__.py").is_file() or where.with_name(f"{top}.py").is_file() or where.is_dir()):
        return False
    # A package imported from that very folder already (a YAML next to an installed
    # package's source, e.g. cantata's own checkout) is that package: no second copy.
    file = getattr(sys.modules.get(top), "__file__", None)
    if file is None:
        return True
    loaded = Path(file).resolve()
    return not (loaded == where.with_name(f"{top}.py").resolve() or loaded.is_relative_to(where.resolve()))


def _package_for(base: Path) -> _Package:
    folder = base.resolve()
    with _lock:
        package = _newest.get(folder)
        if package is not None and package.unchanged():
            return package
        slug = re.sub(r"\W", "_", folder.name)
        package = _Package(name=f"{_PREFIX}{slug}_{next(_counter)}", folder=folder)
        module = types.ModuleType(package.name, f"Modules beside {folder}, as loaded by Cantata.")
        module.__path__ = []  # nothing for the ordinary finders: _Finder answers
        module.__spec__ = importlib.machinery.ModuleSpec(package.name, None, is_package=True)
        sys.modules[package.name] = module
        _by_name[package.name] = package
        _newest[folder] = package
        if not any(isinstance(f, _Finder) for f in sys.meta_path):
            sys.meta_path.insert(0, _Finder())
        importlib.invalidate_caches()
        return package


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the modules of Cantata's private packages, and nothing else."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        top, _, rest = fullname.partition(".")
        package = _by_name.get(top) if top.startswith(_PREFIX) else None
        if package is None or not rest:
            return None
        where = package.folder.joinpath(*rest.split("."))
        init = where / "__init__.py"
        if init.is_file():
            loader = _FreshLoader(package, fullname, str(init))
            return spec_from_file_location(fullname, init, loader=loader, submodule_search_locations=[str(where)])
        file = where.with_name(f"{where.name}.py")
        if file.is_file():
            return spec_from_file_location(fullname, file, loader=_FreshLoader(package, fullname, str(file)))
        if where.is_dir():  # a folder without __init__.py: a namespace package
            spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            spec.submodule_search_locations = [str(where)]
            return spec
        return None


class _FreshLoader(importlib.machinery.SourceFileLoader):
    """Compiles from the source every time: a `.pyc` written in the same second as an
    edit of the same size would otherwise bring back the old code."""

    def __init__(self, package: _Package, fullname: str, path: str) -> None:
        super().__init__(fullname, path)
        self.package = package

    def get_code(self, fullname: str) -> types.CodeType:
        data = self.get_data(self.path)
        self.package.sources[Path(self.path)] = data
        return compile(data, self.path, "exec", dont_inherit=True)
