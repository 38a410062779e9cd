"""Group commit: the checkpoint writes of every task, a transaction (one fsync) per round.

With one fsync per write, a thousand tasks each journalling a step queue up a thousand fsyncs
on the event loop. Here writes are queued (the latest per task wins), a single flusher applies
everything queued in one transaction, off the event loop, and whoever needs durability awaits
it: ``ctx.step`` before it returns, a task's ending before its reply is delivered. State
changes are queued without waiting; they reach the disk with the next round, at the latest
with the step that follows them.

Writes queued in one turn of the event loop are handed to the commit thread as one round at
the end of that turn (a timer due at once: no task, no extra turns); but a task that waits for
its write while the thread is idle, after a round that woke one task and carried one task's
writes (tasks run one at a time), hands its round over at once and cancels that timer: the
thread starts on it sooner, and the turn of the loop is not taken at all. The thread writes
rounds in order, and the rounds that queued up while it wrote the last one go together in the
next transaction, so the batch grows with the load and never waits to fill. The thread tells the
loop once per transaction (its bell). A round carries the side writes of its turn too: the
history's entries (``add_side``), written by the commit thread after the round's checkpoints,
or, when the disk is slow, in a second thread while the commit thread writes them
(``_SideThread``: the history takes the time the commit's fsync waits); the loop hears of the
round once both are done, so neither ever touches the event loop.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import os
import queue
import threading
import time
import weakref
from collections.abc import Callable
from contextvars import Context, copy_context
from threading import get_ident
from typing import Generic, TypeVar

import structlog

from skillrt._io.logs import library_logger
from skillrt._state.protocol import LeaseLost, TaskStore
from skillrt._state.records import RecordText, TaskRecord

__all__ = ["Committer"]

Job = Callable[[], None]
# A side writer, asked on the event loop at the start of each round: the job to run in the
# commit thread after the round's checkpoints (None: nothing to write).
SideWriter = Callable[[], Job | None]
# The committer's ``_settle(rounds, error, notice)``.
_Settle = Callable[[list["_Round"], BaseException | None, bool], None]


def _running_loop(hint: asyncio.AbstractEventLoop | None) -> asyncio.AbstractEventLoop:
    """The running loop: ``hint`` when it is the loop this thread runs (asyncio's loops say
    which thread runs them), else ``asyncio.get_running_loop()``, which CPython 3.11 answers
    with a ``getpid()`` system call each time (a few times at every step)."""
    if hint is not None and getattr(hint, "_thread_id", None) == threading.get_ident():
        return hint
    return asyncio.get_running_loop()


class _Round:
    """What one turn of the event loop queued: checkpoint writes (the latest per task), the
    side writers' jobs, and who waits for them; ``loop`` hears when they are written."""

    __slots__ = ("bell", "loop", "ops", "sides", "waiters")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        ops: dict[str, TaskRecord | RecordText | None],
        sides: list[Job],
        waiters: list[_Waiter],
    ) -> None:
        self.loop, self.ops, self.sides, self.waiters = loop, ops, sides, waiters
        self.bell: _Bell | None = None  # how the commit thread tells ``loop`` (None: asyncio's)


