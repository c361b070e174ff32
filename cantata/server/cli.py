"""`cantata serve` and `cantata keys`: thin commands; cantata/cli.py registers them.
FastAPI and uvicorn are imported only when serving, so other commands start fast."""

from __future__ import annotations

import asyncio
import datetime
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import click

from cantata.cli import CONFIG_OPTION, grace_option, pipeline_files_option
from cantata.config import WORKERS, Workers, cantata_home, database_url, load_config
from cantata.server.keys import KeyRing
from cantata.server.logs import LOG_FORMATS, LogFormat
from cantata.store import open_store

T = TypeVar("T")


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind; non-loopback needs API keys.")
@click.option("--port", default=8000, show_default=True, type=int)
@CONFIG_OPTION
@pipeline_files_option("Also serve this pipeline file as a model (repeatable); bundled ones always are.")
@grace_option("At SIGTERM, seconds running turns may take to finish; the rest are resumed at the next start.")
@click.option(
    "--log-format",
    type=click.Choice(LOG_FORMATS),
    default="text",
    show_default=True,
    envvar="CANTATA_LOG_FORMAT",
    help="The log on stderr (a line per request and per failed agent): text, or JSON lines.",
)
@click.option(
    "--workers",
    type=click.Choice(WORKERS),
    default="local",
    show_default=True,
    envvar="CANTATA_WORKERS",
    help="Where turns run: in this process, or queued for `cantata worker` processes (the state on PostgreSQL).",
)
def serve(
    host: str,
    port: int,
    config_path: Path | None,
    pipelines: tuple[Path, ...],
    grace_s: float,
    log_format: LogFormat,
    workers: Workers,
) -> None:
    """Serve every pipeline as an OpenAI-compatible model, the API and the dashboard.

    Turns a crash left unfinished are resumed at start (one line says so)."""
    from cantata.applications import forgetters, routers
    from cantata.server.app import run_server

    run_server(
        host=host,
        port=port,
        config_path=config_path,
        pipelines=pipelines,
        routers=routers(),
        forgetters=forgetters(),
        grace_s=grace_s,
        log_format=log_format,
        workers=workers,
    )


@click.group("keys")
def keys() -> None:
    """API keys for `cantata serve` (stored hashed, in the state's database: every server on it shares them)."""


def _on_keys(config_path: Path | None, use: Callable[[KeyRing], Awaitable[T]]) -> T:
    """`use` on the keys of the configured store ($CANTATA_DB or the config's `database`, else
    SQLite under CANTATA_HOME), closed after."""

    async def run() -> T:
        store = open_store(cantata_home(), database_url(load_config(config_path)))
        try:
            return await use(KeyRing(store))
        finally:
            await store.close()

    return asyncio.run(run())


@keys.command("create")
@click.option("--user", required=True, help="Whose data the key reads and writes.")
@click.option("--admin", is_flag=True, help="May see every user's data and the operator views.")
@CONFIG_OPTION
def create(user: str, admin: bool, config_path: Path | None) -> None:
    """Create a key; it is printed once and cannot be shown again."""
    info, token = _on_keys(config_path, lambda ring: ring.create(user, admin=admin))
    click.echo(token)
    click.echo(f"key {info.id} for user {info.user}{' (admin)' if admin else ''}; keep it: it is not stored", err=True)


@keys.command("list")
@click.option("--json", "as_json", is_flag=True)
@CONFIG_OPTION
def list_keys(as_json: bool, config_path: Path | None) -> None:
    """The keys (ids, users, roles; never the keys themselves)."""
    rows = _on_keys(config_path, KeyRing.list)
    if as_json:
        click.echo(json.dumps([r.__dict__ for r in rows], indent=2))
        return
    for r in rows:
        when = datetime.datetime.fromtimestamp(r.created_at, datetime.UTC).strftime("%Y-%m-%d %H:%M")
        state = "revoked" if r.revoked else "active"
        click.echo(f"{r.id}  {r.user:<16} {'admin' if r.admin else 'user ':<6} {state:<8} created {when} UTC")


@keys.command("revoke")
@click.argument("key_id")
@CONFIG_OPTION
def revoke(key_id: str, config_path: Path | None) -> None:
    """Revoke a key by its id (or the key itself)."""
    info = _on_keys(config_path, lambda ring: ring.revoke(key_id))
    click.echo(f"revoked key {info.id} of user {info.user}")
