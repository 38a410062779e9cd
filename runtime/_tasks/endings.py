"""How a task ends: one ending per way out, each recording the task and building its reply.

Whatever stops a task (done, failed, cancelled, paused, the watchdog, its budget, a shutdown)
becomes one call here. ``finish`` records the end: the checkpoint is kept (the task can be
resumed) or deleted, and the history gets an entry; it returns the ``ChatMessage`` the caller
hears once the run loop has waited for the ending to be on disk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from skillrt._chat.chatlog import ChatLog
from skillrt._io.modeljson import model_data
from skillrt._tasks.checkpointing import Checkpoints
from skillrt._tasks.machine import State
from skillrt._tasks.planning import LOGS_INFO
from skillrt._tasks.task import Task
from skillrt._tasks.tasktable import ACTIVE_STATES, TaskTable
from skillrt.events import EventBus
from skillrt.exceptions import HostUnresolved, SkillrtError, StoreUnavailable
from skillrt.messages import ChatMessage
from skillrt.outcomes import RESUMABLE_ERRORS, UNRECORDED, End, ErrorReason, Outcome
from skillrt.settings import RuntimeConfig
from skillrt.skill.definition import SkillResult
from skillrt.skill.replies import reply

__all__ = ["LEASE_LOST", "Endings", "resting"]

# The abort reason of a task whose lease another worker took (``Failover.stop_lost``).
LEASE_LOST = "lease_lost"

_COMPLETED = State.COMPLETED

_RESUME_HINTS = {
    ErrorReason.BUDGET_EXCEEDED: "resume_budget",
    ErrorReason.AUTH_FAILED: "resume_auth",
}


# Read by module name: a member read from its enum class costs a lookup through the enum's
# metaclass, and ``kept_for_resume`` is asked at every ending.
_ERROR, _PAUSED = State.ERROR.value, State.PAUSED.value
_KEPT_ENDS = frozenset({End.SHUTDOWN, End.OUTAGE})


def resting(task: Task) -> bool:
    """Paused, or stopped by an error it can go on from."""
    state = task.machine.state  # the state's value
    if state == _ERROR:
        return task.record.error_reason in RESUMABLE_ERRORS
    return state == _PAUSED


def kept_for_resume(task: Task) -> bool:
    """Whether the task's checkpoint outlives this run: a shutdown, an outage of the store, or
    a resting task."""
    end = task.end_reason
    if end is not None and end in _KEPT_ENDS:
        return True
    state = task.machine.state
    if state == _ERROR:
        return task.record.error_reason in RESUMABLE_ERRORS
    return state == _PAUSED


class Endings:
    """The endings of the runtime's tasks (see the module docstring)."""

    def __init__(
        self,
        *,
        checkpoints: Checkpoints,
        tasks: TaskTable,
        events: EventBus,
        chatlog: ChatLog,
        logger: Callable[[], structlog.stdlib.BoundLogger],
        config: RuntimeConfig,
    ) -> None:
        self.config = config
        self.checkpoints = checkpoints
        self.tasks = tasks
        self.events = events
        self.chatlog = chatlog
        self.logger = logger

    def complete(self, task: Task, result: SkillResult, duration_s: float) -> ChatMessage:
        """The skill returned: COMPLETED, or ERROR when its result says it failed."""
        record = task.record
        tokens, cost = record.tokens or result.tokens, record.cost or result.cost
        record.result = model_data(result)  # (``model_dump(mode="json")``)
        if result.success:
            task.to(_COMPLETED)
            self.events.emit("task:completed", task.id, result=record.result)
            if self.config.log_level in LOGS_INFO:  # (a line the logger drops still costs
                self.logger().info(  # its arguments and two calls, at every task)
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
        # The data says so, and a reply built on the text too; not a result whose texts were
        # checked (``truncated_repetition: False``): the loop was refused and asked again.
        if task.truncated_repetition and data.get("truncated_repetition") is not False:
            data["truncated_repetition"] = True
            if result.success:
                content += reply("repetition", task.input.language)
        outcome = Outcome.DONE if result.success else Outcome.REFUSED
        message = self.finish(task, content, outcome, data=data, tokens=tokens, cost=cost)
        self.events.emit(
            "task:metrics",
            task.id,
            duration_s=round(duration_s, 4),
            tokens=tokens,
            cost=cost,
            steps=len(record.steps),
        )
        return message

    def paused(self, task: Task) -> ChatMessage:
        task.to(State.PAUSED)
        return self.finish(task, reply("paused", task.input.language, task=task.id), Outcome.PAUSED)

    def stopped(self, task: Task, *, superseded: bool = False) -> ChatMessage:
        """Cancelled by the user, stopped by the watchdog or by close(); ``superseded``: its
        question was left for a new request (CANCELLED, with no history entry, as a question
        of routing's left so ends its task with none)."""
        lang = task.input.language
        if task.end_reason is End.SHUTDOWN:  # left as a crash would leave it: resumable
            return self._interrupted(task)
        if task.controller.signal.reason == LEASE_LOST:  # another worker has it: not ours
            taken = StoreUnavailable(f"the lease of task {task.id} was taken over by another "
                                     "worker", reason="lease_lost")  # fmt: skip
            return self.lost(task, taken)
        if task.end_reason is End.WATCHDOG:
            if task.state is not State.ERROR:
                task.to(State.ERROR)
            error = task.record.last_error
            self.events.emit("task:aborted", task.id, reason=End.WATCHDOG, message=error)
            self.logger().error("agent.error", task_id=task.id, error=error)
            content = reply("watchdog", lang, error=error, task=task.id)
            return self.finish(task, content, Outcome.WATCHDOG)
        task.end_reason = End.CANCELLED
        if task.state is not State.CANCELLED:
            task.to(State.CANCELLED)
        if superseded:  # (the chat says its question was left, not that it was cancelled)
            self.events.emit("task:aborted", task.id, reason=End.CANCELLED, superseded=True)
        else:
            self.events.emit("task:aborted", task.id, reason=End.CANCELLED)
        self.logger().info("agent.task.cancelled", task_id=task.id)
        if superseded:
            return self.finish(task, reply("declined", lang), Outcome.SUPERSEDED)
        return self.finish(task, reply("cancelled", lang), Outcome.CANCELLED)

    def _interrupted(self, task: Task) -> ChatMessage:
        """Stopped by ``close()``: PAUSED, as the next start restores it. The caller got a reply
        in EXECUTING, subscribers no event, ``rt.state`` stayed EXECUTING after close, and a
        later call reopened the runtime with the task listed EXECUTING, refused by resume,
        abort and abandon. Now its reply and ``state:changed`` say PAUSED (no ``task:aborted``: it
        was not cancelled, and is resumable, as a paused task is), and its copy here is dropped:
        reopening restores it from its checkpoint, resumable."""
        task.record.error_reason = ErrorReason.INTERRUPTED
        source = task.state
        if source in ACTIVE_STATES:
            if task.machine.can(State.PAUSED):
                task.to(State.PAUSED)
            else:  # cut off while routing or asking: as a restored task, with no transition
                task.machine.force(State.PAUSED)
                task.owner.state_changed(task, source, State.PAUSED)
        self.checkpoints.save(task)
        self.tasks.pop(task.id)
        return reply_of(
            task, reply("interrupted", task.input.language), outcome=Outcome.INTERRUPTED
        )

    def failed(
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
        # Not one of ours (a bug in a skill, a library's error): a KeyError in a helper read
        # "The task failed: 'x'", and the log had no traceback even at debug level. The
        # traceback goes to the log, the exception's type to the reply.
        foreign = not isinstance(exc, SkillrtError) or error_reason is ErrorReason.INTERNAL
        self.logger().error("agent.error", task_id=task.id, error=task.record.last_error,
                            exc_info=exc if foreign else None)  # fmt: skip
        lang = task.input.language
        error: object = task.record.last_error if not isinstance(exc, SkillrtError) else shown
        if isinstance(exc, HostUnresolved):  # a network problem, said in the user's language
            error = reply("no_network", lang, host=exc.host)
        content = reply("budget" if end is End.BUDGET else "failed", lang, error=error)
        if error_reason in RESUMABLE_ERRORS:
            content += reply(_RESUME_HINTS.get(error_reason, "resumable"), lang, task=task.id)
        outcome = Outcome.STORAGE if error_reason is ErrorReason.STORAGE else Outcome(end.value)
        return self.finish(task, content, outcome)

    def finish(
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
        record, state = task.record, task.machine.state  # the state's value
        if record.state != state:
            record.state = state
        if kept_for_resume(task):
            self.checkpoints.save(task, now=True)
            if task.memory_only:
                content += reply("memory_only", task.input.language)
        else:
            self.checkpoints.drop(task.id)
            self.tasks.pop(task.id)
        if outcome not in UNRECORDED:
            self.chatlog.add_task(record, state, content)
        return ChatMessage(
            content=content,
            task_id=task.id,
            state=state,
            tokens=record.tokens if tokens is None else tokens,
            cost=record.cost if cost is None else cost,
            data={**(data or {}), "outcome": outcome},
        )

    def cut_off(self, task: Task, exc: Exception) -> ChatMessage:
        """The shared store stopped answering mid-task. Nothing is written or deleted: the
        store keeps the journal it committed and the task's lease names this worker, so once
        the store is back failover resumes the task from its last completed step (or it is
        listed PAUSED, with failover off). Its copy here is dropped: the store's is the one."""
        task.end_reason = End.OUTAGE
        task.record.error_reason = ErrorReason.INTERRUPTED
        task.record.last_error = f"{type(exc).__name__}: {self.chatlog.error_text(exc)}"
        self.tasks.pop(task.id)
        self.events.emit("task:aborted", task.id, reason=End.OUTAGE, message=task.record.last_error)
        self.logger().error("agent.error", task_id=task.id, error=task.record.last_error)
        content = reply("store_outage", task.input.language, task=task.id)
        return reply_of(task, content, outcome=Outcome.STORAGE, error="store_unavailable")

    def lost(self, task: Task, exc: Exception) -> ChatMessage:
        """The store refused the task's write: its lease was taken over by another worker
        (this one froze, or was cut off, past its lease), which may have ended, paused or
        cancelled it since. Nothing is written or deleted, as in ``cut_off``: the store's
        record and history are the other worker's (an ERROR ending here replaced a COMPLETED
        or CANCELLED entry, and its deletion of the checkpoint once removed a PAUSED record).
        Its copy here is dropped and its run stops; the reply says it goes on elsewhere."""
        task.end_reason = End.OUTAGE
        task.record.last_error = f"{type(exc).__name__}: {self.chatlog.error_text(exc)}"
        task.controller.abort(LEASE_LOST)  # a step still running here stops
        self.tasks.pop(task.id)
        self.events.emit("task:aborted", task.id, reason=End.OUTAGE, message=task.record.last_error)
        self.logger().error("agent.error", task_id=task.id, error=task.record.last_error)
        content = reply("lease_lost", task.input.language, task=task.id)
        return reply_of(task, content, outcome=Outcome.STORAGE, error="lease_lost")

    def not_saved(self, task: Task, exc: Exception) -> ChatMessage:
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


def reply_of(task: Task, content: str, **data: Any) -> ChatMessage:
    """A reply of ``task`` as it stands, with ``data``."""
    return ChatMessage(content=content, task_id=task.id, state=task.state.value, data=data)
