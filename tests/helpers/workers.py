"""Servers and workers as a user runs them, on one PostgreSQL: `cantata serve --workers queue`
and `cantata worker` subprocesses over scripted instances and the kill tests' `durable`
pipeline; sessions of turns sent through the servers over HTTP, at once; and what the store
holds afterwards, read with psycopg. The kill test (tests/test_workers_kill.py) and
bench/workers.py use it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg

from tests.helpers.kills import PIPELINE, message, once_problems, read_store
from tests.helpers.pipelines import WriteFile, scripted_config
from tests.helpers.servers import CantataServer, terminate
from tests.helpers.sse import parse

TURN_S = 120.0  # a turn not delivered by then has hung: the run fails, it does not wait for ever
# How long the other servers' streams of the turns may go on once every turn's own stream has ended.
ELSEWHERE_S = 10.0


def fleet_config(folder: Path, url: str | None, *, latency_s: float) -> Path:
    """One scripted instance serving every alias; the state on `url` (None: SQLite)."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "instances.yaml"
    database = f"database: {json.dumps(url)}\n" if url else ""
    config.write_text(f"instances:\n  - name: s\n    backend: scripted\n    latency_s: {latency_s}\n{database}")
    return config


def pg_config(write: WriteFile, url: str, **fast: object) -> Path:
    """One scripted instance, `fast` (its options: `fast`, default a 10 ms latency), the state on `url`."""
    path = scripted_config(write, fast=fast or {"latency_s": 0.01})
    path.write_text(path.read_text() + f"database: {json.dumps(url)}\n")
    return path


