"""Test models: real implementations of the LLM protocol, used in tests instead of mocks.

``ScriptedModel`` answers from a queue; ``FunctionModel`` answers with a callable. Both honour
the abort signal, stream their answer through ``stream_cb`` and report usage like a provider.
A structured call validates the one answer it gets against ``response_model``; a test model
never repairs or asks again, so every call takes exactly one answer.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import CoroutineType
from typing import Any, TypeAlias

from pydantic import BaseModel

from skillrt.abort import AbortSignal
from skillrt.exceptions import ScriptExhausted, UserError
from skillrt.llm.base import (
    BaseLLM,
    LLMMessage,
    LLMRequest,
    LLMResult,
    Usage,
    estimate_tokens,
    parse_structured,
)

__all__ = ["Answer", "Delayed", "FunctionModel", "ModelOptions", "ScriptedModel"]


@dataclass(frozen=True, slots=True)
class Delayed:
    """One scripted answer with its own timing: wait ``delay`` seconds before it (on top of the
    model's ``delay``) and ``chunk_delay`` between its streamed chunks. Makes one call slow."""

    answer: Answer
    delay: float = 0.0
    chunk_delay: float | None = None


Answer: TypeAlias = str | dict[str, Any] | BaseModel | LLMResult | BaseException | Delayed
"""What a test model can give: text, a JSON object, a model, a full result, an error, or
any of those ``Delayed``."""

_TIMING_KEYS = frozenset({"$answer", "$delay", "$chunk_delay"})


def _answer_from_json(item: Any) -> Answer:
    """A script item: ``{"$answer": ..., "$delay": s, "$chunk_delay": s}`` is a ``Delayed``
    answer (the ``$`` keys cannot clash with a JSON answer's own keys); anything else as is."""
    if isinstance(item, dict) and "$answer" in item and set(item) <= _TIMING_KEYS:
        chunk_delay = item.get("$chunk_delay")
        return Delayed(
            _answer_from_json(item["$answer"]),
            delay=float(item.get("$delay", 0.0)),
            chunk_delay=None if chunk_delay is None else float(chunk_delay),
        )
    return item  # type: ignore[no-any-return]


def _not_an_answer(answer: object) -> bool:
    """Whether a script's item or a function's return is no ``Answer``: ``42`` (or ``None``,
    a list) failed the task deep in the model call with "TypeError: expected string or
    bytes-like object, got 'int'", a script file's at the call that reached it."""
    while isinstance(answer, Delayed):
        answer = answer.answer
    return not isinstance(answer, str | dict | BaseModel | LLMResult | BaseException)


@dataclass(frozen=True, slots=True)
class ModelOptions:
    """The keyword arguments of a ``chat`` call, as a ``FunctionModel`` callable sees them."""

    response_model: type[BaseModel] | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    stream: bool = False


async def _sleep_or_abort(seconds: float, signal: AbortSignal | None) -> None:
    if seconds <= 0:
        return
    if signal is None:
        await asyncio.sleep(seconds)
        return
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({waiter}, timeout=seconds)
    finally:
        waiter.cancel()
    signal.raise_if_aborted()


def _chunks(text: str) -> Iterable[str]:
    """Split text into word-sized deltas (CJK text one character at a time)."""
    if _BREAK.search(text) is None:  # one word: itself (no generator to step through)
        return (text,) if text else ()
    return _words(text)


_BREAK = re.compile("[\\s\u2e81-\U0010ffff]")
"""A character after which ``_words`` ends a delta: a space (``str.isspace``'s, which ``\\s``
is) or one past U+2E80."""


def _words(text: str) -> Iterable[str]:
    word = ""
    for ch in text:
        word += ch
        if ch.isspace() or ord(ch) > 0x2E80:
            yield word
            word = ""
    if word:
        yield word


class _TestModel(BaseLLM):
    __test__ = False

    def __init__(self, *, model: str, delay: float, chunk_delay: float) -> None:
        self._model = model
        self.delay = delay
        self.chunk_delay = chunk_delay
        self.calls: list[list[LLMMessage]] = []

    @property
    def model(self) -> str:
        return self._model

    @property
    def call_count(self) -> int:
        return len(self.calls)

    @abstractmethod
    async def _answer(self, request: LLMRequest) -> Answer:
        """The answer to this call (the call is already recorded in ``calls``)."""

    async def _generate(self, request: LLMRequest) -> LLMResult:
        """The call recorded in ``calls``, then its answer (``_answer``): waited for as it
        asks, validated, streamed and returned."""
        self.calls.append(list(request.messages))
        answer = await self._answer(request)
        signal = request.signal
        chunk_delay = self.chunk_delay
        while isinstance(answer, Delayed):
            await _sleep_or_abort(answer.delay, signal)
            if answer.chunk_delay is not None:
                chunk_delay = answer.chunk_delay
            answer = answer.answer
        if self.delay > 0:
            await _sleep_or_abort(self.delay, signal)
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, LLMResult):
            return answer
        if _not_an_answer(answer):
            raise TypeError(
                f"{type(self).__name__}: an answer is text, a dict, a pydantic model, an"
                f" LLMResult, an exception or a Delayed one, not {type(answer).__name__}"
            )
        if isinstance(answer, BaseModel):
            content = answer.model_dump_json()
        elif isinstance(answer, dict):
            content = json.dumps(answer, ensure_ascii=False)
        else:
            content = answer
        parsed = None
        if request.response_model is not None:
            parsed = parse_structured(
                answer if isinstance(answer, dict) else content, request.response_model
            )
        stream_cb = request.stream_cb
        if stream_cb is not None:
            for delta in _chunks(content):
                if signal is not None:
                    signal.raise_if_aborted()
                # (``call_stream_cb``, written out: a delta here is never empty)
                out = stream_cb(delta)
                if type(out) is CoroutineType or (out is not None and inspect.isawaitable(out)):
                    await out
                if chunk_delay > 0:
                    await _sleep_or_abort(chunk_delay, signal)
        if signal is not None:
            signal.raise_if_aborted()
        prompt = 0
        for message in request.messages:
            prompt += estimate_tokens(message["content"])
        usage = Usage(prompt, estimate_tokens(content))
        return LLMResult(content, parsed, usage, 0.0, self._model)

    # One answer a call: validated against response_model in _generate, never repaired.
    _generate_structured = _generate


