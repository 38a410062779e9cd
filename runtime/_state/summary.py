"""A task's summary: how every listing shows a task (``get_resumable_tasks``, ``skillrt tasks``,
``GET /v1/tasks``), its texts redacted, then cut."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import from_json

from skillrt._io.redaction import Redactor
from skillrt._state.protocol import LazyRecord
from skillrt._state.records import TaskRecord
from skillrt.messages import TaskSummary
from skillrt.outcomes import ErrorReason

__all__ = ["summarize", "summarize_restored"]


def summarize(record: TaskRecord, redactor: Redactor) -> TaskSummary:
    def shown(text: str, limit: int) -> str:
        return redactor.text(text)[:limit]

    error = record.last_error
    return TaskSummary(
        id=record.id,
        session_id=record.session_id,
        question=record.question,
        state=record.state,
        skill=record.skill,
        intent=record.intent.get("type") if record.intent else None,
        description=shown(record.raw_input, 200),
        created_at=record.created_at,
        updated_at=record.updated_at,
        steps_done=len(record.steps),
        progress=record.progress,
        error_reason=record.error_reason,
        last_error=None if error is None else shown(error, 2000),
        tokens=record.tokens,
        cost=record.cost,
    )


def summarize_restored(
    entries: Sequence[LazyRecord], redactor: Redactor
) -> list[TaskSummary | None]:
    """The summaries of tasks restored from their checkpoints, read from what the store read
    with each (``entry.listed``) or else from its JSON, without building their records (a
    listing of thousands at start-up builds none), and validated together (a model built one
    by one costs several times more). None for each whose JSON is not as the runtime writes
    it: then its record is parsed (and, if unusable, moved aside)."""
    fields = [_restored_fields(entry, redactor) for entry in entries]
    sound = [found for found in fields if found is not None]
    try:
        made: Iterator[TaskSummary | None] = iter(_SUMMARIES.validate_python(sound))
    except ValidationError:  # one of them is off: each on its own, to know which
        made = iter([_one(found) for found in sound])
    return [None if found is None else next(made) for found in fields]


_SUMMARIES = TypeAdapter(list[TaskSummary])


def _one(fields: dict[str, Any]) -> TaskSummary | None:
    try:
        return TaskSummary.model_validate(fields)
    except ValidationError:
        return None


def _restored_fields(entry: LazyRecord, redactor: Redactor) -> dict[str, Any] | None:
    """What ``TaskSummary`` is made of for a restored task (None: not as the runtime writes
    it), from ``entry.listed`` (see ``LISTED``) or else its JSON."""
    try:
        listed = entry.listed
        if listed is None:
            data = json.loads(entry.text)
            intent = data.get("intent") or {}
            listed = (
                data["session_id"],
                data.get("question"),
                data.get("skill"),
                intent.get("type"),
                data.get("raw_input", ""),
                data["created_at"],
                data.get("last_error"),
                data.get("tokens", 0),
                data.get("cost", 0.0),
                data.get("progress"),
                len(data.get("steps") or {}),
            )
        session, question, skill, kind, text, created, error, tokens, cost, progress, steps = listed
        if type(progress) is str:  # as the store read it: its JSON text
            progress = from_json(progress)
        if session is None or created is None:  # not as the runtime writes it: let it parse
            return None
        reason = entry.error_reason
        if entry.state not in ("PAUSED", "ERROR"):  # as ``as_restored`` holds it: cut off
            reason = reason or ErrorReason.CRASH
        return {
            "id": entry.id,
            "session_id": session,
            "question": question,
            "state": "PAUSED",
            "skill": skill,
            "intent": kind if isinstance(kind, str) else None,
            "description": redactor.text(text)[:200],
            "created_at": created,
            "updated_at": entry.updated_at,
            "steps_done": steps,
            "progress": progress or {},
            "error_reason": None if reason is None else str(reason),
            "last_error": None if error is None else redactor.text(error)[:2000],
            "tokens": tokens,
            "cost": cost,
        }
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
