"""One agent's model call: attempts with backoff, validation, one repair, the pipeline's
shortcut and check, each generation built, streamed and accounted for in its own step.

This is the one retry loop (its rules: retry.py). Each generation goes through the
instance's circuit breaker (breaker.py), which fails it fast while the instance is known
to be failing; a state change it sees is emitted once, as `instance_circuit`. Of an
instance with replicas, each attempt goes where its route says (replicas.py): a failed
one is retried on another replica at once, without the backoff meant for a failing server.

Time limits follow one idiom: an `asyncio.Timeout` whose expiry says whose limit it was
(`_Deadline`, and `call_user` for a pipeline's code). An attempt has one timer, not one
per limit: it stands at the agent's `timeout_s` for the attempt and is moved earlier for
each generation to what the instance's measured speed and load need (speed.py), later
while its tokens keep coming, then back for the check. Scheduling a timer is part of every
node's cost, so a call on a fast instance arms it once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, aclosing, nullcontext
from dataclasses import dataclass
from typing import Any

from opentelemetry.trace import Tracer

from cantata import telemetry
from cantata.backends.base import CompletionRequest, Message, Usage
from cantata.breaker import counts_against
from cantata.context import CheckContext, FunctionContext
from cantata.errors import (
    BackendError,
    BackendTimeout,
    CantataError,
    CircuitOpen,
    OutputInvalid,
    OutputTruncated,
    Rejected,
)
from cantata.nodes import call_user, normalise
from cantata.pool import Instance, rank
from cantata.prompts import SCAFFOLD_STOPS
from cantata.replicas import Route
from cantata.retry import not_waited, retryable, wait_s
from cantata.spec import AgentSpec
from cantata.speed import FLOOR_S, SLACK
from cantata.structured import OutputContract, repair_instruction
from cantata.text_check import StreamGate, check_text
from cantata.tool_loop import ToolLoop
from cantata.tools import ToolCall
from cantata.turn import AgentResult

Emit = Callable[..., None]


class ModelCall:
    """One agent's model call on a shared instance, filling in its AgentResult as it goes."""

    def __init__(
        self,
        *,
        agent: AgentSpec,
        instance: Instance,
        messages: list[Message],
        contract: OutputContract | None,
        result: AgentResult,
        emit: Emit,
        clock: Callable[[], float],
        prefix: str | None = None,
        route: Route[Instance] | None = None,
        check: Callable[[CheckContext], Any] | None = None,
        shortcut: Callable[[FunctionContext], Any] | None = None,
        context: FunctionContext | None = None,
        tracer: Tracer | None = None,
        loop: ToolLoop | None = None,
    ) -> None:
        self.agent = agent
        self.tracer = tracer  # None while tracing is off (telemetry.py)
        self.loop = loop  # the agent's tools: its answer comes at the end of a tool loop
        self.prefix = prefix
        self.route = route  # of an instance with replicas: each attempt asks it where to go
        self.check = check
        self.shortcut = shortcut
        self.shortcut_answered = False
        self.context = context
        self.instance = instance
        self.messages = messages
        self.contract = contract
        self.result = result
        self.emit = emit
        self.clock = clock
        self.rank = rank(early=agent.deliver == "early", priority=agent.priority)
        # For live figures: time to the first token and generation time of the last call.
        self.first_token_s: float | None = None
        self.generation_s = 0.0
        self.largest_prompt = 0  # tokens of the longest single call (a repair is longer)

    async def run(self) -> Any:
        """The validated output; raises the last error once every attempt has failed."""
        agent = self.agent
        last_error: CantataError | None = None
        if self.route is not None:
            self.instance = self.route.next()
        for attempt in range(agent.retries + 1):
            if attempt:
                assert last_error is not None
                failed = self.instance
                if self.route is not None:
                    # A failure of the server, not of the reply, sends the call to another replica.
                    blamed = counts_against(last_error) or isinstance(last_error, CircuitOpen)
                    self.instance = self.route.next(failed if blamed else None)
                if self.instance is not failed:
                    # Another replica: nothing to wait for, it has not been failing.
                    self.emit(
                        "agent_retry",
                        agent.name,
                        attempt=attempt + 1,
                        replica=self.instance.replica,
                        error=str(last_error),
                    )
                else:
                    delay = wait_s(last_error, attempt, limit_s=agent.timeout_s)
                    if delay is None:
                        last_error = not_waited(last_error, agent.timeout_s)
                        break
                    self.emit("agent_retry", agent.name, attempt=attempt + 1, delay_s=delay, error=str(last_error))
                    await asyncio.sleep(delay)
            try:
                return await self._attempt(first=attempt == 0)
            except _ShortcutFailed as failed_shortcut:
                # The pipeline's own code failed: no model call stands in for it.
                raise failed_shortcut.error from failed_shortcut.error.__cause__
            except (BackendError, OutputInvalid) as exc:
                last_error = exc
                if not (retryable(exc) or self._fails_over(exc)):
                    break
        assert last_error is not None
        if self.check is not None:
            # Entries that code writes (a risk tier, say) must exist even when the model
            # failed: the check gets the last chance with no reply, and may answer safely.
            self.emit("agent_retry", agent.name, fallback=True, error=str(last_error))
            try:
                return await self._run_check(None, last_chance=True)
            except (Rejected, OutputInvalid, BackendError):
                pass
        raise last_error

    def _fails_over(self, error: CantataError) -> bool:
        """Whether a failure not worth retrying on its replica is worth it on another: a
        breaker that refused the call (it opened while the call was routed) says nothing
        of the other replicas."""
        return (
            isinstance(error, CircuitOpen)
            and self.route is not None
            and self.route.replicas.others_usable(self.instance)
        )

    def _slot(self) -> AbstractAsyncContextManager[None]:
        return self.instance.slot(self.rank, self.prefix)

    async def _attempt(self, *, first: bool) -> Any:
        agent = self.agent
        # An agent with tools holds a slot per generation (`_generate`), not while its tools run.
        async with self._slot() if self.loop is None else nullcontext():
            if first and self.shortcut is not None:
                # Decided holding the slot: the agent took its place in the queue by rank the
                # moment it was ready, so the early reply still goes first while its shortcut
                # runs on a thread (one that answers frees the slot unused).
                answer = await self._run_shortcut()
                if answer is not None:
                    return answer
            if self.result.started_s is None:
                self.result.started_s = self.clock()
                self.emit("agent_started", agent.name, instance=self.instance.name, **self._replica())
            # Armed by the first generation, which knows its own deadline (see _Deadline).
            try:
                async with asyncio.timeout(None) as timer:
                    deadline = _Deadline(timer, agent.timeout_s)
                    return await self._answer(deadline)
            except TimeoutError as exc:
                if not timer.expired():  # the backend's own TimeoutError, not the deadline
                    raise BackendError(f"instance '{self.instance.name}' raised TimeoutError: {exc}") from exc
                error = deadline.timed_out(self.instance.name)
                if deadline.generating:  # the instance's to answer for, not the pipeline's check
                    self.instance.breaker.failed(str(error))
                    self._announce()
                raise error from exc

    async def _answer(self, deadline: _Deadline) -> Any:
        """A reply validated (repaired once if need be) and checked, within the attempt's deadline."""
        if self.loop is not None:
            messages, text, finish = await self._converse(self.loop, deadline)
        else:
            messages = self.messages
            text, finish = (await self._generate(messages, deadline)).answer
        try:
            output = self._parse(text, finish)
        except OutputInvalid as invalid:
            if self.contract is None or isinstance(invalid, OutputTruncated):
                raise  # a cut reply is not a format mistake: a repair would be cut too
            # One repair: same briefing (still cached), plus the error to fix.
            self.emit("agent_retry", self.agent.name, repair=True, error=str(invalid))
            repair = [*messages, Message("assistant", text), Message("user", repair_instruction(invalid))]
            text, finish = (await self._generate(repair, deadline)).answer
            output = self._parse(text, finish)
        return await self._checked(output, text, deadline)

    async def _converse(self, loop: ToolLoop, deadline: _Deadline) -> tuple[list[Message], str, str | None]:
        """The tool loop's steps until the model answers: its conversation, the answer's text
        and why its last generation ended. Tools run on the attempt's whole deadline."""
        await loop.begin(self.messages)
        while True:
            loop.next_step()
            reply = await self._generate(loop.messages, deadline, loop=loop)
            calls, text = loop.read(reply.text, reply.tool_calls, reply.finish)
            if calls:
                deadline.whole()
                await loop.run(calls, reply.text)
            elif text is not None:
                return loop.messages, text, reply.finish

    def _parse(self, text: str, finish: str | None) -> Any:
        try:
            if self.contract is not None:
                return self.contract.validate_text(text)
            text, notes = check_text(text)
            if not text:
                raise OutputInvalid("the model returned an empty reply")
            self.result.quality += notes
            return text
        except OutputInvalid as invalid:
            if finish != "length":
                raise
            raise OutputTruncated(
                f"the reply was cut at max_tokens={self.agent.max_tokens} before it was complete "
                f"(raise the agent's max_tokens): {invalid}"
            ) from invalid

    async def _checked(self, output: Any, text: str, deadline: _Deadline) -> Any:
        """The pipeline's check on a valid reply: keep, correct, or regenerate once."""
        if self.check is None:
            return output
        deadline.whole()
        try:
            return await self._run_check(output, last_chance=False)
        except Rejected as rejected:
            reason = str(rejected)
        self.emit("agent_retry", self.agent.name, regenerate=True, error=reason)
        again = [
            *(self.loop.messages if self.loop is not None else self.messages),  # what its tools returned too
            Message("assistant", text),
            Message("user", f"Your reply was rejected: {reason}. Write it again without that problem."),
        ]
        try:
            second: Any = self._parse(*(await self._generate(again, deadline)).answer)
        except OutputInvalid:
            second = None
        deadline.whole()
        try:
            return await self._run_check(second, last_chance=True)
        except Rejected as refused:
            raise OutputInvalid(f"the check rejected the reply twice: {refused}") from refused

    async def _run_shortcut(self) -> Any:
        """The shortcut's output, or None to call the model."""
        assert self.shortcut is not None and self.context is not None
        try:
            # A CheckContext with no output: the shortcut may decide by the instance and model too.
            ctx = CheckContext(**vars(self.context), instance=self.instance.name, model=self.instance.config.model)
            value = await call_user(self.shortcut, ctx, self.agent.timeout_s, what="shortcut", agent=self.agent.name)
            if value is None:
                return None
            output = normalise(value, self.contract)
        except (BackendError, OutputInvalid) as exc:
            raise _ShortcutFailed(exc) from exc
        self.shortcut_answered = True
        return output

    async def _run_check(self, output: Any, *, last_chance: bool) -> Any:
        assert self.check is not None and self.context is not None
        ctx = CheckContext(
            **vars(self.context),
            output=output,
            last_chance=last_chance,
            instance=self.instance.name,
            model=self.instance.config.model,
        )
        value = await call_user(self.check, ctx, self.agent.timeout_s, what="check", agent=self.agent.name)
        return normalise(value, self.contract)

    async def _generate(self, messages: list[Message], deadline: _Deadline, loop: ToolLoop | None = None) -> _Reply:
        """The reply: its text, why it ended (`finish_reason`: "stop", "length", ...), and the
        tools it called (a step of a tool `loop`)."""
        agent = self.agent
        if self.loop is not None:  # waiting for a slot is under the attempt's whole deadline
            deadline.whole()
        async with self._slot() if self.loop is not None else nullcontext():
            self.result.attempts += 1
            # The prompt is counted roughly, as if nothing were cached.
            prompt_tokens = sum(len(m.content) for m in messages) // 4
            speed = self.instance.speed
            deadline.for_generation(
                speed.deadline_s(prompt_tokens, agent.max_tokens, agent.timeout_s),
                stall_s=speed.stall_s(),
                others=speed.in_flight,
            )
            with speed.generating(prompt_tokens, agent.max_tokens):
                request = self._request(messages, loop)
                live = loop is None or loop.native
                if self.tracer is None:
                    reply = await self._stream(request, deadline, live=live)
                else:
                    reply = await self._traced_stream(self.tracer, request, deadline, live=live)
            deadline.generating = False
        self._account(reply)
        # The notes say what was done to the reply the agent ends with: its last generation's.
        self.result.quality = []
        if reply.stop is not None:
            self.result.quality.append(f"cut where it began to echo the prompt's heading {reply.stop.strip()!r}")
        return reply

    async def _traced_stream(
        self, tracer: Tracer, request: CompletionRequest, deadline: _Deadline, *, live: bool
    ) -> _Reply:
        """`_stream` in a span of its own: the GenAI conventions' inference span."""
        config = self.instance.config
        with telemetry.chat_span(
            tracer,
            backend=config.backend,
            model=self.instance.backend.info().model,
            instance=self.instance.name,
            url=config.url,
            agent=self.agent.name,
            session_id=self.context.session if self.context is not None else None,
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            structured=request.schema is not None,
            messages=request.messages,
        ) as span:
            reply = await self._stream(request, deadline, live=live)
            usage = reply.usage
            telemetry.chat_finished(
                span,
                input_tokens=usage.prompt_tokens,
                output_tokens=usage.completion_tokens,
                cached_tokens=usage.cached_tokens,
                finish_reason=reply.finish,
                first_token_s=reply.first_token_s,
                text=reply.text,
            )
        return reply

    def _request(self, messages: list[Message], loop: ToolLoop | None = None) -> CompletionRequest:
        agent = self.agent
        schema = self.contract.schema if self.contract else None
        if loop is not None:
            # Natively, tools ride in their own field and the answer is free (a decoding
            # constraint would forbid the calls); otherwise the envelope constrains each step.
            schema = None if loop.native else loop.schema
        return CompletionRequest(
            messages=messages,
            max_tokens=agent.max_tokens,
            temperature=agent.temperature,
            schema=schema,
            tools=loop.definitions if loop is not None and loop.native else (),
            schema_name="step"
            if loop is not None and not loop.native
            else self.contract.name
            if self.contract
            else "output",
            thinking=agent.thinking,
            priority=self.rank,
            agent=agent.name,
            stop=SCAFFOLD_STOPS,
        )

    async def _stream(self, request: CompletionRequest, deadline: _Deadline, *, live: bool = True) -> _Reply:
        """The backend's reply, each piece of text emitted as it arrives (if `live`: a step
        of a tool loop in JSON is not an answer anyone reads as it comes)."""
        name = self.agent.name
        parts: list[str] = []
        usage = Usage()
        finish: str | None = None
        stop: str | None = None
        calls: list[ToolCall] | None = None
        start = self.clock()
        first: float | None = None
        # A text reply streams only what its check will keep (text_check.py), so a reader
        # of the stream (the early reply, live) never shows text that is then cut.
        gate = StreamGate() if request.schema is None else None
        try:
            with self.instance.breaker.call():
                # Closed on the way out whatever happens (timeout, cancellation, an error here):
                # the generation stops and the backend's slot is free at once (base.py).
                async with aclosing(self.instance.backend.complete(request)) as stream:
                    async for chunk in stream:
                        if chunk.text or chunk.reasoning:
                            deadline.progress()
                        if chunk.text:
                            if first is None:
                                first = self.clock() - start
                            parts.append(chunk.text)
                            released = gate.feed(chunk.text) if gate is not None else chunk.text
                            if released and live:
                                self.emit("agent_token", name, text=released)
                        if chunk.usage is not None:
                            usage = chunk.usage
                        if chunk.finish_reason is not None:
                            finish = chunk.finish_reason
                        stop = chunk.stop or stop
                        calls = chunk.tool_calls or calls
        finally:
            self._announce()
        if gate is not None and (rest := gate.flush()) and live:
            self.emit("agent_token", name, text=rest)
        return _Reply("".join(parts), finish, stop, usage, first, self.clock() - start, calls)

    def _announce(self) -> None:
        """Tell a change of the instance's circuit once, whichever call sees it first."""
        change = self.instance.breaker.unannounced()
        if change is not None:
            self.emit("instance_circuit", self.agent.name, instance=self.instance.name, **self._replica(), **change)

    def _replica(self) -> dict[str, str]:
        """Which replica, for an event, when the instance has several."""
        return {"replica": self.instance.replica} if self.instance.replica else {}

    def _account(self, reply: _Reply) -> None:
        """The instance's speed estimate, this call's figures and the agent's token sums."""
        usage = reply.usage
        self.instance.speed.observe(
            computed_prompt_tokens=usage.prompt_tokens - usage.cached_tokens,
            first_token_s=reply.first_token_s,
            completion_tokens=usage.completion_tokens,
            total_s=reply.total_s,
        )
        if self.first_token_s is None:
            self.first_token_s = reply.first_token_s
        self.generation_s += reply.total_s
        self.largest_prompt = max(self.largest_prompt, usage.prompt_tokens)
        result = self.result
        result.finish_reason = reply.finish
        result.prompt_tokens += usage.prompt_tokens
        result.cached_tokens += usage.cached_tokens
        result.completion_tokens += usage.completion_tokens


