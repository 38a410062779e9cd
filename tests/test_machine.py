"""The transition table, exhaustively, and the watchdog timer."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from skillrt._tasks.machine import (
    TRANSITIONS,
    VALIDATED,
    WATCHED_STATES,
    State,
    TaskMachine,
    _build_machine,
    machine_decides,
)
from skillrt.exceptions import InvalidTransition

ALLOWED = {
    ("IDLE", "UNDERSTANDING"),
    ("UNDERSTANDING", "PLANNING"),
    ("UNDERSTANDING", "ERROR"),
    ("UNDERSTANDING", "CANCELLED"),
    ("UNDERSTANDING", "IDLE"),
    ("PLANNING", "EXECUTING"),
    ("PLANNING", "WAITING_INPUT"),
    ("PLANNING", "ERROR"),
    ("PLANNING", "CANCELLED"),
    ("PLANNING", "IDLE"),
    ("EXECUTING", "WAITING_INPUT"),
    ("EXECUTING", "PAUSED"),
    ("EXECUTING", "COMPLETED"),
    ("EXECUTING", "ERROR"),
    ("EXECUTING", "CANCELLED"),
    ("WAITING_INPUT", "EXECUTING"),
    ("WAITING_INPUT", "ERROR"),
    ("WAITING_INPUT", "CANCELLED"),
    ("WAITING_INPUT", "IDLE"),
    ("PAUSED", "PLANNING"),
    ("PAUSED", "EXECUTING"),
    ("PAUSED", "CANCELLED"),
    ("PAUSED", "IDLE"),
    ("COMPLETED", "IDLE"),
    ("ERROR", "IDLE"),
    ("CANCELLED", "IDLE"),
}


def _machine(initial: State, changes: list[tuple[State, State]] | None = None) -> TaskMachine:
    log = changes if changes is not None else []
    return TaskMachine(
        "t1",
        watchdog_s=300,
        on_change=lambda a, b: log.append((a, b)),
        on_timeout=lambda s, t: None,
        initial=initial,
    )


def test_the_table_is_the_design_table() -> None:
    table = {(a.value, b.value) for a, dests in TRANSITIONS.items() for b in dests}
    assert table == ALLOWED


@pytest.mark.parametrize(("source", "dest"), list(itertools.product(State, State)))
def test_every_pair_of_states(source: State, dest: State) -> None:
    changes: list[tuple[State, State]] = []
    machine = _machine(source, changes)
    if (source.value, dest.value) in ALLOWED:
        machine.to(dest)
        assert machine.current is dest
        assert changes == [(source, dest)]
    else:
        with pytest.raises(InvalidTransition) as info:
            machine.to(dest)
        assert machine.current is source  # never silently moved
        assert changes == []
        assert info.value.source == source.value and info.value.dest == dest.value


def test_machines_are_independent() -> None:
    a, b = _machine(State.IDLE), _machine(State.IDLE)
    a.to(State.UNDERSTANDING)
    assert a.current is State.UNDERSTANDING
    assert b.current is State.IDLE


async def test_watchdog_fires_only_in_watched_states() -> None:
    fired: list[tuple[State, float]] = []
    machine = TaskMachine(
        "t2",
        watchdog_s=0.2,
        on_change=lambda a, b: None,
        on_timeout=lambda s, t: fired.append((s, t)),
    )
    machine.to(State.UNDERSTANDING)
    machine.to(State.PLANNING)  # leaving UNDERSTANDING stops its timer
    await asyncio.sleep(0.12)
    machine.to(State.EXECUTING)
    await asyncio.sleep(0.12)
    assert fired == []  # neither state lasted 200 ms
    await asyncio.sleep(0.2)
    assert fired == [(State.EXECUTING, 0.2)]
    assert State.EXECUTING in WATCHED_STATES


async def test_watchdog_stops_when_leaving_watched_states() -> None:
    fired: list[State] = []
    machine = TaskMachine(
        "t3", watchdog_s=0.08, on_change=lambda a, b: None, on_timeout=lambda s, t: fired.append(s)
    )
    machine.to(State.UNDERSTANDING)
    machine.to(State.PLANNING)
    machine.to(State.WAITING_INPUT)  # a person may take as long as they like
    await asyncio.sleep(0.24)
    assert fired == []


@pytest.mark.parametrize(("source", "dest"), list(itertools.product(State, State)))
def test_the_validated_table_is_what_transitions_decides(source: State, dest: State) -> None:
    """For every pair: a fresh ``transitions`` machine, the precomputed table and
    ``TaskMachine.to`` all agree."""
    decided = machine_decides(_build_machine(), source, dest)
    assert (dest.value in VALIDATED[source.value]) is decided
    assert (dest in TRANSITIONS[source]) is decided
    machine = _machine(source)
    if decided:
        machine.to(dest)
        assert machine.current is dest
    else:
        with pytest.raises(InvalidTransition):
            machine.to(dest)


def test_the_validated_table_covers_every_state() -> None:
    assert set(VALIDATED) == {s.value for s in State}


async def test_one_sweep_serves_many_watchdogs() -> None:
    """Machines with different deadlines, entered in any order, each fire once at their own
    deadline; one that left its watched state in time never fires."""
    fired: list[str] = []

    def make(name: str, seconds: float) -> TaskMachine:
        return TaskMachine(
            name,
            watchdog_s=seconds,
            on_change=lambda a, b: None,
            on_timeout=lambda s, t: fired.append(name),
        )

    slow, fast, left = make("slow", 0.36), make("fast", 0.12), make("left", 0.2)
    for machine in (slow, fast, left):
        machine.to(State.UNDERSTANDING)
    await asyncio.sleep(0.04)
    left.to(State.IDLE)
    await asyncio.sleep(0.16)
    assert fired == ["fast"]
    await asyncio.sleep(0.28)
    assert fired == ["fast", "slow"]
    assert fast.current is State.UNDERSTANDING  # the owner decides what a timeout does


async def test_executing_is_a_stall_deadline_that_touch_pushes_back() -> None:
    fired: list[tuple[State, float]] = []
    machine = TaskMachine(
        "t4",
        watchdog_s=0.4,
        on_change=lambda a, b: None,
        on_timeout=lambda s, t: fired.append((s, t)),
    )
    machine.to(State.UNDERSTANDING)
    machine.to(State.PLANNING)
    machine.to(State.EXECUTING)
    for _ in range(6):  # 1.2 s of activity, three times the deadline
        await asyncio.sleep(0.2)
        machine.touch()
    assert fired == []
    await asyncio.sleep(0.8)  # then quiet
    assert fired == [(State.EXECUTING, 0.4)] and machine.fired == "stall"


async def test_understanding_keeps_a_fixed_cap_whatever_happens() -> None:
    fired: list[State] = []
    machine = TaskMachine(
        "t5", watchdog_s=0.4, on_change=lambda a, b: None, on_timeout=lambda s, t: fired.append(s)
    )
    machine.to(State.UNDERSTANDING)
    for _ in range(4):
        await asyncio.sleep(0.16)
        machine.touch()
    assert fired == [State.UNDERSTANDING] and machine.fired == "deadline"


async def test_max_task_s_counts_executing_time_only() -> None:
    fired: list[tuple[State, float]] = []
    machine = TaskMachine(
        "t6",
        watchdog_s=10,
        max_task_s=0.6,
        on_change=lambda a, b: None,
        on_timeout=lambda s, t: fired.append((s, t)),
    )
    machine.to(State.UNDERSTANDING)
    machine.to(State.PLANNING)
    machine.to(State.EXECUTING)
    await asyncio.sleep(0.4)
    machine.to(State.WAITING_INPUT)  # a person's time is not the task's
    await asyncio.sleep(0.8)
    assert fired == []
    machine.to(State.EXECUTING)
    await asyncio.sleep(0.12)
    machine.touch()
    assert fired == []
    await asyncio.sleep(0.24)  # 0.4 + 0.36 > 0.6, although it is busy
    assert fired == [(State.EXECUTING, 0.6)] and machine.fired == "cap"
