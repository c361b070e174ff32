"""`cantata mcp`: every pipeline and deployed agent as an MCP tool on stdin/stdout, for an
MCP client that starts Cantata itself (Claude Code, an IDE): `{"command": "cantata", "args":
["mcp"]}`. A thin command: the tools are mcp_server.py's, over the server's Service, as
one user (`--user`); Cantata's log goes to stderr, which such clients keep apart.

The SDK is imported when the command runs, so that Cantata without the `mcp` extra still
starts and says what to install."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Iterable
from pathlib import Path

import click

from cantata.cli import CONFIG_OPTION, pipeline_files_option
from cantata.config import DEFAULT_USER, InstancesConfig, load_config
from cantata.errors import UserError


@click.command("mcp")
@click.option("--user", default=DEFAULT_USER, show_default=True, help="Whose turns the calls run, and whose sessions.")
@CONFIG_OPTION
@pipeline_files_option(
    "Also offer this pipeline file as a tool (repeatable); bundled ones and deployed agents always are."
)
def mcp(user: str, config_path: Path | None, pipelines: tuple[Path, ...]) -> None:
    """Serve every pipeline and deployed agent as an MCP tool over stdio."""
    if importlib.util.find_spec("mcp") is None:
        raise UserError("`cantata mcp` needs the MCP SDK: pip install 'cantata[mcp]'")
    from cantata.server.logs import configure_logging

    configure_logging("text")
    asyncio.run(serve_stdio(load_config(config_path), user=user, pipelines=pipelines))


async def serve_stdio(config: InstancesConfig, *, user: str, pipelines: Iterable[Path] = ()) -> None:
    """Answer MCP on stdin/stdout until the client closes stdin."""
    from mcp.server.stdio import stdio_server

    from cantata.mcp_server import mcp_server
    from cantata.runtime import Cantata
    from cantata.server.keys import Principal
    from cantata.server.service import Service

    runtime = Cantata(config)
    try:
        service = Service(runtime, extra_pipelines=pipelines, announce=lambda line: click.echo(line, err=True))
        caller = Principal(user=user, admin=False)
        server = mcp_server(service, principal_of=lambda ctx: caller)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        await service.drain()
    finally:
        await runtime.close()
