"""What a task's checkpoint holds: the record as the skill sees it, never a redacted copy of it.

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

from typing import Any

from skillrt._io.logs import Redactor
from skillrt._state.records import RecordText, TaskRecord

__all__ = ["checkpoint_copy", "checkpoint_text"]

_SHOWN = ("last_error", "progress", "result", "question")
_REQUEST = ("raw_input", "context", "intent", "params")


def _holds_secret(redactor: Redactor, value: Any) -> bool:
    return bool(redactor(value) != value)


def checkpoint_copy(record: TaskRecord, redactor: Redactor) -> TaskRecord | None:
    """An independent copy of ``record`` to checkpoint, or None when it must not be written."""
    text = record.model_dump_json()
    copy = TaskRecord.model_validate_json(text)
    if redactor.is_clean(text):  # the common case: nothing to look at
        return copy
    if any(_holds_secret(redactor, getattr(copy, name)) for name in _REQUEST):
        return None
    kept: dict[str, Any] = {}
    for name, value in copy.steps.items():
        if _holds_secret(redactor, value):
            break
        kept[name] = value
    copy.steps = kept
    for name in _SHOWN:
        setattr(copy, name, redactor(getattr(copy, name)))
    return copy


def checkpoint_text(record: TaskRecord, redactor: Redactor) -> RecordText | None:
    """``checkpoint_copy`` as JSON text, for the store: in the common case (nothing a secret
    could hide in) the record is serialised once and neither parsed nor validated again."""
    text = record.model_dump_json()
    if redactor.is_clean(text):
        return RecordText(record.id, record.state, record.updated_at, text)
    copy = checkpoint_copy(record, redactor)
    return None if copy is None else RecordText.of(copy)
