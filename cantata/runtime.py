"""Where a turn starts: `Cantata.run_turn()` checks, stores the message, runs the turn;
where a cut turn resumes, and where a person's approval of a tool call is decided.

A turn paused for approvals (`waiting`) holds nothing while it waits, however long: no
task, no session lease, no slot, and its agents' deadlines are not running. It is a row in
the store, so it survives any restart. Deciding its last pending approval makes it `running`
again in the same commit, and whoever decided resumes it (a crash in between: the next start
does). Meanwhile its session takes no new turn (SessionBusy): one turn at a time per session.

Everything that can be wrong with the input (pipeline, config, unreachable instance,
empty message, unknown session) is found before anything is written to the store.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cantata import killpoints
from cantata.compaction import compact_session, may_need_compaction
from cantata.config import DEFAULT_USER, InstancesConfig, cantata_home, database_url
from cantata.errors import AlreadyDecided, CantataError, SessionBusy, SessionConflict, StoreError, ToolError, UserError
from cantata.events import Event, EventBus, Listener
from cantata.leases import LeaseKeeper
from cantata.loader import Pipeline
from cantata.mcp_spec import McpServerSpec
from cantata.pool import Pool
from cantata.scheduler import Delivered, Services, TurnInput, TurnRunner
from cantata.store import Decided, Forgotten, SessionRow, StartedTurn, Store, TurnContext, open_store
from cantata.tools import Tool
from cantata.turn import TurnResult

if TYPE_CHECKING:
    from cantata.mcp_client import McpServers

# Removes what an application keeps under CANTATA_HOME for the rows a forget deleted (the
# factory: its turns' folders, the versions built from them); returns each folder it could
# not remove, with why. Applications hand theirs over (cantata/applications.py).
Forgetter = Callable[[Path, Forgotten], list[str]]


@dataclass
class Resumed:
    """What `resume_unfinished` did: the turns it finished, and why it left the others."""

    results: list[TurnResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def summary(self) -> str | None:
        """One line for a command to print, or None when there was nothing to resume."""
        if not self.results and not self.skipped:
            return None
        done = ", ".join(f"{r.turn_id} ({r.status})" for r in self.results)
        line = f"resumed {len(self.results)} unfinished turn(s)" + (f": {done}" if done else "")
        return line + (f"; left {len(self.skipped)}: {'; '.join(self.skipped)}" if self.skipped else "")


def _belongs_to(session: SessionRow, pipeline: Pipeline) -> None:
    """Refuse to run `pipeline` in a session another pipeline started."""
    if session.pipeline != pipeline.name:
        raise SessionConflict(
            f"session {session.id} belongs to pipeline '{session.pipeline}', not '{pipeline.name}'"
            f"; continue it with '{session.pipeline}' or start a new session"
        )


class Cantata:
    def __init__(
        self,
        config: InstancesConfig,
        *,
        home: Path | None = None,
        store: Store | None = None,
        pool: Pool | None = None,
        fence_writes: bool = False,
    ) -> None:
        """`fence_writes`: a turn's writes commit only while this runtime holds its session's
        lease (`Store.fence_turn`), for runtimes that may run a turn another took over (workers)."""
        self.config = config
        self.fence_writes = fence_writes
        self.home = home or cantata_home()
        # A pool passed in is shared (a scratch runtime on the same instances) and not closed here.
        self._owns_pool = pool is None
        self.pool = pool or Pool(config)
        self.bus = EventBus()
        self._store = store
        if store is not None:
            self.bus.attach(store)
        # Each turn's own listener, found by turn id: one bus listener for all of them, so
        # an event costs one call, not one per turn in flight (200 turns: 200x fewer).
        self._turn_listeners: dict[int, Listener] = {}
        self.bus.listen(self._to_turn_listener)
        self._background: set[asyncio.Task[bool]] = set()
        self._leases: LeaseKeeper | None = None
        self._mcp: McpServers | None = None  # agents' MCP servers, started on first use

    @property
    def store(self) -> Store:
        """Opened on first use, so that rejected input never creates or touches the database."""
        if self._store is None:
            self._store = open_store(self.home, database_url(self.config))
            self.bus.attach(self._store)
        return self._store

    @property
    def leases(self) -> LeaseKeeper:
        """One turn at a time per session, across processes (leases in the store)."""
        if self._leases is None:
            self._leases = LeaseKeeper(self.store)
        return self._leases

    async def check(self, pipeline: Pipeline) -> None:
        """Every alias bound to an instance, and some instance answering (Pool.check)."""
        await self.pool.check(sorted({a.model for a in pipeline.spec.agents if not a.is_function}))

    async def session_for(self, pipeline: Pipeline, *, user: str, session_id: str | None) -> SessionRow:
        """The session to continue, or a new one (stored with its first turn)."""
        if session_id is None:
            return self.store.new_session(user, pipeline.name)
        session = await self.store.get_session(session_id)
        if session is None or session.user_id != user:
            raise UserError(f"no session '{session_id}' for user '{user}'")
        _belongs_to(session, pipeline)
        return session

    async def run_turn(
        self,
        pipeline: Pipeline,
        message: str,
        *,
        user: str = DEFAULT_USER,
        session_id: str | None = None,
        on_event: Listener | None = None,
        options: dict[str, Any] | None = None,
        wait: bool = True,
        traceparent: str | None = None,
    ) -> TurnResult:
        """One turn of `pipeline` on `message`; `options` reach its functions as ctx.options.
        While another turn of the session runs (here or in another process), it waits for
        it, or with `wait=False` raises SessionBusy. `traceparent`: the W3C trace context
        its span goes under, when another process asked for it (telemetry.py)."""
        session = await self._checked_session(pipeline, message, user=user, session_id=session_id)
        async with self.leases.hold(session.id, wait=wait):
            # A turn of the session left running (cut, and not resumed at start: its instance
            # was still loading, say) finishes first, so no turn stays unfinished behind this one.
            left = await self.store.running_turns(session.id) if session_id is not None else []
            for turn_id in left:
                await self._resume_held(pipeline, turn_id, None)
            waiting = await self.store.approvals(session_id=session.id, pending=True) if session_id else []
            if waiting:
                raise SessionBusy(
                    f"turn {waiting[0].turn_id} of session {session.id} waits for a person to approve or deny"
                    f" {waiting[0].tool} (approval {waiting[0].id}); decide it first"
                )
            started = await self.store.start_turn(
                session, message, new_session=session_id is None, memory=pipeline.memory_agents
            )
            killpoints.reached("after_message")
            return await self._run(
                pipeline,
                session,
                started.id,
                started.number,
                message,
                on_event,
                context=started.context,
                options=options,
                traceparent=traceparent,
            )

    async def _checked_session(
        self, pipeline: Pipeline, message: str, *, user: str, session_id: str | None
    ) -> SessionRow:
        """The turn's input checked, its instances asked, its session found (or a new one)."""
        if not message.strip():
            raise UserError("the message is empty")
        if not user.strip():
            raise UserError("the user id is empty")
        for what, text in (("message", message), ("user id", user), ("session id", session_id or "")):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise UserError(f"the {what} is not valid text (at character {exc.start})") from exc
        await self.check(pipeline)
        return await self.session_for(pipeline, user=user, session_id=session_id)

    async def store_turn(
        self, pipeline: Pipeline, message: str, *, user: str = DEFAULT_USER, session_id: str | None = None
    ) -> tuple[SessionRow, StartedTurn]:
        """Check and store a turn without running it, for a worker to run (`resume` runs a
        stored turn): what a server does when workers run its turns (cantata/turn_queue.py)."""
        session = await self._checked_session(pipeline, message, user=user, session_id=session_id)
        started = await self.store.start_turn(
            session, message, new_session=session_id is None, memory=pipeline.memory_agents
        )
        killpoints.reached("after_message")
        return session, started

    async def resume(
        self,
        pipeline: Pipeline,
        turn_id: int,
        *,
        on_event: Listener | None = None,
        wait: bool = False,
        traceparent: str | None = None,
    ) -> TurnResult:
        """Finish a turn interrupted by a crash, without rerunning agents that already wrote
        and without publishing again what it had published (`turn_started`, the early reply):
        its readers see it go on (`turn_resumed`). A turn that a live process is running
        raises SessionBusy (with `wait`, waits for it, then finds it finished).
        `traceparent` as for `run_turn`."""
        found = await self.store.unfinished_turn(turn_id)
        if found is None:
            raise UserError(f"turn {turn_id} is not an unfinished turn")
        _belongs_to(found.session, pipeline)
        await self.check(pipeline)
        async with self.leases.hold(found.session.id, wait=wait):
            return await self._resume_held(pipeline, turn_id, on_event, traceparent)

    async def _resume_held(
        self, pipeline: Pipeline, turn_id: int, on_event: Listener | None, traceparent: str | None = None
    ) -> TurnResult:
        """`resume`'s work, once its session's lease is held here."""
        found = await self.store.unfinished_turn(turn_id)  # its runner may have finished it meanwhile
        if found is None:
            raise UserError(f"turn {turn_id} is not an unfinished turn")
        session, number, message = found
        context = await self.store.turn_context(session, turn_id, pipeline.memory_agents)
        events, turn = await asyncio.gather(self.store.events(turn_id), self.store.get_turn(turn_id))
        delivered = Delivered.of(events, turn.replies if turn else [])
        return await self._run(
            pipeline,
            session,
            turn_id,
            number,
            message,
            on_event,
            context=context,
            delivered=delivered,
            traceparent=traceparent,
        )

    async def resume_unfinished(
        self,
        pipeline_of: Callable[[SessionRow], Pipeline | None],
        *,
        session_id: str | None = None,
        on_event: Listener | None = None,
    ) -> Resumed:
        """Resume every turn left running (of one session, if given) whose session
        `pipeline_of` gives a pipeline for: sessions at once, each one's turns oldest first.
        A turn a live process is running is left to it. What a command calls at start, so
        that no crashed turn stays unfinished."""
        by_session: dict[str, list[tuple[int, Pipeline]]] = {}
        for turn_id in await self.store.running_turns(session_id):
            found = await self.store.unfinished_turn(turn_id)
            pipeline = pipeline_of(found.session) if found is not None else None
            if found is not None and pipeline is not None:
                by_session.setdefault(found.session.id, []).append((turn_id, pipeline))
        resumed = Resumed()

        async def one_session(turns: list[tuple[int, Pipeline]]) -> None:
            for turn_id, pipeline in turns:
                try:
                    resumed.results.append(await self.resume(pipeline, turn_id, on_event=on_event))
                except SessionBusy as exc:
                    resumed.skipped.append(f"turn {turn_id}: {exc}")
                    return  # its session is someone else's now: its later turns are too
                except CantataError as exc:  # e.g. its instance is down: it stays resumable
                    resumed.skipped.append(f"turn {turn_id}: {exc}")

        await asyncio.gather(*(one_session(turns) for turns in by_session.values()))
        return resumed

    async def _run(
        self,
        pipeline: Pipeline,
        session: SessionRow,
        turn_id: int,
        number: int,
        message: str,
        on_event: Listener | None,
        *,
        context: TurnContext,
        delivered: Delivered | None = None,
        options: dict[str, Any] | None = None,
        traceparent: str | None = None,
    ) -> TurnResult:
        if on_event is not None:
            self._turn_listeners[turn_id] = on_event
        if self.fence_writes:
            self.store.fence_turn(turn_id, session.id, self.leases.holder)
        try:
            turn = TurnInput(
                pipeline=pipeline,
                session=session,
                turn_id=turn_id,
                number=number,
                message=message,
                context=context,
                resumed=delivered is not None,
                delivered=delivered or Delivered(),
                options=options or {},
                traceparent=traceparent,
            )
            services = Services(pool=self.pool, store=self.store, bus=self.bus, host=self)
            runner = TurnRunner(turn, services, runtime=self)
            result = await runner.run()
        finally:
            self._turn_listeners.pop(turn_id, None)
            if self.fence_writes:
                self.store.fence_turn(turn_id, session.id, None)
        if result.status == "waiting":
            row = await self.store.get_turn(turn_id)
            if row is not None and row.status == "running":  # decided while it was pausing: it goes on
                return await self._resume_held(pipeline, turn_id, on_event, traceparent)
        # After delivery, off the critical path: fold old turns into the summary if needed.
        reply = result.final.text if result.final else result.early.text if result.early else ""
        if may_need_compaction(runner.briefing, reply, pipeline.spec.budget):
            task = asyncio.create_task(compact_session(self.store, self.pool, pipeline, session))
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        return result

    async def decide(self, approval_id: int, *, approved: bool, reason: str | None = None, by: str) -> Decided:
        """Approve or deny a pending approval, once (AlreadyDecided after). When it was its
        turn's last, the turn is `running` again: resume it (`resumable`) with `resume`."""
        decided = await self.store.decide_approval(approval_id, approved=approved, reason=reason, by=by)
        if decided is None:
            found = await self.store.approvals(approval_id=approval_id)
            if not found:
                raise UserError(f"no approval {approval_id}")
            raise AlreadyDecided(f"approval {approval_id} was {found[0].status} already, by {found[0].decided_by}")
        approval = decided.approval
        turn = await self.store.get_turn(approval.turn_id)
        at_s = time.time() - turn.started_at if turn is not None else 0.0
        self.bus.publish(
            Event(
                "approval_decided",
                approval.turn_id,
                approval.session_id,
                at_s,
                approval.agent,
                {
                    "approval": approval.id,
                    "status": approval.status,
                    "reason": reason,
                    "by": by,
                    "tool": approval.tool,
                    **({"iteration": approval.iteration} if approval.iteration else {}),
                },
                user_id=approval.user_id,
            )
        )
        return decided

    def _to_turn_listener(self, event: Event) -> None:
        listener = self._turn_listeners.get(event.turn_id)
        if listener is not None:
            listener(event)

    def scratch(self, home: Path) -> Cantata:
        """A runtime on the same instances with its own store under `home`: for turns that
        are not the user's (the factory's tester trying out the agent it is making)."""
        return Cantata(self.config, home=home, pool=self.pool)

    async def settle(self) -> None:
        """Wait for background work (compaction) to finish."""
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    async def forget_user(self, user_id: str, forgetters: Iterable[Forgetter] = ()) -> Forgotten:
        """Delete everything kept about the user: their rows in one transaction, then the
        files the `forgetters` keep for those rows. A folder that cannot go is reported, not
        hidden: the rows are gone by then, so the error names it for removal by hand."""
        await self.settle()  # a compaction in flight would write after the delete
        forgotten = await self.store.forget_user(user_id)
        left = [folder for forget in forgetters for folder in await asyncio.to_thread(forget, self.home, forgotten)]
        if left:
            raise StoreError(
                f"deleted the stored data of '{user_id}', but could not remove {len(left)} folder(s) under"
                f" CANTATA_HOME: {'; '.join(left)}; remove them by hand"
            )
        return forgotten

    async def mcp_tools(self, spec: McpServerSpec) -> list[Tool]:
        """The tools an MCP server offers, the server started on first use (once per runtime,
        reused across turns, started again if it died, stopped on close). Raises ToolError."""
        if self._mcp is None:
            try:
                from cantata.mcp_client import McpServers
            except ImportError as exc:  # the `mcp` extra is not installed
                raise ToolError(
                    f"MCP server '{spec.label}' cannot be used: {exc}; pip install 'cantata[mcp]'"
                ) from None
            self._mcp = McpServers()
        return list(await self._mcp.server(spec).tools())

    async def close(self) -> None:
        await self.settle()
        if self._mcp is not None:
            await self._mcp.close()
        if self._owns_pool:
            await self.pool.close()
        if self._store is not None:
            await self._store.close()
