"""Calls into the runtime that outlive their HTTP request.

A call (``process_input``, ``run_skill``, ``resume_task``, ``answer_task``) answered as a
stream runs as its own asyncio task held by the server, never by the request (``Jobs.start``);
one answered with JSON (``process_input``, ``run_skill``) runs in the request's own task,
one task fewer per call (``Jobs.run_here``), and if that task is cancelled the call goes on
without it (the runtime's ``on_left``). Either way a client that goes away leaves the task
running, and can reattach to its events. Its reply is journaled as a ``message`` event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from skillrt._io.logs import library_logger
from skillrt.messages import ChatMessage
from skillrt.server.sse import Entry, EventLog

__all__ = ["Job", "Jobs"]

_log = library_logger("skillrt.server")  # stdlib logging: silent unless the host sets it up

OnLeft = Callable[[ChatMessage | None], None]
Call = Callable[[Callable[[str], None], OnLeft | None], Coroutine[Any, Any, ChatMessage | None]]
"""A call into the runtime, given ``on_task`` and ``on_left`` (None: the call has a task of
its own, which nobody cancels)."""


class Job:
    """One call: the task it acts on (known before its first event) and its reply."""

    def __init__(self, log: EventLog, session_id: str | None) -> None:
        self.log = log
        self.session_id = session_id
        self.task_id: str | None = None
        self.start = 0  # the task's entries after this sequence number belong to this call
        self._bound: asyncio.Event | None = None  # made when a stream waits (see wait_bound)
        self.finished = False
        self.future: asyncio.Future[ChatMessage | None] | None = None
        self.entry: Entry | None = None  # the journaled reply
        self._waiters: list[asyncio.Future[None]] = []  # result() callers, told at the end

    def on_task(self, task_id: str) -> None:
        self.task_id = task_id
        self.start = self.log.seq
        self.log.bind(task_id, self.session_id)
        if self._bound is not None:
            self._bound.set()

    async def wait(self) -> None:
        """Until the call ended and its reply is journaled."""
        if not self.finished:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter

    async def result(self) -> ChatMessage | None:
        """The call's reply once it is journaled. A caller that gives up (its request
        cancelled) leaves the call running: it waits on a future of its own, not on the
        call's (what ``asyncio.shield`` did, with two more loop callbacks per call)."""
        if self.future is None:
            raise RuntimeError("job not started")
        if not self.finished:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter
        return self.future.result()

    def ended(self) -> None:
        """The call ended and its reply is journaled: wake whoever waits in ``result``."""
        self.finished = True
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    async def wait_bound(self) -> None:
        """Until the task is known, or the call ended without one."""
        if self.future is None:
            raise RuntimeError("job not started")
        if self.task_id is not None:
            return
        if self._bound is None:
            self._bound = asyncio.Event()
        waiter: asyncio.Future[Any] = asyncio.ensure_future(self._bound.wait())
        pending: set[asyncio.Future[Any]] = {waiter, self.future}
        try:
            await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()


class Jobs:
    """The calls in flight, by task."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self._running: set[Job] = set()

    def start(self, call: Call, session_id: str | None) -> Job:
        """``call`` in an asyncio task of its own (a stream follows it meanwhile)."""
        job = Job(self.log, session_id)
        job.future = asyncio.get_running_loop().create_task(call(job.on_task, None))
        self._running.add(job)
        job.future.add_done_callback(lambda fut: self._done(job, fut))
        return job

    async def run_here(
        self, call: Call, session_id: str | None
    ) -> tuple[ChatMessage | None, Entry | None]:
        """``call`` in the caller's own asyncio task (a reply as JSON: nothing follows the call
        meanwhile): its reply and the reply's journal entry. A caller cancelled once the task
        started leaves it running (``on_left``): its reply is journaled when it comes, and the
        call counts as running until then (``running_for``, ``settle``, ``wait_all``). One
        asyncio task, its wake-ups and a waiter fewer per call than ``start``."""
        job = Job(self.log, session_id)
        self._running.add(job)
        try:
            message = await call(job.on_task, lambda message: self._end(job, message))
        except asyncio.CancelledError:
            if job.task_id is None:  # nothing started: nothing goes on
                self._end(job, None)
            raise
        except BaseException as exc:
            _log.error("agent.error", where="server call", error=repr(exc))
            self._end(job, None)
            raise
        self._end(job, message)
        return message, job.entry

    def _done(self, job: Job, fut: asyncio.Future[ChatMessage | None]) -> None:
        message = None
        try:
            if not fut.cancelled():
                error = fut.exception()
                if error is not None:
                    _log.error("agent.error", where="server call", error=repr(error))
                else:
                    message = fut.result()
        finally:
            self._end(job, message)

    def _end(self, job: Job, message: ChatMessage | None) -> None:
        """The call ended: its reply (if any) journaled, its waiters woken."""
        if job.finished:  # pragma: no cover - once per call
            return
        self._running.discard(job)
        try:
            if message is not None:
                if message.task_id is None and job.task_id is not None:
                    message = message.model_copy(update={"task_id": job.task_id})
                job.entry = self.log.add_message(message)
        finally:
            job.ended()
            self.log.add_marker(job.task_id)

    def running_for(self, task_id: str) -> bool:
        return any(j.task_id == task_id for j in self._running)

    async def settle(self, task_id: str, seconds: float) -> None:
        """Wait (``seconds`` at most) for the calls on a task to return. A task is seen paused
        or failed a moment before the call that ran it returns (its end is made durable
        first); until then the runtime will not resume or abandon it."""
        waits = [asyncio.ensure_future(j.wait()) for j in self._running if j.task_id == task_id]
        if waits:
            try:
                await asyncio.wait(waits, timeout=seconds)
            finally:
                for wait in waits:
                    wait.cancel()

    async def wait_all(self) -> None:
        """Until every call in flight ended (its reply journaled)."""
        for job in list(self._running):
            await job.wait()
