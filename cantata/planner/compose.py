"""A docker compose file for a plan on one machine: the model servers, and beside them
Cantata's own services (PostgreSQL, `cantata serve`, `cantata worker`) with the instances
config that binds the pipeline's aliases to the servers by their service names.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from cantata.errors import UserError
from cantata.planner.emit import CONFIG_FILE, devices_on, instances_yaml, model_arg, vllm_args
from cantata.planner.plan import Plan

VLLM_IMAGE = "vllm/vllm-openai:latest"
POSTGRES_IMAGE = "postgres:17"
# No Cantata image is published: build one with Cantata and its `postgres` extra installed,
# and name it here or in $CANTATA_IMAGE.
CANTATA_IMAGE = "${CANTATA_IMAGE:-cantata:latest}"
CANTATA_PORT = 8000
# Where the instances config is mounted in Cantata's containers (a compose `configs:` entry).
CONFIG_TARGET = "/etc/cantata/instances.yaml"
CANTATA_DB = "postgresql://cantata:${POSTGRES_PASSWORD}@postgres:5432/cantata"
OWN_SERVICES = ("postgres", "cantata", "cantata-worker")


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (the instances config) as literal blocks, readable in the file."""


def _str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if "\n" in text else None)


_Dumper.add_representer(str, _str)


def service_name(instance: str) -> str:
    """A service name that is also a plain DNS label (instance names may hold dots: qwen2.5-...)."""
    return re.sub(r"[^a-z0-9-]", "-", instance.lower())


def _model_server(plan: Plan, index: int, previous_on_gpu: dict[str, str]) -> dict[str, Any]:
    inst = plan.instances[index]
    service: dict[str, Any] = {
        "image": VLLM_IMAGE,
        "command": ["--model", model_arg(inst), *vllm_args(inst, plan)],
        "ports": [f"{inst.port}:{inst.port}"],
        "ipc": "host",
        "volumes": ["${HOME}/.cache/huggingface:/root/.cache/huggingface"],
        "environment": {"HF_TOKEN": "${HF_TOKEN:-}"},
        "deploy": {
            "resources": {
                "reservations": {
                    "devices": [
                        {"driver": "nvidia", "device_ids": devices_on(inst, 0).split(","), "capabilities": ["gpu"]}
                    ]
                }
            }
        },
        "healthcheck": {
            "test": ["CMD", "curl", "-sf", f"http://localhost:{inst.port}/health"],
            "interval": "10s",
            "retries": 90,
            "start_period": "60s",
        },
    }
    # Servers sharing a GPU start one after the other (each claims its memory share).
    before = sorted({previous_on_gpu[g] for g in inst.gpus if g in previous_on_gpu})
    if before:
        service["depends_on"] = {name: {"condition": "service_healthy"} for name in before}
    for g in inst.gpus:
        previous_on_gpu[g] = service_name(inst.name)
    return service


def _cantata(command: list[str], ready: list[str]) -> dict[str, Any]:
    """A Cantata process on PostgreSQL with the plan's instances config, once `ready` are healthy."""
    return {
        "image": CANTATA_IMAGE,
        "command": [*command, "--config", CONFIG_TARGET],
        "environment": {"CANTATA_DB": CANTATA_DB},
        "configs": [{"source": "cantata-instances", "target": CONFIG_TARGET}],
        "depends_on": {name: {"condition": "service_healthy"} for name in ["postgres", *ready]},
        "restart": "unless-stopped",
    }


def emit_compose(plan: Plan) -> str:
    """A docker compose file for one machine: model servers, PostgreSQL, a Cantata server and worker."""
    nodes = {g.gpu.split(":")[0] for g in plan.gpus if g.instances}
    if len(nodes) > 1:
        raise UserError(
            f"a compose file describes one machine, and this plan uses {len(nodes)} nodes "
            f"({len(plan.gpus)} GPUs); use --emit vllm"
        )
    names = {inst.name: service_name(inst.name) for inst in plan.instances}
    clash = sorted(set(names.values()) & set(OWN_SERVICES))
    if clash or len(set(names.values())) < len(names):
        raise UserError(f"instance names {sorted(names)} do not make distinct compose service names")
    previous_on_gpu: dict[str, str] = {}
    services: dict[str, Any] = {
        names[inst.name]: _model_server(plan, i, previous_on_gpu) for i, inst in enumerate(plan.instances)
    }
    servers = list(services)
    services["postgres"] = {
        "image": POSTGRES_IMAGE,
        "environment": {
            "POSTGRES_USER": "cantata",
            "POSTGRES_DB": "cantata",
            "POSTGRES_PASSWORD": "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}",
        },
        "volumes": ["cantata-db:/var/lib/postgresql/data"],
        "healthcheck": {
            "test": ["CMD", "pg_isready", "-U", "cantata", "-d", "cantata"],
            "interval": "5s",
            "retries": 30,
        },
        "restart": "unless-stopped",
    }
    serve = ["cantata", "serve", "--host", "0.0.0.0", "--port", str(CANTATA_PORT)]
    services["cantata"] = {**_cantata(serve, servers), "ports": [f"{CANTATA_PORT}:{CANTATA_PORT}"]}
    # The server stores and queues the turns; the workers run them (`cantata serve --workers queue`).
    services["cantata"]["environment"]["CANTATA_WORKERS"] = "queue"
    services["cantata-worker"] = _cantata(["cantata", "worker"], servers)
    document: dict[str, Any] = {
        "name": f"cantata-{plan.pipeline}".lower(),
        "services": services,
        # Inside the compose network the servers are reached by service name, not localhost.
        "configs": {"cantata-instances": {"content": instances_yaml(plan, names)}},
        "volumes": {"cantata-db": {}},
    }
    header = (
        f"# Cantata plan: pipeline '{plan.pipeline}' on {plan.hardware}: the model servers, PostgreSQL, a Cantata\n"
        f"# server (port {CANTATA_PORT}) and worker. Cantata's image is {CANTATA_IMAGE} (build it with Cantata\n"
        "# installed). Start with: POSTGRES_PASSWORD=... docker compose up -d (compose 2.23 or later, for\n"
        "# configs with content); more workers: --scale cantata-worker=N. The server listens beyond loopback,\n"
        "# so it needs an API key: docker compose run --rm cantata cantata keys create --user admin --admin\n"
        f"# `cantata plan ... --config-out {CONFIG_FILE}` writes the instances config for the host (localhost ports).\n"
    )
    return header + yaml.dump(document, Dumper=_Dumper, sort_keys=False)
