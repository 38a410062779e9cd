"""A task's summary: how every listing shows a task (``get_resumable_tasks``, ``skillrt tasks``,
``GET /v1/tasks``), its texts redacted, then cut."""

from __future__ import annotations

from skillrt._io.redaction import Redactor
from skillrt._state.records import TaskRecord
from skillrt.messages import TaskSummary

__all__ = ["summarize"]


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
