"""Cantata: teams of role-specialised LLM agents on models you host yourself.

The public API: what a pipeline's own functions and the programs that run pipelines use.

    from cantata import Cantata, FunctionContext, load_config, load_pipeline

Importing `cantata` is cheap: the errors are defined here at once, everything else is
imported on first use of its name (and the embedded model only when an instance uses it).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from cantata.errors import (
    BackendError,
    BackendHTTPError,
    BackendProtocolError,
    BackendTimeout,
    BackendUnavailable,
    CantataError,
    ConfigError,
    OutputInvalid,
    Rejected,
    SandboxUnavailable,
    Skip,
    SpecError,
    StoreError,
    UserError,
)

if TYPE_CHECKING:
    from cantata.config import InstanceConfig, InstancesConfig, load_config
    from cantata.context import CheckContext, FunctionContext, Runtime, ScratchRuntime
    from cantata.events import Event
    from cantata.loader import Pipeline, load_pipeline
    from cantata.quotes import Quotation, quotations, quote_marks_removed, quote_problem
    from cantata.runtime import Cantata
    from cantata.spec import AgentSpec, PipelineSpec
    from cantata.store.rows import TurnRef
    from cantata.turn import AgentResult, Delivery, TurnResult

__version__ = "0.1.0"

# Name -> the module that defines it, imported when the name is first used.
_LAZY = {
    "Cantata": "cantata.runtime",
    "load_pipeline": "cantata.loader",
    "Pipeline": "cantata.loader",
    "PipelineSpec": "cantata.spec",
    "AgentSpec": "cantata.spec",
    "FunctionContext": "cantata.context",
    "CheckContext": "cantata.context",
    "Runtime": "cantata.context",
    "ScratchRuntime": "cantata.context",
    "TurnResult": "cantata.turn",
    "AgentResult": "cantata.turn",
    "Delivery": "cantata.turn",
    "Event": "cantata.events",
    "InstancesConfig": "cantata.config",
    "InstanceConfig": "cantata.config",
    "load_config": "cantata.config",
    "TurnRef": "cantata.store.rows",
    "Quotation": "cantata.quotes",
    "quote_problem": "cantata.quotes",
    "quotations": "cantata.quotes",
    "quote_marks_removed": "cantata.quotes",
}

__all__ = [
    # Running pipelines
    "Cantata",
    "load_pipeline",
    "load_config",
    "InstancesConfig",
    "InstanceConfig",
    # Pipelines as values
    "Pipeline",
    "PipelineSpec",
    "AgentSpec",
    # What a pipeline's functions, shortcuts and checks receive, and may raise
    "FunctionContext",
    "CheckContext",
    "Runtime",
    "ScratchRuntime",
    "Rejected",
    "Skip",
    # Quotations of the person, checked against the turn they cite (cantata/quotes.py)
    "TurnRef",
    "Quotation",
    "quote_problem",
    "quotations",
    "quote_marks_removed",
    # What a turn returns, and what it reports while it runs
    "TurnResult",
    "AgentResult",
    "Delivery",
    "Event",
    # Errors
    "CantataError",
    "UserError",
    "SpecError",
    "ConfigError",
    "BackendError",
    "BackendUnavailable",
    "BackendTimeout",
    "BackendHTTPError",
    "BackendProtocolError",
    "OutputInvalid",
    "StoreError",
    "SandboxUnavailable",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cantata' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once imported, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
