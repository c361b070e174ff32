"""Deployed agents: versions in the store, files under CANTATA_HOME/agents/NAME/VERSION/.

A version's folder holds everything that made it and everything needed to run it: the
pipeline YAML, its prompts, the output schema, the tool code, the tests, the card and
the task that produced it. Folders are written before the version is recorded, and a
version is never changed once written; rollback only moves which version is active.
The factory's turns work in CANTATA_HOME/factory/turn-N/ (each iteration's artefact, the
draft not deployed). Forgetting a user removes the folders of their turns and of the
versions built from them (`forget_files`), after the store deleted the rows.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from cantata.deployed import AGENT_PREFIX, active_version, agents_dir, pipeline_path, version_dir
from cantata.errors import UserError
from cantata.store import AgentVersion, Forgotten, Store

# Where a deployed version is found lives in the running layer (cantata/deployed.py), where an
# agent's `agent:` tools find it too; it is this module's API as well.
__all__ = [
    "AGENT_PREFIX",
    "active_version",
    "agents_dir",
    "check_name",
    "deploy",
    "forget_files",
    "pipeline_path",
    "remove",
    "rollback",
    "turn_dir",
    "version_dir",
]

NAME = re.compile(r"^[a-z][a-z0-9_-]{0,47}$")


def turn_dir(home: Path, turn_id: int) -> Path:
    """Where a factory turn keeps its working files."""
    return home / "factory" / f"turn-{turn_id}"


def check_name(name: str) -> str:
    if not NAME.match(name):
        raise UserError(
            f"'{name}' is not a valid agent name: lower-case letters, digits, '-' and '_', starting with a letter"
        )
    return name


async def deploy(
    store: Store,
    home: Path,
    name: str,
    artefact: Path,
    *,
    forced: bool,
    sandboxed: bool,
    task_turn: int | None,
    summary: dict[str, object],
) -> AgentVersion:
    """Copy the artefact into the next version's folder, record it, make it active."""
    check_name(name)
    if not (artefact / "pipeline.yaml").exists():
        raise UserError(f"{artefact} has no pipeline.yaml: nothing to deploy")
    # Copied to a staging folder first, so that a failed copy leaves no half version.
    root = agents_dir(home) / name
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
    try:
        shutil.copytree(artefact, staging / "files", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        version = await store.add_agent_version(
            name, forced=forced, sandboxed=sandboxed, task_turn=task_turn, summary=dict(summary)
        )
        (staging / "files").rename(version_dir(home, name, version))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return next(v for v in await store.agent_versions(name) if v.version == version)


async def rollback(store: Store, name: str, version: int) -> AgentVersion:
    if not await store.activate_agent(name, version):
        known = ", ".join(str(v.version) for v in await store.agent_versions(name)) or "none"
        raise UserError(f"agent '{name}' has no version {version} (versions: {known})")
    return await active_version(store, name)


async def remove(store: Store, home: Path, name: str) -> int:
    removed = await store.remove_agent(name)
    if not removed:
        raise UserError(f"no deployed agent '{name}'")
    shutil.rmtree(agents_dir(home) / name, ignore_errors=True)
    return removed


def forget_files(home: Path, forgotten: Forgotten) -> list[str]:
    """Remove the folders of a forgotten user's turns and of the versions built from them
    (a `Forgetter`); return those that could not go, each with why."""
    folders = [turn_dir(home, turn) for turn in forgotten.turns]
    folders += [version_dir(home, name, version) for name, version in forgotten.agent_versions]
    folders += [agents_dir(home) / name for name in forgotten.agents]
    left: list[str] = []
    for folder in folders:
        try:
            shutil.rmtree(folder)
        except FileNotFoundError:
            pass  # that turn wrote nothing here (not a factory turn), or it went already
        except OSError as exc:
            left.append(f"{folder.relative_to(home)} ({exc.strerror or exc})")
    return left
