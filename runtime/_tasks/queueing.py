"""Taking work from the shared store's queue (``[queue]``; docs/shared-store.md).

``QueueTaker`` is a loop the runtime runs while it is open, when its backend has a queue: woken
when work is queued anywhere (and every ``poll_s``, for a wake-up missed), it takes as many
waiting tasks as it has room for (``concurrency`` minus those it runs from the queue now, within
the shared ``limits`` of its model and model server), runs each (``run``: the task's turn, as if
its caller had asked here) and records the reply, which goes back to the worker that queued it.
Every few rounds it puts back the work of workers that died before starting it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import structlog

from skillrt._state.protocol import QueuedTask, WorkQueue
from skillrt.exceptions import StoreUnavailable
from skillrt.messages import ChatMessage
from skillrt.settings import QueueConfig

__all__ = ["QueueTaker"]


class QueueTaker:
    """Takes and runs queued tasks on this worker (see the module docstring)."""

    def __init__(
        self,
        queue: WorkQueue,
        *,
        config: QueueConfig,
        keys: list[str],
        run: Callable[[QueuedTask], Awaitable[ChatMessage]],
        available: Callable[[], bool],
        logger: Callable[[], structlog.stdlib.BoundLogger],
    ) -> None:
        self.queue = queue
        self.config = config
        self.keys = keys
        self.run = run
        self.available = available
        self.logger = logger
        self.running: set[asyncio.Task[None]] = set()
        self.taken = 0  # tasks taken from the queue since start
        self._wake = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.queue.listen(self._wake.set)
        if self.config.concurrency > 0:
            self._loop_task = asyncio.create_task(self._take_loop(), name="skillrt-queue")

    async def _take_loop(self) -> None:
        rounds = 0
        while True:
            self._wake.clear()
            room = self.config.concurrency - len(self.running)
            taken: list[QueuedTask] = []
            if room > 0 and self.available():
                try:
                    taken = await self.queue.take(room, self.keys, self.config.limits)
                    rounds += 1
                    if rounds % 10 == 1:
                        await asyncio.to_thread(self.queue.requeue_dead)
                except (StoreUnavailable, TimeoutError) as exc:
                    self.logger().warning("agent.queue.unavailable", error=str(exc))
            for entry in taken:
                self.taken += 1
                job = asyncio.create_task(self._one(entry))
                self.running.add(job)
                job.add_done_callback(self._finished)
            if taken and len(taken) == room:
                continue  # full: wait for a task to end (it wakes us)
            if taken:
                continue  # more may be waiting
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.config.poll_s):
                    await self._wake.wait()

    def _finished(self, job: asyncio.Task[None]) -> None:
        self.running.discard(job)
        self._wake.set()  # room for one more

    async def _one(self, entry: QueuedTask) -> None:
        result: str | None = None
        try:
            message = await self.run(entry)
            result = message.model_dump_json()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug, or the store: the caller still hears of it
            self.logger().error("agent.error", where="queued task", task_id=entry.task_id,
                                error=str(exc))  # fmt: skip
            result = ChatMessage(
                content=f"the task failed on the worker that took it: {type(exc).__name__}",
                task_id=entry.task_id,
                state="ERROR",
                data={"outcome": "failed", "error": "queued_task"},
            ).model_dump_json()
        for attempt in range(30):  # the reply is recorded, or the store is gone for long
            try:
                await self.queue.done(entry.id, result)
                return
            except (StoreUnavailable, TimeoutError):
                await asyncio.sleep(min(5.0, 0.5 * (attempt + 1)))

    async def stop(self) -> None:
        """Take no more work (the tasks taken go on until the runtime stops them)."""
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
            self._loop_task = None

    async def drain(self, timeout_s: float = 10.0) -> None:
        """Wait for the replies of the tasks taken (stopped at shutdown) to be recorded."""
        if self.running:
            await asyncio.wait(set(self.running), timeout=timeout_s)
