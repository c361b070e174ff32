"""Where a deployed agent's files are: CANTATA_HOME/agents/NAME/VERSION/, the active version
recorded in the store. Read by whatever runs a deployed agent: `cantata run agent:NAME`, an
agent's `agent:` tool, `/mcp`. Deploying, rolling back and removing are the factory's
(cantata/factory/registry.py)."""

from __future__ import annotations

from pathlib import Path

from cantata.errors import UserError
from cantata.store import AgentVersion, Store

AGENT_PREFIX = "agent:"


def agents_dir(home: Path) -> Path:
    return home / "agents"


def version_dir(home: Path, name: str, version: int) -> Path:
    return agents_dir(home) / name / str(version)


async def active_version(store: Store, name: str) -> AgentVersion:
    versions = await store.agent_versions(name)
    if not versions:
        raise UserError(f"no deployed agent '{name}'; see `cantata agents`")
    return next((v for v in versions if v.active), versions[-1])


async def pipeline_path(store: Store, home: Path, reference: str) -> Path:
    """The pipeline file of `agent:NAME` (its active version) or `agent:NAME@VERSION`."""
    name, _, wanted = reference.removeprefix(AGENT_PREFIX).partition("@")
    if wanted:
        if not wanted.isdigit():
            raise UserError(f"'{reference}': a version is a number, as in agent:{name}@2")
        versions = {v.version for v in await store.agent_versions(name)}
        if int(wanted) not in versions:
            known = ", ".join(str(v) for v in sorted(versions)) or "none"
            raise UserError(f"agent '{name}' has no version {wanted} (versions: {known})")
        version = int(wanted)
    else:
        version = (await active_version(store, name)).version
    path = version_dir(home, name, version) / "pipeline.yaml"
    if not path.exists():
        raise UserError(f"the files of agent '{name}' version {version} are missing: {path.parent}")
    return path
