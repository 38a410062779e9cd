"""What a leak is: a secret, whole or any 12-character window of it, in some output."""

from __future__ import annotations

WINDOW = 12


def windows(secret: str, size: int = WINDOW) -> list[str]:
    return [secret[i : i + size] for i in range(len(secret) - size + 1)]


def leaks(text: str, *secrets: str) -> list[str]:
    """The windows of ``secrets`` found in ``text`` (empty when none is)."""
    return [w for s in secrets for w in windows(s) if w in text]
