"""What an agent's failed attempt is retried after, if at all: the rules of the one retry
loop (`ModelCall.run`; the HTTP client's own retries are off).

- Not retried: a request the server refused as such (a 4xx other than 408, 425 and 429: a
  bad request, a wrong key, a missing model would be refused again) and a call the
  instance's circuit breaker refused (it fails fast on purpose), and a tool loop that hit its
  limits (the same conversation would hit them again).
- The wait: exponential backoff with jitter, between half and all of BASE_S x 2^(n-1)
  before the nth retry (at most MAX_BACKOFF_S), so that the calls a failure hit together
  do not come back together; longer if the server said so with `Retry-After`, unless that
  is past the agent's `timeout_s`: then the agent fails at once, saying so, rather than
  hold its turn past its deadline.
"""

from __future__ import annotations

import random

from cantata.errors import BackendHTTPError, CantataError, CircuitOpen, ToolLimitReached

BASE_S = 0.25
MAX_BACKOFF_S = 4.0
RETRIED_4XX = frozenset({408, 425, 429})  # a timeout, too early, too many requests: try later


def retryable(error: CantataError) -> bool:
    if isinstance(error, CircuitOpen | ToolLimitReached):
        return False
    if isinstance(error, BackendHTTPError):
        return error.http_status >= 500 or error.http_status in RETRIED_4XX
    return True


def backoff_s(retry: int) -> float:
    """The jittered wait before the `retry`th retry (from 1)."""
    top: float = min(BASE_S * 2.0 ** (retry - 1), MAX_BACKOFF_S)
    return top * (0.5 + 0.5 * random.random())


def wait_s(error: CantataError, retry: int, *, limit_s: float) -> float | None:
    """How long to wait before the `retry`th retry after `error`; None when the server asks
    for longer than `limit_s`."""
    wait = backoff_s(retry)
    after = error.retry_after_s if isinstance(error, BackendHTTPError) else None
    if after is None:
        return wait
    return max(wait, after) if after <= limit_s else None


def not_waited(error: CantataError, limit_s: float) -> CantataError:
    """`error`, saying why it was not retried: the server asked for a wait past `limit_s`."""
    assert isinstance(error, BackendHTTPError) and error.retry_after_s is not None
    return BackendHTTPError(
        f"{error}; not retried: the server asked to wait {error.retry_after_s:g} s (Retry-After), "
        f"past the agent's timeout_s of {limit_s:g} s",
        http_status=error.http_status,
        retry_after_s=error.retry_after_s,
    )
