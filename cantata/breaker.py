"""A circuit breaker per instance: an instance that keeps failing is left alone for a while.

Without one, every turn sends its calls (and their retries) to a dead instance, and a hung
one costs each of them its whole deadline. The breaker counts the instance's consecutive
failures: no connection, a 5xx or 429, a timeout, a stream cut short or unreadable. After
`breaker_failures` of them, or at once when the check before a turn finds the instance
down, it opens: calls fail at once with `CircuitOpen`, which says why and when the next try
is. After `breaker_cooldown_s` it is half-open and lets one call through, the probe: an
answer closes it, a failure opens it again for twice as long (at most MAX_COOLDOWN_S).

What is no failure of the instance: a request it refused (a 4xx other than 429: it
answered, and retrying would not help; a prompt over the embedded model's context), and a
reply the model got wrong (invalid output, judged after the call). A call cancelled before
it ended says nothing either way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

from cantata.errors import (
    BackendError,
    BackendHTTPError,
    BackendProtocolError,
    BackendTimeout,
    BackendUnavailable,
    CircuitOpen,
)

MAX_COOLDOWN_S = 600.0

CircuitState = Literal["closed", "open", "half_open"]
# For a gauge: how far from serving each state is.
STATE_VALUES: dict[CircuitState, int] = {"closed": 0, "half_open": 1, "open": 2}


def counts_against(error: BaseException) -> bool:
    """Whether `error` says the instance is failing, not the request (a prompt over the
    context, a 4xx) or the breaker itself."""
    if isinstance(error, CircuitOpen):
        return False
    if isinstance(error, BackendHTTPError):
        return error.http_status >= 500 or error.http_status == 429
    return isinstance(error, (BackendUnavailable, BackendTimeout, BackendProtocolError))


class Breaker:
    def __init__(
        self, instance: str, *, failures: int, cooldown_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.instance = instance
        self.threshold = failures
        self.base_cooldown_s = cooldown_s
        self.cooldown_s = cooldown_s
        self.clock = clock
        self.failures = 0  # in a row
        self.reason: str | None = None  # of the last failure
        self.opened_at: float | None = None
        self.probing = False  # half-open with its one probe under way
        # Counted so that each change is told once (`unannounced`), by whichever call sees it.
        self.changes = 0
        self._announced = 0

    @property
    def state(self) -> CircuitState:
        if self.opened_at is None:
            return "closed"
        if self.probing or self.clock() >= self.opened_at + self.cooldown_s:
            return "half_open"
        return "open"

    def admit(self) -> None:
        """Let a call through, or raise CircuitOpen; half-open lets one through, the probe."""
        state = self.state
        if state == "closed":
            return
        if state == "half_open" and not self.probing:
            self.probing = True
            self.changes += 1
            return
        raise CircuitOpen(self._refusal())

    @contextmanager
    def call(self) -> Iterator[None]:
        """Admit one call and judge the instance by how it ends."""
        self.admit()
        try:
            yield
        except BaseException as exc:
            if counts_against(exc):
                self.failed(str(exc))
            elif isinstance(exc, BackendError):
                self.succeeded()  # a 4xx or an error of the request: the instance answered
            else:
                self.released()
            raise
        self.succeeded()

    def succeeded(self) -> None:
        if self.opened_at is not None:
            self.changes += 1
        self.failures = 0
        self.reason = None
        self.opened_at = None
        self.probing = False
        self.cooldown_s = self.base_cooldown_s

    def failed(self, reason: str) -> None:
        self.failures += 1
        self.reason = reason
        if self.opened_at is None:
            if self.failures >= self.threshold:
                self._open()
        elif self.state == "half_open":
            self.trip(reason)  # the probe failed
        # Otherwise a call let through before the breaker opened: it is open already.

    def trip(self, reason: str) -> None:
        """Open now, whatever the count: the instance was found down, or its probe failed
        (then for twice as long as before)."""
        if self.opened_at is not None:
            self.cooldown_s = min(2 * self.cooldown_s, MAX_COOLDOWN_S)
        self.failures = max(self.failures, 1)
        self.reason = reason
        self._open()

    def released(self) -> None:
        """A call let through ended with no word on the instance (it was cancelled): a probe
        may be sent again."""
        self.probing = False

    def _open(self) -> None:
        self.opened_at = self.clock()
        self.probing = False
        self.changes += 1

    def probe_in_s(self) -> float | None:
        """Seconds until a probe may go; None when closed, 0 when due or under way."""
        if self.opened_at is None:
            return None
        return max(0.0, self.opened_at + self.cooldown_s - self.clock())

    def _refusal(self) -> str:
        last = (self.reason or "").removeprefix(f"instance '{self.instance}': ")
        wait = "a probe is under way" if self.probing else f"next try in {self.probe_in_s():.0f} s"
        return (
            f"instance '{self.instance}' is failing fast after {self.failures} failure(s) in a row"
            f" ({wait}); the last: {last}"
        )

    def as_json(self) -> dict[str, Any]:
        """The state for reports and events; `probe_at` is wall-clock time, for other processes."""
        wait = self.probe_in_s()
        return {
            "state": self.state,
            "failures": self.failures,
            "reason": self.reason,
            "probe_at": None if wait is None else round(time.time() + wait, 3),
        }

    def unannounced(self) -> dict[str, Any] | None:
        """The state if it changed since last asked, else None: each change is told once."""
        if self.changes == self._announced:
            return None
        self._announced = self.changes
        return self.as_json()
