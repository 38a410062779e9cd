"""Cancellation: an ``AbortController`` owns an ``AbortSignal`` that work can check or await.

Modelled on the DOM's AbortController. The runtime pairs every signal
with the asyncio task running the skill, so an abort also cancels in-flight awaits (an LLM
stream, an HTTP request) instead of waiting for the next check.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from skillrt.exceptions import TaskCancelled

if TYPE_CHECKING:
    import structlog

__all__ = ["AbortController", "AbortSignal"]


@functools.cache
def _log() -> structlog.stdlib.BoundLogger:
    """stdlib logging, silent unless the host set it up; made at the first failing callback,
    so importing this module (every model provider does, through ``llm.base``) loads no
    structlog: ``skillrt doctor`` need not pay for it."""
    from skillrt._io.logs import library_logger

    return library_logger("skillrt.abort")


class AbortSignal:
    """Read side of an abort: ``aborted``, ``reason``, callbacks and ``await wait()``."""

    __slots__ = ("_callbacks", "_event", "_reason")

    def __init__(self) -> None:
        self._reason: str | None = None
        self._callbacks: list[Callable[[str], object]] = []
        self._event: asyncio.Event | None = None

    @property
    def aborted(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> str | None:
        return self._reason

    def raise_if_aborted(self) -> None:
        if self._reason is not None:
            raise TaskCancelled(self._reason)

    def add_callback(self, callback: Callable[[str], object]) -> Callable[[], None]:
        """Call ``callback(reason)`` on abort (at once if already aborted). Returns a remover."""
        if self._reason is not None:
            callback(self._reason)
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    async def wait(self) -> str:
        """Return the reason once the signal is aborted."""
        if self._reason is not None:
            return self._reason
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()
        return self._reason or "cancelled"

    def _fire(self, reason: str) -> bool:
        if self._reason is not None:
            return False
        self._reason = reason
        if self._event is not None:
            self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback(reason)
            except Exception:
                _log().exception("agent.error", where="abort callback")
        return True


class AbortController:
    """Write side of an abort. ``abort()`` is idempotent and returns whether it fired now."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: str = "cancelled") -> bool:
        return self.signal._fire(reason)
