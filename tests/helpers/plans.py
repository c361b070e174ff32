"""The planner's tests: the `plan` command in process, plans of the test pipelines, and the
instances config inside an emitted launch script."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result

from cantata.config import InstancesConfig
from cantata.loader import load_pipeline
from cantata.planner.catalog import load_catalog, parse_model_arg
from cantata.planner.cli import plan as plan_command
from cantata.planner.hardware import resolve_hardware
from cantata.planner.plan import Plan, make_plan

DATA = Path(__file__).parents[1] / "data" / "planner"
FACTORY = DATA / "factory.yaml"
COACHING = DATA / "coaching.yaml"


def run(*args: str) -> Result:
    return CliRunner().invoke(plan_command, list(args))


def planned(pipeline: Path, hardware: str, *models: str, **options: Any) -> Plan:
    catalog = load_catalog()
    return make_plan(
        load_pipeline(pipeline).spec,
        resolve_hardware(hardware),
        [parse_model_arg(m, catalog) for m in models],
        **options,
    )


def assert_fits(plan: Plan) -> None:
    """Memory on every GPU within its size, and vLLM fractions within 0.9 per GPU."""
    for gpu in plan.gpus:
        assert gpu.used_gb <= gpu.memory_gb
        fractions = sum(i.gpu_memory_utilization for i in plan.instances if gpu.gpu in i.gpus)
        assert fractions <= 0.9 + 1e-9


def script_config(script: str) -> dict[str, Any]:
    """The instances config the script writes, as YAML data."""
    body = script.split("<<'YAML'\n", 1)[1].split("\nYAML\n", 1)[0]
    data: dict[str, Any] = yaml.safe_load(body)
    return data


def config_from_script(script: str) -> InstancesConfig:
    return InstancesConfig.model_validate(script_config(script))
