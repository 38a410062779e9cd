"""The task life cycle: one shared ``transitions`` machine, one state per task, and a watchdog.

The transition table is data (``TRANSITIONS``). The seed kept one global state for all tasks,
lacked COMPLETED->IDLE, UNDERSTANDING->ERROR and any way out of PAUSED, silently ignored
invalid transitions, and its watchdog only relabelled the state while the work went on. Here
each task is its own model, every allowed move is in the table, an invalid one raises
``InvalidTransition``, and the watchdog's expiry is handed to the owner, which cancels the
running work.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from enum import Enum, StrEnum
from typing import Any, ClassVar

from transitions import Machine, MachineError

from skillrt.exceptions import InvalidTransition

__all__ = ["TRANSITIONS", "WATCHED_STATES", "State", "TaskMachine"]


class State(StrEnum):
    IDLE = "IDLE"
    UNDERSTANDING = "UNDERSTANDING"
    PLANNING = "PLANNING"
    EXECUTING = "EXECUTING"
    WAITING_INPUT = "WAITING_INPUT"
    PAUSED = "PAUSED"
    COMPLETED = "COMPLETED"
    ERROR = "ERROR"
    CANCELLED = "CANCELLED"


S = State
TRANSITIONS: dict[State, frozenset[State]] = {
    S.IDLE: frozenset({S.UNDERSTANDING}),
    S.UNDERSTANDING: frozenset({S.PLANNING, S.ERROR, S.CANCELLED, S.IDLE}),
    S.PLANNING: frozenset({S.EXECUTING, S.WAITING_INPUT, S.ERROR, S.CANCELLED, S.IDLE}),
    S.EXECUTING: frozenset({S.WAITING_INPUT, S.PAUSED, S.COMPLETED, S.ERROR, S.CANCELLED}),
    S.WAITING_INPUT: frozenset({S.EXECUTING, S.ERROR, S.CANCELLED, S.IDLE}),
    S.PAUSED: frozenset({S.PLANNING, S.EXECUTING, S.CANCELLED, S.IDLE}),
    S.COMPLETED: frozenset({S.IDLE}),
    S.ERROR: frozenset({S.IDLE}),
    S.CANCELLED: frozenset({S.IDLE}),
}
"""from -> allowed destinations (DESIGN.md, "Task life cycle")."""

WATCHED_STATES: frozenset[State] = frozenset({S.UNDERSTANDING, S.PLANNING, S.EXECUTING})
"""States in which a watchdog timer runs."""

TERMINAL_STATES: frozenset[State] = frozenset({S.COMPLETED, S.ERROR, S.CANCELLED})


def _build_machine() -> Machine:
    by_dest: dict[State, list[str | Enum]] = {}
    for source, dests in TRANSITIONS.items():
        for dest in dests:
            by_dest.setdefault(dest, []).append(source.value)
    machine = Machine(
        model=None,
        states=[s.value for s in State],
        initial=State.IDLE.value,
        auto_transitions=False,
        send_event=True,
        after_state_change="_after_state_change",
    )
    for dest, sources in by_dest.items():
        machine.add_transition(f"go_{dest.value}", sorted(sources, key=str), dest.value)
    return machine


_BY_VALUE: dict[str, State] = {s.value: s for s in State}
"""``State(value)`` as a dict lookup: the enum call costs a microsecond, and the runtime asks a
task's state at every input (looking for a task that waits for an answer) and transition."""

_MACHINE = _build_machine()
_EVENTS: dict[str, Any] = {s.value: _MACHINE.events[f"go_{s.value}"] for s in State}


class TaskMachine:
    """A task's state, driven by the one shared machine, with its watchdog.

    ``on_change(source, dest)`` runs after every change; ``on_timeout(state, timeout_s)``
    runs when a watched state outlives ``watchdog_s``. Timers are asyncio timers on the
    running loop; leaving the state cancels them.
    """

    _events: ClassVar[dict[str, Any]] = _EVENTS

    state: str  # set by the machine

    def __init__(
        self,
        task_id: str,
        *,
        watchdog_s: float,
        on_change: Callable[[State, State], None],
        on_timeout: Callable[[State, float], None],
        initial: State = State.IDLE,
    ) -> None:
        self.task_id = task_id
        self.watchdog_s = watchdog_s
        self._on_change = on_change
        self._on_timeout = on_timeout
        self._timer: asyncio.TimerHandle | None = None
        self.state = initial.value

    @property
    def current(self) -> State:
        return _BY_VALUE[self.state]

    def can(self, dest: State) -> bool:
        return dest in TRANSITIONS[self.current]

    def to(self, dest: State) -> None:
        """Move to ``dest`` or raise ``InvalidTransition``."""
        source = self.state
        try:
            moved = self._events[dest.value].trigger(self)
        except MachineError as exc:
            raise InvalidTransition(self.task_id, source, dest.value) from exc
        if not moved:  # pragma: no cover - no conditions are used, so a valid source moves
            raise InvalidTransition(self.task_id, source, dest.value)

    def force(self, state: State) -> None:
        """Set the state without a transition (a task restored from a checkpoint)."""
        self._stop_watchdog()
        self.state = state.value

    def stop(self) -> None:
        """Stop the watchdog (the task is over or is being dropped)."""
        self._stop_watchdog()

    def _after_state_change(self, event: Any) -> None:
        source = _BY_VALUE[event.transition.source]
        dest = _BY_VALUE[event.transition.dest]
        self._stop_watchdog()
        if dest in WATCHED_STATES:
            self._start_watchdog(dest)
        self._on_change(source, dest)

    def _start_watchdog(self, state: State) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (a synchronous test of the table): nothing to watch
        self._timer = loop.call_later(self.watchdog_s, self._fire, state)

    def _stop_watchdog(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fire(self, state: State) -> None:
        self._timer = None
        if self.state == state.value:
            self._on_timeout(state, self.watchdog_s)
