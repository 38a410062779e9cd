"""What the runtime hands back: chat messages and task summaries."""

from __future__ import annotations

import os
import time
from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["ChatMessage", "TaskSummary", "new_id"]


def new_id() -> str:
    """16 random hex digits: 64 bits from the OS (``uuid4().hex[:16]`` gave 60, at five times
    the cost; a served request makes two)."""
    return os.urandom(8).hex()


class ChatMessage(BaseModel):
    """One message of the chat. ``content`` is Markdown; ``data`` carries results (a path...)."""

    id: str = Field(default_factory=new_id)
    role: Literal["user", "assistant", "system"] = "assistant"
    content: str
    task_id: str | None = None
    state: str = "IDLE"
    tokens: int = 0
    cost: float = 0.0
    data: dict[str, Any] = Field(default_factory=dict)
    created_at: float = Field(default_factory=time.time)


class TaskSummary(BaseModel):
    """A task as listed by ``get_resumable_tasks()`` and ``skillrt tasks``."""

    id: str
    state: str
    skill: str | None
    intent: str | None
    description: str
    created_at: float
    updated_at: float
    steps_done: int
    progress: dict[str, Any] = Field(default_factory=dict)
    error_reason: str | None = None
    last_error: str | None = None
    tokens: int = 0
    cost: float = 0.0
    session_id: str | None = None
    question: str | None = None  # what a task waiting for input asked
