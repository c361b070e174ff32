"""Deployed agents: versions in the store and on disk, run by name, rolled back, removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from cantata.config import InstanceConfig, InstancesConfig
from cantata.errors import UserError
from cantata.factory import registry
from cantata.loader import load_pipeline
from cantata.runtime import Cantata


def artefact(tmp_path: Path, reply: str) -> Path:
    folder = tmp_path / f"artefact-{reply}"
    (folder / "prompts").mkdir(parents=True)
    (folder / "prompts" / "answer.md").write_text(f"Say {reply}.")
    (folder / "pipeline.yaml").write_text(
        "name: greeter\nagents:\n  - name: answer\n    prompt: prompts/answer.md\n    deliver: final\n"
    )
    return folder


async def test_versions_are_kept_run_by_name_and_rolled_back(tmp_path: Path, home: Path) -> None:
    app = Cantata(InstancesConfig(instances=[InstanceConfig(name="s", backend="scripted")]), home=home)
    store = app.store
    try:
        first = await registry.deploy(
            store,
            home,
            "greeter",
            artefact(tmp_path, "hello"),
            forced=False,
            sandboxed=True,
            task_turn=None,
            summary={"dev": "3/3"},
        )
        second = await registry.deploy(
            store,
            home,
            "greeter",
            artefact(tmp_path, "bonjour"),
            forced=True,
            sandboxed=True,
            task_turn=None,
            summary={"dev": "1/3"},
        )
        assert (first.version, second.version) == (1, 2) and second.active and second.forced
        active = await registry.pipeline_path(store, home, "agent:greeter")
        assert "bonjour" in (active.parent / "prompts" / "answer.md").read_text()
        pinned = await registry.pipeline_path(store, home, "agent:greeter@1")
        assert "hello" in (pinned.parent / "prompts" / "answer.md").read_text()
        result = await app.run_turn(load_pipeline(active), "hi")
        assert result.status == "ok"
        back = await registry.rollback(store, "greeter", 1)
        assert back.version == 1 and back.active
        assert await registry.pipeline_path(store, home, "agent:greeter") == pinned
        assert [v.active for v in await store.agent_versions("greeter")] == [True, False]
        with pytest.raises(UserError, match="no version 7 \\(versions: 1, 2\\)"):
            await registry.rollback(store, "greeter", 7)
        assert await registry.remove(store, home, "greeter") == 2
        assert not (home / "agents" / "greeter").exists()
        with pytest.raises(UserError, match="no deployed agent 'greeter'"):
            await registry.pipeline_path(store, home, "agent:greeter")
    finally:
        await app.close()


@pytest.mark.parametrize("name", ["Greeter", "../etc", "a b", "", "x" * 60])
async def test_bad_agent_names_are_refused(tmp_path: Path, home: Path, name: str) -> None:
    app = Cantata(InstancesConfig(instances=[InstanceConfig(name="s", backend="scripted")]), home=home)
    try:
        with pytest.raises(UserError, match="not a valid agent name"):
            await registry.deploy(
                app.store, home, name, artefact(tmp_path, "x"), forced=False, sandboxed=True, task_turn=None, summary={}
            )
    finally:
        await app.close()
    assert not (home / "agents").exists() or not any((home / "agents").iterdir())


async def test_the_cli_runs_lists_and_rolls_back_deployed_agents(tmp_path: Path, home: Path) -> None:
    import json
    import subprocess
    import sys

    config = tmp_path / "instances.yaml"
    config.write_text("instances:\n  - name: s\n    backend: scripted\n")
    app = Cantata(InstancesConfig(instances=[InstanceConfig(name="s", backend="scripted")]), home=home)
    for reply in ("hello", "bonjour"):
        await registry.deploy(
            app.store,
            home,
            "greeter",
            artefact(tmp_path, reply),
            forced=False,
            sandboxed=True,
            task_turn=None,
            summary={"tests": "3/3"},
        )
    await app.close()

    def cantata(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cantata", *args], capture_output=True, text=True)

    ran = cantata("run", "agent:greeter", "-m", "hi", "--json", "--config", str(config))
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["pipeline"] == "greeter"
    assert cantata("run", "agent:greeter@1", "-m", "hi", "--config", str(config)).returncode == 0
    listed = json.loads(cantata("pipelines", "--json").stdout)
    assert "agent:greeter" in [row["name"] for row in listed]
    assert "greeter@2  active" in cantata("agents").stdout
    assert cantata("agents", "rollback", "greeter", "1").stdout.strip() == "greeter: version 1 is active"
    shown = json.loads(cantata("agents", "show", "greeter", "--json").stdout)
    assert [(v["version"], v["active"]) for v in shown] == [(1, True), (2, False)]
    missing = cantata("run", "agent:nobody", "-m", "hi", "--config", str(config))
    assert (
        missing.returncode == 2 and missing.stderr.strip() == "error: no deployed agent 'nobody'; see `cantata agents`"
    )
    bad = cantata("agents", "rollback", "greeter", "9")
    assert bad.returncode == 2 and "no version 9" in bad.stderr and "Traceback" not in bad.stderr
