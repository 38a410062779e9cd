"""A task's summary: how every listing shows a task (``get_resumable_tasks``, ``skillrt tasks``,
``GET /v1/tasks``), its texts redacted, then cut."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from pydantic_core import from_json

from skillrt._io.redaction import Redactor
from skillrt._state.protocol import LazyRecord
from skillrt._state.records import TaskRecord
from skillrt.messages import TaskSummary
from skillrt.outcomes import ErrorReason

__all__ = ["summarize", "summarize_restored"]


def summarize(record: TaskRecord, redactor: Redactor) -> TaskSummary:
    """How a listing shows ``record``. A record's intent is a free dict: a ``type`` that is not
    a string (a record written by hand, or damaged) is shown as no intent, as the listing of
    restored tasks shows it, instead of failing the whole listing."""

    def shown(text: str, limit: int) -> str:
        return redactor.text(text)[:limit]

    error = record.last_error
    return TaskSummary(
        id=record.id,
        session_id=record.session_id,
        question=record.question,
        state=record.state,
        skill=record.skill,
        intent=kind if type(kind := record.intent.get("type")) is str else None,
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
    listing of thousands at start-up builds none). None for each whose fields are not as the
    runtime writes them: then its record is parsed (and, if unusable, moved aside).

    Each field's type is checked here, so the summaries are made without pydantic's
    validation (as ``model_construct`` would make them), which would cost several times more
    for thousands."""
    out: list[TaskSummary | None] = []
    add = out.append
    shown: list[str | None] = []  # each summary's description and error, as the store has them
    show = shown.append
    # The entries unpacked as the tuples they are (no attribute lookup per field), and no
    # attribute or global looked up per entry: thousands at start-up.
    new, set_dict, set_fields = _new, _SET_DICT, _SET_FIELDS
    set_extra, set_private = _SET_EXTRA, _SET_PRIVATE
    model, all_set, numbers, crash = TaskSummary, _ALL_SET, _NUMBERS, _CRASH
    for task_id, state, reason, updated, text, listed in entries:
        try:
            if listed is None:
                listed = _from_json(text)
            session, question, skill, kind, said, created, error, tokens, cost, progress, steps = (
                listed
            )
            if type(progress) is not dict:  # as the store read it: its JSON text (bytes)
                progress = from_json(progress, cache_strings="keys")
        except (ValueError, TypeError, KeyError, AttributeError):
            add(None)
            continue
        if not (
            type(session) is str
            and (question is None or type(question) is str)
            and (skill is None or type(skill) is str)
            and type(said) is str
            and type(created) in numbers
            and (error is None or type(error) is str)
            and type(tokens) is int
            and type(cost) in numbers
            and type(progress) is dict
            and type(steps) is int
        ):
            add(None)  # not as the runtime writes it: let it parse
            continue
        if state != "PAUSED" and state != "ERROR":  # as ``as_restored`` holds it: cut off
            reason = reason or crash
        # What ``model_construct`` makes of values whose types were checked, every field
        # given, without its per-field work (``tests/test_resume_listing.py`` checks it equals
        # a validated summary); the slots are set through their descriptors, each a call less
        # than ``object.__setattr__``.
        summary = new(model)
        set_dict(
            summary,
            {
                "id": task_id,
                "state": "PAUSED",
                "skill": skill,
                "intent": kind if type(kind) is str else None,
                "description": said[:200],  # redacted below if anything in these needs it
                "created_at": float(created),
                "updated_at": float(updated),
                "steps_done": steps,
                "progress": progress,
                "error_reason": reason,
                "last_error": None if error is None else error[:2000],
                "tokens": tokens,
                "cost": float(cost),
                "session_id": session,
                "question": question,
            },
        )
        # One set for all: every field is set, so the set never changes (assigning a field
        # adds its name, already there); thousands fewer objects for the collector to look at.
        set_fields(summary, all_set)
        set_extra(summary, None)
        set_private(summary, None)
        add(summary)
        show(said)
        show(error)
    if not redactor.holds_nothing("\0".join(filter(None, shown))):  # one scan for them all
        _redact([s for s in out if s is not None], shown, redactor)
    return out


def _redact(summaries: list[TaskSummary], shown: list[str | None], redactor: Redactor) -> None:
    """Redact each summary's description and error from the texts they were cut from (a
    secret cut in two by the cut would not be found in what is left of it)."""
    text = redactor.text
    for summary, said, error in zip(summaries, shown[::2], shown[1::2], strict=True):
        summary.__dict__["description"] = text(said or "")[:200]
        summary.__dict__["last_error"] = None if error is None else text(error)[:2000]


_NUMBERS = (int, float)
_CRASH = str(ErrorReason.CRASH)
_ALL_SET = set(TaskSummary.model_fields)
_new = TaskSummary.__new__
# The setters of BaseModel's slots (``__slots__`` holds these four).
_SET_DICT = BaseModel.__dict__["__dict__"].__set__
_SET_FIELDS = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_SET_EXTRA = BaseModel.__dict__["__pydantic_extra__"].__set__
_SET_PRIVATE = BaseModel.__dict__["__pydantic_private__"].__set__


def _from_json(text: bytes) -> tuple[Any, ...]:
    """``LISTED``'s fields from a record's JSON (KeyError, ValueError: not as written)."""
    data = json.loads(text)
    intent = data.get("intent") or {}
    return (
        data["session_id"],
        data.get("question"),
        data.get("skill"),
        intent.get("type"),
        data.get("raw_input", ""),
        data["created_at"],
        data.get("last_error"),
        data.get("tokens", 0),
        data.get("cost", 0.0),
        data.get("progress", {}),
        len(steps) if type(steps := data.get("steps", {})) is dict else None,
    )
