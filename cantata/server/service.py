"""The serving layer: everything a route does, over the library and the store.

Routes parse, call one method here and return its answer; this module owns the
runtime's turns (a turn is a task of its own, so a client that goes away does not cancel
it), the per-session order and session matching; its read side, with who may see what,
is `Reads` (reads.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cantata import bundled as bundled_pipelines
from cantata.errors import SessionBusy, UserError
from cantata.events import Event
from cantata.loader import Pipeline, load_pipeline
from cantata.runtime import Cantata, Resumed
from cantata.server.errors import HTTPError
from cantata.server.event_stream import event_stream
from cantata.server.keys import Principal
from cantata.server.metrics import Metrics
from cantata.server.protocol import Deleted, ModelCard, ModelList
from cantata.server.reads import Reads
from cantata.server.sessions import SessionIndex, SessionLocks
from cantata.turn import TurnResult

log = logging.getLogger("cantata.server")


@dataclass
class TurnHandle:
    """A turn started by the server: its task, and its events as they happen."""

    pipeline: Pipeline
    principal: Principal
    owners: dict[int, str]
    events: asyncio.Queue[Event | None] = field(default_factory=asyncio.Queue)
    started: asyncio.Future[Event] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    task: asyncio.Task[TurnResult] | None = None

    def on_event(self, event: Event) -> None:
        if event.type == "turn_started" and not self.started.done():
            # Known before the event is committed, so the live event filter can place it.
            self.owners[event.turn_id] = self.principal.user
            self.started.set_result(event)
        self.events.put_nowait(event)

    async def wait_started(self) -> Event:
        """The turn's first event, or the error that kept it from starting (bad session,
        unreachable instance), raised here so the route answers with its status."""
        assert self.task is not None
        waits: list[asyncio.Future[Any]] = [self.started, self.task]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if self.started.done():
            return self.started.result()
        self.task.result()  # raises the turn's error
        raise HTTPError(500, "the turn ended before it started")


class Service(Reads):
    def __init__(self, runtime: Cantata, *, extra_pipelines: Iterable[Path] = ()) -> None:
        pipelines: dict[str, Pipeline] = {}
        for name, path in bundled_pipelines.bundled().items():
            pipelines[name] = load_pipeline(path)
        for path in extra_pipelines:
            pipeline = load_pipeline(path)
            pipelines[pipeline.name] = pipeline
        super().__init__(runtime, pipelines)
        self.index = SessionIndex()
        self.locks = SessionLocks()
        self.running: set[asyncio.Task[TurnResult]] = set()
        self.owners: dict[int, str] = {}  # turn id -> user, for the turns run here (live event filter)
        self.metrics = Metrics(runtime.pool, lambda: len(self.running))
        self.started_at = time.time()
        self.resuming: asyncio.Task[Resumed] | None = None
        self.stopping_since: float | None = None  # shutting down (monotonic): no new turn starts

    async def resume_unfinished(self) -> Resumed:
        """At start: finish the turns a crash left running, each as the server runs its own
        (SSE subscribers of its user see it go on); new turns of their sessions wait."""
        return await self.runtime.resume_unfinished(
            lambda session: self.pipelines.get(session.pipeline),
            on_event=self._own,
        )

    def _own(self, event: Event) -> None:
        """A resumed turn's events reach its user's live streams (the filter places them)."""
        self.owners.setdefault(event.turn_id, event.user_id)

    # -- turns ----------------------------------------------------------------------------

    async def start_turn(
        self,
        principal: Principal,
        pipeline: Pipeline,
        message: str,
        *,
        session_id: str | None,
        history: list[tuple[str, str]],
        reject_if_busy: bool,
    ) -> TurnHandle:
        """Start a turn and return once it has started (or raise why it could not)."""
        if self.stopping_since is not None:
            raise HTTPError(503, "the server is shutting down; retry on its successor", code="shutting_down")
        if session_id is not None:
            session = await self.store.get_session(session_id)
            if session is None or (session.user_id != principal.user):
                raise HTTPError(404, f"no session '{session_id}'", code="session_not_found")
            # A session of another pipeline is refused where every turn starts (Cantata.run_turn).
        else:
            session_id = await self.index.match(
                self.store, user=principal.user, pipeline=pipeline.name, history=history
            )
        if session_id is not None and reject_if_busy and self.locks.busy(session_id):
            raise HTTPError(409, f"session {session_id} is running a turn; retry when it is done", code="session_busy")
        handle = TurnHandle(pipeline=pipeline, principal=principal, owners=self.owners)
        asked = [u for u, _ in history] + [message]
        handle.task = asyncio.create_task(self._turn(handle, message, session_id, asked, reject_if_busy))
        self.running.add(handle.task)
        handle.task.add_done_callback(self._finished)
        handle.task.add_done_callback(lambda _: handle.events.put_nowait(None))
        await handle.wait_started()
        return handle

    async def _turn(
        self, handle: TurnHandle, message: str, session_id: str | None, asked: list[str], reject: bool
    ) -> TurnResult:
        user = handle.principal.user
        if session_id is not None:
            async with self.locks.hold(session_id, reject=reject):
                try:
                    result = await self.runtime.run_turn(
                        handle.pipeline,
                        message,
                        user=user,
                        session_id=session_id,
                        on_event=handle.on_event,
                        wait=not reject,
                    )
                except SessionBusy as exc:  # another process runs a turn of it (or a resumed one here)
                    raise HTTPError(409, str(exc), code="session_busy") from exc
        else:
            claimed: list[tuple[str, asyncio.Future[None]]] = []

            def on_event(event: Event) -> None:
                # A new session is claimed the moment it exists, so a second message that
                # names it waits for this turn.
                if event.type == "turn_started":
                    claimed.append((event.session_id, self.locks.claim(event.session_id)[1]))
                handle.on_event(event)

            try:
                result = await self.runtime.run_turn(handle.pipeline, message, user=user, on_event=on_event)
            finally:
                for sid, mine in claimed:
                    self.locks.release(sid, mine)
        self.index.remember(user, handle.pipeline.name, asked, result.session)
        self.metrics.record(result)
        return result

    async def wait(self, handle: TurnHandle) -> TurnResult:
        """The turn's result; the turn goes on if the caller is cancelled (a client left)."""
        assert handle.task is not None
        return await asyncio.shield(handle.task)

    def _finished(self, task: asyncio.Task[TurnResult]) -> None:
        self.running.discard(task)
        if not task.cancelled() and task.exception() is None:
            # Its last events may still be on their way to the store (and the filter).
            turn_id = task.result().turn_id
            asyncio.get_running_loop().call_later(60.0, self.owners.pop, turn_id, None)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            if not isinstance(exc, (UserError, HTTPError)):
                log.error("a turn failed: %s", exc)

    def stop_accepting(self) -> None:
        """Shutdown began (SIGTERM): refuse new turns from now on; running ones go on."""
        if self.stopping_since is None:
            self.stopping_since = time.monotonic()

    async def drain(self, grace_s: float) -> None:
        """At shutdown: let running turns finish (and be stored) until `grace_s` after
        shutdown began, then cancel the rest. A cancelled turn stays `running` in the store,
        its session's lease given back: the next server resumes it where it stopped."""
        self.stop_accepting()
        assert self.stopping_since is not None
        tasks: list[asyncio.Task[Any]] = [*self.running, *([self.resuming] if self.resuming else [])]
        if not tasks:
            return
        left = max(0.0, self.stopping_since + grace_s - time.monotonic())
        _, pending = await asyncio.wait(tasks, timeout=left)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
            log.warning("left %d turn(s) unfinished at shutdown; the next start resumes them", len(pending))

    # -- what else the routes ask ---------------------------------------------------------

    def models(self) -> ModelList:
        created = int(self.started_at)
        return ModelList(
            data=[
                ModelCard(id=name, created=created, description=p.spec.description)
                for name, p in self.pipelines.items()
            ]
        )

    async def forget(self, principal: Principal, user: str | None) -> Deleted:
        """Delete everything stored about the user, and what this server remembers of them."""
        who = self.visible_user(principal, user)
        await self.runtime.settle()  # a compaction in flight would write after the delete
        deleted = await self.store.forget_user(who)
        self.index.forget_user(who)
        return Deleted(user=who, sessions_deleted=deleted)

    def events(self, seq: int, *, user_id: str | None, turn_id: int | None, follow: bool = True) -> AsyncIterator[str]:
        """The store's events after `seq`, then (with `follow`) the live tail, as SSE text."""
        return event_stream(
            self.runtime.bus, self.store, seq, owners=self.owners, user_id=user_id, turn_id=turn_id, follow=follow
        )
