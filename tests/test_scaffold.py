"""`cantata new NAME`: a pipeline folder that validates and runs as written; the README's
pipeline example is that folder's files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cantata.config import DEFAULT_CONFIG
from cantata.errors import SpecError
from cantata.loader import load_pipeline
from cantata.runtime import Cantata
from cantata.scaffold import files, scaffold
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.helpers.readme import code_blocks
from tests.test_cli import cantata

MESSAGE = "I keep skipping my runs."


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_new_writes_a_pipeline_folder_that_validates_and_runs(tmp_path: Path, write: WriteFile) -> None:
    made = cantata("new", "habits", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    folder = tmp_path / "habits"
    assert _tree(folder) == files("habits")  # YAML, a prompt file, an output model, a function
    assert [p.name for p in tmp_path.iterdir()] == ["habits"]  # no draft left beside it
    assert "run it: cantata run habits/pipeline.yaml" in made.stdout

    valid = cantata("validate", "habits/pipeline.yaml", cwd=tmp_path)
    assert valid.returncode == 0, valid.stderr
    assert "ok: pipeline 'habits', 4 agents, order facts -> quick -> mood -> reply" in valid.stdout

    config = scripted_config(write, fake={"latency_s": 0})
    ran = cantata("run", "habits/pipeline.yaml", "-m", MESSAGE, "--config", str(config), "--json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    turn = json.loads(ran.stdout)
    agents = {a["name"]: a for a in turn["agents"]}
    assert turn["status"] == "ok" and all(a["status"] == "ok" for a in agents.values())
    assert agents["facts"]["output"] == {"words": 5, "asks": False}  # the function ran on the message
    assert set(agents["mood"]["output"]) == {"feeling", "about"}  # validated against models.Mood
    assert turn["early"]["agent"] == "quick" and turn["final"]["agent"] == "reply"


@pytest.mark.parametrize("name", ["1habits", "hab/its", "../habits", ".habits", "hab its", "h" * 65, ""])
def test_a_bad_name_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, name: str) -> None:
    done = cantata("new", name, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "is not a pipeline name for cantata new" in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == [] and not (tmp_path.parent / "habits").exists()


def test_an_existing_folder_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "habits").mkdir()
    (tmp_path / "habits" / "notes.txt").write_text("mine")
    done = cantata("new", "habits", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"error: {tmp_path / 'habits'} already exists: cantata new writes a new folder only\n"
    assert _tree(tmp_path) == {"habits/notes.txt": "mine"}


def test_a_scaffold_that_does_not_load_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = {
        **files("habits"),
        "pipeline.yaml": files("habits")["pipeline.yaml"].replace("reads: [", "reads: [ghost, "),
    }
    monkeypatch.setattr("cantata.scaffold.files", lambda name: broken)
    with pytest.raises(SpecError, match="reads 'ghost'"):
        scaffold("habits", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_the_readme_pipeline_example_is_what_new_writes() -> None:
    written = files("habits")
    assert code_blocks("### A pipeline", "yaml")[0] == written["pipeline.yaml"]
    assert code_blocks("### A pipeline", "python")[:2] == [written["functions.py"], written["models.py"]]


@pytest.mark.embedded
async def test_a_new_pipeline_runs_on_the_embedded_model(tmp_path: Path, home: Path) -> None:
    folder, _ = scaffold("habits", tmp_path)
    app = Cantata(DEFAULT_CONFIG, home=home)
    try:
        turn = await app.run_turn(load_pipeline(folder / "pipeline.yaml"), MESSAGE)
    finally:
        await app.close()
    agents = {a.name: a for a in turn.agents}
    assert turn.status == "ok" and all(a.status == "ok" for a in agents.values()), turn.as_json()
    assert turn.early is not None and turn.early.text and turn.final is not None and turn.final.text
    # No reply echoes the prompt's scaffolding: the section headers cantata/prompts.py writes.
    for reply in (turn.early.text, turn.final.text):
        assert "## " not in reply, reply
