"""An OpenAI-compatible server on loopback that misbehaves on demand: a real HTTP server
in a thread of the test process, so that the backend meets real sockets, real streams cut
short and real waits.

Each base URL `{root}/{route}/v1` is one instance's server, and answers as its route says:
one behaviour always (a route named after a behaviour, `server.url("503")`), a sequence
(`server.serve("flaky", "503", "503", "ok")`: the last repeats; set again to change it
mid-test), or a random mix (`server.mix("noisy", rate=0.2)`). `GET .../models`, the check
before a turn, answers ok unless the route says otherwise (`models="503"`: a dead server).

Behaviours:
  ok          a well-formed streamed reply; for a schema, an object valid against it
  drip        the ok reply, one small piece every `drip_s`: slow, but always progressing
  hang        accept the request and never answer
  500, 503    an error status with OpenAI's error body
  429         Too Many Requests with `Retry-After: {retry_after}`
  401         Unauthorized (a wrong key: retrying cannot help)
  cut         a few pieces of the reply, then the connection closed mid-stream
  garbage     an event whose data is not JSON
  invalid     a reply that is not valid JSON
  off-schema  valid JSON that breaks the schema asked for
  empty       a stream with no content at all
  flood       megabytes of content, max_tokens ignored (stream)
  flood-json  the same as one JSON body (stream ignored)
  think       reasoning that never ends
A refused connection needs no server: `refused_url()`.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, Self, get_args

from cantata.backends.scripted import sample
from tests.helpers.servers import free_port

Behaviour = Literal[
    "ok",
    "drip",
    "hang",
    "500",
    "503",
    "429",
    "401",
    "cut",
    "garbage",
    "invalid",
    "off-schema",
    "empty",
    "flood",
    "flood-json",
    "think",
]
BEHAVIOURS: tuple[Behaviour, ...] = get_args(Behaviour)
# What a flaky instance does now and then: every fault but those that cost megabytes a call.
MIXED_FAULTS: tuple[Behaviour, ...] = tuple(b for b in BEHAVIOURS if b not in ("ok", "flood", "flood-json"))

FLOOD_BYTES = 8 * 1024 * 1024
FLOOD_PIECE = "All work and no play makes Jack a dull boy. "  # 44 bytes a delta
TEXT_REPLY = "Fine, and thank you for asking."


def refused_url() -> str:
    """A base URL where nothing listens: every connection is refused."""
    return f"http://127.0.0.1:{free_port()}/v1"


class _Route:
    """What one route answers, request after request."""

    def __init__(self, plan: Callable[[], Behaviour], models: Behaviour) -> None:
        self.plan = plan
        self.models = models  # how it answers GET /models
        self.bodies: list[dict[str, Any]] = []  # the chat requests it received
        self.gets = 0


class FaultyServer:
    def __init__(self, *, retry_after: float = 1.0, drip_s: float = 0.02) -> None:
        self.retry_after = retry_after
        self.drip_s = drip_s
        self.stopping = threading.Event()  # releases every hanging request
        self._routes: dict[str, _Route] = {}
        self._lock = threading.Lock()
        self._http = _Server(("127.0.0.1", 0), _Handler)
        self._http.faulty = self
        self.root = f"http://127.0.0.1:{self._http.server_address[1]}"
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stopping.set()
        self._http.shutdown()
        self._http.server_close()

    # -- routes ------------------------------------------------------------------------

    def url(self, route: str) -> str:
        return f"{self.root}/{route}/v1"

    def serve(self, route: str, *behaviours: Behaviour, models: Behaviour = "ok") -> str:
        """The route answers with `behaviours` in turn, the last one from then on."""
        queue = list(behaviours)

        def plan() -> Behaviour:
            return queue.pop(0) if len(queue) > 1 else queue[0]

        return self._set(route, plan, models)

    def mix(self, route: str, *, rate: float, faults: tuple[Behaviour, ...] = MIXED_FAULTS, seed: int = 0) -> str:
        """The route answers ok, or with one of `faults` at `rate`, at random (seeded)."""
        rng = random.Random(seed)

        def plan() -> Behaviour:
            return rng.choice(faults) if rng.random() < rate else "ok"

        return self._set(route, plan, "ok")

    def _set(self, route: str, plan: Callable[[], Behaviour], models: Behaviour) -> str:
        with self._lock:
            old = self._routes.get(route)
            self._routes[route] = new = _Route(plan, models)
            if old is not None:  # counts go on across a change of behaviour
                new.bodies, new.gets = old.bodies, old.gets
        return self.url(route)

    def route(self, name: str) -> _Route:
        with self._lock:
            found = self._routes.get(name)
            if found is None and name in BEHAVIOURS:
                always: Behaviour = name
                found = self._routes[name] = _Route(lambda: always, "ok")
            if found is None:
                raise KeyError(f"no route {name!r}")
            return found

    def requests(self, route: str) -> int:
        """Requests the route received: model listings and chat completions."""
        found = self.route(route)
        return found.gets + len(found.bodies)

    def bodies(self, route: str) -> list[dict[str, Any]]:
        return self.route(route).bodies


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # many turns connect at once: none must wait for a SYN retry
    faulty: FaultyServer


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return None

    @property
    def faulty(self) -> FaultyServer:
        return self.server.faulty

    def _route(self) -> _Route | None:
        name = self.path.strip("/").split("/", 1)[0]
        try:
            return self.faulty.route(name)
        except KeyError:
            self._error(404, f"no route {name!r}")
            return None

    def do_GET(self) -> None:
        route = self._route()
        if route is None:
            return
        with self.faulty._lock:
            route.gets += 1
            behaviour = route.models
        if behaviour == "hang":
            self.faulty.stopping.wait()
        elif behaviour in ("500", "503", "429", "401"):
            self._status(behaviour)
        else:
            self._send(200, json.dumps({"object": "list", "data": [{"id": "faulty"}]}).encode())

    def do_POST(self) -> None:
        route = self._route()
        if route is None:
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        except (ValueError, ConnectionResetError):
            return  # the client gave up while sending (its deadline): nothing to answer
        with self.faulty._lock:
            route.bodies.append(body)
            behaviour = route.plan()
        try:
            self._answer(behaviour, body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading: as it should past its cap or its deadline

    def _answer(self, behaviour: Behaviour, body: dict[str, Any]) -> None:
        if behaviour == "hang":
            self.faulty.stopping.wait()
        elif behaviour in ("500", "503", "429", "401"):
            self._status(behaviour)
        elif behaviour == "flood-json":
            reply = {
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "x" * FLOOD_BYTES}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": FLOOD_BYTES},
            }
            self._send(200, json.dumps(reply).encode())
        else:
            self._stream(behaviour, body)

    def _stream(self, behaviour: Behaviour, body: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        if behaviour == "garbage":
            self._event("this is not JSON {")
            return
        if behaviour in ("flood", "think"):
            field = "content" if behaviour == "flood" else "reasoning_content"
            for _ in range(FLOOD_BYTES // len(FLOOD_PIECE)):
                if self.faulty.stopping.is_set():
                    return
                self._event(_delta({field: FLOOD_PIECE}))
            self._event("[DONE]")
            return
        wrong = {
            "invalid": '{"mood": "good", "reply": "cut in the mid',
            "off-schema": '{"unexpected": true}',
            "empty": "",
        }
        text = wrong[behaviour] if behaviour in wrong else _reply(body)
        pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
        if behaviour == "cut":
            pieces = pieces[: max(1, len(pieces) // 3)]
        for piece in pieces:
            if behaviour == "drip":
                time.sleep(self.faulty.drip_s)
            self._event(_delta({"content": piece}))
        if behaviour == "cut":
            return  # the connection closes with no finish, no usage, no [DONE]
        self._event(_delta({}, finish="stop"))
        usage = {"prompt_tokens": 20, "completion_tokens": len(pieces)}
        self._event({"object": "chat.completion.chunk", "choices": [], "usage": usage})
        self._event("[DONE]")

    def _event(self, data: dict[str, Any] | str) -> None:
        text = data if isinstance(data, str) else json.dumps(data)
        self.wfile.write(f"data: {text}\n\n".encode())
        self.wfile.flush()

    def _status(self, behaviour: Behaviour) -> None:
        status = int(behaviour)
        headers = {"Retry-After": f"{self.faulty.retry_after:g}"} if status == 429 else {}
        self._error(status, f"faulty server: {behaviour}", headers)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        error = {"error": {"message": message, "type": "server_error", "code": status}}
        self._send(status, json.dumps(error).encode(), headers)

    def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


def _delta(delta: dict[str, Any], *, finish: str | None = None) -> dict[str, Any]:
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _reply(body: dict[str, Any]) -> str:
    """A good reply to `body`: an object valid against its schema, if it asks for one."""
    response_format = body.get("response_format") or {}
    schema = response_format.get("schema") or (response_format.get("json_schema") or {}).get("schema")
    return json.dumps(sample(schema, schema, "reply")) if schema else TEXT_REPLY
