"""How one agent runs once its inputs exist: a Python function, or a model call with
validation, one repair, retries with backoff, and a timeout per attempt.

A pipeline's own callables (`function`, `shortcut`, `check`) run under the agent's timeout:
synchronous ones on a worker thread (threads.py), so that a slow one never stalls the
other turns on the loop. What they raise is logged with its traceback here, where it is
caught, and the agent fails with one line.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from contextlib import aclosing
from typing import Any

from pydantic import BaseModel

from cantata.backends.base import CompletionRequest, Message, Usage
from cantata.context import CheckContext, FunctionContext
from cantata.errors import BackendError, BackendTimeout, CantataError, OutputInvalid, OutputTruncated, Rejected, Skip
from cantata.pool import Instance, rank
from cantata.spec import AgentSpec
from cantata.speed import SLACK
from cantata.structured import OutputContract, repair_instruction
from cantata.threads import run_in_thread
from cantata.turn import AgentResult

Emit = Callable[..., None]
log = logging.getLogger(__name__)


async def call_user(fn: Callable[..., Any], ctx: FunctionContext, timeout_s: float, *, what: str, agent: str) -> Any:
    """What a pipeline's `fn(ctx)` returns, within `timeout_s`; a sync `fn` runs on a worker
    thread. Its failures become BackendError (a check's Rejected passes through)."""
    try:
        async with asyncio.timeout(timeout_s) as deadline:
            if inspect.iscoroutinefunction(fn):
                value = await fn(ctx)
            else:
                value = await run_in_thread(fn, ctx)
                if inspect.isawaitable(value):  # e.g. a callable object with an async __call__
                    value = await value
    except TimeoutError as exc:
        if not deadline.expired():  # the function's own TimeoutError
            log.error("agent '%s': its %s raised", agent, what, exc_info=exc)
            raise BackendError(f"{what} raised TimeoutError: {exc}") from exc
        raise BackendTimeout(f"{what} timed out after {timeout_s:g} s") from exc
    except (BackendError, OutputInvalid, Skip):
        raise
    except Exception as exc:  # a user's function: log it, report one line, never crash the turn
        if isinstance(exc, Rejected) and what == "check":
            raise  # the signal to regenerate; from anything else, a mistake like any other
        log.error("agent '%s': its %s raised", agent, what, exc_info=exc)
        raise BackendError(f"{what} raised {type(exc).__name__}: {exc}") from exc
    return value


async def run_function(
    fn: Callable[..., Any],
    ctx: FunctionContext,
    contract: OutputContract | None,
    timeout_s: float,
    *,
    agent: str,
) -> Any:
    """A `function:` agent's output."""
    return normalise(await call_user(fn, ctx, timeout_s, what="function", agent=agent), contract)


def normalise(value: Any, contract: OutputContract | None) -> Any:
    """A function's return value as a stored output: validated when there is a contract."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if contract is not None:
        return contract.validate_data(value)
    if isinstance(value, (str, dict, list, int, float, bool)):
        return value
    raise BackendError(f"function returned a {type(value).__name__}; return text, a dict or a pydantic model")


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
        check: Callable[[CheckContext], Any] | None = None,
        shortcut: Callable[[FunctionContext], Any] | None = None,
        context: FunctionContext | None = None,
    ) -> None:
        self.agent = agent
        self.prefix = prefix
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
        # For live figures: time to the first token and generation time of the last call.
        self.first_token_s: float | None = None
        self.generation_s = 0.0
        self.largest_prompt = 0  # tokens of the longest single call (a repair is longer)

    async def run(self) -> Any:
        """The validated output; raises the last error once every attempt has failed."""
        agent = self.agent
        last_error: CantataError | None = None
        for attempt in range(agent.retries + 1):
            if attempt:
                delay = min(0.25 * 2 ** (attempt - 1), 4.0)
                self.emit("agent_retry", agent.name, attempt=attempt + 1, delay_s=delay, error=str(last_error))
                await asyncio.sleep(delay)
            try:
                return await self._attempt(first=attempt == 0)
            except _ShortcutFailed as failed:
                # The pipeline's own code failed: no model call stands in for it.
                raise failed.error from failed.error.__cause__
            except (BackendError, OutputInvalid) as exc:
                last_error = exc
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

    async def _attempt(self, *, first: bool) -> Any:
        agent = self.agent
        async with self.instance.slot(rank(early=agent.deliver == "early", priority=agent.priority), self.prefix):
            if first and self.shortcut is not None:
                # Decided holding the slot: the agent took its place in the queue by rank the
                # moment it was ready, so the early reply still goes first while its shortcut
                # runs on a thread (one that answers frees the slot unused).
                answer = await self._run_shortcut()
                if answer is not None:
                    return answer
            if self.result.started_s is None:
                self.result.started_s = self.clock()
                self.emit("agent_started", agent.name, instance=self.instance.name)
            try:
                async with asyncio.timeout(agent.timeout_s):
                    text, finish = await self._generate(self.messages)
                    try:
                        output = self._parse(text, finish)
                    except OutputInvalid as invalid:
                        if self.contract is None or isinstance(invalid, OutputTruncated):
                            raise  # a cut reply is not a format mistake: a repair would be cut too
                        # One repair: same briefing (still cached), plus the error to fix.
                        self.emit("agent_retry", agent.name, repair=True, error=str(invalid))
                        repair = [
                            *self.messages,
                            Message("assistant", text),
                            Message("user", repair_instruction(invalid)),
                        ]
                        text, finish = await self._generate(repair)
                        output = self._parse(text, finish)
                    return await self._checked(output, text)
            except TimeoutError as exc:
                raise BackendTimeout(
                    f"timed out after {agent.timeout_s:g} s on instance '{self.instance.name}'"
                ) from exc

    def _parse(self, text: str, finish: str | None) -> Any:
        try:
            if self.contract is not None:
                return self.contract.validate_text(text)
            if not text.strip():
                raise OutputInvalid("the model returned an empty reply")
            return text.strip()
        except OutputInvalid as invalid:
            if finish != "length":
                raise
            raise OutputTruncated(
                f"the reply was cut at max_tokens={self.agent.max_tokens} before it was complete "
                f"(raise the agent's max_tokens): {invalid}"
            ) from invalid

    async def _checked(self, output: Any, text: str) -> Any:
        """The pipeline's check on a valid reply: keep, correct, or regenerate once."""
        if self.check is None:
            return output
        try:
            return await self._run_check(output, last_chance=False)
        except Rejected as rejected:
            reason = str(rejected)
        self.emit("agent_retry", self.agent.name, regenerate=True, error=reason)
        again = [
            *self.messages,
            Message("assistant", text),
            Message("user", f"Your reply was rejected: {reason}. Write it again without that problem."),
        ]
        try:
            second: Any = self._parse(*await self._generate(again))
        except OutputInvalid:
            second = None
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

    async def _generate(self, messages: list[Message]) -> tuple[str, str | None]:
        """The reply's text and why it ended (`finish_reason`: "stop", "length", ...)."""
        agent = self.agent
        request = CompletionRequest(
            messages=messages,
            max_tokens=agent.max_tokens,
            temperature=agent.temperature,
            schema=self.contract.schema if self.contract else None,
            schema_name=self.contract.name if self.contract else "output",
            thinking=agent.thinking,
            priority=rank(early=agent.deliver == "early", priority=agent.priority),
            agent=agent.name,
        )
        self.result.attempts += 1
        parts: list[str] = []
        usage = Usage()
        finish: str | None = None
        start = self.clock()
        first: float | None = None
        # This call's deadline follows the instance's measured speed (speed.py), under the
        # agent's timeout_s; the prompt is counted roughly, as if nothing were cached.
        speed = self.instance.speed
        deadline = speed.deadline_s(sum(len(m.content) for m in messages) // 4, agent.max_tokens, agent.timeout_s)
        try:
            async with asyncio.timeout(deadline):
                # Closed on the way out whatever happens (timeout, cancellation, an error here):
                # the generation stops and the backend's slot is free at once (base.py).
                async with aclosing(self.instance.backend.complete(request)) as stream:
                    async for chunk in stream:
                        if chunk.text:
                            if first is None:
                                first = self.clock() - start
                            parts.append(chunk.text)
                            self.emit("agent_token", agent.name, text=chunk.text)
                        if chunk.usage is not None:
                            usage = chunk.usage
                        if chunk.finish_reason is not None:
                            finish = chunk.finish_reason
        except TimeoutError as exc:
            if deadline >= agent.timeout_s:
                raise  # the agent's own timeout: reported by the attempt
            raise BackendTimeout(
                f"no complete reply within {deadline:.1f} s on instance '{self.instance.name}': "
                f"{SLACK:g}x what its measured speed needs for this call (timeout_s {agent.timeout_s:g} s)"
            ) from exc
        total = self.clock() - start
        speed.observe(
            computed_prompt_tokens=usage.prompt_tokens - usage.cached_tokens,
            first_token_s=first,
            completion_tokens=usage.completion_tokens,
            total_s=total,
        )
        if self.first_token_s is None:
            self.first_token_s = first
        self.generation_s += total
        self.result.finish_reason = finish
        self.largest_prompt = max(self.largest_prompt, usage.prompt_tokens)
        self.result.prompt_tokens += usage.prompt_tokens
        self.result.cached_tokens += usage.cached_tokens
        self.result.completion_tokens += usage.completion_tokens
        return "".join(parts), finish


class _ShortcutFailed(Exception):
    """Carries a shortcut's failure past the retries: retrying would not rerun it."""

    def __init__(self, error: BackendError | OutputInvalid) -> None:
        super().__init__(str(error))
        self.error = error