class WorkerProcess:
    """`cantata worker` in a subprocess: started on enter, SIGTERM on exit (SIGKILL with `kill`)."""

    def __init__(self, folder: Path, config: Path, *, concurrency: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.log = folder / "worker.log"
        self.command = [sys.executable, "-m", "cantata", "worker", "--config", str(config)]
        self.command += ["--pipeline", str(PIPELINE), "--concurrency", str(concurrency)]
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> WorkerProcess:
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
        return self

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def __exit__(self, *exc: object) -> None:
        terminate(self.process)

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


@dataclass
class Fleet:
    servers: list[CantataServer]
    workers: list[WorkerProcess]

    def logs(self) -> str:
        return "\n".join([*(s.log() for s in self.servers), *(w.output() for w in self.workers)])


@contextmanager
def fleet(folder: Path, url: str, *, servers: int, workers: int, latency_s: float, concurrency: int) -> Iterator[Fleet]:
    """`servers` servers queueing turns and `workers` workers running them, on `url`."""
    config = fleet_config(folder, url, latency_s=latency_s)
    with ExitStack() as stack:
        # Workers first: the first to open the database installs its schema, the others wait for it.
        started_workers = [
            stack.enter_context(WorkerProcess(folder / f"worker-{i}", config, concurrency=concurrency))
            for i in range(workers)
        ]
        started_servers = []
        for i in range(servers):
            (folder / f"serve-{i}").mkdir(parents=True, exist_ok=True)
            args = ["--workers", "queue", "--config", str(config), "--pipeline", str(PIPELINE)]
            started_servers.append(stack.enter_context(CantataServer(folder / f"serve-{i}", *args, stderr_apart=True)))
        yield Fleet(started_servers, started_workers)


def kill_mid_turn(url: str, worker: WorkerProcess, *, after_turns: int) -> list[float]:
    """In a thread: once `after_turns` turns are finished and `worker` holds the lease of a
    session whose running turn has started (its `turn_started` is stored), SIGKILL it, so
    that the kill surely cuts a turn another worker must take over. Returns the list the
    kill's wall-clock time is appended to."""
    killed: list[float] = []
    assert worker.process is not None
    holder = f"%/{worker.process.pid}/%"

    def watch() -> None:
        with psycopg.connect(url, autocommit=True) as db:
            deadline = time.monotonic() + TURN_S
            while time.monotonic() < deadline:
                (finished,) = db.execute("SELECT COUNT(*) FROM turns WHERE status <> 'running'").fetchone() or (0,)
                (cut,) = db.execute(
                    "SELECT COUNT(*) FROM session_leases l JOIN turns t ON t.session_id = l.session_id"
                    " AND t.status = 'running' JOIN events e ON e.turn_id = t.id AND e.type = 'turn_started'"
                    " WHERE l.holder LIKE %s",
                    (holder,),
                ).fetchone() or (0,)
                if finished >= after_turns and cut:
                    worker.kill()
                    killed.append(time.time())
                    return
                time.sleep(0.02)

    threading.Thread(target=watch, daemon=True).start()
    return killed


@dataclass
class Sent:
    """A turn as its client saw it."""

    server: int  # the index of the server it was sent to
    text: str  # the user's message
    session: str
    turn_id: int
    seconds: float  # from the request to the stream's end
    merged: str  # the merged reply, as streamed
    following: asyncio.Task[list[str]] | None = None  # its events' types, streamed from the other server
    elsewhere: list[str] = field(default_factory=list)  # ...once that stream ended (or why not)


async def one_turn(
    http: httpx.AsyncClient, urls: list[str], server: int, text: str, session: str | None, *, follow: bool
) -> Sent:
    """A turn sent to `urls[server]` with `stream`; from the moment it started, with `follow`,
    its events are followed from the next server too: a worker runs it, neither server does."""
    body = {"model": "durable", "messages": [{"role": "user", "content": text}], "stream": True}
    headers = {"X-Cantata-Session": session} if session else {}
    t0 = time.monotonic()
    async with http.stream("POST", f"{urls[server]}/v1/chat/completions", json=body, headers=headers) as response:
        if response.status_code != 200:
            raise AssertionError(f"server {server} answered {response.status_code}: {await response.aread()!r}")
        turn_id = int(response.headers["X-Cantata-Turn"])
        other = urls[(server + 1) % len(urls)]
        following = asyncio.create_task(_turn_events(http, other, turn_id)) if follow else None
        text_out = (await response.aread()).decode()
    seconds = time.monotonic() - t0
    merged = ""
    for event in parse(text_out):
        if event.data and event.data != "[DONE]":
            chunk = event.json()
            if chunk.get("cantata", {}).get("phase") == "merged":
                merged += chunk["choices"][0]["delta"].get("content") or ""
    return Sent(server, text, response.headers["X-Cantata-Session"], turn_id, seconds, merged, following=following)


async def _turn_events(http: httpx.AsyncClient, url: str, turn_id: int) -> list[str]:
    response = await http.get(f"{url}/api/turns/{turn_id}/events")
    return [event.event for event in parse(response.text) if event.event]


async def send_sessions(urls: list[str], *, sessions: int, turns: int, follow: bool = True) -> list[Sent]:
    """`sessions` sessions at once, each a first turn, then its other `turns - 1` turns at once,
    queued behind each other, each turn through the next server in turn (`one_turn`)."""
    sent: list[Sent] = []

    async def session(n: int, http: httpx.AsyncClient) -> None:
        first = await one_turn(http, urls, n % len(urls), message(n * turns), None, follow=follow)
        sent.append(first)

        async def later(i: int) -> None:
            turn = await one_turn(http, urls, (n + i) % len(urls), message(n * turns + i), first.session, follow=follow)
            sent.append(turn)

        await asyncio.gather(*(later(i) for i in range(1, turns)))

    # A new connection per request: one kept alive through a long takeover may be closed by
    # the server (uvicorn's keep-alive timeout) just as it is used again, a ReadError.
    limits = httpx.Limits(max_connections=4 * sessions, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=TURN_S, limits=limits) as http:
        await asyncio.gather(*(session(n, http) for n in range(sessions)))
        following = [turn.following for turn in sent if turn.following is not None]
        if following:
            await asyncio.wait(following, timeout=ELSEWHERE_S)
        for turn in sent:
            if turn.following is None:
                continue
            if not turn.following.done():
                turn.following.cancel()
                turn.elsewhere = ["(still open)"]
            elif (error := turn.following.exception()) is not None:
                turn.elsewhere = [f"(failed: {error!r})"]  # the failure, named in the test's message
            else:
                turn.elsewhere = turn.following.result()
    return sent


@dataclass
class Stored:
    turns: dict[int, str]  # id -> status
    problems: list[str]
    resumed: list[tuple[int, float]]  # turns taken over by another worker, with when (wall clock)
    asked: Counter[str]  # each user message stored, with how many times


def check_store(url: str) -> Stored:
    """`once_problems` of the whole store (the blackboard refuses a second entry: a second
    `agent_finished` would be an agent run again after it had written), and the turns taken
    over by another worker."""
    with psycopg.connect(url) as db:
        rows = read_store(db)
        asked = Counter(text for (text,) in db.execute("SELECT content FROM messages WHERE role = 'user'"))
    resumed = [(turn_id, float(wall)) for _, turn_id, kind, _, _, wall in rows.events if kind == "turn_resumed"]
    return Stored(rows.turns, once_problems(rows, finished=True), resumed, asked)
