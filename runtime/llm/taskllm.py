"""``TaskLLM``: the model as one task sees it.

It passes the task's abort signal to every call, streams text deltas to ``task:stream``,
records usage and cost, emits ``ai:generation`` / ``ai:generation:error``, logs
``agent.llm.called`` and enforces the task's token and money budget.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

import structlog
from pydantic import BaseModel

from skillrt.abort import AbortSignal
from skillrt.exceptions import BudgetExceeded, ProviderError, TaskCancelled
from skillrt.llm.base import LLM, LLMMessage, LLMResult, StreamCallback, call_stream_cb
from skillrt.settings import BudgetConfig

__all__ = ["TaskLLM"]

UsageSink = Callable[[str, int, float | None], tuple[int, float]]
"""``(model, tokens, cost) -> (task tokens so far, task cost so far)``."""


class TaskLLM:
    __slots__ = ("_budget", "_emit", "_llm", "_logger", "_signal", "_sink", "_used")

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
    ) -> None:
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
        self._check_budget()
        signal = signal or self._signal
        signal.raise_if_aborted()
        emit = self._emit

        async def relay(delta: str) -> None:
            emit("task:stream", delta=delta)
            await call_stream_cb(stream_cb, delta)

        started = time.perf_counter()
        try:
            result = await self._llm.chat(
                messages,
                signal=signal,
                response_model=response_model,
                max_tokens=max_tokens,
                temperature=temperature,
                stream_cb=relay if response_model is None else stream_cb,
            )
        except (TaskCancelled, asyncio.CancelledError):
            raise
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
        duration = time.perf_counter() - started
        self._used = self._sink(
            result.model or self._llm.model, result.usage.total_tokens, result.cost
        )
        usage: dict[str, Any] = result.usage.to_dict()
        emit(
            "ai:generation",
            usage=usage,
            model=result.model,
            cost=result.cost,
            duration=round(duration, 4),
        )
        self._logger.debug(
            "agent.llm.called",
            model=result.model,
            tokens=result.usage.total_tokens,
            cost=result.cost,
            duration_s=round(duration, 4),
        )
        self._check_budget()
        return result
