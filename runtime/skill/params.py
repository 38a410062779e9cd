"""Text parameters a skill declares on its params model: how they are cleaned and checked.

``Annotated[str, Chars(...)]`` says two things about a field:

- how it is cleaned when the params are parsed: whitespace squashed to single spaces (or, with
  ``squash=False``, only stripped); a blank value becomes None where the type allows None;
- what it must be when the skill runs: not blank, and at most ``max_chars`` characters, a
  number or the name of a ``RuntimeConfig`` field (``"max_input_chars"``).

The checks run in ``Skill.run``, with the task's config: a value that fails one raises
``BadParam``, which the skill wrapper answers in the user's language (the reply named by
``empty`` or ``too_long``, from the skill's ``Replies``, else the generic ``param_empty`` and
``param_too_long``). Parsing alone never refuses a value for its content, so whoever routed
the request gets the skill's own answer, not a parser's message.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

from skillrt.exceptions import BadParam, UserError
from skillrt.settings import RuntimeConfig

__all__ = [
    "MAX_PATH_CHARS",
    "POST_DESCRIPTION",
    "Chars",
    "LongText",
    "PostPath",
    "Text",
    "param_checks",
]

MAX_PATH_CHARS = 1024


@dataclass(frozen=True, slots=True)
class Chars:
    """How a text param is cleaned (at parsing) and checked (when the skill runs)."""

    max_chars: int | str | None = None
    squash: bool = True
    empty: str = "param_empty"
    too_long: str = "param_too_long"

    def __post_init__(self) -> None:
        if isinstance(self.max_chars, str) and self.max_chars not in RuntimeConfig.model_fields:
            raise UserError(f"Chars(max_chars={self.max_chars!r}): no such config field")

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        optional = type(None) in typing.get_args(source) if _is_union(source) else False

        def clean(value: str | None) -> str | None:
            if value is None:
                return None
            text = " ".join(value.split()) if self.squash else value.strip()
            return None if optional and not text else text

        return core_schema.no_info_after_validator_function(clean, handler(source))

    def limit(self, config: RuntimeConfig) -> int | None:
        """The most characters allowed under ``config``."""
        if isinstance(self.max_chars, str):
            value: int = getattr(config, self.max_chars)
            return value
        return self.max_chars

    def check(self, field: str, value: str | None, config: RuntimeConfig) -> None:
        """Raise ``BadParam`` if ``value`` (already cleaned) is blank or too long."""
        if value is None:  # an optional param left out
            return
        if not value:
            raise BadParam(field, self.empty)
        limit = self.limit(config)
        if limit is not None and len(value) > limit:
            raise BadParam(field, self.too_long, chars=len(value), limit=limit)


def _is_union(source: Any) -> bool:
    return isinstance(source, types.UnionType) or typing.get_origin(source) is typing.Union


Text = Annotated[str, Chars()]
"""One line of text: whitespace squashed, not blank."""

LongText = Annotated[str, Chars(max_chars="max_input_chars", squash=False)]
"""Text as the user gave it (paragraphs kept, ends stripped): not blank, at most
``max_input_chars`` characters."""

PostPath = Annotated[str | None, Chars(max_chars=MAX_PATH_CHARS, squash=False)]
"""A path in the blog, or None: stripped, blank is None. Where it points is checked when it is
used (``ctx.files`` refuses a path outside the blog)."""

POST_DESCRIPTION = "a post's path, relative to the blog folder (e.g. posts/hello.md)"
"""How a ``PostPath`` is described in the params' JSON Schema (the MCP tools', the HTTP API's)."""


def param_checks(model: type[BaseModel]) -> list[tuple[str, Chars]]:
    """The fields of ``model`` that declare ``Chars``, with their checks.

    ``Chars`` must annotate the whole type: ``Annotated[str | None, Chars()]``, not
    ``Text | None`` (there it would clean the text but never be checked), which is refused.
    """
    checks: list[tuple[str, Chars]] = []
    for name, info in model.model_fields.items():
        checks += [(name, meta) for meta in info.metadata if isinstance(meta, Chars)]
        if any(_declares_chars(arg) for arg in typing.get_args(info.annotation)):
            raise UserError(
                f"{model.__name__}.{name}: write Annotated[str | None, Chars(...)] for an "
                "optional text, not Annotated[str, Chars(...)] | None"
            )
    return checks


def _declares_chars(annotation: Any) -> bool:
    return typing.get_origin(annotation) is Annotated and any(
        isinstance(meta, Chars) for meta in annotation.__metadata__
    )
