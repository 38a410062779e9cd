"""pydantic's validation errors in the words every door uses: one formatter for all of them.

``problems(errors)`` turns the error list of a ``ValidationError`` (or of FastAPI's
``RequestValidationError``, which has the same shape) into JSON-able rows ``{loc, msg, type}``
and one line naming each bad field: ``params.path: Field required; topic: ...``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

__all__ = ["Problems", "problems"]


class Problems(NamedTuple):
    rows: list[dict[str, Any]]
    """One row per error: ``loc`` (a list of strings), ``msg`` and ``type``."""
    line: str
    """Every row as ``loc: msg``, joined by ``; ``."""


def problems(errors: Iterable[Mapping[str, Any]], *, prefix: Sequence[str] = ()) -> Problems:
    """The rows and the line for ``errors``, each ``loc`` under ``prefix``. An error with no
    location is named ``params``."""
    rows = [
        {
            "loc": [*prefix, *(str(p) for p in e.get("loc", ()))],
            "msg": str(e.get("msg", "")),
            "type": str(e.get("type", "")),
        }
        for e in errors
    ]
    line = "; ".join(f"{'.'.join(row['loc']) or 'params'}: {row['msg']}" for row in rows)
    return Problems(rows, line)
