"""The task record: everything needed to show, resume or audit a task. JSON only."""

from __future__ import annotations

from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticSerializationError, to_json

from skillrt.exceptions import UserError

__all__ = [
    "SCHEMA_VERSION",
    "Listing",
    "RecordText",
    "TaskRecord",
    "dump_record",
    "listing_of",
    "parse_record",
    "set_required",
]

SCHEMA_VERSION = 1


class TaskRecord(BaseModel):
    """One task, as checkpointed. ``steps`` is the journal: step name -> JSON result, in order."""

    # Built at its first use (a checkpoint saved or parsed), not at import: listing the tasks
    # (skillrt tasks) reads the stored summaries and never parses a record whose fields are
    # right. Once built it is the same validator: no cost moves onto each task.
    model_config = ConfigDict(extra="ignore", defer_build=True)

    schema_version: int = SCHEMA_VERSION
    id: str
    session_id: str
    state: str
    intent: dict[str, Any] = Field(default_factory=dict)
    raw_input: str = ""
    context: dict[str, Any] = Field(default_factory=dict)
    skill: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    steps: dict[str, Any] = Field(default_factory=dict)
    progress: dict[str, Any] = Field(default_factory=dict)
    tokens: int = 0
    cost: float = 0.0
    created_at: float
    updated_at: float
    last_error: str | None = None
    error_reason: str | None = None
    question: str | None = None
    result: dict[str, Any] | None = None
    budget: dict[str, Any] | None = None  # limits given at resume (max_tokens, max_cost)


def set_required(record: TaskRecord, name: str, value: Any) -> None:
    """``setattr(record, name, value)`` for a required field (``state``, ``updated_at``) at
    every transition: pydantic's ``__setattr__`` is two Python calls, and for a model that does
    not validate assignment it writes the instance dict and notes the field as set, which a
    required field always is. Not for other fields."""
    record.__dict__[name] = value


Listing = tuple[Any, ...]
"""What a listing shows of a record, taken from it when it is serialised (``listing_of``): its
state, error reason, schema version, id, ``updated_at``, then ``protocol.LISTED``'s fields,
its progress as JSON text and its number of steps last."""

_NO_PROGRESS = "{}"
_SCALARS = frozenset({str, int, float, bool, type(None)})


def listing_of(record: TaskRecord, steps: int | None = None) -> Listing | None:
    """The record's ``Listing`` (``steps``: how many of its steps its text holds, when not all
    of them), or None when a field is not a plain value (an intent type that is an object):
    then a store reads it from the JSON text. Made when the text is, from the same record."""
    d = record.__dict__
    intent, progress, journal = d["intent"], d["progress"], d["steps"]
    if type(intent) is not dict or type(progress) is not dict or type(journal) is not dict:
        return None  # assigned without validation: the text says what it is
    intent_type = intent.get("type")
    if type(intent_type) not in _SCALARS:
        return None
    try:
        shown = to_json(progress, inf_nan_mode="null").decode() if progress else _NO_PROGRESS
    except ValueError:  # PydanticSerializationError among them
        return None  # the record's own text fails the same way, and says why
    return (
        d["state"], d["error_reason"], d["schema_version"], d["id"], d["updated_at"],
        d["session_id"], d["question"], d["skill"], intent_type, d["raw_input"],
        d["created_at"], d["last_error"], d["tokens"], d["cost"], shown,
        len(journal) if steps is None else steps,
    )  # fmt: skip


class RecordText(NamedTuple):
    """A record already serialised (``TaskRecord.model_dump_json()``) with the fields a store
    indexes: what the runtime queues for a checkpoint, so that nothing parses or validates
    again the JSON it has just written. ``listing``: what a listing shows of it (the
    embedded store writes it beside the record instead of reading it from the text again);
    None: a store reads it from the text."""

    id: str
    state: str
    updated_at: float
    text: str
    listing: Listing | None = None

    @classmethod
    def of(cls, record: TaskRecord) -> RecordText:
        return cls(
            record.id, record.state, record.updated_at, record.model_dump_json(),
            listing_of(record),
        )  # fmt: skip


def dump_record(record: TaskRecord | RecordText) -> str:
    """The record's JSON (``UserError`` if a value in it is not JSON)."""
    if isinstance(record, RecordText):  # serialised by the runtime a moment ago
        return record.text
    try:
        return record.model_dump_json()
    except PydanticSerializationError as exc:
        raise UserError(f"task record {record.id!r} is not JSON-serialisable: {exc}") from exc


def parse_record(task_id: str, raw: bytes | None) -> TaskRecord:
    """Parse a stored value; raises ValueError saying why it is unusable."""
    if not raw:
        raise ValueError("empty value")
    try:
        record = TaskRecord.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"msg": str(exc)}
        loc = ".".join(str(p) for p in first.get("loc", ()))
        raise ValueError(
            f"invalid record ({exc.error_count()} errors; {loc}: {first['msg']})"
        ) from exc
    if "schema_version" not in record.model_fields_set:
        raise ValueError("record has no schema_version")
    if record.schema_version != SCHEMA_VERSION:
        raise ValueError(f"schema_version {record.schema_version}, expected {SCHEMA_VERSION}")
    if record.id != task_id:
        raise ValueError(f"record id {record.id!r} stored under key {task_id!r}")
    return record
