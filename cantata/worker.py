"""`cantata worker`: runs the turns that servers queue (`cantata serve --workers queue`).

Each job names a stored turn; the worker runs it through the runtime's resume path, under
the session's lease, with fenced writes (`Cantata(fence_writes=True)`): a turn taken over
from a dead worker goes on from its stored entries, none run again, and a worker that comes
back after losing its lease cannot write over its successor. Beside the jobs, a sweep hands
the turns of workers that stopped answering back to the queue, and queues stored turns that
no job names, so no message is lost.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Iterable
from pathlib import Path

from cantata import bundled
from cantata.config import InstancesConfig
from cantata.errors import UserError, get_logger
from cantata.loader import Pipeline
from cantata.runtime import Cantata
from cantata.turn_queue import MAX_TAKEOVERS, SWEEP_S, TurnQueue, fail_turn, queue_url

log = get_logger("cantata.worker")


class TurnWorker:
    """Runs the turns one queue's jobs name, on one runtime."""

    def __init__(self, runtime: Cantata, pipelines: dict[str, Pipeline], queue: TurnQueue) -> None:
        self.runtime = runtime
        self.pipelines = pipelines
        self.queue = queue
        # Turns the last sweep found running with no job: queued if this sweep finds them so
        # too. One sweep is not enough: a server queues a turn just after storing it, and a
        # sweep in between would queue it a second time, maybe ahead of its session's earlier
        # turns.
        self._unqueued: set[int] = set()

    async def run(self, turn_id: int, traceparent: str | None = None, takeovers: int = 0) -> None:
        """Run (or go on with) the stored turn, its span under `traceparent` (the request's);
        nothing if it is finished already (its job ran again after its worker was taken for dead).
        A turn taken over more than MAX_TAKEOVERS times is failed instead: its workers keep stopping."""
        found = await self.runtime.store.unfinished_turn(turn_id)
        if found is None:
            return
        if takeovers > MAX_TAKEOVERS:
            reason = (
                f"turn {turn_id} was not run again: the worker running it stopped {takeovers} times"
                f" (it is taken over at most {MAX_TAKEOVERS} times)"
            )
            # Under the session's lease, as a run would be: the last worker's writes, if it
            # comes back, are refused, and the session's next turn waits for this one's end.
            async with self.runtime.leases.hold(found.session.id, wait=True):
                await fail_turn(self.runtime.store, self.runtime.leases.holder, turn_id, reason)
            log.warning("%s; failed it", reason)
            return
        pipeline = self.pipelines.get(found.session.pipeline)
        if pipeline is None:
            raise UserError(
                f"turn {turn_id} is of pipeline '{found.session.pipeline}', which this worker does not serve"
            )
        try:
            await self.runtime.resume(pipeline, turn_id, wait=True, traceparent=traceparent)
        except UserError:
            if await self.runtime.store.unfinished_turn(turn_id) is not None:
                raise
            # Another worker finished it while this one waited for the lease.

    async def sweep(self) -> None:
        """Until cancelled: turns of silent workers back to the queue, unqueued turns queued."""
        while True:
            try:
                await self.queue.recover_stalled()
                await self.queue_orphans()
            except Exception as exc:  # the database went away for a moment: the next sweep
                log.warning("the sweep for stalled and unqueued turns failed: %s", exc)
            await asyncio.sleep(SWEEP_S)

    async def queue_orphans(self) -> int:
        """Queue the stored running turns no job named at this sweep and the last one; how
        many. A turn queued twice is harmless all the same: its second job finds it finished."""
        store = self.runtime.store
        orphans = await self.queue.orphans(await store.running_turns())
        lasting = [turn_id for turn_id in orphans if turn_id in self._unqueued]
        self._unqueued = set(orphans)
        for turn_id in lasting:
            found = await store.unfinished_turn(turn_id)
            if found is not None and found.session.pipeline in self.pipelines:
                await self.queue.enqueue(turn_id, found.session.id)
        if lasting:
            log.warning("queued %d stored turn(s) that no job named", len(lasting))
        return len(lasting)


async def run_worker(
    config: InstancesConfig, *, pipelines: Iterable[Path] = (), concurrency: int, grace_s: float
) -> None:
    """A worker process's life: open the store and the queue, run turns until a signal."""
    queue = TurnQueue(queue_url(config))
    runtime = Cantata(config, fence_writes=True)
    worker = TurnWorker(runtime, bundled.served(pipelines), queue)
    await queue.open()
    try:
        await runtime.store.running_turns()  # opens (and migrates) the store now: an error is said at start
        sweeping = asyncio.create_task(worker.sweep())
        try:
            name = f"{socket.gethostname()}/{os.getpid()}"
            await queue.work(worker.run, concurrency=concurrency, name=name, grace_s=grace_s)
        finally:
            sweeping.cancel()
            await asyncio.gather(sweeping, return_exceptions=True)
    finally:
        await queue.close()
        await runtime.close()
