"""Secret text the Browse agent types, kept out of what rests on disk.

Text typed into a password field, or text the redactor recognises as a secret (a configured
secret, an API-key-shaped string), is typed into the page as it is, but everywhere else it is
``SECRET_TEXT``: in the step's actions and results (so in the task's journal), in the replay
recording (whose entry is marked ``"secret": true``, so replay refuses it rather than typing
nothing) and in the events. ``scrub`` also replaces every such text typed in this run wherever
else it turns up in a step's record, such as the navigator's memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skillrt.skills.browsing.actions import TypeAction

if TYPE_CHECKING:
    from skillrt._io.logs import Redactor
    from skillrt.skills.browsing.actions import Action
    from skillrt.skills.browsing.observation import Observation

__all__ = ["SECRET_TEXT", "TypedSecrets"]

SECRET_TEXT = "<secret>"  # noqa: S105 - a placeholder shown instead of a secret
"""What the journal, the recording and the events hold instead of secret typed text."""
MIN_SCRUBBED = 4
"""Shorter typed secrets are not searched for elsewhere (they would match ordinary text)."""


class TypedSecrets:
    """The secret texts one Browse run typed, and the actions as they may be stored."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._typed: set[str] = set()

    def shown(self, action: Action, seen: Observation | None) -> Action:
        """``action`` as it may be stored and shown: secret typed text replaced."""
        if isinstance(action, TypeAction) and self._is_secret(action, seen):
            self._typed.add(action.text)
            return action.model_copy(update={"text": SECRET_TEXT})
        return action

    def _is_secret(self, action: TypeAction, seen: Observation | None) -> bool:
        """Typed into a password field, or text the redactor recognises as a secret."""
        if not action.text:
            return False
        target = seen.element(action.index) if seen is not None else None
        if target is not None and target.signature.type == "password":
            return True
        return self._redactor.text(action.text) != action.text

    def scrub(self, value: Any) -> Any:
        """A JSON-like value with every secret typed in this run replaced by ``SECRET_TEXT``."""
        secrets = sorted((s for s in self._typed if len(s) >= MIN_SCRUBBED), key=len, reverse=True)
        if not secrets:
            return value
        return _replace(value, secrets)


def _replace(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, SECRET_TEXT)
        return value
    if isinstance(value, dict):
        return {k: _replace(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_replace(v, secrets) for v in value]
    return value
