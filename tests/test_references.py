"""What a pipeline may name by dotted path, and `cantata validate` running none of its code."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import yaml

from cantata import SpecError, load_pipeline
from cantata.bundled import bundled
from cantata.loader import validate_pipeline
from cantata.references import ALLOWED_ENV, refusal, refusal_of_object
from tests.helpers.pipelines import WriteFile
from tests.test_cli import cantata

# A module that leaves a mark when it is imported (its path is where the test looks).
MARKING = "from pathlib import Path\n\nPath({mark!r}).write_text('imported')\n\n\ndef f(ctx):\n    return 'ran'\n"


def one_function(write: WriteFile, dotted: str, *, key: str = "function") -> Path:
    if key == "function":
        return write("p.yaml", f"name: p\nagents:\n  - name: a\n    function: {dotted}\n")
    return write("p.yaml", f"name: p\nagents:\n  - name: a\n    prompt: hi\n    {key}: {dotted}\n")


def test_validate_imports_nothing_and_running_does(write: WriteFile, tmp_path: Path) -> None:
    mark = tmp_path / "mark.txt"
    write("marking.py", MARKING.format(mark=str(mark)))
    path = one_function(write, "marking.f")
    done = cantata("validate", str(path))
    assert done.returncode == 0, done.stderr
    assert "ok: pipeline 'p', 1 agents" in done.stdout
    assert not mark.exists()
    assert load_pipeline(path).functions["a"](None) == "ran"
    assert mark.read_text() == "imported"


@pytest.mark.parametrize("dotted", ["os.system", "subprocess.run", "builtins.eval", "shutil.rmtree"])
def test_a_callable_outside_the_pipeline_is_refused_in_one_line(write: WriteFile, dotted: str) -> None:
    path = one_function(write, dotted)
    done = cantata("validate", str(path))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
    assert f"p.yaml:4: '{dotted}' is outside the pipeline's own modules" in done.stderr
    assert ALLOWED_ENV in done.stderr
    with pytest.raises(SpecError, match="outside the pipeline's own modules"):
        load_pipeline(path)


@pytest.mark.parametrize("key", ["shortcut", "check", "output"])
def test_every_dotted_key_is_held_to_the_same_rule(write: WriteFile, key: str) -> None:
    path = one_function(write, "subprocess.run", key=key)
    with pytest.raises(SpecError, match=r"p\.yaml:5: 'subprocess\.run' is outside"):
        validate_pipeline(path)


@pytest.mark.parametrize(
    ("rules", "refused"),
    [
        ("from os import system as f\n", "'os.system' is outside"),
        ("import os\n\nf = os.system\n", "'os.system' is outside"),
        ("import os.path\n\nf = os.path.join\n", "'os.path.join' is outside"),
        ("from .inner import f\n", "'os.system' is outside"),
        ("from os import *\n", "may come from 'from os import *'"),
        ("import os\n", "module 'rules' has no 'f'"),
        ("import os as f\n", "is the module 'os'"),
    ],
)
def test_a_re_export_is_followed_to_its_source(write: WriteFile, rules: str, refused: str) -> None:
    write("rules.py", rules)
    write("inner.py", "from os import system as f\n")
    with pytest.raises(SpecError) as info:
        validate_pipeline(one_function(write, "rules.f"))
    assert refused in str(info.value)


def test_a_name_bound_when_the_module_runs_is_checked_when_loaded_to_run(write: WriteFile) -> None:
    # Nothing in the source says what f is: validate cannot tell, loading to run can.
    write("rules.py", "import os\n\nf = getattr(os, 'sys' + 'tem')\n")
    path = one_function(write, "rules.f")
    validate_pipeline(path)
    with pytest.raises(SpecError, match=r"p\.yaml:4: 'rules\.f' is posix\.system, and 'posix\.system' is outside"):
        load_pipeline(path)


def test_own_modules_pass_however_they_define_the_name(write: WriteFile) -> None:
    write("lib/__init__.py", "")
    write("lib/impl.py", "def g(ctx):\n    return 'g'\n")
    write(
        "rules.py",
        "from .lib.impl import g as f\n\nh = f\n\ntry:\n    def k(ctx):\n        return 'k'\nexcept Exception:\n    pass\n",
    )
    for name in ("f", "h", "k"):
        validate_pipeline(one_function(write, f"rules.{name}"))
    assert load_pipeline(one_function(write, "rules.h")).functions["a"](None) == "g"


def test_the_allowed_list_admits_what_the_operator_names(write: WriteFile, monkeypatch: pytest.MonkeyPatch) -> None:
    path = one_function(write, "json.dumps")
    with pytest.raises(SpecError, match="'json.dumps' is outside"):
        validate_pipeline(path)
    monkeypatch.setenv(ALLOWED_ENV, "textwrap, json")
    validate_pipeline(path)
    assert load_pipeline(path).functions["a"]({"x": 1}) == '{"x": 1}'
    monkeypatch.setenv(ALLOWED_ENV, "json.loads")  # a full path allows that one only
    with pytest.raises(SpecError, match="'json.dumps' is outside"):
        validate_pipeline(path)


def test_a_missing_module_or_name_says_so(write: WriteFile) -> None:
    with pytest.raises(SpecError, match="cannot import 'nowhere_at_all': no such module"):
        validate_pipeline(one_function(write, "nowhere_at_all.f"))
    write("rules.py", "def g(ctx):\n    pass\n")
    with pytest.raises(SpecError, match="module 'rules' has no 'f'"):
        validate_pipeline(one_function(write, "rules.f"))


@pytest.mark.parametrize("name", sorted(bundled()))
def test_the_bundled_pipelines_validate_without_importing_and_load(name: str) -> None:
    spec = validate_pipeline(bundled()[name])
    assert load_pipeline(bundled()[name]).spec == spec


def test_a_bundled_pipeline_is_checked_in_its_folder(tmp_path: Path) -> None:
    # Its own folder: the names are looked up; written out elsewhere, its code is allowed.
    text = bundled()["example"].read_text(encoding="utf-8").replace("functions.screen", "functions.nothing")
    beside = bundled()["example"].with_name("broken.yaml")
    beside.write_text(text, encoding="utf-8")
    try:
        with pytest.raises(SpecError, match="module 'cantata.pipelines.example.functions' has no 'nothing'"):
            validate_pipeline(beside)
    finally:
        beside.unlink()


def test_a_python_install_or_a_venv_kept_under_the_pipelines_folder_is_not_its_own_code() -> None:
    """Its files sit under the folder, but not as the folder's modules: `os` is the stdlib's."""
    stdlib_under = Path(os.__file__).resolve().parents[1]  # e.g. /usr/lib holding python3.11/os.py
    installed_under = Path(yaml.__file__).resolve().parents[3]  # holds .../site-packages/yaml
    venv_under = Path(sys.prefix).parent  # the folder holding the venv (pyvenv.cfg)
    for base in (stdlib_under, installed_under, venv_under):
        assert "is outside the pipeline's own modules" in (refusal("os.system", base) or "")
        assert "is outside the pipeline's own modules" in (refusal("yaml.safe_load", base) or "")
        assert "is outside the pipeline's own modules" in (refusal_of_object(os.system, "os.system", base) or "")


def test_a_re_export_in_allowed_code_is_judged_by_what_it_really_is(write: WriteFile) -> None:
    path = one_function(write, "cantata.pipelines.coaching.learned.Path")
    validate_pipeline(path)  # allowed code is trusted to the source: what it binds shows when loaded
    with pytest.raises(SpecError, match=r"'cantata\.pipelines\.coaching\.learned\.Path' is pathlib\.Path, and"):
        load_pipeline(path)
