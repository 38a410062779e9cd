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
loop with ``truncated_repetition=True`` (usage then estimated from the text, cost unknown).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
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

UsageSink = Callable[[str, int, float | None], tuple[int, float]]
"""``(model, tokens, cost) -> (task tokens so far, task cost so far)``."""


class TaskLLM(BaseLLM):
    __slots__ = (
        "_budget",
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

    @property
    def model(self) -> str:
        return self._llm.model

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

    async def _generate(self, request: LLMRequest) -> LLMResult:
        return await self._call(request, guarded=True)

    async def _generate_structured(self, request: LLMRequest) -> LLMResult:
        return await self._call(request, guarded=False)

    async def _call(self, request: LLMRequest, *, guarded: bool) -> LLMResult:
        """``request`` sent to the provider with the task's signal, its free text streamed
        through the repetition guard (``guarded``), accounted for."""
        self._check_budget()
        signal = request.signal or self._signal
        signal.raise_if_aborted()
        emit = self._emit
        guard = RepetitionGuard()
        stream_cb = request.stream_cb

        # A secret the model streams split over two pieces is redacted all the same: the end
        # of a piece that may start one waits for the next piece (the rest at the end).
        shown = self._redactor.stream() if self._redactor is not None else None

        async def relay(delta: str) -> None:
            guard.feed(delta)  # raises RepetitionStopped before a looping delta goes out
            note_activity()  # a streamed token pushes the stall watchdog back
            out = delta if shown is None else shown.feed(delta)
            if out:
                emit("task:stream", delta=out)
            await call_stream_cb(stream_cb, delta)

        # Made directly (``dataclasses.replace`` looks the fields up at every call).
        request = LLMRequest(
            request.messages,
            signal,
            request.response_model,
            request.max_tokens,
            request.temperature,
            relay if guarded else stream_cb,
        )
        started = time.perf_counter()
        try:
            if guarded:
                result = await request.send(self._llm)
            else:
                result = await self._thinking(request, started)
        except (TaskCancelled, asyncio.CancelledError):
            raise
        except RepetitionStopped as stopped:
            result = self._cut_short(request.messages, stopped, guard.text)
        except Exception as exc:
            fatal = exc.fatal if isinstance(exc, ProviderError) else True
            emit(
                "ai:generation:error",
                error=str(exc),
                error_type=type(exc).__name__,
                model=self._llm.model,
                is_recoverable=not fatal,
            )
            raise
        if shown is not None and (rest := shown.flush()):
            emit("task:stream", delta=rest)  # the end held back, now that it is the end
        self._account(result, time.perf_counter() - started)
        # A call that went over the budget is paid for: its answer is returned (its step is
        # journalled and kept); the next call is the one refused.
        return result

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
                return await request.send(self._llm)
        finally:
            ticker.cancel()

    def _account(self, result: LLMResult, duration: float) -> None:
        """Record the call's usage and cost, and say what it took."""
        self._used = self._sink(
            result.model or self._llm.model, result.usage.total_tokens, result.cost
        )
        usage: dict[str, Any] = result.usage.to_dict()
        self._emit(
            "ai:generation",
            usage=usage,
            model=result.model,
            cost=result.cost,
            duration=round(duration, 4),
            **({"truncated_repetition": True} if result.truncated_repetition else {}),
        )
        self._logger.debug(
            "agent.llm.called",
            model=result.model,
            tokens=result.usage.total_tokens,
            cost=result.cost,
            duration_s=round(duration, 4),
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
            content=stopped.kept, usage=usage, model=self._llm.model, truncated_repetition=True
        )
