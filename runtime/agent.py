"""``AgentRuntime``: chat input in, durable, cancellable, resumable tasks out.

The runtime is a plain class whose collaborators (config, LLM, checkpoint store, clock,
skills) are injected; ``get_instance()`` is a convenience singleton over it.

Flow of ``process_input``: clean the input -> a task with its
own state machine -> UNDERSTANDING (route) -> PLANNING (find the skill, validate params) ->
EXECUTING (run the skill in its own asyncio task, with an abort signal, progress, a journal) ->
COMPLETED / ERROR / CANCELLED / PAUSED / WAITING_INPUT. Locks are released, cost and history
recorded on every exit path. Every move is in the machine's table; an invalid one raises.
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import structlog
from pydantic import ValidationError

from skillrt.checkpointing import checkpoint_text
from skillrt.clarify import GUARDED_INTENTS, RouteQuestion, choose_question, confirm_question
from skillrt.committer import Committer
from skillrt.context import SkillContext, TaskInput, detect_language
from skillrt.conversation import Conversation, Sessions, focus_from_result
from skillrt.cost import CostTracker
from skillrt.events import EventBus, EventCallback
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
    UnknownSkill,
    UserError,
)
from skillrt.llm.base import LLM, set_activity_listener
from skillrt.llm.taskllm import TaskLLM
from skillrt.logs import Redactor, make_logger, open_log_file
from skillrt.machine import TERMINAL_STATES, State
from skillrt.messages import ChatMessage, TaskSummary, new_id
from skillrt.replies import reply
from skillrt.router import CHAT, UNKNOWN, IntentRouter, ParsedIntent
from skillrt.settings import BudgetConfig, RuntimeConfig, load_config, make_state_dir
from skillrt.skill import Skill, SkillResult
from skillrt.storage.checkpoints import (
    CheckpointStore,
    LazyLoad,
    LazyRecord,
    LoadResult,
    MemoryCheckpointStore,
    TaskStore,
)
from skillrt.storage.faults import classify, unavailable
from skillrt.storage.files import FileStore
from skillrt.storage.history import History
from skillrt.storage.locks import FileLockManager, blog_lock_dir
from skillrt.storage.memory import BlogMemory
from skillrt.storage.records import TaskRecord
from skillrt.storage.runlocks import RunLocks
from skillrt.storage.tempfiles import remove_stale_temps

if TYPE_CHECKING:
    from skillrt.shared import Failover, SharedStore
    from skillrt.storage.pg import PgHistory, PgRunLocks
from skillrt.task import PauseRequested, Task
from skillrt.taskfiles import TaskFiles
from skillrt.tasktable import TaskTable

__all__ = ["AgentRuntime"]

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
ACTIVE_STATES = frozenset(
    {State.UNDERSTANDING, State.PLANNING, State.EXECUTING, State.WAITING_INPUT}
)
RESUMABLE_ERRORS = frozenset(
    {"WATCHDOG_TIMEOUT", "PROVIDER_UNAVAILABLE", "CRASH", "BUDGET_EXCEEDED", "AUTH_FAILED"}
)
"""Errors that keep the journal: the task can go on from its last completed step (after a
raised budget or a fixed key for the last two). Only ``abandon_task`` deletes it."""
_CONTEXT_LIMIT = 20_000  # characters of selected text kept with a task


def _as_dict(what: str, value: object) -> dict[str, Any]:
    """A copy of ``value`` as a dict (None is empty); UserError for anything else."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise UserError(f"{what} must be a dict of names to values, not {type(value).__name__}")
    return {str(k): v for k, v in value.items()}


def params_problem(skill: str, exc: ValidationError) -> str:
    """One line naming each bad field: ``Summarize: path: Field required``."""
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ())) or 'params'}: {e['msg']}"
        for e in exc.errors()
    )
    return f"Bad parameters for {skill}: {problems}"


