"""Group commit: the checkpoint writes of every task, a transaction (one fsync) per round.

With one fsync per write, a thousand tasks each journalling a step queue up a thousand fsyncs
on the event loop. Here writes are queued (the latest per task wins), a single flusher applies
everything queued in one transaction, off the event loop, and whoever needs durability awaits
it: ``ctx.step`` before it returns, a task's ending before its reply is delivered. State
changes are queued without waiting; they reach the disk with the next round, at the latest
with the step that follows them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import structlog

from skillrt._io.logs import library_logger
from skillrt._state.protocol import TaskStore
from skillrt._state.records import RecordText, TaskRecord

__all__ = ["Committer"]


class Committer:
    def __init__(
        self,
        store: TaskStore,
        *,
        threaded: bool = True,
        logger: structlog.stdlib.BoundLogger | None = None,
        on_reset: Callable[[], None] | None = None,
    ) -> None:
        self.store = store
        # Called (on the event loop) when the store had to start a fresh database: whoever
        # holds the live records queues them again, so what the old file lost is written back.
        self.on_reset = on_reset
        self._resets = getattr(store, "resets", 0)
        self.logger = logger or library_logger("skillrt._state.committer")
        self._threaded = threaded  # False for the in-memory store: nothing to wait for
        # task id -> record to save (or its JSON text), None: delete
        self._ops: dict[str, TaskRecord | RecordText | None] = {}
        self._waiters: list[asyncio.Future[None]] = []
        self._flusher: asyncio.Task[None] | None = None
        self.rounds = 0
        self._crowded = False  # the last round had several waiters

    def put(self, record: TaskRecord | RecordText) -> None:
        """Queue a save of ``record`` (a copy the caller no longer changes, or its JSON text)."""
        self._ops[record.id] = record
        self._kick()

    def delete(self, task_id: str) -> None:
        self._ops[task_id] = None
        self._kick()

    async def durable(self) -> None:
        """Return once everything queued so far is on disk (raises what the store raised)."""
        if not self._ops and (self._flusher is None or self._flusher.done()):
            return
        waiter = asyncio.get_running_loop().create_future()
        # A caller cancelled while waiting (a task stopped at shutdown) no longer reads the
        # outcome: mark a failure as seen, so asyncio does not print it as never retrieved.
        waiter.add_done_callback(_seen)
        self._waiters.append(waiter)
        self._kick()
        await asyncio.shield(waiter)

    def flush_sync(self) -> None:
        """Apply what is queued now, on this thread (at close, or without a running loop)."""
        ops, self._ops = self._ops, {}
        if ops:
            self._apply(ops)
            self._after_reset()
            ops, self._ops = self._ops, {}
            if ops:
                self._apply(ops)

    def _kick(self) -> None:
        if self._flusher is not None and not self._flusher.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a synchronous caller): write at once
            self.flush_sync()
            return
        self._flusher = loop.create_task(self._run())

    def _apply(self, ops: dict[str, TaskRecord | RecordText | None]) -> None:
        saves = [record for record in ops.values() if record is not None]
        deletes = [task_id for task_id, record in ops.items() if record is None]
        self.store.apply(saves, deletes)
        self.rounds += 1

    def _after_reset(self) -> None:
        resets = getattr(self.store, "resets", 0)
        if resets != self._resets:
            self._resets = resets
            if self.on_reset is not None:
                self.on_reset()

    async def _run(self) -> None:
        while self._ops or self._waiters:
            # Let the tasks that are ready queue their writes first. When the last round woke
            # several tasks (many run at once), they resume over the next two turns of the loop:
            # wait for them too, for fewer and larger rounds.
            for _ in range(2 if self._crowded else 1):
                await asyncio.sleep(0)
            ops, self._ops = self._ops, {}
            waiters, self._waiters = self._waiters, []
            self._crowded = len(waiters) > 1
            error: BaseException | None = None
            if ops:
                try:
                    if self._threaded:
                        await asyncio.to_thread(self._apply, ops)
                    else:
                        self._apply(ops)
                except Exception as exc:
                    error = exc
                    self.logger.error("agent.error", where="checkpoint commit", error=str(exc))
                self._after_reset()
            if error is not None:
                # Those who asked while this round was in flight may have data in it: they hear
                # of its failure too (their writes, if queued later, are retried next round).
                waiters, self._waiters = waiters + self._waiters, []
            for waiter in waiters:
                if waiter.done():
                    continue
                if error is None:
                    waiter.set_result(None)
                else:
                    waiter.set_exception(error)


def _seen(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()
