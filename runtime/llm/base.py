"""The one protocol every model speaks, the base that implements it, and what it returns.

``await llm.chat(messages, *, signal, response_model=None, max_tokens=None,
temperature=None, stream_cb=None) -> LLMResult``

``BaseLLM.chat`` is that signature, written once: it packs its arguments into an ``LLMRequest``
and hands it to the implementation's ``_generate`` (free text) or ``_generate_structured`` (an
answer validated against ``response_model``). The providers, the test models and the task's
view of the model (``TaskLLM``) all build on it.
"""

from __future__ import annotations

import inspect
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import CoroutineType
from typing import Literal, TypedDict, TypeVar

from pydantic import BaseModel, ValidationError

from skillrt.abort import AbortSignal
from skillrt.exceptions import StructuredOutputError

__all__ = [
    "CAPPED_STRING_CHARS",
    "LLM",
    "BaseLLM",
    "LLMMessage",
    "LLMRequest",
    "LLMResult",
    "StreamCallback",
    "Usage",
    "activity_listener",
    "bound_messages",
    "call_stream_cb",
    "current_activity_listener",
    "estimate_tokens",
    "estimate_usage",
    "note_activity",
    "parse_structured",
    "set_activity_listener",
    "truncate_middle",
    "with_system_text",
]

M = TypeVar("M", bound=BaseModel)

StreamCallback = Callable[[str], object]
"""Receives each text delta as it arrives; may be sync or return an awaitable."""


_activity: ContextVar[Callable[[], None] | None] = ContextVar("skillrt_activity", default=None)


def set_activity_listener(listener: Callable[[], None] | None) -> None:
    """Call ``listener`` whenever a model call of this context (this asyncio task and the tasks
    it starts) receives data. The runtime points it at the task's stall watchdog."""
    _activity.set(listener)


@contextmanager
def activity_listener(listener: Callable[[], None]) -> Iterator[None]:
    """``listener`` hears this context's model activity within the block (then the one before
    it does again). A listener that wraps ``current_activity_listener()`` passes it on."""
    token = _activity.set(listener)
    try:
        yield
    finally:
        _activity.reset(token)


def current_activity_listener() -> Callable[[], None] | None:
    return _activity.get()


def note_activity() -> None:
    """A provider received bytes from its model (a chunk, a token): tell the listener, if any.
    Cheap enough to call per chunk; safe to call where no listener is set."""
    listener = _activity.get()
    if listener is not None:
        listener()


class LLMMessage(TypedDict):
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one call. ``estimated`` is True when the provider reported no counts and they
    were estimated from the text (``estimate_tokens``)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.estimated or other.estimated,
        )

    def to_dict(self) -> dict[str, int]:
        """The counts; ``"estimated": 1`` is added only when they were estimated."""
        out = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }
        if self.estimated:
            out["estimated"] = 1
        return out


CAPPED_STRING_CHARS = 40
"""The length at which the embedded model's fallback grammar cuts every string (``capped``)."""


@dataclass(slots=True)
class LLMResult:
    """What a model answered. ``cost`` is None when the model has no price (unpriced, not free)."""

    content: str
    parsed: BaseModel | None = None
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
    model: str = ""
    truncated_repetition: bool = False  # the repetition guard cut a looping answer short
    # A structured answer from the embedded model's fallback grammar, which cuts every string
    # at ``CAPPED_STRING_CHARS`` so that it always ends: a string that long may stop mid-word.
    capped: bool = False

    def parsed_as(self, model: type[M]) -> M:
        """The structured answer, typed; raises if the call had no matching ``response_model``."""
        if not isinstance(self.parsed, model):
            raise StructuredOutputError(
                f"expected a parsed {model.__name__}, got {type(self.parsed).__name__}",
                raw=self.content,
                model=self.model,
            )
        return self.parsed


