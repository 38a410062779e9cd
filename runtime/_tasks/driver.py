"""``TaskDriver``: runs a task from its input to its reply.

``drive`` is the body of a task's runner: plan (route, or check the params of a skill run by
name), execute the skill with its context, and end. Every way out (done, failed, cancelled,
paused, the watchdog, a shutdown) becomes one ending that records the task (checkpoint or
deletion, history) and builds its reply; ``drive`` waits until that ending is durable and
*returns* the reply, so the runner's result is what the caller hears.

The driver is also each task's ``TaskOwner``: it saves checkpoints through the group committer,
hears state changes, and stops a task whose watchdog fired.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import structlog

from skillrt._chat.chatlog import ChatLog
from skillrt._routing.inputs import clean_text
from skillrt._routing.router import IntentRouter
from skillrt._state.protocol import LazyLoad, LoadResult, StateBackend
from skillrt._state.records import TaskRecord
from skillrt._tasks.checkpointing import checkpoint_text
from skillrt._tasks.machine import TERMINAL_STATES, State
from skillrt._tasks.planning import NoTask, Planner
from skillrt._tasks.task import Task
from skillrt._tasks.tasktable import ACTIVE_STATES, TaskTable
from skillrt.blog.files import FileStore, SavedHook
from skillrt.blog.memory import BlogMemory
from skillrt.events import EventBus
from skillrt.exceptions import (
    AuthenticationError,
    BudgetExceeded,
    HostUnresolved,
    InvalidTransition,
    PermissionDenied,
    ProviderUnavailable,
    RateLimited,
    SkillrtError,
    StoreUnavailable,
    TaskCancelled,
    TaskPaused,
)
from skillrt.llm.base import LLM, set_activity_listener
from skillrt.llm.cost import CostTracker
from skillrt.llm.taskllm import TaskLLM
from skillrt.messages import ChatMessage, new_id
from skillrt.outcomes import RESUMABLE_ERRORS, UNRECORDED, End, ErrorReason, Outcome
from skillrt.settings import BudgetConfig, RuntimeConfig
from skillrt.skill.context import SkillContext, TaskInput, detect_language
from skillrt.skill.definition import Skill, SkillResult
from skillrt.skill.replies import reply

__all__ = ["TaskDriver"]

T = TypeVar("T")

# Exceptions that end a task in ERROR: (why it stopped, the record's error_reason, the outcome).
_FAILURES: tuple[tuple[type[Exception] | tuple[type[Exception], ...], End, ErrorReason], ...] = (
    (BudgetExceeded, End.BUDGET, ErrorReason.BUDGET_EXCEEDED),
    ((ProviderUnavailable, RateLimited), End.FAILED, ErrorReason.PROVIDER_UNAVAILABLE),
    ((AuthenticationError, PermissionDenied), End.FAILED, ErrorReason.AUTH_FAILED),
    (StoreUnavailable, End.FAILED, ErrorReason.STORAGE),  # its checkpoint cannot be written
    (Exception, End.FAILED, ErrorReason.SKILL_ERROR),
)
_RESUME_HINTS = {
    ErrorReason.BUDGET_EXCEEDED: "resume_budget",
    ErrorReason.AUTH_FAILED: "resume_auth",
}


def saved_logger(files: FileStore, logger: structlog.stdlib.BoundLogger) -> SavedHook:
    """The hook that logs ``agent.file.saved`` for every write of one task."""

    def saved(path: Path, size: int, digest: str) -> None:
        logger.info("agent.file.saved", path=files.relative(path), size=size, sha256=digest[:16])

    return saved


class TaskDriver:
    """Runs the runtime's tasks (see the module docstring)."""

    def __init__(
        self,
        *,
        config: RuntimeConfig,
        state: StateBackend,
        files: FileStore,
        memory: BlogMemory,
        llm: LLM,
        tasks: TaskTable,
        router: IntentRouter,
        skills: Mapping[str, Skill[Any]],
        trust: Callable[[], str],
        events: EventBus,
        costs: CostTracker,
        chatlog: ChatLog,
        logger: Callable[[], structlog.stdlib.BoundLogger],
    ) -> None:
        self.config = config
        self.state = state
        self.files = files
        self.memory = memory
        self.llm = llm
        self.tasks = tasks
        self.planner = Planner(router, skills, config, trust, logger)
        self.events = events
        self.costs = costs
        self.chatlog = chatlog
        self.redactor = chatlog.redactor
        self.clock = chatlog.clock
        self.logger = logger

    # --- tasks --------------------------------------------------------------------------------

    def make_task(self, record: TaskRecord, *, initial: State) -> Task:
        context, text = record.context, record.raw_input
        task_input = TaskInput(
            text=text,
            language=detect_language(text),
            current_file=context.get("current_file"),
            selected_text=context.get("selected_text"),
            extra={k: v for k, v in context.items() if k not in ("current_file", "selected_text")},
        )
        return Task(
            record,
            input=task_input,
            owner=self,
            emit=self.events.bind(record.id).emit,
            watchdog_s=self.config.watchdog_timeout_s,
            initial=initial,
            max_task_s=self.config.max_task_s,
        )

    def new_task(self, text: str, context: dict[str, Any], session_id: str) -> Task:
        now = self.clock()
        record = TaskRecord(
            id=new_id(),
            session_id=session_id,
            state=State.IDLE.value,
            raw_input=text,
            context=context,
            created_at=now,
            updated_at=now,
        )
        task = self.make_task(record, initial=State.IDLE)
        self.tasks[task.id] = task
        return task

    def direct_task(
        self, skill: str, params: dict[str, Any], context: dict[str, Any], session_id: str
    ) -> Task:
        """A task that runs ``skill`` with ``params``, without routing (a blog tool's button)."""
        # The params' words stand for the request (its language decides the reply's).
        words = [v for k, v in params.items() if isinstance(v, str) and k not in ("path", "url")]
        text = clean_text(" ".join(words)[:2000]) or skill
        task = self.new_task(text, context, session_id)
        task.record.intent = {"type": "DIRECT", "confidence": 1.0, "parameters": params}
        task.record.skill, task.record.params = skill, dict(params)
        return task

    def start(self, task: Task, *, route: bool) -> asyncio.Future[ChatMessage]:
        """Run the task in its own asyncio task; returns the turn its caller awaits."""
        turn = task.replies.open()
        task.start(self.drive(task, route=route))
        return turn

    # --- one run ------------------------------------------------------------------------------

    async def drive(self, task: Task, *, route: bool) -> ChatMessage:
        """Run one task to an ending; returns its reply once the ending is on disk."""
        try:  # the run lock: no other process runs (or resumes) this task meanwhile
            if not await self.state.hold(task.id):
                if task.state is State.IDLE and not task.record.steps:
                    self.tasks.pop(task.id)  # nothing of it ran here: not ours to keep
                content = reply("running_elsewhere", task.input.language, task=task.id)
                return self._reply(task, content, error="running_elsewhere")
        except (SkillrtError, OSError) as exc:  # the state folder cannot be written
            self.tasks.pop(task.id)
            return self.storage_reply(exc, task_id=task.id)
        set_activity_listener(task.machine.touch)  # model bytes of this task push it back
        try:
            message = await self._run(task, route=route)
        finally:
            task.machine.stop()
            await self._release(task)
        return await self._settled(task, message)

    async def _release(self, task: Task) -> None:
        """The task's post locks and run lock, released; a store that fails here (a database
        gone away) is logged, and its locks expire or die with the process."""
        try:
            await self.state.release(task.id)
        except (SkillrtError, OSError) as exc:
            self.logger().error("agent.error", task_id=task.id, where="locks",
                                error=self.chatlog.error_text(exc))  # fmt: skip

    async def _run(self, task: Task, *, route: bool) -> ChatMessage:
        started = time.perf_counter()
        logger = self.logger().bind(task_id=task.id)
        llm = self._task_llm(task, logger)
        try:
            planned = (
                await self.planner.plan(task, llm) if route else self.planner.plan_direct(task)
            )
            if isinstance(planned, NoTask):
                task.to(State.IDLE)
                return self._finish(task, planned.content, planned.outcome)
            skill, params = planned
            task.skill = skill
            task.machine.watchdog_s = skill.watchdog_s or self.config.watchdog_timeout_s
            task.to(State.EXECUTING)
            self.events.emit("task:started", task.id, skill=skill.name, intent=task.record.intent)
            logger.info("agent.skill.started", skill=skill.name)
            result = await skill.run(
                self._context(task, llm, logger.bind(skill=skill.name)), params
            )
            if not isinstance(result, SkillResult):
                raise TypeError(f"skill {skill.name} returned {type(result).__name__}")
            return self._complete(task, result, time.perf_counter() - started)
        except TaskPaused:
            task.to(State.PAUSED)
            return self._finish(
                task, reply("paused", task.input.language, task=task.id), Outcome.PAUSED
            )
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            return self._stopped(task)
        except TaskCancelled:
            return self._stopped(task)
        except InvalidTransition as exc:  # the watchdog moved it to ERROR under the skill's feet
            if task.end_reason is End.WATCHDOG:
                return self._stopped(task)
            return self._failed(task, exc, End.FAILED, ErrorReason.INTERNAL)
        except Exception as exc:
            end, error_reason = next((e, r) for kind, e, r in _FAILURES if isinstance(exc, kind))
            return self._failed(task, exc, end, error_reason)

    async def _settled(self, task: Task, message: ChatMessage) -> ChatMessage:
        """Wait until the ending is on disk. A task that would be resumable but whose checkpoint
        did not reach the disk never replies "paused, resume it"."""
        try:
            await self.durable()  # its own wait is shielded: a cancel stops only our waiting
        except asyncio.CancelledError:
            # Shut down meanwhile: the commit goes on without us.
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
        except Exception as exc:  # the store failed: say so, but still reply
            self.logger().error("agent.error", task_id=task.id, error=f"checkpoint: {exc}")
            if self.kept_for_resume(task):
                return self._not_saved(task, exc)
        return message

    def _task_llm(self, task: Task, logger: structlog.stdlib.BoundLogger) -> TaskLLM:
        """The model as this task sees it: its signal, its budget, its cost."""
        record = task.record

        def sink(model: str, tokens: int, cost: float | None) -> tuple[int, float]:
            record.tokens += tokens
            record.cost += cost or 0.0
            self.costs.record(
                task_id=task.id,
                session_id=record.session_id,
                skill=record.skill,
                model=model,
                tokens=tokens,
                cost=cost,
            )
            return record.tokens, record.cost

        def looped() -> None:
            task.truncated_repetition = True

        given = record.budget or {}  # limits given at resume, laid over the config's
        budget = self.config.budget.model_copy(
            update={k: v for k, v in given.items() if v is not None}
        )
        return TaskLLM(
            self.llm,
            signal=task.controller.signal,
            budget=budget,
            sink=sink,
            emit=task.emit,
            logger=logger,
            used=(record.tokens, record.cost),
            on_repetition=looped,
        )

    def _context(
        self, task: Task, llm: TaskLLM, logger: structlog.stdlib.BoundLogger
    ) -> SkillContext:
        return SkillContext(
            task_id=task.id,
            session_id=task.record.session_id,
            signal=task.controller.signal,
            input=task.input,
            llm=llm,
            memory=self.memory,
            files=self.files.for_task(task.id, on_saved=saved_logger(self.files, logger)),
            locks=self.state.locks,
            events=self.events.bind(task.id),
            logger=logger,
            config=self.config,
            host=task,
            conversation=self.chatlog.sessions.conversation_later(task.record.session_id),
        )

    # --- the TaskOwner protocol -----------------------------------------------------------------

    def save(self, task: Task) -> None:
        """Queue the task's checkpoint for the next group commit (see ``checkpoint_text``)."""
        record = task.record
        record.updated_at = self.clock()
        record.state = task.state.value
        if not self.state.journaled:
            return
        copy = checkpoint_text(record, self.redactor)
        if copy is None:  # its request holds a secret: kept in memory only
            task.memory_only = True
            self.state.committer.delete(record.id)
        else:
            self.state.committer.put(copy)

    async def durable(self) -> None:
        """Wait until every queued checkpoint is on disk."""
        await self.state.committer.durable()

    def state_changed(self, task: Task, source: State, dest: State) -> None:
        task.record.state = dest.value
        if dest is State.WAITING_INPUT or source is State.WAITING_INPUT:
            self.tasks.note_waiting(task, dest is State.WAITING_INPUT)
        self.logger().debug("agent.state.changed", task_id=task.id, source=source, dest=dest)
        if self.events.listening("state:changed"):
            self.events.emit("state:changed", task.id, **{"from": source.value, "to": dest.value})
        # Endings are saved by _finish with the result. PLANNING is not saved: it is always left
        # before the next await (to EXECUTING, which is saved, or to an ending), so its
        # checkpoint would be one more write that the next one overwrites at once.
        if dest not in TERMINAL_STATES and dest is not State.PLANNING:
            self.save(task)

    def watchdog_fired(self, task: Task, state: State, timeout_s: float) -> None:
        """ERROR now, cancel the running work, release its locks."""
        task.end_reason = End.WATCHDOG
        task.record.error_reason = ErrorReason.WATCHDOG_TIMEOUT
        why = {
            "stall": f"{state.value} made no progress for {timeout_s:g} s",
            "cap": f"{state.value} ran longer than max_task_s ({timeout_s:g} s)",
        }.get(task.machine.fired, f"{state.value} lasted more than {timeout_s:g} s")
        task.record.last_error = f"WATCHDOG_TIMEOUT: {why}"
        task.to(State.ERROR)
        task.controller.abort("watchdog")
        if task.running and task.runner is not None:
            task.runner.cancel()
        self.state.release_soon(task.id)  # the runner's end releases them all

    def checkpoint_all(self) -> None:
        """The store started a fresh database (the old one was unreadable): every task it
        should hold is written again from memory, so nothing the runtime holds is lost."""
        for task in self.tasks.everything():
            live = task.state is not State.IDLE and task.state not in TERMINAL_STATES
            if live or self.kept_for_resume(task):
                self.save(task)

    # --- endings ------------------------------------------------------------------------------

    @staticmethod
    def kept_for_resume(task: Task) -> bool:
        return task.end_reason is End.SHUTDOWN or _resting(task)

    def _complete(self, task: Task, result: SkillResult, duration_s: float) -> ChatMessage:
        record = task.record
        tokens, cost = record.tokens or result.tokens, record.cost or result.cost
        record.result = result.model_dump(mode="json")
        if result.success:
            task.to(State.COMPLETED)
            self.events.emit("task:completed", task.id, result=record.result)
            self.logger().info(
                "agent.task.completed",
                task_id=task.id,
                duration_s=round(duration_s, 3),
                tokens=tokens,
                cost=cost,
            )
        else:
            record.last_error = result.message
            task.to(State.ERROR)
            task.end_reason = End.FAILED
            self.events.emit("task:aborted", task.id, reason=End.FAILED, message=result.message)
        data = dict(result.data)
        if result.next_steps:
            data["next_steps"] = result.next_steps
        content = result.message
        if task.truncated_repetition:  # the data says so, and a reply built on the text too
            data["truncated_repetition"] = True
            if result.success:
                content += reply("repetition", task.input.language)
        message = self._finish(task, content, Outcome.DONE, data=data, tokens=tokens, cost=cost)
        self.events.emit(
            "task:metrics",
            task.id,
            duration_s=round(duration_s, 4),
            tokens=tokens,
            cost=cost,
            steps=len(record.steps),
        )
        return message

    def _stopped(self, task: Task) -> ChatMessage:
        """Cancelled by the user, stopped by the watchdog (already in ERROR) or by close()."""
        lang = task.input.language
        if task.end_reason is End.SHUTDOWN:  # left as a crash would leave it: resumable
            task.record.error_reason = ErrorReason.INTERRUPTED
            self.save(task)
            return self._reply(task, reply("interrupted", lang), outcome=Outcome.INTERRUPTED)
        if task.end_reason is End.WATCHDOG:
            error = task.record.last_error
            self.events.emit("task:aborted", task.id, reason=End.WATCHDOG, message=error)
            self.logger().error("agent.error", task_id=task.id, error=error)
            content = reply("watchdog", lang, error=error, task=task.id)
            return self._finish(task, content, Outcome.WATCHDOG)
        task.end_reason = End.CANCELLED
        if task.state is not State.CANCELLED:
            task.to(State.CANCELLED)
        self.events.emit("task:aborted", task.id, reason=End.CANCELLED)
        self.logger().info("agent.task.cancelled", task_id=task.id)
        return self._finish(task, reply("cancelled", lang), Outcome.CANCELLED)

    def _failed(
        self, task: Task, exc: Exception, end: End, error_reason: ErrorReason
    ) -> ChatMessage:
        task.end_reason = end
        # The error is shown to people (the reply, events, logs): redacted, unlike step results.
        shown = self.chatlog.error_text(exc)
        task.record.last_error = f"{type(exc).__name__}: {shown}"
        task.record.error_reason = error_reason
        if task.state is not State.ERROR:
            task.to(State.ERROR)
        self.events.emit("task:aborted", task.id, reason=end, message=shown)
        self.logger().error("agent.error", task_id=task.id, error=task.record.last_error)
        lang = task.input.language
        error: object = shown
        if isinstance(exc, HostUnresolved):  # a network problem, said in the user's language
            error = reply("no_network", lang, host=exc.host)
        content = reply("budget" if end is End.BUDGET else "failed", lang, error=error)
        if error_reason in RESUMABLE_ERRORS:
            content += reply(_RESUME_HINTS.get(error_reason, "resumable"), lang, task=task.id)
        outcome = Outcome.STORAGE if error_reason is ErrorReason.STORAGE else Outcome(end.value)
        return self._finish(task, content, outcome)

    def _finish(
        self,
        task: Task,
        content: str,
        outcome: Outcome,
        *,
        data: dict[str, Any] | None = None,
        tokens: int | None = None,
        cost: float | None = None,
    ) -> ChatMessage:
        """Record the end (checkpoint or its deletion, history); returns the reply."""
        record, state = task.record, task.state
        record.state = state.value
        if self.kept_for_resume(task):
            self.save(task)
            if task.memory_only:
                content += reply("memory_only", task.input.language)
        else:
            self.state.committer.delete(task.id)
            self.tasks.pop(task.id)
        if outcome not in UNRECORDED:
            self.chatlog.add_task(record, state.value, content)
        return ChatMessage(
            content=content,
            task_id=task.id,
            state=state.value,
            tokens=record.tokens if tokens is None else tokens,
            cost=record.cost if cost is None else cost,
            data={**(data or {}), "outcome": outcome},
        )

    def _not_saved(self, task: Task, exc: Exception) -> ChatMessage:
        """The reply of a task that would be resumable had its checkpoint reached the disk."""
        error = self.chatlog.error_text(exc)
        task.record.error_reason = ErrorReason.STORAGE
        task.record.last_error = f"{type(exc).__name__}: {error}"
        if task.state is not State.ERROR:
            task.machine.force(State.ERROR)
        self.tasks.pop(task.id)
        self.chatlog.add_task(task.record, State.ERROR.value, error)
        return ChatMessage(
            content=reply("not_saved", task.input.language, error=error),
            task_id=task.id,
            state=State.ERROR.value,
            tokens=task.record.tokens,
            cost=task.record.cost,
            data={"outcome": Outcome.STORAGE, "error": "storage"},
        )

    def storage_reply(self, exc: BaseException, *, task_id: str | None = None) -> ChatMessage:
        """A fault of the state folder, as a reply: ERROR, one paragraph, nothing raised."""
        error = self.chatlog.error_text(exc)
        self.logger().error("agent.error", where="storage", error=error)
        return ChatMessage(
            content=error,
            task_id=task_id,
            state=State.ERROR.value,
            data={"outcome": Outcome.STORAGE, "error": "storage"},
        )

    @staticmethod
    def _reply(task: Task, content: str, **data: Any) -> ChatMessage:
        return ChatMessage(content=content, task_id=task.id, state=task.state.value, data=data)

    # --- the runtime's tasks ----------------------------------------------------------------------

    def restore(self, loaded: LoadResult | LazyLoad) -> None:
        """Unfinished tasks from the checkpoints come back PAUSED, ready to resume. They stay
        dormant in the task table (a summary and the record's JSON) until asked for."""
        tasks = self.tasks
        tasks.parse = self.state.parse
        tasks.build = lambda record: self.make_task(record, initial=State.PAUSED)
        ids = tasks.restore(loaded.records)
        if loaded.quarantined:
            self.logger().error("agent.error", where="checkpoints", quarantined=loaded.quarantined)
        if self.events.listening("runtime:checkpoints_loaded"):
            records = (tasks.record(task_id) for task_id in ids)
            summaries = [self.chatlog.summary(r).model_dump() for r in records if r is not None]
            quarantined = list(loaded.quarantined)
            self.events.emit("runtime:checkpoints_loaded", None, tasks=summaries,
                             quarantined=quarantined)  # fmt: skip

    def resumable(self) -> list[TaskRecord]:
        """The records of the tasks to offer for resume: paused, restored, or stopped by an
        outage, and not running in another process right now."""
        self.tasks.sync(self._newer())
        dormant = self.tasks.dormant_records()
        live = [t for t in self.tasks.values() if _resting(t)]
        # A task that ran here is ours to run again; the others may be running elsewhere.
        probed = [r.id for r in dormant] + [t.id for t in live if t.runner is None]
        busy = self.state.held_elsewhere(probed)
        return [r for r in dormant if r.id not in busy] + [
            t.record for t in live if t.id not in busy
        ]

    def from_store(self, task_id: str) -> Task | None:
        """A task this worker does not hold, as the shared store has it (None without one)."""
        if not self.state.shared:
            return None
        self.tasks.sync(self._newer(task_id))
        return self.tasks.get(task_id)

    def _newer(self, task_id: str | None = None) -> dict[str, TaskRecord | None]:
        """What another worker wrote that this runtime does not hold yet (blocking)."""
        window = self.config.checkpoint_max_age_h * 3600
        return self.state.newer(list(self.tasks), task_id, max_age_s=window, now=self.clock())

    def held(self) -> list[TaskRecord]:
        """Every task this runtime holds: the resumable ones, then those working or waiting."""
        resumable = self.resumable()
        ids, live = {r.id for r in resumable}, self.tasks.values_ids()
        return [r for r in resumable if r.id not in live] + [
            t.record
            for t in self.tasks.values()
            if t.id in ids or t.state in ACTIVE_STATES or t.state is State.IDLE
        ]

    async def resume(
        self, task_id: str, budget: BudgetConfig | None, session_id: str
    ) -> asyncio.Future[ChatMessage] | ChatMessage | None:
        """Start a resumable task again: the turn its caller awaits, a reply saying it runs in
        another process, or None (no such resumable task here)."""
        task = await self._resumable_task(task_id)
        if not isinstance(task, Task):
            return task
        route = self._prepare_resume(task, budget, session_id)
        return self.start(task, route=route)

    async def _resumable_task(self, task_id: str) -> Task | ChatMessage | None:
        # The store may know it better: another worker wrote it.
        self.tasks.sync(await asyncio.to_thread(self._newer, task_id))
        task = self.tasks.get(task_id)
        if task is None or not await _settled_run(task) or not _resting(task):
            return None
        if await self.state.running_elsewhere(task.id):
            content = reply("running_elsewhere", task.input.language, task=task.id)
            return self._reply(task, content, error="running_elsewhere")
        return task

    def abort(self, task: Task) -> bool:
        """Cancel ``task``: its signal fires and its work stops now (see ``AgentRuntime.abort``)."""
        if task.state in TERMINAL_STATES:
            return False
        task.end_reason = task.end_reason or End.CANCELLED
        task.controller.abort("cancelled")
        if task.state is State.IDLE:  # its runner has not started: it stops at its first check
            return task.runner is not None
        if task.running and task.runner is not None:
            task.runner.cancel()
            return True
        if task.state is not State.PAUSED:
            return False
        task.to(State.CANCELLED)  # not running: cancel it in place
        self._stopped(task)
        self.state.release_soon(task.id)
        self.chatlog.flush()
        return True

    async def shutdown(self) -> None:
        """Stop the running tasks, leaving them resumable, and wait for the last commit."""
        runners = []
        for task in list(self.tasks.values()):
            if task.running and task.runner is not None:
                task.end_reason = End.SHUTDOWN
                task.controller.abort("shutdown")
                task.runner.cancel()
                runners.append(task.runner)
        await asyncio.gather(*runners, return_exceptions=True)
        try:
            await self.durable()
        except Exception as exc:  # a full or read-only disk: closing still closes
            self.logger().error("agent.error", where="close", error=self.chatlog.error_text(exc))

    async def abandon(self, task: Task) -> bool:
        """Give up a paused or failed task: its journal is deleted, its locks released."""
        if not await _settled_run(task) or task.state not in (State.PAUSED, State.ERROR):
            return False
        if task.state is State.PAUSED:
            task.to(State.CANCELLED)
        task.end_reason = End.ABANDONED
        self.state.committer.delete(task.id)
        await self.durable()
        self.tasks.pop(task.id)
        await self.state.release(task.id)
        self.chatlog.add_task(task.record, "ABANDONED", "abandoned")
        self.chatlog.flush()
        return True

    def _prepare_resume(self, task: Task, budget: BudgetConfig | None, session_id: str) -> bool:
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


def _resting(task: Task) -> bool:
    """Paused, or stopped by an error it can go on from."""
    if task.state is State.ERROR:
        return task.record.error_reason in RESUMABLE_ERRORS
    return task.state is State.PAUSED


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
