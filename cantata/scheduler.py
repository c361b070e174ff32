"""One turn: every agent starts the moment the agents it reads have written.

No rounds: each agent is a task awaiting the futures of what it reads; the critical
path of the DAG is the only wait. A failed agent does not fail the turn: its readers
run with that input marked missing, unless they list it under `required`, in which
case they are skipped. An agent whose tool call waits for a person's approval pauses: it and
every agent after it stop without an entry, the others run to their end, and the turn is
`waiting` until the approvals are decided; then it resumes as a cut turn does. Outputs are committed in the order written, readers starting at
once (see `Store.write_entry`); the turn finishes once every output is committed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from cantata import killpoints, telemetry
from cantata.agent_tools import ToolHost, agent_tools
from cantata.blackboard import Blackboard
from cantata.context import FunctionContext, Runtime
from cantata.errors import (
    AwaitingApproval,
    BackendError,
    CantataError,
    OutputInvalid,
    Skip,
    StoreError,
)
from cantata.events import Event, EventBus, EventType
from cantata.loader import Pipeline
from cantata.model_call import ModelCall
from cantata.nodes import run_function
from cantata.pool import Pool
from cantata.prompts import Briefing, build_briefing, build_messages, reader_inputs
from cantata.spec import AgentSpec, LoopSpec
from cantata.store import ApprovalRow, EntryRow, SessionRow, Store, ToolCallRow, TurnContext
from cantata.structured import OutputContract, reply_text
from cantata.tool_loop import ToolLoop
from cantata.turn import (
    AgentResult,
    AgentStatus,
    Delivery,
    TurnResult,
    TurnStatus,
    is_agent_status,
    turn_quality,
)

UNTIL_TIMEOUT_S = 30.0
At = dict[str, int]  # where in the turn an event happened: {"iteration": n} inside a loop, else {}


@dataclass(frozen=True)
class Delivered:
    """What an interrupted turn had stored besides its entries, so that resuming it repeats
    none of it: its events, by (type, agent, iteration), and its replies, by agent."""

    events: frozenset[tuple[str, str | None, int]] = frozenset()
    replies: frozenset[str] = frozenset()

    @classmethod
    def of(cls, events: Iterable[Event], replies: Iterable[tuple[str, str]]) -> Delivered:
        return cls(
            events=frozenset((e.type, e.agent, e.data.get("iteration", 0)) for e in events),
            replies=frozenset(agent for agent, _ in replies),
        )

    def has(self, type: EventType, agent: str | None = None, iteration: int = 0) -> bool:
        return (type, agent, iteration) in self.events


@dataclass(frozen=True, kw_only=True)
class TurnInput:
    """Which turn runs, and what it starts from: all read from the store before it runs."""

    pipeline: Pipeline
    session: SessionRow
    turn_id: int  # the turn's id in the store
    number: int  # its number in the session, from 1
    message: str
    context: TurnContext  # memory, summary and recent turns, read with the turn's start
    resumed: bool = False  # an interrupted turn: agents that already wrote are not rerun
    delivered: Delivered = Delivered()  # ...and what it published is not published again
    options: dict[str, Any] = field(default_factory=dict)  # reach its functions as ctx.options
    traceparent: str | None = None  # the trace of whoever asked for it, in another process (telemetry.py)


@dataclass(frozen=True, kw_only=True)
class Services:
    """What every turn of a runtime shares."""

    pool: Pool
    store: Store
    bus: EventBus
    host: ToolHost | None = None  # MCP servers and sub-turns for agents' tools


class TurnRunner:
    def __init__(self, turn: TurnInput, services: Services, *, runtime: Runtime | None = None) -> None:
        self.turn = turn
        # Named on every event and in most steps of the turn.
        self.pipeline = turn.pipeline
        self.session = turn.session
        self.turn_id = turn.turn_id
        self.services = services
        self.runtime = runtime
        self.board = Blackboard(services.store, user_id=turn.session.user_id, turn_id=turn.turn_id)
        self.results = {name: AgentResult(name=name) for name in turn.pipeline.order}
        self.conflicts: list[dict[str, Any]] = []
        self.early: Delivery | None = None
        self.final: Delivery | None = None
        self._t0 = time.monotonic()
        self.briefing: Briefing | None = None  # built once per turn, shared by its agents
        self._memory: dict[str, Any] = {}
        self._calls: dict[str, ModelCall] = {}
        self._loops: dict[tuple[str, int], ToolLoop] = {}  # agents' tool loops, by agent and iteration
        self._writes: list[tuple[AgentResult, At, Awaitable[None]]] = []  # entries queued, in order
        self._done: dict[str, asyncio.Future[None]] = {}  # per agent, set once it has run
        self._running: set[str] = set()  # agents not done yet: the turn finishes when none is left
        self._paused: dict[str, list[int]] = {}  # agents waiting for approvals (theirs, or an upstream's)
        self._finished: tuple[TurnStatus, Awaitable[None]] | None = None  # the status and its write
        self._tracer = telemetry.tracer()  # None while tracing is off: then no tracing call per agent

    def clock(self) -> float:
        return time.monotonic() - self._t0

    def emit(self, type: EventType, agent: str | None = None, **data: Any) -> None:
        self.services.bus.publish(
            Event(type, self.turn_id, self.session.id, self.clock(), agent, data, user_id=self.session.user_id)
        )

    async def run(self) -> TurnResult:
        if self._tracer is None:
            return await self._run()
        turn = self.turn
        with telemetry.turn_span(
            self._tracer,
            pipeline=self.pipeline.name,
            turn_id=self.turn_id,
            number=turn.number,
            session_id=self.session.id,
            user_id=self.session.user_id,
            resumed=turn.resumed,
            traceparent=turn.traceparent,
        ) as span:
            result = await self._run()
            telemetry.turn_finished(span, result.status)
            return result

    async def _run(self) -> TurnResult:
        self._t0 = time.monotonic()
        if self.turn.resumed:
            await self.board.load()
        if self.turn.delivered.has("turn_started"):
            # Its readers saw it start: they see it go on (an SSE client's Last-Event-ID too).
            self.emit("turn_resumed", restored=sorted(self.board.entries))
        else:
            self.emit("turn_started", message_chars=len(self.turn.message), resumed=bool(self.board.outputs))
        await self._prepare_context()
        self._restore_written()
        await self._run_agents()
        status = await self._reconcile()
        return TurnResult(
            pipeline=self.pipeline.name,
            user=self.session.user_id,
            session=self.session.id,
            turn=self.turn.number,
            turn_id=self.turn_id,
            status=status,
            early=self.early,
            final=self.final,
            agents=list(self.results.values()),
            conflicts=self.conflicts,
            quality=turn_quality(
                {r.name: r.quality for r in self.results.values() if r.status == "ok" and r.quality},
                [d.agent for d in (self.early, self.final) if d is not None],
            ),
            approvals=self._approvals(),
        )

    def _approvals(self) -> list[int]:
        return sorted({approval for waiting in self._paused.values() for approval in waiting})

    def _restore_written(self) -> None:
        """Every agent's future; those a resumed turn already wrote are done, with their
        outputs restored (a loop's agents are restored by iteration, in `_loop`)."""
        loop = asyncio.get_running_loop()
        for name in self.pipeline.order:
            done = self._done[name] = loop.create_future()
            entry = self.board.entries.get(name)
            if entry is not None and name not in self.pipeline.looped:
                self._restore(self.results[name], entry.status, entry.output, entry.error)
                done.set_result(None)
            else:
                self._running.add(name)

    async def _run_agents(self) -> None:
        """Each agent still to run as a task of its own, and the loop's as one more.

        An agent's failure is its result, not an exception, so it never cancels the
        others; an exception here is a bug, and cancels the turn like a cancellation does."""
        done = self._done
        async with _task_group() as group:
            for agent in self.pipeline.spec.agents:
                if not done[agent.name].done() and agent.name not in self.pipeline.looped:
                    group.create_task(self._node(agent, done), name=f"cantata:{agent.name}")
            if self.pipeline.spec.loop is not None:
                group.create_task(self._loop(self.pipeline.spec.loop, done), name="cantata:loop")
        if self._finished is None:  # no agent ran: a resumed turn whose agents had all written
            self._finish()

    async def _reconcile(self) -> TurnStatus:
        """The turn's status once every entry is committed. The status was queued with the
        last entry (`_finish`); an entry refused at its commit fails its agent, and the
        stored status is then corrected."""
        assert self._finished is not None
        status, finished = self._finished
        await self._committed()
        await finished
        if self._status() != status:
            status = self._status()
            await self.services.store.finish_turn(self.turn_id, status, [])
        return status

    async def _prepare_context(self) -> None:
        """The briefing, built once per turn from the context read with its start, shared by every agent."""
        model_agents = [a for a in self.pipeline.spec.agents if not a.is_function]
        context = self.turn.context
        memory = context.memory
        self._memory = {name: entry.output for name, entry in memory.items()}
        if not model_agents:
            return
        # The summary covers turns up to `summary_upto`; the newest turns are the ones after it.
        past_turns = [turn for turn in context.recent if turn.number > context.summary_upto]
        # Budgets are counted with the tokenizer of the instance the first model agent uses.
        backend = self.services.pool.instance_for(model_agents[0].model).backend
        build = partial(
            build_briefing,
            preamble=self.pipeline.preamble,
            memory=memory,
            summary=context.summary,
            past_turns=past_turns,
            message=self.turn.message,
            budget=self.pipeline.spec.budget,
            count=backend.count_tokens,
            memory_view=self.pipeline.spec.memory_view,
        )
        # A real tokenizer runs off the event loop, like the model; a rough count need not.
        self.briefing = await asyncio.to_thread(build) if backend.slow_count else build()

    async def _node(
        self,
        agent: AgentSpec,
        done: dict[str, asyncio.Future[None]],
        view: dict[str, AgentResult] | None = None,
        iteration: int = 0,
    ) -> None:
        for upstream in agent.reads:
            await done[upstream]
        written = done[agent.name]
        view = view or self.results
        try:
            if any(upstream in self._paused for upstream in agent.reads):
                self._paused[agent.name] = []  # it runs once what it reads exists, when the turn resumes
            elif self._tracer is None:
                await self._run_agent(agent, view, iteration)
            else:
                model = None if agent.is_function else agent.model
                with telemetry.agent_span(self._tracer, agent.name, model=model, iteration=iteration) as span:
                    await self._run_agent(agent, view, iteration)
                    telemetry.agent_finished(span, view[agent.name])
        finally:
            # A reader cancelled while awaiting this future cancels it too: the turn is
            # being cancelled then, and there is no one left to tell.
            if not written.cancelled():
                written.set_result(None)
        if done is self._done:  # not an iteration of the loop: that finishes with the loop
            self._finish_if_done(agent.name)

    def _finish_if_done(self, *names: str) -> None:
        """Once every agent has run, in the same tick as the last one's entry was queued:
        the turn's status and replies are queued right behind it and share its commit."""
        self._running.difference_update(names)
        if not self._running and self._finished is None:
            self._finish()

    def _finish(self) -> None:
        status = self._status()
        # The early reply was stored when it was delivered (`_deliver`); a waiting turn's final
        # one is stored when it finishes after all.
        replies = [(self.final.agent, self.final.text)] if self.final is not None and status != "waiting" else []
        if status == "waiting":
            self.emit("turn_waiting", approvals=self._approvals(), agents=sorted(self._paused))
        else:
            self.emit("turn_delivered", status=status)
        self._finished = (status, self.services.store.finish_turn(self.turn_id, status, replies))
        killpoints.reached("finishing")

    async def _loop(self, loop: LoopSpec, done: dict[str, asyncio.Future[None]]) -> None:
        """The loop's agents, iteration after iteration, until `until` says stop.

        Within an iteration the agents run as any others do, reading this iteration's
        outputs; from the second on, readers of a carried agent (the builder) read what
        replaces it (the fixer's output of the iteration before). Each iteration writes
        its own entries; on resume, iterations already written are restored, not rerun.
        """
        looped = self.pipeline.looped
        upstreams = {r for name in loop.agents for r in self.pipeline.agents[name].reads if r not in looped}
        for upstream in upstreams:
            await done[upstream]
        if upstreams & self._paused.keys():
            self._pause_loop(loop, done)
            return
        written: dict[int, dict[str, EntryRow]] = {}
        for entry in await self.board.history() if self.turn.resumed else []:
            if entry.agent in looped:
                written.setdefault(entry.iteration, {})[entry.agent] = entry
        carried: dict[str, AgentResult] = {}
        stopped = False
        iteration = 0
        while iteration < loop.max_iterations and not stopped:
            iteration += 1
            killpoints.reached("loop_iteration", iteration)
            if not self.turn.delivered.has("loop_iteration", iteration=iteration):  # resumed inside it
                self.emit("loop_iteration", iteration=iteration, max_iterations=loop.max_iterations)
            view = {**self.results, **carried, **{name: AgentResult(name=name) for name in loop.agents}}
            inner = {name: asyncio.get_running_loop().create_future() for name in loop.agents}
            inner_done = {**done, **inner}
            for name, entry in written.get(iteration, {}).items():
                self._restore(view[name], entry.status, entry.output, entry.error)
                inner[name].set_result(None)
            async with _task_group() as group:
                for name in self.pipeline.order:
                    if name in looped and not inner[name].done():
                        node = self._node(self.pipeline.agents[name], inner_done, view, iteration)
                        group.create_task(node, name=f"cantata:{name}")
            for name in loop.agents:
                self.results[name] = view[name]
            if any(name in self._paused for name in loop.agents):
                self._pause_loop(loop, done)  # resumed, it goes on inside this iteration
                return
            stopped = await self._until(loop, view, iteration)
            carried = {replaced: view[source] for source, replaced in loop.carry.items()}
        if not self.turn.delivered.has("loop_finished"):
            self.emit("loop_finished", iterations=iteration, stopped=stopped)
        for name in loop.agents:
            done[name].set_result(None)
        self._finish_if_done(*loop.agents)

    def _pause_loop(self, loop: LoopSpec, done: dict[str, asyncio.Future[None]]) -> None:
        for name in loop.agents:
            self._paused.setdefault(name, [])
            done[name].set_result(None)
        self._finish_if_done(*loop.agents)

    async def _until(self, loop: LoopSpec, view: dict[str, AgentResult], iteration: int) -> bool:
        """The loop's stop condition on this iteration's outputs (in code, off the loop)."""
        if self.pipeline.until is None:
            return False
        inputs = {name: view[name].output for name in loop.agents if view[name].status == "ok"}
        ctx = self._context_of(inputs, [n for n in loop.agents if n not in inputs], memory={}, iteration=iteration)
        try:
            value = await run_function(self.pipeline.until, ctx, None, UNTIL_TIMEOUT_S, agent="loop.until")
        except BackendError as exc:
            self.emit("loop_iteration", iteration=iteration, error=f"until: {exc}")
            return True  # a stop condition that cannot be evaluated ends the loop: it stays bounded
        return bool(value)

    async def _run_agent(self, agent: AgentSpec, view: dict[str, AgentResult], iteration: int = 0) -> None:
        """One agent, once what it reads exists; `view` holds the results it reads and its own."""
        result = view[agent.name]
        at: At = {"iteration": iteration} if iteration else {}
        failed_required = [r for r in agent.required if view[r].status != "ok"]
        if failed_required:
            self._skip(agent, result, f"required input(s) {', '.join(failed_required)} did not succeed", at)
            return
        inputs = {r: view[r].output for r in agent.reads if view[r].status == "ok"}
        missing = [r for r in agent.reads if r not in inputs]
        try:
            if agent.is_function:
                output = await self._run_function(agent, result, inputs, missing, at)
            else:
                output = await self._run_model(agent, result, inputs, missing, at)
        except Skip as skip:
            self._skip(agent, result, skip.reason, at)
            return
        except AwaitingApproval as waiting:
            self._paused[agent.name] = waiting.approvals
            return
        except (BackendError, OutputInvalid) as exc:
            if self._write(agent, result, "failed", None, str(exc), at):
                self._fail(result, str(exc), at)
            return
        if not self._write(agent, result, "ok", output, None, at):
            return  # the output could not be stored: the agent failed, readers see it missing
        call = self._calls.get(agent.name)
        self.emit(
            "agent_finished",
            agent.name,
            **at,
            instance=result.instance,
            prompt_tokens=result.prompt_tokens,
            cached_tokens=result.cached_tokens,
            completion_tokens=result.completion_tokens,
            finish_reason=result.finish_reason,
            quality=result.quality,
            first_token_s=call.first_token_s if call else None,
            generation_s=call.generation_s if call else None,
            largest_prompt=call.largest_prompt if call else None,
            **({"replica": call.instance.replica} if call and call.instance.replica else {}),
        )
        self._deliver(agent, output, result)

    def _context(
        self, agent: AgentSpec, inputs: dict[str, Any], missing: list[str], iteration: int = 0
    ) -> FunctionContext:
        memory = {m: self._memory[m] for m in agent.memory if m in self._memory}
        return self._context_of(inputs, missing, memory=memory, iteration=iteration)

    def _context_of(
        self, inputs: dict[str, Any], missing: list[str], *, memory: dict[str, Any], iteration: int = 0
    ) -> FunctionContext:
        return FunctionContext(
            message=self.turn.message,
            user=self.session.user_id,
            session=self.session.id,
            turn=self.turn.number,
            inputs=inputs,
            missing=missing,
            memory=memory,
            options=self.turn.options,
            runtime=self.runtime,
            turn_id=self.turn_id,
            iteration=iteration,
            read_messages=partial(self.services.store.turn_messages, self.session.user_id),
        )

    def _record_conflicts(self, agent: AgentSpec, ctx: FunctionContext) -> None:
        for conflict in ctx.conflicts:
            conflict = {"found_by": agent.name, **conflict}
            self.conflicts.append(conflict)
            self.emit("conflict", agent.name, **conflict)

    async def _run_function(
        self, agent: AgentSpec, result: AgentResult, inputs: dict[str, Any], missing: list[str], at: dict[str, int]
    ) -> Any:
        result.started_s = self.clock()
        result.attempts = 1
        self.emit("agent_started", agent.name, function=agent.function, **at)
        ctx = self._context(agent, inputs, missing, at.get("iteration", 0))
        contract = self.pipeline.contracts[agent.name]
        output = await run_function(
            self.pipeline.functions[agent.name], ctx, contract, agent.timeout_s, agent=agent.name
        )
        self._record_conflicts(agent, ctx)
        return output

    async def _run_model(
        self, agent: AgentSpec, result: AgentResult, inputs: dict[str, Any], missing: list[str], at: dict[str, int]
    ) -> Any:
        assert self.briefing is not None
        contract = self.pipeline.contracts[agent.name]
        ctx = self._context(agent, inputs, missing, at.get("iteration", 0))
        instance = self.services.pool.instance_for(agent.model)
        result.instance = instance.name
        self.emit("agent_queued", agent.name, instance=instance.name, deliver=agent.deliver, **at)
        messages = build_messages(
            briefing=self.briefing,
            agent=agent.name,
            instructions=(
                f"Do what the team section above says {agent.name} does."
                if self.pipeline.spec.team_briefing
                else self.pipeline.prompts[agent.name]
            ),
            inputs=reader_inputs(inputs, agent.view),  # the prompt's view; the check sees all
            missing=missing,
            contract=contract,
        )
        call = ModelCall(
            loop=await self._tool_loop(agent, contract, at) if self.pipeline.has_tools(agent.name) else None,
            agent=agent,
            instance=instance,
            messages=messages,
            contract=contract,
            result=result,
            emit=(lambda type, name=None, **data: self.emit(type, name, **at, **data)) if at else self.emit,
            clock=self.clock,
            prefix=f"turn:{self.turn_id}",  # every agent of a turn shares its briefing
            route=self.services.pool.route_for(agent.model, session=str(self.session.id), turn=str(self.turn_id)),
            check=self.pipeline.checks.get(agent.name),
            # E.g. a safe template at a high risk tier: no generation at all.
            shortcut=self.pipeline.shortcuts.get(agent.name),
            context=ctx,
            tracer=self._tracer,
        )
        self._calls[agent.name] = call
        output = await call.run()
        if call.shortcut_answered:
            result.instance = None
            result.started_s = self.clock()
            self.emit("agent_started", agent.name, shortcut=agent.shortcut, **at)
        self._record_conflicts(agent, ctx)
        return output

    async def _tool_loop(self, agent: AgentSpec, contract: OutputContract | None, at: At) -> ToolLoop:
        """The agent's tool loop; resumed, it goes on from the calls recorded before."""
        iteration = at.get("iteration", 0)
        recorded: list[ToolCallRow] = []
        decisions: dict[tuple[int, int], ApprovalRow] = {}
        if self.turn.resumed:
            store = self.services.store
            rows = (await store.tool_calls([self.turn_id]))[self.turn_id]
            recorded = [r for r in rows if r.agent == agent.name and r.iteration == iteration]
            if any(r.status == "waiting" for r in recorded):
                decisions = {
                    (a.step, a.index): a
                    for a in await store.approvals(turn_id=self.turn_id)
                    if (a.agent, a.iteration) == (agent.name, iteration)
                }
        instance = self.services.pool.instance_for(agent.model)
        if self.services.host is not None:
            tools = await agent_tools(self.pipeline, agent, host=self.services.host, user=self.session.user_id)
        else:  # a turn run outside a runtime: only the tools built at load
            tools = self.pipeline.tools.get(agent.name, [])
        loop = ToolLoop(
            agent=agent,
            tools=tools,
            native=instance.backend.native_tools,
            output_schema=contract.schema if contract is not None else None,
            place=(self.turn_id, iteration),
            record=self.services.store.record_tool_calls,
            ask=self.services.store.request_approvals,
            emit=(lambda type, name=None, **data: self.emit(type, name, **at, **data)) if at else self.emit,
            recorded=recorded,
            decisions=decisions,
        )
        self._loops[(agent.name, iteration)] = loop
        return loop

    def _skip(self, agent: AgentSpec, result: AgentResult, reason: str, at: At) -> None:
        if self._write(agent, result, "skipped", None, reason, at):
            self.emit("agent_skipped", agent.name, reason=reason, **at)

    def _fail(self, result: AgentResult, error: str, at: At) -> None:
        """The one place an agent fails, whether it failed to run or its output could not be
        stored (at once or at its commit): its result says so and `agent_failed` is emitted."""
        result.status, result.output, result.error = "failed", None, error
        self.emit(
            "agent_failed",
            result.name,
            instance=result.instance,
            error=error,
            attempts=result.attempts,
            finish_reason=result.finish_reason,
            **at,
        )

    def _write(
        self, agent: AgentSpec, result: AgentResult, status: AgentStatus, output: Any, error: str | None, at: At
    ) -> bool:
        """Queue the entry and publish it to this turn's readers at once: the store commits
        entries in the order written, so no reader's entry is committed before its inputs'.
        The turn waits for every commit before it finishes (`_committed`). False when the
        store refused the entry at once: the agent has failed then."""
        result.finished_s = self.clock()
        loop = self._loops.get((agent.name, at.get("iteration", 0)))
        if loop is not None:
            result.tool_calls = [row.as_json() for row in loop.rows]
        if result.started_s is None and status != "skipped":
            result.started_s = result.finished_s
        result.status = status
        result.output = output
        result.error = error
        try:
            write = self.board.write(
                agent.name, status=status, output=output, error=error, iteration=at.get("iteration", 0)
            )
        except CantataError as exc:
            self._fail(result, f"could not store the output: {exc}", at)
            return False
        self._writes.append((result, at, write))
        if killpoints.armed() and isinstance(write, asyncio.Future):
            write.add_done_callback(partial(_kill_after_write, agent.name))
        return True

    async def _committed(self) -> None:
        """Wait for every entry's commit; an agent whose output could not be stored failed."""
        for result, at, write in self._writes:
            try:
                await write
            except CantataError as exc:
                self._fail(result, f"could not store the output: {exc}", at)

    def _restore(self, result: AgentResult, status: str, output: Any, error: str | None) -> None:
        if not is_agent_status(status):
            raise StoreError(
                f"agent '{result.name}' of turn {self.turn_id} has an unknown status '{status}' in the store"
            )
        result.status, result.output, result.error = status, output, error
        agent = self.pipeline.agents[result.name]
        if status == "ok":
            self._deliver(agent, output, result)

    def _deliver(self, agent: AgentSpec, output: Any, result: AgentResult) -> None:
        """Publish the early reply and store it in the session's history at once, in the
        commit of its entry (a crash after it leaves it in the next turn's context); the
        final reply is stored with the turn's status. What a resumed turn had published
        or stored already is not again."""
        if agent.deliver is None:
            return
        delivery = Delivery(agent=agent.name, text=reply_text(output), at_s=self.clock())
        if agent.deliver == "final":
            self.final = delivery
            return
        self.early = delivery
        delivered = self.turn.delivered
        if not delivered.has("early_delivered", agent.name):
            self.emit("early_delivered", agent.name, text=delivery.text)
            killpoints.reached("early_delivered")
        if agent.name not in delivered.replies:
            stored = self.services.store.add_reply(self.turn_id, agent.name, delivery.text)
            self._writes.append((result, {}, stored))

    def _status(self) -> TurnStatus:
        if self._paused:
            return "waiting"
        statuses = [r.status for r in self.results.values()]
        final_agent = self.pipeline.deliverer("final")
        if final_agent is not None and self.results[final_agent.name].status != "ok":
            return "failed"
        if "ok" not in statuses:
            return "failed"
        return "ok" if all(s == "ok" for s in statuses) else "degraded"


def _kill_after_write(agent: str, write: asyncio.Future[None]) -> None:
    """The `after_write:AGENT` kill point (killpoints.py): once the entry is committed."""
    if not write.cancelled() and write.exception() is None:
        killpoints.reached("after_write", agent)


@asynccontextmanager
async def _task_group() -> AsyncIterator[asyncio.TaskGroup]:
    """A TaskGroup that raises its first error as it is, as `gather` did, so that callers
    of a turn see the error itself and not a group of one."""
    try:
        async with asyncio.TaskGroup() as group:
            yield group
    except ExceptionGroup as failed:
        error = failed.exceptions[0]
        raise error from error.__cause__
