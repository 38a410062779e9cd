"""One event loop for synchronous callers of an async API (the thin sync wrappers)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from skillrt.exceptions import UserError

__all__ = ["SyncLoop"]

T = TypeVar("T")


class SyncLoop:
    """Runs coroutines to completion on a loop of its own, kept between calls (a runtime's
    tasks live on it), and refuses to run inside a running loop, where the caller must await."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, work: Coroutine[Any, Any, T], name: str) -> T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            work.close()
            raise UserError(f"{name}_sync was called inside an event loop; await {name}")
        self._loop = self._loop or asyncio.new_event_loop()
        return self._loop.run_until_complete(work)

    def run_last(self, work: Coroutine[Any, Any, None]) -> bool:
        """Run ``work`` on the loop, then close the loop; False (``work`` not run) if no loop
        was ever made."""
        loop, self._loop = self._loop, None
        if loop is None or loop.is_closed():
            work.close()
            return False
        loop.run_until_complete(work)
        loop.close()
        return True
