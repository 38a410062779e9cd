"""One event bus. Every event is ``{type, task_id, data, timestamp}``.

Subscribers are sync or async callables; ``on`` returns the function that unsubscribes. A
subscriber that raises is logged and skipped: it never breaks the task that emitted. With no
subscriber for a type, ``emit`` builds nothing (``listening`` lets a caller skip its data too).

A subscriber gets the event's data redacted. One that redacts what it shows itself (the
server's journal, which keeps most events unread and redacts one when a stream reads it)
subscribes with ``on_raw``: when only such subscribers listen, the data is not walked at all.
A subscriber that keeps every event's fields, never the event itself (the server's journal),
subscribes with ``on_fields``: it is called with them, and no ``Event`` is built for it.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from skillrt._io.logs import Redactor, library_logger

__all__ = ["Event", "EventBus", "EventCallback", "TaskEmitter"]


_EVENT_KEYS = ("type", "task_id", "data", "timestamp")
_ROUTES_KEPT = 256  # event types whose subscribers ``EventBus`` keeps looked up


@dataclass(frozen=True, slots=True)
class Event:
    type: str
    task_id: str | None
    data: dict[str, Any] = field(default_factory=dict)
    timestamp: float = 0.0

    def __getitem__(self, key: str) -> Any:
        """``event["data"]`` as well as ``event.data``: an event reads as the mapping
        ``{type, task_id, data, timestamp}`` the docs describe."""
        if key not in _EVENT_KEYS:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in _EVENT_KEYS else default

    def keys(self) -> tuple[str, ...]:
        return _EVENT_KEYS

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "task_id": self.task_id,
            "data": self.data,
            "timestamp": self.timestamp,
        }


EventCallback = Callable[[Event], object]
FieldsCallback = Callable[[str, "str | None", dict[str, Any], float], object]
"""``on_fields``' subscriber: ``(type, task_id, data, timestamp)``, the data unredacted."""

# An event as ``Event(...)`` makes it, without the frozen dataclass's ``__init__`` (a
# ``object.__setattr__`` call per field: twice the cost, at every event of every task).
_new = object.__new__
_SETTERS: tuple[Any, ...] = tuple(vars(Event)[key].__set__ for key in _EVENT_KEYS)
_set_type, _set_task_id, _set_data, _set_timestamp = _SETTERS


def _event(event_type: str, task_id: str | None, data: dict[str, Any], timestamp: float) -> Event:
    event: Event = _new(Event)
    _set_type(event, event_type)
    _set_task_id(event, task_id)
    _set_data(event, data)
    _set_timestamp(event, timestamp)
    return event