@dataclass(frozen=True, slots=True)
class LLMRequest:
    """The arguments of one ``chat`` call, as ``BaseLLM`` hands them to its implementation.

    ``messages`` are copies holding only ``role`` and ``content``. ``max_tokens`` and
    ``temperature`` are the call's own, or else the model's defaults (None: the model decides).
    """

    messages: tuple[LLMMessage, ...]
    signal: AbortSignal | None = None
    response_model: type[BaseModel] | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    stream_cb: StreamCallback | None = None

    @property
    def output_model(self) -> type[BaseModel]:
        """``response_model`` of a structured call (``ValueError`` for a free-text one)."""
        if self.response_model is None:
            raise ValueError("a structured call needs a response_model")
        return self.response_model

    async def send(self, llm: BaseLLM) -> LLMResult:
        """This call, made to ``llm`` (how a model that wraps another passes it on)."""
        return await llm.chat(
            self.messages,
            signal=self.signal,
            response_model=self.response_model,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            stream_cb=self.stream_cb,
        )


class BaseLLM(ABC):
    """A chat model: ``chat`` is the protocol; an implementation writes ``model``,
    ``_generate`` and ``_generate_structured``.

    ``chat`` refuses at once when the signal is already aborted. ``_generate`` streams its text
    deltas to ``request.stream_cb``; ``_generate_structured`` (``request.response_model`` is
    set) returns an ``LLMResult`` whose ``parsed`` is an instance of that model, and passes only
    that answer to ``stream_cb``. ``default_max_tokens`` and ``default_temperature`` fill in a
    call that names none.
    """

    __slots__ = ()

    default_max_tokens: int | None = None
    default_temperature: float | None = None

    @property
    @abstractmethod
    def model(self) -> str:
        """The model's name, as results and prices know it."""

    def price_of(self, usage: Usage) -> float | None:
        """What ``usage`` costs on this model, when its provider knows its price (None:
        unpriced). For a call cut short by the runtime, whose provider never reported one: a
        free local model's looping call was counted "unpriced"."""
        return None

    async def chat(
        self,
        messages: Sequence[LLMMessage],
        *,
        signal: AbortSignal | None = None,
        response_model: type[BaseModel] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stream_cb: StreamCallback | None = None,
    ) -> LLMResult:
        if signal is not None:
            signal.raise_if_aborted()
        request = LLMRequest(
            # (a list made, not a generator stepped through once a message)
            tuple([{"role": m["role"], "content": m["content"]} for m in messages]),
            signal,
            response_model,
            max_tokens if max_tokens is not None else self.default_max_tokens,
            temperature if temperature is not None else self.default_temperature,
            stream_cb,
        )
        if response_model is None:
            return await self._generate(request)
        return await self._generate_structured(request)

    @abstractmethod
    async def _generate(self, request: LLMRequest) -> LLMResult:
        """Free text for ``request``, its deltas streamed to ``request.stream_cb``."""

    @abstractmethod
    async def _generate_structured(self, request: LLMRequest) -> LLMResult:
        """An answer to ``request`` validated against ``request.response_model``."""


LLM = BaseLLM
"""The type of every model: the openai and local providers, the test models, ``TaskLLM``."""


_CJK = re.compile("[\u3000-\u9fff\uf900-\ufaff]")


def estimate_tokens(text: str) -> int:
    """A rough token count (about four characters a token, one a CJK character)."""
    if text.isascii():  # O(1) in CPython: no character to look at
        return (len(text) + 3) // 4
    cjk = len(_CJK.findall(text))
    return cjk + max(0, len(text) - cjk + 3) // 4


def estimate_usage(messages: Sequence[LLMMessage], content: str) -> Usage:
    """The usage of a call that reported none, estimated from its text (``estimated=True``)."""
    prompt = sum(estimate_tokens(m["content"]) for m in messages)
    return Usage(prompt, estimate_tokens(content), estimated=True)


