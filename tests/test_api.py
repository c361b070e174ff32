"""The public API: what `cantata` exports is there, and importing it stays cheap."""

from __future__ import annotations

import subprocess
import sys

import cantata


def test_every_exported_name_resolves() -> None:
    for name in cantata.__all__:
        assert getattr(cantata, name) is not None, name
    assert len(set(cantata.__all__)) == len(cantata.__all__)


def test_star_import_gives_the_exported_names() -> None:
    namespace: dict[str, object] = {}
    exec("from cantata import *", namespace)
    assert set(cantata.__all__) <= set(namespace)


def test_exports_are_the_library_objects() -> None:
    from cantata.context import FunctionContext
    from cantata.loader import load_pipeline
    from cantata.runtime import Cantata

    assert cantata.Cantata is Cantata
    assert cantata.FunctionContext is FunctionContext
    assert cantata.load_pipeline is load_pipeline


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        cantata.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_import_is_cheap_and_never_loads_llama_cpp() -> None:
    code = (
        "import sys, cantata\n"
        "cheap = not any(m in sys.modules for m in ('cantata.runtime', 'pydantic', 'llama_cpp'))\n"
        "from cantata import *\n"
        "print(cheap, 'llama_cpp' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "False"]
