"""Failover between workers that share a state backend (``state_url = "postgresql://…"``).

``Failover`` is a loop the runtime runs while it is open, when its backend is shared: every
``lease_s / 3`` it looks for tasks that were running on a worker whose lease expired (killed,
machine lost) and resumes them here from their last completed step. Several workers may look
at once; the lease is taken atomically, so exactly one of them resumes a task. It also takes
back the tasks whose lease names this worker while it does not run them: after a restart under
the same ``worker_id`` (at once: the first look is at start), or once the store is back after
an outage cut them off.

The same loop stops the tasks this worker runs whose lease another worker took meanwhile (this
worker froze or was cut off past its lease): ``stop_lost``, with failover off too.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

from skillrt._state.protocol import StateBackend
from skillrt._tasks.endings import LEASE_LOST
from skillrt._tasks.tasktable import TaskTable
from skillrt.outcomes import is_resumable

__all__ = ["RUNNING_STATES", "Failover"]

# States a task is in while a worker runs it; a record left in one of them without a live
# lease belongs to a worker that died.
RUNNING_STATES = ("UNDERSTANDING", "PLANNING", "EXECUTING")


class Failover:
    """Resume the running tasks of dead workers (see the module docstring)."""

    def __init__(
        self,
        state: StateBackend,
        tasks: TaskTable,
        resume: Callable[[str], Coroutine[Any, Any, None]],
        *,
        interval_s: float,
        adopt: bool = True,
    ) -> None:
        self.state = state
        self.adopt_orphans = adopt  # False (``failover = false``): only ``stop_lost``
        self.tasks = tasks
        self.resume = resume
        self.interval_s = interval_s
        self._loop_task: asyncio.Task[None] | None = None
        self._resumed: set[asyncio.Task[None]] = set()
        self.adopted: list[str] = []

    def start(self) -> None:
        if self._loop_task is None or self._loop_task.done():
            self._loop_task = asyncio.create_task(self._run(), name="skillrt-failover")

    async def sweep(self) -> list[str]:
        """One look: adopt every orphaned running task; returns their ids."""
        async with asyncio.timeout(self.interval_s * 3 + 5):
            found = await asyncio.to_thread(self.state.orphans, RUNNING_STATES)
        taken = [task_id for task_id in found if await self.adopt(task_id)]
        self.adopted.extend(taken)
        return taken

    async def adopt(self, task_id: str) -> bool:
        """Take over a task whose worker died and run it on here.

        The lease is taken first, atomically: of several workers looking, one wins. The record
        is read afresh, so the journal is the dead worker's last committed one.
        """
        local = self.tasks.live(task_id)
        if local is not None and local.running:
            return False
        if not await self.state.hold(task_id):
            return False  # another worker was faster
        record = await self.state.read(task_id)
        # The resume takes the lease again (it is ours: holding it twice is fine) and keeps it.
        if record is None or not is_resumable(record):
            await self.state.release(task_id)
            return False
        self.tasks.pop(task_id)  # any copy here is older than the store's
        self.tasks.restore([record])
        runner = asyncio.create_task(self.resume(task_id))
        self._resumed.add(runner)
        runner.add_done_callback(self._resumed.discard)
        return True

    def stop_lost(self) -> list[str]:
        """Abort the tasks running here whose lease another worker took (``lease_lost``: they
        end as ``Endings.lost`` says, writing nothing); returns their ids. Before, a worker
        thawed past its lease ran its step to the end, and only its save was refused."""
        stopped = []
        for task_id in self.state.lost():
            task = self.tasks.live(task_id)
            if task is not None and task.running and task.runner is not None:
                task.controller.abort(LEASE_LOST)  # (a step in a thread writes no more)
                task.runner.cancel()
                stopped.append(task_id)
        return stopped

    async def _run(self) -> None:
        # The first look is at once: a worker restarted under its own name takes its tasks
        # back now (their leases name it), not a lease later.
        while True:
            self.stop_lost()
            if self.state.available and self.adopt_orphans:
                with contextlib.suppress(Exception):  # a failed look is retried next round
                    await self.sweep()
            await asyncio.sleep(self.interval_s)

    async def stop(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
            self._loop_task = None
