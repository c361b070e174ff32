"""The serving layer: everything a route does, over the library and the store.

Routes parse, call one method here and return its answer; this module owns the
runtime's turns (a turn is a task of its own, so a client that goes away does not cancel
it), the per-session order and session matching; its read side, with who may see what,
is `Reads` (reads.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cantata import bundled as bundled_pipelines
from cantata import telemetry
from cantata.errors import AlreadyDecided, SessionBusy, StoreUnavailable, UserError, get_logger
from cantata.events import Event
from cantata.loader import Pipeline
from cantata.runtime import Cantata, Forgetter, Resumed
from cantata.server.errors import HTTPError
from cantata.server.event_stream import event_stream
from cantata.server.keys import Principal
from cantata.server.metrics import Metrics
from cantata.server.protocol import ApprovalDecision, ApprovalInfo, Deleted, ModelCard, ModelList
from cantata.server.queued import follow_turn, stored_result
from cantata.server.reads import Reads
from cantata.server.sessions import SessionIndex, SessionLocks
from cantata.store.event_feed import EventFeed
from cantata.turn import TurnResult

if TYPE_CHECKING:
    from cantata.turn_queue import TurnQueue

log = get_logger("cantata.server")


@dataclass
class TurnHandle:
    """A turn started by the server: its task, and its events as they happen."""

    pipeline: Pipeline
    principal: Principal
    events: asyncio.Queue[Event | None] = field(default_factory=asyncio.Queue)
    started: asyncio.Future[Event] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    task: asyncio.Task[TurnResult] | None = None

    def on_event(self, event: Event) -> None:
        if event.type == "turn_started" and not self.started.done():
            self.started.set_result(event)
        self.events.put_nowait(event)

    def queued(self, turn_id: int, session_id: str) -> None:
        """A turn stored and queued for the workers: its response starts now, before a worker
        does (which may be never: its stream then ends with why), its events as they come."""
        if not self.started.done():
            self.started.set_result(Event("turn_started", turn_id, session_id, 0.0, user_id=self.principal.user))

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


STOPPED = "the server stopped before the turn finished; it finishes when the server starts again"
# After a turn failed because the database stayed away: how often the server asks again
# whether it is back (doubling up to the longest), to resume what the outage left unfinished.
OUTAGE_RETRY_S = 1.0
OUTAGE_RETRY_LONGEST_S = 30.0


class Service(Reads):
    def __init__(
        self,
        runtime: Cantata,
        *,
        extra_pipelines: Iterable[Path] = (),
        grace_s: float = 30.0,
        announce: Callable[[str], None] = lambda line: None,
        forgetters: Iterable[Forgetter] = (),
        feed: EventFeed | None = None,
        queue: TurnQueue | None = None,
    ) -> None:
        """`grace_s`: at shutdown, how long running turns may take to finish; `announce`
        gets the lines an operator should see (turns resumed at start, left at shutdown);
        `forgetters` remove the files applications keep for a user who is forgotten; `feed`
        is what live event streams follow (`event_feed.event_feed`; the runtime's bus if none);
        with a `queue`, turns are stored and queued for workers, and followed from the store."""
        super().__init__(runtime, bundled_pipelines.served(extra_pipelines))
        self.index = SessionIndex()
        self.locks = SessionLocks()
        self.running: set[asyncio.Task[TurnResult]] = set()
        self.metrics = Metrics(runtime.pool, lambda: len(self.running))
        self.started_at = time.time()
        self.grace_s = grace_s
        self.announce = announce
        self.forgetters = list(forgetters)
        self.feed: EventFeed = feed or runtime.bus
        self.resuming: asyncio.Task[Resumed] | None = None
        self.stopping = False  # shutting down: no new turn starts
        self.stopped = asyncio.Event()  # the same, for what waits on it: live event streams end
        self._cut: asyncio.TimerHandle | None = None
        self.queue = queue

    def resume_unfinished(self) -> None:
        """At start, in the background: finish the turns a crash left running, each as the
        server runs its own (SSE subscribers of its user see it go on); new turns of their
        sessions wait for them. One line says what was resumed, once it is."""
        self.resuming = asyncio.create_task(self._resume())
        self.resuming.add_done_callback(self._resumed)

    async def _resume(self) -> Resumed:
        return await self.runtime.resume_unfinished(lambda session: self.pipelines.get(session.pipeline))

    def _resume_when_back(self) -> None:
        """A turn failed because the database stayed away longer than the store waits for it
        (StoreUnavailable): the turn is left running in the store. Once the database answers
        again, the turns the outage left are resumed here, as at start (one sweep at a time;
        a turn of the same session arriving first resumes it itself)."""
        if self.stopping or (self.resuming is not None and not self.resuming.done()):
            return
        self.resuming = asyncio.create_task(self._resume_after_outage())
        self.resuming.add_done_callback(self._resumed)

    async def _resume_after_outage(self) -> Resumed:
        pause = OUTAGE_RETRY_S
        while True:
            await asyncio.sleep(pause)
            try:
                return await self._resume()
            except StoreUnavailable:  # not back yet
                pause = min(2 * pause, OUTAGE_RETRY_LONGEST_S)

    def _resumed(self, task: asyncio.Task[Resumed]) -> None:
        if task.cancelled():
            return
        error = task.exception()
        line = f"could not resume the unfinished turns: {error}" if error else task.result().summary()
        if line is not None:
            self.announce(line)

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
        if self.stopping:
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
        handle = TurnHandle(pipeline=pipeline, principal=principal)
        asked = [u for u, _ in history] + [message]
        handle.task = asyncio.create_task(self._turn(handle, message, session_id, asked, reject_if_busy))
        self.running.add(handle.task)
        handle.task.add_done_callback(self._finished)
        handle.task.add_done_callback(lambda _: handle.events.put_nowait(None))
        started = await handle.wait_started()
        telemetry.mark_request(turn_id=started.turn_id, session_id=started.session_id, user_id=principal.user)
        return handle

    async def _turn(
        self, handle: TurnHandle, message: str, session_id: str | None, asked: list[str], reject: bool
    ) -> TurnResult:
        user = handle.principal.user
        if self.queue is not None:
            return await self._queued_turn(handle, message, session_id, asked, reject)
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

    async def _queued_turn(
        self, handle: TurnHandle, message: str, session_id: str | None, asked: list[str], reject: bool
    ) -> TurnResult:
        """A turn for the workers: stored, queued behind its session's queued turns, then
        its events followed from the store until it is delivered."""
        assert self.queue is not None
        user = handle.principal.user
        if session_id is not None and reject and await self.store.running_turns(session_id):
            raise HTTPError(409, f"session {session_id} is running a turn; retry when it is done", code="session_busy")
        session, started = await self.runtime.store_turn(handle.pipeline, message, user=user, session_id=session_id)
        job = await self.queue.enqueue(started.id, session.id, traceparent=telemetry.current_traceparent())
        handle.queued(started.id, session.id)
        watching = asyncio.create_task(self.queue.watch(job, started.id, self.store, self.runtime.leases))
        try:
            async for event in follow_turn(self.feed, self.store, started.id):
                handle.on_event(event)
        finally:
            watching.cancel()
        turn = await self.store.get_turn(started.id)
        assert turn is not None  # followed until its status was stored
        result = await stored_result(self.store, handle.pipeline, turn)
        self.index.remember(user, handle.pipeline.name, asked, result.session)
        self.metrics.record(result)
        return result

    async def wait(self, handle: TurnHandle) -> TurnResult:
        """The turn's result; the turn goes on if the caller is cancelled (a client left)."""
        assert handle.task is not None
        try:
            return await asyncio.shield(handle.task)
        except asyncio.CancelledError:
            if handle.task.cancelled():  # cut at shutdown, not the caller leaving
                raise HTTPError(503, STOPPED, code="shutting_down") from None
            raise

    async def decide(self, principal: Principal, approval_id: int, body: ApprovalDecision) -> ApprovalInfo:
        """Decide an approval the caller may see (404 otherwise; 409 once decided). The last
        pending one of its turn resumes the turn: queued for the workers when they run the
        turns, else here, in the background, as a turn of its own (a shutdown meanwhile
        leaves it to the next start)."""
        await self.approval(principal, approval_id)
        try:
            decided = await self.runtime.decide(
                approval_id, approved=body.decision == "approve", reason=body.reason, by=principal.user
            )
        except AlreadyDecided as exc:
            raise HTTPError(409, str(exc), code="approval_decided") from exc
        approval = decided.approval
        pipeline = self.pipelines.get(approval.pipeline)
        if decided.resumable and self.queue is not None:
            # The worker that takes the job resumes it; a server that ran it itself would hold
            # the session's lease outside the queue and do a worker's work on a serving process.
            await self.queue.enqueue(approval.turn_id, approval.session_id, traceparent=telemetry.current_traceparent())
        elif decided.resumable and pipeline is not None and not self.stopping:
            task = asyncio.create_task(self.runtime.resume(pipeline, approval.turn_id, wait=True))
            self.running.add(task)
            task.add_done_callback(self._finished)
        return ApprovalInfo.model_validate(approval.as_json())

    def _finished(self, task: asyncio.Task[TurnResult]) -> None:
        self.running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            if not isinstance(exc, (UserError, HTTPError)):
                log.error("a turn failed: %s", exc)
            if isinstance(exc, StoreUnavailable) and self.queue is None:  # else the workers' sweep does
                self._resume_when_back()

    def stop_accepting(self) -> None:
        """Shutdown began (SIGTERM): refuse new turns from now on; running ones have the
        grace to finish, then are cut (`_cut_turns`), so that their streams end in order
        before the HTTP server gives up on open connections."""
        if not self.stopping:
            self.stopping = True
            # Called from a signal handler too, which may interrupt the loop mid-step: only
            # the thread-safe call may touch it from there.
            asyncio.get_running_loop().call_soon_threadsafe(self._arm_cut)

    def _arm_cut(self) -> None:
        self.stopped.set()
        self._cut = asyncio.get_running_loop().call_later(self.grace_s, self._cut_turns)

    def _cut_turns(self) -> None:
        """Cancel the turns still running. A cancelled turn stays `running` in the store,
        its session's lease given back: the next start resumes it where it stopped."""
        tasks: list[asyncio.Task[Any]] = [*self.running, *([self.resuming] if self.resuming else [])]
        pending = [task for task in tasks if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            self.announce(f"left {len(pending)} turn(s) unfinished at shutdown; the next start resumes them")

    async def drain(self) -> None:
        """At shutdown: wait for the running turns, finished or cut at the grace."""
        self.stop_accepting()
        tasks: list[asyncio.Task[Any]] = [*self.running, *([self.resuming] if self.resuming else [])]
        if tasks:
            await asyncio.wait(tasks)
        if self._cut is not None:
            self._cut.cancel()

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
        try:
            forgotten = await self.runtime.forget_user(who, self.forgetters)
        finally:
            self.index.forget_user(who)
        return Deleted(user=who, sessions_deleted=forgotten.sessions)

    def events(self, seq: int, *, user_id: str | None, turn_id: int | None, follow: bool = True) -> AsyncIterator[str]:
        """The store's events after `seq`, then (with `follow`) the live tail, as SSE text."""
        return event_stream(
            self.feed, self.store, seq, user_id=user_id, turn_id=turn_id, follow_live=follow, stopping=self.stopped
        )
