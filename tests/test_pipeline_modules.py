"""A pipeline's own modules: private to their folder, and read again when they change."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cantata import SpecError, load_pipeline

PIPELINE = "name: p\nagents:\n  - name: rule\n    function: rules.decide\n    output: models.Verdict\n"
MODELS = "from pydantic import BaseModel\n\n\nclass Verdict(BaseModel):\n    said: str\n"


def folder(tmp_path: Path, name: str, says: str) -> Path:
    """A pipeline folder with rules.py (which imports its neighbour relatively) and models.py."""
    where = tmp_path / name
    where.mkdir()
    (where / "pipeline.yaml").write_text(PIPELINE, encoding="utf-8")
    (where / "models.py").write_text(MODELS, encoding="utf-8")
    write_rules(where, says)
    return where


def write_rules(where: Path, says: str) -> None:
    text = f"from .models import Verdict\n\n\ndef decide(ctx):\n    return Verdict(said={says!r})\n"
    (where / "rules.py").write_text(text, encoding="utf-8")


def said(where: Path) -> str:
    return load_pipeline(where / "pipeline.yaml").functions["rule"](None).said  # type: ignore[no-any-return]


def test_two_pipelines_with_a_module_of_the_same_name_do_not_collide(tmp_path: Path) -> None:
    path_before = list(sys.path)
    first, second = folder(tmp_path, "first", "one"), folder(tmp_path, "second", "two")
    assert said(first) == "one" and said(second) == "two"
    assert said(first) == "one"
    assert sys.path == path_before
    assert "rules" not in sys.modules and "models" not in sys.modules


def test_a_changed_module_is_loaded_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as by default: a .pyc is written
    where = folder(tmp_path, "p", "old")
    old = load_pipeline(where / "pipeline.yaml")
    write_rules(where, "new")  # same size, same second: a cached .pyc would not notice
    new = load_pipeline(where / "pipeline.yaml")
    assert new.functions["rule"](None).said == "new"
    assert old.functions["rule"](None).said == "old"  # what was loaded keeps its code
    # The output model is the one the new rules.py imports, so its outputs validate.
    assert isinstance(new.functions["rule"](None), new.contracts["rule"].model)  # type: ignore[union-attr,arg-type]


def test_an_unchanged_folder_reuses_its_modules(tmp_path: Path) -> None:
    where = folder(tmp_path, "p", "same")
    first = load_pipeline(where / "pipeline.yaml").functions["rule"]
    assert load_pipeline(where / "pipeline.yaml").functions["rule"] is first


def test_bundled_modules_import_the_ordinary_way() -> None:
    import cantata.pipelines.coaching.guard
    from cantata.bundled import bundled

    pipeline = load_pipeline(bundled()["coaching"])
    assert pipeline.functions["guard"] is cantata.pipelines.coaching.guard.guard


def test_an_absolute_import_of_a_neighbour_says_how_to_import_it(tmp_path: Path) -> None:
    where = folder(tmp_path, "p", "x")
    (where / "rules.py").write_text("from models import Verdict\n\ndef decide(ctx):\n    pass\n", encoding="utf-8")
    with pytest.raises(SpecError) as info:
        load_pipeline(where / "pipeline.yaml")
    assert "pipeline.yaml:4:" in str(info.value) and "from .models import" in str(info.value)


def test_a_module_in_a_subpackage_beside_the_yaml(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "checks.py").write_text("def f(ctx):\n    return 'from lib'\n", encoding="utf-8")
    (tmp_path / "p.yaml").write_text("name: p\nagents:\n  - name: a\n    function: lib.checks.f\n", encoding="utf-8")
    assert load_pipeline(tmp_path / "p.yaml").functions["a"](None) == "from lib"
