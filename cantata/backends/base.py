"""The one interface every model backend implements: `complete(request)`.

A backend turns chat messages into a stream of chunks. Reasoning text ("thinking") is
kept apart from the answer so it never breaks JSON parsing and never reaches the user.
The last chunk of every stream carries the usage and why the reply ended.

Who closes a stream: the caller of `complete()` owns it, and iterates it inside
`contextlib.aclosing(...)` (or to its end). A caller that stops early (a timeout, a
cancellation, an error of its own) thereby closes it at once, not at garbage collection:
closing stops the generation (llama.cpp at its next token; an HTTP stream by closing its
response) and frees what it held. A backend writes `complete()` as an async generator
that releases everything in `finally` / `async with`, and never yields from a `finally`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, Literal

from cantata.tools.base import ToolCall

# "tool": a tool's result, in a conversation with a backend that calls tools natively.
Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()  # an assistant's calls (native tool calling)
    tool_call_id: str | None = None  # a tool message: the call it answers

    def as_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class CompletionRequest:
    messages: list[Message]
    max_tokens: int = 512
    temperature: float = 0.2
    schema: dict[str, Any] | None = None
    schema_name: str = "output"
    thinking: bool | None = None
    # Lower is served first, as in vLLM's priority scheduling; the pool computes it.
    priority: int = 0
    # Who asks: for logs and for the scripted backend's deterministic outputs.
    agent: str = ""
    # The reply ends where one of these would begin (it is not part of the reply); every
    # backend honours them and says which one ended a reply (`Chunk.stop`).
    stop: tuple[str, ...] = ()
    # Tools the model may call ({"name", "description", "parameters"} each), for a backend
    # with `native_tools`; its reply then carries the calls (`Chunk.tool_calls`).
    tools: tuple[dict[str, Any], ...] = ()


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens reused from the backend's prefix cache


@dataclass
class Chunk:
    text: str = ""
    reasoning: str = ""
    usage: Usage | None = None
    # On the final chunk: the backend's own reason the reply ended, as the OpenAI API names
    # them: "stop" (finished), "length" (cut at max_tokens), ...; None if it did not say.
    finish_reason: str | None = None
    # On the final chunk: the request's stop sequence that ended the reply, if one did.
    stop: str | None = None
    # On the final chunk: the tools the model called (native tool calling), if it did.
    tool_calls: list[ToolCall] | None = None


@dataclass
class BackendInfo:
    """What `cantata instances` shows about a backend."""

    backend: str
    model: str
    details: dict[str, Any] = field(default_factory=dict)


class Backend(ABC):
    name: str
    # Whether count_tokens runs a real tokenizer, too slow for the event loop on a long
    # history: the briefing is then built on a worker thread. The rough count is not.
    slow_count: bool = False
    # Whether the backend sends tools and reads tool calls in the API's own fields. Else a
    # tool loop asks for its calls as constrained JSON (cantata/tools/envelope.py).
    native_tools: bool = False

    @abstractmethod
    def complete(self, request: CompletionRequest) -> AsyncGenerator[Chunk, None]:
        """Stream the answer; the final chunk carries `usage` and `finish_reason`. Raises
        BackendError. The caller closes the stream (`contextlib.aclosing`; see above)."""

    async def check(self) -> BackendInfo:
        """Raise BackendError when the backend cannot serve; say what it serves."""
        return self.info()

    @abstractmethod
    def info(self) -> BackendInfo: ...

    def count_tokens(self, text: str) -> int:
        """Tokens in `text` by the backend's own tokenizer; a rough count where it has none.

        Safe to call from any thread, also while a generation runs: with `slow_count` the
        briefing is built on a worker thread (asyncio.to_thread).
        """
        return max(1, len(text) // 4)

    async def close(self) -> None:
        return None
