"""``TaskLLM``: the model as one task sees it.

It passes the task's abort signal to every call, streams text deltas to ``task:stream``,
records usage and cost, emits ``ai:generation`` / ``ai:generation:error``, logs
``agent.llm.called`` and enforces the task's token and money budget: a call is refused with
``BudgetExceeded`` once the task has used more than a limit (the call that went over still
returns its answer: it is paid for).

A structured call streams nothing to the skill, and on a slow model its silence can last a
minute: while it runs, ``ai:thinking`` says every second that the model is working (``tokens``
heard so far, ``elapsed_s``), so the outline step is not a silent wait.

Every streamed (non-structured) call goes through a ``RepetitionGuard``: a model that falls
into a loop is stopped there, whatever the provider, and the call returns the text before the
loop with ``truncated_repetition=True`` (usage then estimated from the text, and its cost from
that, priced as the model is: ``price_of``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import structlog

from skillrt._io.redaction import Redactor
from skillrt.abort import AbortSignal
from skillrt.exceptions import BudgetExceeded, ProviderError, RepetitionStopped, TaskCancelled
from skillrt.llm.base import (
    LLM,
    BaseLLM,
    LLMMessage,
    LLMRequest,
    LLMResult,
    Usage,
    activity_listener,
    call_stream_cb,
    current_activity_listener,
    estimate_usage,
    note_activity,
)
from skillrt.llm.guard import RepetitionGuard
from skillrt.settings import BudgetConfig

__all__ = ["THINKING_EVERY_S", "TaskLLM"]

THINKING_EVERY_S = 1.0

_DEBUG = logging.DEBUG
perf_counter = time.perf_counter


def _logs_debug(logger: object) -> bool:
    """Whether ``logger`` may write debug lines. The runtime's logger filters at a level fixed
    when it was made (``make_logger``), so its answer holds for the task's life; a stdlib
    logger's level may change meanwhile, and another logger may not say: both are called."""
    ask = getattr(logger, "is_enabled_for", None)
    if ask is None or isinstance(logger, structlog.stdlib.BoundLogger):
        return True
    return bool(ask(_DEBUG))


UsageSink = Callable[[str, int, float | None], tuple[int, float]]
"""``(model, tokens, cost) -> (task tokens so far, task cost so far)``."""


