"""The `cantata` command: thin commands over the library.

Expected errors (CantataError) print one line on stderr and exit with their exit code
(2 for bad input); nothing else is caught, so a bug still shows its traceback.

The runtime, the server, the planner and the factory are imported by the commands that
use them, not here: `cantata validate` checks a file without loading FastAPI or a model
backend, and starts in a fraction of the time.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.decorators import FC

from cantata import bundled as bundled_pipelines
from cantata import telemetry
from cantata.config import DEFAULT_USER, InstancesConfig, cantata_home, database_url, load_config
from cantata.errors import BackendUnavailable, CantataError
from cantata.loader import Pipeline, load_pipeline, validate_pipeline
from cantata.spec import pipeline_json_schema
from cantata.turn import TurnResult

if TYPE_CHECKING:
    from cantata.runtime import Resumed
    from cantata.store import SessionRow

# Commands other modules define, as "module:attribute", imported when named (or listed by --help).
LAZY_COMMANDS = {
    "plan": "cantata.planner.cli:plan",
    "agents": "cantata.factory.cli:agents",
    "factory": "cantata.factory.run:factory",
    "serve": "cantata.server.cli:serve",
    "keys": "cantata.server.cli:keys",
    "mcp": "cantata.mcp_cli:mcp",
}


# Options that commands defined elsewhere share with these.
CONFIG_OPTION = click.option(
    "--config", "config_path", type=click.Path(path_type=Path), default=None, help="Instances config."
)


def pipeline_files_option(help: str) -> Callable[[FC], FC]:
    """`--pipeline FILE`, repeatable, into `pipelines`: pipeline files besides the bundled ones."""
    return click.option("--pipeline", "pipelines", multiple=True, type=click.Path(path_type=Path), help=help)


def grace_option(help: str) -> Callable[[FC], FC]:
    """`--grace SECONDS` into `grace_s`: how long running turns may take to finish at SIGTERM."""
    return click.option("--grace", "grace_s", default=30.0, show_default=True, type=click.FloatRange(0), help=help)


class LazyGroup(click.Group):
    """A group whose LAZY_COMMANDS are imported only when a command line names them."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = LAZY_COMMANDS.get(cmd_name)
        if where is None:
            return super().get_command(ctx, cmd_name)
        module, attribute = where.split(":")
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cantata")
def cli() -> None:
    """Cantata: teams of role-specialised LLM agents on models you host yourself."""


@cli.command()
@click.argument("pipeline")
@click.option("--message", "-m", required=True, help="The user's message; '-' reads it from stdin.")
@click.option("--user", default=DEFAULT_USER, show_default=True, help="Whose turn this is.")
@click.option("--session", default=None, help="Continue this session (default: a new one).")
@click.option("--config", "config_path", type=click.Path(path_type=Path), default=None, help="Instances config.")
@click.option("--json", "as_json", is_flag=True, help="Print the turn as one JSON object.")
def run(pipeline: str, message: str, user: str, session: str | None, config_path: Path | None, as_json: bool) -> None:
    """Run one turn of PIPELINE (a bundled name, a YAML file, or agent:NAME[@VERSION]) on MESSAGE."""
    from cantata.events import Event
    from cantata.factory import registry
    from cantata.runtime import Cantata

    spec = None if pipeline.startswith(registry.AGENT_PREFIX) else bundled_pipelines.load(pipeline)
    config = load_config(config_path)
    if message == "-":
        # Invalid UTF-8 is replaced, not fatal: a user's bytes should never crash a turn.
        message = sys.stdin.buffer.read().decode("utf-8", errors="replace")

    def show_early(event: Event) -> None:
        if event.type == "early_delivered" and not as_json:
            click.echo(f"{event.agent} ({event.at_s:.1f} s): {event.data['text']}\n")

    async def go() -> tuple[TurnResult, Pipeline]:
        app = Cantata(config)
        try:
            loaded = spec or load_pipeline(await registry.pipeline_path(app.store, app.home, pipeline))
            _say_if_smoke_test_model(config, loaded)
            if session is not None:  # a turn of it cut by a crash finishes first, and is in this one's context
                await app.check(loaded)
                _say_resumed(await app.resume_unfinished(_only(loaded, user), session_id=session), err=True)
            return await app.run_turn(loaded, message, user=user, session_id=session, on_event=show_early), loaded
        finally:
            await app.close()

    result, ran = asyncio.run(go())
    if as_json:
        click.echo(json.dumps(result.as_json(), ensure_ascii=False, indent=2))
    else:
        _print_turn(result, ran)
    if result.status == "failed":
        sys.exit(1)


