"""The task life cycle: one shared ``transitions`` machine, one state per task, and a watchdog.

The transition table is data (``TRANSITIONS``). Each task is its own model, every allowed move
is in the table, an invalid one raises ``InvalidTransition``, and the watchdog's expiry is
handed to the owner, which cancels the running work.

``transitions`` stays the definition: at import every pair of states is put to its machine and
the answers become ``VALIDATED``, the table ``TaskMachine.to`` consults, so a move is a dict
lookup rather than a pass through the library's event machinery. Watchdogs share one timer per
event loop.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Callable
from enum import Enum, StrEnum
from threading import get_ident

from transitions import Machine, MachineError

from skillrt.exceptions import InvalidTransition

__all__ = ["TRANSITIONS", "VALIDATED", "WATCHED_STATES", "State", "TaskMachine", "machine_decides"]


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
"""from -> allowed destinations (docs/design.md, "Task life cycle")."""

WATCHED_STATES: frozenset[State] = frozenset({S.UNDERSTANDING, S.PLANNING, S.EXECUTING})
"""States in which a watchdog timer runs."""

TERMINAL_STATES: frozenset[State] = frozenset({S.COMPLETED, S.ERROR, S.CANCELLED})


def _build_machine() -> Machine:
    """The ``transitions`` machine of the table: one ``go_<DEST>`` event per destination."""
    by_dest: dict[State, list[str | Enum]] = {}
    for source, dests in TRANSITIONS.items():
        for dest in dests:
            by_dest.setdefault(dest, []).append(source.value)
    machine = Machine(
        model=None,
        states=[s.value for s in State],
        initial=State.IDLE.value,
        auto_transitions=False,
    )
    for dest, sources in by_dest.items():
        machine.add_transition(f"go_{dest.value}", sorted(sources, key=str), dest.value)
    return machine


class _Probe:
    """A model for asking the ``transitions`` machine one question."""

    def __init__(self, state: str) -> None:
        self.state = state


def machine_decides(machine: Machine, source: State, dest: State) -> bool:
    """What ``transitions`` decides for ``source -> dest``: does the event move a model there?"""
    probe = _Probe(source.value)
    try:
        moved = machine.events[f"go_{dest.value}"].trigger(probe)
    except MachineError:
        return False
    return bool(moved) and probe.state == dest.value


def _validated_table(machine: Machine) -> dict[str, frozenset[str]]:
    """Every pair of states put to ``transitions``; the answers, as ``source -> {dest}``.

    This is what ``TaskMachine.to`` consults instead of the library's event machinery. It is
    derived from the library's own decisions, checked
    here against ``TRANSITIONS`` (and by tests/test_machine.py for every pair).
    """
    table = {
        source.value: frozenset(d.value for d in State if machine_decides(machine, source, d))
        for source in State
    }
    expected = {s.value: frozenset(d.value for d in dests) for s, dests in TRANSITIONS.items()}
    if table != expected:  # pragma: no cover - a broken table must not load
        raise RuntimeError(f"transitions decides {table}, the table says {expected}")
    return table


_BY_VALUE: dict[str, State] = {s.value: s for s in State}
"""``State(value)`` as a dict lookup, cheaper than the enum call: the runtime asks a task's
state at every input (looking for a task that waits for an answer) and at every transition."""

_MACHINE = _build_machine()
VALIDATED: dict[str, frozenset[str]] = _validated_table(_MACHINE)
"""source -> allowed destinations, as ``transitions`` decided them at import."""

_WATCHED: frozenset[str] = frozenset(s.value for s in WATCHED_STATES)
_EXECUTING = State.EXECUTING.value


class _Sweep:
    """One timer per event loop for every watched task.

    Deadlines live in a dict (machine -> loop time); the loop's single timer is set for the
    earliest. Entering a watched state is a dict store (and a reschedule only when the new
    deadline is the earliest); leaving is a dict pop. When the timer fires, every machine past
    its deadline is told, and the timer is set for the next deadline.
    """

    __slots__ = ("deadlines", "timer", "when")

    _SLACK = 0.001  # a timer may run a little early (the loop's clock resolution)

    def __init__(self) -> None:
        self.deadlines: dict[TaskMachine, float] = {}
        self.timer: asyncio.TimerHandle | None = None
        self.when = 0.0

    def watch(self, loop: asyncio.AbstractEventLoop, machine: TaskMachine, deadline: float) -> None:
        self.deadlines[machine] = deadline
        if self.timer is None or deadline < self.when:
            self._schedule(loop, deadline)

    def unwatch(self, machine: TaskMachine) -> None:
        # The timer is left to run even when nothing is watched: it finds nothing due and stops,
        # and until then a new deadline (never earlier, for one watchdog_s) costs no reschedule.
        self.deadlines.pop(machine, None)

    def _schedule(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.when = when
        self.timer = loop.call_at(when, self._fire, loop)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        self.timer = None
        now = loop.time() + self._SLACK
        due = [m for m, when in self.deadlines.items() if when <= now]
        for machine in due:
            del self.deadlines[machine]
        if self.deadlines:
            self._schedule(loop, min(self.deadlines.values()))
        else:
            self.when = 0.0
        for machine in due:
            machine._expire()


_SWEEPS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Sweep] = weakref.WeakKeyDictionary()


_LAST: list[tuple[weakref.ref[asyncio.AbstractEventLoop], _Sweep]] = []  # the last asked


def _sweep_for(loop: asyncio.AbstractEventLoop) -> _Sweep:
    # The sweep of the loop that asked last, first: a ``WeakKeyDictionary`` lookup is Python
    # code, at every watched state. That loop is held weakly here too.
    if _LAST and _LAST[0][0]() is loop:
        return _LAST[0][1]
    sweep = _SWEEPS.get(loop)
    if sweep is None:
        sweep = _SWEEPS[loop] = _Sweep()
    _LAST[:] = [(weakref.ref(loop), sweep)]
    return sweep


class TaskMachine:
    """A task's state, moved only along the validated table, with its watchdog.

    ``on_change(source, dest)`` runs after every change; ``on_timeout(state, seconds)`` runs
    when the watchdog fires, with ``fired`` saying why:

    - ``deadline``: UNDERSTANDING or PLANNING lasted ``watchdog_s`` (a short, fixed cap);
    - ``stall``: EXECUTING saw nothing happen for ``watchdog_s``; ``touch()`` (progress, a
      step, a streamed token, model bytes) pushes that deadline back, so steady work is never
      stopped;
    - ``cap``: EXECUTING time of this run passed ``max_task_s`` (None: no cap), whatever it did.

    Deadlines are kept by the running loop's one sweep (``_Sweep``); leaving the state drops
    the deadline. ``touch`` only stores a time (the sweep looks at it when the deadline comes),
    so it is cheap and may be called from any thread.
    """

    __slots__ = (
        "__weakref__",
        "_due",
        "_executed_s",
        "_executing_since",
        "_last_activity",
        "_on_change",
        "_on_timeout",
        "_since",
        "_sweep",
        "fired",
        "max_task_s",
        "state",
        "task_id",
        "watchdog_s",
    )

    def __init__(
        self,
        task_id: str,
        *,
        watchdog_s: float,
        on_change: Callable[[State, State], None],
        on_timeout: Callable[[State, float], None],
        initial: State = State.IDLE,
        max_task_s: float | None = None,
    ) -> None:
        self.task_id = task_id
        self.watchdog_s = watchdog_s
        self.max_task_s = max_task_s
        self.fired = ""  # why the watchdog fired: deadline | stall | cap
        self._last_activity = time.monotonic()
        self._executed_s = 0.0  # EXECUTING time of this run before the current stretch
        self._executing_since: float | None = None
        self._on_change = on_change
        self._on_timeout = on_timeout
        self._sweep: _Sweep | None = None  # set while a deadline is watched
        self._since = 0.0  # when the current watched state was entered (``time.monotonic``)
        self._due = 0.0  # the monotonic time the sweep looks at this machine (``_sweep`` set)
        self.state: str = initial._value_

    @property
    def current(self) -> State:
        return _BY_VALUE[self.state]

    def can(self, dest: State) -> bool:
        return dest.value in VALIDATED[self.state]

    def to(self, dest: State) -> None:
        """Move to ``dest`` or raise ``InvalidTransition``."""
        source = self.move(dest)
        self._on_change(_BY_VALUE[source], _BY_VALUE[self.state])

    def move(self, dest: State) -> str:
        """``to`` without ``on_change``: returns the value of the state it left (a ``Task``
        tells its owner itself, without a callback through a weak reference)."""
        source = self.state
        value = dest._value_  # not ``.value``: the enum's property is two Python calls
        if value not in VALIDATED[source]:
            raise InvalidTransition(self.task_id, source, value)
        self.state = value
        if value in _WATCHED:
            self._enter(value)
        elif self._sweep is not None or self._executing_since is not None:
            self.stop()
        return source

    def force(self, state: State) -> None:
        """Set the state without a transition (a task restored from a checkpoint)."""
        self.stop()
        self.state = state.value

    def stop(self) -> None:
        """Stop the watchdog (the task is over or is being dropped)."""
        if self._sweep is not None:
            self._sweep.unwatch(self)
            self._sweep = None
        if self._executing_since is not None:
            self._executed_s += time.monotonic() - self._executing_since
            self._executing_since = None

    def touch(self) -> None:
        """Something happened: push the EXECUTING stall deadline back."""
        self._last_activity = time.monotonic()

    @property
    def idle_s(self) -> float:
        """Seconds since the last ``touch``."""
        return time.monotonic() - self._last_activity

    def _cap_left(self) -> float | None:
        if self.max_task_s is None:
            return None
        running = time.monotonic() - self._executing_since if self._executing_since else 0.0
        return self.max_task_s - self._executed_s - running

    def _enter(self, value: str) -> None:
        """A watched state entered: its deadline is ``watchdog_s`` from now (in EXECUTING, the
        earlier of the stall and the cap). One watched state after another (UNDERSTANDING,
        PLANNING, EXECUTING in one stretch) leaves the sweep's entry as it is when it is due no
        later than the new deadline: ``_expire`` works out the deadline of the state the
        machine is in when the sweep looks, and watches again if it has not passed. A sweep's
        entry is made (a loop's time, a dict store) once a stretch, not once a state."""
        now = time.monotonic()
        if self._executing_since is not None:  # (EXECUTING left for a watched state)
            self._executed_s += now - self._executing_since
            self._executing_since = None
        self._since = now
        wait = self.watchdog_s
        if value == _EXECUTING:
            self._last_activity = now
            self._executing_since = now
            if self.max_task_s is not None:
                wait = max(0.0, min(wait, self.max_task_s - self._executed_s))
        due = now + wait
        sweep = self._sweep
        if sweep is not None:
            if self._due <= due:
                return  # looked at sooner than due: ``_expire`` watches again from there
            sweep.unwatch(self)
            self._sweep = None
        self._watch(wait, due)

    def _watch(self, wait: float, due: float) -> None:
        last = _LAST[0][0]() if _LAST else None
        if last is not None and getattr(last, "_thread_id", None) == get_ident():
            loop = last  # the loop this thread runs, without asking (getpid() in CPython 3.11)
        else:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return  # no loop (a synchronous test of the table): nothing to watch
        sweep = _sweep_for(loop)
        sweep.watch(loop, self, loop.time() + wait)
        self._sweep = sweep
        self._due = due

    def _expire(self) -> None:
        """The sweep found this machine past its deadline (it has already dropped it).

        In EXECUTING the deadline is the earlier of the stall and the cap: if neither has
        really passed (there was activity since), the next one is watched instead.
        """
        self._sweep = None
        if self.state not in _WATCHED:
            return
        state = _BY_VALUE[self.state]
        if state is not State.EXECUTING:
            # Entered after the deadline the sweep had (``_enter``): its own may be later.
            left = self.watchdog_s - (time.monotonic() - self._since)
            if left <= _Sweep._SLACK:
                self._fire(state, "deadline", self.watchdog_s)
                return
        else:
            cap = self._cap_left()
            if cap is not None and cap <= _Sweep._SLACK:
                self._fire(state, "cap", self.max_task_s or 0.0)
                return
            stall = self.watchdog_s - self.idle_s
            if stall <= _Sweep._SLACK:
                self._fire(state, "stall", self.watchdog_s)
                return
            left = stall if cap is None else min(stall, cap)
        loop = asyncio.get_running_loop()
        sweep = _sweep_for(loop)
        sweep.watch(loop, self, loop.time() + left)
        self._sweep = sweep
        self._due = time.monotonic() + left

    def _fire(self, state: State, why: str, seconds: float) -> None:
        self.fired = why
        self._on_timeout(state, seconds)