@dataclass(slots=True)
class _Reply:
    """One generation as streamed: its text, why it ended, and what it cost."""

    text: str
    finish: str | None
    stop: str | None  # the stop sequence that ended it, if one did
    usage: Usage
    first_token_s: float | None  # from the request to the first piece of text; None if none came
    total_s: float
    tool_calls: list[ToolCall] | None = None  # the tools it called (native tool calling)

    @property
    def answer(self) -> tuple[str, str | None]:
        return self.text, self.finish


class _Deadline:
    """The one timer of an attempt: the agent's `timeout_s` for the whole attempt, moved
    earlier while a generation runs to what the instance's measured speed and load need
    for it, so a hung instance is caught in seconds, not at the ceiling; then later while
    its tokens keep coming (speed.py), so a slow reply is never cut while it progresses.
    The timer is moved only when its time changes, and while tokens come only when less
    than `stall_s` is left: on a fast instance it is armed once per call."""

    __slots__ = ("timer", "limit_s", "end", "generation_s", "stall_s", "others", "generating", "answering")

    def __init__(self, timer: asyncio.Timeout, limit_s: float) -> None:
        self.timer = timer
        self.limit_s = limit_s
        self.end = asyncio.get_running_loop().time() + limit_s  # the attempt's ceiling
        self.generation_s = limit_s  # the current generation's deadline to its first token, in seconds
        self.stall_s: float | None = None  # how long a generation under way may go without a token
        self.others = 0  # calls generating on the instance when this one started
        self.generating = False
        self.answering = False  # tokens came: an expiry now is a stall

    def for_generation(self, seconds: float, *, stall_s: float | None, others: int) -> None:
        """Expire `seconds` from now (the speed's deadline), or at the ceiling if sooner."""
        at = asyncio.get_running_loop().time() + seconds
        self.generation_s = seconds
        self.stall_s = stall_s
        self.others = others
        self.generating = True
        self.answering = False
        self._move(at if at < self.end else self.end)

    def progress(self) -> None:
        """A token came: the generation has `stall_s` from now at least, up to the ceiling."""
        if self.stall_s is None:
            return
        self.answering = True
        now = asyncio.get_running_loop().time()
        when = self.timer.when()
        if when is not None and when < now + self.stall_s and when < self.end:
            self._move(min(self.end, now + 2 * self.stall_s))  # twice: moved once per stall_s at most

    def whole(self) -> None:
        """Back to the attempt's ceiling: what follows a generation is not the instance's to answer for."""
        self._move(self.end)

    def _move(self, when: float) -> None:
        if self.timer.when() != when:
            self.timer.reschedule(when)

    def timed_out(self, instance: str) -> BackendTimeout:
        """The error for the expired timer, saying whose limit it was."""
        when = self.timer.when()
        if when is None or when >= self.end:
            return BackendTimeout(f"timed out after {self.limit_s:g} s on instance '{instance}'")
        if self.answering:
            return BackendTimeout(
                f"the reply stopped coming on instance '{instance}': no token for {self.stall_s:.1f} s or more, "
                f"{SLACK:g}x what a token takes at its measured speed ({FLOOR_S:g} s at least)"
            )
        busy = f" and the {self.others} call(s) it was generating" if self.others else ""
        return BackendTimeout(
            f"no reply within {self.generation_s:.1f} s on instance '{instance}': "
            f"{SLACK:g}x what its measured speed needs for this call{busy} (timeout_s {self.limit_s:g} s)"
        )


class _ShortcutFailed(Exception):
    """Carries a shortcut's failure past the retries: retrying would not rerun it."""

    def __init__(self, error: BackendError | OutputInvalid) -> None:
        super().__init__(str(error))
        self.error = error