@cli.command()
@click.argument("pipeline", required=False)
@click.option("--user", default=DEFAULT_USER, show_default=True, help="Who is chatting.")
@click.option("--session", default=None, help="Continue this session (default: a new one).")
@click.option("--config", "config_path", type=click.Path(path_type=Path), default=None, help="Instances config.")
def chat(pipeline: str | None, user: str, session: str | None, config_path: Path | None) -> None:
    """Chat in the terminal (default pipeline: coaching)."""
    from cantata.chat import run_chat
    from cantata.runtime import Cantata

    name = pipeline or ("coaching" if "coaching" in bundled_pipelines.bundled() else "example")
    spec = bundled_pipelines.load(name)
    config = load_config(config_path)
    _say_if_smoke_test_model(config, spec)
    app = Cantata(config)

    async def go() -> None:
        await app.check(spec)
        if session is not None:
            await app.session_for(spec, user=user, session_id=session)  # an unknown session is an error now
        _say_resumed(await app.resume_unfinished(_only(spec, user), session_id=session))
        await run_chat(app, spec, user=user, session=session)

    asyncio.run(go())


@cli.command()
@click.argument("turn", type=click.IntRange(1, 2**63 - 1), required=False)
@pipeline_files_option("A pipeline file whose sessions' turns may be resumed (repeatable); bundled ones always may.")
@CONFIG_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the resumed turns as a JSON list.")
def resume(turn: int | None, pipelines: tuple[Path, ...], config_path: Path | None, as_json: bool) -> None:
    """Finish TURN, cut by a crash, or every unfinished turn no live process is running.

    `serve`, `chat` and `run --session` do this at start; agents that had written are not run again."""
    from cantata.errors import UserError
    from cantata.runtime import Cantata, Resumed

    known = {p.name: p for p in map(load_pipeline, pipelines)}

    def pipeline_of(session: SessionRow) -> Pipeline | None:
        if session.pipeline not in known and session.pipeline in bundled_pipelines.bundled():
            known[session.pipeline] = bundled_pipelines.load(session.pipeline)
        return known.get(session.pipeline)

    async def go() -> Resumed:
        app = Cantata(load_config(config_path))
        try:
            if turn is None:
                return await app.resume_unfinished(pipeline_of)
            found = await app.store.unfinished_turn(turn)
            if found is None:
                raise UserError(f"turn {turn} is not an unfinished turn")
            pipeline = pipeline_of(found.session)
            if pipeline is None:
                raise UserError(f"turn {turn} is of pipeline '{found.session.pipeline}': name its file with --pipeline")
            return Resumed(results=[await app.resume(pipeline, turn)])
        finally:
            await app.close()

    resumed = asyncio.run(go())
    if as_json:
        click.echo(json.dumps([r.as_json() | {"turn_id": r.turn_id} for r in resumed.results], indent=2))
    else:
        click.echo(resumed.summary() or "no unfinished turn to resume")
    if any(r.status == "failed" for r in resumed.results):
        sys.exit(1)


