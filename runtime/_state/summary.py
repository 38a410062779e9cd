"""A task's summary: how every listing shows a task (``get_resumable_tasks``, ``skillrt tasks``,
``GET /v1/tasks``), its texts redacted, then cut."""

from __future__ import annotations

import json

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


def summarize_restored(entry: LazyRecord, redactor: Redactor) -> TaskSummary | None:
    """The summary of a task restored from its checkpoint, read from its JSON without building
    its record (a listing of thousands at start-up builds none). None when the JSON is not as
    the runtime writes it: then the record is parsed (and, if unusable, moved aside)."""
    try:
        data = json.loads(entry.text)
        intent, error = data.get("intent") or {}, data.get("last_error")
        reason = entry.error_reason
        if entry.state not in ("PAUSED", "ERROR"):  # as ``as_restored`` holds it: cut off
            reason = reason or ErrorReason.CRASH
        kind = intent.get("type")
        return TaskSummary(
            id=entry.id,
            session_id=data["session_id"],
            question=data.get("question"),
            state="PAUSED",
            skill=data.get("skill"),
            intent=kind if isinstance(kind, str) else None,
            description=redactor.text(data.get("raw_input", ""))[:200],
            created_at=data["created_at"],
            updated_at=entry.updated_at,
            steps_done=len(data.get("steps") or {}),
            progress=data.get("progress") or {},
            error_reason=None if reason is None else str(reason),
            last_error=None if error is None else redactor.text(error)[:2000],
            tokens=data.get("tokens", 0),
            cost=data.get("cost", 0.0),
        )
    except (ValueError, TypeError, KeyError, AttributeError):  # ValidationError is a ValueError
        return None
