"""Group commit: the checkpoint writes of every task, a transaction (one fsync) per round.

With one fsync per write, a thousand tasks each journalling a step queue up a thousand fsyncs
on the event loop. Here writes are queued (the latest per task wins), a single flusher applies
everything queued in one transaction, off the event loop, and whoever needs durability awaits
it: ``ctx.step`` before it returns, a task's ending before its reply is delivered. State
changes are queued without waiting; they reach the disk with the next round, at the latest
with the step that follows them.

The rounds run on one commit thread of the committer's own, in order (no thread-pool hand-off
per round), and carry the side writes of that turn of the loop too: the history's entries
(``add_side``) are written in the same thread right after the checkpoints, so neither ever
touches the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable

import structlog

from skillrt._io.logs import library_logger
from skillrt._state.protocol import TaskStore
from skillrt._state.records import RecordText, TaskRecord

__all__ = ["Committer"]

Job = Callable[[], None]
# A side writer, asked on the event loop at the start of each round: the job to run in the
# commit thread after the round's checkpoints (None: nothing to write).
SideWriter = Callable[[], Job | None]


class _CommitThread:
    """One thread that runs jobs in the order they came, and says when each is done. It ends
    after a second with nothing to do (a runtime that is never closed leaves no thread behind)
    and starts again with the next job."""

    idle_s = 1.0

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Job, Callable[[BaseException | None], None]] | None]
        self._jobs = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, job: Job, done: Callable[[BaseException | None], None]) -> None:
        with self._lock:  # the thread decides to end under this lock too: no job is stranded
            if self._thread is None:
                # A daemon: a host that never closes the runtime must still be able to exit (a
                # round cut off by exit is a rolled-back SQLite transaction, nothing torn).
                self._thread = threading.Thread(
                    target=self._run, name="skillrt-commit", daemon=True
                )
                self._thread.start()
            self._jobs.put((job, done))

    def run(self, job: Job) -> None:
        """Run ``job`` in the thread, after what is queued there, and wait for it here."""
        finished = threading.Event()
        failure: list[BaseException] = []

        def done(error: BaseException | None) -> None:
            if error is not None:
                failure.append(error)
            finished.set()

        self.submit(job, done)
        finished.wait()
        if failure:
            raise failure[0]

    @property
    def alive(self) -> bool:
        return self._thread is not None

    def stop(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is not None:
                self._jobs.put(None)
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        while True:
            try:
                item = self._jobs.get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:
                    if self._jobs.empty():
                        if self._thread is threading.current_thread():
                            self._thread = None
                        return
                continue
            if item is None:
                return
            job, done = item
            error: BaseException | None = None
            try:
                job()
            except BaseException as exc:  # handed to whoever waits for the job
                error = exc
            done(error)


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
        self._thread = _CommitThread()
        # task id -> record to save (or its JSON text), None: delete
        self._ops: dict[str, TaskRecord | RecordText | None] = {}
        self._waiters: list[asyncio.Future[None]] = []
        self._sides: list[SideWriter] = []
        self._side_due = False
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

    def add_side(self, writer: SideWriter) -> None:
        """Have every round ask ``writer`` for a job to run after its checkpoints (see
        ``SideWriter``); a failing job is logged by its writer, never fails the round."""
        self._sides.append(writer)

    def nudge(self) -> None:
        """A side writer has something: start a round soon, without waiting for it."""
        self._side_due = True
        self._kick()

    async def durable(self) -> None:
        """Return once everything queued so far is on disk (raises what the store raised)."""
        if not self._pending():
            return
        waiter = asyncio.get_running_loop().create_future()
        # A caller cancelled while waiting (a task stopped at shutdown) no longer reads the
        # outcome: mark a failure as seen, so asyncio does not print it as never retrieved.
        waiter.add_done_callback(_seen)
        self._waiters.append(waiter)
        self._kick()
        await asyncio.shield(waiter)

    async def settled(self) -> None:
        """Like ``durable``, for side writes: return once they are written, never raise (a
        failing checkpoint round was logged, and belongs to the tasks that wait on it)."""
        with contextlib.suppress(Exception):
            await self.durable()

    def _pending(self) -> bool:
        return bool(self._ops or self._side_due) or not (
            self._flusher is None or self._flusher.done()
        )

    def flush_sync(self) -> None:
        """Apply what is queued now, on this thread (at close, or without a running loop), in
        order after any round still in the commit thread."""
        for _ in range(2):  # twice: a store reset during the first re-queues the live records
            ops, self._ops = self._ops, {}
            job = self._round_job(ops, self._side_jobs())
            if job is None:
                break
            if self._thread.alive:
                self._thread.run(job)
            else:
                job()
            self._after_reset()

    def close(self) -> None:
        """Write what is queued, then stop the commit thread."""
        try:
            self.flush_sync()
        finally:
            self._thread.stop()

    def _kick(self) -> None:
        if self._flusher is not None and not self._flusher.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a synchronous caller): write at once
            self.flush_sync()
            return
        self._flusher = loop.create_task(self._run())

    def _side_jobs(self) -> list[Job]:
        self._side_due = False
        return [job for writer in self._sides if (job := writer()) is not None]

    def _round_job(
        self, ops: dict[str, TaskRecord | RecordText | None], sides: list[Job]
    ) -> Job | None:
        """One round as a job: the checkpoints in one transaction, then the side writes."""
        if not ops and not sides:
            return None

        def job() -> None:
            try:
                if ops:
                    self._apply(ops)
            finally:
                for side in sides:
                    try:
                        side()
                    except Exception as exc:  # a record for people: never fails the round
                        self.logger.error("agent.error", where="side write", error=str(exc))

        return job

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

    async def _in_thread(self, job: Job) -> None:
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()

        def settle(error: BaseException | None) -> None:
            if finished.done():
                return
            if error is None:
                finished.set_result(None)
            else:
                finished.set_exception(error)

        def done(error: BaseException | None) -> None:
            # The loop may be gone (a host that ended it without closing the runtime).
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(settle, error)

        self._thread.submit(job, done)
        await finished

    async def _run(self) -> None:
        while self._ops or self._waiters or self._side_due:
            # Let the tasks that are ready queue their writes first. When the last round woke
            # several tasks (many run at once), they resume over the next two turns of the loop:
            # wait for them too, for fewer and larger rounds.
            for _ in range(2 if self._crowded else 1):
                await asyncio.sleep(0)
            ops, self._ops = self._ops, {}
            waiters, self._waiters = self._waiters, []
            self._crowded = len(waiters) > 1
            error: BaseException | None = None
            job = self._round_job(ops, self._side_jobs())
            if job is not None:
                try:
                    if self._threaded:
                        await self._in_thread(job)
                    else:
                        job()
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
