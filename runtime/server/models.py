"""The request and response bodies of the HTTP API (pydantic; they make ``/openapi.json``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AnswerRequest",
    "InfoResponse",
    "InputRequest",
    "Problem",
    "RequestContext",
    "ResumeRequest",
    "SkillInfo",
    "SkillRunRequest",
    "TaskControl",
    "UndoRequest",
]


class RequestContext(BaseModel):
    """What the blog tool knows: the open post, the selected text, the chat session."""

    model_config = ConfigDict(extra="allow")

    current_file: str | None = Field(default=None, max_length=4096)
    selected_text: str | None = None
    session_id: str | None = Field(default=None, min_length=1, max_length=200)
    # An edit shows its diff and asks yes/no before writing (edit.confirm, else no).
    confirm: bool | None = None


class UndoRequest(BaseModel):
    """``POST /v1/undo``: restore the version kept before the last write (of ``path``)."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(default=None, min_length=1, max_length=4096)
    language: Literal["en", "zh"] = "en"


class InputRequest(BaseModel):
    """``POST /v1/input``: one chat input, as ``process_input(text, context)``."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    context: RequestContext = Field(default_factory=RequestContext)
    session_id: str | None = Field(default=None, min_length=1, max_length=200)


class SkillRunRequest(BaseModel):
    """``POST /v1/skills/{name}/run``: a skill by name, as ``run_skill(name, params, context)``."""

    model_config = ConfigDict(extra="forbid")

    params: dict[str, Any] = Field(default_factory=dict)
    context: RequestContext = Field(default_factory=RequestContext)
    session_id: str | None = Field(default=None, min_length=1, max_length=200)


class AnswerRequest(BaseModel):
    """``POST /v1/tasks/{id}/answer``: the answer to the question the task is waiting on."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)


class ResumeRequest(BaseModel):
    """``POST /v1/tasks/{id}/resume``: the session whose answers the task takes from now on."""

    model_config = ConfigDict(extra="forbid")

    session_id: str | None = Field(default=None, min_length=1, max_length=200)


class TaskControl(BaseModel):
    """The result of abort, pause and abandon: whether it took effect, and the task now."""

    task_id: str
    ok: bool
    state: str | None = None


class SkillInfo(BaseModel):
    """A skill as a blog tool sees it: enough to build a button and its form."""

    name: str
    description: str
    intents: list[str]
    params_schema: dict[str, Any]


class InfoResponse(BaseModel):
    version: str
    model: str
    model_reason: str
    content_root: str
    posts_dir: str
    session_id: str
    skills: list[str]


class Problem(BaseModel):
    """An error, as RFC 9457 ``application/problem+json``. ``code`` is the stable short name;
    ``exit_code`` is what the CLI would exit with for the same cause."""

    model_config = ConfigDict(extra="allow")

    type: str
    title: str
    status: int
    detail: str = ""
    code: str
    exit_code: int
    errors: list[dict[str, Any]] | None = None
