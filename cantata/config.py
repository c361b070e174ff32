"""Where Cantata keeps its data, and which model instances serve which aliases.

The instances config is looked up in this order: `--config FILE`, `$CANTATA_CONFIG`,
`$CANTATA_HOME/config.yaml`, else one embedded instance named `local` serving every alias.
The state (sessions, turns, the blackboard, events) is in SQLite under CANTATA_HOME, or on
PostgreSQL when `$CANTATA_DB`, else the config's `database`, is a postgresql:// URL.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from cantata.errors import ConfigError, register_secret
from cantata.yamlsource import describe_validation_error, load_yaml

BackendKind = Literal["embedded", "openai", "scripted"]
Dialect = Literal["vllm", "llama-cpp-python"]
FaultKind = Literal["unavailable", "http_500", "http_503", "http_429", "http_401", "hang", "cut", "invalid", "empty"]


# Whose turns they are when nobody says: the one user of a local, single-person setup.
DEFAULT_USER = "local"

POSTGRES_SCHEMES = ("postgresql://", "postgres://")

# Where a server's turns run: in its own process, or queued for `cantata worker` processes
# (the state on PostgreSQL; cantata/turn_queue.py).
Workers = Literal["local", "queue"]
WORKERS: tuple[Workers, ...] = ("local", "queue")


def cantata_home() -> Path:
    """CANTATA_HOME, else the per-user data folder; created on first use by the store."""
    env = os.environ.get("CANTATA_HOME")
    return Path(env) if env else Path(platformdirs.user_data_dir("cantata"))


class InstanceConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    backend: BackendKind
    model: str | None = Field(None, description="GGUF path (embedded) or served model name (openai).")
    url: str | None = Field(None, description="Base URL of an OpenAI-compatible server, e.g. http://h:8000/v1")
    urls: list[str] | None = Field(
        None,
        min_length=1,
        description="openai, instead of url: the base URLs of several servers (replicas) serving the same model; "
        "each call goes to the least loaded healthy one, a session's and a turn's calls to the same one "
        "(replicas.py). max_concurrency is per replica.",
    )
    affinity: bool = Field(
        True,
        description="With urls: keep a session's and a turn's calls on one replica while it is healthy and "
        "not overloaded, so its prefix cache serves them; false: the least loaded replica every call.",
    )
    api_key: str | None = Field(None, description="A key, or $env:NAME to read it from the environment.")
    max_concurrency: int | None = Field(None, gt=0, description="Requests in flight at once.")
    serves: list[str] = Field(default_factory=lambda: ["*"], description="Aliases served; * for all.")
    context: int = Field(8192, gt=0, description="Context window in tokens.")
    # openai: how the server takes a schema, and whether it schedules by request priority.
    dialect: Dialect = "vllm"
    priority_scheduling: bool = False
    timeout_s: float = Field(600.0, gt=0)
    reply_bytes_per_token: int = Field(
        16,
        gt=0,
        description="openai: a reply past max_tokens times this many bytes of text is cut there and "
        "reported as finish_reason length, whatever the server sends.",
    )
    # Every backend: when to stop sending calls to an instance that keeps failing (breaker.py).
    breaker_failures: int = Field(
        5, gt=0, description="Failed calls in a row (no answer, 5xx, 429, timeout) after which calls fail fast."
    )
    breaker_cooldown_s: float = Field(
        30.0,
        gt=0,
        description="Seconds of failing fast before one call probes the instance again (doubled "
        "after each failed probe, up to 10 minutes).",
    )
    # scripted: a deterministic stand-in for a model.
    latency_s: float = Field(0.0, ge=0)
    tokens_per_s: float | None = Field(None, gt=0)
    fail_rate: float = Field(0.0, ge=0, le=1)
    fail_first: int = Field(0, ge=0, description="Fail the first N attempts of every call (to test retries).")
    faults: list[FaultKind] = Field(
        ["unavailable"],
        min_length=1,
        description="scripted: what a failing call does, one drawn per failure: unavailable, http_500, http_503, "
        "http_429 (Retry-After 1 s), http_401, hang (until the deadline), cut (a stream cut short), invalid "
        "(not the JSON asked for), empty (an empty reply).",
    )
    parallel: int | None = Field(
        None,
        gt=0,
        description="scripted: calls computed at once; the others wait their turn, as on a server "
        "with that many slots (default: all at once).",
    )
    seed: int = 0
    replies: Path | None = Field(
        None,
        description="scripted: a YAML file of canned outputs per agent, {agent: output} or {agent: [first, "
        "second, ...]} for successive calls (the last repeats); relative to the config file.",
    )

    @field_validator("api_key")
    @classmethod
    def _env_key(cls, value: str | None) -> str | None:
        if value is not None and value.startswith("$env:"):
            name = value.removeprefix("$env:")
            if name not in os.environ:
                raise ValueError(f"environment variable {name} is not set")
            value = os.environ[name]
        # Every error built from now on hides it, whoever builds it (errors.scrub).
        register_secret(value)
        return value

    def replica_urls(self) -> list[str]:
        """The servers of an openai instance: its `urls`, or its one `url`."""
        return list(self.urls) if self.urls else [self.url] if self.url else []

    def replicas(self) -> list[InstanceConfig]:
        """Each server of an instance with `urls` as an instance of its own, named NAME#0,
        NAME#1, ... (so its errors say which); none for an instance with one server."""
        if not self.urls:
            return []
        return [
            self.model_copy(update={"name": f"{self.name}#{i}", "url": url, "urls": None})
            for i, url in enumerate(self.urls)
        ]

    def concurrency(self) -> int:
        if self.max_concurrency is not None:
            return self.max_concurrency
        # llama.cpp in process generates one sequence at a time; servers batch.
        return {"embedded": 1, "openai": 8, "scripted": 1024}[self.backend]

    def serves_alias(self, alias: str) -> bool:
        return "*" in self.serves or alias in self.serves


class InstancesConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    instances: list[InstanceConfig] = Field(min_length=1)
    database: str | None = Field(
        None,
        description="postgresql://USER:PASSWORD@HOST/DB to keep the state on PostgreSQL ($CANTATA_DB wins over "
        "it); none: SQLite under CANTATA_HOME.",
    )
    path: Path | None = Field(None, exclude=True)

    @field_validator("database")
    @classmethod
    def _postgres_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(POSTGRES_SCHEMES):
            raise ValueError("not a postgresql:// URL (SQLite, the default, needs no setting)")
        return value

    def instance_for(self, alias: str) -> InstanceConfig | None:
        return next((i for i in self.instances if i.serves_alias(alias)), None)


DEFAULT_CONFIG = InstancesConfig(instances=[InstanceConfig(name="local", backend="embedded")])


def database_url(config: InstancesConfig | None = None) -> str | None:
    """The PostgreSQL URL of the state: $CANTATA_DB, else the config's `database`; None for
    SQLite under CANTATA_HOME."""
    env = os.environ.get("CANTATA_DB")
    if env:
        if not env.startswith(POSTGRES_SCHEMES):
            raise ConfigError("CANTATA_DB is not a postgresql:// URL (unset it to keep the state in SQLite)")
        return env
    return config.database if config is not None else None


def resolve_config_path(explicit: Path | None) -> Path | None:
    if explicit is not None:
        return explicit
    env = os.environ.get("CANTATA_CONFIG")
    if env:
        return Path(env)
    home_config = cantata_home() / "config.yaml"
    return home_config if home_config.exists() else None


def load_config(explicit: Path | None = None) -> InstancesConfig:
    path = resolve_config_path(explicit)
    if path is None:
        return DEFAULT_CONFIG
    source = load_yaml(path, ConfigError)
    if not isinstance(source.data, dict):
        raise ConfigError(f"{path}:1: an instances config is a mapping with an 'instances' list")
    try:
        config = InstancesConfig.model_validate(source.data)
    except ValidationError as exc:
        raise ConfigError(
            describe_validation_error(
                exc, source, lambda loc: (InstanceConfig if loc[:1] == ("instances",) else InstancesConfig).model_fields
            )
        ) from exc
    names = [i.name for i in config.instances]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError(f"{source.where(('instances', i, 'name'))}: instance '{name}' is defined twice")
    for i, inst in enumerate(config.instances):
        where = source.where(("instances", i))
        if inst.url and inst.urls:
            raise ConfigError(f"{where}: instance '{inst.name}' has both 'url' and 'urls'; give one of them")
        if inst.urls and inst.backend != "openai":
            raise ConfigError(f"{where}: instance '{inst.name}' ({inst.backend}) cannot have 'urls': only openai does")
        if inst.urls and len(set(inst.urls)) < len(inst.urls):
            raise ConfigError(f"{source.where(('instances', i, 'urls'))}: instance '{inst.name}' lists a URL twice")
        if inst.backend == "openai" and not inst.replica_urls():
            raise ConfigError(f"{where}: instance '{inst.name}' (openai) needs a 'url' (or 'urls')")
    for i, inst in enumerate(config.instances):
        if inst.replies is not None and not inst.replies.is_absolute():
            config.instances[i] = inst.model_copy(update={"replies": path.parent / inst.replies})
    return config.model_copy(update={"path": path})
