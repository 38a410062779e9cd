"""Tasks that run on another worker of a shared store: requests to them, and their events.

``Remote`` is the runtime's side of the backend's ``ControlChannel``. A request about a task
this runtime does not run (pause, abort, the answer to its question, follow its events) goes to
the worker that holds the task's lease; that worker's ``Remote`` takes it, acts on its own task
and sends back the result (for an answer: the task's next reply, so it reaches the caller that
answered, whichever worker that caller asked). Nothing here touches the task's checkpoint: only
the worker that runs a task writes it.

A followed task's events (progress, streamed text) are sent in small batches to the follower,
which emits them on its own event bus, so an SSE client on any worker sees them; each batch is
cut to the channel's payload size, and a burst larger than ``_MAX_BUFFERED`` events keeps only
the newest.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from skillrt._state.protocol import ControlChannel, ControlRequest
from skillrt._tasks.inventory import Inventory
from skillrt._tasks.task import Task
from skillrt._tasks.tasktable import TaskTable
from skillrt.events import Event, EventBus
from skillrt.messages import ChatMessage

__all__ = ["Remote"]

_MAX_PAYLOAD = 7000  # bytes of one batch of events (PostgreSQL's NOTIFY takes 8000)
_MAX_BUFFERED = 1000  # events waiting for the next batch, per task
_FLUSH_S = 0.05
_REPLY = "task:reply"  # the last event sent to a follower: the task's reply


class Remote:
    """Requests to and from the other workers (see the module docstring)."""

    def __init__(
        self,
        control: ControlChannel,
        *,
        tasks: TaskTable,
        inventory: Inventory,
        events: EventBus,
        answer: Callable[[Task, str], Awaitable[ChatMessage]],
        logger: Callable[[], structlog.stdlib.BoundLogger],
        wait_s: float,
    ) -> None:
        self.control = control
        self.tasks = tasks
        self.inventory = inventory
        self.events = events
        self.answer = answer
        self.logger = logger
        self.wait_s = wait_s
        self._handling: set[asyncio.Task[Any]] = set()
        self._followers: dict[str, set[str]] = {}  # task id -> workers following it here
        self._buffers: dict[str, list[dict[str, Any]]] = {}
        self._following: dict[str, asyncio.Future[ChatMessage | None]] = {}
        self._unsubscribe: Callable[[], None] | None = None

    def start(self) -> None:
        self.control.start(asyncio.get_running_loop(), self._on_request, self._on_events)

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for job in list(self._handling):
            job.cancel()
        await asyncio.gather(*self._handling, return_exceptions=True)
        for future in self._following.values():
            if not future.done():
                future.set_result(None)

    # --- asking another worker -----------------------------------------------------------------

    async def ask(self, task_id: str, verb: str, payload: str = "") -> dict[str, Any] | None:
        """Send ``verb`` to the worker running ``task_id`` and return its answer; None when no
        other live worker runs it. A request not taken within ``wait_s`` is withdrawn (its
        answer is then ``{"ok": False, "error": "no_answer"}``)."""
        request_id = await self.control.send(task_id, verb, payload)
        if request_id is None:
            return None
        text = await self.control.result(request_id, self.wait_s)
        if not text:
            return {"ok": False, "error": "no_answer"}
        answer: dict[str, Any] = json.loads(text)
        return answer

    def ask_soon(self, task_id: str, verb: str) -> bool:
        """Record ``verb`` for the worker running ``task_id`` without waiting for its answer
        (for the synchronous ``abort``/``pause``); False when no other live worker runs it."""
        return self.control.send_sync(task_id, verb) is not None

    async def follow(self, task_id: str) -> asyncio.Future[ChatMessage | None] | None:
        """Have the worker running ``task_id`` send its events here; the future is its reply
        (None: the task stopped without one reaching us). None: nobody else runs it."""
        future = self._following.get(task_id)
        if future is not None and not future.done():
            return future
        future = asyncio.get_running_loop().create_future()
        self._following[task_id] = future
        answer = await self.ask(task_id, "follow")
        if answer is None or not answer.get("ok"):
            self._following.pop(task_id, None)
            return None
        watch = asyncio.ensure_future(self._watch(task_id, future))
        self._handling.add(watch)
        watch.add_done_callback(self._handling.discard)
        return future

    async def _watch(self, task_id: str, future: asyncio.Future[ChatMessage | None]) -> None:
        """End a follow whose task no longer runs anywhere else (its worker died)."""
        while not future.done():
            await asyncio.sleep(1.0)
            with contextlib.suppress(Exception):
                if not future.done() and not await self.inventory.state.running_elsewhere(task_id):
                    await asyncio.sleep(0.5)  # its reply may be on its way
                    if not future.done():
                        future.set_result(None)
        self._following.pop(task_id, None)

    def _on_events(self, task_id: str, text: str) -> None:
        try:
            batch = json.loads(text)
        except ValueError:
            return
        for item in batch if isinstance(batch, list) else []:
            kind, data = item.get("type"), item.get("data") or {}
            if kind == _REPLY:
                future = self._following.get(task_id)
                if future is not None and not future.done():
                    message = ChatMessage.model_validate(data) if data else None
                    future.set_result(message)
            elif isinstance(kind, str) and isinstance(data, dict):
                self.events.emit(kind, task_id, **data)

    # --- requests from other workers ---------------------------------------------------------

    def _on_request(self, request: ControlRequest) -> None:
        job = asyncio.ensure_future(self._handle(request))
        self._handling.add(job)
        job.add_done_callback(self._handling.discard)

    async def _handle(self, request: ControlRequest) -> None:
        try:
            if not await self.control.take(request.id):
                return  # acted on already, or withdrawn by its sender
            result = await self._act(request)
            await self.control.finish(request.id, json.dumps(result, ensure_ascii=False))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.logger().error("agent.error", where="control request", verb=request.verb,
                                task_id=request.task_id, error=str(exc))  # fmt: skip

    async def _act(self, request: ControlRequest) -> dict[str, Any]:
        task = self.tasks.live(request.task_id)
        verb = request.verb
        if task is None:
            return {"ok": False, "state": None}
        if verb == "abort":
            ok = self.inventory.abort(task)
        elif verb == "pause":
            ok = task.ask_to_pause()
        elif verb == "answer":
            await task.asked(self.inventory.config.store_timeout_s)  # its question, saved
            if task.answer is None or task.answer.done():
                return {"ok": False, "state": task.state.value}
            message = await self.answer(task, request.payload)
            return {"ok": True, "message": message.model_dump(mode="json")}
        elif verb == "follow":
            ok = task.running
            if ok:
                self._add_follower(task, request.sender)
        else:
            return {"ok": False, "error": f"unknown request {verb!r}"}
        return {"ok": ok, "state": task.state.value}

    # --- events of followed tasks ----------------------------------------------------------------

    def _add_follower(self, task: Task, worker: str) -> None:
        # Events are listened to only while some task is followed: an event nobody listens
        # to is never built (a streamed token each), so following costs nothing otherwise.
        if self._unsubscribe is None:
            self._unsubscribe = self.events.on("*", self._forward)
        followers = self._followers.setdefault(task.id, set())
        if not followers and task.runner is not None:
            task.runner.add_done_callback(lambda runner: self._ended(task.id, runner))
        followers.add(worker)

    def _forward(self, event: Event) -> None:
        task_id = event.task_id
        if task_id is None or task_id not in self._followers:
            return
        buffer = self._buffers.setdefault(task_id, [])
        if not buffer:
            asyncio.get_running_loop().call_later(_FLUSH_S, self._flush, task_id)
        buffer.append({"type": event.type, "data": event.data})
        if len(buffer) > _MAX_BUFFERED:
            del buffer[: len(buffer) - _MAX_BUFFERED]

    def _ended(self, task_id: str, runner: asyncio.Task[ChatMessage]) -> None:
        message = None
        if not runner.cancelled() and runner.exception() is None:
            message = runner.result().model_dump(mode="json")
            content = message.get("content") or ""
            if len(content.encode()) > _MAX_PAYLOAD // 2:  # bounded: the reply's start
                message["content"] = content[: _MAX_PAYLOAD // 8] + " …"
                message["data"] = {"outcome": message.get("data", {}).get("outcome"),
                                   "truncated": True}  # fmt: skip
        self._buffers.setdefault(task_id, []).append({"type": _REPLY, "data": message or {}})
        self._flush(task_id, last=True)

    def _flush(self, task_id: str, *, last: bool = False) -> None:
        items = self._buffers.pop(task_id, [])
        followers = self._followers.get(task_id, set())
        if last:
            self._followers.pop(task_id, None)
            if not self._followers and self._unsubscribe is not None:
                self._unsubscribe()
                self._unsubscribe = None
        for text in _batches(items):
            for worker in followers:
                job = asyncio.ensure_future(self.control.publish(worker, task_id, text))
                self._handling.add(job)
                job.add_done_callback(_quiet)
                job.add_done_callback(self._handling.discard)


def _batches(items: list[dict[str, Any]]) -> list[str]:
    """``items`` as JSON arrays of at most ``_MAX_PAYLOAD`` bytes each, in order; an item too
    big on its own is sent without its data (``truncated``)."""
    batches: list[str] = []
    current: list[str] = []
    size = 2
    for item in items:
        text = json.dumps(item, ensure_ascii=False, default=str)
        if len(text.encode()) > _MAX_PAYLOAD - 2:
            text = json.dumps({"type": item["type"], "data": {"truncated": True}})
        if current and size + len(text.encode()) + 1 > _MAX_PAYLOAD:
            batches.append("[" + ",".join(current) + "]")
            current, size = [], 2
        current.append(text)
        size += len(text.encode()) + 1
    if current:
        batches.append("[" + ",".join(current) + "]")
    return batches


def _quiet(job: asyncio.Future[Any]) -> None:
    if not job.cancelled():
        job.exception()  # a lost event batch is not an error of the task
