"""Errors as RFC 9457 ``application/problem+json``, with stable codes.

Each code keeps its meaning across releases, and carries the exit status the CLI gives for
the same cause (2 a usage mistake, 1 a failure), so a blog tool can treat both alike.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

__all__ = ["PROBLEMS", "ProblemError", "problem_body", "problem_response"]

PROBLEMS: dict[str, tuple[str, int]] = {
    # code: (title, the CLI's exit status for the same cause)
    "unauthorized": ("Missing or wrong bearer token", 2),
    "bad-host": ("Host not allowed", 2),
    "too-large": ("Request body too large", 2),
    "headers-too-large": ("Request headers too large", 2),
    "invalid-request": ("Invalid request", 2),
    "not-found": ("Not found", 2),
    "unknown-skill": ("Unknown skill", 2),
    "unknown-task": ("Unknown task", 2),
    "task-conflict": ("The task cannot do that now", 2),
    "method-not-allowed": ("Method not allowed", 2),
    "shutting-down": ("The server is stopping", 1),
    "store-unavailable": ("The task store does not answer", 1),
    "internal": ("Internal error", 1),
}


def problem_type(code: str) -> str:
    return f"urn:skillrt:problem:{code}"


class ProblemError(Exception):
    """Raised by a route; turned into a problem response by the app's handler."""

    def __init__(self, status: int, code: str, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.extra = extra


def problem_body(status: int, code: str, detail: str, **extra: Any) -> dict[str, Any]:
    title, exit_code = PROBLEMS[code]
    return {
        "type": problem_type(code),
        "title": title,
        "status": status,
        "detail": detail,
        "code": code,
        "exit_code": exit_code,
        **extra,
    }


def problem_response(
    status: int,
    code: str,
    detail: str,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    body = problem_body(status, code, detail, **extra)
    return JSONResponse(
        body, status_code=status, media_type="application/problem+json", headers=headers
    )
