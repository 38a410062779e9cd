"""A task's checkpoint: what it holds (the record as the skill sees it, never a redacted copy
of it), and ``Checkpoints``, which queues it for the state backend's group commit.

Redaction is for what people are shown (logs, history, events). A checkpoint is read back by
the task itself when it is resumed, so it must hold what the skill saw, byte for byte: a post
whose ``***`` came from the redactor would be written back with ``***`` in it. So secrets are
kept *out* of the checkpoint instead of being masked in it:

- the fields only shown to people (the last error, progress, the result, a pending question)
  are redacted: nothing reads them back into a skill;
- the journal is cut at the first step whose result holds a secret: that step and the ones
  after it stay in memory only, and a resumed task runs them again;
- a task whose request (input, context, intent, params) holds a secret is not checkpointed at
  all: it can be paused and resumed in its process, but a crash loses it rather than resuming
  it with its input changed.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

from skillrt._io.logs import Redactor
from skillrt._io.modeljson import model_json
from skillrt._state.protocol import StateBackend
from skillrt._state.records import RecordText, TaskRecord, listing_of
from skillrt._tasks.journaljson import LARGE, JournalJSON, holds_secret
from skillrt._tasks.machine import TERMINAL_STATES, State
from skillrt._tasks.task import Task
from skillrt._tasks.tasktable import TaskTable

__all__ = ["Checkpoints", "checkpoint_copy", "checkpoint_text"]

_SHOWN = ("last_error", "progress", "result", "question")
_REQUEST = ("raw_input", "context", "intent", "params")


def checkpoint_copy(record: TaskRecord, redactor: Redactor) -> TaskRecord | None:
    """An independent copy of ``record`` to checkpoint, or None when it must not be written."""
    text = record.model_dump_json()
    copy = TaskRecord.model_validate_json(text)
    if redactor.is_clean(text):  # the common case: nothing to look at
        return copy
    if any(holds_secret(redactor, getattr(copy, name)) for name in _REQUEST):
        return None
    kept: dict[str, Any] = {}
    for name, value in copy.steps.items():
        if holds_secret(redactor, value):
            break
        kept[name] = value
    copy.steps = kept
    for name in _SHOWN:
        setattr(copy, name, redactor(getattr(copy, name)))
    return copy


# A large checkpoint's text is the record's JSON without its journal, then the journal's
# members spliced in as its last field: the record ``model_dump_json()`` gives, with ``steps``
# moved to the end (JSON objects are unordered; every reader parses them). A set, not a
# frozenset: pydantic reads a frozenset's ``exclude`` in 5 µs, a set's in 3.
_JOURNAL = {"steps"}


def checkpoint_text(
    record: TaskRecord, redactor: Redactor, journal: JournalJSON | None = None
) -> RecordText | None:
    """``checkpoint_copy`` as JSON text, for the store. In the common case (nothing a secret
    could hide in) nothing is parsed or validated again. With the task's ``journal``, a record
    whose JSON is large (``LARGE``) has each step serialised and scanned once, not at every
    checkpoint (see ``journaljson.py``)."""
    if journal is None or not journal.large:
        text = model_json(record)  # (``model_dump_json()``, without its keyword handling)
        if journal is None or len(text) < LARGE:
            if redactor.is_clean(text) if journal is None else journal.clean(text, redactor):
                return RecordText(
                    record.id, record.state, record.updated_at, text, listing_of(record)
                )
            copy = checkpoint_copy(record, redactor)
            return None if copy is None else RecordText.of(copy)
        journal.large = True
    members = journal.members(record.steps, redactor)
    rest = record.model_dump_json(exclude=_JOURNAL)
    shown = record  # what the text shows but the journal (for its listing)
    if not redactor.is_clean(rest):
        copy = checkpoint_copy(record.model_copy(update={"steps": {}}), redactor)
        if copy is None:  # its request holds a secret
            return None
        rest = copy.model_dump_json(exclude=_JOURNAL)  # what only people see, redacted
        shown = copy
    head, tail = f'{rest[:-1]},"steps":{{', "}}"
    if members:  # one copy of the journal: the head and the tail go on its ends
        ends = [head + members[0], *members[1:]]
        ends[-1] += tail
        text = ",".join(ends)
    else:
        text = head + tail
    listing = listing_of(shown, len(members))
    return RecordText(record.id, record.state, record.updated_at, text, listing)


class Checkpoints:
    """Each task's checkpoint, queued for the backend's group commit.

    ``save`` queues the record (``checkpoint_text``: a task whose request holds a secret is kept
    in memory only); ``durable`` waits until everything queued is on disk; ``drop`` queues the
    deletion of a task that ended for good.
    """

    def __init__(
        self,
        state: StateBackend,
        tasks: TaskTable,
        redactor: Redactor,
        clock: Callable[[], float],
        resumable: Callable[[Task], bool],
    ) -> None:
        self.state = state
        self.tasks = tasks
        self.redactor = redactor
        self.clock = clock
        self.resumable = resumable

    def save(self, task: Task, *, now: bool = False, waited: bool = False) -> None:
        """Queue the task's checkpoint. It is serialised when its round is handed over (a task
        saved several times in a turn of the loop is serialised once), or ``now``: then
        ``task.memory_only`` says at once whether it is kept in memory only. ``waited``: the
        caller asks for ``waiter()`` before the loop goes on (see ``saved``)."""
        record = task.record
        fields = record.__dict__  # (``set_required``, written out: at every save)
        fields["updated_at"] = self.clock()
        state = task.machine.state  # the state's value, as a transition left it in the record
        if fields["state"] != state:
            fields["state"] = state
        if not self.state.journaled:
            return
        if now:
            text = self._text(task)
            if text is None:
                self.state.committer.delete(record.id)
            else:
                self.state.committer.put(text)
        else:
            self.state.committer.put_later(
                record.id, functools.partial(self._text, task), waited=waited
            )

    def saved(self, task: Task) -> asyncio.Future[None] | None:
        """Queue the task's checkpoint and return the future that says it is on disk (None:
        nothing to wait for); the round is handed over now when the commit thread is idle."""
        self.save(task, waited=True)
        return self.state.committer.waiter_of(task.id)

    def _text(self, task: Task) -> RecordText | None:
        copy = checkpoint_text(task.record, self.redactor, task.journal)
        if copy is None:  # its request holds a secret: kept in memory only (None: deleted)
            task.memory_only = True
        return copy

    def drop(self, task_id: str) -> None:
        if self.state.journaled:  # (not journaled: nothing of it was ever written)
            self.state.committer.delete(task_id)

    async def durable(self) -> None:
        await self.state.committer.durable()

    def waiter(self, task_id: str | None = None) -> asyncio.Future[None] | None:
        """``durable()`` as a future (None: nothing queued or in flight); ``task_id``: the task
        that waits (see ``Committer.waiter``)."""
        committer = self.state.committer
        return committer.waiter() if task_id is None else committer.waiter_of(task_id)

    def save_all(self) -> None:
        """The store started a fresh database (the old one was unreadable): every task it
        should hold is written again from memory, so nothing the runtime holds is lost."""
        for task in self.tasks.everything():
            live = task.state is not State.IDLE and task.state not in TERMINAL_STATES
            if live or self.resumable(task):
                self.save(task)