@cli.command()
@CONFIG_OPTION
@pipeline_files_option("Also run turns of this pipeline file (repeatable); bundled ones always.")
@click.option("--concurrency", default=16, show_default=True, type=click.IntRange(1), help="Turns run at once.")
@grace_option("At SIGTERM, seconds running turns may take to finish; the rest go on in another worker.")
def worker(config_path: Path | None, pipelines: tuple[Path, ...], concurrency: int, grace_s: float) -> None:
    """Run the turns `cantata serve --workers queue` queues (the state on PostgreSQL)."""
    from cantata.turn_queue import queue_url
    from cantata.worker import run_worker

    config = load_config(config_path)
    queue_url(config)  # SQLite: one line and exit 2, before anything starts
    asyncio.run(run_worker(config, pipelines=pipelines, concurrency=concurrency, grace_s=grace_s))


def _only(pipeline: Pipeline, user: str) -> Callable[[SessionRow], Pipeline | None]:
    """What a command resumes at start: the turns of its own pipeline and user."""
    return lambda session: pipeline if session.pipeline == pipeline.name and session.user_id == user else None


def _say_resumed(resumed: Resumed, *, err: bool = False) -> None:
    line = resumed.summary()
    if line is not None:
        click.echo(line, err=err)


SMOKE_TEST_NOTE = (
    "note: the embedded model (SmolLM2-135M) is a smoke-test model: it shows that a pipeline runs, "
    "not what a real model replies (it often repeats itself). To connect a real one, see the README's "
    'section "From the embedded model to vLLM".'
)


def _say_if_smoke_test_model(config: InstancesConfig, pipeline: Pipeline) -> None:
    """On stderr (stdout may be JSON): whether a model agent of `pipeline` runs on the bundled model."""
    aliases = {agent.model for agent in pipeline.spec.agents if not agent.is_function}
    instances = [config.instance_for(alias) for alias in aliases]
    if any(i is not None and i.backend == "embedded" and i.model is None for i in instances):
        click.echo(SMOKE_TEST_NOTE, err=True)


def _print_turn(result: TurnResult, pipeline: Pipeline) -> None:
    if result.final:
        click.echo(f"{result.final.agent} ({result.final.at_s:.1f} s): {result.final.text}\n")
    click.echo(f"turn {result.turn} of session {result.session} (user {result.user}): {result.status}")
    if result.approvals:
        click.echo(
            f"waits for a person to approve or deny a tool call (approval {', '.join(map(str, result.approvals))}):"
            f" `cantata chat --session {result.session}`, or POST /api/approvals/ID on `cantata serve`"
        )
    if result.quality.note:
        click.echo(f"quality: {result.quality.note}")
    for agent in result.agents:
        timing = f"{agent.finished_s:.2f} s" if agent.finished_s is not None else "-"
        where = f" on {agent.instance}" if agent.instance else ""
        tokens = (
            f", {agent.prompt_tokens} prompt ({agent.cached_tokens} cached) + {agent.completion_tokens} tokens"
            if agent.instance
            else ""
        )
        error = f": {agent.error}" if agent.error else ""
        if agent.status == "ok" and agent.finish_reason == "length":
            error = f": the reply was cut at max_tokens={pipeline.agents[agent.name].max_tokens}"
        repaired = f"; repaired: {'; '.join(agent.quality)}" if agent.status == "ok" and agent.quality else ""
        click.echo(f"  {agent.name:<12} {agent.status:<8} {timing}{where}{tokens}{error}{repaired}")


@cli.command()
@click.argument("file", type=click.Path(path_type=Path))
def validate(file: Path) -> None:
    """Check a pipeline file without running it: none of its code runs (its modules are read, not imported)."""
    spec = validate_pipeline(file)
    click.echo(
        f"{file}: ok: pipeline '{spec.name}', {len(spec.agents)} agents, order {' -> '.join(spec.agent_order())}"
    )


@cli.command("new")
@click.argument("name")
def new(name: str) -> None:
    """Write a pipeline folder NAME/ to start from: its YAML, a prompt file, an output model, a function."""
    from cantata.scaffold import scaffold

    folder, pipeline = scaffold(name, Path.cwd())
    click.echo(f"{folder}: pipeline '{name}', agents {' -> '.join(pipeline.order)}")
    click.echo(f'run it: cantata run {name}/pipeline.yaml -m "I keep skipping my runs."')


