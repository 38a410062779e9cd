"""Which chat session ``skillrt chat`` opens: a new one, the last one, or a named one.

The id of the last session used in a blog is kept in ``<state>/last-session``; its turns and
focus are in the history, which the runtime reads back (see ``skillrt.skill.conversation``).
"""

from __future__ import annotations

import re
from pathlib import Path

from skillrt.cli.common import fail
from skillrt.messages import new_id

__all__ = ["LAST_SESSION", "choose_session", "last_session", "remember_session"]

LAST_SESSION = "last-session"
_NAME = re.compile(r"[\w.@:+-]{1,100}")


def last_session(state: Path) -> str | None:
    """The id of the last session used with this state folder, if any."""
    try:
        text = (state / LAST_SESSION).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if _NAME.fullmatch(text) else None


def remember_session(state: Path, session_id: str) -> None:
    """Make ``session_id`` the one ``--continue`` picks up (written whole, then renamed)."""
    state.mkdir(parents=True, exist_ok=True)
    temp = state / f".{LAST_SESSION}.tmp"
    temp.write_text(session_id + "\n", encoding="utf-8")
    temp.replace(state / LAST_SESSION)


def choose_session(state: Path, *, name: str | None, resume_last: bool) -> tuple[str, bool]:
    """``(session_id, continued)``: ``--session NAME``, else ``--continue``'s last session,
    else a new one. ``continued`` is False when there was no last session to continue."""
    if name is not None:
        name = name.strip()
        if not _NAME.fullmatch(name):
            raise fail(
                "a session name is 1 to 100 letters, digits or . _ - @ : + (no spaces),"
                f" not {name!r}"
            )
        return name, True
    if resume_last:
        last = last_session(state)
        if last is not None:
            return last, True
    return new_id(), False
