"""Progress notifications for one tool call, from its task's events.

``task:progress`` becomes a notification with the task's percent and message; streamed text
(``task:stream``) arrives as progress too, its delta as the message. MCP wants each progress
value larger than the last, so a notification that brings no new percent adds a small step.
The events are queued as they come and sent in order by one pump, on the loop they came on.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType
from typing import Any

from mcp.server.session import ServerSession

from skillrt.agent import AgentRuntime
from skillrt.events import Event

__all__ = ["ProgressRelay"]

_NUDGE = 0.001  # what a notification without a new percent adds to the last value
_MAX_DELTA_CHARS = 2000  # a streamed delta is cut to this (a message, not a transcript)


class ProgressRelay:
    """``async with ProgressRelay(...) as relay:`` run the call with ``on_task=relay.bind``."""

    def __init__(
        self,
        runtime: AgentRuntime,
        session: ServerSession | None,
        token: str | int | None,
        request_id: str | int | None,
    ) -> None:
        self.runtime = runtime
        self.session = session
        self.token = token
        self.request_id = request_id
        self.task_ids: set[str] = set()
        self.last = 0.0
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._off: list[Any] = []
        self._pump: asyncio.Task[None] | None = None

    @property
    def active(self) -> bool:
        return self.session is not None and self.token is not None

    def bind(self, task_id: str) -> None:
        """``on_task``: the call's task is known; its events are relayed from now on."""
        self.task_ids.add(task_id)

    def _on_event(self, event: Event) -> None:
        if event.task_id in self.task_ids:
            self._queue.put_nowait(event)

    async def __aenter__(self) -> ProgressRelay:
        if self.active:
            self._off = [
                self.runtime.on("task:progress", self._on_event),
                self.runtime.on("task:stream", self._on_event),
            ]
            self._pump = asyncio.ensure_future(self._run())
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        for off in self._off:
            off()
        if self._pump is not None:
            self._queue.put_nowait(None)
            try:
                await asyncio.wait_for(asyncio.shield(self._pump), 2.0)
            except (TimeoutError, asyncio.CancelledError):
                self._pump.cancel()

    async def _run(self) -> None:
        while (event := await self._queue.get()) is not None:
            await self._send(event)

    async def _send(self, event: Event) -> None:
        if event.type == "task:progress":
            percent = float(event.data.get("percent") or 0.0)
            message = str(event.data.get("message") or "")
        else:
            percent = 0.0
            message = str(event.data.get("delta") or "")[:_MAX_DELTA_CHARS]
        self.last = percent if percent > self.last else self.last + _NUDGE
        if self.session is None or self.token is None:
            return
        with contextlib.suppress(Exception):  # the client went away: the call ends on its own
            await self.session.send_progress_notification(
                self.token,
                round(self.last, 4),
                total=100.0 if self.last <= 100 else None,
                message=message or None,
                related_request_id=None if self.request_id is None else str(self.request_id),
            )
