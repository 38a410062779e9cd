"""``TaskDriver``: the run loop, which takes a task from its input to its reply.

``drive`` is the body of a task's runner: take the run lock, plan (route, or check the params
of a skill run by name), execute the skill with its context, and end. Every way out (done,
failed, cancelled, paused, the watchdog, a shutdown) becomes one ending (``endings.py``) that
records the task and builds its reply; ``drive`` waits until that ending is durable and
*returns* the reply, so the runner's result is what the caller hears.

The driver is also each task's ``TaskOwner``: it queues checkpoints (``checkpointing.py``),
hears state changes, and stops a task whose watchdog fired (the run loop then ends it).
The runtime's tasks as a whole (restore, list, resume, abort, abandon, shut down) are the
``inventory``'s.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import structlog

from skillrt._chat.chatlog import ChatLog
from skillrt._io.gcpolicy import task_ended, task_started
from skillrt._routing.inputs import clean_text
from skillrt._routing.router import IntentRouter, RouteDraft
from skillrt._state.protocol import StateBackend
from skillrt._state.records import TaskRecord
from skillrt._tasks.checkpointing import Checkpoints
from skillrt._tasks.endings import LEASE_LOST, Endings, kept_for_resume, reply_of
from skillrt._tasks.inventory import Inventory
from skillrt._tasks.machine import TERMINAL_STATES, State
from skillrt._tasks.planning import LOGS_INFO, NoTask, Planner
from skillrt._tasks.task import Task
from skillrt._tasks.tasktable import TaskTable
from skillrt.blog.files import FileStore, SavedHook
from skillrt.blog.memory import BlogMemory
from skillrt.blog.versions import VersionStore
from skillrt.events import EventBus
from skillrt.exceptions import (
    AuthenticationError,
    BudgetExceeded,
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
from skillrt.outcomes import End, ErrorReason, Outcome
from skillrt.settings import RuntimeConfig
from skillrt.skill.context import Later, SkillContext, TaskInput, detect_language
from skillrt.skill.definition import Skill, SkillResult
from skillrt.skill.replies import reply
from skillrt.skill.tools import ToolBox

__all__ = ["TaskDriver", "saved_logger"]

# Exceptions that end a task in ERROR: (why it stopped, the record's error_reason, the outcome).
_FAILURES: tuple[tuple[type[Exception] | tuple[type[Exception], ...], End, ErrorReason], ...] = (
    (BudgetExceeded, End.BUDGET, ErrorReason.BUDGET_EXCEEDED),
    ((ProviderUnavailable, RateLimited), End.FAILED, ErrorReason.PROVIDER_UNAVAILABLE),
    ((AuthenticationError, PermissionDenied), End.FAILED, ErrorReason.AUTH_FAILED),
    (StoreUnavailable, End.FAILED, ErrorReason.STORAGE),  # its checkpoint cannot be written
    (Exception, End.FAILED, ErrorReason.SKILL_ERROR),
)


_IDLE = State.IDLE.value
# Read at every transition: a member of an enum read from its class costs a lookup through the
# enum's metaclass (~130 ns), a module's name a dict lookup.
_WAITING = State.WAITING_INPUT
_PLANNING = State.PLANNING


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
        versions: VersionStore,
        llm: LLM,
        tasks: TaskTable,
        router: IntentRouter,
        skills: Mapping[str, Skill[Any]],
        trust: Callable[[], str],
        events: EventBus,
        costs: CostTracker,
        chatlog: ChatLog,
        logger: Callable[[], structlog.stdlib.BoundLogger],
        tools: ToolBox | None = None,
    ) -> None:
        self.config = config
        self.tools = tools  # the MCP servers' tools behind ctx.tools (None: none configured)
        self.state = state
        self.files = files
        self.memory = memory
        self.versions = versions
        self.llm = llm
        self.tasks = tasks
        self.planner = Planner(router, skills, config, trust, logger)
        self.events = events
        self.costs = costs
        self.chatlog = chatlog
        self.clock = chatlog.clock
        self.logger = logger
        self.checkpoints = Checkpoints(state, tasks, chatlog.redactor, self.clock, kept_for_resume)
        self.running = 0  # tasks started and not ended (``alone``)
        # ``TaskOwner.saved`` (a step's save, and the future that says it is on disk): the
        # checkpoints' own, a frame less at every step.
        self.saved: Callable[[Task], asyncio.Future[None] | None] = self.checkpoints.saved
        self.endings = Endings(
            checkpoints=self.checkpoints,
            tasks=tasks,
            events=events,
            chatlog=chatlog,
            logger=logger,
            config=config,
        )
        self.inventory = Inventory(
            config=config,
            state=state,
            tasks=tasks,
            driver=self,
            checkpoints=self.checkpoints,
            endings=self.endings,
            events=events,
            chatlog=chatlog,
            logger=logger,
        )

    # --- tasks --------------------------------------------------------------------------------

    def make_task(self, record: TaskRecord, *, initial: State) -> Task:
        context, text = record.context, record.raw_input
        task_input = TaskInput(
            text=text,
            language=detect_language(text),
            current_file=context.get("current_file"),
            selected_text=context.get("selected_text"),
            extra={k: v for k, v in context.items() if k not in ("current_file", "selected_text")}
            if context
            else {},
        )
        events = self.events.bind(record.id)
        task = Task(
            record,
            input=task_input,
            owner=self,
            emit=events.emit,
            watchdog_s=self.config.watchdog_timeout_s,
            initial=initial,
            max_task_s=self.config.max_task_s,
        )
        task.events = events  # its skill's ``ctx.events`` too: one binding a task
        return task

    def new_task(
        self, text: str, context: dict[str, Any], session_id: str, task_id: str | None = None
    ) -> Task:
        now = self.clock()
        record = TaskRecord(
            id=task_id or new_id(),
            session_id=session_id,
            state=_IDLE,
            raw_input=text,
            context=context,
            created_at=now,
            updated_at=now,
        )
        task = self.make_task(record, initial=State.IDLE)
        self.tasks[task.id] = task
        return task

    def direct_task(
        self,
        skill: str,
        params: dict[str, Any],
        context: dict[str, Any],
        session_id: str,
        task_id: str | None = None,
    ) -> Task:
        """A task that runs ``skill`` with ``params``, without routing (a blog tool's button)."""
        # The params' words stand for the request (its language decides the reply's).
        words = [v for k, v in params.items() if isinstance(v, str) and k not in ("path", "url")]
        text = clean_text(" ".join(words)[:2000])
        task = self.new_task(text, context, session_id, task_id)
        task.record.intent = {"type": "DIRECT", "confidence": 1.0, "parameters": params}
        task.record.skill, task.record.params = skill, dict(params)
        return task

    def start(self, task: Task, *, route: bool) -> asyncio.Future[ChatMessage]:
        """Run the task in its own asyncio task; returns the turn its caller awaits."""
        turn = task.replies.open()
        self.running += 1
        if self.config.gc_tuning:  # the collector's young generation, while tasks run
            task.start(self.drive(task, route=route), self._ended_tuned)  # (gcpolicy.py)
            task_started()
        else:
            task.start(self.drive(task, route=route), self._ended)
        return turn

    def _ended(self) -> None:
        self.running -= 1

    def _ended_tuned(self) -> None:
        self.running -= 1
        task_ended()

    def alone(self) -> bool:
        """No task runs here but the one asking (the committer's ``inline``: its commits may be
        made on the loop, with no other task to hold up)."""
        return self.running <= 1

    # --- one run ------------------------------------------------------------------------------

    async def drive(self, task: Task, *, route: bool) -> ChatMessage:
        """Run one task to an ending; returns its reply once the ending is on disk."""
        draft = None
        try:  # the run lock: no other process runs (or resumes) this task meanwhile
            # Where it is a round trip, its route is worked out while the lease is asked
            # (nothing that has an effect: that waits for the lease).
            lease = self.state.hold_soon(task.id) if route else None
            if lease is not None:
                draft = await self.planner.route_while(task, lease)
            if not await (lease if lease is not None else self.state.hold(task.id)):
                if task.state is State.IDLE and not task.record.steps:
                    self.tasks.pop(task.id)  # nothing of it ran here: not ours to keep
                content = reply("running_elsewhere", task.input.language, task=task.id)
                return reply_of(task, content, error="running_elsewhere")
        except (SkillrtError, OSError) as exc:  # the state folder cannot be written
            self.tasks.pop(task.id)
            return self.endings.storage_reply(exc, task_id=task.id)
        set_activity_listener(task.machine.touch)  # model bytes of this task push it back
        try:
            message = await self._run(task, route=route, draft=draft)
        except BaseException:
            task.machine.stop()
            await self._release(task)
            raise
        task.machine.stop()
        # A lease is deleted in the ending's round; an OS lock is let go at once, so only once
        # the ending is on disk: before, another process would find the record of a task that
        # still runs, held by no one, and could resume it (and end it a second time).
        early = self.state.releases_with_ending
        if early:
            await self._release(task)
        try:
            hook, task.reply_hook = task.reply_hook, None
            if hook is not None:  # the reply's history entry goes in the ending's round
                hook(message)
            try:
                waiter = self.checkpoints.waiter(task.id)  # (a future, not ``durable``'s)
            except Exception as exc:  # the store failed: say so, but still reply
                message = self._not_durable(task, message, exc)
            else:
                if waiter is None:  # nothing queued or in flight: no coroutine to wait in
                    task.durable_reply = message
                else:
                    message = await self._settled(task, message, waiter)
        finally:
            if not early:
                await self._release(task)
        if message.data.get("error") == LEASE_LOST:  # (never on a commit's way)
            message = await self._as_stored(task, message)
        task.finished(message)  # the reply, now: not a turn of the loop later
        return message

    async def _as_stored(self, task: Task, message: ChatMessage) -> ChatMessage:
        """The reply of a task whose lease another worker took, with the state the store
        holds: it said EXECUTING, its copy's here, as if it still ran on this worker, when
        the other had paused, ended or was running it. Read in a thread, bounded by
        ``store_timeout_s``; a store that does not tell says PAUSED (stopped here, its
        record another worker's to go on with), never EXECUTING."""

        def stored() -> str | None:
            record = self.state.store.get(task.id)
            if record is not None:
                return record.state
            ended = self.state.history.tasks(task.record.session_id, 50)
            return next((e.get("state") for e in ended if e.get("task_id") == task.id), None)

        try:
            async with asyncio.timeout(self.config.store_timeout_s):
                state = await asyncio.to_thread(stored)
        except (TimeoutError, SkillrtError, OSError):
            state = None
        data = {**message.data, "elsewhere": True}
        return message.model_copy(update={"state": state or State.PAUSED.value, "data": data})

    async def _release(self, task: Task) -> None:
        """The task's post locks and run lock, released; a store that fails here (a database
        gone away) is logged, and its locks expire or die with the process."""
        try:
            await self.state.release(task.id)
        except (SkillrtError, OSError) as exc:
            self.logger().error("agent.error", task_id=task.id, where="locks",
                                error=self.chatlog.error_text(exc))  # fmt: skip

    async def _run(
        self, task: Task, *, route: bool, draft: RouteDraft | None = None
    ) -> ChatMessage:
        started = time.perf_counter()
        # The task's logger and model, made when first used (most tasks of a runtime logging
        # at ``warning`` never log, and a skill may never call the model).
        logger = Later(functools.partial(self._bound, task))
        llm = Later(functools.partial(self._task_llm, task, logger))
        endings = self.endings
        try:
            planned = (
                await self.planner.plan(task, llm, draft)
                if route
                else self.planner.plan_direct(task)
            )
            if isinstance(planned, NoTask):
                task.to(State.IDLE)
                # (bad params carry the error key a param that is no JSON value gets too)
                error = {"error": "bad_params"} if planned.outcome is Outcome.BAD_PARAMS else None
                return endings.finish(task, planned.content, planned.outcome, data=error)
            skill, params = planned
            task.skill = skill
            task.machine.watchdog_s = skill.watchdog_s or self.config.watchdog_timeout_s
            task.to(State.EXECUTING)
            self.events.emit("task:started", task.id, skill=skill.name, intent=task.record.intent)
            if self.config.log_level in LOGS_INFO:  # (see ``Planner.plan``)
                logger.get().info("agent.skill.started", skill=skill.name)
            result = await skill.run(self._context(task, llm, logger, skill.name), params)
            if not isinstance(result, SkillResult):
                raise TypeError(  # (a skill returning "hello" failed with "returned str")
                    f"skill {skill.name} returned {type(result).__name__}, not a SkillResult "
                    '(return SkillResult(message="..."))'
                )
            return endings.complete(task, result, time.perf_counter() - started)
        except TaskPaused:
            return endings.paused(task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            return endings.stopped(task)
        except TaskCancelled as exc:
            # (superseded: the user left the skill's question for a new request)
            return endings.stopped(task, superseded=exc.reason == Outcome.SUPERSEDED)
        except InvalidTransition as exc:  # a bug of the life cycle, never the skill's
            return endings.failed(task, exc, End.FAILED, ErrorReason.INTERNAL)
        except StoreUnavailable as exc:
            if exc.reason in ("unreachable", "busy"):  # an outage: keep what it committed
                return endings.cut_off(task, exc)
            if exc.reason == "lease_lost":  # another worker took it over: its, not ours
                return endings.lost(task, exc)
            end, error_reason = End.FAILED, ErrorReason.STORAGE
            return endings.failed(task, exc, end, error_reason)
        except Exception as exc:
            end, error_reason = next((e, r) for kind, e, r in _FAILURES if isinstance(exc, kind))
            return endings.failed(task, exc, end, error_reason)

    async def _settled(
        self, task: Task, message: ChatMessage, waiter: asyncio.Future[None]
    ) -> ChatMessage:
        """Wait until the ending is on disk (``waiter``). A task that would be resumable but
        whose checkpoint did not reach the disk never replies "paused, resume it"."""
        try:
            await waiter  # its own wait: a cancel stops only our waiting
        except asyncio.CancelledError:
            # Shut down meanwhile: the commit goes on without us.
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
        except Exception as exc:  # the store failed: say so, but still reply
            return self._not_durable(task, message, exc)
        else:
            # On disk with its ending's round: the history entry the reply hook queued before
            # it too (``AgentRuntime._outcome`` then need not wait for another round).
            task.durable_reply = message
        return message

    def _not_durable(self, task: Task, message: ChatMessage, exc: Exception) -> ChatMessage:
        """The reply of a task whose ending's round failed."""
        self.logger().error("agent.error", task_id=task.id, error=f"checkpoint: {exc}")
        if task.end_reason is End.OUTAGE:
            return message  # it says so already; the store's journal stands
        if isinstance(exc, StoreUnavailable) and exc.reason in ("unreachable", "busy"):
            return self.endings.cut_off(task, exc)  # its end did not reach the store
        if isinstance(exc, StoreUnavailable) and exc.reason == "lease_lost":
            return self.endings.lost(task, exc)  # its end was refused: another worker's
        if kept_for_resume(task):
            return self.endings.not_saved(task, exc)
        return message

    def _bound(self, task: Task) -> structlog.stdlib.BoundLogger:
        """The runtime's logger, bound to ``task``."""
        return self.logger().bind(task_id=task.id)

    def _task_llm(self, task: Task, logger: Later[structlog.stdlib.BoundLogger]) -> TaskLLM:
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

        # Limits given at resume, laid over the config's (read only: no copy when none).
        budget = self.config.budget
        if record.budget:
            given = {k: v for k, v in record.budget.items() if v is not None}
            if given:
                budget = budget.model_copy(update=given)
        return TaskLLM(
            self.llm,
            signal=task.controller.signal,
            budget=budget,
            sink=sink,
            emit=task.emit,
            logger=logger.get(),
            used=(record.tokens, record.cost),
            on_repetition=looped,
            redactor=self.chatlog.redactor,
        )

    def _context(
        self,
        task: Task,
        llm: Later[TaskLLM],
        task_logger: Later[structlog.stdlib.BoundLogger],
        skill: str,
    ) -> SkillContext:
        # Its logger, model and files are made when the skill first uses them (each holds
        # the task, never the context: no cycle when they are not).
        logger = Later(lambda: task_logger.get().bind(skill=skill))
        files = Later(  # with the abort signal: a sync step's thread outlives a cancel
            lambda: self.files.for_task(
                task.id,
                on_saved=saved_logger(self.files, logger.get()),
                signal=task.controller.signal,
            )
        )
        return SkillContext(
            task_id=task.id,
            session_id=task.record.session_id,
            signal=task.controller.signal,
            input=task.input,
            llm=llm,
            memory=self.memory,
            files=files,
            versions=self.versions,
            locks=self.state.locks,
            events=task.events if task.events is not None else self.events.bind(task.id),
            logger=logger,
            config=self.config,
            host=task,
            conversation=self.chatlog.sessions.conversation_later(task.record.session_id),
            tools=self.tools,
        )

    # --- the TaskOwner protocol -----------------------------------------------------------------

    def save(self, task: Task) -> None:
        """Queue the task's checkpoint for the next group commit."""
        self.checkpoints.save(task)

    async def durable(self) -> None:
        """Wait until every queued checkpoint is on disk."""
        await self.checkpoints.durable()

    def state_changed(self, task: Task, source: State, dest: State) -> None:
        # ``_value_``, not ``.value``: the enum's property is two Python calls, at every
        # transition (four per task); a ``State`` is a ``str`` but the record keeps plain ones.
        value = dest._value_
        task.record.__dict__["state"] = value  # (``set_required``, written out)
        if dest is _WAITING or source is _WAITING:
            self.tasks.note_waiting(task, dest is _WAITING)
        if self.config.log_level == "debug":  # the logger's own level (``make_logger``): a
            # call it drops still costs its arguments, at four transitions a task
            self.logger().debug("agent.state.changed", task_id=task.id, source=source, dest=dest)
        # (Its data is two strings: built at once, ``emit`` builds nothing when none listens.)
        self.events.emit("state:changed", task.id, **{"from": source._value_, "to": value})
        # Endings are saved by finish with the result. PLANNING is not saved: it is always left
        # before the next await (to EXECUTING, which is saved, or to an ending), so its
        # checkpoint would be one more write that the next one overwrites at once.
        if dest not in TERMINAL_STATES and dest is not _PLANNING:
            self.checkpoints.save(task)

    def watchdog_fired(self, task: Task, state: State, timeout_s: float) -> None:
        """Stop the running work now; the run loop ends the task in ERROR (``stopped``) and
        releases its locks. The post locks go at once where that does not block."""
        task.end_reason = End.WATCHDOG
        task.record.error_reason = ErrorReason.WATCHDOG_TIMEOUT
        why = {
            "stall": f"{state.value} made no progress for {timeout_s:g} s",
            "cap": f"{state.value} ran longer than max_task_s ({timeout_s:g} s)",
        }.get(task.machine.fired, f"{state.value} lasted more than {timeout_s:g} s")
        task.record.last_error = f"WATCHDOG_TIMEOUT: {why}"
        task.controller.abort("watchdog")
        self.state.release_soon(task.id)
        if task.running and task.runner is not None:
            task.runner.cancel()
        else:  # pragma: no cover - a watched state is only ever entered by a running task
            self.endings.stopped(task)
