"""The runtime's tasks by id: live ``Task`` objects, and restored ones not built yet.

A restored checkpoint stays *dormant* (its id, state, and its JSON or record) until something
asks for that task by id (resume, abandon, abort, get_task); only then is its record parsed
and its ``Task`` built, so a start with thousands of resumable tasks builds none of them.
``get``, ``in`` and ``pop`` see both kinds; ``values()`` is the live tasks only, which is what
the per-input scans (the foreground task, a task waiting for an answer) look at: a restored task
is PAUSED and never foreground until it is resumed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, KeysView, Mapping
from typing import TYPE_CHECKING, Protocol

from skillrt._state.protocol import LazyRecord
from skillrt._state.records import TaskRecord
from skillrt._tasks.machine import State
from skillrt.outcomes import as_restored, is_resumable

if TYPE_CHECKING:
    from skillrt._tasks.task import Task

__all__ = ["ACTIVE_STATES", "TaskTable"]

ACTIVE_STATES = frozenset(
    {State.UNDERSTANDING, State.PLANNING, State.EXECUTING, State.WAITING_INPUT}
)
"""A task in one of these is working, or waiting for its user."""


class TaskView(Protocol):
    """The live tasks: iterable both ways (a dict's values view)."""

    def __iter__(self) -> Iterator[Task]: ...
    def __reversed__(self) -> Iterator[Task]: ...
    def __len__(self) -> int: ...


def _no_parse(entry: LazyRecord) -> TaskRecord | None:  # pragma: no cover - set at initialize
    return None


def _no_build(record: TaskRecord) -> Task:  # pragma: no cover - set at initialize
    raise RuntimeError("the task table cannot build tasks before the runtime is initialised")


class TaskTable:
    """``dict[str, Task]`` as the runtime uses it, plus dormant restored records.

    ``parse`` reads a dormant entry's record from its JSON (None: unusable, moved aside) and
    ``build`` makes a restored ``Task`` of a record; both are given once the runtime is open.
    """

    def __init__(self) -> None:
        self._live: dict[str, Task] = {}
        self._dormant: dict[str, LazyRecord | TaskRecord] = {}
        self._waiting: dict[str, dict[str, Task]] = {}  # session -> its tasks asking the user
        self.parse: Callable[[LazyRecord], TaskRecord | None] = _no_parse
        self.build: Callable[[TaskRecord], Task] = _no_build

    # --- what a dict offers -------------------------------------------------------------------

    def get(self, task_id: str) -> Task | None:
        task = self._live.get(task_id)
        if task is None and task_id in self._dormant:
            record = self.record(task_id)
            self._dormant.pop(task_id, None)
            if record is not None:
                task = self._live[task_id] = self.build(record)
        return task

    def live(self, task_id: str) -> Task | None:
        """A live task (never builds a dormant one)."""
        return self._live.get(task_id)

    def __setitem__(self, task_id: str, task: Task) -> None:
        self._dormant.pop(task_id, None)
        self._live[task_id] = task

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._live or task_id in self._dormant

    def pop(self, task_id: str, default: None = None) -> Task | None:
        self._dormant.pop(task_id, None)
        task = self._live.pop(task_id, default)
        if task is not None and self._waiting:  # (no session has a task asking: nothing to drop)
            self.note_waiting(task, False)
        return task

    def values(self) -> TaskView:
        """The live tasks (in the order they were made or built)."""
        return self._live.values()

    def foreground(self) -> Task | None:
        """The newest live task still working or waiting for an answer."""
        return next((t for t in reversed(self._live.values()) if t.state in ACTIVE_STATES), None)

    def waiting(self, session_id: str) -> Task | None:
        """The newest task of ``session_id`` waiting for an answer (asked at every input: a
        lookup in the session's waiting tasks, not a scan of every live task)."""
        asking = self._waiting.get(session_id)
        if asking:
            for task in reversed(asking.values()):
                if task.machine.state == _WAITING and task.id in self._live:
                    return task
        return None

    def note_waiting(self, task: Task, waiting: bool) -> None:
        """``task`` entered (True) or left (False) WAITING_INPUT."""
        session = task.record.session_id
        if waiting:
            self._waiting.setdefault(session, {})[task.id] = task
            return
        asking = self._waiting.get(session)
        if asking is not None:
            asking.pop(task.id, None)
            if not asking:
                del self._waiting[session]

    def values_ids(self) -> KeysView[str]:
        """The ids of the live tasks."""
        return self._live.keys()

    def __iter__(self) -> Iterator[str]:
        yield from list(self._dormant)
        yield from list(self._live)

    def __len__(self) -> int:
        return len(self._live) + len(self._dormant)

    # --- restored tasks -------------------------------------------------------------------------

    def restore(self, entries: Iterable[LazyRecord | TaskRecord]) -> list[str]:
        """Add the resumable ones of ``entries`` (checkpoints read at start-up, or records
        another worker wrote) as dormant tasks; returns their ids."""
        ids: list[str] = []
        live, dormant = self._live, self._dormant  # thousands at start-up: no method calls
        for entry in entries:
            task_id = entry.id
            if task_id in live or task_id in dormant or not is_resumable(entry):
                continue
            dormant[task_id] = entry if isinstance(entry, LazyRecord) else as_restored(entry)
            ids.append(task_id)
        return ids

    def record(self, task_id: str) -> TaskRecord | None:
        """A dormant task's record, parsed once (None: not dormant, or unusable and dropped)."""
        entry = self._dormant.get(task_id)
        if entry is None or not isinstance(entry, LazyRecord):
            return entry
        parsed = self.parse(entry)
        if parsed is None:
            self._dormant.pop(task_id, None)
            return None
        record = self._dormant[task_id] = as_restored(parsed)
        return record

    def dormant_entries(self) -> list[LazyRecord | TaskRecord]:
        """Every dormant task as it is held: its record, or its checkpoint not parsed yet."""
        return list(self._dormant.values())

    def dormant_records(self) -> list[TaskRecord]:
        """Every dormant task's record (parsed now if need be), oldest restored first."""
        records = (self.record(task_id) for task_id in list(self._dormant))
        return [record for record in records if record is not None]

    def everything(self) -> list[Task]:
        """Every task, the dormant ones built now (a rare path: writing them all again)."""
        for task_id in list(self._dormant):
            self.get(task_id)
        return list(self._live.values())

    def sync(self, stored: Mapping[str, TaskRecord | None]) -> None:
        """Bring the tasks not running here in line with a shared store's records (None: the
        store no longer holds it). Other workers pause, finish and abandon tasks too, and a copy
        read earlier must never be resumed over a newer journal. Builds no task."""
        for task_id, record in stored.items():
            local = self._live.get(task_id)
            if local is not None and (local.running or local.state not in _SETTLED):
                continue  # running or finished here: this worker's copy is the newest
            if record is None or not is_resumable(record):
                self.pop(task_id)
                continue
            held = local.record if local is not None else self.record(task_id)
            if held is None or held.updated_at < record.updated_at:
                self.pop(task_id)
                self.restore([record])


_SETTLED = frozenset({State.PAUSED, State.ERROR})
_WAITING = State.WAITING_INPUT.value
