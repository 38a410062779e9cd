"""``SkillContext``: everything a skill gets from the runtime, and nothing more.

A skill reaches the model, the blog, the locks and the event bus only through its context.
``step(name, fn)`` makes work durable: the first run stores ``fn``'s JSON result in the task's
journal before returning it; a resumed task gets the stored result without running ``fn``.
With ``returns=Model`` the step gives back a ``Model`` both times (the journal holds its JSON).
``reply(key, **values)`` reads the running skill's ``Replies`` in the user's language.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import json.decoder
import json.encoder
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import FunctionType
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, overload

from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError, to_jsonable_python

from skillrt._io.language import Language, detect_language
from skillrt.abort import AbortSignal
from skillrt.exceptions import CheckpointCorrupt, FileChanged, UserError
from skillrt.settings import RuntimeConfig
from skillrt.skill.conversation import Conversation
from skillrt.skill.replies import Replies
from skillrt.skill.tools import ToolBox, Tools

if TYPE_CHECKING:
    import structlog

    from skillrt.blog.files import FileStore
    from skillrt.blog.locks import FileLockManager
    from skillrt.blog.memory import BlogMemory
    from skillrt.blog.versions import VersionStore
    from skillrt.llm.taskllm import TaskLLM

__all__ = ["SkillContext", "TaskEvents", "TaskInput", "detect_language"]

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class TaskInput:
    """What the user asked, with the editor context a blog tool passed along."""

    text: str
    language: Language = "en"
    current_file: str | None = None
    selected_text: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def say(self, zh: str, en: str) -> str:
        """Pick the reply in the user's language."""
        return zh if self.language == "zh" else en


class TaskEvents(Protocol):
    """The event bus, bound to one task: ``ctx.events.emit("agent:status", message=...)``."""

    def emit(self, event_type: str, **data: Any) -> None: ...


class _TaskHost(Protocol):
    """What the runtime provides behind a context (implemented by the runtime's task)."""

    def journal_get(self, name: str) -> tuple[bool, Any]: ...
    async def journal_put(self, name: str, value: Any) -> None: ...
    def before_step(self, name: str) -> None: ...
    def report_progress(self, progress: dict[str, Any]) -> None: ...
    async def wait_for_answer(
        self, question: str, *, accepts: Callable[[str], bool] | None = None
    ) -> str: ...


class Later(Generic[T]):
    """A value made when it is first asked for (``get``), then kept: what a context is given
    for a part most skills never use (a task's model, its files, its logger), so that a task
    that does not look does not pay for it."""

    __slots__ = ("_make", "_value")

    def __init__(self, make: Callable[[], T]) -> None:
        self._make: Callable[[], T] | None = make
        self._value: T | None = None

    def get(self) -> T:
        make = self._make
        if make is not None:
            self._value = make()
            self._make = None  # (and what it held: no reference kept once made)
        return self._value  # type: ignore[return-value]


_NO_REPLIES = Replies()  # a context's table until ``Skill.run`` binds its skill's (read only)


