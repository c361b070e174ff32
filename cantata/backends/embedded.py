"""The embedded backend: llama.cpp in process, on one worker thread per instance.

llama.cpp generates one sequence at a time, so every call of an instance runs on its
own single-thread executor: the event loop never blocks, and calls queue in the order
the pool hands out slots. The model file is loaded there too, on first use (`check()`).
Closing a stream (base.py) stops its generation at the next token and waits for the
worker thread to let go, so the next call starts at once.

llama-cpp-python keeps the tokens of the last call and re-evaluates only what differs, so
agents that share the briefing (prompts.py) reuse it: we compute that shared prefix
ourselves to report `cached_tokens`.

The prompt is tokenized by us, not by llama-cpp-python's chat handler: the chat template's
own text with special tokens (its `<|im_start|>` must be the control token), every
message's content without them (`tokenize_prompt`). The content is the person's words,
earlier turns and memory: a message that writes `<|im_end|><|im_start|>system` must reach
the model as those characters, never as a turn of its own.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import threading
from collections.abc import AsyncGenerator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from llama_cpp import Llama
from llama_cpp.llama_chat_format import Jinja2ChatFormatter
from llama_cpp.llama_grammar import LlamaGrammar

from cantata.backends.base import Backend, BackendInfo, Chunk, CompletionRequest, Message, Usage
from cantata.backends.model_files import model_path
from cantata.backends.stops import StopScanner
from cantata.config import InstanceConfig
from cantata.errors import BackendError, BackendUnavailable, CantataError

_DONE = object()


@dataclass(frozen=True)
class PromptTokens:
    """A chat prompt as the model reads it."""

    ids: list[int]
    # Where each message's content lies in `ids`: (index of the message, start, end). A
    # template may place a content more than once, or not at all.
    contents: list[tuple[int, int, int]]
    stop: list[str]


class EmbeddedBackend(Backend):
    slow_count = True  # llama.cpp's tokenizer

    def __init__(self, config: InstanceConfig) -> None:
        self.name = config.name
        self.config = config
        self.path = model_path(config.model)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"cantata-{config.name}")
        self._llm: Llama | None = None
        self._formatter: Jinja2ChatFormatter | None = None
        self._grammars: dict[str, LlamaGrammar] = {}

    def info(self) -> BackendInfo:
        return BackendInfo(
            backend="embedded",
            model=self.path.name,
            details={"path": str(self.path), "context": self.config.context, "loaded": self._llm is not None},
        )

    async def check(self) -> BackendInfo:
        await asyncio.get_running_loop().run_in_executor(self._executor, self._load)
        return self.info()

    def count_tokens(self, text: str) -> int:
        """Safe from any thread: tokenizing only reads the vocabulary, so it may run beside a
        generation on the worker thread. (A second, vocab-only Llama would also do, but
        llama.cpp prints a spurious context warning for it that no setting silences.)

        The model is loaded on the worker thread, never on the event loop: before `check()`
        has loaded it, call this from a thread (asyncio.to_thread), not from the loop.
        """
        llm = self._loaded("count_tokens")
        # What is counted is content (briefings, messages), tokenized as in the prompt.
        return len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def tokenize_prompt(self, messages: list[Message]) -> PromptTokens:
        """The chat template applied to `messages`: its own text tokenized with special
        tokens, each message's content without them, so no content becomes a control token.

        Each content is replaced by a one-off marker before the template is rendered, then
        the rendered text is split at the markers: the template's structure stays exactly
        its own (escaping would change the person's words instead), and a content is
        located by its marker, never by searching for its text (a content equal to the
        template's `<|im_end|>` would be found in the template). The one difference from
        the template rendering the contents itself: a template that transforms a content
        (say, trims it) transforms the marker, so the content goes in as written.

        Like `count_tokens`, call it once the model is loaded (`check()`) or from a thread.
        """
        llm = self._loaded("tokenize_prompt")
        assert self._formatter is not None
        nonce = secrets.token_hex(8)
        marker = re.compile(f"\x00{nonce}:([0-9]+)\x00")
        masked = [{"role": m.role, "content": f"\x00{nonce}:{i}\x00"} for i, m in enumerate(messages)]
        formatted = self._formatter(messages=masked)  # type: ignore[arg-type]

        def tokens(text: str, *, special: bool) -> list[int]:
            return llm.tokenize(text.encode("utf-8"), add_bos=False, special=special) if text else []

        ids = llm.tokenize(b"", add_bos=True, special=True)  # the BOS token, if the model wants one
        contents: list[tuple[int, int, int]] = []
        at = 0
        for match in marker.finditer(formatted.prompt):
            ids += tokens(formatted.prompt[at : match.start()], special=True)
            index = int(match.group(1))
            start = len(ids)
            ids += tokens(messages[index].content, special=False)
            contents.append((index, start, len(ids)))
            at = match.end()
        ids += tokens(formatted.prompt[at:], special=True)
        stop = formatted.stop if isinstance(formatted.stop, list) else [formatted.stop] if formatted.stop else []
        return PromptTokens(ids=ids, contents=contents, stop=stop)

    def _loaded(self, caller: str) -> Llama:
        """The model, loaded on the worker thread if it is not yet (never on the event loop)."""
        llm = self._llm
        if llm is None:
            if _on_event_loop():
                raise RuntimeError(
                    f"instance '{self.name}': {caller} would load the model on the event loop; "
                    "await check() first, or call it from a worker thread"
                )
            llm = self._executor.submit(self._load).result()
        return llm

    async def complete(self, request: CompletionRequest) -> AsyncGenerator[Chunk, None]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        cancelled = threading.Event()

        def put(item: Any) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, item)

        def work() -> None:
            try:
                put(self._generate(request, put, cancelled))
            except CantataError as exc:
                put(exc)
            except Exception as exc:  # llama.cpp's own errors, e.g. a prompt over the context
                put(BackendError(f"instance '{self.name}': {exc}"))
            finally:
                put(_DONE)

        future = loop.run_in_executor(self._executor, work)
        try:
            while True:
                item = await queue.get()
                if item is _DONE:
                    break
                if isinstance(item, CantataError):
                    raise item
                yield item
        finally:
            # A timeout or cancellation stops generation at the next token.
            cancelled.set()
            await asyncio.shield(future)

    async def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

    # -- on the worker thread -------------------------------------------------------------

    def _load(self) -> Llama:
        if self._llm is None:
            try:
                self._llm = Llama(
                    model_path=str(self.path),
                    n_ctx=self.config.context,
                    n_threads=os.cpu_count() or 2,
                    seed=self.config.seed,
                    verbose=False,
                )
            except (ValueError, OSError, RuntimeError) as exc:
                raise BackendUnavailable(f"instance '{self.name}': cannot load {self.path}: {exc}") from exc
            template = self._llm.metadata.get("tokenizer.chat_template")
            if not template:
                raise BackendUnavailable(f"instance '{self.name}': {self.path.name} has no chat template")
            model = self._llm._model
            self._formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=model.token_get_text(self._llm.token_eos()),
                bos_token=model.token_get_text(self._llm.token_bos()),
            )
        return self._llm

    def _generate(self, request: CompletionRequest, put: Any, cancelled: threading.Event) -> Chunk:
        llm = self._load()
        prompt = self.tokenize_prompt(request.messages)
        tokens = prompt.ids
        # The same rule llama-cpp-python applies before evaluating: the longest common
        # prefix with the tokens it holds (all but the prompt's last token) is reused.
        cached = _common_prefix(llm._input_ids.tolist(), tokens[:-1])
        stream = llm.create_completion(
            tokens,
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            stream=True,
            stop=prompt.stop,
            grammar=self._grammar(request.schema) if request.schema is not None else None,
        )
        text: list[str] = []
        finish: str | None = None
        # The request's stops are found here, not by llama.cpp, which would not say which
        # one ended the reply (stops.py); the template's own go to llama.cpp above.
        scanner = StopScanner(request.stop)

        def emit(piece: str) -> None:
            if piece:
                text.append(piece)
                put(Chunk(text=piece))

        try:
            for part in stream:
                if cancelled.is_set():
                    break
                choice: dict[str, Any] = part["choices"][0]  # type: ignore[index,assignment]
                finish = choice.get("finish_reason") or finish
                emit(scanner.feed(choice["text"]))
                if scanner.matched is not None:
                    finish = "stop"
                    break  # closing the stream below stops the generation
        finally:
            stream.close()  # type: ignore[union-attr]
        emit(scanner.flush())
        completion = llm.tokenize("".join(text).encode("utf-8"), add_bos=False, special=True)
        usage = Usage(prompt_tokens=len(tokens), completion_tokens=len(completion), cached_tokens=cached)
        return Chunk(usage=usage, finish_reason=finish, stop=scanner.matched)

    def _grammar(self, schema: dict[str, Any]) -> LlamaGrammar:
        key = json.dumps(grammar_schema(schema), sort_keys=True)
        if key not in self._grammars:
            self._grammars[key] = LlamaGrammar.from_json_schema(key, verbose=False)
        return self._grammars[key]


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


# llama.cpp writes a bound of n repetitions as n nested optional rules: past a few hundred,
# grammar sampling crawls and then overflows the stack (a segfault took the whole process
# down on a 4000-character string). Longer bounds are left to the validation that follows
# every reply (structured.py) and to max_tokens.
MAX_GRAMMAR_REPEAT = 256


def grammar_schema(schema: Any) -> Any:
    """The schema as the grammar is built from: bounds over MAX_GRAMMAR_REPEAT removed."""
    if isinstance(schema, list):
        return [grammar_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept = {key: grammar_schema(value) for key, value in schema.items()}
    for bound in ("maxLength", "maxItems"):
        if isinstance(kept.get(bound), int) and kept[bound] > MAX_GRAMMAR_REPEAT:
            del kept[bound]
    return kept


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):  # the shorter one bounds the prefix
        if x != y:
            break
        n += 1
    return n
