"""A task: its record, state machine, abort controller, journal and reply channel.

``Task`` is what a ``SkillContext`` talks to behind the scenes (the ``_TaskHost`` protocol):
the journal of durable steps, progress, pauses at step boundaries and questions to the user.
What it cannot do alone (saving its checkpoint, waiting for the disk, hearing of a state change
or of its watchdog) it asks of one ``TaskOwner``, the driver that runs it (``driver.py``).

Its words to its caller go through one ``ReplyChannel``: each question it asks, then its final
reply, which is the result of its runner (the driver returns it once the ending is durable).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from skillrt._state.records import TaskRecord
from skillrt._tasks.journaljson import JournalJSON
from skillrt._tasks.machine import _BY_VALUE, State, TaskMachine
from skillrt.abort import AbortController
from skillrt.exceptions import TaskPaused
from skillrt.messages import ChatMessage
from skillrt.outcomes import End, Outcome
from skillrt.skill.context import TaskEvents, TaskInput
from skillrt.skill.replies import reply

if TYPE_CHECKING:
    from skillrt._routing.clarify import RouteQuestion
    from skillrt.skill.definition import Skill

__all__ = ["ReplyChannel", "Task", "TaskOwner"]


class TaskOwner(Protocol):
    """What a task needs from whoever drives it."""

    def state_changed(self, task: Task, source: State, dest: State) -> None: ...
    def watchdog_fired(self, task: Task, state: State, seconds: float) -> None: ...
    def save(self, task: Task) -> None: ...
    async def durable(self) -> None: ...
    def saved(self, task: Task) -> asyncio.Future[None] | None:
        """``save`` then ``durable``, as the future to await (None: nothing to wait for)."""


class ReplyChannel:
    """One task's words to whoever waits on it.

    A caller opens a turn (``open()``) before it starts, answers or resumes the task, then
    awaits it. The next message the task sends completes the turn: a question it asks, or its
    final reply when its runner ends. A message with no open turn is dropped (its caller gave up:
    nobody will read it), so a turn never receives an earlier turn's message.
    """

    __slots__ = ("_turn",)

    def __init__(self) -> None:
        self._turn: asyncio.Future[ChatMessage] | None = None

    def open(self) -> asyncio.Future[ChatMessage]:
        turn = self._turn
        if turn is None or turn.done():
            turn = self._turn = asyncio.get_running_loop().create_future()
        return turn

    def send(self, message: ChatMessage) -> None:
        turn = self._turn
        if turn is not None and not turn.done():
            turn.set_result(message)


class Task:
    """One task. Owned by the runtime; a skill sees it only through its context."""

    def __init__(
        self,
        record: TaskRecord,
        *,
        input: TaskInput,
        owner: TaskOwner,
        emit: Callable[..., None],
        watchdog_s: float,
        initial: State,
        max_task_s: float | None = None,
    ) -> None:
        self.id = record.id
        self.record = record
        self.input = input
        self.owner = owner
        self.emit = emit
        self.events: TaskEvents | None = None  # what ``emit`` belongs to, for ``ctx.events``
        self.controller = AbortController()
        # The machine calls back through a weak reference: with bound methods, the task and
        # its machine made a cycle (and the runner's context, which holds the machine, another),
        # so every finished task waited for the garbage collector: in a server, a young
        # collection every few hundred requests, a sixth of its CPU. Now it is freed at once.
        me = weakref.ref(self)

        def changed(source: State, dest: State) -> None:
            task = me()
            if task is not None:
                task.owner.state_changed(task, source, dest)

        def timed_out(state: State, seconds: float) -> None:
            task = me()
            if task is not None:
                task.owner.watchdog_fired(task, state, seconds)

        self.machine = TaskMachine(
            record.id,
            watchdog_s=watchdog_s,
            on_change=changed,
            on_timeout=timed_out,
            initial=initial,
            max_task_s=max_task_s,
        )
        self.replies = ReplyChannel()
        self.skill: Skill[Any] | None = None
        self.runner: asyncio.Task[ChatMessage] | None = None
        self._on_end: Callable[[], None] | None = None  # see ``start``
        self._replied = False  # the runner sent its reply itself (``finished``)
        self.answer: asyncio.Future[str] | None = None
        # Asked, its question being saved: done once the question is open to an answer.
        self.asking: asyncio.Future[None] | None = None
        self.pause_requested = False
        self.end_reason: End | None = None
        self.truncated_repetition = False  # a model call of this run looped and was cut
        self.route_question: RouteQuestion | None = None  # asked by routing, not by the skill
        # The skill's test of the answers to the question it waits on (``ctx.ask(accepts=)``).
        self.accepts: Callable[[str], bool] | None = None
        self.memory_only = False  # its request holds a secret: never checkpointed
        self.journal = JournalJSON()  # its steps as its checkpoints write them, made once
        # Set by whoever awaits the run's reply and records it in the history: called with the
        # final reply before its ending is made durable, so both go in one commit round.
        self.reply_hook: Callable[[ChatMessage], None] | None = None
        # The run's final reply once its ending's commit round is on disk (the driver sets it).
        self.durable_reply: ChatMessage | None = None

    async def asked(self, wait_s: float) -> None:
        """Until the question it asked is open to an answer (``wait_s`` at most). The task is
        WAITING_INPUT, listed with its question, while that question is saved (a commit away):
        an answer sent by a client that saw it listed was refused, 409 "not waiting for an
        answer", and lost, ten times in fifteen when sent at once."""
        asking = self.asking
        if asking is not None:
            await asyncio.wait({asking}, timeout=wait_s)

    def takes(self, text: str) -> bool:
        """Whether the session's input ``text`` answers the question this task waits on.
        False: it is a new request (the question is dropped). Routing's question reads its
        own answers; a skill's, its ``accepts`` (with none, every input is an answer)."""
        question = self.route_question
        if question is not None:
            return question.interpret(text) is not None
        accepts = self.accepts
        if accepts is None:
            return True
        try:
            return bool(accepts(text))
        except Exception:  # a faulty test: the skill reads the input as its answer
            return True

    # --- state ---------------------------------------------------------------------------

    @property
    def state(self) -> State:
        return self.machine.current

    def to(self, dest: State) -> None:
        # The machine's move, then the owner told here: not through the machine's callback
        # (a closure and a weak reference, at every transition).
        source = self.machine.move(dest)
        self.owner.state_changed(self, _BY_VALUE[source], dest)

    @property
    def running(self) -> bool:
        return self.runner is not None and not self.runner.done()

    def ask_to_pause(self) -> bool:
        """Pause at the next step boundary, if it is working (False if not)."""
        if self.state not in (State.UNDERSTANDING, State.PLANNING, State.EXECUTING):
            return False
        self.pause_requested = True
        return True

    def new_controller(self) -> None:
        self.controller = AbortController()

    def start(
        self, work: Coroutine[Any, Any, ChatMessage], on_end: Callable[[], None] | None = None
    ) -> None:
        """Run ``work`` (the driver's run of this task); its result is the final reply.
        ``on_end`` is called once it is over, whatever its ending, from the same done-callback
        (not one more: a loop callback per task)."""
        # The loop's create_task, not asyncio.create_task's two Python calls around it.
        self.runner = asyncio.get_running_loop().create_task(work)
        self._on_end = on_end
        self.runner.add_done_callback(self._ended)

    def finished(self, message: ChatMessage) -> None:
        """The runner's last act: ``on_end``, then its final reply, sent now rather than from
        its done-callback (the caller resumes a turn of the loop sooner, with the callback)."""
        self._end()
        self._replied = True
        runner = self.runner
        if runner is not None:  # its done-callback would do nothing now: not scheduled at all
            runner.remove_done_callback(self._ended)
        self.replies.send(message)

    def _end(self) -> None:
        on_end, self._on_end = self._on_end, None
        if on_end is not None:
            try:
                on_end()
            except Exception as exc:  # reported as a failing done-callback is; the reply goes
                asyncio.get_running_loop().call_exception_handler(
                    {"message": f"task {self.id}: on_end failed", "exception": exc}
                )

    def _ended(self, runner: asyncio.Task[ChatMessage]) -> None:
        self._end()
        if self._replied:  # by ``finished``: a turn opened since is not this reply's
            return
        if not runner.cancelled() and runner.exception() is None:
            self.replies.send(runner.result())
            return
        # Cancelled before it began (the runtime closed), or a bug in the driver: the caller
        # still hears of it rather than waiting for ever.
        key, outcome = (
            ("closed", Outcome.CLOSED)
            if runner.cancelled()
            else ("ended_unexpectedly", Outcome.FAILED)
        )
        self.replies.send(
            ChatMessage(
                content=reply(key, self.input.language),
                task_id=self.id,
                state=self.state.value,
                data={"outcome": outcome},
            )
        )

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
        waiter = self.owner.saved(self)  # (awaited here: no coroutine per layer)
        if waiter is not None:
            await waiter

    def before_step(self, name: str) -> None:
        self.machine.touch()
        if self.pause_requested:
            raise TaskPaused(name)

    def report_progress(self, progress: dict[str, Any]) -> None:
        self.record.progress = progress
        self.machine.touch()
        self.emit("task:progress", **progress)

    async def wait_for_answer(
        self,
        question: str,
        *,
        then: State | None = State.EXECUTING,
        accepts: Callable[[str], bool] | None = None,
    ) -> str:
        """Ask, wait in WAITING_INPUT for the answer, then go to ``then`` (None: stay).
        ``accepts``: see ``takes``; an input it refuses ends the wait with
        ``TaskCancelled("superseded")``, and the input is routed as a new request."""
        self.to(State.WAITING_INPUT)
        self.record.question = question
        loop = asyncio.get_running_loop()
        self.asking = loop.create_future()
        try:
            waiter = self.owner.saved(self)  # the question survives a crash before anyone sees it
            if waiter is not None:
                await waiter
            self.answer = loop.create_future()
            self.emit("task:waiting_input", question=question)
            self.replies.send(
                ChatMessage(
                    content=question,
                    task_id=self.id,
                    state=State.WAITING_INPUT.value,
                    tokens=self.record.tokens,
                    cost=self.record.cost,
                    data={"question": question},
                )
            )
            self.accepts = accepts
        finally:
            asking, self.asking = self.asking, None
            asking.set_result(None)
        try:
            answer = await self.answer
        finally:
            self.answer = None
            self.accepts = None
        self.record.question = None
        if then is not None:
            self.to(then)
        return answer