def truncate_middle(text: str, max_chars: int) -> str:
    """``text`` cut to at most ``max_chars`` by removing its middle, with a marker saying so."""
    if len(text) <= max_chars:
        return text
    marker = f"\n[... {len(text)} characters cut ...]\n"  # the longest the count can be
    if max_chars <= len(marker):
        return text[: max(0, max_chars)]
    keep = max_chars - len(marker)
    marker = f"\n[... {len(text) - keep} characters cut ...]\n"
    head = keep - keep // 2
    tail = keep // 2
    return text[:head] + marker + (text[len(text) - tail :] if tail else "")


def bound_messages(messages: Sequence[LLMMessage], max_chars: int) -> list[LLMMessage]:
    """The conversation fitted into ``max_chars`` characters in all, in its order.

    System messages are kept (cut from the middle only if together they would take more than
    half the budget); every other message is cut from the middle to fit what is left; then
    the oldest non-system messages are dropped, never the newest, until the whole fits.
    """
    n_system = sum(1 for m in messages if m["role"] == "system")
    system_cap = max(1, (max_chars // 2) // max(1, n_system))
    out: list[LLMMessage] = [
        {"role": m["role"], "content": truncate_middle(m["content"], system_cap)}
        if m["role"] == "system"
        else {"role": m["role"], "content": m["content"]}
        for m in messages
    ]
    left = max(1, max_chars - sum(len(m["content"]) for m in out if m["role"] == "system"))
    for m in out:
        if m["role"] != "system":
            m["content"] = truncate_middle(m["content"], left)
    while sum(len(m["content"]) for m in out if m["role"] != "system") > left:
        others = [i for i, m in enumerate(out) if m["role"] != "system"]
        if len(others) <= 1:
            break
        del out[others[0]]
    return out


def with_system_text(messages: Sequence[LLMMessage], text: str) -> list[LLMMessage]:
    """A copy of ``messages`` with ``text`` after the first message's content if it is the
    system message, else in a system message put first."""
    out: list[LLMMessage] = [{"role": m["role"], "content": m["content"]} for m in messages]
    if out and out[0]["role"] == "system":
        out[0]["content"] = f"{out[0]['content']}\n\n{text}"
    else:
        out.insert(0, {"role": "system", "content": text})
    return out


async def call_stream_cb(stream_cb: StreamCallback | None, delta: str) -> None:
    """Deliver one delta to a sync or async stream callback."""
    if stream_cb is None or not delta:
        return
    out = stream_cb(delta)
    # A coroutine (an ``async def`` callback) told by its type: ``isawaitable`` is Python.
    if type(out) is CoroutineType or (out is not None and inspect.isawaitable(out)):
        await out


def _strip_fences(text: str) -> str:
    text = text.strip()
    if text.startswith("```"):
        first_newline = text.find("\n")
        text = text[first_newline + 1 :] if first_newline != -1 else text[3:]
        if text.rstrip().endswith("```"):
            text = text.rstrip()[:-3]
    return text.strip()


def _first_json_object(text: str) -> str:
    """The first balanced ``{...}`` in ``text`` (models like to add prose around JSON)."""
    start = text.find("{")
    if start == -1:
        return text
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return text[start:]


def parse_structured(raw: str | dict[str, object], response_model: type[M]) -> M:
    """Validate a model's answer against ``response_model``.

    Accepts a dict or JSON text, tolerating code fences and prose around the object.
    Raises ``StructuredOutputError`` (carrying the raw text) when it does not fit.
    """
    if isinstance(raw, dict):
        try:
            return response_model.model_validate(raw)
        except ValidationError as exc:
            raise StructuredOutputError(
                f"answer does not match {response_model.__name__}: {exc}", raw=json.dumps(raw)
            ) from exc
    candidates = [raw, _strip_fences(raw)]
    candidates.append(_first_json_object(candidates[-1]))
    last_error: Exception | None = None
    for candidate in candidates:
        try:
            return response_model.model_validate_json(candidate)
        except ValidationError as exc:
            last_error = exc
    raise StructuredOutputError(
        f"answer is not valid JSON for {response_model.__name__}: {last_error}", raw=raw
    )
