"""The runtime's tasks as a whole: restored at start, listed, resumed, aborted, abandoned, stopped.

``Inventory`` answers for every task the runtime holds, running or not: which can be resumed
(and are not running in another process), starting one again, cancelling one, giving one up,
and stopping them all at shutdown. A task that must run again goes back to the run loop
(``TaskDriver.start``); the ones a peer worker wrote are read from the shared store first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, cast

import structlog

from skillrt._chat.chatlog import ChatLog
from skillrt._io.bulk import gc_paused
from skillrt._state.protocol import LazyLoad, LazyRecord, LoadResult, StateBackend
from skillrt._state.records import TaskRecord
from skillrt._state.summary import summarize_restored
from skillrt._tasks.checkpointing import Checkpoints
from skillrt._tasks.endings import Endings, reply_of, resting
from skillrt._tasks.machine import TERMINAL_STATES, State
from skillrt._tasks.task import Task
from skillrt._tasks.tasktable import ACTIVE_STATES, TaskTable
from skillrt.events import EventBus
from skillrt.exceptions import SkillrtError, StoreUnavailable
from skillrt.messages import ChatMessage, TaskSummary
from skillrt.outcomes import End
from skillrt.settings import BudgetConfig, RuntimeConfig
from skillrt.skill.replies import reply

if TYPE_CHECKING:
    from skillrt._tasks.run import TaskDriver

__all__ = ["Inventory", "Snapshot"]


class Snapshot(NamedTuple):
    """A look at the store: the records it holds that the runtime may not hold (None: gone),
    and the tasks another process runs now."""

    stored: dict[str, TaskRecord | None]
    busy: set[str]


class Inventory:
    """The runtime's tasks (see the module docstring)."""

    def __init__(
        self,
        *,
        config: RuntimeConfig,
        state: StateBackend,
        tasks: TaskTable,
        driver: TaskDriver,
        checkpoints: Checkpoints,
        endings: Endings,
        events: EventBus,
        chatlog: ChatLog,
        logger: Callable[[], structlog.stdlib.BoundLogger],
    ) -> None:
        self.config = config
        self.state = state
        self.tasks = tasks
        self.driver = driver
        self.checkpoints = checkpoints
        self.endings = endings
        self.events = events
        self.chatlog = chatlog
        self.clock = chatlog.clock
        self.logger = logger

    def restore(self, loaded: LoadResult | LazyLoad) -> None:
        """Unfinished tasks from the checkpoints come back PAUSED, ready to resume. They stay
        dormant in the task table (a summary and the record's JSON) until asked for."""
        tasks = self.tasks
        tasks.parse = self.state.parse
        tasks.build = lambda record: self.driver.make_task(record, initial=State.PAUSED)
        ids = tasks.restore(loaded.records)
        if loaded.quarantined:
            self.logger().error("agent.error", where="checkpoints", quarantined=loaded.quarantined)
        if self.events.listening("runtime:checkpoints_loaded"):
            records = (tasks.record(task_id) for task_id in ids)
            summaries = [self.chatlog.summary(r).model_dump() for r in records if r is not None]
            quarantined = list(loaded.quarantined)
            self.events.emit("runtime:checkpoints_loaded", None, tasks=summaries,
                             quarantined=quarantined)  # fmt: skip

    # --- listing: the store is read (blocking) apart from the table, which the loop owns ------

    def snapshot(self, ids: list[str], task_id: str | None = None) -> Snapshot:
        """What the store holds that this runtime may not (another worker wrote it), and which
        of these tasks another process runs now. Blocking; it does not touch the task table, so
        it may run in a thread (``ids``: the table's ids, read on the loop)."""
        window = self.config.checkpoint_max_age_h * 3600
        stored = self.state.newer(ids, task_id, max_age_s=window, now=self.clock())
        if task_id is not None:
            probe = [task_id]
        else:  # the table's ids are distinct: only the store's need merging in
            probe = [*ids, *(set(stored) - set(ids))] if stored else ids
        return Snapshot(stored, self.state.held_elsewhere(probe))

    async def snapshot_async(self, task_id: str | None = None) -> Snapshot:
        """``snapshot`` in a thread; the loop waits at most the store's timeout."""
        ids = [] if task_id is not None else list(self.tasks)
        try:
            async with asyncio.timeout(self.config.store_timeout_s + 1):
                return await asyncio.to_thread(self.snapshot, ids, task_id)
        except TimeoutError:
            raise StoreUnavailable("the task store did not answer in time") from None

    def _apply(self, snap: Snapshot) -> None:
        """Bring the table in line with the store, except for the tasks running elsewhere:
        their records stay as the store has them (``elsewhere``), never as local copies."""
        self.tasks.sync({k: v for k, v in snap.stored.items() if k not in snap.busy})

    def resumable(self, snap: Snapshot | None = None) -> list[TaskRecord]:
        """The records of the tasks to offer for resume: paused, restored, or stopped by an
        outage, and not running in another process right now."""
        return [r for r in map(self._parsed, self.resumable_entries(snap)) if r is not None]

    def resumable_summaries(self, snap: Snapshot | None = None) -> list[TaskSummary]:
        """``resumable`` as summaries: a task restored from its checkpoint is summarised from
        its JSON, its record built only when it is resumed (or when its JSON is off)."""
        redactor = self.chatlog.redactor
        with gc_paused():  # thousands of summaries at start-up, no cycles among them
            entries = self.resumable_entries(snap)
            # isinstance(x, LazyRecord): a tuple's check, not pydantic's metaclass's, 10,000 times
            lazy = [entry for entry in entries if isinstance(entry, LazyRecord)]
            summaries = summarize_restored(lazy, redactor)
            # A start-up's case: every task restored and summarised as the store read it. (A
            # summary is true, None is not: all() in C, where ``None in`` would call __eq__.)
            if len(lazy) == len(entries) and all(summaries):
                return cast("list[TaskSummary]", summaries)
            read = iter(summaries)
            out: list[TaskSummary] = []
            for entry in entries:
                found = next(read) if isinstance(entry, LazyRecord) else None
                if found is None:
                    record = self._parsed(entry)
                    found = None if record is None else self.chatlog.summary(record)
                if found is not None:
                    out.append(found)
        return out

    def resumable_entries(self, snap: Snapshot | None = None) -> list[LazyRecord | TaskRecord]:
        """``resumable``, the restored tasks as they are held (maybe not parsed yet)."""
        snap = snap or self.snapshot(list(self.tasks))
        self._apply(snap)
        dormant = self.tasks.dormant_entries()
        live = [t for t in self.tasks.values() if resting(t)]
        # A task that ran here is ours to run again; the others may be running elsewhere.
        busy = snap.busy
        restored = [r for r in dormant if r.id not in busy] if busy else dormant
        return restored + [t.record for t in live if t.id not in busy or t.runner is not None]

    def _parsed(self, entry: LazyRecord | TaskRecord) -> TaskRecord | None:
        return self.tasks.record(entry.id) if isinstance(entry, LazyRecord) else entry

    def from_store(self, task_id: str, snap: Snapshot | None = None) -> TaskRecord | None:
        """A task this worker does not run, as a shared store has it: another worker's task
        with its true state (running, waiting), or a resumable one (None without a store)."""
        if not self.state.shared:
            return None
        snap = snap or self.snapshot([], task_id)
        if task_id in snap.busy:
            return snap.stored.get(task_id)
        self._apply(snap)
        task = self.tasks.get(task_id)
        return None if task is None else task.record

    async def adopt(self, task_id: str, snap: Snapshot | None = None) -> None:
        """A resumable record of ``task_id`` that the store holds and this runtime does not
        (another process on the state folder cut it off after this one started), put in the
        table, dormant, as the start-up's restore puts them. ``serve`` answered GET and resume
        of it 404 until it restarted. Not one another process runs now (``busy``), nor one
        held here already. The store is read once this runtime's own writes are on disk: a
        task it has just ended here (aborted, its record's deletion a round away) was read
        back from the record still there, and shown again."""
        if task_id in self.tasks or not self.state.journaled:
            return
        if snap is not None and snap.stored.get(task_id) is None:
            return  # (the common case, an unknown id: no wait, no second read)
        try:
            await self.checkpoints.durable()
        except (SkillrtError, OSError):
            return  # the store failed: what it holds is not known
        snap = await self.snapshot_async(task_id)
        stored = snap.stored.get(task_id)
        if stored is None or task_id in snap.busy or task_id in self.tasks:
            return
        self.tasks.sync({task_id: stored})

    def local_copy(self, task_id: str, busy: set[str] | None = None) -> TaskRecord | None:
        """The record of ``task_id`` as this runtime holds it, or None: also None for a task
        restored from its checkpoint that another process runs now (``busy``, else asked of
        the store), as the listings leave it out. ``get_task`` gave its stale copy, PAUSED
        with CRASH, while ``resume_task`` said it "is running in another process"."""
        task = self.tasks.get(task_id)
        if task is None:
            return None
        if task.runner is None:  # (one that ran here is ours: the listings show it too)
            if busy is None:
                busy = self.state.held_elsewhere([task_id])
            if task_id in busy:
                return None
        return task.record

    def held(self, snap: Snapshot | None = None) -> list[TaskRecord]:
        """Every task this runtime holds (the resumable ones, then those working or waiting),
        then those another worker runs, as the store has them."""
        snap = snap or self.snapshot(list(self.tasks))
        resumable = self.resumable(snap)
        ids, live = {r.id for r in resumable}, self.tasks.values_ids()
        here = [r for r in resumable if r.id not in live] + [
            t.record
            for t in self.tasks.values()
            if t.id in ids or t.state in ACTIVE_STATES or t.state is State.IDLE
        ]
        shown = {r.id for r in here}
        elsewhere = [
            r
            for task_id, r in snap.stored.items()
            if r is not None and task_id in snap.busy and task_id not in shown
        ]
        return here + elsewhere

    async def resume(
        self, task_id: str, budget: BudgetConfig | None, session_id: str
    ) -> asyncio.Future[ChatMessage] | ChatMessage | None:
        """Start a resumable task again: the turn its caller awaits, a reply saying it runs in
        another process, or None (no such resumable task here)."""
        held = await self._resumable_task(task_id)
        task = None if held is None else await self._as_stored(held)
        if not isinstance(task, Task):
            return task
        route = _prepare_resume(task, budget, session_id)
        return self.driver.start(task, route=route)

    async def _as_stored(
        self, task: Task, wanted: Callable[[Task], bool] = resting
    ) -> Task | ChatMessage | None:
        """``task`` as the store holds it now, read under its run lock (kept for the run, which
        takes it again). Another process may have resumed it since this one read it, and then
        paused it further on (its copy here is replaced) or ended it: completed or abandoned
        (None; None too when the stored task is not ``wanted``). Resumed from the copy read
        before, it ran again what was done, a post written a second time over the first."""
        if not self.state.journaled or task.memory_only:
            return task  # never written: this copy is the only one
        try:
            if not await self.state.hold(task.id):
                content = reply("running_elsewhere", task.input.language, task=task.id)
                return reply_of(task, content, error="running_elsewhere")
            stored = await self.state.read(task.id)
        except (SkillrtError, OSError) as exc:  # the store cannot be read: nothing is run
            await self.state.release(task.id)
            return self.endings.storage_reply(exc, task_id=task.id)
        fresh = self._synced(task.id, {task.id: stored}, wanted)
        if fresh is None:
            await self.state.release(task.id)
        return fresh

    def _synced(
        self, task_id: str, stored: dict[str, TaskRecord | None], wanted: Callable[[Task], bool]
    ) -> Task | None:
        """The task as the table holds it once brought in line with ``stored`` (a copy here
        newer than the store's is kept); None when it is gone or not ``wanted``."""
        self.tasks.sync(stored)
        fresh = self.tasks.get(task_id)
        return fresh if fresh is not None and wanted(fresh) else None

    async def _resumable_task(self, task_id: str) -> Task | None:
        if self.state.shared:  # the store may know it better: another worker wrote it
            snap = await self.snapshot_async(task_id)
            self.tasks.sync({k: v for k, v in snap.stored.items() if k not in snap.busy})
        else:  # one another process on this state folder cut off after this one started
            await self.adopt(task_id)
        task = self.tasks.get(task_id)
        if task is None or not await _settled_run(task) or not resting(task):
            return None
        return task  # (another process running it: ``_as_stored``'s run lock says so)

    def abort(self, task: Task) -> bool:
        """Cancel ``task``: its signal fires and its work stops now (see ``AgentRuntime.abort``)."""
        if task.state in TERMINAL_STATES:
            return False
        task.end_reason = task.end_reason or End.CANCELLED
        task.controller.abort("cancelled")
        if task.state is State.IDLE:  # its runner has not started: it stops at its first check
            return task.runner is not None
        if task.running and task.runner is not None:
            if task.state is State.PAUSED:
                # Paused already: its run is only making that durable (a commit away).
                # Cancelled, that wait ended and the task stayed PAUSED for good, while the
                # abort said it was done. Cancelled in place once its run has ended.
                task.runner.add_done_callback(lambda _: self._abort_rested(task))
                return True
            task.runner.cancel()
            return True
        if task.state is not State.PAUSED:
            return False
        if not self.state.shared and self.state.held_elsewhere([task.id]):
            # Resumed by another process on this state folder, which runs it now: ended here,
            # its record was deleted under that run (and lost, were it cut off then), while it
            # went on. No channel reaches it (a shared store's does: ``AgentRuntime.abort``).
            return False
        self.endings.stopped(task)  # not running: cancelled in place
        self.state.release_soon(task.id)
        self.chatlog.flush()
        return True

    def _abort_rested(self, task: Task) -> None:
        """``abort`` of a paused task whose run has just ended (a callback: logged, never
        raised)."""
        try:
            self.abort(task)
        except Exception as exc:  # a full or read-only disk: its record stays PAUSED
            self.logger().error("agent.error", task_id=task.id, where="abort",
                                error=self.chatlog.error_text(exc))  # fmt: skip

    async def settled(self, task: Task) -> bool:
        """Whether ``task`` is not running, once a run that already paused or failed has
        made that durable (see ``_settled_run``)."""
        return await _settled_run(task)

    def abort_copy(self, task: Task) -> bool:
        """``abort`` from a synchronous call: a paused copy is first read again from the store,
        on this thread (a synchronous call blocks; ``abort_stored`` reads off the loop, under
        the run lock). One that another process resumed and ended since (completed, given up)
        is not ended a second time, its history entry replaced by "cancelled"; one it paused
        further on is cancelled as the store has it."""
        if task.state is State.PAUSED and self.state.journaled and not task.memory_only:
            window = self.config.checkpoint_max_age_h * 3600
            try:
                stored = self.state.newer([], task.id, max_age_s=window, now=self.clock())
            except (SkillrtError, OSError):  # the store cannot be read: this copy is cancelled
                stored = {}
            fresh = self._synced(task.id, stored, _paused)
            if fresh is None:
                return False
            task = fresh
        return self.abort(task)

    async def abort_stored(self, task: Task) -> bool:
        """``abort`` of a task that does not run here, as the store holds it now (read under
        its run lock, as a resume reads it): one another process ended since (completed, given
        up) is not ended a second time, its history entry replaced by "cancelled"."""
        stored = await self._as_stored(task, _paused)
        if not isinstance(stored, Task):
            return False
        done = False
        try:
            done = self.abort(stored)
            await self.checkpoints.durable()  # its ending on disk before its lock is let go
        except Exception as exc:  # a full or read-only disk: cancelled here all the same
            self.logger().error("agent.error", task_id=stored.id, where="abort",
                                error=self.chatlog.error_text(exc))  # fmt: skip
        finally:
            await self.state.release(stored.id)
        return done

    async def shutdown(self) -> list[TaskRecord]:
        """Stop the running tasks, leaving them resumable, and wait for the last commit; the
        records of the tasks it stopped (their copies here are dropped, see ``_interrupted``)."""
        runners, stopped = [], []
        for task in list(self.tasks.values()):
            if task.running and task.runner is not None:
                task.end_reason = End.SHUTDOWN
                task.controller.abort("shutdown")
                task.runner.cancel()
                runners.append(task.runner)
                stopped.append(task)
        await asyncio.gather(*runners, return_exceptions=True)
        kept = [task.record for task in stopped if task.state is State.PAUSED]
        try:
            await self.checkpoints.durable()
        except Exception as exc:  # a full or read-only disk: closing still closes
            self.logger().error("agent.error", where="close", error=self.chatlog.error_text(exc))
        return kept

    async def abandon(self, task: Task) -> bool:
        """Give up a paused or failed task: its journal is deleted, its locks released. Never
        one another worker runs (this copy is then stale)."""
        if not await _settled_run(task) or not _abandonable(task):
            return False
        stored = await self._as_stored(task, _abandonable)  # as the store holds it now
        if not isinstance(stored, Task):
            return False  # ended elsewhere meanwhile, or run there now: nothing to give up
        task = stored
        if task.state is State.PAUSED:
            task.to(State.CANCELLED)
        task.end_reason = End.ABANDONED
        self.checkpoints.drop(task.id)
        await self.checkpoints.durable()
        self.tasks.pop(task.id)
        await self.state.release(task.id)
        self.chatlog.add_task(task.record, "ABANDONED", "abandoned")
        self.chatlog.flush()
        return True


