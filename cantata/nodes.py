"""How a pipeline's own code runs for an agent: a `function:` agent, and the `shortcut` and
`check` of a model agent (whose model call is model_call.py).

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from cantata.errors import BackendError, BackendTimeout, OutputInvalid, Rejected, Skip
from cantata.structured import OutputContract
from cantata.threads import run_in_thread

if TYPE_CHECKING:
    from cantata.runtime import Cantata

log = logging.getLogger(__name__)


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
