"""The runtime's tasks by id: live ``Task`` objects, and restored ones not built yet.

At start-up every resumable checkpoint used to become a full ``Task`` (futures, a machine, an
abort controller, the language of its input): 10,000 of them cost a second before anyone asked
for one. Here a restored record stays *dormant* (its id, state, and its JSON or record) until
something asks for that task by id (resume, abandon, abort, get_task); only then is its record
parsed and its ``Task`` built. ``get``, ``in`` and ``pop`` see both kinds; ``values()`` is the
live tasks only, which is what the per-input scans (the foreground task, a task waiting for an
answer) look at: a restored task is PAUSED and never foreground until it is resumed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, KeysView
from typing import TYPE_CHECKING, Protocol

from skillrt.storage.checkpoints import LazyRecord
from skillrt.storage.records import TaskRecord

if TYPE_CHECKING:
    from skillrt.task import Task

__all__ = ["TaskTable"]


class TaskView(Protocol):
    """The live tasks: iterable both ways (a dict's values view)."""

    def __iter__(self) -> Iterator[Task]: ...
    def __reversed__(self) -> Iterator[Task]: ...
    def __len__(self) -> int: ...


class TaskTable:
    """``dict[str, Task]`` as the runtime uses it, plus dormant restored records."""

    def __init__(
        self,
        parse: Callable[[LazyRecord], TaskRecord | None],
        build: Callable[[TaskRecord], Task],
    ) -> None:
        self._live: dict[str, Task] = {}
        self._dormant: dict[str, LazyRecord | TaskRecord] = {}
        self._parse = parse  # the record of a dormant entry (None: unusable, moved aside)
        self._build = build  # the restored Task of a record

    # --- what a dict offers -------------------------------------------------------------------

    def get(self, task_id: str) -> Task | None:
        task = self._live.get(task_id)
        if task is None and task_id in self._dormant:
            record = self.record(task_id)
            self._dormant.pop(task_id, None)
            if record is not None:
                task = self._live[task_id] = self._build(record)
        return task

    def __setitem__(self, task_id: str, task: Task) -> None:
        self._dormant.pop(task_id, None)
        self._live[task_id] = task

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._live or task_id in self._dormant

    def pop(self, task_id: str, default: None = None) -> Task | None:
        self._dormant.pop(task_id, None)
        return self._live.pop(task_id, default)

    def values(self) -> TaskView:
        """The live tasks (in the order they were made or built)."""
        return self._live.values()

    def values_ids(self) -> KeysView[str]:
        """The ids of the live tasks."""
        return self._live.keys()

    def __iter__(self) -> Iterator[str]:
        yield from list(self._dormant)
        yield from list(self._live)

    def __len__(self) -> int:
        return len(self._live) + len(self._dormant)

    # --- dormant records ----------------------------------------------------------------------

    def add_dormant(self, entry: LazyRecord | TaskRecord) -> None:
        """A restored task, built when first asked for (the caller checked it is resumable)."""
        if entry.id not in self._live:
            self._dormant[entry.id] = entry

    def record(self, task_id: str) -> TaskRecord | None:
        """A dormant task's record, parsed once (None: not dormant, or unusable and dropped)."""
        entry = self._dormant.get(task_id)
        if entry is None or isinstance(entry, TaskRecord):
            return entry
        record = self._parse(entry)
        if record is None:
            self._dormant.pop(task_id, None)
        else:
            self._dormant[task_id] = record
        return record

    def dormant_records(self) -> list[TaskRecord]:
        """Every dormant task's record (parsed now if need be), oldest restored first."""
        records = (self.record(task_id) for task_id in list(self._dormant))
        return [record for record in records if record is not None]

    def everything(self) -> list[Task]:
        """Every task, the dormant ones built now (a rare path: writing them all again)."""
        for task_id in list(self._dormant):
            self.get(task_id)
        return list(self._live.values())
