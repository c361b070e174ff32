"""Model backends behind one interface, `Backend.complete()`."""

from __future__ import annotations

from cantata.backends.base import Backend
from cantata.config import InstanceConfig


def make_backend(config: InstanceConfig) -> Backend:
    # Imported here: llama.cpp is heavy and only the embedded backend needs it.
    if config.backend == "scripted":
        from cantata.backends.scripted import ScriptedBackend

        return ScriptedBackend(config)
    if config.backend == "openai":
        from cantata.backends.openai_compat import OpenAICompatBackend

        return OpenAICompatBackend(config)
    from cantata.backends.embedded import EmbeddedBackend

    return EmbeddedBackend(config)
