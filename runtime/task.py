"""A running task: its record, state machine, abort controller, journal and outcome channel.

``Task`` is what a ``SkillContext`` talks to behind the scenes (the ``_TaskHost`` protocol):
the journal of durable steps, progress, pauses at step boundaries and questions to the user.
The runtime (``agent.py``) drives it; nothing here knows about routing or skills' logic.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from skillrt.abort import AbortController
from skillrt.context import TaskInput
from skillrt.machine import State, TaskMachine
from skillrt.messages import ChatMessage
from skillrt.storage.records import TaskRecord

if TYPE_CHECKING:
    from skillrt.clarify import RouteQuestion
    from skillrt.skill import Skill

__all__ = ["PauseRequested", "Task"]


class PauseRequested(Exception):
    """Raised at a step boundary when the task was asked to pause."""


class Task:
    """One task. Owned by the runtime; a skill sees it only through its context."""

    def __init__(
        self,
        record: TaskRecord,
        *,
        input: TaskInput,
        watchdog_s: float,
        initial: State,
        on_change: Callable[[Task, State, State], None],
        on_timeout: Callable[[Task, State, float], None],
        save: Callable[[Task], None],
        durable: Callable[[], Awaitable[None]],
        emit: Callable[..., None],
        max_task_s: float | None = None,
    ) -> None:
        self.id = record.id
        self.record = record
        self.input = input
        self.controller = AbortController()
        self.machine = TaskMachine(
            record.id,
            watchdog_s=watchdog_s,
            on_change=lambda a, b: on_change(self, a, b),
            on_timeout=lambda s, t: on_timeout(self, s, t),
            initial=initial,
            max_task_s=max_task_s,
        )
        self.skill: Skill[Any] | None = None
        self.runner: asyncio.Task[None] | None = None
        self.outcome: asyncio.Future[ChatMessage] = asyncio.get_running_loop().create_future()
        self.answer: asyncio.Future[str] | None = None
        self.pause_requested = False
        self.end_reason: str | None = None  # cancelled | watchdog | budget | failed | shutdown
        self.final: ChatMessage | None = None  # the reply, delivered once the end is durable
        self.truncated_repetition = False  # a model call of this run looped and was cut
        self.route_question: RouteQuestion | None = None  # asked by routing, not by the skill
        self._save = save
        self._durable = durable
        self.emit = emit

    # --- state ---------------------------------------------------------------------------

    @property
    def state(self) -> State:
        return self.machine.current

    def to(self, dest: State) -> None:
        self.machine.to(dest)

    def new_controller(self) -> None:
        self.controller = AbortController()

    def deliver(self, message: ChatMessage) -> None:
        """Hand a message to whoever awaits this task's outcome (once per outcome)."""
        if not self.outcome.done():
            self.outcome.set_result(message)

    def next_outcome(self) -> asyncio.Future[ChatMessage]:
        if self.outcome.done():
            self.outcome = asyncio.get_running_loop().create_future()
        return self.outcome

    # --- the _TaskHost protocol of SkillContext ---------------------------------------------

    def journal_get(self, name: str) -> tuple[bool, Any]:
        steps = self.record.steps
        if name in steps:
            return True, steps[name]
        return False, None

    async def journal_put(self, name: str, value: Any) -> None:
        """Journal a step's result; returns once it is on disk (with the group commit)."""
        self.record.steps[name] = value
        self.machine.touch()
        self._save(self)
        await self._durable()

    def before_step(self, name: str) -> None:
        self.machine.touch()
        if self.pause_requested:
            raise PauseRequested(name)

    def report_progress(self, progress: dict[str, Any]) -> None:
        self.record.progress = progress
        self.machine.touch()
        self.emit("task:progress", **progress)

    async def wait_for_answer(self, question: str, *, then: State | None = State.EXECUTING) -> str:
        """Ask, wait in WAITING_INPUT for the answer, then go to ``then`` (None: stay)."""
        self.to(State.WAITING_INPUT)
        self.record.question = question
        self._save(self)
        await self._durable()  # the question survives a crash before anyone sees it
        loop = asyncio.get_running_loop()
        self.answer = loop.create_future()
        self.emit("task:waiting_input", question=question)
        self.deliver(
            ChatMessage(
                content=question,
                task_id=self.id,
                state=State.WAITING_INPUT.value,
                tokens=self.record.tokens,
                cost=self.record.cost,
                data={"question": question},
            )
        )
        try:
            answer = await self.answer
        finally:
            self.answer = None
        self.record.question = None
        if then is not None:
            self.to(then)
        return answer