class SkillContext:
    """The task a skill runs in: ids, signal, input, conversation, model, memory, files,
    locks, events, tools."""

    __slots__ = (
        "_asks",
        "_conversation",
        "_files",
        "_host",
        "_llm",
        "_logger",
        "_toolbox",
        "_tools",
        "config",
        "events",
        "input",
        "locks",
        "memory",
        "replies",
        "session_id",
        "signal",
        "task_id",
        "versions",
    )

    def __init__(
        self,
        *,
        task_id: str,
        session_id: str,
        signal: AbortSignal,
        input: TaskInput,
        llm: TaskLLM | Later[TaskLLM],
        memory: BlogMemory,
        files: FileStore | Later[FileStore],
        locks: FileLockManager,
        events: TaskEvents,
        logger: structlog.stdlib.BoundLogger | Later[structlog.stdlib.BoundLogger],
        config: RuntimeConfig,
        host: _TaskHost,
        conversation: Conversation | Callable[[], Conversation] | None = None,
        replies: Replies | None = None,
        tools: ToolBox | None = None,
        versions: VersionStore | None = None,
    ) -> None:
        self.task_id = task_id
        self.session_id = session_id
        self.signal = signal
        self.input = input
        self._llm = llm  # (a ``Later``: made at the first ``ctx.llm``; so files and logger)
        self.memory = memory
        self._files = files
        self.locks = locks
        self.events = events
        self._logger = logger
        self.config = config
        # The versions kept before each write, for undo (None: a context without them).
        self.versions = versions
        self._host = host
        self._asks = 0
        # The running skill's words, read by ``reply``; ``Skill.run`` binds its own table.
        self.replies = replies if replies is not None else _NO_REPLIES
        # The session's recent turns (bounded in tokens) and its focus, the post last worked
        # on (see skillrt.skill.conversation); a callable is asked once, when a skill first looks.
        self._conversation = conversation or Conversation(session_id=session_id)
        self._toolbox = tools
        self._tools: Tools | None = None

    @property
    def llm(self) -> TaskLLM:
        """The model, as this task sees it: its abort signal, budget and cost."""
        llm = self._llm
        if isinstance(llm, Later):
            llm = self._llm = llm.get()
        return llm

    @llm.setter
    def llm(self, value: TaskLLM) -> None:
        self._llm = value

    @property
    def files(self) -> FileStore:
        """The blog's files, as this task writes them (each write logged)."""
        files = self._files
        if isinstance(files, Later):
            files = self._files = files.get()
        return files

    @files.setter
    def files(self, value: FileStore) -> None:
        self._files = value

    @property
    def logger(self) -> structlog.stdlib.BoundLogger:
        """The runtime's logger, bound to this task and skill."""
        logger = self._logger
        if isinstance(logger, Later):
            logger = self._logger = logger.get()
        return logger

    @logger.setter
    def logger(self, value: structlog.stdlib.BoundLogger) -> None:
        self._logger = value

    @property
    def tools(self) -> Tools:
        """The MCP servers' tools (``[mcp.servers.NAME]``): ``await ctx.tools.call(server,
        tool, args)``, each call a durable step (skillrt.skill.tools). Made when a skill first
        looks: it refers back to the context, and a cycle made for every task (most never call
        a tool) left each finished task to the garbage collector."""
        if self._tools is None:
            self._tools = Tools(self, self._toolbox)
        return self._tools

    @property
    def conversation(self) -> Conversation:
        conversation = self._conversation
        if not isinstance(conversation, Conversation):
            conversation = self._conversation = conversation()
        return conversation

    def progress(
        self,
        step: int,
        total: int,
        message: str,
        detail: str | None = None,
    ) -> None:
        """Report progress: emits ``task:progress`` (with a percent) and records it."""
        total = max(total, 1)
        step = max(0, min(step, total))
        percent = round(100.0 * step / total, 1)
        self._host.report_progress(
            {
                "step": step,
                "total_steps": total,
                "message": message,
                "detail": detail,
                "percent": percent,
            }
        )

    @overload
    async def step(self, name: str, fn: Callable[[], object], *, returns: type[R]) -> R: ...

    @overload
    async def step(self, name: str, fn: Callable[[], Awaitable[T]]) -> T: ...

    @overload
    async def step(self, name: str, fn: Callable[[], T]) -> T: ...

    async def step(
        self, name: str, fn: Callable[[], Any], *, returns: type[Any] | None = None
    ) -> Any:
        """Run ``fn`` once, durably.

        ``fn`` may be async (it runs on the event loop) or sync (it runs in a thread, so its
        file I/O and fsyncs never hold the loop; a sync ``fn`` must not touch asyncio objects:
        make it async to emit progress or events). Its result is stored in the journal before
        this returns. Without ``returns`` the result must be JSON (dicts, lists, strings,
        numbers) and this returns its JSON round trip; with ``returns=Model`` (a pydantic model,
        or anything pydantic validates: a dataclass, ``list[Model]``) the journal holds the
        result's JSON and this returns it validated as ``Model``. Either way the first run and
        a resumed run see the same value. Checks the abort signal and a pending pause before
        running.
        """
        found, value = self._host.journal_get(name)
        if found:
            return value if returns is None else _validated(name, value, returns)
        self.signal.raise_if_aborted()
        self._host.before_step(name)
        if _is_async(fn):
            result = await fn()
        else:
            result = await asyncio.to_thread(fn)
            if inspect.isawaitable(result):  # a sync callable that made a coroutine
                result = await result
        stored = _as_json(name, result, typed=returns is not None)
        self.signal.raise_if_aborted()
        await self._host.journal_put(name, stored)
        return stored if returns is None else _validated(name, stored, returns)

    async def read(self, name: str, path: str) -> tuple[str, str]:
        """Read a blog file as the durable step ``name``: ``(text, sha256)``.

        The journal keeps a reference (``{"path", "sha256"}``), never the text, so a checkpoint
        stays small and holds nothing of the post. A resumed task reads the file again and gets
        ``FileChanged`` if its bytes are no longer those of the first read. The read runs off
        the event loop (``FileStore.read`` refuses what is not a regular file, or too big).
        """
        found, ref = self._host.journal_get(name)
        if not found:
            self.signal.raise_if_aborted()
            self._host.before_step(name)
        text, digest = await asyncio.to_thread(self.files.read, path)
        if found:
            expected = ref.get("sha256") if isinstance(ref, dict) else None
            if expected != digest:
                raise FileChanged(self.files.relative(path), str(expected), digest)
            return text, digest
        self.signal.raise_if_aborted()
        await self._host.journal_put(name, {"path": self.files.relative(path), "sha256": digest})
        return text, digest

    async def ask(self, question: str, *, accepts: Callable[[str], bool] | None = None) -> str:
        """Ask the user; the task waits in WAITING_INPUT until the session's next input.

        The answer is journalled, so a resumed task does not ask again. ``accepts`` tells an
        answer from a new request typed instead ("which post?" answered "what tags does the
        docker post have?"): an input of the session it returns False for ends this task
        (CANCELLED, nothing more done; ``TaskCancelled`` goes through the skill as a cancel
        does) and is routed as any input. Without it, every input is the answer. An answer sent
        to the task itself (``answer_task``) is always the answer.
        """
        self._asks += 1

        async def wait() -> str:
            if accepts is None:  # (a host of the protocol's first form takes no ``accepts``)
                return await self._host.wait_for_answer(question)
            return await self._host.wait_for_answer(question, accepts=accepts)

        return await self.step(f"ask#{self._asks}", wait)

    def reply(self, key: str, /, **values: object) -> str:
        """The running skill's reply ``key`` (from its ``Replies``) in the user's language,
        filled in with ``values``."""
        return self.replies.text(key, self.input.language, **values)

    def say(self, zh: str, en: str) -> str:
        """Pick ``zh`` or ``en`` by the user's language (``reply`` reads a skill's table)."""
        return self.input.say(zh, en)


