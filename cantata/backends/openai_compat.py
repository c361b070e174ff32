"""A backend for any OpenAI-compatible server: vLLM, SGLang, llama-server, Ollama,
llama-cpp-python's server.

One `httpx.AsyncClient` per backend. Every completion is streamed (SSE) from
`POST {url}/chat/completions` and asks for usage in the stream. What differs between
servers is named by the instance's `dialect`:

- `vllm` (also right for SGLang, llama-server, Ollama): a schema goes as
  `response_format: {"type": "json_schema", ...}`.
- `llama-cpp-python`: a schema goes as `response_format: {"type": "json_object",
  "schema": ...}`; that server rejects `json_schema` (HTTP 500) and, in 0.3.x, sends no
  usage in a stream, so usage is then estimated (see `_StreamState`).

`guided_*` fields are never sent: vLLM removed them and ignores them silently.

Tools go in the standard `tools` field with `tool_choice: "auto"`; the calls come back in
`tool_calls`, whole or as streamed deltas (by index: the id and name first, the arguments
in pieces), as vLLM's hermes parser sends them for Qwen3. llama-cpp-python's server cannot
stream an automatic tool choice, so with that dialect a request with tools is not streamed.

Reasoning is kept out of the answer whichever way it arrives: as `delta.reasoning` /
`delta.reasoning_content` (a server running a reasoning parser) or as a leading
`<think>...</think>` block in the content (one that does not), tags split across stream
chunks included.

Every reply is bounded whatever the server does (`_ReplyCap`): past `max_tokens` times the
instance's `reply_bytes_per_token` bytes of text (answer and reasoning together), or past a
raw byte budget of the stream that bounds what carries no text, the reply is cut there,
the response closed, and the reply reported with finish_reason `length`. A server that
ignored `stream: true` and sent one JSON body is read the same way, under the same caps.

Every httpx failure becomes a Cantata error in one place, `_boundary`.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic_core import from_json

from cantata.backends.base import Backend, BackendInfo, Chunk, CompletionRequest, Message, Usage
from cantata.backends.plain_text import plain_text
from cantata.backends.stops import StopScanner
from cantata.config import InstanceConfig
from cantata.errors import (
    BackendError,
    BackendHTTPError,
    BackendProtocolError,
    BackendTimeout,
    BackendUnavailable,
    ConfigError,
)
from cantata.tools import ToolCall

CHECK_TIMEOUT_S = 5.0
CONNECT_TIMEOUT_S = 10.0
EXCERPT_CHARS = 200

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

# What a stream may carry besides its text, per token (a JSON envelope per delta is a few
# hundred bytes) and once (usage, keep-alive comments): past that, the server is sending
# something other than the reply asked for.
RAW_BYTES_PER_TOKEN = 2048
RAW_BYTES_EXTRA = 64 * 1024


class _Malformed(Exception):
    """The server sent something that is not the OpenAI streaming format."""


class _StreamError(Exception):
    """The server reported an error inside a 200 stream (`data: {"error": ...}`)."""

    def __init__(self, message: str, code: int | None) -> None:
        super().__init__(message)
        self.code = code


class OpenAICompatBackend(Backend):
    native_tools = True

    def __init__(self, config: InstanceConfig, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.name = config.name
        self.config = config
        if not config.url:
            raise ConfigError(f"instance '{config.name}' (openai) needs a 'url'")
        if not config.url.startswith(("http://", "https://")):
            raise ConfigError(f"instance '{config.name}': url must start with http:// or https://, got {config.url!r}")
        self.url = config.url.rstrip("/")
        headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        self._client = httpx.AsyncClient(
            base_url=self.url + "/",
            headers=headers,
            timeout=httpx.Timeout(config.timeout_s, connect=min(config.timeout_s, CONNECT_TIMEOUT_S)),
            # No retries of its own: the agent's one retry loop decides (model_call.py, retry.py).
            transport=transport or httpx.AsyncHTTPTransport(retries=0),
        )
        self._model: str | None = config.model

    # -- Backend interface -------------------------------------------------------------

    def info(self) -> BackendInfo:
        return BackendInfo(
            backend="openai",
            model=self._model or "(first model the server lists)",
            details={
                "url": self.url,
                "dialect": self.config.dialect,
                "priority_scheduling": self.config.priority_scheduling,
            },
        )

    async def check(self) -> BackendInfo:
        with self._boundary("models"):
            models = await self._list_models(timeout=CHECK_TIMEOUT_S)
        if self._model is None:
            self._model = models[0]
        info = self.info()
        info.details["models"] = models
        return info

    async def complete(self, request: CompletionRequest) -> AsyncGenerator[Chunk, None]:
        with self._boundary("chat/completions"):
            if self._model is None:
                self._model = (await self._list_models())[0]
            body = self.request_body(request, self._model)
            async with self._client.stream("POST", "chat/completions", json=body) as response:
                if response.status_code >= 400:
                    await response.aread()
                    response.raise_for_status()
                splitter = _ThinkSplitter(implicit=request.thinking is True)
                cap = _ReplyCap(request.max_tokens, self.config.reply_bytes_per_token)
                state = _StreamState(cap)
                # Also where the server did not apply the stops (see request_body).
                scanner = StopScanner(request.stop)
                events = _whole_body(response, cap) if _is_json(response) else _sse_data(response, cap)
                async for data, partial in events:
                    if partial:
                        cap.cut = True  # past the raw cap: the reply ends here, whatever it says
                    elif data == "[DONE]":
                        state.done = True
                        break
                    answer, reasoning = state.read_event(_parse_event(data, partial=partial), splitter)
                    answer = scanner.feed(answer)
                    if answer or reasoning:
                        yield Chunk(text=answer, reasoning=reasoning)
                    if cap.cut or scanner.matched is not None:
                        break  # leaving the block closes the response: the server stops generating
                if not state.done and state.finish_reason is None and not cap.cut and scanner.matched is None:
                    raise _Malformed("the stream ended before [DONE]")
                calls = state.tool_calls()
                answer, reasoning = splitter.flush()
                answer = scanner.feed(answer) + scanner.flush()
                if answer or reasoning:
                    yield Chunk(text=answer, reasoning=reasoning)
                usage = state.result(request, self.count_tokens)
                stop = scanner.matched or (state.stop_reason if state.stop_reason in request.stop else None)
                finish = "length" if cap.cut else "stop" if stop is not None else state.finish_reason
                yield Chunk(usage=usage, finish_reason=finish, stop=stop, tool_calls=calls)

    # count_tokens: the base class's rough count. Servers' tokenize endpoints differ (vLLM
    # /tokenize at the root, llama-server /tokenize, llama-cpp-python /extras/tokenize,
    # Ollama none) and count_tokens is synchronous, so a correct count would need the
    # model's tokenizer locally.

    async def close(self) -> None:
        await self._client.aclose()

    # -- request -----------------------------------------------------------------------

    def request_body(self, request: CompletionRequest, model: str) -> dict[str, Any]:
        """The JSON body of `POST /chat/completions` for this instance's dialect."""
        body: dict[str, Any] = {
            "model": model,
            "messages": wire_messages(request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.schema is not None:
            if self.config.dialect == "llama-cpp-python":
                body["response_format"] = {"type": "json_object", "schema": request.schema}
            else:
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": request.schema_name, "schema": request.schema, "strict": True},
                }
        if request.stop and self.config.dialect == "vllm" and request.thinking is False:
            # The stops are always applied here, to the answer (complete(): the response is
            # closed at once, which aborts the generation). The server gets them too only when
            # it can apply them as we do: vLLM names the stop in `stop_reason`, but matches it
            # in the reasoning as well, which would end a thinking model's reply before its
            # answer; llama-cpp-python's server would stop without saying why.
            body["stop"] = list(request.stop)
        if request.tools:
            body["tools"] = [{"type": "function", "function": tool} for tool in request.tools]
            body["tool_choice"] = "auto"
            if self.config.dialect == "llama-cpp-python":  # its automatic tool choice cannot stream
                body["stream"] = False
                del body["stream_options"]
        if request.thinking is not None:
            body["chat_template_kwargs"] = {"enable_thinking": request.thinking}
        if self.config.priority_scheduling:
            body["priority"] = request.priority
        return body

    async def _list_models(self, timeout: float | None = None) -> list[str]:
        if timeout is None:
            response = await self._client.get("models")
        else:
            response = await self._client.get("models", timeout=timeout)
        response.raise_for_status()
        try:
            payload = response.json()
        except ValueError as exc:
            raise _Malformed(f"GET models: {_describe(exc)}") from exc
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise _Malformed("GET models: no 'data' list")
        ids = [m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]
        if not ids:
            raise BackendUnavailable(f"instance '{self.name}': {self.url}/models lists no model")
        return ids

    # -- the one error boundary --------------------------------------------------------

    @contextmanager
    def _boundary(self, endpoint: str) -> Iterator[None]:
        """Turn every failure of a call to `endpoint` into a one-line Cantata error."""
        where = f"{self.url}/{endpoint}"
        try:
            yield
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise BackendUnavailable(self._say(f"cannot connect to {self.url} ({_describe(exc)})")) from exc
        except httpx.TimeoutException as exc:
            raise BackendTimeout(self._say(f"{where} timed out ({_describe(exc)})")) from exc
        except httpx.RemoteProtocolError as exc:  # e.g. a stream cut short: the server broke the exchange
            raise BackendProtocolError(self._say(f"{where} broke off its reply ({_describe(exc)})")) from exc
        except httpx.NetworkError as exc:  # the connection was lost (reset, closed) once made
            raise BackendUnavailable(self._say(f"lost the connection to {self.url} ({_describe(exc)})")) from exc
        except httpx.HTTPStatusError as exc:
            status = exc.response.status_code
            raise BackendHTTPError(
                self._say(f"HTTP {status} from {where}: {_excerpt(exc.response)}"),
                http_status=status,
                retry_after_s=retry_after_s(exc.response.headers.get("retry-after")),
            ) from exc
        except _StreamError as exc:
            if exc.code is not None and exc.code >= 400:
                message = self._say(f"HTTP {exc.code} reported in the stream from {where}: {exc}")
                raise BackendHTTPError(message, http_status=exc.code) from exc
            raise BackendError(self._say(f"error reported in the stream from {where}: {exc}")) from exc
        except (_Malformed, json.JSONDecodeError, UnicodeDecodeError, httpx.DecodingError) as exc:
            raise BackendProtocolError(self._say(f"unreadable reply from {where}: {_describe(exc)}")) from exc
        except httpx.HTTPError as exc:
            raise BackendError(self._say(f"request to {where} failed ({_describe(exc)})")) from exc

    def _say(self, what: str) -> str:
        # The api_key is scrubbed when the error is built (errors.scrub).
        return f"instance '{self.name}': {_one_line(what)}"


# -- stream parsing ------------------------------------------------------------------------


class _ReplyCap:
    """How much of a reply is read: `max_tokens` worth of text, counted in UTF-8 bytes at
    `bytes_per_token` (a token is about 4 bytes of English, so a real reply stays well
    under 16), and a raw budget for the bytes of the response itself. Past either, the
    reply is `cut`."""

    def __init__(self, max_tokens: int, bytes_per_token: int) -> None:
        self.text_left = max_tokens * bytes_per_token
        self.raw_bytes = self.text_left + max_tokens * RAW_BYTES_PER_TOKEN + RAW_BYTES_EXTRA
        self.cut = False

    def take(self, text: str) -> str:
        """What of `text` fits in what is left (cut at a character's boundary)."""
        data = text.encode("utf-8")
        if len(data) <= self.text_left:
            self.text_left -= len(data)
            return text
        kept = data[: self.text_left].decode("utf-8", errors="ignore")
        self.text_left = 0
        self.cut = True
        return kept


Events = AsyncIterator[tuple[str, bool]]  # (data, partial): partial when cut by the raw cap


def _is_json(response: httpx.Response) -> bool:
    content_type: str = response.headers.get("content-type", "")
    return content_type.startswith("application/json")


async def _whole_body(response: httpx.Response, cap: _ReplyCap) -> Events:
    """A server that ignored `stream: true`: its one JSON body, as one event, read up to the
    raw cap (what came of an unfinished body is still read, partial JSON and all)."""
    body = bytearray()
    async for raw in response.aiter_bytes():
        body += raw
        if len(body) > cap.raw_bytes:
            yield _utf8_prefix(bytes(body[: cap.raw_bytes])), True
            return
    yield body.decode("utf-8"), False
    yield "[DONE]", False  # the whole reply came: as complete as a stream that said so


async def _sse_data(response: httpx.Response, cap: _ReplyCap) -> Events:
    """The `data` of each server-sent event, decoded as strict UTF-8; past the raw cap, the
    data of the event under way (maybe none) as the last, partial one.

    Not httpx-sse (0.4.3): it decodes through httpx's text decoder, which replaces invalid
    UTF-8 with U+FFFD, so a corrupt stream would pass as text instead of failing as a
    protocol error; and it refuses a stream whose content-type is not text/event-stream.
    """
    buffer = bytearray()  # the line under way: appended to in place, however long it grows
    lines: list[str] = []
    read = 0
    async for raw in response.aiter_bytes():
        read += len(raw)
        over = read > cap.raw_bytes
        if over:
            raw = raw[: len(raw) - (read - cap.raw_bytes)]
        buffer += raw
        if b"\n" in raw:
            *complete, last = buffer.split(b"\n")
            buffer = bytearray(last)
            for line in complete:
                event = _sse_line(bytes(line), lines)
                if event is not None:
                    yield event, False
        if over:
            value = _data_field(_utf8_prefix(bytes(buffer)))
            if value is not None:
                lines.append(value)
            yield "\n".join(lines), True
            return
    for rest in (bytes(buffer), b""):
        event = _sse_line(rest, lines)
        if event is not None:
            yield event, False


def _utf8_prefix(data: bytes) -> str:
    """`data` cut short, decoded strictly: a character cut at the end is dropped, not an error."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason != "unexpected end of data":
            raise
        return data[: exc.start].decode("utf-8")


def _sse_line(raw: bytes, lines: list[str]) -> str | None:
    """Feed one line; return an event's data when a blank line ends it."""
    line = raw.decode("utf-8").rstrip("\r")
    if not line:
        if not lines:
            return None
        data = "\n".join(lines)
        lines.clear()
        return data
    value = _data_field(line)
    if value is not None:
        lines.append(value)
    return None


def _data_field(line: str) -> str | None:
    """The value of a `data:` line. Comments (": ping") and other fields (event:, id:,
    retry:) carry nothing we use: None."""
    if not line.startswith("data:"):
        return None
    value = line[5:]
    return value[1:] if value.startswith(" ") else value


def _parse_event(data: str, *, partial: bool = False) -> dict[str, Any]:
    """An event's JSON; a `partial` one (cut by the raw cap) as far as it goes."""
    if partial:
        try:
            event = from_json(data, allow_partial="trailing-strings")
        except ValueError:
            return {}  # nothing readable came of it
    else:
        event = json.loads(data)
    if not isinstance(event, dict):
        raise _Malformed(f"an event is not a JSON object: {data[:80]}")
    error = event.get("error")
    if error is not None:
        message = error.get("message", error) if isinstance(error, dict) else error
        code = error.get("code") if isinstance(error, dict) else None
        raise _StreamError(str(message), code if isinstance(code, int) else None)
    return event


class _StreamState:
    """What the stream said so far; the usage it reports, estimated when it sends none.

    llama-cpp-python's server (0.3.x) ignores `stream_options.include_usage`: then the
    prompt tokens are the rough count of the messages and the completion tokens the
    number of content/reasoning deltas (about one token each on that server).
    """

    def __init__(self, cap: _ReplyCap) -> None:
        self.cap = cap
        self.reported: Usage | None = None
        self.deltas = 0
        self.done = False
        self.finish_reason: str | None = None
        self.stop_reason: Any = None  # vLLM: the stop string (or token id) that ended the reply
        self.server_reasons = False
        self.calls: dict[int, dict[str, str]] = {}  # tool calls by index: id, name, arguments so far

    def read_event(self, event: dict[str, Any], splitter: _ThinkSplitter) -> tuple[str, str]:
        usage = event.get("usage")
        if usage is not None:
            self.reported = _read_usage(usage)
        choices = event.get("choices") or []
        if not isinstance(choices, list):
            raise _Malformed("'choices' is not a list")
        if not choices:
            return "", ""
        choice = choices[0]
        if not isinstance(choice, dict):
            raise _Malformed("a choice is not an object")
        reason = choice.get("finish_reason")
        if reason:
            if not isinstance(reason, str):
                raise _Malformed(f"finish_reason is not a string: {reason!r}")
            self.finish_reason = reason
            self.stop_reason = choice.get("stop_reason")
        # A stream's chunk has a `delta`; a whole reply (stream ignored) has a `message`.
        delta = choice.get("delta", choice.get("message")) or {}
        if not isinstance(delta, dict):
            raise _Malformed("'delta' is not an object")
        self._read_calls(delta.get("tool_calls"))
        reasoning = self.cap.take(_text_field(delta, "reasoning") or _text_field(delta, "reasoning_content"))
        content = self.cap.take(_text_field(delta, "content"))
        if reasoning or content:
            self.deltas += 1
        if reasoning:
            splitter.server_reasons()
        answer, inline_reasoning = splitter.feed(content)
        return answer, reasoning + inline_reasoning

    def _read_calls(self, calls: Any) -> None:
        """Tool calls, whole (a `message`) or in pieces (deltas), gathered by index."""
        if calls is None:
            return
        if not isinstance(calls, list):
            raise _Malformed("'tool_calls' is not a list")
        for position, call in enumerate(calls):
            if not isinstance(call, dict) or not isinstance(call.get("function", {}), dict):
                raise _Malformed("a tool call is not an object with a 'function' object")
            index = call.get("index", position)
            if not isinstance(index, int):
                raise _Malformed(f"a tool call's index is not a number: {index!r}")
            gathered = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
            function = call.get("function") or {}
            if isinstance(call.get("id"), str):
                gathered["id"] = call["id"]
            gathered["name"] += _text_field(function, "name")
            arguments = function.get("arguments")
            if isinstance(arguments, dict):  # some servers send the object itself
                arguments = json.dumps(arguments)
            gathered["arguments"] += self.cap.take(arguments if isinstance(arguments, str) else "")

    def tool_calls(self) -> list[ToolCall] | None:
        """The calls the reply made; arguments that are not JSON stay text (the tool loop
        tells the model they must be an object)."""
        if not self.calls:
            return None
        calls = []
        for index, call in sorted(self.calls.items()):
            try:
                arguments: Any = json.loads(call["arguments"] or "{}")
            except ValueError:
                arguments = call["arguments"]
            calls.append(ToolCall(call["id"] or f"call_{index}", call["name"], arguments))
        return calls

    def result(self, request: CompletionRequest, count: Callable[[str], int]) -> Usage:
        if self.reported is not None:
            return self.reported
        prompt = sum(count(m.content) for m in request.messages)
        return Usage(prompt_tokens=prompt, completion_tokens=self.deltas, cached_tokens=0)


def _text_field(delta: dict[str, Any], key: str) -> str:
    value = delta.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Malformed(f"delta.{key} is not a string")
    return value


def _read_usage(usage: Any) -> Usage:
    if not isinstance(usage, dict):
        raise _Malformed("'usage' is not an object")
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        cached_tokens=_count(cached),
    )