class ScriptedModel(_TestModel):
    """Answers from a script, in order. Asked once more than it has answers, it raises.

    ``ScriptedModel(["an outline", {"type": "SUMMARIZE", "confidence": 0.9}])``; a dict is
    sent as JSON and validated against ``response_model`` when one is given; an exception in
    the script is raised by that call. ``delay`` waits before each answer and ``chunk_delay``
    between streamed chunks, both cut short by the abort signal.
    """

    def __init__(
        self,
        answers: Iterable[Answer],
        *,
        model: str = "scripted",
        delay: float = 0.0,
        chunk_delay: float = 0.0,
    ) -> None:
        super().__init__(model=model, delay=delay, chunk_delay=chunk_delay)
        self._answers: list[Answer] = list(answers)

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> ScriptedModel:
        """Load a script from JSON: a list of answers, or ``{"answers": [...], "delay": s}``.

        ``delay``, ``chunk_delay`` and ``model`` at the top apply to every answer; one answer
        written ``{"$answer": ..., "$delay": s, "$chunk_delay": s}`` is slow on its own.
        """
        source = Path(path)
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise UserError(f"cannot read model script {source}: {exc}") from exc
        if isinstance(data, dict):
            answers = data.get("answers")
            for key in ("delay", "chunk_delay", "model"):
                if key in data:
                    kwargs.setdefault(key, data[key])
        else:
            answers = data
        if not isinstance(answers, list):
            raise UserError(f"model script {source}: expected a list of answers")
        for number, item in enumerate(answers, 1):
            if _not_an_answer(_answer_from_json(item)):
                shown = json.dumps(item)[:60]
                raise UserError(
                    f"model script {source}: answer {number} is {shown}; expected text"
                    ' or a JSON object ({"$answer": ..., "$delay": s} for a slow one)'
                )
        return cls([_answer_from_json(item) for item in answers], **kwargs)

    @property
    def remaining(self) -> int:
        return len(self._answers)

    def add(self, *answers: Answer) -> None:
        self._answers.extend(answers)

    async def _answer(self, request: LLMRequest) -> Answer:
        if not self._answers:
            raise ScriptExhausted(
                f"ScriptedModel has no answer left for call {len(self.calls)}",
                provider="scripted",
                model=self._model,
            )
        return self._answers.pop(0)


ModelFunction = Callable[[list[LLMMessage], ModelOptions], Answer | Awaitable[Answer]]


class FunctionModel(_TestModel):
    """Answers with ``fn(messages, options)``, a sync or async callable returning an Answer."""

    def __init__(
        self,
        fn: ModelFunction,
        *,
        model: str = "function",
        delay: float = 0.0,
        chunk_delay: float = 0.0,
    ) -> None:
        super().__init__(model=model, delay=delay, chunk_delay=chunk_delay)
        self.fn = fn

    async def _answer(self, request: LLMRequest) -> Answer:
        options = ModelOptions(
            request.response_model,
            request.max_tokens,
            request.temperature,
            request.stream_cb is not None,
        )
        out = self.fn(list(request.messages), options)
        if type(out) is CoroutineType or (out is not None and inspect.isawaitable(out)):
            answer: Answer = await out
            return answer
        return out
