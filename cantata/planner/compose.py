"""A docker compose file for a plan on one machine: the model servers, and beside them
Cantata's own services (PostgreSQL, `cantata serve`, `cantata worker`) with the instances
config that binds the pipeline's aliases to the servers by their service names, and
`cantata-admin`, run by hand for `cantata` commands such as the first API key.

The state and the API keys are in PostgreSQL, so the server and every worker share them;
CANTATA_HOME (the factory's deployed agents' files) is a named volume they share too.
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
# CANTATA_HOME in Cantata's containers, on a named volume: what a container writes there outlives it.
HOME_TARGET = "/var/lib/cantata"
ADMIN = "cantata-admin"
OWN_SERVICES = ("postgres", "cantata", "cantata-worker", ADMIN)


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
    """A Cantata process on PostgreSQL with the plan's instances config and CANTATA_HOME on
    its volume, once PostgreSQL and `ready` are healthy."""
    return {
        "image": CANTATA_IMAGE,
        "command": [*command, "--config", CONFIG_TARGET],
        "environment": {"CANTATA_DB": CANTATA_DB, "CANTATA_HOME": HOME_TARGET},
        "configs": [{"source": "cantata-instances", "target": CONFIG_TARGET}],
        "volumes": [f"cantata-home:{HOME_TARGET}"],
        "depends_on": {name: {"condition": "service_healthy"} for name in ["postgres", *ready]},
        "restart": "unless-stopped",
    }


def _admin() -> dict[str, Any]:
    """`docker compose run --rm cantata-admin ARGS...` runs `cantata ARGS...` as the server
    would (same database, home and config, found by CANTATA_CONFIG), with only PostgreSQL
    started for it. In a profile of its own, `up` leaves it out; naming it in `run` enables it."""
    service = _cantata([], [])
    del service["restart"]
    service["environment"]["CANTATA_CONFIG"] = CONFIG_TARGET
    return {**service, "entrypoint": ["cantata"], "command": ["keys", "list"], "profiles": ["admin"]}


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
    services[ADMIN] = _admin()
    document: dict[str, Any] = {
        "name": f"cantata-{plan.pipeline}".lower(),
        "services": services,
        # Inside the compose network the servers are reached by service name, not localhost.
        "configs": {"cantata-instances": {"content": instances_yaml(plan, names)}},
        "volumes": {"cantata-db": {}, "cantata-home": {}},
    }
    header = (
        f"# Cantata plan: pipeline '{plan.pipeline}' on {plan.hardware}: the model servers, PostgreSQL, a Cantata\n"
        f"# server (port {CANTATA_PORT}) and worker. Cantata's image is {CANTATA_IMAGE} (build it with Cantata\n"
        "# installed); compose 2.23 or later (configs with content). With POSTGRES_PASSWORD exported (or in .env):\n"
        f"# 1. docker compose run --rm {ADMIN} keys create --user admin --admin\n"
        "#    prints the first API key, once; it is kept (hashed) in PostgreSQL, which the server and every\n"
        "#    worker share. The server listens beyond loopback, so it does not start without a key.\n"
        "# 2. docker compose up -d    (more workers: --scale cantata-worker=N)\n"
        f"# More keys, the list, a revocation: docker compose run --rm {ADMIN} keys ...\n"
        f"# `cantata plan ... --config-out {CONFIG_FILE}` writes the instances config for the host (localhost ports).\n"
    )
    return header + yaml.dump(document, Dumper=_Dumper, sort_keys=False)