class TaskLLM(BaseLLM):
    __slots__ = (
        "_budget",
        "_debug",
        "_direct",
        "_emit",
        "_llm",
        "_logger",
        "_on_repetition",
        "_redactor",
        "_signal",
        "_sink",
        "_used",
    )

    def __init__(
        self,
        llm: LLM,
        *,
        signal: AbortSignal,
        budget: BudgetConfig,
        sink: UsageSink,
        emit: Callable[..., None],
        logger: structlog.stdlib.BoundLogger,
        used: tuple[int, float] = (0, 0.0),
        on_repetition: Callable[[], None] | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self._on_repetition = on_repetition
        self._redactor = redactor  # streamed text is shown redacted across its pieces
        self._llm = llm
        self._signal = signal
        self._budget = budget
        self._sink = sink
        self._emit = emit
        self._logger = logger
        self._used = used
        # The provider's ``chat`` is the base's: calls go to its ``_generate`` (``_send``).
        self._direct = type(llm).chat is BaseLLM.chat
        self._debug = _logs_debug(logger)

    @property
    def model(self) -> str:
        return self._llm.model

    def price_of(self, usage: Usage) -> float | None:
        return self._llm.price_of(usage)

    @property
    def inner(self) -> LLM:
        """The provider behind this task's view."""
        return self._llm

    def _check_budget(self) -> None:
        tokens, cost = self._used
        if self._budget.max_tokens is not None and tokens > self._budget.max_tokens:
            raise BudgetExceeded("tokens", self._budget.max_tokens, tokens)
        if self._budget.max_cost is not None and cost > self._budget.max_cost:
            raise BudgetExceeded("cost", self._budget.max_cost, cost)

    def _send(self, request: LLMRequest) -> Coroutine[Any, Any, LLMResult]:
        """``request`` made to the provider: straight to its ``_generate`` (or
        ``_generate_structured``) when its ``chat`` is ``BaseLLM.chat``, which would only check
        the signal again (checked here), copy the messages again (this call's copies already)
        and fill in the defaults (filled in by ``_generate``); through its ``chat`` otherwise."""
        llm = self._llm
        if not self._direct:
            return request.send(llm)
        if request.response_model is None:
            return llm._generate(request)
        return llm._generate_structured(request)

    async def _generate(self, request: LLMRequest) -> LLMResult:
        """``request`` sent to the provider with the task's signal, its free text streamed
        through the repetition guard (a structured call, ``_generate_structured``: unguarded,
        with ``ai:thinking`` every second), accounted for."""
        guarded = request.response_model is None
        if (budget := self._budget).max_tokens is not None or budget.max_cost is not None:
            self._check_budget()
        signal = request.signal or self._signal
        signal.raise_if_aborted()
        emit = self._emit
        llm = self._llm
        guard = RepetitionGuard() if guarded else None
        stream_cb = request.stream_cb

        # A secret the model streams split over two pieces is redacted all the same: the end
        # of a piece that may start one waits for the next piece (the rest at the end).
        shown = self._redactor.stream() if guarded and self._redactor is not None else None

        async def relay(delta: str) -> None:
            guard.feed(delta)  # type: ignore[union-attr]  # raises RepetitionStopped first
            note_activity()  # a streamed token pushes the stall watchdog back
            out = delta if shown is None else shown.feed(delta)
            if out:
                emit("task:stream", delta=out)
            if stream_cb is not None:
                await call_stream_cb(stream_cb, delta)

        max_tokens, temperature = request.max_tokens, request.temperature
        if self._direct:  # what the provider's ``chat`` would fill in (see ``_send``)
            if max_tokens is None:
                max_tokens = llm.default_max_tokens
            if temperature is None:
                temperature = llm.default_temperature
        # Made directly (``dataclasses.replace`` looks the fields up at every call).
        request = LLMRequest(
            request.messages,
            signal,
            request.response_model,
            max_tokens,
            temperature,
            relay if guarded else stream_cb,
        )
        started = perf_counter()
        try:
            if guarded:  # (``_send``, written out)
                result = await (llm._generate(request) if self._direct else request.send(llm))
            else:
                result = await self._thinking(request, started)
        except (TaskCancelled, asyncio.CancelledError):
            raise
        except RepetitionStopped as stopped:
            result = self._cut_short(request.messages, stopped, guard.text if guard else "")
        except Exception as exc:
            fatal = exc.fatal if isinstance(exc, ProviderError) else True
            emit(
                "ai:generation:error",
                error=str(exc),
                error_type=type(exc).__name__,
                model=llm.model,
                is_recoverable=not fatal,
            )
            raise
        if shown is not None and (rest := shown.flush()):
            emit("task:stream", delta=rest)  # the end held back, now that it is the end
        self._account(result, perf_counter() - started)
        # A call that went over the budget is paid for: its answer is returned (its step is
        # journalled and kept); the next call is the one refused.
        return result

    # One body: ``BaseLLM.chat`` calls this for a structured call (``response_model`` set).
    _generate_structured = _generate

    async def _thinking(self, request: LLMRequest, started: float) -> LLMResult:
        """``request`` sent, with ``ai:thinking`` every second until it returns."""
        outer = current_activity_listener()
        heard = 0

        def hear() -> None:
            nonlocal heard
            heard += 1
            if outer is not None:
                outer()

        async def tick() -> None:
            while True:
                await asyncio.sleep(THINKING_EVERY_S)
                elapsed = round(time.perf_counter() - started, 1)
                self._emit("ai:thinking", tokens=heard, elapsed_s=elapsed, model=self.model)

        ticker = asyncio.create_task(tick())
        try:
            with activity_listener(hear):
                return await self._send(request)
        finally:
            ticker.cancel()

    def _account(self, result: LLMResult, duration: float) -> None:
        """Record the call's usage and cost, and say what it took."""
        counts: dict[str, Any] = result.usage.to_dict()
        tokens = counts["total_tokens"]
        self._used = self._sink(result.model or self._llm.model, tokens, result.cost)
        duration = round(duration, 4)
        self._emit(
            "ai:generation",
            usage=counts,
            model=result.model,
            cost=result.cost,
            duration=duration,
            **({"truncated_repetition": True} if result.truncated_repetition else {}),
        )
        if self._debug:  # a call the logger drops still costs its arguments
            self._logger.debug(
                "agent.llm.called",
                model=result.model,
                tokens=tokens,
                cost=result.cost,
                duration_s=duration,
            )

    def _cut_short(
        self, messages: Sequence[LLMMessage], stopped: RepetitionStopped, streamed: str
    ) -> LLMResult:
        self._logger.warning(
            "agent.llm.repetition",
            model=self._llm.model,
            unit=stopped.unit[:80],
            streamed_chars=stopped.streamed,
            kept_chars=len(stopped.kept),
        )
        if self._on_repetition is not None:
            self._on_repetition()
        usage = estimate_usage(messages, streamed)
        return LLMResult(
            content=stopped.kept,
            usage=usage,
            cost=self._llm.price_of(usage),  # (an estimate, as the usage is)
            model=self._llm.model,
            truncated_repetition=True,
        )
