"""``AgentRuntime``: chat input in, durable, cancellable, resumable tasks out.

The runtime is a facade. Its collaborators (config, model, checkpoint store, clock, skills) are
injected; ``initialize()`` opens the stores (``services.py``) and makes the ``TaskDriver``
(``driver.py``) that runs each task: plan (``planning.py``), execute, end. What is kept for
people (turns, focus, history, summaries) is the ``ChatLog``. ``get_instance()`` is a
convenience singleton over the class.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, ClassVar

from skillrt._chat.chatlog import ChatLog
from skillrt._io.logs import Redactor, make_logger, open_log_file
from skillrt._io.syncloop import SyncLoop
from skillrt._routing.inputs import as_dict, clean_text, refusal
from skillrt._routing.router import CHAT, IntentRouter
from skillrt._state.protocol import HistoryStore, LazyLoad, LoadResult, RunLockTable, TaskStore
from skillrt._tasks.machine import State
from skillrt._tasks.planning import route_context
from skillrt._tasks.run import TaskDriver
from skillrt._tasks.task import Task
from skillrt._tasks.tasktable import TaskTable
from skillrt.events import EventBus, EventCallback
from skillrt.exceptions import UnknownSkill, UserError
from skillrt.llm.base import LLM
from skillrt.llm.cost import CostTracker
from skillrt.messages import ChatMessage, TaskSummary, new_id
from skillrt.outcomes import Outcome
from skillrt.services import ServicePart, Services, open_services
from skillrt.settings import BudgetConfig, RuntimeConfig, load_config
from skillrt.skill.context import detect_language
from skillrt.skill.conversation import Conversation
from skillrt.skill.definition import Skill
from skillrt.skill.replies import reply

if TYPE_CHECKING:
    from skillrt._tasks.failover import Failover
    from skillrt.blog.files import FileStore
    from skillrt.blog.locks import FileLockManager
    from skillrt.blog.memory import BlogMemory

__all__ = ["AgentRuntime"]

OnTask = Callable[[str], None] | None
"""Called with the id of the task an input starts or answers, before any of its events."""


def _entry_point_skills() -> list[Skill[Any]]:
    """Skills advertised under the ``skillrt.skills`` entry point group (the builtins)."""
    found: list[Skill[Any]] = []
    for ep in entry_points(group="skillrt.skills"):
        provider = ep.load()
        found.extend(provider() if callable(provider) else provider)
    return found


def _routes_with(llm: LLM | None, config: RuntimeConfig) -> bool:
    """Is ``llm`` asked to route what the intent table leaves unsure? Not the embedded model
    (a 135M model routed worse than none), unless ``llm.route_with_embedded`` says so."""
    if llm is None:
        return False
    return getattr(llm, "provider", None) != "local" or config.llm.route_with_embedded


class AgentRuntime:
    """Routes chat input to skills and runs each as a durable, cancellable task."""

    _instance: ClassVar[AgentRuntime | None] = None

    def __init__(
        self,
        config: RuntimeConfig | None = None,
        *,
        llm: LLM | None = None,
        store: TaskStore | None = None,
        clock: Callable[[], float] | None = None,
        skills: Iterable[Skill[Any]] | None = None,
    ) -> None:
        self.config = config if config is not None else load_config()
        self.clock = clock or time.time
        self.session_id = self.config.session_id or new_id()
        self.redactor = Redactor(self.config.secret_values())
        self._log_file = open_log_file(self.config)
        # One bound, redacting logger, handed to every part that logs (see ``logs``).
        self.logger = make_logger(self.config, self.redactor, self._log_file).bind(
            session_id=self.session_id
        )
        self.events = EventBus(clock=self.clock, redactor=self.redactor, logger=self.logger)
        self.costs = CostTracker()
        self.llm_reason = "injected" if llm is not None else ""
        self._llm, self._store, self._owns_llm = llm, store, llm is None
        self.router = IntentRouter(
            llm if _routes_with(llm, self.config) else None,
            cache_size=self.config.intent_cache_size,
            cache_ttl_s=self.config.intent_cache_ttl_s,
            logger=self.logger,
        )
        for s in _entry_point_skills() if skills is None else skills:
            self.register_skill(s)
        # The runtime's clock as it is when asked (a host or a test may swap it).
        self.chatlog = ChatLog(self.config, self.redactor, lambda: self.clock(), self.logger)
        self.sessions = self.chatlog.sessions
        self._tasks = TaskTable()  # live tasks, and restored ones built only when asked for
        self._driver: TaskDriver | None = None  # with the services, once initialised
        self._services: Services | None = None
        self._init_lock: asyncio.Lock | None = None
        self._sync = SyncLoop()  # for synchronous callers
        self._failover: Failover | None = None

    @classmethod
    def get_instance(
        cls,
        config: RuntimeConfig | None = None,
        *,
        llm: LLM | None = None,
        store: TaskStore | None = None,
        clock: Callable[[], float] | None = None,
    ) -> AgentRuntime:
        """The shared runtime; ``config`` and the collaborators are used on the first call only."""
        if cls._instance is None:
            cls._instance = cls(config, llm=llm, store=store, clock=clock)
        return cls._instance

    @classmethod
    def reset_instance(cls) -> None:
        """Forget the shared runtime (its tasks are stopped and its stores closed)."""
        instance, cls._instance = cls._instance, None
        if instance is not None:
            instance.close_sync()

    # --- parts ---------------------------------------------------------------------------------

    @property
    def _run(self) -> TaskDriver:
        if self._driver is None:
            raise UserError("the runtime is not initialised: await runtime.initialize() first")
        return self._driver

    @property
    def llm(self) -> LLM:
        if self._llm is None:
            raise UserError("the runtime has no model yet: await runtime.initialize() first")
        return self._llm

    @property
    def store(self) -> TaskStore:
        return self._run.state.store

    history: ServicePart[HistoryStore] = ServicePart()
    locks: ServicePart[FileLockManager] = ServicePart()
    files: ServicePart[FileStore] = ServicePart()
    memory: ServicePart[BlogMemory] = ServicePart()
    runlocks: ServicePart[RunLockTable] = ServicePart()

    @property
    def router_trust(self) -> str:
        """``llm.router_trust``, or when unset ``low`` for the embedded (local) model and
        ``high`` for any other: under ``low`` a route only the model chose asks the user before
        it reaches the web, deletes or writes."""
        if self.config.llm.router_trust is not None:
            return self.config.llm.router_trust
        return "low" if getattr(self._llm, "provider", None) == "local" else "high"

    @property
    def skills(self) -> Mapping[str, Skill[Any]]:
        """The registered skills by name: the router's registry (the one registry there is), read
        only; add one with ``register_skill``."""
        return self.router.registry

    def register_skill(self, skill: Skill[Any]) -> None:
        self.router.register_skill(skill)

    def on(self, event_type: str, callback: EventCallback) -> Callable[[], None]:
        """Subscribe to an event type (``"*"`` for all); returns the unsubscribe function."""
        return self.events.on(event_type, callback)

    # --- opening -------------------------------------------------------------------------------

    async def initialize(self) -> None:
        """Open the model, the blog memory and the stores, and load resumable tasks. Idempotent."""
        if self._driver is not None:
            return
        self._init_lock = self._init_lock or asyncio.Lock()
        async with self._init_lock:
            if self._driver is not None:  # another caller finished while we waited
                return  # type: ignore[unreachable]
            services, loaded = await asyncio.to_thread(self._open)
            self.chatlog.open(services.history, services.state.committer)
            self._driver = TaskDriver(
                config=self.config,
                state=services.state,
                files=services.files,
                memory=services.memory,
                llm=self.llm,
                tasks=self._tasks,
                router=self.router,
                skills=self.skills,
                trust=lambda: self.router_trust,
                events=self.events,
                costs=self.costs,
                chatlog=self.chatlog,
                logger=lambda: self.logger,
            )
            self._driver.inventory.restore(loaded)
            self._services = services
            if services.state.shared and self.config.failover:
                from skillrt._tasks.failover import Failover

                every, state = self.config.lease_s / 3, services.state
                self._failover = Failover(state, self._tasks, self._adopted, interval_s=every)
                self._failover.start()
            self.events.emit("runtime:initialized", None, session_id=self.session_id,
                             model=self.llm.model, skills=sorted(self.skills))  # fmt: skip

    def _open(self) -> tuple[Services, LoadResult | LazyLoad]:
        """The blocking part of ``initialize`` (run in a thread): the model, then the stores."""
        if self._llm is None:
            from skillrt.llm.select import create_llm

            self._llm, self.llm_reason = create_llm(self.config)
        if self.router.llm is None and _routes_with(self._llm, self.config):
            self.router.llm = self._llm
        services = open_services(self.config, store=self._store, logger=self.logger,
                                 on_reset=self._checkpoint_all)  # fmt: skip
        window = self.config.checkpoint_max_age_h * 3600
        return services, services.state.load_resumable(max_age_s=window, now=self.clock())

    def _checkpoint_all(self) -> None:  # the store had to start a fresh database
        if self._driver is not None:
            self._driver.checkpoints.save_all()

    # --- input ---------------------------------------------------------------------------------

    async def process_input(
        self, text: str, context: dict[str, Any] | None = None, *, on_task: OnTask = None
    ) -> ChatMessage:
        """Handle one chat input: answer a waiting question, or route it and run it as a task.

        ``on_task(task_id)`` is called with the task the input starts or answers, before any of
        its events (a server streams them while the call runs)."""
        await self.initialize()
        try:
            context, raw, text = as_dict("context", context), text, clean_text(text)
        except UserError as exc:
            return self._reply(str(exc), error="bad_input")
        session_id = str(context.pop("session_id", None) or self.session_id)
        lang = detect_language(text)
        refused = refusal(raw, text, self.config.max_input_chars, self.router, lang)
        if refused is not None:
            return self._reply(refused[0], error=refused[1])
        self.logger.info(
            "agent.input.received", input=self.chatlog.shown(text, 100), chars=len(text)
        )
        self.chatlog.add_message(session_id, "user", text)
        waiting = self._tasks.waiting(session_id)
        if waiting is not None and waiting.answer is not None and not waiting.answer.done():
            question = waiting.route_question
            if question is None or question.interpret(text) is not None:
                return await self._answer(waiting, text, on_task)
            # Not an answer to routing's question: that is dropped, and the text is a new request.
            await asyncio.shield(self._answer(waiting, text, None, record=False))
        self.chatlog.apply_focus(context, session_id, self._run.files)
        screened = self.router.screen(text, route_context(context))
        if screened == "word" or (screened == "chat" and not self.router.handles(CHAT)):
            content = reply("small_talk", lang)  # one short word, or small talk with no chat skill
            self.chatlog.add_message(session_id, "assistant", content)
            return self._reply(content, outcome=Outcome.CHAT, intent=CHAT)
        task = self._run.new_task(text, context, session_id)
        return await self._turn(task, on_task, route=True)

    async def run_skill(
        self,
        name: str,
        params: dict[str, Any],
        context: dict[str, Any] | None = None,
        *,
        on_task: OnTask = None,
    ) -> ChatMessage:
        """Run a skill by name with explicit params, without routing (a blog tool's button)."""
        await self.initialize()
        if name not in self.skills:
            raise UnknownSkill(name, list(self.skills))
        try:
            params, context = as_dict("params", params), as_dict("context", context)
        except UserError as exc:
            return self._reply(str(exc), error="bad_params")
        session_id = str(context.pop("session_id", None) or self.session_id)
        task = self._run.direct_task(name, params, context, session_id)
        return await self._turn(task, on_task, route=False)

    async def answer_task(
        self, task_id: str, text: str, *, on_task: OnTask = None
    ) -> ChatMessage | None:
        """Answer the question task ``task_id`` is waiting on; None if it is not waiting."""
        await self.initialize()
        task = self._tasks.get(task_id)
        if task is None or task.answer is None or task.answer.done():
            return None
        text = clean_text(text)
        if not text:
            raise UserError("the answer is empty")
        self.chatlog.add_message(task.record.session_id, "user", text)
        return await self._answer(task, text, on_task)

    async def _answer(
        self, task: Task, text: str, on_task: OnTask, *, record: bool = True
    ) -> ChatMessage:
        if task.answer is None:
            raise UserError(f"task {task.id} is not waiting for an answer")
        if on_task is not None:
            on_task(task.id)
        turn = task.replies.open()
        task.answer.set_result(text)
        return await self._outcome(task, turn) if record else await turn

    async def _turn(self, task: Task, on_task: OnTask, *, route: bool) -> ChatMessage:
        if on_task is not None:
            on_task(task.id)
        return await self._outcome(task, self._run.start(task, route=route))

    async def _outcome(self, task: Task, turn: asyncio.Future[ChatMessage]) -> ChatMessage:
        try:
            message = await turn
        except asyncio.CancelledError:  # the caller gave up (a host cancelled, Ctrl-C): stop too
            self.abort(task.id)
            raise
        self.chatlog.add_reply(task.record.session_id, task.record.skill, message)
        await self.chatlog.written()  # the history holds the turn before its caller hears it
        return message

    def _reply(self, content: str, *, task_id: str | None = None, **data: Any) -> ChatMessage:
        return ChatMessage(content=content, task_id=task_id, state=self.state.value, data=data)

    def process_input_sync(self, text: str, context: dict[str, Any] | None = None) -> ChatMessage:
        """``process_input`` for synchronous callers (not from inside a running event loop)."""
        return self._sync.run(self.process_input(text, context), "process_input")

    # --- the conversation ----------------------------------------------------------------------

    def conversation(self, session_id: str | None = None) -> Conversation:
        """A session's recent turns (bounded by ``conversation.max_tokens``) and its focus."""
        return self.sessions.conversation(session_id or self.session_id)

    async def set_focus(self, path: str | None, *, session_id: str | None = None) -> str | None:
        """Make ``path`` (a post of the blog) the session's focus, or clear it with None; returns
        it relative to the blog. ``UserError`` for a path outside the blog or a missing file."""
        await self.initialize()
        files = self._run.files
        return self.chatlog.focus_on(path, session_id or self.session_id, files)

    def new_session(self, session_id: str | None = None) -> str:
        """Start afresh: a new (or named) session becomes the default one; returns its id."""
        self.session_id = session_id or new_id()
        self.logger = self.logger.bind(session_id=self.session_id)
        return self.session_id

    # --- tasks ---------------------------------------------------------------------------------

    @property
    def state(self) -> State:
        """The foreground task's state: the newest task still working or waiting, else IDLE."""
        task = self._tasks.foreground()
        return State.IDLE if task is None else task.state

    @property
    def current_task_id(self) -> str | None:
        task = self._tasks.foreground()
        return None if task is None else task.id

    def task_state(self, task_id: str) -> State | None:
        task = self._tasks.get(task_id)
        return task.state if task else None

    def abort(self, task_id: str | None = None) -> bool:
        """Cancel a task (the foreground one when None): its signal fires, its work stops now."""
        task = self._tasks.get(task_id or self.current_task_id or "")
        return task is not None and self._run.inventory.abort(task)

    def pause(self, task_id: str | None = None) -> bool:
        """Ask a running task to pause at its next step boundary."""
        task = self._tasks.get(task_id or self.current_task_id or "")
        return task is not None and task.ask_to_pause()

    def get_resumable_tasks(self) -> list[TaskSummary]:
        """Tasks to resume: paused, restored from a checkpoint, or stopped by an outage."""
        records = [] if self._driver is None else self._driver.inventory.resumable()
        return [self.chatlog.summary(record) for record in records]

    def list_tasks(self) -> list[TaskSummary]:
        """Every task this runtime holds: running, waiting for an answer, and resumable."""
        records = [] if self._driver is None else self._driver.inventory.held()
        return [self.chatlog.summary(record) for record in records]

    def get_task(self, task_id: str) -> TaskSummary | None:
        """One task this runtime holds (running, waiting or resumable), or None. With the shared
        store, a task another worker paused or stopped is read from the store."""
        task = self._tasks.get(task_id)
        if task is None and self._driver is not None:
            task = self._driver.inventory.from_store(task_id)
        return None if task is None else self.chatlog.summary(task.record)

    async def resume_task(
        self,
        task_id: str,
        *,
        budget: BudgetConfig | Mapping[str, Any] | None = None,
        session_id: str | None = None,
        on_task: OnTask = None,
    ) -> ChatMessage | None:
        """Continue a task from its last completed step (its completed steps are not run, nor
        paid for, again). None if there is no such resumable task; a reply saying so if another
        process runs it right now. Its questions are then answered in ``session_id``.

        ``budget`` (``max_tokens``, ``max_cost``) replaces the task's limits where given, kept
        with the task; what it used already still counts."""
        limits = BudgetConfig.model_validate(budget) if budget is not None else None
        await self.initialize()
        resumed = await self._run.inventory.resume(task_id, limits, session_id or self.session_id)
        if not isinstance(resumed, asyncio.Future):
            return resumed
        task = self._tasks.get(task_id)
        if on_task is not None:
            on_task(task_id)
        return await self._outcome(task, resumed) if task is not None else await resumed

    async def _adopted(self, task_id: str) -> None:
        """Resume a task whose worker died (the shared store's failover took its lease)."""
        self.logger.info("agent.task.adopted", task_id=task_id, error_reason="CRASH")
        await self.resume_task(task_id)

    async def abandon_task(self, task_id: str) -> bool:
        """Give up a paused or failed task for good: it is no longer offered for resume."""
        await self.initialize()
        task = self._tasks.get(task_id)
        return task is not None and await self._run.inventory.abandon(task)

    # --- shutdown ------------------------------------------------------------------------------

    async def close(self) -> None:
        """Stop running tasks and close. Stopped tasks stay resumable, from their last completed
        step, as after a crash (closing is not the user cancelling them)."""
        if self._failover is not None:
            await self._failover.stop()
            self._failover = None
        if self._driver is not None:
            await self._driver.inventory.shutdown()
        aclose = getattr(self._llm, "aclose", None)
        if self._owns_llm and aclose is not None:  # a model we made (connections, llama.cpp)
            await aclose()
            self._llm = None
        self._close_services()

    def _close_services(self) -> None:
        services, self._driver, self._services = self._services, None, None
        if services is not None:
            self.chatlog.flush()
            try:
                services.close()
            except Exception as exc:  # a full or read-only disk: the stores still close
                self.logger.error("agent.error", where="close", error=self.chatlog.error_text(exc))
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
            # The file is closed: the runtime and its parts log to stderr from now on.
            self.logger = make_logger(self.config, self.redactor).bind(session_id=self.session_id)
            self.events.logger = self.router.logger = self.chatlog.logger = self.logger

    def close_sync(self) -> None:
        """``close`` for synchronous callers (those that used ``process_input_sync``)."""
        if not self._sync.run_last(self.close()):
            self._close_services()