@cli.command("pipelines")
@click.option("--json", "as_json", is_flag=True)
def list_pipelines(as_json: bool) -> None:
    """List the bundled pipelines and the deployed agents (agent:NAME)."""
    from cantata.factory import registry
    from cantata.factory.cli import with_store

    rows: list[dict[str, Any]] = []
    home = cantata_home()
    stored = database_url(load_config()) or (home / "cantata.db").exists()  # never create a SQLite file to list
    deployed = with_store(lambda store, _: store.agent_versions()) if stored else []
    agent_paths = {
        f"{registry.AGENT_PREFIX}{v.name}": registry.version_dir(home, v.name, v.version) / "pipeline.yaml"
        for v in deployed
        if v.active
    }
    for name, path in {**bundled_pipelines.bundled(), **agent_paths}.items():
        pipeline = load_pipeline(path)
        rows.append(
            {
                "name": name,
                "description": pipeline.spec.description,
                "agents": [a.name for a in pipeline.spec.agents],
                "path": str(path),
            }
        )
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        click.echo(f"{row['name']:<12} {row['description']}  ({', '.join(row['agents'])})")


@cli.command()
@click.option("--config", "config_path", type=click.Path(path_type=Path), default=None, help="Instances config.")
@click.option("--check", is_flag=True, help="Check that each instance is reachable, and read server metrics.")
@click.option("--json", "as_json", is_flag=True)
def instances(config_path: Path | None, check: bool, as_json: bool) -> None:
    """The model instances, what they serve, and their live figures; with --check, exit 2
    (after the whole report) when any instance is unreachable."""
    from cantata.instances import instances_report

    rows = asyncio.run(instances_report(load_config(config_path), cantata_home(), check=check))
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        _print_instances(rows, check=check)
    unreachable = [row["name"] for row in rows if check and not row["reachable"]]
    if unreachable:
        raise BackendUnavailable(f"unreachable: {', '.join(unreachable)}")


def _print_instances(rows: list[dict[str, Any]], *, check: bool) -> None:
    for row in rows:
        live = row["live"]
        line = (
            f"{row['name']:<12} {row['backend']:<9} serves {','.join(row['serves'])}  cap {row['max_concurrency']}"
            f"  queued {live['queued']} running {live['running']} done {live['finished']} failed {live['failed']}"
        )
        if live["tokens_per_s"] is not None:
            line += f"  {live['tokens_per_s']} tok/s, first token {live['first_token_s']} s"
        if live["cached_share"] is not None:
            line += f", {100 * live['cached_share']:.0f}% cached"
        circuit = row["circuit"]
        if circuit["state"] != "closed":
            line += f"  circuit {circuit['state'].replace('_', '-')} after {circuit['failures']} failure(s): {circuit['reason']}"
        if check:
            line += f"  ok: {row['serving']}" if row["reachable"] else f"  UNREACHABLE: {row['error']}"
            server = row.get("server")
            if server:
                line += f"  server: {server['requests_running']} running, {server['requests_waiting']} waiting"
                line += f", KV {server['kv_cache_usage']}, prefix hits {server['prefix_cache_hit_rate']}"
        click.echo(line)
        for replica in row.get("replicas", []):
            line = f"  {replica['name']:<10} {replica['url']}  circuit {replica['circuit']['state'].replace('_', '-')}"
            if check:
                line += "  ok" if replica["reachable"] else f"  UNREACHABLE: {replica['error']}"
            click.echo(line)


@cli.command()
@click.argument("what", type=click.Choice(["pipeline"]))
def schema(what: str) -> None:
    """Print the JSON Schema of a pipeline file (for editors)."""
    click.echo(json.dumps(pipeline_json_schema(), indent=2))


def main() -> None:
    telemetry.configure_from_env()
    try:
        cli.main(prog_name="cantata")
    except CantataError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