def _is_async(fn: Callable[..., Any]) -> bool:
    """``inspect.iscoroutinefunction(fn)``, which is six Python calls a step: a plain function
    (or a ``partial`` of one, as steps are written) is answered from its code's flags, exactly
    as ``inspect`` does; anything else is asked of ``inspect``."""
    f = fn
    while type(f) is functools.partial:
        f = f.func
    if type(f) is FunctionType:
        return bool(f.__code__.co_flags & inspect.CO_COROUTINE)
    return inspect.iscoroutinefunction(fn)


# A step's JSON round trip is ``json.loads(json.dumps(value, ensure_ascii=False,
# allow_nan=False))``, made by the C encoder and scanner those two call, without the Python
# around them (a new ``JSONEncoder`` for the keywords, its ``iterencode`` and closure, the
# decoder's two whitespace matches): the same text, value and errors, ~16 k instructions less a
# step that returns a dict or list. (Without the C encoder, the encoder's own ``encode``.)
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
_SCAN: Callable[[str, int], tuple[Any, int]] = json.decoder.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _json_text(value: object) -> str:
    """``json.dumps(value, ensure_ascii=False, allow_nan=False)`` of a value not a ``str``."""
    if _MAKE_ENCODER is None:
        return _ENCODER.encode(value)
    encoder = _ENCODER
    return "".join(
        _MAKE_ENCODER(
            {}, encoder.default, json.encoder.encode_basestring, None, encoder.key_separator,
            encoder.item_separator, False, False, False,
        )(value, 0)
    )  # fmt: skip


def _c_encoder_as_encode() -> bool:
    """Whether the C encoder, called as ``_json_text`` calls it, writes what ``encode`` does
    (checked once: another CPython could take other arguments; then ``encode`` is used)."""
    sample = {"a": [1.5, None, True, "é"], "2": {}}
    try:
        return _json_text(sample) == _ENCODER.encode(sample)
    except (TypeError, ValueError):
        return False


if not _c_encoder_as_encode():
    _MAKE_ENCODER = None


def _as_json(name: str, result: object, *, typed: bool) -> Any:
    """``result`` as the JSON the journal stores (a typed step's models become their JSON)."""
    if type(result) is str:  # its JSON round trip is itself
        if not result.isascii():
            _storable(name, result)
        return result
    try:
        value = to_jsonable_python(result) if typed else result
        text = _json_text(value)
    except (TypeError, ValueError, PydanticSerializationError) as exc:
        raise UserError(
            f"step {name!r} returned {type(result).__name__}, which is not JSON-serialisable"
            f" ({exc}); return dicts, lists, strings and numbers, or pydantic models with"
            " returns="
        ) from exc
    if not text.isascii():
        _storable(name, text)
    return _SCAN(text, 0)[0]  # (the whole text: the encoder wrote one value, no blanks)


def _storable(name: str, text: str) -> None:
    """Refuse text the journal cannot store: a lone surrogate (from bytes decoded with
    ``surrogateescape``, or a cut UTF-16 pair) is not UTF-8. It used to fail the task at its
    checkpoint, in the serialiser's words, after the step had returned."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start : exc.end].encode("unicode_escape").decode()
        raise UserError(
            f"step {name!r} returned text holding {bad} (at {exc.start}), a lone surrogate that"
            " cannot be stored as UTF-8; decode bytes with errors='replace'"
        ) from None


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}  # one per type steps return (a handful)


def _adapter(returns: Any) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(returns)
    if adapter is None:
        adapter = _ADAPTERS[returns] = TypeAdapter(returns)
    return adapter


def _validated(name: str, value: Any, returns: type[R]) -> R:
    """A journalled step result as ``returns``; ``CheckpointCorrupt`` if it is not one."""
    try:
        validated: R = _adapter(returns).validate_python(value)
    except ValidationError as exc:
        shown = getattr(returns, "__name__", str(returns))
        raise CheckpointCorrupt(f"step {name!r}", f"not a {shown}: {exc}") from exc
    return validated
