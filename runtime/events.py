"""One event bus. Every event is ``{type, task_id, data, timestamp}``.

Subscribers are sync or async callables; ``on`` returns the function that unsubscribes. A
subscriber that raises is logged and skipped: it never breaks the task that emitted. With no
subscriber for a type, ``emit`` builds nothing (``listening`` lets a caller skip its data too).
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
        # Tuples, replaced when one subscribes or leaves: ``emit`` walks them as they are (a
        # callback may unsubscribe meanwhile) without a copy per event.
        self._subscribers: dict[str, tuple[EventCallback, ...]] = {}
        self._pending: set[asyncio.Task[Any]] = set()

    def on(self, event_type: str, callback: EventCallback) -> Callable[[], None]:
        self._subscribers[event_type] = (*self._subscribers.get(event_type, ()), callback)

        def unsubscribe() -> None:
            callbacks = list(self._subscribers.get(event_type, ()))
            if callback in callbacks:
                callbacks.remove(callback)
                if callbacks:
                    self._subscribers[event_type] = tuple(callbacks)
                else:
                    del self._subscribers[event_type]

        return unsubscribe

    def listening(self, event_type: str) -> bool:
        """Whether anyone subscribes to ``event_type`` (or to everything): a hot caller asks
        before it builds an event's data."""
        subscribers = self._subscribers
        return bool(subscribers.get(event_type) or subscribers.get("*"))

    def emit(self, event_type: str, task_id: str | None = None, **data: Any) -> Event | None:
        """Deliver an event to its subscribers; None (and nothing built) when there are none."""
        subscribers = self._subscribers
        own, every = subscribers.get(event_type), subscribers.get("*")
        if own is None:
            if every is None:
                return None
            callbacks = every
        else:
            callbacks = own if every is None else own + every
        # Events are shown to people (progress lines, a server's stream): redacted, like logs.
        # Walked, not scanned: an event's data is small, and the walk of a few keys costs
        # less than encoding it and scanning the text (``Redactor.is_clean``).
        event = _event(event_type, task_id, self._redactor.fields(data), self._clock())
        for callback in callbacks:
            try:
                out = callback(event)
                if out is not None and inspect.isawaitable(out):
                    task = asyncio.ensure_future(out)
                    self._pending.add(task)
                    task.add_done_callback(self._async_done)
            except Exception as exc:
                self.logger.error(
                    "agent.error", where="event subscriber", event_type=event_type, error=str(exc)
                )
        return event

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