def _load_entry_point_skills() -> list[Skill[Any]]:
    """Skills advertised under the ``skillrt.skills`` entry point group (the builtins)."""
    found: list[Skill[Any]] = []
    for ep in entry_points(group="skillrt.skills"):
        provider = ep.load()
        found.extend(provider() if callable(provider) else provider)
    return found


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
        self._llm = llm
        self._store = store
        self._owns_store = store is None
        self._owns_llm = llm is None
        self.router = IntentRouter(
            llm,
            cache_size=self.config.intent_cache_size,
            cache_ttl_s=self.config.intent_cache_ttl_s,
            logger=self.logger,
        )
        self.skills: dict[str, Skill[Any]] = {}
        for s in _load_entry_point_skills() if skills is None else skills:
            self.register_skill(s)
        # Live tasks, and restored ones built only when asked for (see skillrt.tasktable).
        self._tasks = TaskTable(self._parse_restored, self._build_restored)
        # Each session's recent turns and focus (read back from the history once it is open).
        self.sessions = Sessions(None, max_tokens=self.config.conversation.max_tokens)
        self._initialized = False
        self._init_lock: asyncio.Lock | None = None
        self._sync_loop: asyncio.AbstractEventLoop | None = None
        self.history: History | PgHistory | None = None
        self.locks: FileLockManager | None = None
        self.files: FileStore | None = None
        self.memory: BlogMemory | None = None
        self.runlocks: RunLocks | PgRunLocks | None = None
        self.committer: Committer | None = None
        self._shared: SharedStore | None = None  # the PostgreSQL store, when state_url is set
        self._failover: Failover | None = None
        self._adopted: set[asyncio.Task[Any]] = set()

    # --- singleton -------------------------------------------------------------------------

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
        """Forget the shared runtime (its tasks are aborted and its stores closed)."""
        instance, cls._instance = cls._instance, None
        if instance is not None:
            instance._close_sync()

    # --- set-up ----------------------------------------------------------------------------

    @property
    def llm(self) -> LLM:
        if self._llm is None:
            raise UserError("the runtime has no model yet: await runtime.initialize() first")
        return self._llm

    @property
    def store(self) -> TaskStore:
        if self._store is None:
            raise UserError("the runtime is not initialised: await runtime.initialize() first")
        return self._store

    def register_skill(self, skill: Skill[Any]) -> None:
        self.skills[skill.name] = skill
        self.router.register_skill(skill)

    @property
    def router_trust(self) -> str:
        """``llm.router_trust``, or when unset ``low`` for the embedded (local) model and
        ``high`` for any other: under ``low`` a route only the model chose asks the user before
        it reaches the web, deletes or writes."""
        configured = self.config.llm.router_trust
        if configured is not None:
            return configured
        return "low" if getattr(self._llm, "provider", None) == "local" else "high"

    def on(self, event_type: str, callback: EventCallback) -> Callable[[], None]:
        """Subscribe to an event type (``"*"`` for all); returns the unsubscribe function."""
        return self.events.on(event_type, callback)

    async def initialize(self) -> None:
        """Open the model, the blog memory and the stores, and load resumable tasks. Idempotent."""
        if self._initialized:
            return
        if self._init_lock is None:
            self._init_lock = asyncio.Lock()
        async with self._init_lock:
            if self._initialized:  # another caller finished while we waited
                return  # type: ignore[unreachable]
            try:
                loaded = await asyncio.to_thread(self._open)
            except BaseException as exc:
                self._close_stores()  # what opened before the fault
                if isinstance(exc, sqlite3.Error | OSError):
                    path = self.config.state_path
                    raise unavailable(
                        "state", path, classify(exc, path / ".gitignore"), exc
                    ) from exc
                raise
            self._restore(loaded)
            self._initialized = True
            if self._shared is not None and self.config.failover:
                from skillrt.shared import Failover

                self._failover = Failover(
                    self._shared.runlocks, self._adopt, interval_s=self.config.lease_s / 3
                )
                self._failover.start()
            self.events.emit(
                "runtime:initialized",
                None,
                session_id=self.session_id,
                model=self._llm.model if self._llm else None,
                skills=sorted(self.skills),
            )

    def _open(self) -> LoadResult | LazyLoad:
        """Blocking part of ``initialize`` (run in a thread): open everything, read checkpoints."""
        cfg = self.config
        state = self._ensure_state()
        if self._llm is None:
            from skillrt.llm.select import create_llm

            self._llm, self.llm_reason = create_llm(cfg)
            self.router.llm = self._llm
        elif self.router.llm is None:
            self.router.llm = self._llm
        if cfg.state_url is not None and cfg.checkpoints and self._store is None:
            from skillrt.shared import open_shared

            self._shared = open_shared(cfg)
            self._store = self._shared.store
        if self._store is None:
            self._store = (
                CheckpointStore(state / "checkpoints")
                if cfg.checkpoints
                else MemoryCheckpointStore()
            )
        self.committer = Committer(
            self._store,
            threaded=not isinstance(self._store, MemoryCheckpointStore),
            logger=self.logger,
            on_reset=self._checkpoint_all,
        )
        shared = self._shared
        self.history = (
            shared.history
            if shared is not None
            else History(state / "history" if cfg.checkpoints else None, limit=cfg.history_limit)
        )
        # A post's OS lock lives with the blog, not with this runtime's state: two runtimes
        # whose state folders differ must still exclude each other on one post.
        self.locks = (
            shared.locks
            if shared is not None
            else FileLockManager(blog_lock_dir(cfg.root), expiry_s=cfg.lock_expiry_s)
        )
        self.sessions.reader = self._history_messages
        self.files = FileStore(
            cfg.root,
            locks=self.locks,
            trash_dir=state / "trash",
            max_read_bytes=cfg.max_post_bytes,
        )
        # Temp files of writers killed mid-write (a live writer's is seconds old).
        stale = remove_stale_temps(self.files.root)
        if stale:
            self.logger.info("agent.temp_files.removed", count=len(stale), paths=stale[:20])
        self.memory = BlogMemory(cfg.root, state, cfg.posts_dir, max_post_bytes=cfg.max_post_bytes)
        # Only durable tasks can be resumed by another process, so only they need run locks.
        if shared is not None:
            self.runlocks = shared.runlocks
        else:
            self.runlocks = RunLocks(state / "locks" / "running") if cfg.checkpoints else None
        window, now = cfg.checkpoint_max_age_h * 3600, self.clock()
        store = self.store
        # Summaries only (no record parsed) where the store can: tasks are built on resume.
        loaded: LoadResult | LazyLoad = (
            store.load_lazy(max_age_s=window, now=now)
            if isinstance(store, CheckpointStore)
            else store.load_recent(max_age_s=window, now=now)
        )
        if isinstance(self.history, History):  # a history file moved aside is reported too
            loaded.quarantined.extend(self.history.quarantined)
            self.history.quarantined.clear()
        return loaded

    def _ensure_state(self) -> Path:
        """The state folder, made (again, if it was deleted) with its ``.gitignore``;
        ``StoreUnavailable`` when it cannot be."""
        path = self.config.state_path
        if path.exists() and not path.is_dir():
            raise StoreUnavailable(
                f"skillrt cannot save its state: {path} is a file, not a folder. Move it away,"
                " or point state_dir (SKILLRT_STATE_DIR) at a folder.",
                reason="unusable",
            )
        try:
            return make_state_dir(path)
        except OSError as exc:
            raise unavailable("state", path, classify(exc, path / ".gitignore"), exc) from exc

    def _restore(self, loaded: LoadResult | LazyLoad) -> None:
        """Unfinished tasks from the checkpoints come back PAUSED, ready to resume. They stay
        dormant in the task table (a summary and the record's JSON) until asked for."""
        ids: list[str] = []
        for entry in loaded.records:
            if not self._is_resumable(entry) or entry.id in self._tasks:
                continue
            if isinstance(entry, TaskRecord):
                self._as_restored(entry)
            self._tasks.add_dormant(entry)
            ids.append(entry.id)
        if loaded.quarantined:
            self.logger.error("agent.error", where="checkpoints", quarantined=loaded.quarantined)
        if self.events.listening("runtime:checkpoints_loaded"):
            records = (self._tasks.record(task_id) for task_id in ids)
            self.events.emit(
                "runtime:checkpoints_loaded",
                None,
                tasks=[self._summary(r).model_dump() for r in records if r is not None],
                quarantined=list(loaded.quarantined),
            )

    @staticmethod
    def _as_restored(record: TaskRecord) -> TaskRecord:
        if record.state not in ("PAUSED", "ERROR"):
            record.error_reason = record.error_reason or "CRASH"
        record.state = State.PAUSED.value  # loaded as PAUSED (until resumed or abandoned)
        return record

    def _parse_restored(self, entry: LazyRecord) -> TaskRecord | None:
        """A dormant task's record, read from its JSON now (None: it did not validate)."""
        store = self._store
        if not isinstance(store, CheckpointStore):  # pragma: no cover - only it loads lazily
            return None
        record = store.parse_lazy(entry)
        return None if record is None else self._as_restored(record)

    def _build_restored(self, record: TaskRecord) -> Task:
        task = self._make_task(record, initial=State.PAUSED)
        task.outcome.cancel()  # nobody awaits a restored task until it is resumed
        return task

    @staticmethod
    def _is_resumable(record: TaskRecord | LazyRecord) -> bool:
        if record.state == State.ERROR.value:
            return record.error_reason in RESUMABLE_ERRORS
        return record.state not in ("IDLE", "COMPLETED", "CANCELLED")

    # --- tasks -----------------------------------------------------------------------------

    @property
    def state(self) -> State:
        """The foreground task's state: the newest task still working or waiting, else IDLE."""
        for task in reversed(self._tasks.values()):
            if task.state in ACTIVE_STATES:
                return task.state
        return State.IDLE

    @property
    def current_task_id(self) -> str | None:
        for task in reversed(self._tasks.values()):
            if task.state in ACTIVE_STATES:
                return task.id
        return None

    def task_state(self, task_id: str) -> State | None:
        task = self._tasks.get(task_id)
        return task.state if task else None

    def _make_task(self, record: TaskRecord, *, initial: State) -> Task:
        context = record.context
        text = record.raw_input
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
            watchdog_s=self.config.watchdog_timeout_s,
            initial=initial,
            on_change=self._on_state_change,
            on_timeout=self._on_watchdog,
            save=self._save,
            durable=self._durable,
            emit=self.events.bind(record.id).emit,
            max_task_s=self.config.max_task_s,
        )

    def _new_task(self, text: str, context: dict[str, Any], session_id: str) -> Task:
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
        task = self._make_task(record, initial=State.IDLE)
        self._tasks[task.id] = task
        return task

    def _save(self, task: Task) -> None:
        """Queue the task's checkpoint for the next group commit (see ``checkpoint_text``)."""
        record = task.record
        record.updated_at = self.clock()
        record.state = task.state.value
        copy = checkpoint_text(record, self.redactor)
        if copy is None:  # its request holds a secret: kept in memory only
            self._committer().delete(record.id)
        else:
            self._committer().put(copy)

    def _checkpoint_all(self) -> None:
        """The store started a fresh database (the old one was unreadable): every task it
        should hold is written again from memory, so nothing the runtime holds is lost."""
        for task in self._tasks.everything():
            live = task.state is not State.IDLE and task.state not in TERMINAL_STATES
            if live or self._kept_for_resume(task):
                self._save(task)

    def _committer(self) -> Committer:
        if self.committer is None:
            raise UserError("the runtime is not initialised: await runtime.initialize() first")
        return self.committer

    async def _durable(self) -> None:
        """Wait until every queued checkpoint is on disk."""
        await self._committer().durable()

    def _deliver(self, task: Task, message: ChatMessage) -> None:
        """Hand the reply over; from inside the task's runner, only once its end is durable
        (the runner delivers ``task.final`` after waiting for the commit)."""
        if task.runner is not None and task.runner is asyncio.current_task():
            task.final = message
        else:
            task.deliver(message)

    def _on_state_change(self, task: Task, source: State, dest: State) -> None:
        task.record.state = dest.value
        self.logger.debug("agent.state.changed", task_id=task.id, source=source, dest=dest)
        if self.events.listening("state:changed"):
            self.events.emit("state:changed", task.id, **{"from": source.value, "to": dest.value})
        # Terminal states are saved by _finish with the result. PLANNING is not saved: it is
        # always left before the next await (to EXECUTING, which is saved, or to an ending), so
        # its checkpoint would be one more fsync that the next one overwrites at once.
        if dest not in TERMINAL_STATES and dest is not State.PLANNING:
            self._save(task)

    def _on_watchdog(self, task: Task, state: State, timeout_s: float) -> None:
        """The watchdog fired: ERROR now, cancel the running work, release its locks."""
        task.end_reason = "watchdog"
        task.record.error_reason = "WATCHDOG_TIMEOUT"
        if task.machine.fired == "stall":
            what = f"{state.value} made no progress for {timeout_s:g} s"
        elif task.machine.fired == "cap":
            what = f"{state.value} ran longer than max_task_s ({timeout_s:g} s)"
        else:
            what = f"{state.value} lasted more than {timeout_s:g} s"
        task.record.last_error = f"WATCHDOG_TIMEOUT: {what}"
        task.to(State.ERROR)
        task.controller.abort("watchdog")
        if task.runner is not None and not task.runner.done():
            task.runner.cancel()
        if self.locks is not None:
            self.locks.release_task_locks(task.id)

    # --- input -----------------------------------------------------------------------------

    def _clean(self, text: object) -> str:
        if not isinstance(text, str):
            raise UserError(f"input must be text (str), not {type(text).__name__}")
        text = text.encode("utf-8", "replace").decode("utf-8")
        return _CONTROL.sub("", text).strip()

    def _storage_reply(self, exc: BaseException, *, task_id: str | None = None) -> ChatMessage:
        """A fault of the state folder, as a reply: ERROR, one paragraph, nothing raised."""
        self.logger.error("agent.error", where="storage", error=self._blog_relative(str(exc)))
        return ChatMessage(
            content=self._blog_relative(str(exc)),
            task_id=task_id,
            state=State.ERROR.value,
            data={"outcome": "storage", "error": "storage"},
        )

    def _reply(self, content: str, *, task_id: str | None = None, **data: Any) -> ChatMessage:
        return ChatMessage(content=content, task_id=task_id, state=self.state.value, data=data)

    async def process_input(
        self,
        text: str,
        context: dict[str, Any] | None = None,
        *,
        on_task: Callable[[str], None] | None = None,
    ) -> ChatMessage:
        """Handle one chat input: answer a waiting question, or route it and run it as a task.

        ``on_task(task_id)`` is called with the task the input starts or answers, before any of
        its events (a server streams them while the call runs)."""
        await self.initialize()
        try:
            context = _as_dict("context", context)
            raw, text = text, self._clean(text)
        except UserError as exc:
            return self._reply(str(exc), error="bad_input")
        session_id = str(context.pop("session_id", None) or self.session_id)
        lang = detect_language(text)
        if raw.strip() and self.router.screen(raw) == "noise":
            return self._reply(reply("noise_input", lang), error="noise_input")
        if not text:
            return self._reply(
                reply("empty_input", lang),
                error="empty_input",
            )
        limit = self.config.max_input_chars
        if len(text) > limit:
            return self._reply(
                reply("input_too_long", lang, chars=len(text), limit=limit),
                error="input_too_long",
            )
        self.logger.info("agent.input.received", input=self._shown(text, 100), chars=len(text))
        self._record_message(session_id, "user", text)
        waiting = self._waiting_task(session_id)
        # A task aborted a moment ago may still be WAITING_INPUT, its answer already cancelled:
        # the input then starts a new task.
        if waiting is not None and waiting.answer is not None and not waiting.answer.done():
            question = waiting.route_question
            if question is None or question.interpret(text) is not None:
                return await self._give_answer(waiting, text, on_task)
            outcome = waiting.next_outcome()
            waiting.answer.set_result(text)
            await asyncio.shield(outcome)  # not an answer to routing's question: it is
            # dropped, and the text is a new request
        screened = self.router.screen(text)
        if screened == "word" or (screened == "chat" and not self.router.handles(CHAT)):
            # One short word, or small talk with no chat skill: no task is started.
            content = reply("small_talk", lang)
            self._record_message(session_id, "assistant", content)
            return self._reply(content, outcome="chat", intent=CHAT)
        for key in ("selected_text",):
            if isinstance(context.get(key), str):
                context[key] = context[key][:_CONTEXT_LIMIT]
        self._apply_focus(context, session_id)
        task = self._new_task(text, context, session_id)
        if on_task is not None:
            on_task(task.id)
        self._start(task, route=True)
        return await self._await_outcome(task, task.outcome)

    async def _give_answer(
        self, task: Task, text: str, on_task: Callable[[str], None] | None
    ) -> ChatMessage:
        if task.answer is None:
            raise UserError(f"task {task.id} is not waiting for an answer")
        if on_task is not None:
            on_task(task.id)
        outcome = task.next_outcome()
        task.answer.set_result(text)
        return await self._await_outcome(task, outcome)

    async def answer_task(
        self, task_id: str, text: str, *, on_task: Callable[[str], None] | None = None
    ) -> ChatMessage | None:
        """Answer the question task ``task_id`` is waiting on; None if it is not waiting."""
        await self.initialize()
        task = self._tasks.get(task_id)
        if task is None or task.answer is None or task.answer.done():
            return None
        text = self._clean(text)
        if not text:
            raise UserError("the answer is empty")
        self._record_message(task.record.session_id, "user", text)
        return await self._give_answer(task, text, on_task)

    def _apply_focus(self, context: dict[str, Any], session_id: str) -> None:
        """An open file a blog tool passed becomes the session's focus; without one, the focus
        stands for it, so "make it shorter" acts on the post last worked on."""
        current = context.get("current_file")
        if isinstance(current, str) and current.strip():
            try:
                path = self._files().relative(current)
            except UserError:
                return
            if path != self.sessions.focus(session_id):
                self.sessions.set_focus(session_id, path)
                self._record_focus(session_id)
            return
        focus = self.sessions.focus(session_id)
        if focus is None:
            return
        if not self._files().exists(focus):  # deleted or moved outside skillrt
            self.sessions.set_focus(session_id, None)
            self._record_focus(session_id)
            return
        context["current_file"] = focus
        context["focus"] = focus

    def _files(self) -> FileStore:
        if self.files is None:
            raise UserError("the runtime is not initialised: await runtime.initialize() first")
        return self.files

    def conversation(self, session_id: str | None = None) -> Conversation:
        """A session's recent turns (bounded by ``conversation.max_tokens``) and its focus."""
        return self.sessions.conversation(session_id or self.session_id)

    async def set_focus(self, path: str | None, *, session_id: str | None = None) -> str | None:
        """Make ``path`` (a post of the blog) the session's focus, or clear it with None.

        Returns the path relative to the blog. Raises ``UserError`` for a path outside the
        blog or a file that does not exist.
        """
        await self.initialize()
        session = session_id or self.session_id
        rel: str | None = None
        if path is not None:
            rel = self._files().relative(path)
            if not self._files().exists(rel):
                raise UserError(f"{rel} does not exist")
        self.sessions.set_focus(session, rel)
        self._record_focus(session)
        return self.sessions.focus(session)

    def new_session(self, session_id: str | None = None) -> str:
        """Start afresh: a new (or named) session becomes the default one; returns its id."""
        self.session_id = session_id or new_id()
        self.logger = self.logger.bind(session_id=self.session_id)
        return self.session_id

    def _record_focus(self, session_id: str) -> None:
        if self.history is not None:
            self._to_history(
                self.history.add_message,
                session_id,
                {
                    "role": "system",
                    "content": "",
                    "focus": self.sessions.focus(session_id),
                    "at": self.clock(),
                },
            )

    def _waiting_task(self, session_id: str) -> Task | None:
        # Runs at every input over every live task (1,000 at once in the benchmark), so it
        # reads the machine's raw state string instead of building a State per task.
        waiting = State.WAITING_INPUT.value
        for task in reversed(self._tasks.values()):
            if task.machine.state == waiting and task.record.session_id == session_id:
                return task
        return None

    async def _await_outcome(self, task: Task, outcome: asyncio.Future[ChatMessage]) -> ChatMessage:
        try:
            message = await asyncio.shield(outcome)
        except asyncio.CancelledError:
            # The caller gave up (a host cancelled the coroutine, Ctrl-C): stop the task too.
            self.abort(task.id)
            raise
        session_id = task.record.session_id
        if message.state == State.COMPLETED.value:
            changed, focus = focus_from_result(task.record.skill, message.data)
            if changed:
                self.sessions.set_focus(session_id, focus)
        self._record_message(session_id, "assistant", message.content, task.id)
        return message

    async def run_skill(
        self,
        name: str,
        params: dict[str, Any],
        context: dict[str, Any] | None = None,
        *,
        on_task: Callable[[str], None] | None = None,
    ) -> ChatMessage:
        """Run a skill by name with explicit params, without routing (a blog tool's button)."""
        await self.initialize()
        skill = self.skills.get(name)
        if skill is None:
            raise UnknownSkill(name, list(self.skills))
        try:
            params = _as_dict("params", params)
            context = _as_dict("context", context)
        except UserError as exc:
            return self._reply(str(exc), error="bad_params")
        session_id = str(context.pop("session_id", None) or self.session_id)
        # The params' words stand for the request (its language decides the reply's).
        words = [v for k, v in params.items() if isinstance(v, str) and k not in ("path", "url")]
        text = self._clean(" ".join(words)[:2000]) or name
        task = self._new_task(text, context, session_id)
        task.record.intent = {"type": "DIRECT", "confidence": 1.0, "parameters": params}
        task.record.skill = name
        task.record.params = dict(params)
        if on_task is not None:
            on_task(task.id)
        self._start(task, route=False)
        return await self._await_outcome(task, task.outcome)

    def _start(self, task: Task, *, route: bool) -> bool:
        """Run the task in its own asyncio task, holding its run lock; False if another process
        holds it (the task is running there)."""
        try:
            if self.runlocks is not None and not self.runlocks.hold(task.id):
                return False
        except (SkillrtError, OSError) as exc:  # the state folder cannot be written
            self._tasks.pop(task.id, None)
            task.deliver(self._storage_reply(exc, task_id=task.id))
            return True
        task.runner = asyncio.create_task(self._drive(task, route=route))
        return True

    def process_input_sync(self, text: str, context: dict[str, Any] | None = None) -> ChatMessage:
        """``process_input`` for synchronous callers (not from inside a running event loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise UserError(
                "process_input_sync was called inside an event loop; await process_input"
            )
        if self._sync_loop is None:
            self._sync_loop = asyncio.new_event_loop()
        return self._sync_loop.run_until_complete(self.process_input(text, context))

    # --- the task driver -------------------------------------------------------------------

    async def _route(self, task: Task, llm: TaskLLM) -> tuple[Skill[Any], Any] | None:
        """UNDERSTANDING and PLANNING: the skill and its params, or None after replying."""
        task.to(State.UNDERSTANDING)
        task.controller.signal.raise_if_aborted()
        intent: ParsedIntent = await self.router.parse(
            task.input.text,
            self._route_context(task),
            signal=task.controller.signal,
            llm=llm,  # routing's model call counts towards the task's cost and budget
        )
        task.record.intent = intent.model_dump(mode="json")
        self.logger.info(
            "agent.intent.parsed",
            task_id=task.id,
            type=intent.type,
            confidence=intent.confidence,
            source=intent.source,
        )
        lang = task.input.language
        if intent.type == CHAT and not self.router.handles(CHAT):
            task.to(State.IDLE)
            self._finish(task, reply("small_talk", lang), kind="chat")
            return None
        question = self._route_question(task, intent)
        if question is None and intent.confidence < self.config.confidence_threshold:
            task.to(State.IDLE)  # nothing to offer (no skills): say what can be asked
            self._finish(task, self.router.rephrase_message(task.input.text), kind="rephrase")
            return None
        task.to(State.PLANNING)
        if question is not None:
            task.route_question = question
            try:
                answer = await task.wait_for_answer(question.text, then=None)
            finally:
                task.route_question = None
            picked = question.interpret(answer)
            if picked is None or picked == "no":
                task.to(State.IDLE)
                kind = "declined" if picked == "no" else "superseded"
                self._finish(task, reply("declined", lang), kind=kind)
                return None
            intent = ParsedIntent(
                type=picked.intent,
                confidence=1.0,
                parameters=picked.parameters,
                raw=intent.raw,
                source=intent.source,
                language=intent.language,
                model_confidence=intent.model_confidence,
            )
            task.record.intent = {**intent.model_dump(mode="json"), "chosen_by_user": True}
        skill = self.router.find_skill(intent)
        if skill is None:
            task.to(State.IDLE)
            self._finish(
                task,
                reply("no_skill", task.input.language, intent=intent.type),
                kind="no_skill",
            )
            return None
        try:
            params = skill.parse_params(intent.parameters)
        except ValidationError as exc:
            task.to(State.IDLE)
            missing = ", ".join(str(e["loc"][0]) for e in exc.errors() if e.get("loc"))
            self._finish(
                task,
                reply("bad_params", task.input.language, missing=missing),
                kind="bad_params",
            )
            return None
        task.record.skill = skill.name
        task.record.params = params.model_dump(mode="json")
        return skill, params

    def _route_question(self, task: Task, intent: ParsedIntent) -> RouteQuestion | None:
        """What to ask instead of running ``intent``: a yes/no question before a model-only
        route reaches the web, deletes or writes under low trust; numbered choices when the
        router is unsure. None: run it as it is (or nothing to offer)."""
        text, lang = task.input.text, task.input.language
        known = self.router.handles(intent.type)
        if (
            known
            and intent.source == "llm"
            and intent.type in GUARDED_INTENTS
            and self.router_trust == "low"
        ):
            params = self.router.params_for(intent.type, text, intent.parameters)
            return confirm_question(intent.type, params, text, lang)
        if intent.confidence >= self.config.confidence_threshold and known:
            return None
        suggested = intent.type if intent.type not in (UNKNOWN, CHAT) else None
        names = self.router.alternatives(text, suggested, self._route_context(task))
        if not names:
            return None
        options = []
        for name in names:
            given = intent.parameters if name == intent.type else None
            spec = self.router.table.specs.get(name)
            skill = self.router.find_skill(ParsedIntent(type=name, confidence=1.0))
            description = spec.description if spec else (skill.description if skill else name)
            options.append((name, self.router.params_for(name, text, given), description))
        return choose_question(options, text, lang)

    @staticmethod
    def _route_context(task: Task) -> dict[str, Any]:
        ctx: dict[str, Any] = {}
        if task.input.current_file:
            ctx["current_file"] = task.input.current_file
        if task.input.selected_text:
            ctx["has_selection"] = True
        focus = task.input.extra.get("focus")
        if isinstance(focus, str):
            ctx["focus"] = focus
        return ctx

    async def _drive(self, task: Task, *, route: bool) -> None:
        """Run one task to an outcome. Every exit path releases locks and records the end."""
        started = time.perf_counter()
        logger = self.logger.bind(task_id=task.id)
        llm = self._task_llm(task, logger)
        set_activity_listener(task.machine.touch)  # model bytes of this task push it back
        try:
            if route:
                routed = await self._route(task, llm)
                if routed is None:
                    return
                skill, params = routed
            else:
                if task.state is State.IDLE:
                    task.to(State.UNDERSTANDING)
                task.to(State.PLANNING)
                task.controller.signal.raise_if_aborted()
                found = self.skills.get(task.record.skill or "")
                if found is None:
                    raise UnknownSkill(task.record.skill or "", list(self.skills))
                try:
                    skill, params = found, found.parse_params(task.record.params)
                except ValidationError as exc:
                    task.to(State.IDLE)
                    self._finish(task, params_problem(found.name, exc), kind="bad_params")
                    return
            task.skill = skill
            task.machine.watchdog_s = skill.watchdog_s or self.config.watchdog_timeout_s
            task.to(State.EXECUTING)
            self.events.emit("task:started", task.id, skill=skill.name, intent=task.record.intent)
            self.logger.info("agent.skill.started", task_id=task.id, skill=skill.name)
            result = await skill.run(
                self._context(task, llm, logger.bind(skill=skill.name)), params
            )
            if not isinstance(result, SkillResult):
                raise TypeError(
                    f"skill {skill.name} returned {type(result).__name__}, not SkillResult"
                )
            self._complete(task, result, time.perf_counter() - started)
        except PauseRequested:
            task.to(State.PAUSED)
            self._finish(
                task,
                reply("paused", task.input.language, task=task.id),
                kind="paused",
            )
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            self._stopped(task)
        except TaskCancelled:
            self._stopped(task)
        except BudgetExceeded as exc:
            self._failed(task, exc, reason="budget", error_reason="BUDGET_EXCEEDED")
        except (ProviderUnavailable, RateLimited) as exc:
            self._failed(task, exc, reason="failed", error_reason="PROVIDER_UNAVAILABLE")
        except (AuthenticationError, PermissionDenied) as exc:  # a key to fix, then resume
            self._failed(task, exc, reason="failed", error_reason="AUTH_FAILED")
        except StoreUnavailable as exc:  # its checkpoint cannot be written: read-only, full
            self._failed(task, exc, reason="failed", error_reason="STORAGE", kind="storage")
        except InvalidTransition as exc:
            if task.end_reason == "watchdog":
                self._stopped(task)
            else:
                self._failed(task, exc, reason="failed", error_reason="INTERNAL")
        except Exception as exc:
            self._failed(task, exc, reason="failed", error_reason="SKILL_ERROR")
        finally:
            task.machine.stop()
            if self.locks is not None:
                self.locks.release_task_locks(task.id)
            if self.runlocks is not None:
                self.runlocks.release(task.id)
            try:
                await self._durable()  # the end is on disk before the caller hears of it
            except Exception as exc:  # the store failed: say so, but still reply
                self.logger.error("agent.error", task_id=task.id, error=f"checkpoint: {exc}")
                if task.final is not None and self._kept_for_resume(task):
                    task.final = self._not_saved(task, exc)
            if task.final is not None:
                task.deliver(task.final)
            if not task.outcome.done():  # a bug above must not leave the caller waiting forever
                self.logger.error(
                    "agent.error", task_id=task.id, error="task ended without a reply"
                )
                task.deliver(
                    self._reply(reply("ended_unexpectedly", task.input.language), task_id=task.id)
                )

    @staticmethod
    def _kept_for_resume(task: Task) -> bool:
        return (
            task.end_reason == "shutdown"
            or task.state is State.PAUSED
            or (task.state is State.ERROR and task.record.error_reason in RESUMABLE_ERRORS)
        )

    def _not_saved(self, task: Task, exc: Exception) -> ChatMessage:
        """The reply of a task that would be resumable had its checkpoint reached the disk:
        never "paused, resume it" when a restart would not find it."""
        error = self._blog_relative(str(exc))
        task.record.error_reason = "STORAGE"
        task.record.last_error = f"{type(exc).__name__}: {error}"
        if task.state is not State.ERROR:
            task.machine.force(State.ERROR)
        self._tasks.pop(task.id, None)
        self._add_history(task.record, State.ERROR.value, error)
        return ChatMessage(
            content=reply("not_saved", task.input.language, error=error),
            task_id=task.id,
            state=State.ERROR.value,
            tokens=task.record.tokens,
            cost=task.record.cost,
            data={"outcome": "storage", "error": "storage"},
        )

    def _task_llm(self, task: Task, logger: structlog.stdlib.BoundLogger) -> TaskLLM:
        """The model as this task sees it: its signal, its budget, its cost."""

        def sink(model: str, tokens: int, cost: float | None) -> tuple[int, float]:
            task.record.tokens += tokens
            task.record.cost += cost or 0.0
            self.costs.record(
                task_id=task.id,
                session_id=task.record.session_id,
                skill=task.record.skill,
                model=model,
                tokens=tokens,
                cost=cost,
            )
            return task.record.tokens, task.record.cost

        def looped() -> None:
            task.truncated_repetition = True

        return TaskLLM(
            self.llm,
            signal=task.controller.signal,
            budget=self._budget(task),
            sink=sink,
            emit=task.emit,
            logger=logger,
            used=(task.record.tokens, task.record.cost),
            on_repetition=looped,
        )

    def _budget(self, task: Task) -> BudgetConfig:
        """The task's budget: the config's, with the limits given at resume laid over it."""
        given = task.record.budget or {}
        return self.config.budget.model_copy(
            update={k: v for k, v in given.items() if v is not None}
        )

    def _context(
        self, task: Task, llm: TaskLLM, logger: structlog.stdlib.BoundLogger
    ) -> SkillContext:
        if self.files is None or self.locks is None or self.memory is None:
            raise UserError("the runtime is not initialised: await runtime.initialize() first")
        files = TaskFiles(self.files, task.id, logger)
        return SkillContext(
            task_id=task.id,
            session_id=task.record.session_id,
            signal=task.controller.signal,
            input=task.input,
            llm=llm,
            memory=self.memory,
            files=files,
            locks=self.locks,
            events=self.events.bind(task.id),
            logger=logger,
            config=self.config,
            host=task,
            conversation=self.sessions.conversation_later(task.record.session_id),
        )

    # --- endings ---------------------------------------------------------------------------

    def _complete(self, task: Task, result: SkillResult, duration_s: float) -> None:
        tokens = task.record.tokens or result.tokens
        cost = task.record.cost or result.cost
        task.record.result = result.model_dump(mode="json")
        if result.success:
            task.to(State.COMPLETED)
            self.events.emit("task:completed", task.id, result=task.record.result)
            self.logger.info(
                "agent.task.completed",
                task_id=task.id,
                duration_s=round(duration_s, 3),
                tokens=tokens,
                cost=cost,
            )
        else:
            task.record.last_error = result.message
            task.to(State.ERROR)
            task.end_reason = "failed"
            self.events.emit("task:aborted", task.id, reason="failed", message=result.message)
        data = dict(result.data)
        if result.next_steps:
            data["next_steps"] = result.next_steps
        content = result.message
        if task.truncated_repetition:  # the data says so, and a reply built on the text too
            data["truncated_repetition"] = True
            if result.success:
                content += reply("repetition", task.input.language)
        self._finish(task, content, kind="done", data=data, tokens=tokens, cost=cost)
        self.events.emit(
            "task:metrics",
            task.id,
            duration_s=round(duration_s, 4),
            tokens=tokens,
            cost=cost,
            steps=len(task.record.steps),
        )

    def _stopped(self, task: Task) -> None:
        """Cancelled by the user, stopped by the watchdog (already in ERROR) or by close()."""
        if task.end_reason == "shutdown":  # left as a crash would leave it: resumable
            task.record.error_reason = "INTERRUPTED"
            self._save(task)
            self._deliver(
                task,
                self._reply(
                    reply("interrupted", task.input.language),
                    task_id=task.id,
                    outcome="interrupted",
                ),
            )
            return
        if task.end_reason == "watchdog":
            self.events.emit(
                "task:aborted", task.id, reason="watchdog", message=task.record.last_error
            )
            self.logger.error("agent.error", task_id=task.id, error=task.record.last_error)
            self._finish(
                task,
                reply("watchdog", task.input.language, error=task.record.last_error, task=task.id),
                kind="watchdog",
            )
            return
        task.end_reason = "cancelled"
        if task.state is not State.CANCELLED:
            task.to(State.CANCELLED)
        self.events.emit("task:aborted", task.id, reason="cancelled")
        self.logger.info("agent.task.cancelled", task_id=task.id)
        self._finish(task, reply("cancelled", task.input.language), kind="cancelled")

    def _failed(
        self,
        task: Task,
        exc: Exception,
        *,
        reason: str,
        error_reason: str,
        kind: str | None = None,
    ) -> None:
        task.end_reason = reason
        # The error is shown to people (the reply, events, logs): redacted, unlike step results.
        shown = self.redactor.text(self._blog_relative(str(exc)))
        task.record.last_error = f"{type(exc).__name__}: {shown}"
        task.record.error_reason = error_reason
        if task.state is not State.ERROR:
            task.to(State.ERROR)
        self.events.emit("task:aborted", task.id, reason=reason, message=shown)
        self.logger.error("agent.error", task_id=task.id, error=task.record.last_error)
        lang = task.input.language
        error: object = shown
        if isinstance(exc, HostUnresolved):  # a network problem, said in the user's language
            error = reply("no_network", lang, host=exc.host)
        content = reply("budget" if reason == "budget" else "failed", lang, error=error)
        if error_reason == "BUDGET_EXCEEDED":
            content += reply("resume_budget", lang, task=task.id)
        elif error_reason == "AUTH_FAILED":
            content += reply("resume_auth", lang, task=task.id)
        elif error_reason in RESUMABLE_ERRORS:
            content += reply("resumable", lang, task=task.id)
        self._finish(task, content, kind=kind or reason)

    def _blog_relative(self, text: str) -> str:
        """``text`` with the blog's absolute path cut off its paths (``posts/a.md``, never
        ``/home/me/blog/posts/a.md``): an error a library raised names files by full path."""
        for root in {str(self.config.root), str(self.config.root.resolve())}:
            if root == os.sep:
                continue
            # The root itself, or followed by a separator; not a longer name (/blog2).
            pattern = re.escape(root) + r"(?:/|(?![\w.\-]))"
            text = re.sub(pattern, lambda m: "" if m.group(0).endswith("/") else ".", text)
        return text

    def _finish(
        self,
        task: Task,
        content: str,
        *,
        kind: str,
        data: dict[str, Any] | None = None,
        tokens: int | None = None,
        cost: float | None = None,
    ) -> None:
        """Record the end (history, checkpoint) and hand the reply to the caller."""
        record = task.record
        state = task.state
        record.state = state.value
        keep = state is State.PAUSED or (
            state is State.ERROR and record.error_reason in RESUMABLE_ERRORS
        )
        if keep:
            self._save(task)
        else:
            self._committer().delete(task.id)
            self._tasks.pop(task.id, None)
        if kind not in ("rephrase", "no_skill", "bad_params", "superseded"):
            self._add_history(record, state.value, content)
        self._deliver(
            task,
            ChatMessage(
                content=content,
                task_id=task.id,
                state=state.value,
                tokens=record.tokens if tokens is None else tokens,
                cost=record.cost if cost is None else cost,
                data={**(data or {}), "outcome": kind},
            ),
        )

    def _shown(self, text: str, limit: int) -> str:
        """``text`` as people see it (history, logs, summaries): redacted, *then* cut, so no
        secret survives as a prefix where the cut falls."""
        return self.redactor.text(text)[:limit]

    def _shown_error(self, record: TaskRecord) -> str | None:
        error = record.last_error
        return None if error is None else self._shown(error, 2000)

    def _add_history(self, record: TaskRecord, state: str, message: str) -> None:
        """One history entry for a task that ended: every field redacted, texts before cutting."""
        if self.history is None:
            return
        entry = self.redactor(
            {
                "task_id": record.id,
                "session_id": record.session_id,
                "skill": record.skill,
                "intent": record.intent.get("type"),
                "state": state,
                "input": self._shown(record.raw_input, 500),
                "tokens": record.tokens,
                "cost": record.cost,
                "started_at": record.created_at,
                "finished_at": self.clock(),
                "message": self._shown(message, 2000),
                "error": self._shown_error(record),
            }
        )
        self._to_history(self.history.add_task, entry)

    def _to_history(self, write: Callable[..., None], *args: Any) -> None:
        """History is a record for people: a write that fails (a read-only or full disk) is
        logged and never fails the task or the reply."""
        try:
            write(*args)
        except (SkillrtError, sqlite3.Error, OSError) as exc:
            self.logger.error("agent.error", where="history", error=self._blog_relative(str(exc)))

    def _history_messages(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        if self.history is None:
            return []
        try:
            return self.history.messages(session_id, limit)
        except (SkillrtError, sqlite3.Error, OSError) as exc:
            self.logger.error("agent.error", where="history", error=self._blog_relative(str(exc)))
            return []

    def _record_message(
        self,
        session_id: str,
        role: Literal["user", "assistant"],
        content: str,
        task_id: str | None = None,
    ) -> None:
        """One chat message, kept as a turn of the session and in the history (an assistant
        message records the session's focus as it is after it)."""
        text = self._shown(content, 4000)
        self.sessions.add_turn(session_id, role, text, task_id)
        if self.history is not None:
            entry: dict[str, Any] = {"role": role, "content": text, "task_id": task_id}
            if role == "assistant":
                entry["focus"] = self.sessions.focus(session_id)
            entry["at"] = self.clock()
            self._to_history(self.history.add_message, session_id, entry)

    # --- control ---------------------------------------------------------------------------

    def abort(self, task_id: str | None = None) -> bool:
        """Cancel a task (the foreground one when None): its signal fires, its work stops now."""
        target = task_id or self.current_task_id
        task = self._tasks.get(target or "")
        if task is None or task.state in TERMINAL_STATES:
            return False
        task.end_reason = task.end_reason or "cancelled"
        task.controller.abort("cancelled")
        if task.state is State.IDLE:  # its runner has not started: it stops at its first check
            return task.runner is not None
        if task.runner is not None and not task.runner.done():
            task.runner.cancel()
            return True
        if task.state is State.PAUSED:  # not running: cancel it in place
            task.to(State.CANCELLED)
            self._stopped(task)
            if self.locks is not None:
                self.locks.release_task_locks(task.id)
            return True
        return False

    def pause(self, task_id: str | None = None) -> bool:
        """Ask a running task to pause at its next step boundary."""
        task = self._tasks.get(task_id or self.current_task_id or "")
        if task is None or task.state not in (State.UNDERSTANDING, State.PLANNING, State.EXECUTING):
            return False
        task.pause_requested = True
        return True

    def get_resumable_tasks(self) -> list[TaskSummary]:
        """Tasks to resume: paused, restored from a checkpoint, or stopped by an outage."""
        if self._shared is not None:
            self._sync_shared()
        locks = self.runlocks
        restored = [  # dormant: PAUSED, not built yet, so not running here
            self._summary(r)
            for r in self._tasks.dormant_records()
            if locks is None or not locks.running_elsewhere(r.id)
        ]
        return restored + [
            self._summary(t.record)
            for t in self._tasks.values()
            if (
                t.state is State.PAUSED
                or (t.state is State.ERROR and t.record.error_reason in RESUMABLE_ERRORS)
            )
            and (locks is None or t.runner is not None or not locks.running_elsewhere(t.id))
        ]

    def list_tasks(self) -> list[TaskSummary]:
        """Every task this runtime holds: running, waiting for an answer, and resumable."""
        resumable = self.get_resumable_tasks()
        ids = {t.id for t in resumable}
        return [t for t in resumable if t.id not in self._tasks.values_ids()] + [
            self._summary(t.record)
            for t in self._tasks.values()
            if t.id in ids or t.state in ACTIVE_STATES or t.state is State.IDLE
        ]

    def get_task(self, task_id: str) -> TaskSummary | None:
        """One task this runtime holds (running, waiting or resumable), or None."""
        task = self._tasks.get(task_id)
        return None if task is None else self._summary(task.record)

    def _summary(self, record: TaskRecord) -> TaskSummary:
        return TaskSummary(
            id=record.id,
            session_id=record.session_id,
            question=record.question,
            state=record.state,
            skill=record.skill,
            intent=record.intent.get("type") if record.intent else None,
            description=self._shown(record.raw_input, 200),
            created_at=record.created_at,
            updated_at=record.updated_at,
            steps_done=len(record.steps),
            progress=record.progress,
            error_reason=record.error_reason,
            last_error=self._shown_error(record),
            tokens=record.tokens,
            cost=record.cost,
        )

    async def resume_task(
        self,
        task_id: str,
        *,
        budget: BudgetConfig | Mapping[str, Any] | None = None,
        session_id: str | None = None,
        on_task: Callable[[str], None] | None = None,
    ) -> ChatMessage | None:
        """Continue a task from its last completed step. None if there is no such resumable
        task; a reply saying so if another process is running it right now. Its questions are
        then answered in ``session_id`` (default: this runtime's session).

        ``budget`` (``max_tokens``, ``max_cost``) replaces the task's limits where given, kept
        with the task from then on; the tokens and cost it already used still count, so a task
        stopped by its budget goes on once the limit is above them. Completed steps are not
        asked again, so they are not paid for again.
        """
        limits = BudgetConfig.model_validate(budget) if budget is not None else None
        await self.initialize()
        if self._shared is not None:  # the store may know it better: another worker wrote it
            await asyncio.to_thread(self._sync_shared, task_id)
        task = self._tasks.get(task_id)
        if task is None or (task.runner is not None and not task.runner.done()):
            return None
        if task.state is State.ERROR and task.record.error_reason in RESUMABLE_ERRORS:
            task.machine.force(State.PAUSED)
        if task.state is not State.PAUSED:
            return None
        if self.runlocks is not None and self.runlocks.running_elsewhere(task.id):
            return self._reply(
                reply("running_elsewhere", task.input.language, task=task.id),
                task_id=task.id,
                error="running_elsewhere",
            )
        if limits is not None:
            task.record.budget = {
                **(task.record.budget or {}),
                **limits.model_dump(exclude_none=True),
            }
        task.pause_requested = False
        task.end_reason = None
        task.record.error_reason = None
        task.record.last_error = None
        # Answers to its questions come from whoever resumed it (a new process has a new session).
        task.record.session_id = session_id or self.session_id
        task.new_controller()
        outcome = task.next_outcome()
        if task.record.skill is None:  # it crashed before routing finished: route again
            task.to(State.IDLE)
            route = True
        else:
            route = False
        if on_task is not None:
            on_task(task.id)
        if not self._start(task, route=route):
            return None
        return await self._await_outcome(task, outcome)

    def _sync_shared(self, task_id: str | None = None) -> None:
        """Bring the tasks this worker is not running in line with the shared store (one task,
        or all in the resume window): other workers pause, finish and abandon tasks too, and a
        copy read earlier must never be resumed over a newer journal."""
        store = self._store
        if store is None:
            return
        if task_id is None:
            window = self.config.checkpoint_max_age_h * 3600
            records = {
                r.id: r for r in store.load_recent(max_age_s=window, now=self.clock()).records
            }
            ids = set(records) | set(self._tasks)
        else:
            record = store.get(task_id)
            records = {task_id: record} if record is not None else {}
            ids = {task_id}
        for tid in ids:
            local = self._tasks.get(tid)
            if local is not None and (
                (local.runner is not None and not local.runner.done())
                or local.state not in (State.PAUSED, State.ERROR)
            ):
                continue  # running or finished here: this worker's copy is the newest
            record = records.get(tid)
            if record is None or not self._is_resumable(record):
                self._tasks.pop(tid, None)
            elif local is None or local.record.updated_at < record.updated_at:
                self._tasks.pop(tid, None)
                self._restore(LoadResult(records=[record]))

    async def _adopt(self, task_id: str) -> None:
        """Take over a task whose worker died (the shared store's failover) and run it on.

        The lease is taken first, atomically: of several workers looking, one wins. The record
        is read afresh, so the journal is the dead worker's last committed one.
        """
        runlocks, store = self.runlocks, self._store
        if runlocks is None or store is None:
            return
        local = self._tasks.get(task_id)
        if local is not None and local.runner is not None and not local.runner.done():
            return
        if not await asyncio.to_thread(runlocks.hold, task_id):
            return  # another worker was faster
        record = await asyncio.to_thread(store.get, task_id)
        if record is None or not self._is_resumable(record):
            await asyncio.to_thread(runlocks.release, task_id)
            return
        self._tasks.pop(task_id, None)  # any copy here is older than the store's
        self._restore(LoadResult(records=[record]))
        self.logger.info("agent.task.adopted", task_id=task_id, error_reason="CRASH")
        runner = asyncio.create_task(self.resume_task(task_id))
        self._adopted.add(runner)
        runner.add_done_callback(self._adopted.discard)

    async def abandon_task(self, task_id: str) -> bool:
        """Give up a paused or failed task for good: it is no longer offered for resume."""
        await self.initialize()
        task = self._tasks.get(task_id)
        if task is None or (task.runner is not None and not task.runner.done()):
            return False
        if task.state not in (State.PAUSED, State.ERROR):
            return False
        if task.state is State.PAUSED:
            task.to(State.CANCELLED)
        task.end_reason = "abandoned"
        self._committer().delete(task.id)
        await self._durable()
        self._tasks.pop(task.id, None)
        if self.locks is not None:
            self.locks.release_task_locks(task.id)
        self._add_history(task.record, "ABANDONED", "abandoned")
        return True

    # --- shutdown --------------------------------------------------------------------------

    async def close(self) -> None:
        """Stop running tasks and close. Stopped tasks stay resumable, from their last completed
        step, as after a crash (closing is not the user cancelling them)."""
        if self._failover is not None:
            await self._failover.stop()
            self._failover = None
        runners = [t.runner for t in self._tasks.values() if t.runner and not t.runner.done()]
        for task in list(self._tasks.values()):
            if task.runner is not None and not task.runner.done():
                task.end_reason = "shutdown"
                task.controller.abort("shutdown")
                task.runner.cancel()
        if runners:
            await asyncio.gather(*runners, return_exceptions=True)
        for task in self._tasks.values():  # a runner cancelled before it began never replied
            if not task.outcome.done():
                task.deliver(self._reply("The runtime closed.", task_id=task.id, outcome="closed"))
        if self.committer is not None:
            try:
                await self.committer.durable()
            except Exception as exc:  # a full or read-only disk: closing still closes
                self.logger.error("agent.error", where="close", error=self._blog_relative(str(exc)))
        aclose = getattr(self._llm, "aclose", None)
        if self._owns_llm and aclose is not None:  # a model we made (connections, llama.cpp)
            await aclose()
            self._llm = None
        self._close_stores()

    def _close_stores(self) -> None:
        if self.committer is not None:
            try:
                self.committer.flush_sync()  # anything queued since (a synchronous close)
            except Exception as exc:  # a full or read-only disk: the stores still close
                self.logger.error("agent.error", where="close", error=self._blog_relative(str(exc)))
            self.committer = None
        for closable in (self._store, self.history, self.memory, self.locks, self.runlocks):
            if closable is not None:
                closable.close()
        if self._shared is not None:  # after its parts: they use its connections
            self._shared.close()
            self._shared = None
            self._store = None
        if self._owns_store:
            self._store = None
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
            # The file is closed: the runtime and its parts log to stderr from now on.
            self.logger = make_logger(self.config, self.redactor).bind(session_id=self.session_id)
            self.events.logger = self.router.logger = self.logger
        self._initialized = False

    def close_sync(self) -> None:
        """``close`` for synchronous callers (those that used ``process_input_sync``)."""
        self._close_sync()

    def _close_sync(self) -> None:
        if self._sync_loop is not None and not self._sync_loop.is_closed():
            self._sync_loop.run_until_complete(self.close())
            self._sync_loop.close()
            self._sync_loop = None
        else:
            self._close_stores()
