"""`cantata agents`: the agents the factory deployed, their versions, rollback and removal.

Exposed as the click group `agents`; cantata/cli.py registers it with cli.add_command(agents).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from cantata.config import cantata_home, database_url, load_config
from cantata.factory import registry
from cantata.store import AgentVersion, Store, open_store

T = TypeVar("T")


def with_store(action: Callable[[Store, Path], Awaitable[T]]) -> T:
    home = cantata_home()

    async def go() -> T:
        store = open_store(home, database_url(load_config()))
        try:
            return await action(store, home)
        finally:
            await store.close()

    return asyncio.run(go())


def version_json(version: AgentVersion, home: Path) -> dict[str, Any]:
    return {
        "name": version.name,
        "version": version.version,
        "active": version.active,
        "forced": version.forced,
        "sandboxed": version.sandboxed,
        "created_at": version.created_at,
        "task_turn": version.task_turn,
        "summary": version.summary,
        "path": str(registry.version_dir(home, version.name, version.version)),
    }


def describe(version: AgentVersion) -> str:
    flags = [flag for flag, on in (("active", version.active), ("forced", version.forced),
                                   ("not sandboxed", not version.sandboxed)) if on]  # fmt: skip
    tests = version.summary.get("tests", "")
    return f"{version.name}@{version.version}  {', '.join(flags) or '-'}  {tests}".rstrip()


@click.group("agents", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON list of every version.")
@click.pass_context
def agents(ctx: click.Context, as_json: bool) -> None:
    """The agents the factory deployed (active version first)."""
    if ctx.invoked_subcommand is not None:
        return
    versions = with_store(lambda store, home: store.agent_versions())
    home = cantata_home()
    if as_json:
        click.echo(json.dumps([version_json(v, home) for v in versions], indent=2))
        return
    if not versions:
        click.echo('no deployed agents yet: `cantata factory "an agent that ..."` makes one')
    for version in versions:
        if version.active:
            others = [v.version for v in versions if v.name == version.name and not v.active]
            click.echo(describe(version) + (f"  (also: {', '.join(map(str, others))})" if others else ""))


@agents.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True)
def show(name: str, as_json: bool) -> None:
    """Every version of NAME, and the active one's card."""

    async def read(store: Store, home: Path) -> list[AgentVersion]:
        await registry.active_version(store, name)  # an unknown name is an error
        return await store.agent_versions(name)

    versions = with_store(read)
    home = cantata_home()
    if as_json:
        click.echo(json.dumps([version_json(v, home) for v in versions], indent=2))
        return
    for version in versions:
        click.echo(describe(version))
    active = next(v for v in versions if v.active)
    card = registry.version_dir(home, name, active.version) / "card.md"
    if card.exists():
        click.echo("\n" + card.read_text(encoding="utf-8").strip())


@agents.command("rollback")
@click.argument("name")
@click.argument("version", type=int)
def rollback(name: str, version: int) -> None:
    """Make VERSION of NAME the active one again."""
    active = with_store(lambda store, home: registry.rollback(store, name, version))
    click.echo(f"{name}: version {active.version} is active")


@agents.command("remove")
@click.argument("name")
def remove(name: str) -> None:
    """Remove NAME, every version and its files."""
    removed = with_store(lambda store, home: registry.remove(store, home, name))
    click.echo(f"removed {name} ({removed} version{'s' if removed != 1 else ''})")
