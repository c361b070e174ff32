"""A deterministic backend with no model: for tests, benchmarks and trying out pipelines.

It answers every request with an output valid against the request's schema (or a short
text), after the configured latency, at the configured tokens/s, and fails at the
configured rate with the configured `faults` (a server down, an HTTP error, a hang, a stream
cut short, a reply that is not what was asked). The same seed, agent and prompt give the
same answer and the same faults. Like a model, it stops at max_tokens (four characters a
token) and then says so: finish_reason "length"; it stops at the request's stop
sequences too (canned replies can test that). With `parallel`, it computes that many
calls at once and queues the rest, as a server with that many slots does.
"""

from __future__ import annotations

import asyncio
import json
import random
import zlib
from collections.abc import AsyncGenerator
from contextlib import AbstractAsyncContextManager, nullcontext
from pathlib import Path
from typing import Any

from cantata.backends.base import Backend, BackendInfo, Chunk, CompletionRequest, Usage
from cantata.backends.stops import StopScanner
from cantata.config import FaultKind, InstanceConfig
from cantata.errors import BackendError, BackendHTTPError, BackendProtocolError, BackendUnavailable, ConfigError
from cantata.structured import resolve_ref
from cantata.yamlsource import load_yaml


class ScriptedBackend(Backend):
    def __init__(self, config: InstanceConfig) -> None:
        self.name = config.name
        self.config = config
        # Attempts per (agent, prompt): a retry of the same call draws a new failure roll.
        self._attempts: dict[tuple[str, int], int] = {}
        self._canned = load_replies(config.replies) if config.replies is not None else {}
        self._calls: dict[str, int] = {}  # per agent, to hand out its canned replies in order
        self._slots = asyncio.Semaphore(config.parallel) if config.parallel else None

    def info(self) -> BackendInfo:
        return BackendInfo(
            backend="scripted",
            model=self.config.model or "scripted",
            details={"latency_s": self.config.latency_s, "fail_rate": self.config.fail_rate},
        )

    async def complete(self, request: CompletionRequest) -> AsyncGenerator[Chunk, None]:
        prompt = "".join(m.content for m in request.messages)
        key = (request.agent, zlib.crc32(prompt.encode()))
        self._attempts[key] = attempt = self._attempts.get(key, 0) + 1
        async with self._computing():
            if self.config.latency_s:
                await asyncio.sleep(self.config.latency_s)
            fault = self._fault(key, attempt)
            if fault in ("hang", "cut", "invalid", "empty"):
                text = {"hang": "", "cut": "The reply was", "invalid": '{"cut": "in the mid', "empty": ""}[fault]
            elif fault is not None:
                raise _error(fault, f"instance '{self.name}': scripted failure ({fault}, attempt {attempt})")
            elif request.agent in self._canned:
                text = self._next_canned(request.agent)
            elif request.schema is not None:
                text = json.dumps(sample(request.schema, request.schema, request.agent), ensure_ascii=False)
            else:
                text = f"[{request.agent or 'agent'}] scripted reply #{key[1] % 1000}."
            pieces = _split_tokens(text) if text else []
            finish = "stop"
            if len(pieces) > request.max_tokens:
                pieces, finish = pieces[: request.max_tokens], "length"
            # As a model does: a stop sequence within the tokens it wrote ends the reply there.
            scanner = StopScanner(request.stop)
            kept = scanner.feed("".join(pieces)) + scanner.flush()
            if scanner.matched is not None:
                pieces, finish = (_split_tokens(kept) if kept else []), "stop"
            if self.config.tokens_per_s:
                delay = 1.0 / self.config.tokens_per_s
                for piece in pieces:
                    await asyncio.sleep(delay)
                    yield Chunk(text=piece)
            elif text:
                yield Chunk(text="".join(pieces))
            if fault == "hang":
                await asyncio.Event().wait()  # until the caller's deadline closes the stream
            if fault == "cut":
                raise BackendProtocolError(f"instance '{self.name}': scripted failure (cut): the stream ended early")
        usage = Usage(prompt_tokens=self.count_tokens(prompt), completion_tokens=len(pieces))
        yield Chunk(usage=usage, finish_reason=finish, stop=scanner.matched)

    def _computing(self) -> AbstractAsyncContextManager[Any]:
        return self._slots if self._slots is not None else nullcontext()

    def _fault(self, key: tuple[str, int], attempt: int) -> FaultKind | None:
        """The fault this attempt of this call injects, if any (`fail_first`, then `fail_rate`)."""
        if attempt > self.config.fail_first and not self.config.fail_rate:
            return None  # the usual case, without seeding a generator per call
        roll = random.Random(f"{self.config.seed}:{key}:{attempt}")
        if attempt <= self.config.fail_first or (self.config.fail_rate and roll.random() < self.config.fail_rate):
            return roll.choice(self.config.faults)
        return None

    def _next_canned(self, agent: str) -> str:
        replies = self._canned[agent]
        self._calls[agent] = call = self._calls.get(agent, 0) + 1
        reply = replies[min(call, len(replies)) - 1]
        return reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)


def _error(fault: FaultKind, message: str) -> BackendError:
    if fault == "unavailable":
        return BackendUnavailable(message)
    status = int(fault.removeprefix("http_"))
    return BackendHTTPError(message, http_status=status, retry_after_s=1.0 if status == 429 else None)


def load_replies(path: Path) -> dict[str, list[Any]]:
    """{agent: [reply, ...]} from a YAML file; a single reply is a list of one."""
    source = load_yaml(path, ConfigError)
    if not isinstance(source.data, dict) or not all(isinstance(k, str) for k in source.data):
        raise ConfigError(f"{path}:1: canned replies are a mapping of agent names to outputs")
    # Outputs are objects or text, so a list is always successive replies.
    return {agent: value if isinstance(value, list) and value else [value] for agent, value in source.data.items()}


def _split_tokens(text: str) -> list[str]:
    """Roughly four characters a token, as the rough token count assumes."""
    return [text[i : i + 4] for i in range(0, len(text), 4)]


def sample(schema: dict[str, Any], root: dict[str, Any], hint: str) -> Any:
    """A value valid against `schema`: the default or first example/enum when given,
    else the smallest value that meets every bound."""
    if "$ref" in schema:
        return sample(resolve_ref(schema, root), root, hint)
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    if schema.get("examples"):
        return schema["examples"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return sample(options[0], root, hint)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props: dict[str, Any] = schema.get("properties", {})
        required = schema.get("required", list(props))
        return {name: sample(props[name], root, name) for name in props if name in required}
    if kind == "array":
        count = max(schema.get("minItems", 1), 1)
        item = schema.get("items", {"type": "string"})
        return [sample(item, root, hint) for _ in range(count)]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        high = schema.get("maximum", schema.get("exclusiveMaximum", low + 2))
        middle = (low + high) / 2
        return int(middle) if kind == "integer" else middle
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    text = f"scripted {hint}".strip()
    min_len, max_len = schema.get("minLength", 0), schema.get("maxLength", 1000)
    return (text + "." * max(0, min_len - len(text)))[:max_len]
