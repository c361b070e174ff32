"""Pipelines' synchronous functions run here, off the event loop, on daemon threads.

On the loop, a function that blocks or loops would stall every other turn of a server,
and `asyncio.timeout` could not interrupt it. On a worker thread its caller gives up at
the timeout and carries on; the thread cannot be killed, so it runs until the function
returns, and its result is dropped. Daemon threads rather than a ThreadPoolExecutor:
concurrent.futures joins its workers at interpreter exit (and asyncio.run joins the loop's
default executor), so one stuck function would hang the process, or pytest, on the way out.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import queue
import threading
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

T = TypeVar("T")

IDLE_EXIT_S = 30.0  # an idle worker thread ends after this long without work


class _Workers:
    """Reused daemon threads: a call starts a thread only when none is idle."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()
        self._names = itertools.count(1)

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1  # that worker is spoken for
        self._jobs.put(job)
        if start:
            name = f"cantata-function-{next(self._names)}"
            threading.Thread(target=self._work, name=name, daemon=True).start()

    def _work(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=IDLE_EXIT_S)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # no job is on its way to this thread: end it
                        self._idle -= 1
                        return
                continue
            job()
            with self._lock:
                self._idle += 1


_workers = _Workers()


def settle(future: asyncio.Future[Any], result: Any = None, error: BaseException | None = None) -> None:
    """Resolve `future` on its loop, unless its caller gave up meanwhile (timeout, cancellation)."""
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def answering(
    fn: Callable[[], T], loop: asyncio.AbstractEventLoop, done: Callable[[Any, BaseException | None], None]
) -> Callable[[], None]:
    """A job for a worker thread: run `fn`, then `done(result, error)` on `loop`. The one
    way back to the loop for every thread here (functions' and the store's)."""

    def job() -> None:
        try:
            outcome: tuple[Any, BaseException | None] = (fn(), None)
        except StopIteration as exc:  # a future cannot hold StopIteration
            outcome = (None, RuntimeError(f"StopIteration raised: {exc}"))
        except BaseException as exc:  # handed to the loop, whatever it is
            outcome = (None, exc)
        try:
            loop.call_soon_threadsafe(done, *outcome)
        except RuntimeError:  # the loop closed while the job ran: nobody waits
            pass

    return job


async def run_in_thread(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` on a worker thread, awaited; cancelling the await abandons the call."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()
    _workers.submit(answering(lambda: context.run(fn, *args), loop, partial(settle, future)))
    return await future
