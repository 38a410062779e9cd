"""Server-sent events: the journal of every task's events, and the streams that follow it.

Every runtime event the server sees gets a sequence number (one counter for the process,
which starts above every number an earlier run of the server gave: ``restart_seq``) and
is kept in its task's journal, so a client that lost its connection sends ``Last-Event-ID``
and gets exactly the events after it, then the live ones. The reply that ends a call (the
``ChatMessage``) is journaled too, as a ``message`` event: a stream ends with it.

The journal is bounded in bytes as well as in entries: at most ``per_task_bytes`` per task and
``total_bytes`` in all (``recent_bytes`` for the ``/v1/events`` replay), the oldest entries
dropped first (a long article's deltas would otherwise keep about 1 MB per finished task). What
leaves the process is redacted, by the runtime's redactor: the replies (``message``) and
``error`` entries when journaled, the runtime's events (which the journal takes unredacted,
``EventBus.on_raw``) when a stream first reads them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, MutableMapping
from threading import get_ident
from typing import Any

from pydantic_core import to_json
from starlette.responses import Response

from skillrt._io.redaction import Redactor
from skillrt.events import Event
from skillrt.messages import ChatMessage

__all__ = ["Entry", "EventLog", "SSEResponse", "format_entry", "restart_seq"]

PING_S = 15.0
_TASKS_KEPT = 500  # journals of tasks nobody follows any more, newest kept
_PER_TASK = 50_000  # events kept per task (a long article streams a few thousand deltas)
_RECENT = 20_000  # events kept for /v1/events replays
PER_TASK_BYTES = 4_000_000  # an entry counts its JSON plus _ENTRY_OVERHEAD
TOTAL_BYTES = 64_000_000
RECENT_BYTES = 16_000_000
_ENTRY_OVERHEAD = 200  # the Entry object, its str headers and the deque slot, roughly


class Entry:
    """One journaled entry. ``data`` is its JSON text, redacted: encoded and redacted when the
    entry is made (a reply, an error); for a runtime event of plain values, encoded and
    redacted when a stream first reads it; for one holding a dict or a list (whose contents
    may change after), encoded when it comes, as it is then, and redacted when first read.
    Most are never read (a call answered with JSON: nobody follows its events), so most are
    never encoded, and none is redacted until read."""

    __slots__ = (
        "_data",
        "_raw",
        "_redactor",
        "_time",
        "event",
        "seq",
        "session_id",
        "size",
        "task_id",
    )

    seq: int
    event: str
    task_id: str | None
    session_id: str | None
    size: int  # what the entry costs the journal, roughly, in bytes: its JSON + _ENTRY_OVERHEAD
    _data: str | None
    # Until read: the event's data (not redacted: the redactor goes with it) and its time, or
    # its JSON text not yet redacted. Not the ``Event``: one object fewer kept per entry.
    _raw: dict[str, Any] | str | None
    _redactor: Redactor | None
    _time: float

    def __init__(
        self, seq: int, event: str, task_id: str | None, session_id: str | None, data: str
    ) -> None:
        self.seq, self.event, self.task_id, self.session_id = seq, event, task_id, session_id
        self._data, self._raw, self._redactor, self._time = data, None, None, 0.0
        self.size = len(data) + _ENTRY_OVERHEAD

    @property
    def data(self) -> str:
        """The entry as JSON text (redacted), encoded once for every stream that sends it."""
        data = self._data
        if data is None:
            raw, redactor = self._raw, self._redactor
            if raw is None or redactor is None:  # pragma: no cover - one or the other is set
                raise RuntimeError("a journal entry without its data")
            if isinstance(raw, str):  # encoded when it came: redacted now, if it needs it
                data = raw if redactor.is_clean(raw) else _json(redactor(json.loads(raw)))
            else:
                data = _encode_event(self.event, self.task_id, raw, self._time, redactor)
            self._data = data
            self._raw = self._redactor = None
        return data

    def __repr__(self) -> str:
        return f"Entry(seq={self.seq}, event={self.event!r}, task_id={self.task_id!r})"


_new_entry = object.__new__  # an ``Entry`` without a Python ``__init__`` call (see ``_keep``)
# Values an event may hold and stay unencoded: immutable, their JSON size known from them.
_PLAIN = frozenset({int, float, bool, type(None)})
_EVENT_ENVELOPE = 70  # {"type":"","task_id":"<32 hex>","data":{},"timestamp":<float>}
_RAW_OVERHEAD = 250  # an unencoded entry also holds the Event and its data's dict
_RAW_ENTRY = _EVENT_ENVELOPE + _RAW_OVERHEAD + _ENTRY_OVERHEAD  # an unencoded entry, but its data


def _encode_event(
    kind: str, task_id: str | None, data: dict[str, Any], timestamp: float, redactor: Redactor
) -> str:
    """An event's entry text: ``{type, task_id, data, timestamp}``, its data redacted."""
    event = {"type": kind, "task_id": task_id, "data": redactor.fields(data),
             "timestamp": timestamp}  # fmt: skip
    return _json(event)