class EventBus:
    """Publish/subscribe by event type; ``"*"`` subscribes to everything."""

    def __init__(
        self,
        clock: Callable[[], float] = time.time,
        *,
        redactor: Redactor | None = None,
        logger: structlog.stdlib.BoundLogger | None = None,
    ) -> None:
        self._clock = clock
        self.logger = logger or library_logger("skillrt.events")
        self._redactor = redactor or Redactor()
        # By type, tuples of callbacks (see ``_subscribe``), and who gets each type (``_route``).
        self._subscribers: dict[str, tuple[EventCallback, ...]] = {}
        self._raw: dict[str, tuple[EventCallback, ...]] = {}  # see ``on_raw``
        self._fields: tuple[FieldsCallback, ...] = ()  # see ``on_fields``
        self._routes: dict[str, tuple[tuple[EventCallback, ...], ...]] = {}
        self._pending: set[asyncio.Task[Any]] = set()

    def on(self, event_type: str, callback: EventCallback) -> Callable[[], None]:
        return self._subscribe(self._subscribers, event_type, callback)

    def on_raw(self, event_type: str, callback: EventCallback) -> Callable[[], None]:
        """Subscribe to events whose data is NOT redacted: for a subscriber that redacts
        whatever it shows or keeps beyond the call (``Redactor.fields`` on ``event.data``), and
        never hands the event itself on. Such a subscriber costs the emitter no walk of the
        data."""
        return self._subscribe(self._raw, event_type, callback)

    def on_fields(self, callback: FieldsCallback) -> Callable[[], None]:
        """Subscribe to every event as its fields, ``callback(type, task_id, data,
        timestamp)``, the data NOT redacted (as ``on_raw``): for a subscriber that keeps them
        and never the event (the server's journal). No ``Event`` is built for it: when only
        such subscribers listen, ``emit`` builds nothing but the timestamp and returns None."""
        self._fields = (*self._fields, callback)

        def unsubscribe() -> None:
            kept = list(self._fields)
            if callback in kept:
                kept.remove(callback)
                self._fields = tuple(kept)

        return unsubscribe

    def listening(self, event_type: str) -> bool:
        """Whether anyone subscribes to ``event_type`` (or to everything): a hot caller asks
        before it builds an event's data."""
        raw, shown = self._route(event_type)
        return bool(raw or shown or self._fields)

    def emit(self, event_type: str, task_id: str | None = None, **data: Any) -> Event | None:
        """Deliver an event to its subscribers; None (and nothing built) when there are none.
        The event returned is the one the redacted subscribers got (the raw one when only raw
        subscribers listen; None when only ``on_fields`` subscribers do)."""
        route = self._routes.get(event_type)
        if route is None:
            route = self._route(event_type)
        raw, shown = route
        fields = self._fields
        if not raw and not shown and not fields:
            return None
        timestamp = self._clock()
        event = None
        for keep in fields:  # the journal, in ``skillrt serve``: a task's seven events
            try:
                keep(event_type, task_id, data, timestamp)
            except Exception as exc:
                self._failed(event_type, exc)
        if raw:
            # ``_event`` and ``_deliver`` written out (two calls fewer per event).
            event = _new(Event)
            _set_type(event, event_type)
            _set_task_id(event, task_id)
            _set_data(event, data)
            _set_timestamp(event, timestamp)
            for callback in raw:
                try:
                    out = callback(event)
                    if out is not None:
                        self._awaited(out)
                except Exception as exc:
                    self._failed(event_type, exc)
        if shown:
            # Events are shown to people (progress lines, a server's stream): redacted, like
            # logs. Walked, not scanned: an event's data is small, and the walk of a few keys
            # costs less than encoding it and scanning the text (``Redactor.is_clean``).
            event = _event(event_type, task_id, self._redactor.fields(data), timestamp)
            self._deliver(event_type, event, shown)
        return event

    def _deliver(self, event_type: str, event: Event, callbacks: tuple[EventCallback, ...]) -> None:
        """Call each of ``callbacks`` with ``event``; one that fails is logged, never stops
        the others or the emitter."""
        for callback in callbacks:
            try:
                out = callback(event)
                if out is not None:
                    self._awaited(out)
            except Exception as exc:
                self._failed(event_type, exc)

    def _route(self, event_type: str) -> tuple[tuple[EventCallback, ...], ...]:
        """Who gets ``event_type``: (raw subscribers, redacted subscribers), the type's own
        first, then those of everything; kept by type until one subscribes or leaves."""
        route = self._routes.get(event_type)
        if route is None:
            raw, shown = self._raw, self._subscribers
            route = (
                (*raw.get(event_type, ()), *raw.get("*", ())),
                (*shown.get(event_type, ()), *shown.get("*", ())),
            )
            if len(self._routes) >= _ROUTES_KEPT:  # a skill may emit types of its own
                self._routes.clear()
            self._routes[event_type] = route
        return route

    def _subscribe(
        self, table: dict[str, tuple[EventCallback, ...]], event_type: str, callback: EventCallback
    ) -> Callable[[], None]:
        """Add ``callback`` to ``table`` (tuples, replaced when one subscribes or leaves:
        ``emit`` walks them as they are, a callback may unsubscribe meanwhile, without a copy
        per event). A callback that is not callable is a ``TypeError`` here, not an error
        logged at every event; any event name is taken (skills and plugins emit their own),
        but not a blank one: ``rt.on("", cb)`` was taken, and ``cb`` never called."""
        if not isinstance(event_type, str):
            raise TypeError(f"event type must be a str, not {type(event_type).__name__}")
        if not event_type.strip():
            raise ValueError(
                f"event type {event_type!r} is blank: name one (task:progress) or '*' for all"
            )
        if not callable(callback):
            raise TypeError(f"callback must be callable, not {type(callback).__name__}")
        table[event_type] = (*table.get(event_type, ()), callback)
        self._routes.clear()

        def unsubscribe() -> None:
            callbacks = list(table.get(event_type, ()))
            if callback in callbacks:
                callbacks.remove(callback)
                if callbacks:
                    table[event_type] = tuple(callbacks)
                else:
                    del table[event_type]
                self._routes.clear()

        return unsubscribe

    def _awaited(self, out: object) -> None:
        """An async subscriber's coroutine: run as a task of its own."""
        if inspect.isawaitable(out):
            task = asyncio.ensure_future(out)
            self._pending.add(task)
            task.add_done_callback(self._async_done)

    def _failed(self, event_type: str, exc: Exception) -> None:
        self.logger.error(
            "agent.error", where="event subscriber", event_type=event_type, error=str(exc)
        )

    def bind(self, task_id: str) -> TaskEmitter:
        """An emitter for one task: ``emit(type, **data)`` with the task id filled in."""
        return TaskEmitter(self, task_id)

    def _async_done(self, task: asyncio.Task[Any]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.logger.error("agent.error", where="event subscriber", error=str(task.exception()))


class TaskEmitter:
    """The bus, bound to one task (what a skill sees as ``ctx.events``)."""

    __slots__ = ("_bus", "_task_id")

    def __init__(self, bus: EventBus, task_id: str) -> None:
        self._bus = bus
        self._task_id = task_id

    def emit(self, event_type: str, **data: Any) -> None:
        self._bus.emit(event_type, self._task_id, **data)