def _count(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Malformed(f"a token count is not an integer: {value!r}")
    return value


class _ThinkSplitter:
    """Separates a leading `<think>...</think>` block from the answer in streamed content.

    Only a block at the start (after whitespace) is reasoning: once the answer has
    begun, `<think>` is ordinary text (an answer may well talk about think tags).
    Partial tags at a chunk's end are held back until the next chunk decides them.
    Whitespace before the answer's first visible character is dropped.

    `implicit` (thinking was requested): some chat templates put `<think>` in the
    prompt, so the content starts inside the block and only `</think>` shows. Then
    the content is held until `</think>` appears (all before it is reasoning), the
    content starts with `<think>`, the server sends reasoning in its own field, or
    the stream ends (all of it is answer).
    """

    def __init__(self, *, implicit: bool) -> None:
        self.state = "implicit" if implicit else "start"
        self.buf = ""

    def server_reasons(self) -> None:
        if self.state == "implicit":
            self.state = "start"

    def feed(self, text: str) -> tuple[str, str]:
        self.buf += text
        answer: list[str] = []
        reasoning: list[str] = []
        while self.buf:
            if self.state == "answer":
                answer.append(self.buf)
                self.buf = ""
            elif self.state == "reasoning":
                end = self.buf.find(THINK_CLOSE)
                if end >= 0:
                    reasoning.append(self.buf[:end])
                    self.buf = self.buf[end + len(THINK_CLOSE) :]
                    self.state = "start"
                    continue
                keep = _partial_suffix(self.buf, THINK_CLOSE)
                reasoning.append(self.buf[: len(self.buf) - keep])
                self.buf = self.buf[len(self.buf) - keep :]
                break
            else:  # "start" or "implicit": nothing visible in the answer yet
                lead = self.buf.lstrip()
                if lead.startswith(THINK_OPEN):
                    self.buf = lead[len(THINK_OPEN) :]
                    self.state = "reasoning"
                    continue
                if THINK_OPEN.startswith(lead):  # only whitespace, or a partial "<think"
                    break
                if self.state == "start":
                    self.buf = lead
                    self.state = "answer"
                    continue
                end = self.buf.find(THINK_CLOSE)
                if end < 0:
                    break
                reasoning.append(self.buf[:end])
                self.buf = self.buf[end + len(THINK_CLOSE) :]
                self.state = "start"
        return "".join(answer), "".join(reasoning)

    def flush(self) -> tuple[str, str]:
        rest, self.buf = self.buf, ""
        if self.state == "reasoning":  # cut off inside the block (max_tokens)
            return "", rest
        if self.state == "answer":
            return rest, ""
        return rest.lstrip(), ""


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest end of `text` that is a proper start of `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


# -- messages ------------------------------------------------------------------------------


def wire_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """The messages as the request carries them: every content as plain text (plain_text.py),
    an assistant's tool calls and a tool's result in their own fields."""
    wired: list[dict[str, Any]] = []
    for m in messages:
        message: dict[str, Any] = {"role": m.role, "content": plain_text(m.content)}
        if m.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                for c in m.tool_calls
            ]
        if m.tool_call_id is not None:
            message["tool_call_id"] = m.tool_call_id
        wired.append(message)
    return wired


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _describe(exc: BaseException) -> str:
    detail = _one_line(str(exc))
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


def retry_after_s(value: str | None) -> float | None:
    """A `Retry-After` header in seconds from now: delay-seconds or an HTTP date; None when
    absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if value.replace(".", "", 1).isdigit():  # delay-seconds (a fraction too, as some servers send)
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT; a zone-less one is read so
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _excerpt(response: httpx.Response) -> str:
    """The server's own words about the error, short: `error.message`, `detail`, or the body."""
    try:
        text = response.text
    except Exception:  # an undecodable error body says nothing more than its status
        return "(unreadable body)"
    try:
        payload = json.loads(text)
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        error = payload.get("error")
        for candidate in (
            error.get("message") if isinstance(error, dict) else error,
            payload.get("detail"),
            payload.get("message"),
        ):
            if candidate:
                text = candidate if isinstance(candidate, str) else json.dumps(candidate)
                break
    text = _one_line(text) or "(empty body)"
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 3] + "..."
