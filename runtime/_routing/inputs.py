"""Checks on what a caller hands the runtime, before any task exists.

Text is cleaned (invalid UTF-8 replaced, control characters dropped, whitespace trimmed); a
context or params that is not a mapping is a ``UserError``; and an input that must start no
task (mostly control characters, empty, too long) gets a reply in the user's language saying
why, with an error code in its data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

from skillrt._routing.clarify import is_noise
from skillrt._routing.router import MAX_ROUTE_CHARS, IntentRouter
from skillrt.exceptions import UserError
from skillrt.skill.replies import reply

__all__ = ["as_dict", "as_params", "clean_text", "refusal"]

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_text(text: object) -> str:
    if not isinstance(text, str):
        raise UserError(f"input must be text (str), not {type(text).__name__}")
    return _scrubbed(text).strip()


def _scrubbed(text: str) -> str:
    """``text`` with invalid UTF-8 (a lone surrogate) replaced and control characters dropped,
    its lines and spaces kept: what ``clean_text`` and ``as_params`` both do."""
    return _CONTROL.sub("", text.encode("utf-8", "replace").decode("utf-8"))


_SELECTION_LIMIT = 20_000  # characters of selected text kept with a task
_TEXT_FIELDS = ("selected_text", "current_file", "session_id")  # a context's text, or None


def as_dict(what: str, value: object) -> dict[str, Any]:
    """A copy of ``value`` as a dict (None is empty); UserError for anything else. A context's
    ``selected_text`` is kept to its first 20,000 characters."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise UserError(f"{what} must be a dict of names to values, not {type(value).__name__}")
    copy = {str(k): v for k, v in value.items()}
    if what == "context":
        _check_text_fields(copy)
    selected = copy.get("selected_text")
    if what == "context" and isinstance(selected, str) and len(selected) > _SELECTION_LIMIT:
        copy["selected_text"] = selected[:_SELECTION_LIMIT]
    return copy


def _check_text_fields(context: dict[str, Any]) -> None:
    """UserError for a context whose known text field holds something else than text (None is
    no value). ``{"selected_text": ["a"]}`` started a task that failed with "AttributeError:
    'list' object has no attribute 'strip'", and ``{"session_id": 5}`` made a session "5"."""
    for name in _TEXT_FIELDS:
        value = context.get(name)
        if value is not None and not isinstance(value, str):
            raise UserError(f"context {name} must be text (str), not {type(value).__name__}")


def as_params(value: object) -> dict[str, Any]:
    """``run_skill``'s params as ``as_dict`` gives them, their text cleaned as an input is
    (invalid UTF-8 replaced, control characters dropped; lines and spaces kept), and each
    value checked to be what a task's record can store as JSON (``UserError`` naming it).
    A lone surrogate in a param failed the skill's first step with advice for its developer
    shown to the user; an ``object()`` was taken, then failed the task at its first
    checkpoint: "Unable to serialize unknown type"."""
    params = {name: _cleaned(v) for name, v in as_dict("params", value).items()}
    for name, v in params.items():
        try:
            to_json(v)
        except (PydanticSerializationError, ValueError) as exc:
            kind = type(v).__name__
            raise UserError(f"param {name} is not a JSON value: {kind}") from exc
    return params


def _cleaned(value: object) -> object:
    """``value`` with its strings cleaned (in lists and dicts too)."""
    if isinstance(value, str):
        return _scrubbed(value)
    if isinstance(value, list | tuple):
        return [_cleaned(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _cleaned(v) for k, v in value.items()}
    return value


def refusal(
    raw: str, text: str, limit: int, router: IntentRouter, language: str
) -> tuple[str, str] | None:
    """``(reply, error code)`` for an input that starts no task, else None. ``raw`` is the
    input as given, ``text`` as cleaned."""
    if raw.strip() and is_noise(raw[:MAX_ROUTE_CHARS]):  # what router.screen calls noise
        return reply("noise_input", language), "noise_input"
    if not text:
        return reply("empty_input", language), "empty_input"
    if len(text) > limit:
        return reply("input_too_long", language, chars=len(text), limit=limit), "input_too_long"
    return None