async def _wait_set(event: asyncio.Event, seconds: float) -> bool:
    """Until ``event`` is set (True) or ``seconds`` pass (False). Not ``asyncio.wait_for``: on
    Python 3.11 it drops a cancellation that comes as the event is set, and a stream then
    outlives its client."""
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        return False
    return True


def _json(payload: Any) -> str:
    """JSON text for an entry: pydantic-core's encoder, about 8x ``json.dumps`` on an event;
    what it cannot encode is written as its ``str()``, as ``json.dumps(default=str)`` did."""
    return to_json(payload, fallback=str).decode()


def restart_seq() -> int:
    """Where a server's event ids start: microseconds since the epoch, above every id an
    earlier run of the server on this machine gave out (unless it gave more than a million
    a second). From 1, a plugin that reattached after a restart with its ``Last-Event-ID``
    (114) to the task it had followed, resumed since, got an empty stream: the resumed
    task's events were ids 3 to 8 of the new run, all "before" the one it had seen. Below
    2**53, so JavaScript reads it as the same number."""
    return time.time_ns() // 1000


def format_entry(entry: Entry) -> bytes:
    return f"id: {entry.seq}\nevent: {entry.event}\ndata: {entry.data}\n\n".encode()


class _TaskLog:
    __slots__ = ("_changed", "bytes", "entries", "session_id")

    def __init__(self, session_id: str | None) -> None:
        self.session_id = session_id
        self.entries: deque[Entry] = deque()
        self.bytes = 0
        self._changed: asyncio.Event | None = None

    def drop_oldest(self) -> int:
        """Forget the oldest entry; its size."""
        size = self.entries.popleft().size
        self.bytes -= size
        return size

    @property
    def changed(self) -> asyncio.Event:
        """What followers of this task wait on; made when one asks (most entries have no
        follower: a JSON reply), set and let go at the next entry."""
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    def wake(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None


class EventLog:
    """Journals runtime events per task (and all of them, recent first) for SSE streams."""

    def __init__(
        self,
        redactor: Redactor | None = None,
        *,
        per_task_bytes: int = PER_TASK_BYTES,
        total_bytes: int = TOTAL_BYTES,
        recent_bytes: int = RECENT_BYTES,
        first_seq: int = 0,
    ) -> None:
        self.seq = self.first_seq = first_seq  # the first entry's id is the one after it
        self.redactor = redactor or Redactor()
        self.per_task_bytes = per_task_bytes
        self.total_bytes = total_bytes
        self.recent_bytes = recent_bytes
        self.bytes = 0  # of every task's entries
        self._tasks: OrderedDict[str, _TaskLog] = OrderedDict()
        self._recent: deque[Entry] = deque()
        self._recent_size = 0
        self._changed_at: asyncio.Event | None = None  # see ``changed``
        self._loop = asyncio.get_running_loop()
        self._thread = get_ident()
        self.closed = False

    # --- writing -------------------------------------------------------------------------

    def bind(self, task_id: str, session_id: str | None) -> None:
        """Say which session a task belongs to (before its events come)."""
        log = self._tasks.get(task_id)
        if log is None:
            self._tasks[task_id] = _TaskLog(session_id)
            self._trim()
        else:
            log.session_id = session_id or log.session_id
            self._tasks.move_to_end(task_id)

    def on_event(self, event: Event) -> None:
        """An ``Event`` journaled as ``keep_event`` journals its fields (``EventBus.on_raw``)."""
        self.keep_event(event.type, event.task_id, event.data, event.timestamp)

    def keep_event(
        self, kind: str, task_id: str | None, data: dict[str, Any], timestamp: float
    ) -> None:
        """The runtime's subscriber to every event (``EventBus.on_fields``: no ``Event`` is
        built for it, and the data comes unredacted, to be redacted here when encoded)."""
        if get_ident() != self._thread:  # a provider streaming from its own thread
            self._loop.call_soon_threadsafe(self.keep_event, kind, task_id, data, timestamp)
            return
        # The size of its data's JSON when every value is a string or a number, as the journal
        # counts (characters); a dict or a list: encoded now, as it is now (in C), and
        # redacted when read (the walk was most of an event's cost here).
        size = _RAW_ENTRY + len(kind)
        for key, value in data.items():
            type_ = type(value)
            if type_ is str:
                size += len(key) + len(value) + 6
            elif type_ in _PLAIN:
                size += len(key) + 24
            else:
                text = _json({"type": kind, "task_id": task_id, "data": data,
                              "timestamp": timestamp})  # fmt: skip
                self._keep(kind, task_id, None, text, len(text) + _ENTRY_OVERHEAD)
                return
        self._keep(kind, task_id, None, data, size)._time = timestamp

    def add_message(self, message: ChatMessage) -> Entry:
        return self._keep("message", message.task_id, self.redactor.dump(message)[0], None, 0)

    def add(
        self,
        event: str,
        task_id: str | None,
        payload: dict[str, Any] | str,
    ) -> Entry:
        """Journal one entry: ``payload`` is redacted and encoded, or is JSON text already
        redacted."""
        data = payload if isinstance(payload, str) else _json(self.redactor(payload))
        return self._keep(event, task_id, data, None, 0)

    def _keep(
        self,
        event: str,
        task_id: str | None,
        data: str | None,
        raw: dict[str, Any] | str | None,
        size: int,
    ) -> Entry:
        """Journal an entry of JSON text ``data`` (``size`` 0: its own), or of ``raw``, redacted
        when read: an event's data, encoded then (``size`` estimated; its time set by the
        caller), or its JSON text."""
        self.seq = seq = self.seq + 1
        log = None
        if task_id:
            log = self._tasks.get(task_id)
            if log is None:
                log = self._tasks[task_id] = _TaskLog(None)
                self._trim()
        if data is not None:
            size = len(data) + _ENTRY_OVERHEAD
        entry: Entry = _new_entry(Entry)  # Entry(...) without the Python call
        entry.seq = seq
        entry.event = event
        entry.task_id = task_id
        entry.session_id = None if log is None else log.session_id
        entry.size = size
        entry._data = data
        entry._raw = raw
        entry._redactor = None if raw is None else self.redactor
        # Each bound is tested once before its loop: most entries pass them all (an event of
        # a small task), and the loop's tests were half of this method's cost.
        if log is not None:
            entries = log.entries
            entries.append(entry)
            log.bytes = held = log.bytes + size
            self.bytes = total = self.bytes + size
            if held > self.per_task_bytes or len(entries) > _PER_TASK:
                while len(entries) > 1 and (
                    log.bytes > self.per_task_bytes or len(entries) > _PER_TASK
                ):
                    self.bytes -= log.drop_oldest()
                total = self.bytes
            if total > self.total_bytes:  # (the count of journals was held at bind)
                self._trim()
            if log._changed is not None:  # a follower waits
                log.wake()
        recent = self._recent
        if len(recent) >= _RECENT:  # full (a server that has run a while): the oldest goes
            self._recent_size -= recent.popleft().size
        recent.append(entry)
        recent_size = self._recent_size = self._recent_size + size
        if recent_size > self.recent_bytes:
            while len(recent) > 1 and self._recent_size > self.recent_bytes:
                self._recent_size -= recent.popleft().size
        if self._changed_at is not None:
            self._wake()
        return entry

    def add_marker(self, task_id: str | None = None) -> None:
        """Wake the followers without adding anything (a call ended with no reply)."""
        log = self._tasks.get(task_id) if task_id else None
        if log is not None and log._changed is not None:  # (most calls have no follower)
            log.wake()
        if self._changed_at is not None:
            self._wake()

    @property
    def _changed(self) -> asyncio.Event:
        """What followers of every task wait on: made when one asks, let go when set."""
        if self._changed_at is None:
            self._changed_at = asyncio.Event()
        return self._changed_at

    def _wake(self) -> None:
        if self._changed_at is not None:
            self._changed_at.set()
            self._changed_at = None

    def _trim(self) -> None:
        """Within ``_TASKS_KEPT`` journals and ``total_bytes``: the oldest tasks' oldest entries
        go first (a journal emptied so goes too; the newest entry of all stays)."""
        while len(self._tasks) > _TASKS_KEPT:
            self.bytes -= self._tasks.popitem(last=False)[1].bytes
        while self.bytes > self.total_bytes:
            task_id, log = next(iter(self._tasks.items()))
            if len(self._tasks) == 1 and len(log.entries) <= 1:
                break
            if log.entries:
                self.bytes -= log.drop_oldest()
            if not log.entries:
                del self._tasks[task_id]
                log.wake()

    def close(self) -> None:
        """The server is stopping: followers end after what they have."""
        self.closed = True
        for log in self._tasks.values():
            log.wake()
        self._wake()

    # --- reading -------------------------------------------------------------------------

    def knows(self, task_id: str) -> bool:
        return task_id in self._tasks

    def task_entries(self, task_id: str, after: int) -> list[Entry]:
        log = self._tasks.get(task_id)
        if log is None:
            return []
        newer: list[Entry] = []
        for entry in reversed(log.entries):  # from the end: only the new ones are read
            if entry.seq <= after:
                break
            newer.append(entry)
        newer.reverse()
        return newer

    def replied(self, task_id: str) -> bool:
        """Whether the task's journal holds a reply (a ``message`` entry)."""
        log = self._tasks.get(task_id)
        return log is not None and any(e.event == "message" for e in reversed(log.entries))

    def reply_state(self, task_id: str, after: int) -> str | None:
        """The ``state`` of the task's last reply journaled after ``after``, if any."""
        for entry in reversed(self.task_entries(task_id, after)):
            if entry.event == "message":
                state = json.loads(entry.data).get("state")
                return state if isinstance(state, str) else None
        return None

    def recent_entries(self, after: int, session_id: str | None) -> list[Entry]:
        return [
            e
            for e in self._recent
            if e.seq > after and (session_id is None or e.session_id == session_id)
        ]

    async def wait(self, seconds: float) -> None:
        """Until something is added (or ``seconds`` pass)."""
        await _wait_set(self._changed, seconds)

    async def follow_task(
        self, task_id: str, after: int, *, running: Callable[[], bool]
    ) -> AsyncIterator[Entry | None]:
        """The task's entries after ``after``, then live ones, until a ``message`` entry; or
        at once when nothing more can come (the task is not running). ``None`` = a ping."""
        cursor = after
        while True:
            log = self._tasks.get(task_id)
            # Waited on before reading, so nothing added in between is missed.
            changed = log.changed if log is not None else self._changed
            batch = self.task_entries(task_id, cursor)
            for entry in batch:
                cursor = entry.seq
                yield entry
                if entry.event == "message":
                    return
            if self.closed or (not batch and not running()):
                return
            if batch:
                continue  # the yields let others run: read again before waiting
            if not await _wait_set(changed, PING_S):
                yield None

    async def follow_all(self, after: int, session_id: str | None) -> AsyncIterator[Entry | None]:
        cursor = after
        while not self.closed:
            for entry in self.recent_entries(cursor, session_id):
                cursor = entry.seq
                yield entry
            if not await _wait_set(self._changed, PING_S):
                yield None


class SSEResponse(Response):
    """An ASGI response streaming ``text/event-stream``; it watches for the client leaving
    at the same time (not only when a write fails), and calls ``on_disconnect`` then."""

    def __init__(
        self,
        entries: AsyncIterator[Entry | None],
        *,
        on_disconnect: Callable[[], None] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.entries = entries
        self.on_disconnect = on_disconnect
        self.extra_headers = headers or {}
        self.status_code = 200
        self.background = None
        self.init_headers({})

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-store"),
            (b"x-accel-buffering", b"no"),
            *((k.lower().encode(), v.encode()) for k, v in self.extra_headers.items()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        stream = asyncio.ensure_future(self._stream(send))
        listen = asyncio.ensure_future(self._listen(receive))
        try:
            done, _ = await asyncio.wait({stream, listen}, return_when=asyncio.FIRST_COMPLETED)
            finished = stream in done and not stream.cancelled() and stream.exception() is None
            if not finished and self.on_disconnect is not None:
                self.on_disconnect()  # before the stream is stopped below, not after
        finally:
            for fut in (stream, listen):
                fut.cancel()
            await asyncio.gather(stream, listen, return_exceptions=True)
        if finished:
            with contextlib.suppress(OSError):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _stream(self, send: Any) -> None:
        await send({"type": "http.response.body", "body": b": stream\n\n", "more_body": True})
        async for entry in self.entries:
            body = b": ping\n\n" if entry is None else format_entry(entry)
            await send({"type": "http.response.body", "body": body, "more_body": True})

    @staticmethod
    async def _listen(receive: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