def _paused(task: Task) -> bool:
    return task.state is State.PAUSED


def _abandonable(task: Task) -> bool:
    return task.state in (State.PAUSED, State.ERROR)


def _prepare_resume(task: Task, budget: BudgetConfig | None, session_id: str) -> bool:
    """Make a paused (or resumably failed) task ready to run again; returns whether it must
    be routed again (it was cut off before routing finished)."""
    if task.state is State.ERROR:
        task.machine.force(State.PAUSED)
    if budget is not None:
        limits = budget.model_dump(exclude_none=True)
        task.record.budget = {**(task.record.budget or {}), **limits}
    task.pause_requested = False
    task.end_reason = None
    task.record.error_reason = None
    task.record.last_error = None
    # Answers to its questions come from whoever resumed it (a new process has a new session).
    task.record.session_id = session_id
    task.new_controller()
    if task.record.skill is None:
        task.to(State.IDLE)
        return True
    return False


async def _settled_run(task: Task, wait_s: float = 5.0) -> bool:
    """Whether ``task`` is not running. One that already reads PAUSED or ERROR is only making
    its end durable (a commit away): wait for that, up to ``wait_s``."""
    runner = task.runner
    if runner is None or runner.done():
        return True
    if task.state not in (State.PAUSED, State.ERROR):
        return False
    await asyncio.wait({runner}, timeout=wait_s)
    return runner.done()