class _Bell:
    """The commit thread's notices to one event loop: a pipe of its own that the loop reads.
    asyncio's way (``call_soon_threadsafe``) costs a handle per notice, and each wake-up reads
    its self-pipe twice, the second ``recv`` raising ``BlockingIOError`` (~12 k instructions
    more a notice than this, four notices a task)."""

    __slots__ = ("_notices", "_read_fd", "_settle", "_write_fd", "finalizer", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop, settle: _Settle) -> None:
        self.loop = loop
        self._settle = settle
        self._notices: collections.deque[tuple[list[_Round], BaseException | None]] = (
            collections.deque()
        )
        self._read_fd, self._write_fd = os.pipe()
        try:
            os.set_blocking(self._read_fd, False)
            os.set_blocking(self._write_fd, False)
            loop.add_reader(self._read_fd, self._ring)  # (NotImplementedError: no readers)
        except BaseException:
            os.close(self._read_fd)
            os.close(self._write_fd)
            raise
        # Closed with its loop when the committer was not closed first (``close`` detaches it).
        self.finalizer = weakref.finalize(loop, _close_fds, self._read_fd, self._write_fd)

    def send(self, rounds: list[_Round], error: BaseException | None) -> None:
        """In the commit thread: ``rounds`` are written (or failed); the loop hears it."""
        self._notices.append((rounds, error))
        # (Not ``contextlib.suppress``: a context manager made and entered per notice.)
        try:  # noqa: SIM105
            os.write(self._write_fd, b"\0")
        except BlockingIOError:  # a full pipe (notices the loop has not read yet) rings already
            pass

    def _ring(self) -> None:
        """On the loop: every notice sent so far, settled (a callback of the loop, outside any
        task: see ``_settle``'s ``notice``)."""
        with contextlib.suppress(BlockingIOError):  # (read already with an earlier ring)
            os.read(self._read_fd, 65536)
        notices = self._notices
        while notices:
            rounds, error = notices.popleft()
            try:
                self._settle(rounds, error, True)
            except Exception as exc:  # reported as a failing callback is; the others go on
                self.loop.call_exception_handler(
                    {"message": "settling a commit round failed", "exception": exc}
                )

    def close(self) -> None:
        """Once the commit thread has stopped: the pipe closed, and the loop stops reading it
        (at once on its own thread or once closed; else at its next turn)."""
        loop = self.loop
        if not loop.is_closed() and getattr(loop, "_thread_id", None) not in (None, get_ident()):
            with contextlib.suppress(RuntimeError):  # (closed meanwhile)
                loop.call_soon_threadsafe(self.close)
                return
        if not self.finalizer.detach():
            return  # closed already
        if not loop.is_closed():
            loop.remove_reader(self._read_fd)
        os.close(self._read_fd)
        os.close(self._write_fd)


# How many turns of the loop a round that no one waits for yet may wait for more writes.
_PATIENCE = 2
# A commit slower than this (a moving average) waits on the disk long enough for a round's side
# writes to be made meanwhile in a thread of their own (``_SideThread``): on a quick disk (a
# commit of ~0.2 ms) the two threads taking the GIL from each other cost the round more than
# the overlap saves (the ending's round 290-313 -> 320-349 us); on a slow one (3-4 ms) it saves
# the history's whole write (~250 us a task).
_SLOW_COMMIT_S = 0.001


class _Call:
    """A job run in the commit thread for a synchronous caller, who waits for ``finished``."""

    __slots__ = ("failure", "finished", "job")

    def __init__(self, job: Job) -> None:
        self.job = job
        self.finished = threading.Event()
        self.failure: list[BaseException] = []


class _Stop:
    """The thread's last item."""


_STOP = _Stop()
_Item = _Round | _Call | _Stop
_I = TypeVar("_I")


