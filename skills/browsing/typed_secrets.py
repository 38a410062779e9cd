"""Secret text the Browse agent types, kept out of what rests on disk.

Text typed into a password field, or text the guard knows as a secret (a configured secret,
an API-key-shaped string), is typed into the page as it is (where the ``SecretGuard`` lets it
go), but everywhere else it is ``SECRET_TEXT``: in the step's actions and results (so in the
task's journal), in the replay recording (whose entry is marked ``"secret": true``, so replay
refuses it rather than typing nothing) and in the events. A ``goto`` whose URL holds a secret
is shown with the secret replaced too (the guard refuses to send it). ``scrub`` replaces every
such text typed in this run wherever else it turns up in a step's record, such as the
navigator's memory (the journal: a configured secret left in a record keeps the runtime from
journalling that step, as for any step result). ``redact`` also replaces every secret the
guard knows, for what is shown or leaves the task (events, logs, recordings, the reply).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from skillrt.skills.browsing.actions import GotoAction, TypeAction
from skillrt.skills.browsing.secret_guard import MIN_SECRET, SECRET_TEXT, SecretGuard

if TYPE_CHECKING:
    from skillrt.skills.browsing.actions import Action
    from skillrt.skills.browsing.observation import Observation

__all__ = ["SECRET_TEXT", "TypedSecrets"]

MIN_SCRUBBED = MIN_SECRET
"""Shorter typed secrets are not searched for elsewhere (they would match ordinary text)."""


class TypedSecrets:
    """The secret texts one Browse run typed, and the actions as they may be stored."""

    def __init__(self, guard: SecretGuard) -> None:
        self.guard = guard
        self._typed: set[str] = set()

    def shown(self, action: Action, seen: Observation | None) -> Action:
        """``action`` as it may be stored and shown: secret typed text replaced."""
        if isinstance(action, TypeAction) and self._is_secret(action, seen):
            self._typed.add(action.text)
            return action.model_copy(update={"text": SECRET_TEXT})
        if isinstance(action, GotoAction):
            url = self.guard.scrub(self._scrub_text(action.url))
            if url != action.url:
                return action.model_copy(update={"url": url})
        return action

    def _is_secret(self, action: TypeAction, seen: Observation | None) -> bool:
        """Typed into a password field, or text the guard knows as a secret."""
        if not action.text:
            return False
        target = seen.element(action.index) if seen is not None else None
        if target is not None and target.signature.type == "password":
            return True
        return self.guard.is_secret(action.text)

    def scrub(self, value: Any) -> Any:
        """A JSON-like value with every secret typed in this run replaced by ``SECRET_TEXT``."""
        return _walk(value, self._scrub_text)

    def redact(self, value: Any) -> Any:
        """``scrub``, and every secret the guard knows (any form) replaced, key shapes too."""
        return _walk(value, lambda text: self.guard.scrub(self._scrub_text(text)))

    def _scrub_text(self, value: str) -> str:
        for secret in sorted(
            (s for s in self._typed if len(s) >= MIN_SCRUBBED), key=len, reverse=True
        ):
            value = value.replace(secret, SECRET_TEXT)
        return value


def _walk(value: Any, fix: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fix(value)
    if isinstance(value, dict):
        return {k: _walk(v, fix) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(v, fix) for v in value]
    return value
