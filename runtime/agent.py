"""``AgentRuntime``: chat input in, durable, cancellable, resumable tasks out.

The runtime is a facade. Its collaborators (config, model, checkpoint store, clock, skills) are
injected; ``initialize()`` opens the stores (``services.py``) and makes the ``TaskDriver``
(``driver.py``) that runs each task: plan (``planning.py``), execute, end. What is kept for
people (turns, focus, history, summaries) is the ``ChatLog``. ``get_instance()`` is a
convenience singleton over the class.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import ValidationError

from skillrt._chat.chatlog import ChatLog
from skillrt._io.logs import Redactor, make_logger, open_log_file
from skillrt._io.settings_fields import config_error
from skillrt._io.syncloop import SyncLoop
from skillrt._routing.clarify import holds_back
from skillrt._routing.inputs import as_dict, as_params, clean_text, refusal
from skillrt._routing.router import CHAT, IntentRouter
from skillrt._state.protocol import (
    HistoryStore,
    LazyLoad,
    LoadResult,
    QueuedTask,
    RunLockTable,
    TaskStore,
)
from skillrt._tasks.endings import resting
from skillrt._tasks.machine import State
from skillrt._tasks.planning import LOGS_INFO, route_context
from skillrt._tasks.run import TaskDriver
from skillrt._tasks.task import Task
from skillrt._tasks.tasktable import TaskTable
from skillrt.blog.conventions import in_drafts_folder
from skillrt.blog.publish import Published, publish_kept
from skillrt.blog.siteconfig import site_today
from skillrt.blog.versions import NothingToUndo
from skillrt.events import EventBus, EventCallback
from skillrt.exceptions import (
    ConfigError,
    FileChanged,
    LockConflict,
    StoreUnavailable,
    TaskCancelled,
    UnknownSkill,
    UserError,
)
from skillrt.llm.base import LLM
from skillrt.llm.cost import CostTracker
from skillrt.messages import ChatMessage, TaskSummary, new_id
from skillrt.outcomes import End, Outcome
from skillrt.services import ServicePart, Services, open_services
from skillrt.settings import BudgetConfig, RuntimeConfig, load_config
from skillrt.skill.context import detect_language
from skillrt.skill.conversation import Conversation
from skillrt.skill.definition import Skill
from skillrt.skill.replies import reply

if TYPE_CHECKING:
    from skillrt._state.records import TaskRecord
    from skillrt._tasks.failover import Failover
    from skillrt._tasks.queueing import QueueTaker
    from skillrt._tasks.remote import Remote
    from skillrt.blog.files import FileStore
    from skillrt.blog.locks import FileLockManager
    from skillrt.blog.memory import BlogMemory
    from skillrt.mcp.client.toolbox import McpToolBox

__all__ = ["AgentRuntime"]

OnTask = Callable[[str], None] | None
"""Called with the id of the task an input starts or answers, before any of its events."""
OnLeft = Callable[[ChatMessage | None], None] | None
"""For a caller that may stop waiting (a server's request, answered in its own asyncio task):
when that task is cancelled once the call's task started (``on_task`` was called), the task
goes on instead of stopping, its reply is recorded in the history all the same, and it is
handed to this callback when it comes (None if there is none: the run failed to reply)."""


def _uncancelled(turn: asyncio.Future[ChatMessage]) -> asyncio.Future[ChatMessage]:
    """``turn``, awaited through a future of its own: cancelling the waiter leaves ``turn``
    be (``asyncio.shield`` without its extra callback)."""
    waiter: asyncio.Future[ChatMessage] = turn.get_loop().create_future()

    def done(_: asyncio.Future[ChatMessage]) -> None:
        if waiter.done():
            return
        if turn.cancelled():
            waiter.cancel()
        elif (error := turn.exception()) is not None:
            waiter.set_exception(error)
        else:
            waiter.set_result(turn.result())

    turn.add_done_callback(done)
    return waiter


async def _kept(work: asyncio.Task[ChatMessage], on_left: OnLeft) -> ChatMessage:
    """``work``'s reply; if its caller leaves meanwhile, ``work`` goes on, and hands its reply
    to ``on_left`` (see ``OnLeft``)."""
    try:
        return await _uncancelled(work)
    except asyncio.CancelledError:
        if on_left is not None and not work.done():
            work.add_done_callback(
                lambda w: on_left(None if w.cancelled() or w.exception() else w.result())
            )
        elif on_left is not None:
            on_left(None if work.cancelled() or work.exception() else work.result())
        raise


_LEFT: set[asyncio.Task[None]] = set()  # the turns whose callers left, until they end


def _budget_given(budget: BudgetConfig | Mapping[str, Any] | None) -> BudgetConfig | None:
    """``resume_task``'s ``budget``, validated; a ``ConfigError`` naming the key, as
    ``load_config`` gives for the same mistake (pydantic's raw ``ValidationError`` came out,
    not one of ``skillrt.exceptions``)."""
    if budget is None:
        return None
    try:
        return BudgetConfig.model_validate(budget)
    except ValidationError as exc:
        said = config_error(exc, ("budget",), {"budget": budget})
        raise _BudgetError(said.source, said.key, said.expected, said.got) from None


class _BudgetError(ConfigError, ValueError):
    """A bad ``budget``: a ``ConfigError``, and still the ``ValueError`` callers caught."""


def _entry_point_skills() -> list[Skill[Any]]:
    """Skills advertised under the ``skillrt.skills`` entry point group (the builtins)."""
    found: list[Skill[Any]] = []
    for ep in entry_points(group="skillrt.skills"):
        provider = ep.load()
        found.extend(provider() if callable(provider) else provider)
    return found


def _check_given(config: object, llm: object) -> None:
    """A ``TypeError`` naming what was given, for a config that is no ``RuntimeConfig`` or a
    model with no ``chat``: ``AgentRuntime("blog")`` raised "'str' object has no attribute
    'session_id'", and ``llm="gpt-4"`` was taken, to fail at the first request."""
    if config is not None and not isinstance(config, RuntimeConfig):
        raise TypeError(
            "AgentRuntime takes a RuntimeConfig (skillrt.load_config(content_root=...)), "
            f"not {type(config).__name__}"
        )
    if llm is not None and not callable(getattr(llm, "chat", None)):
        raise TypeError(
            "AgentRuntime's llm is a model (skillrt.llm.base.BaseLLM: OpenAIProvider, "
            f"LocalProvider, skillrt.testing.ScriptedModel), not {type(llm).__name__}; a model's "
            "name goes in the settings (llm.model)"
        )


def _routes_with(llm: LLM | None, config: RuntimeConfig) -> bool:
    """Is ``llm`` asked to route what the intent table leaves unsure? Not the embedded model
    (a 135M model routed worse than none), unless ``llm.route_with_embedded`` says so."""
    if llm is None:
        return False
    return getattr(llm, "provider", None) != "local" or config.llm.route_with_embedded


ID_CHARS = 200
"""The most characters of an id a client sends (a task's, a session's): as the HTTP API's
``session_id``."""


def check_length(name: str, value: object, limit: int, setting: str = "max_input_chars") -> None:
    """``UserError`` for a text ``value`` longer than ``limit``, said in one line that names
    the field and the limit, not the value: an MCP ``ask`` took a ``selected_text`` of
    300,000 characters (only ``text`` was bounded), and a 10,000-character ``task_id`` sent to
    ``answer`` came back whole in its error."""
    if isinstance(value, str) and len(value) > limit:
        raise UserError(
            f"{name} is too long ({len(value)} characters; the limit is {limit}, {setting})"
        )


def check_context(context: object, limit: int) -> None:
    """``check_length`` for every text of a context (the known fields and any other a client
    adds): the input's ``text`` had a limit, the rest of what a client sends had none (the
    selected text was cut to its first 20,000 characters without a word). Not a mapping:
    ``as_dict`` says so."""
    if not isinstance(context, Mapping):
        return
    for name, value in context.items():
        if name == "session_id":
            check_length(f"context {name}", value, ID_CHARS, "an id")
        else:
            check_length(f"context {name}", value, limit)


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
        _check_given(config, llm)
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
            classifier="packaged" if self.config.intent_classifier else None,
        )
        for s in _entry_point_skills() if skills is None else skills:
            self.register_skill(s)
        # The runtime's clock as it is when asked (a host or a test may swap it).
        self.chatlog = ChatLog(self.config, self.redactor, lambda: self.clock(), self.logger)
        self.sessions = self.chatlog.sessions
        self._tasks = TaskTable()  # live tasks, and restored ones built only when asked for
        # The tasks ``close()`` stopped, PAUSED, as ``get_task`` shows them until reopened.
        self._closed_copies: dict[str, TaskRecord] = {}
        self._driver: TaskDriver | None = None  # with the services, once initialised
        self._services: Services | None = None
        self._init_lock: asyncio.Lock | None = None
        self._sync = SyncLoop()  # for synchronous callers
        self._failover: Failover | None = None
        self._remote: Remote | None = None  # requests to and from other workers
        self._taker: QueueTaker | None = None  # takes work from the shared queue
        self._toolbox: McpToolBox | None = None  # [mcp.servers]: their tools, ctx.tools
        self._warming: concurrent.futures.Future[None] | None = None  # see ``warm_up``
        self._loop_free = False  # see ``keep_loop_free``

    @classmethod
    def get_instance(
        cls,
        config: RuntimeConfig | None = None,
        *,
        llm: LLM | None = None,
        store: TaskStore | None = None,
        clock: Callable[[], float] | None = None,
        skills: Iterable[Skill[Any]] | None = None,
    ) -> AgentRuntime:
        """The shared runtime; ``config`` and the collaborators (the constructor's keywords,
        ``skills`` too: it raised TypeError) are used on the first call only."""
        if cls._instance is None:
            cls._instance = cls(config, llm=llm, store=store, clock=clock, skills=skills)
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

    @property
    def store_available(self) -> bool:
        """False while the task store does not answer (a database outage): new work is
        refused until it does (``skillrt serve`` answers 503 with ``Retry-After``)."""
        return self._driver is None or self._driver.state.available

    @property
    def worker_id(self) -> str | None:
        """This worker's name in a shared store (None with the embedded one)."""
        return None if self._remote is None else self._remote.control.worker_id

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
        """Add ``skill`` (made by ``@skill``); one of the same name is replaced. Anything else
        is a ``TypeError`` naming it (an undecorated function raised AttributeError)."""
        given: object = skill  # (what a caller without a type checker may pass)
        if not isinstance(given, Skill):
            kind = type(given).__name__
            raise TypeError(
                f"register_skill takes a Skill (an async def decorated with @skill), not {kind}"
            )
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
            self._closed_copies = {}  # (the store's checkpoints restore them)
            await self._open_tools()
            self.chatlog.open(services.history, services.state.committer)
            self._driver = TaskDriver(
                config=self.config,
                state=services.state,
                files=services.files,
                memory=services.memory,
                versions=services.versions,
                llm=self.llm,
                tasks=self._tasks,
                router=self.router,
                skills=self.skills,
                trust=lambda: self.router_trust,
                events=self.events,
                costs=self.costs,
                chatlog=self.chatlog,
                logger=lambda: self.logger,
                tools=self._toolbox,
            )
            self._driver.inventory.restore(loaded)
            self._services = services
            self._commit_where()
            control = services.state.control
            if control is not None:
                from skillrt._tasks.remote import Remote

                self._remote = Remote(control, tasks=self._tasks, events=self.events,
                                      inventory=self._driver.inventory, answer=self._answer_here,
                                      logger=lambda: self.logger,
                                      wait_s=self.config.store_timeout_s)  # fmt: skip
                self._remote.start()
            queue = services.state.queue
            if queue is not None:
                from skillrt._tasks.queueing import QueueTaker

                keys = [f"model:{self.llm.model}", f"server:{self.config.llm.base_url or 'local'}"]
                self._taker = QueueTaker(queue, config=self.config.queue, keys=keys,
                                         run=self._run_queued, logger=lambda: self.logger,
                                         available=lambda: self.store_available)  # fmt: skip
                self._taker.start()
            if services.state.shared:  # (with failover off, it only stops the tasks lost)
                from skillrt._tasks.failover import Failover

                every, state = self.config.lease_s / 3, services.state
                self._failover = Failover(state, self._tasks, self._adopted, interval_s=every,
                                          adopt=self.config.failover)  # fmt: skip
                self._failover.start()
            self.events.emit("runtime:initialized", None, session_id=self.session_id,
                             model=self.llm.model, skills=sorted(self.skills))  # fmt: skip

    def keep_loop_free(self) -> None:
        """From now on every commit goes to the commit thread, whatever ``commit_on_loop``
        says: for a host whose event loop serves others too (``skillrt serve`` calls it)."""
        self._loop_free = True
        self._commit_where()

    def _commit_where(self) -> None:
        """A lone task's commits on the loop (``commit_on_loop``; unset: off, as a library
        should leave its host's loop), or in the commit thread."""
        driver, services = self._driver, self._services
        if driver is None or services is None:
            return
        on_loop = bool(self.config.commit_on_loop) and not self._loop_free
        services.state.committer.inline = driver.alone if on_loop else None

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

    async def _open_tools(self) -> None:
        """The MCP servers of ``[mcp.servers]``: their tools become skills (extra ``mcp``)."""
        if not self.config.mcp.servers or self._toolbox is not None:
            return
        from skillrt.mcp.client import open_toolbox

        trust = lambda: self.router_trust  # noqa: E731 - read when a tool is called
        logs = self.config.state_path / "logs"  # each stdio server's stderr: logs/mcp-NAME.log
        self._toolbox, found = await open_toolbox(
            self.config.mcp, trust=trust, logger=self.logger, log_dir=logs
        )
        for tool_skill in found:
            if tool_skill.name not in self.skills:  # a skill of the same name keeps its place
                self.register_skill(tool_skill)

    def _checkpoint_all(self) -> None:  # the store had to start a fresh database
        if self._driver is not None:
            self._driver.checkpoints.save_all()

    def warm_up(self) -> None:
        """Build in a thread, and return at once, what the first routed input would otherwise
        build on the event loop: the packaged intent table (its patterns compiled: 0.1-0.4 s on
        a small machine) and the classifier. An input that comes meanwhile waits for them
        rather than building them again. The REPL calls this once it is ready, while the user
        types, and ``skillrt serve`` and ``skillrt mcp`` when they start; a host that knows
        requests are coming may too. Without it (a Python host), the first input builds what it
        needs in a thread too (``process_input``), and waits for that; a later kind of text has
        its index built in a thread (``IntentRouter.prepared``). The thread logs
        ``agent.routing.ready`` (debug) when it is done."""
        if self._warming is None:
            self._warming = self._build_routing(_SAMPLES, browsing=True)

    def _build_routing(
        self, samples: Sequence[tuple[str, dict[str, Any]]], *, browsing: bool = False
    ) -> concurrent.futures.Future[None]:
        """Route ``samples`` in a thread of its own (and, with ``browsing``, a follow-up of a
        browsing session): what it builds is kept for the runtime's router (``warm_up``).
        The future is done when they are routed."""
        warming: concurrent.futures.Future[None] = concurrent.futures.Future()
        classifier: Literal["packaged"] | None = (
            "packaged" if self.config.intent_classifier else None
        )
        skills = list(self.skills.values())
        logger = self.logger

        def build() -> None:
            # Everything routing builds once per process is kept by its module (the table,
            # the classifier, each pattern's keywords and ASCII form, each kind of text's
            # index): a router of its own, routing a few inputs in this thread, leaves them
            # built for the runtime's.
            started = time.perf_counter()
            try:
                router = IntentRouter(None, cache_size=1, classifier=classifier)
                for skill in skills:
                    router.register_skill(skill)
                asyncio.run(_route_samples(router, samples, browsing))
            except Exception as exc:  # the first input meets it where it is reported
                logger.debug("agent.routing.warm_up_failed", error=str(exc))
            else:
                seconds = round(time.perf_counter() - started, 3)
                logger.debug("agent.routing.ready", samples=len(samples), seconds=seconds)
            finally:
                warming.set_result(None)

        threading.Thread(target=build, name="skillrt-warm-up", daemon=True).start()
        return warming

    # --- input ---------------------------------------------------------------------------------

    async def process_input(
        self,
        text: str,
        context: dict[str, Any] | None = None,
        *,
        on_task: OnTask = None,
        background: bool = False,
        on_left: OnLeft = None,
    ) -> ChatMessage:
        """Handle one chat input: answer a waiting question, or route it and run it as a task.

        ``on_task(task_id)`` is called with the task the input starts or answers, before any of
        its events (a server streams them while the call runs). With the shared store's queue
        on (``[queue] enabled``), the task may run on another worker; its reply comes back
        here. ``background``: after the interactive work waiting in the queue. ``on_left``: see
        ``OnLeft`` (without it, a caller cancelled while it waits cancels the task too)."""
        if self._driver is None:  # (not a coroutine per call once initialised)
            await self.initialize()
        try:
            check_context(context, self.config.max_input_chars)  # (before as_dict cuts it)
            context, raw, text = as_dict("context", context), text, clean_text(text)
        except UserError as exc:
            return self._reply(str(exc), error="bad_input")
        warming = self._warming
        if warming is None:  # no ``warm_up``: this input's tables, built in a thread all the
            # same (0.1-0.4 s the first time: on the loop, every other task and request waited).
            # Only its own: the other kinds of text, built behind it in that thread, slowed
            # its task down more than they saved (the thread held the GIL whenever the loop
            # waited on a file or the disk).
            warming = self._warming = self._build_routing([(text, dict(context))])
        if not warming.done():
            await asyncio.wrap_future(warming)  # routing's tables, being built
        session_id = str(context.pop("session_id", None) or self.session_id)
        chatlog = self.chatlog
        if not chatlog.sessions.held(session_id):
            await chatlog.load_session(session_id)  # read in a thread, not on the loop
        # The input's language only words a refusal here (a task's input finds its own): it
        # is worked out once there is one to word.
        limit = self.config.max_input_chars
        refused = refusal(raw, text, limit, self.router, "en")
        if refused is not None:
            refused = refusal(raw, text, limit, self.router, detect_language(text)) or refused
            return self._reply(refused[0], error=refused[1])
        if self.config.log_level in LOGS_INFO:  # (a line the logger drops still costs its
            self.logger.info(  # input's redaction, at every input)
                "agent.input.received", input=chatlog.shown(text, 100), chars=len(text)
            )
        chatlog.add_message(session_id, "user", text)
        waiting = self._tasks.waiting(session_id)
        if waiting is not None and waiting.answer is not None and not waiting.answer.done():
            if waiting.takes(text):
                return await self._answer(waiting, text, on_task, on_left=on_left)
            # Not an answer to the question (routing's, or a skill's that tests its answers):
            # the question is dropped, and the text is a new request. In an outage the new
            # task is refused: refused first, so the question stays open (it was dropped,
            # its task ended "declined", and then the request was refused too).
            self._refused_while_down("new tasks are refused")
            await asyncio.shield(self._hand_over(waiting, text, superseded=True))
        chatlog.apply_focus(context, session_id, self._run.files)
        screen_context = route_context(context)
        await self.router.prepared(text, screen_context, screening=True)  # (off the loop)
        screened = self.router.screen(text, screen_context)
        if screened == "word" or (screened == "chat" and not self.router.handles(CHAT)):
            # One short word, or small talk with no chat skill.
            content = reply("small_talk", detect_language(text))
            chatlog.add_message(session_id, "assistant", content)
            return self._reply(content, outcome=Outcome.CHAT, intent=CHAT)
        task = self._run.new_task(text, context, session_id)
        return await self._turn(task, on_task, route=True, background=background, on_left=on_left)

    async def run_skill(
        self,
        name: str,
        params: dict[str, Any],
        context: dict[str, Any] | None = None,
        *,
        on_task: OnTask = None,
        background: bool = False,
        on_left: OnLeft = None,
    ) -> ChatMessage:
        """Run a skill by name with explicit params, without routing (a blog tool's button).
        Queued like ``process_input`` when the shared store's queue is on; ``on_left`` as there."""
        if self._driver is None:  # (not a coroutine per call once initialised)
            await self.initialize()
        if name not in self.skills:
            raise UnknownSkill(name, list(self.skills))
        try:
            check_context(context, self.config.max_input_chars)  # (before as_dict cuts it)
            params, context = as_params(params), as_dict("context", context)
        except UserError as exc:
            return self._reply(str(exc), error="bad_params", outcome=Outcome.BAD_PARAMS)
        session_id = str(context.pop("session_id", None) or self.session_id)
        await self.chatlog.load_session(session_id)  # read in a thread, not on the loop
        task = self._run.direct_task(name, params, context, session_id)
        return await self._turn(task, on_task, route=False, background=background, on_left=on_left)

    async def answer_task(
        self, task_id: str, text: str, *, on_task: OnTask = None
    ) -> ChatMessage | None:
        """Answer the question task ``task_id`` is waiting on; None if it is not waiting. A
        task waiting on another worker gets the answer there, and its next reply comes back."""
        await self.initialize()
        check_length("task_id", task_id, ID_CHARS, "an id")
        text = clean_text(text)
        check_length("the answer", text, self.config.max_input_chars)
        task = self._tasks.live(task_id)
        if task is not None and task.asking is not None:  # its question is being saved
            await task.asked(self.config.store_timeout_s)
            task = self._tasks.live(task_id)
        if task is None or task.answer is None or task.answer.done():
            if self._remote is None or (task is not None and task.running):
                return None
            if not text:
                raise UserError("the answer is empty")
            if on_task is not None:
                on_task(task_id)
            answer = await self._remote.ask(task_id, "answer", text)
            if answer is None or not answer.get("ok"):
                return None
            return ChatMessage.model_validate(answer["message"])
        if not text:
            raise UserError("the answer is empty")
        self._refused_while_down("answers are refused")
        self.chatlog.add_message(task.record.session_id, "user", text)
        return await self._answer(task, text, on_task)

    def _refused_while_down(self, what: str) -> None:
        """Raise ``StoreUnavailable`` while the task store does not answer (an outage): ``serve``
        answers 503 with ``Retry-After``. An answer handed to a waiting task in an outage was
        accepted ("goes on once the store is back") and lost: the task's next step met the
        outage and stopped, its record still WAITING_INPUT, and once the store was back no
        worker had the question to answer (409 "not waiting for an answer" on both). Refused,
        the question stays open here and the same answer is taken once the store is back."""
        if not self._run.state.available:
            raise StoreUnavailable(
                f"the task store does not answer (an outage); {what} until it does",
                reason="unreachable",
            )

    async def _answer_here(self, task: Task, text: str) -> ChatMessage:
        """An answer sent from another worker to a task waiting here."""
        self.chatlog.add_message(task.record.session_id, "user", text)
        return await self._answer(task, text, None)

    async def _answer(
        self, task: Task, text: str, on_task: OnTask, *, on_left: OnLeft = None
    ) -> ChatMessage:
        if task.answer is None or task.answer.done():
            raise UserError(f"task {task.id} is not waiting for an answer")
        self._refused_while_down("answers are refused")
        if on_task is not None:
            on_task(task.id)
        return await self._outcome(task, self._hand_over(task, text), on_left)

    @staticmethod
    def _hand_over(
        task: Task, text: str, *, superseded: bool = False
    ) -> asyncio.Future[ChatMessage]:
        """Give ``text`` to the question ``task`` waits on, at once (no await between the
        caller's look and this: another answer cannot come in between); the turn its next
        reply completes. ``superseded``: the text is a new request, not the answer: routing's
        question reads that from the text itself; a skill's ends its task (CANCELLED, nothing
        more done)."""
        answer = task.answer
        if answer is None or answer.done():
            raise UserError(f"task {task.id} is not waiting for an answer")
        turn = task.replies.open()
        if superseded and task.route_question is None:
            answer.set_exception(TaskCancelled(Outcome.SUPERSEDED))
        else:
            answer.set_result(text)
        return turn

    async def _turn(
        self,
        task: Task,
        on_task: OnTask,
        *,
        route: bool,
        background: bool = False,
        on_left: OnLeft = None,
    ) -> ChatMessage:
        driver = self._run  # (read once: a property)
        if not driver.state.available:  # fail fast: the task could not keep a single step
            self._tasks.pop(task.id)
            raise StoreUnavailable(
                "the task store does not answer (an outage); new tasks are refused until it does",
                reason="unreachable",
            )
        if on_task is not None:
            on_task(task.id)
        if driver.state.queue is not None and self.config.queue.enabled:
            queued = self._queued(task, route=route, priority=0 if background else 10)
            if on_left is None:
                return await queued
            # A caller that may leave: the queue's wait in a task of its own, which goes on.
            return await _kept(asyncio.get_running_loop().create_task(queued), on_left)
        return await self._outcome(task, driver.start(task, route=route), on_left)

    async def _queued(self, task: Task, *, route: bool, priority: int) -> ChatMessage:
        """Put the task in the shared queue and wait for its reply, from whichever worker ran
        it. A caller that gives up takes it back out, or cancels it where it runs."""
        queue = self._run.state.queue
        if queue is None:  # pragma: no cover - checked by the caller
            raise UserError("no work queue")
        self._tasks.pop(task.id)  # it runs where it is taken
        record = task.record
        request = {
            "route": route,
            "text": record.raw_input,
            "context": record.context,
            "session_id": record.session_id,
            "skill": None if route else record.skill,
            "params": record.params,
        }
        request_id = await queue.put(task.id, json.dumps(request, ensure_ascii=False), priority)
        try:
            text = await queue.result(request_id)
        except asyncio.CancelledError:
            if not await asyncio.shield(queue.withdraw(request_id)):
                self.abort(task.id)
            raise
        if text is None:  # its worker died; failover goes on with it, its reply to the history
            content = reply("running_elsewhere", task.input.language, task=task.id)
            return self._reply(content, task_id=task.id, error="running_elsewhere")
        return ChatMessage.model_validate_json(text)

    async def _run_queued(self, entry: QueuedTask) -> ChatMessage:
        """A task another worker (or this one) queued, run here as its caller asked."""
        request = json.loads(entry.request)
        context, session_id = dict(request.get("context") or {}), str(request["session_id"])
        route = bool(request.get("route", True))
        if route:
            task = self._run.new_task(request["text"], context, session_id, entry.task_id)
        else:
            params = dict(request.get("params") or {})
            task = self._run.direct_task(
                request["skill"], params, context, session_id, entry.task_id
            )
        return await self._outcome(task, self._run.start(task, route=route))

    async def _outcome(
        self, task: Task, turn: asyncio.Future[ChatMessage], on_left: OnLeft = None
    ) -> ChatMessage:
        recorded: list[ChatMessage] = []

        def record(message: ChatMessage) -> None:
            self.chatlog.add_reply(task.record.session_id, task.record.skill, message)
            recorded.append(message)

        # A run that ends records its reply before its ending's commit, in the same round; a
        # question asked mid-run, or a reply the ending's commit changed, is recorded here.
        task.reply_hook = record
        try:
            # A caller that may leave waits on a future of its own: cancelling it leaves the
            # turn (and the reply it will bring) be.
            message = await (turn if on_left is None else _uncancelled(turn))
        except asyncio.CancelledError:
            if on_left is None:  # the caller gave up (a host cancelled, Ctrl-C): stop too
                if task.reply_hook is record:
                    task.reply_hook = None
                self.abort(task.id)
                raise
            # It left: the task goes on (its hook still records its reply in the ending's
            # round), and the rest of this turn in a task of its own, which hands the reply on.
            later = self._recorded(task, turn, record, recorded)
            handed = asyncio.get_running_loop().create_task(self._handed(task, later, on_left))
            _LEFT.add(handed)
            handed.add_done_callback(_LEFT.discard)
            raise
        if task.reply_hook is record:
            task.reply_hook = None
        if on_left is None:  # (``_recorded`` written out: no coroutine of its own)
            if self._record_reply(task, message, record, recorded):
                await self.chatlog.written()
            return message
        try:
            return await self._recorded(task, message, record, recorded)
        except asyncio.CancelledError:  # left while the history is written: it is queued
            on_left(message)
            raise

    async def _handed(
        self, task: Task, later: Coroutine[Any, Any, ChatMessage], on_left: OnLeft
    ) -> None:
        """The rest of a turn whose caller left: its reply, once recorded, to ``on_left``."""
        message: ChatMessage | None = None
        try:
            message = await later
        except Exception as exc:  # as a caller would have heard it: logged, no reply
            self.logger.error("agent.error", task_id=task.id, where="reply",
                              error=self.chatlog.error_text(exc))  # fmt: skip
        finally:
            if on_left is not None:
                on_left(message)

    async def _recorded(
        self,
        task: Task,
        reply: ChatMessage | asyncio.Future[ChatMessage],
        record: Callable[[ChatMessage], None],
        recorded: list[ChatMessage],
    ) -> ChatMessage:
        """The turn's reply (``reply``, or what the turn brings) once the history holds it."""
        if isinstance(reply, asyncio.Future):
            try:
                message = await reply
            finally:
                if task.reply_hook is record:
                    task.reply_hook = None
        else:
            message = reply
        if self._record_reply(task, message, record, recorded):
            await self.chatlog.written()  # the history holds the turn before its caller hears it
        return message

    def _record_reply(
        self,
        task: Task,
        message: ChatMessage,
        record: Callable[[ChatMessage], None],
        recorded: list[ChatMessage],
    ) -> bool:
        """Record the turn's reply unless the run's hook did; whether the history must still
        be waited for before the caller hears it."""
        chatlog = self.chatlog
        if not recorded or recorded[-1] is not message:
            record(message)
        elif task.durable_reply is message and chatlog.in_rounds:
            # Recorded by the hook before the ending's commit round, which is on disk: the
            # history holds the turn already. (Waiting again took one more round under load:
            # others' writes are always queued by then.)
            return False
        return not chatlog.at_once  # (in memory: written as recorded, nothing to wait for)

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

    async def publish(self, path: str | None = None, *, session_id: str | None = None) -> Published:
        """Publish a draft (``path``, else the session's focus): its draft mark taken off the
        blog's way (``skillrt.blog.publish``), the index refreshed so answers may use it.
        ``Published.scheduled`` / ``expired``: the generator will not show it yet, or any more."""
        await self.initialize()
        session = session_id or self.session_id
        focus = self.conversation(session).focus
        target = path or focus
        if not target:
            raise UserError("which post should be published? Give its path")
        # (the day where the site reads its dates, as the chat's publish takes it: the
        # machine's own date gave a Jekyll post a name a day off the site's)
        kind = self.config.layout.kind
        day = await asyncio.to_thread(site_today, self.config.root, kind)
        done = await asyncio.to_thread(
            publish_kept,
            self._run.files,
            target,
            posts_dir=self.config.posts_dir,
            day=day,
            versions=self._run.versions,
            key=f"publish-{new_id()}",
            kind=kind,
        )
        memory = self.memory
        if memory is not None:
            await asyncio.to_thread(memory.refresh)
        if done.moved_from is not None and done.moved_from == focus:
            self.chatlog.focus_on(done.path, session, self._run.files)
        return done

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
        """Cancel a task (the foreground one when None): its signal fires, its work stops now.
        A task another worker runs is cancelled there (the request is recorded at once; that
        worker acts within a second)."""
        return self._control_now(task_id, "abort")

    def pause(self, task_id: str | None = None) -> bool:
        """Ask a running task to pause at its next step boundary (on whichever worker runs it)."""
        return self._control_now(task_id, "pause")

    async def abort_task(self, task_id: str) -> bool:
        """``abort``, waiting for the answer of the worker that runs the task."""
        return await self._control(task_id, "abort")

    async def pause_task(self, task_id: str) -> bool:
        """``pause``, waiting for the answer of the worker that runs the task."""
        return await self._control(task_id, "pause")

    def _act_here(self, task: Task | None, verb: str) -> bool:
        if task is None:
            return False
        if verb != "abort":
            return task.ask_to_pause()
        inventory = self._run.inventory
        return inventory.abort(task) if task.running else inventory.abort_copy(task)

    def _control_now(self, task_id: str | None, verb: str) -> bool:
        task_id = task_id or self.current_task_id or ""
        task = self._tasks.get(task_id)
        if (task is not None and task.running) or self._remote is None or not task_id:
            return self._act_here(task, verb)
        # Not running here: maybe on another worker. Never act on a copy of a task that
        # another worker runs (its checkpoint is that worker's).
        try:
            if self._remote.ask_soon(task_id, verb):
                return True
        except StoreUnavailable as exc:
            self.logger.error("agent.error", task_id=task_id, where=verb, error=str(exc))
            return False
        return self._act_here(task, verb)

    async def _control(self, task_id: str, verb: str) -> bool:
        await self.initialize()
        task = self._tasks.get(task_id)
        if task is not None and task.running and task.state is State.PAUSED:
            await self._run.inventory.settled(task)  # paused: its end a commit away
        if task is not None and task.running:
            return self._act_here(task, verb)
        if self._remote is not None:
            answer = await self._remote.ask(task_id, verb)
            if answer is not None:
                return bool(answer.get("ok"))
            queue = self._run.state.queue
            if task is None and verb == "abort" and queue is not None:  # maybe in the queue
                cancelled = ChatMessage(content=reply("cancelled", "en"), task_id=task_id,
                                        state=State.CANCELLED.value,
                                        data={"outcome": Outcome.CANCELLED})  # fmt: skip
                return await queue.cancel_waiting(task_id, cancelled.model_dump_json())
        if task is not None and verb == "abort":
            # A copy that runs nowhere: as the store holds it now (another process may have
            # resumed and ended it, or paused it further on).
            return await self._run.inventory.abort_stored(task)
        return self._act_here(task, verb)

    def get_resumable_tasks(self) -> list[TaskSummary]:
        """Tasks to resume: paused, restored from a checkpoint, or stopped by an outage."""
        if self._driver is None:
            return self._left_resumable()
        return self._driver.inventory.resumable_summaries()

    def list_tasks(self) -> list[TaskSummary]:
        """Every task this runtime holds (running, waiting for an answer, resumable) and, with a
        shared store, those running on other workers, in their true state. Blocking: from the
        event loop, ``await list_tasks_async()``."""
        if self._driver is None:
            return self._left_resumable()
        records = self._driver.inventory.held()
        return [self.chatlog.summary(record) for record in records]

    def _left_resumable(self) -> list[TaskSummary]:
        """Once closed (or before opening): the resumable tasks held, and those ``close()``
        stopped, as ``get_task`` shows each (PAUSED). The listings said [] after ``close()``
        while ``get_task`` showed every one of them PAUSED."""
        records = {record.id: record for record in self._tasks.dormant_records()}
        records.update((task.id, task.record) for task in self._tasks.values() if resting(task))
        records.update(self._closed_copies)
        return [self.chatlog.summary(record) for record in records.values()]

    async def list_tasks_async(self) -> list[TaskSummary]:
        """``list_tasks`` with the store read in a thread (bounded by ``store_timeout_s``)."""
        await self.initialize()
        inventory = self._run.inventory
        records = inventory.held(await inventory.snapshot_async())
        return [self.chatlog.summary(record) for record in records]

    def get_task(self, task_id: str) -> TaskSummary | None:
        """One task (running, waiting or resumable), or None. With the shared store, a task
        another worker runs, paused or stopped is read from the store, in its true state.
        Blocking for such a task: from the event loop, ``await get_task_async(id)``."""
        task = self._tasks.live(task_id)
        if task is not None and (
            task.running or (self._remote is None and task.runner is not None)
        ):
            return self.chatlog.summary(task.record)
        if self._driver is None:  # (closed, or not open yet: no store to ask)
            task = self._tasks.get(task_id)
            # A task close() stopped: PAUSED, resumable once reopened. Its copy is dropped
            # (``Endings._interrupted``), and this said None: "no such task".
            record = task.record if task is not None else self._closed_copies.get(task_id)
            return None if record is None else self.chatlog.summary(record)
        inventory = self._driver.inventory
        record = inventory.from_store(task_id) or inventory.local_copy(task_id)
        return None if record is None else self.chatlog.summary(record)

    async def get_task_async(self, task_id: str) -> TaskSummary | None:
        """``get_task`` with the store read in a thread (bounded by ``store_timeout_s``)."""
        await self.initialize()
        task = self._tasks.live(task_id)
        if task is not None and task.running and task.end_reason is End.CANCELLED:
            # Aborted while its pause went to the store: cancelled once that run ends (a
            # commit away). It was shown PAUSED until then, after a reply saying CANCELLED.
            await self._run.inventory.settled(task)
            task = self._tasks.live(task_id)
        if task is not None and (
            task.running or (self._remote is None and task.runner is not None)
        ):
            return self.chatlog.summary(task.record)
        inventory = self._run.inventory
        snap = await inventory.snapshot_async(task_id)  # (and whether another process runs it)
        record = None
        if self._remote is not None:
            record = inventory.from_store(task_id, snap)
        else:  # one another process on this state folder cut off after this one started
            await inventory.adopt(task_id, snap)
        if record is None:
            record = inventory.local_copy(task_id, snap.busy)
        return None if record is None else self.chatlog.summary(record)

    async def runs_elsewhere(self, task_id: str) -> bool:
        """Whether another process on this state folder runs ``task_id`` right now (it holds
        the task's run lock). ``get_task`` says None of such a task (its copy here is stale),
        and ``serve`` answered GET, pause, abort and resume of it 404 "no task is running or
        resumable" while it ran: a client took the task for lost. Always False with a shared
        store, whose ``get_task`` shows such a task as it runs."""
        await self.initialize()
        if self._remote is not None:
            return False
        snap = await self._run.inventory.snapshot_async(task_id)
        return task_id in snap.busy

    async def follow_task(self, task_id: str) -> asyncio.Future[ChatMessage | None] | None:
        """Have the events of a task another worker runs emitted here too (its progress and
        streamed text, for an SSE client on this worker); the future is its reply. None when
        no other worker runs it."""
        await self.initialize()
        if self._remote is None or self._tasks.live(task_id) is not None:
            return None
        return await self._remote.follow(task_id)

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
        limits = _budget_given(budget)
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

    async def undo(self, path: str | None = None, *, language: str = "en") -> ChatMessage:
        """Restore the version kept before the last write (of ``path``, or of any post) byte
        for byte: an edit is undone, a created post goes to the trash, a deleted one comes back.
        Refused, changing nothing, when the post changed since, when another task holds its
        lock (``"busy"``: try again once it ends) or the disk refused (``data["error"]``)."""
        await self.initialize()
        services = self._run
        owner = f"undo-{new_id()}"
        files = services.files.for_task(owner)  # the post's lock, as a task would take it
        try:
            done = await asyncio.to_thread(services.versions.undo, files, path)
        except NothingToUndo as exc:
            where = f" ({exc.path})" if exc.path else ""
            return self._undo_refused(reply("nothing_to_undo", language, path=where))
        except FileChanged as exc:
            return self._undo_refused(reply("undo_changed", language, path=exc.path), "changed")
        except UserError as exc:
            return self._undo_refused(reply("undo_refused", language, error=exc), "refused")
        except LockConflict as exc:  # was raised raw: a traceback from `skillrt undo`
            busy = reply("undo_busy", language, path=exc.path, task=exc.holder)
            return self._undo_refused(busy, "busy")
        except OSError as exc:  # a full disk, a name too long: the reason, not a traceback
            error = exc.strerror or str(exc)
            return self._undo_refused(reply("undo_refused", language, error=error), "refused")
        finally:
            await asyncio.to_thread(services.state.locks.release_task_locks, owner)
        await asyncio.to_thread(services.memory.refresh)
        if done.moved_to is not None:  # a publish or unpublish that moved the post, undone
            action = "publish" if in_drafts_folder(done.path) else "unpublish"
            content = reply(f"undone_{action}", language, path=done.path, moved=done.moved_to)
            data = {"path": done.path, "action": action, "undone_task": done.task_id}
            return ChatMessage(content=content, state="COMPLETED", data={**data, "outcome": "done"})
        content = reply(f"undone_{done.action}", language, path=done.path)
        data = {"path": done.path, "action": done.action, "undone_task": done.task_id}
        return ChatMessage(content=content, state="COMPLETED", data={**data, "outcome": "done"})

    def _undo_refused(self, content: str, error: str = "nothing_to_undo") -> ChatMessage:
        return ChatMessage(
            content=content, state="ERROR", data={"outcome": Outcome.REFUSED, "error": error}
        )

    # --- shutdown ------------------------------------------------------------------------------

    async def close(self) -> None:
        """Stop running tasks and close. Stopped tasks stay resumable, from their last completed
        step, as after a crash (closing is not the user cancelling them)."""
        if self._failover is not None:
            await self._failover.stop()
            self._failover = None
        taker, self._taker = self._taker, None
        if taker is not None:
            await taker.stop()  # no more work taken
        if self._driver is not None:
            stopped = await self._driver.inventory.shutdown()
            self._closed_copies = {record.id: record for record in stopped}
        if taker is not None:
            await taker.drain()  # the replies of the tasks it took, to their callers
        if self._remote is not None:
            await self._remote.stop()
            self._remote = None
        if self._toolbox is not None:  # after the tasks: a stopping task may still call a tool
            await self._toolbox.aclose()
            self._toolbox = None
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


# Inputs that reach each of routing's variants (ASCII, other Latin, CJK, both; with a file open,
# with a selection), what ``warm_up`` routes to build them; ``_route_samples`` adds a browsing
# session's follow-up.
_SAMPLES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("write an article about warming up", {}),
    ("résume l'article posts/a.md", {}),
    ("总结一下这篇文章", {}),
    ("总结一下 posts/a.md", {}),
    ("fix the grammar here", {"current_file": "posts/a.md", "has_selection": True}),
)


async def _route_samples(
    router: IntentRouter, samples: Sequence[tuple[str, dict[str, Any]]], browsing: bool
) -> None:
    """``samples``; with ``browsing``, a browsing session's follow-up too, after whichever
    registered skill browses."""
    sessions = [
        {"last_skill": name}
        for name in router.registry
        if browsing and router.in_browsing_session({"last_skill": name})
    ][:1]
    for text, context in (*samples, *(("click the first link", c) for c in sessions)):
        await router.parse(text, context, ask_model=False)
        holds_back(text)  # what the planner asks of a request that would write
