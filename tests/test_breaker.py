"""The circuit breaker on its own, on a clock the test moves: when it opens, what it says,
how it probes and when it closes; which failures count against an instance."""

from __future__ import annotations

import pytest

from cantata.breaker import Breaker, counts_against
from cantata.errors import (
    BackendError,
    BackendHTTPError,
    BackendProtocolError,
    BackendTimeout,
    BackendUnavailable,
    CircuitOpen,
    OutputInvalid,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def breaker(clock: Clock, *, failures: int = 3, cooldown_s: float = 30.0) -> Breaker:
    return Breaker("gpu", failures=failures, cooldown_s=cooldown_s, clock=clock)


def fail(b: Breaker, times: int = 1, reason: str = "instance 'gpu': HTTP 503 from /chat") -> None:
    for _ in range(times):
        b.admit()
        b.failed(reason)


def test_it_opens_after_the_failures_in_a_row_and_then_fails_fast_saying_why() -> None:
    clock = Clock()
    b = breaker(clock)
    fail(b, 2)
    b.admit()
    b.succeeded()  # an answer resets the count: failures must come in a row
    fail(b, 2)
    assert b.state == "closed"
    fail(b)
    assert b.state == "open"
    clock.now += 12
    with pytest.raises(CircuitOpen) as refused:
        b.admit()
    assert str(refused.value) == (
        "instance 'gpu' is failing fast after 3 failure(s) in a row (next try in 18 s); the last: HTTP 503 from /chat"
    )
    assert isinstance(refused.value, BackendUnavailable)  # exit 2, HTTP 503 where it reaches a boundary


def test_after_the_cooldown_one_probe_goes_and_an_answer_closes_it() -> None:
    clock = Clock()
    b = breaker(clock)
    fail(b, 3)
    clock.now += 30
    assert b.state == "half_open"
    b.admit()  # the probe
    with pytest.raises(CircuitOpen, match="a probe is under way"):
        b.admit()  # only one at a time
    b.succeeded()
    assert b.state == "closed" and b.failures == 0
    b.admit()
    b.admit()


def test_a_failed_probe_opens_it_again_for_twice_as_long() -> None:
    clock = Clock()
    b = breaker(clock, cooldown_s=10)
    fail(b, 3)
    for wait in (10, 20, 40):
        clock.now += wait - 0.5
        with pytest.raises(CircuitOpen):
            b.admit()
        clock.now += 0.5
        fail(b)  # the probe
        assert b.state == "open"
    clock.now += 80
    b.admit()
    b.succeeded()
    fail(b, 3)
    clock.now += 10  # closed in between: back to the first cool-down
    assert b.state == "half_open"


def test_a_probe_cancelled_without_a_verdict_lets_another_go() -> None:
    clock = Clock()
    b = breaker(clock)
    fail(b, 3)
    clock.now += 30
    with pytest.raises(KeyboardInterrupt), b.call():
        raise KeyboardInterrupt
    b.admit()  # a new probe may go


def test_a_failed_check_trips_it_at_once() -> None:
    clock = Clock()
    b = breaker(clock, failures=5)
    b.trip("instance 'gpu': cannot connect to http://gpu:8000/v1")
    with pytest.raises(CircuitOpen, match=r"after 1 failure\(s\) in a row.*cannot connect"):
        b.admit()


def test_the_call_context_judges_the_instance_by_the_error() -> None:
    clock = Clock()
    b = breaker(clock, failures=1)
    with pytest.raises(BackendHTTPError), b.call():
        raise BackendHTTPError("instance 'gpu': HTTP 401", http_status=401)
    assert b.state == "closed"  # it answered: the key is wrong, not the instance
    with pytest.raises(BackendTimeout), b.call():
        raise BackendTimeout("instance 'gpu': read timed out")
    assert b.state == "open"


@pytest.mark.parametrize(
    ("error", "counts"),
    [
        (BackendUnavailable("refused"), True),
        (BackendTimeout("hung"), True),
        (BackendProtocolError("cut short"), True),
        (BackendHTTPError("500", http_status=500), True),
        (BackendHTTPError("503", http_status=503), True),
        (BackendHTTPError("429", http_status=429), True),
        (BackendHTTPError("400", http_status=400), False),
        (BackendHTTPError("401", http_status=401), False),
        (BackendHTTPError("404", http_status=404), False),
        (BackendError("instance 'local': requested tokens exceed the context window"), False),
        (CircuitOpen("failing fast"), False),
        (OutputInvalid("not JSON"), False),
    ],
)
def test_what_counts_against_an_instance(error: Exception, counts: bool) -> None:
    assert counts_against(error) is counts


def test_each_change_is_told_once() -> None:
    clock = Clock()
    b = breaker(clock, failures=1)
    assert b.unannounced() is None
    fail(b)
    told = b.unannounced()
    assert told is not None and told["state"] == "open" and told["failures"] == 1
    assert told["reason"] == "instance 'gpu': HTTP 503 from /chat"
    assert b.unannounced() is None
    clock.now += 30
    b.admit()
    assert (b.unannounced() or {})["state"] == "half_open"
    b.succeeded()
    assert (b.unannounced() or {})["state"] == "closed"
