"""How a task stops, as closed sets of names.

- ``End``: why the task's run stopped (``Task.end_reason``): the user cancelled it, the
  watchdog fired, its budget ran out, it failed, the runtime shut down, or it was abandoned.
- ``ErrorReason``: the ``error_reason`` kept in an ERROR task's record (and a restored task's).
  The ones in ``RESUMABLE_ERRORS`` keep the task's journal: it can go on from its last
  completed step (after a raised budget or a fixed key for the last two). Only
  ``abandon_task`` deletes it.
- ``Outcome``: what a reply's ``data["outcome"]`` says happened. A skill that returned
  ``success=False`` (it refused: a bad path, a changed file, a text that failed its checks)
  is ``refused``, never ``done``.
- ``exit_code``: the exit status of ``skillrt run`` for a reply (also sent by ``skillrt serve``
  as ``X-Skillrt-Exit-Code``).

They are ``StrEnum``s, so a record, an event or a reply holds plain strings.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillrt._state.protocol import LazyRecord
    from skillrt._state.records import TaskRecord
    from skillrt.messages import ChatMessage

__all__ = [
    "EXIT_CANCELLED",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_STORAGE",
    "EXIT_UNFINISHED",
    "EXIT_USAGE",
    "RESUMABLE_ERRORS",
    "End",
    "ErrorReason",
    "Outcome",
    "as_restored",
    "exit_code",
    "is_resumable",
]


class End(StrEnum):
    CANCELLED = "cancelled"
    WATCHDOG = "watchdog"
    BUDGET = "budget"
    FAILED = "failed"
    SHUTDOWN = "shutdown"
    ABANDONED = "abandoned"
    OUTAGE = "outage"  # the shared store stopped answering: the task stops, its journal kept


class ErrorReason(StrEnum):
    WATCHDOG_TIMEOUT = "WATCHDOG_TIMEOUT"
    PROVIDER_UNAVAILABLE = "PROVIDER_UNAVAILABLE"
    CRASH = "CRASH"
    BUDGET_EXCEEDED = "BUDGET_EXCEEDED"
    AUTH_FAILED = "AUTH_FAILED"
    STORAGE = "STORAGE"
    INTERNAL = "INTERNAL"
    SKILL_ERROR = "SKILL_ERROR"
    INTERRUPTED = "INTERRUPTED"


class Outcome(StrEnum):
    DONE = "done"
    REFUSED = "refused"  # the skill refused (success=False): nothing was done or saved
    CHAT = "chat"
    REPHRASE = "rephrase"
    DECLINED = "declined"
    SUPERSEDED = "superseded"
    NO_SKILL = "no_skill"
    BAD_PARAMS = "bad_params"
    PAUSED = "paused"
    CANCELLED = "cancelled"
    WATCHDOG = "watchdog"
    BUDGET = "budget"
    FAILED = "failed"
    STORAGE = "storage"
    INTERRUPTED = "interrupted"
    CLOSED = "closed"


RESUMABLE_ERRORS: frozenset[str] = frozenset(
    {
        ErrorReason.WATCHDOG_TIMEOUT,
        ErrorReason.PROVIDER_UNAVAILABLE,
        ErrorReason.CRASH,
        ErrorReason.BUDGET_EXCEEDED,
        ErrorReason.AUTH_FAILED,
    }
)

UNRECORDED: frozenset[Outcome] = frozenset(
    {Outcome.REPHRASE, Outcome.NO_SKILL, Outcome.BAD_PARAMS, Outcome.SUPERSEDED}
)
"""Endings that started no work: they get a reply but no history entry."""


def is_resumable(record: TaskRecord | LazyRecord) -> bool:
    """Can this checkpointed task go on: unfinished, or stopped by a resumable error?"""
    if record.state == "ERROR":
        return record.error_reason in RESUMABLE_ERRORS
    return record.state not in ("IDLE", "COMPLETED", "CANCELLED")


def as_restored(record: TaskRecord) -> TaskRecord:
    """A checkpointed record as the runtime holds it after a restart: PAUSED, and marked as cut
    off by a crash unless it was paused or stopped by an error of its own."""
    if record.state not in ("PAUSED", "ERROR"):
        record.error_reason = record.error_reason or ErrorReason.CRASH
    record.state = "PAUSED"
    return record


EXIT_OK = 0
"""The task completed, or the input got an answer."""
EXIT_FAILED = 1
"""The task failed (ERROR: the skill failed, the model failed, watchdog, budget)."""
EXIT_USAGE = 2
"""Bad usage: a config error, bad input, a request to rephrase, no skill for it, no such task."""
EXIT_UNFINISHED = 3
"""The task stopped unfinished and can be resumed: paused, or waiting for an answer."""
EXIT_CANCELLED = 130
"""The task was cancelled (Ctrl-C), as a shell reports SIGINT."""
EXIT_STORAGE = 74
"""The state folder cannot be used: read-only, full, not a folder (EX_IOERR of sysexits)."""

_USAGE_OUTCOMES = frozenset({"rephrase", "no_skill", "bad_params", "chat"})
_FAILED_OUTCOMES = frozenset({"failed", "watchdog", "budget"})


def exit_code(message: ChatMessage) -> int:
    """The exit status of ``skillrt run`` / ``resume`` for the reply that ended the task."""
    outcome = message.data.get("outcome")
    if outcome == "storage":
        return EXIT_STORAGE
    if message.state == "WAITING_INPUT" or outcome == "paused":
        return EXIT_UNFINISHED
    if outcome == "cancelled" or message.state == "CANCELLED":
        return EXIT_CANCELLED
    if outcome in _FAILED_OUTCOMES or message.state == "ERROR":
        return EXIT_FAILED
    if outcome in _USAGE_OUTCOMES or "error" in message.data:
        return EXIT_USAGE
    return EXIT_OK