class _IdleThread(Generic[_I]):
    """A thread that takes its jobs from a queue, started with the first one. It ends after a
    second with nothing to do (a runtime that is never closed leaves no thread behind) and
    starts again with the next job."""

    idle_s = 1.0
    name = "skillrt-thread"

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_I | _Stop] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _put(self, item: _I | _Stop) -> None:
        with self._lock:  # the thread decides to end under this lock too: no job is stranded
            if self._thread is None:
                # A daemon: a host that never closes the runtime must still be able to exit (a
                # round cut off by exit is a rolled-back SQLite transaction, nothing torn).
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            self._jobs.put(item)

    @property
    def alive(self) -> bool:
        return self._thread is not None

    def stop(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is not None:
                self._jobs.put(_STOP)
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _take(self) -> _I | _Stop:
        """The next job; ``_STOP`` once a second went by with none (the thread then ends)."""
        jobs = self._jobs
        while True:
            try:
                return jobs.get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:
                    if jobs.empty():
                        if self._thread is threading.current_thread():
                            self._thread = None
                        return _STOP

    def _run(self) -> None:
        raise NotImplementedError


class _CommitThread(_IdleThread[_Round | _Call]):
    """One thread that writes rounds in the order they came. Rounds that queued up while it
    wrote the last one are written together, in one transaction (one fsync): that is the group
    commit, with no waiting for a batch to fill."""

    name = "skillrt-commit"

    def __init__(self, write: Callable[[list[_Round]], None]) -> None:
        super().__init__()
        self._write = write  # writes rounds and tells their loops

    submit = _IdleThread._put  # (a round: put, without a call of its own)

    def run(self, job: Job) -> None:
        """Run ``job`` in the thread, after what is queued there, and wait for it here."""
        call = _Call(job)
        self._put(call)
        call.finished.wait()
        if call.failure:
            raise call.failure[0]

    def _run(self) -> None:
        jobs = self._jobs
        item: _Item | None = None
        while True:
            if item is None:
                item = self._take()
            if isinstance(item, _Stop):
                return
            if isinstance(item, _Round):
                rounds, item = [item], None
                # What queued meanwhile goes in the same transaction. (``empty`` first: this
                # thread alone takes from the queue, and ``get_nowait`` on an empty one raises,
                # an exception made and caught at every round.)
                while not jobs.empty():
                    following = jobs.get_nowait()
                    if not isinstance(following, _Round):
                        item = following  # a job or the stop: after these rounds
                        break
                    rounds.append(following)
                self._write(rounds)
                continue
            call, item = item, None
            try:
                call.job()
            except BaseException as exc:  # handed to whoever waits for the job
                call.failure.append(exc)
            call.finished.set()


class _SideThread(_IdleThread[list[Job]]):
    """Runs a round's side writes (the history) in a thread of its own while the commit thread
    writes the round's checkpoints, when the store's commits are slow (``_SLOW_COMMIT_S``): the
    checkpoints' commit waits on the disk (its fsync) with the GIL released, and the side writes
    take that time instead of following it (a task's ending waited for both, one after the
    other, before its reply). The commit thread waits for them before it tells the loop, so a
    round is settled once both are written, as before; one round's side writes at a time, in
    the order of the rounds."""

    name = "skillrt-side"

    def __init__(self, run: Callable[[list[Job]], None]) -> None:
        super().__init__()
        self._run_sides = run  # runs the jobs, logging (never raising) what fails
        # Held from ``start`` until the jobs have run (released by the side thread): ``wait``
        # takes it. (A lock, not an Event: nothing made per round.)
        self._busy = threading.Lock()

    def start(self, sides: list[Job]) -> None:
        """Have ``sides`` run in the side thread from now on (``wait`` for them)."""
        self._busy.acquire()
        self._put(sides)

    def wait(self) -> None:
        """Return once the jobs given to ``start`` have run."""
        self._busy.acquire()
        self._busy.release()

    def _run(self) -> None:
        while True:
            sides = self._take()
            if isinstance(sides, _Stop):
                return
            try:
                self._run_sides(sides)
            finally:
                self._busy.release()


class Committer:
    # A lone task's round is written on the event loop itself (``inline``) only while the
    # store's commits take less than this (a moving average): the loop is held no longer than
    # a quick commit, and a slow disk (or one that turns slow) goes back to the commit thread.
    inline_limit_s = 0.002

    def __init__(
        self,
        store: TaskStore,
        *,
        threaded: bool = True,
        logger: structlog.stdlib.BoundLogger | None = None,
        on_reset: Callable[[], None] | None = None,
    ) -> None:
        self.store = store
        # A store that sends a round's writes together (PostgreSQL: its checkpoints and side
        # writes in one statement, ``PgTaskStore.grouped``) gathers them inside this.
        self._grouped: Callable[[], contextlib.AbstractContextManager[object]] = getattr(
            store, "grouped", contextlib.nullcontext
        )
        # A store whose rounds the event loop can send itself (PostgreSQL: ``LoopRounds``)
        # takes them from the thread when it can.
        loop_rounds = getattr(store, "loop_rounds", None)
        self._on_loop = None if loop_rounds is None else loop_rounds(self._write, self._settle)
        # Called (on the event loop) when the store had to start a fresh database: whoever
        # holds the live records queues them again, so what the old file lost is written back.
        self.on_reset = on_reset
        self._resets = getattr(store, "resets", 0)
        self.logger = logger or library_logger("skillrt._state.committer")
        self._threaded = threaded  # False for the in-memory store: nothing to wait for
        self._thread = _CommitThread(self._write_rounds)
        self._side = _SideThread(self._run_sides)  # a round's side writes beside its commit
        # How long the store's commits take (``_timed_apply``): a moving average from the
        # first commit, which the thread makes (``_measured``) before the loop waits on one.
        self._commit_s = 0.0
        self._measured = False
        # Asked before a lone waiter's round goes to the thread: True writes it on the loop
        # (``_write_inline``). None: never (the runtime sets it; see ``commit_on_loop``).
        self.inline: Callable[[], bool] | None = None
        # task id -> record to save (or its JSON text, or how to make it), None: delete
        self._ops: dict[str, _Op] = {}
        self._waiters: list[_Waiter] = []
        self._sides: list[SideWriter] = []
        self._side_due = False
        self._scheduled: asyncio.AbstractEventLoop | None = None  # a hand-over is due there
        self._loop: asyncio.AbstractEventLoop | None = None  # of the last waiter
        self._kicked: asyncio.TimerHandle | None = None  # and the hand-over it scheduled
        self._outstanding: list[_Round] = []  # handed to the thread, not heard back yet
        self._crowded = False  # the last round settled several waiters
        # Each loop's bell (None: the loop has no readers), the last one asked first.
        self._bells: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Bell | None] = (
            weakref.WeakKeyDictionary()
        )
        self._bell: tuple[asyncio.AbstractEventLoop | None, _Bell | None] = (None, None)
        self.rounds = 0

    def put(self, record: TaskRecord | RecordText) -> None:
        """Queue a save of ``record`` (a copy the caller no longer changes, or its JSON text)."""
        self._ops[record.id] = record
        self._kick()

    def put_later(
        self,
        task_id: str,
        make: Callable[[], TaskRecord | RecordText | None],
        *,
        waited: bool = False,
    ) -> None:
        """Queue a save of what ``make()`` gives when the round is handed over (on the loop, at
        the end of this turn): a task saved several times in one turn is serialised once.
        ``make`` returning None deletes the record. ``waited``: the caller asks ``waiter()``
        for it before it lets the loop go on, which hands it over (no hand-over of its own)."""
        self._ops[task_id] = _Later(make)
        if not waited:
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
        waiter = self.waiter()
        if waiter is not None:
            await waiter

    def waiter_of(self, task_id: str) -> asyncio.Future[None] | None:
        """``waiter()`` for a task's own write: a round refused for some tasks only
        (``LeaseLost``) fails the waiters of those tasks, and settles the others'."""
        waiter = self.waiter()
        if isinstance(waiter, _Waiter):
            waiter.task_id = task_id
        return waiter

    def waiter(self) -> asyncio.Future[None] | None:
        """``durable()`` as a future to await (None: nothing to wait for), for a caller that
        awaits it directly rather than through a coroutine of its own."""
        if not (self._ops or self._side_due or self._outstanding):
            return None
        loop = self._loop = _running_loop(self._loop)
        waiter = _Waiter(loop=loop)
        # Cancelling the caller cancels only its own waiter: the round is written regardless.
        self._waiters.append(waiter)
        if self._outstanding or self._crowded or not (self._threaded or self._side_due):
            # (A store in memory with no side write to make: the round would be written and
            # settled here, and a task of many steps would never let the loop run another.)
            self._kick(loop)
        else:  # the thread is idle and tasks come one at a time: no turn of the loop to wait
            if self._scheduled is loop and self._kicked is not None:
                self._kicked.cancel()  # what it was to hand over goes now
                self._scheduled = self._kicked = None
            self._submit(loop)
        return waiter

    async def settled(self) -> None:
        """Like ``durable``, for side writes: return once they are written, never raise (a
        failing checkpoint round was logged, and belongs to the tasks that wait on it)."""
        with contextlib.suppress(Exception):
            await self.durable()

    def flush_sync(self) -> None:
        """Apply what is queued now, on this thread (at close, or without a running loop), in
        order after any round still in the commit thread (or the loop's)."""
        if self._on_loop is not None:
            self._on_loop.finish_now()
        for _ in range(2):  # twice: a store reset during the first re-queues the live records
            ops, self._ops = _made(self._ops), {}
            sides = self._side_jobs()
            if not ops and not sides:
                break
            if self._thread.alive:
                self._thread.run(functools.partial(self._write, ops, sides))
            else:
                self._write(ops, sides)
            self._after_reset()

    def close(self) -> None:
        """Write what is queued, then stop the commit thread (and close the loops' bells)."""
        try:
            self.flush_sync()
        finally:
            self._thread.stop()
            self._side.stop()
            bells = [bell for bell in self._bells.values() if bell is not None]
            self._bells.clear()
            self._bell = (None, None)
            for bell in bells:
                bell.close()

    def _bell_of(self, loop: asyncio.AbstractEventLoop) -> _Bell | None:
        """``loop``'s bell, made when it first hands a round to the thread."""
        last, bell = self._bell
        if last is loop:
            return bell
        if loop in self._bells:
            bell = self._bells[loop]
        else:
            try:
                bell = _Bell(loop, self._settle)
            except (NotImplementedError, OSError):  # a loop without readers: asyncio's way
                bell = None
            self._bells[loop] = bell
        self._bell = (loop, bell)
        return bell

    def _kick(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Hand what is queued to the commit thread at the end of this turn of the loop (once
        per turn, whatever the number of writes): the tasks that are ready queue theirs first."""
        scheduled = self._scheduled
        if scheduled is not None and getattr(scheduled, "_thread_id", None) == get_ident():
            # Due on the loop this thread runs: nothing to do (``_running_loop``, inline).
            return
        if loop is None:
            try:
                loop = _running_loop(self._loop)
            except RuntimeError:  # no loop (a synchronous caller): write at once
                self.flush_sync()
                return
        if scheduled is loop:
            return
        self._scheduled = loop
        # A timer due at once, not ``call_soon``: it runs at the next turn all the same, but a
        # task that waits for its write in this turn (``waiter``) hands the round over itself
        # and cancels it, and a cancelled timer costs the loop no turn (a cancelled handle in
        # the ready queue would: a poll of the selector and a pass for nothing).
        self._kicked = loop.call_later(0, self._hand_over, loop, _PATIENCE)

    def _side_jobs(self) -> list[Job]:
        self._side_due = False
        return [job for writer in self._sides if (job := writer()) is not None]

    def _write(self, ops: dict[str, TaskRecord | RecordText | None], sides: list[Job]) -> None:
        """One round: the checkpoints in one transaction, then the side writes (which run
        even when the transaction failed, and never fail it)."""
        if self._grouped is contextlib.nullcontext:  # (SQLite: no context to enter)
            if ops and sides and self._threaded and self._commit_s > _SLOW_COMMIT_S:
                # Both at once on a slow disk: the side writes in their own thread while this
                # one commits (``_SideThread``); the round is done when both are.
                self._side.start(sides)
                try:
                    self._timed_apply(ops)
                finally:
                    self._side.wait()
                return
            try:
                if ops:
                    self._timed_apply(ops)
            finally:
                if sides:
                    self._run_sides(sides)
            return
        with self._grouped():
            try:
                if ops:
                    self._apply(ops)
            finally:
                self._run_sides(sides)

    def _timed_apply(self, ops: dict[str, TaskRecord | RecordText | None]) -> None:
        """``_apply``, its time kept in ``_commit_s`` (a moving average of the last few)."""
        started = time.perf_counter()
        try:
            self._apply(ops)
        finally:
            weight = 0.25 if self._measured else 1.0
            self._commit_s += (time.perf_counter() - started - self._commit_s) * weight
            self._measured = True

    def _run_sides(self, sides: list[Job]) -> None:
        for side in sides:
            try:
                side()
            except Exception as exc:  # a record for people: never fails the round
                self.logger.error("agent.error", where="side write", error=str(exc))

    def _apply(self, ops: dict[str, TaskRecord | RecordText | None]) -> None:
        saves: list[TaskRecord | RecordText] = []
        deletes: list[str] = []
        for task_id, record in ops.items():
            if record is None:
                deletes.append(task_id)
            else:
                saves.append(record)
        self.store.apply(saves, deletes)
        self.rounds += 1

    def _after_reset(self) -> None:
        resets = getattr(self.store, "resets", 0)
        if resets != self._resets:
            self._resets = resets
            if self.on_reset is not None:
                self.on_reset()

    # --- rounds: collected on the loop, written in the thread, settled on the loop ------------

    def _hand_over(self, loop: asyncio.AbstractEventLoop, patience: int) -> None:
        if (
            patience > 0
            and (self._crowded or not self._waiters)
            and (self._ops or self._side_due or self._waiters)
        ):
            # No one waits for these writes yet, or the last round woke several tasks (many
            # run at once: they resume over the next turns): give the tasks that are ready a
            # turn or two to queue theirs, for fewer and larger rounds.
            self._kicked = None  # (a waiter leaves this one be: it finds nothing, or more)
            loop.call_soon(self._hand_over, loop, patience - 1)
            return
        if self._scheduled is loop:
            self._scheduled = self._kicked = None
        self._submit(loop)

    def _submit(self, loop: asyncio.AbstractEventLoop) -> None:
        """What is queued, as a round, to the commit thread now (or the loop's own rounds)."""
        if not (self._ops or self._side_due or self._waiters):
            return
        waiters, self._waiters = self._waiters, []
        error: BaseException | None = None
        ops: dict[str, TaskRecord | RecordText | None] = {}
        try:
            for key, op in self._ops.items():  # (``_made``, written out: once per round)
                ops[key] = op.make() if isinstance(op, _Later) else op
        except Exception as exc:  # a record that cannot be serialised: its waiters hear why
            ops, error = {}, exc
        self._ops = {}
        # Side writes go when one asked for them (a nudge), not with every round.
        round_ = _Round(loop, ops, self._side_jobs() if self._side_due else [], waiters)
        if not self._threaded or error is not None:
            try:
                if ops:
                    self._apply(ops)  # a store in memory: nothing to wait for
            except Exception as exc:
                error = exc
            round_.ops = {}
            if error is not None:  # rare (a record that cannot be serialised): no thread
                self._run_sides(round_.sides)
            if error is not None or not round_.sides:
                self._outstanding.append(round_)
                self._settle([round_], error)
                return
            # The history is on disk all the same: written in the thread, never on the loop.
        # Rounds of a loop that is gone (a host that ran the runtime in an earlier loop) are
        # no one's to settle; the thread writes them before this one all the same.
        outstanding = self._outstanding
        if outstanding:
            self._outstanding = [r for r in outstanding if r.loop is loop] + [round_]
        else:
            self._outstanding = [round_]
        if (
            self.inline is not None
            and len(waiters) == 1
            and len(self._outstanding) == 1  # this round alone: the thread has none in flight
            and not self._crowded
            and self._measured
            and self._commit_s < self.inline_limit_s
            and self._on_loop is None
            and self.inline()
        ):
            self._write_inline(loop, round_)
            return
        if self._on_loop is None or not self._on_loop.take(round_, self._outstanding):
            round_.bell = self._bell_of(loop)
            self._thread.submit(round_)

    def _write_inline(self, loop: asyncio.AbstractEventLoop, round_: _Round) -> None:
        """One task's round written here, on the loop, and settled at the loop's next turn (a
        callback, as the thread's notice is: the task resumes there). No hand-over to the
        thread and back: on a virtual machine the two wake-ups cost more than a quick commit
        (see ``commit_on_loop`` in docs/configuration.md). The next turn, not now: a task of
        many steps still lets the loop run others (and an abort) between them."""
        error: BaseException | None = None
        try:
            self._write(round_.ops, round_.sides)
        except BaseException as exc:  # its waiter hears it, as from the thread
            error = exc
        loop.call_soon(self._settle, [round_], error, True)
        if error is not None and not isinstance(error, Exception):
            raise error  # (KeyboardInterrupt, SystemExit: the loop's to handle too)

    def _write_rounds(self, rounds: list[_Round]) -> None:
        """In the commit thread: the rounds' checkpoints in one transaction, then their side
        writes; their loop hears of it (once for all of them)."""
        error: BaseException | None = None
        if len(rounds) == 1:  # (one at a time: nothing to gather)
            only = rounds[0]
            try:
                self._write(only.ops, only.sides)
            except BaseException as exc:
                error = exc
            if only.bell is not None:
                only.bell.send(rounds, error)
                return
            with contextlib.suppress(RuntimeError):  # that loop is gone (it never closed us)
                only.loop.call_soon_threadsafe(self._settle, rounds, error, True)
            return
        ops: dict[str, TaskRecord | RecordText | None] = {}
        for r in rounds:
            ops.update(r.ops)
        try:
            self._write(ops, [side for r in rounds for side in r.sides])
        except BaseException as exc:
            error = exc
        by_loop: dict[asyncio.AbstractEventLoop, list[_Round]] = {}
        for r in rounds:
            by_loop.setdefault(r.loop, []).append(r)
        for loop, theirs in by_loop.items():
            bell = theirs[0].bell  # (the same for every round of one loop)
            if bell is not None:
                bell.send(theirs, error)
                continue
            with contextlib.suppress(RuntimeError):  # that loop is gone (it never closed us)
                loop.call_soon_threadsafe(self._settle, theirs, error, True)

    def _settle(
        self, rounds: list[_Round], error: BaseException | None, notice: bool = False
    ) -> None:
        """On the loop: the rounds are written (or failed with ``error``). ``notice``: called
        by the commit thread's notice, a callback of the loop outside any task, so the tasks
        that waited resume here (``_Waiter.wake``), not a turn of the loop later."""
        outstanding = self._outstanding
        if len(rounds) == 1 and len(outstanding) == 1 and outstanding[0] is rounds[0]:
            self._outstanding, waiters = [], list(rounds[0].waiters)  # (one at a time)
            crowded = len(rounds[0].ops) > 1
        else:
            done = set(map(id, rounds))
            self._outstanding = [r for r in outstanding if id(r) not in done]
            waiters = [w for r in rounds for w in r.waiters]
            crowded = len(rounds) > 1 or any(len(r.ops) > 1 for r in rounds)
        # Many tasks at once: the rounds woke several, or carried several tasks' writes (the
        # state changes of tasks that all went on to wait on a model): the next writes are
        # gathered at the end of the turn, not handed over one at a time.
        self._crowded = crowded or len(waiters) > 1
        fenced: list[_Waiter] = []
        lost = error if isinstance(error, LeaseLost) else None
        if lost is not None:  # written but for these tasks: their waiters alone hear it
            # (and those that wait for everything queued, ``durable``, of which they were part)
            spared = [w for w in waiters if w.task_id is not None and w.task_id not in lost.tasks]
            fenced = [w for w in waiters if w.task_id is None or w.task_id in lost.tasks]
            waiters = spared
            error = None
            with contextlib.suppress(Exception):
                self.logger.error("agent.error", where="checkpoint commit", error=str(lost))
        if error is not None:
            with contextlib.suppress(Exception):  # (a log line never keeps waiters waiting)
                self.logger.error("agent.error", where="checkpoint commit", error=str(error))
            # Those who asked while these rounds were in flight may have data in them: they
            # hear of the failure too (their writes, if queued later, are retried next round).
            waiters += [w for r in self._outstanding for w in r.waiters] + self._waiters
            for r in self._outstanding:
                r.waiters = []
            self._waiters = []
        self._after_reset()
        _tell(waiters, error, notice)
        if fenced:
            _tell(fenced, lost, notice)


def _tell(waiters: list[_Waiter], error: BaseException | None, notice: bool) -> None:
    """Settle ``waiters``: written, or failed with ``error`` (see ``Committer._settle``)."""
    for waiter in waiters:
        if waiter.done():
            continue
        if notice:
            waiter.wake(error)
        elif error is None:
            waiter.set_result(None)
        else:
            waiter.set_exception(error)
            # Marked as read: a caller whose loop stops before it wakes (at shutdown)
            # never reads it, and asyncio would print it as never retrieved. (A done
            # callback did this for every waiter: one more handle per commit.)
            waiter.exception()


class _Waiter(asyncio.Future[None]):
    """The future a step or an ending awaits until its round is written.

    A future's done-callbacks (a waiting task's wake-up) are scheduled with ``call_soon``: a
    task that waits for its commit resumed a turn of the loop after the commit thread's notice
    was handled (a poll of the selector and a pass of the loop, per commit). This one holds
    its callbacks and, settled by that notice (``_settle`` run as a callback of the loop,
    never inside a task), runs them there and then: the task resumes in the same turn. Settled
    any other way (cancelled, ``set_result``), it schedules them as asyncio does."""

    __slots__ = ("_held", "task_id")

    def __init__(self, *, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop=loop)
        self._held: list[tuple[Callable[[_Waiter], object], Context]] = []
        self.task_id: str | None = None  # the task that waits (``Committer.waiter``)

    def add_done_callback(
        self, fn: Callable[[_Waiter], object], *, context: Context | None = None
    ) -> None:
        if context is None:
            context = copy_context()
        if self.done():
            self.get_loop().call_soon(fn, self, context=context)
        else:
            self._held.append((fn, context))

    def remove_done_callback(self, fn: Callable[[_Waiter], object]) -> int:
        held = self._held
        kept = [(f, c) for f, c in held if f != fn]
        self._held = kept
        return len(held) - len(kept) + super().remove_done_callback(fn)

    def cancel(self, msg: object = None) -> bool:
        if not super().cancel(msg):
            return False
        self._release()
        return True

    def set_result(self, result: None) -> None:
        super().set_result(result)
        self._release()

    def set_exception(self, exception: type | BaseException) -> None:
        super().set_exception(exception)
        self._release()

    def _release(self) -> None:
        """The held callbacks, scheduled (as a future schedules them)."""
        held, self._held = self._held, []
        loop = self.get_loop()
        for fn, context in held:
            loop.call_soon(fn, self, context=context)

    def wake(self, error: BaseException | None) -> None:
        """Settle it and run its callbacks now: only from a callback of its loop, outside
        any task (a task's wake-up runs its step)."""
        if error is None:
            asyncio.Future.set_result(self, None)
        else:
            asyncio.Future.set_exception(self, error)
            self.exception()  # marked as read (see ``_settle``)
        held, self._held = self._held, []
        for fn, context in held:
            try:
                context.run(fn, self)
            except Exception as exc:  # as the loop reports a failing callback
                self.get_loop().call_exception_handler(
                    {"message": "a committer waiter's callback failed", "exception": exc}
                )


class _Later:
    """A save whose record is made when its round is handed over."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], TaskRecord | RecordText | None]) -> None:
        self.make = make


_Op = TaskRecord | RecordText | _Later | None


def _made(ops: dict[str, _Op]) -> dict[str, TaskRecord | RecordText | None]:
    return {k: v.make() if isinstance(v, _Later) else v for k, v in ops.items()}


def _close_fds(*fds: int) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
