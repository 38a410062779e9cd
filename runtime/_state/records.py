"""The task record: everything needed to show, resume or audit a task. JSON only."""

from __future__ import annotations

from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["SCHEMA_VERSION", "RecordText", "TaskRecord"]

SCHEMA_VERSION = 1


class TaskRecord(BaseModel):
    """One task, as checkpointed. ``steps`` is the journal: step name -> JSON result, in order."""

    model_config = ConfigDict(extra="ignore")

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


class RecordText(NamedTuple):
    """A record already serialised (``TaskRecord.model_dump_json()``) with the fields a store
    indexes: what the runtime queues for a checkpoint, so that nothing parses or validates
    again the JSON it has just written."""

    id: str
    state: str
    updated_at: float
    text: str

    @classmethod
    def of(cls, record: TaskRecord) -> RecordText:
        return cls(record.id, record.state, record.updated_at, record.model_dump_json())
