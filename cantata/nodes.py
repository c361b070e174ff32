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
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from cantata.context import FunctionContext
from cantata.errors import BackendError, BackendTimeout, OutputInvalid, Rejected, Skip, get_logger
from cantata.structured import OutputContract
from cantata.threads import run_in_thread

log = get_logger(__name__)


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
