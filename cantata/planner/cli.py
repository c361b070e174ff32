"""`cantata plan`: which models, on which GPUs, how fast, and the commands to launch them.

Exposed as the click command `plan`; cantata/cli.py registers it with cli.add_command(plan).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from cantata import bundled as bundled_pipelines
from cantata.errors import CantataError, UserError
from cantata.planner.catalog import load_catalog, parse_model_arg
from cantata.planner.compose import emit_compose
from cantata.planner.emit import emit_vllm, instances_yaml
from cantata.planner.hardware import FORMS, profile_names, resolve_hardware
from cantata.planner.plan import DEFAULT_PORT_BASE, make_plan
from cantata.planner.render import render_plan


@click.command("plan")
@click.option("--pipeline", "pipeline_name", required=True, help="A bundled pipeline's name or a pipeline YAML file.")
@click.option(
    "--hardware",
    required=True,
    help=f"A profile ({', '.join(profile_names())}), {FORMS}.",
)
@click.option(
    "--model",
    "models",
    multiple=True,
    metavar="[ROLE=]NAME[:QUANT]",
    help="Use this catalogue model (and quantisation) for every role, or for ROLE. Repeatable.",
)
@click.option("--context", type=int, default=None, help="Context window of every instance, in tokens.")
@click.option("--concurrency", type=int, default=1, show_default=True, help="Turns in flight at once.")
@click.option(
    "--port-base",
    type=click.IntRange(1, 65535),
    default=DEFAULT_PORT_BASE,
    show_default=True,
    help="The first model server's port; the others follow (clear of `cantata serve`'s 8000).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@click.option("--emit", type=click.Choice(["vllm", "compose"]), default=None, help="Print launch configs instead.")
@click.option(
    "--config-out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the Cantata instances config for the plan to this file.",
)
def plan(
    pipeline_name: str,
    hardware: str,
    models: tuple[str, ...],
    context: int | None,
    concurrency: int,
    port_base: int,
    as_json: bool,
    emit: str | None,
    config_out: Path | None,
) -> None:
    """Plan models, GPUs and launch commands for a pipeline on given hardware.

    Roles pick the best catalogue model for what they need that fits; roles that pick the
    same model and quantisation share one instance.
    """
    try:
        if as_json and emit:
            raise UserError("--json and --emit print different things; give one of them")
        catalog = load_catalog()
        forced = [parse_model_arg(m, catalog) for m in models]
        target = resolve_hardware(hardware)
        pipeline = bundled_pipelines.load(pipeline_name)
        result = make_plan(
            pipeline.spec,
            target,
            forced,
            context=context,
            concurrency=concurrency,
            catalog=catalog,
            port_base=port_base,
        )
        if config_out is not None:
            config_out.write_text(instances_yaml(result), encoding="utf-8")
        if emit == "vllm":
            click.echo(emit_vllm(result))
        elif emit == "compose":
            click.echo(emit_compose(result))
        elif as_json:
            click.echo(json.dumps(result.model_dump(mode="json"), indent=2))
        else:
            click.echo(render_plan(result))
    except CantataError as exc:
        # One line, as the top-level CLI prints it, so the command behaves the same when
        # invoked on its own (tests, embedding) and through `cantata`.
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(exc.exit_code) from None
