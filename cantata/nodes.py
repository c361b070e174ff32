"""How one agent runs once its inputs exist: a Python function, or a model call with
validation, one repair, retries with backoff, and a timeout per attempt."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from cantata.backends.base import CompletionRequest, Message, Usage
from cantata.errors import BackendError, CantataError, OutputInvalid, Rejected, Skip
from cantata.pool import Instance, rank
from cantata.spec import AgentSpec
from cantata.structured import OutputContract, repair_instruction
from cantata.turn import AgentResult

if TYPE_CHECKING:
    from cantata.runtime import Cantata

Emit = Callable[..., None]


@dataclass
class FunctionContext:
    """What a `function:` agent receives: the turn so far, as plain data."""

    message: str
    user: str
    session: str
    turn: int
    inputs: dict[str, Any]  # outputs of the agents it reads that succeeded
    missing: list[str]  # agents it reads that failed or were skipped
    memory: dict[str, Any]  # latest earlier outputs of the agents it lists under `memory`
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    # What the caller of the turn passed (`run_turn(..., options=...)`), e.g. the factory's --force.
    options: dict[str, Any] = field(default_factory=dict)
    # The runtime running the turn, for functions that run turns of their own (the factory's
    # tester runs the agent it tests on the same instances) or deploy what they made.
    runtime: Cantata | None = None
    turn_id: int = 0  # the turn's id in the store (`turn` is its number in the session)
    iteration: int = 0  # within a pipeline's loop: 1, 2, ...

    def conflict(self, **details: Any) -> None:
        """Record a contradiction between agents; it is stored, emitted and shown in the turn."""
        self.conflicts.append(details)


@dataclass
class CheckContext(FunctionContext):
    """What an agent's `check` receives: the turn so far plus the model's validated reply."""

    output: Any = None  # None when the regenerated reply did not even validate
    last_chance: bool = False  # True after the one regeneration: return a safe output, do not raise
    instance: str = ""  # the instance that served the reply, and its `model` string: a check may
    model: str | None = None  # trust a model's judgement according to the model (coaching's risk cap)


async def run_function(
    fn: Callable[..., Any],
    ctx: FunctionContext,
    contract: OutputContract | None,
    timeout_s: float,
    *,
    allow_none: bool = False,
) -> Any:
    try:
        async with asyncio.timeout(timeout_s):
            value = fn(ctx)
            if inspect.isawaitable(value):
                value = await value
    except TimeoutError:
        raise BackendError(f"function timed out after {timeout_s:g} s") from None
    except (BackendError, OutputInvalid, Skip):
        raise
    except Exception as exc:  # a user's function: report, never crash the turn
        raise BackendError(f"function raised {type(exc).__name__}: {exc}") from None
    return normalise(value, contract, allow_none=allow_none)


def normalise(value: Any, contract: OutputContract | None, *, allow_none: bool) -> Any:
    """A function's return value as a stored output: validated when there is a contract."""
    if value is None and allow_none:
        return None
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
        context: FunctionContext | None = None,
    ) -> None:
        self.agent = agent
        self.prefix = prefix
        self.check = check
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
                return await self._attempt()
            except (BackendError, OutputInvalid) as exc:
                last_error = exc
        assert last_error is not None
        if self.check is not None:
            # Entries that code writes (a risk tier, say) must exist even when the model
            # failed: the check gets the last chance with no reply, and may answer safely.
            self.emit("agent_retry", agent.name, fallback=True, error=str(last_error))
            try:
                return self._run_check(None, last_chance=True)
            except (Rejected, OutputInvalid, BackendError):
                pass
        raise last_error

    async def _attempt(self) -> Any:
        agent = self.agent
        async with self.instance.slot(rank(early=agent.deliver == "early", priority=agent.priority), self.prefix):
            if self.result.started_s is None:
                self.result.started_s = self.clock()
                self.emit("agent_started", agent.name, instance=self.instance.name)
            try:
                async with asyncio.timeout(agent.timeout_s):
                    text = await self._generate(self.messages)
                    try:
                        output = self._parse(text)
                    except OutputInvalid as invalid:
                        if self.contract is None:
                            raise
                        # One repair: same briefing (still cached), plus the error to fix.
                        self.emit("agent_retry", agent.name, repair=True, error=str(invalid))
                        repair = [
                            *self.messages,
                            Message("assistant", text),
                            Message("user", repair_instruction(invalid)),
                        ]
                        text = await self._generate(repair)
                        output = self._parse(text)
                    return await self._checked(output, text)
            except TimeoutError:
                raise BackendError(
                    f"timed out after {agent.timeout_s:g} s on instance '{self.instance.name}'"
                ) from None

    def _parse(self, text: str) -> Any:
        if self.contract is not None:
            return self.contract.validate_text(text)
        if not text.strip():
            raise OutputInvalid("the model returned an empty reply")
        return text.strip()

    async def _checked(self, output: Any, text: str) -> Any:
        """The pipeline's check on a valid reply: keep, correct, or regenerate once."""
        if self.check is None:
            return output
        try:
            return self._run_check(output, last_chance=False)
        except Rejected as rejected:
            reason = str(rejected)
        self.emit("agent_retry", self.agent.name, regenerate=True, error=reason)
        again = [
            *self.messages,
            Message("assistant", text),
            Message("user", f"Your reply was rejected: {reason}. Write it again without that problem."),
        ]
        try:
            second: Any = self._parse(await self._generate(again))
        except OutputInvalid:
            second = None
        try:
            return self._run_check(second, last_chance=True)
        except Rejected as refused:
            raise OutputInvalid(f"the check rejected the reply twice: {refused}") from None

    def _run_check(self, output: Any, *, last_chance: bool) -> Any:
        assert self.check is not None and self.context is not None
        ctx = CheckContext(
            **vars(self.context),
            output=output,
            last_chance=last_chance,
            instance=self.instance.name,
            model=self.instance.config.model,
        )
        try:
            value = self.check(ctx)
        except (Rejected, OutputInvalid):
            raise
        except Exception as exc:  # a user's check: report, never crash the turn
            raise BackendError(f"check raised {type(exc).__name__}: {exc}") from None
        return normalise(value, self.contract, allow_none=False)

    async def _generate(self, messages: list[Message]) -> str:
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
        start = self.clock()
        async for chunk in self.instance.backend.complete(request):
            if chunk.text:
                if self.first_token_s is None:
                    self.first_token_s = self.clock() - start
                parts.append(chunk.text)
                self.emit("agent_token", agent.name, text=chunk.text)
            if chunk.usage is not None:
                usage = chunk.usage
        self.generation_s += self.clock() - start
        self.largest_prompt = max(self.largest_prompt, usage.prompt_tokens)
        self.result.prompt_tokens += usage.prompt_tokens
        self.result.cached_tokens += usage.cached_tokens
        self.result.completion_tokens += usage.completion_tokens
        return "".join(parts)
