"""A pydantic model's ``model_dump_json()`` and ``model_dump(mode="json")``, made by its
serializer called directly: the same text and data without the methods' keyword handling
(~6-7 k instructions a call), for the paths that dump a model at every task or request (a
checkpoint, a reply, a request's params). A model that brings its own method is asked
through it. pydantic itself is imported at the first call (``redaction`` loads this module,
and loads no more than pydantic-core)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["model_data", "model_json"]


@lru_cache(maxsize=1)
def _base() -> Any:
    from pydantic import BaseModel

    return BaseModel


def model_json(model: Any) -> str:
    """``model.model_dump_json()``."""
    kind = type(model)
    if kind.model_dump_json is _base().model_dump_json:
        text: str = kind.__pydantic_serializer__.to_json(model).decode()
        return text
    own: str = model.model_dump_json()
    return own


def model_data(model: Any) -> dict[str, Any]:
    """``model.model_dump(mode="json")``."""
    kind = type(model)
    if kind.model_dump is _base().model_dump:
        data: dict[str, Any] = kind.__pydantic_serializer__.to_python(model, mode="json")
        return data
    dumped: dict[str, Any] = model.model_dump(mode="json")
    return dumped
