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


async def run_in_thread(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` on a worker thread, awaited; cancelling the await abandons the call."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():  # the caller may have given up (timeout, cancellation)
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def job() -> None:
        try:
            outcome: tuple[bool, Any] = (True, context.run(fn, *args))
        except StopIteration as exc:  # a future cannot hold StopIteration
            outcome = (False, RuntimeError(f"StopIteration raised: {exc}"))
        except BaseException as exc:  # handed to the caller, whatever it is
            outcome = (False, exc)
        try:
            loop.call_soon_threadsafe(settle, *outcome)
        except RuntimeError:  # the loop closed while the function ran: nobody waits
            pass

    _workers.submit(job)
    return await future
