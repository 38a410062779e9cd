"""Conversations: each session's recent turns and its focus, kept by the runtime.

A session's turns are the chat messages the history stores; the runtime reads them back the
first time it sees the session (after a restart too) and keeps the newest in memory. The
**focus** is the post the session last worked on: written, edited, summarised, translated,
created, or opened (``/open``, or a ``current_file`` a blog tool passed). Follow-ups such as
"make it shorter" act on it. Skills see both as ``ctx.conversation``; whatever of it goes to a
model is bounded in tokens (``conversation.max_tokens``).

A skill moves the focus by putting ``focus`` (a post path) in its result's data; a result
with a ``path`` moves it there; a deleted post (``deleted: true``) is no longer the focus.
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from skillrt.llm.base import LLMMessage, estimate_tokens

__all__ = [
    "PAGE_QUOTE",
    "Conversation",
    "Sessions",
    "Turn",
    "bound_turns",
    "focus_from_result",
    "without_page_quotes",
]

Role = Literal["user", "assistant"]
POST_SUFFIXES = (".md", ".markdown", ".mdx")
KEEP_TURNS = 200  # turns held in memory per session (what goes to a model is bounded apart)
_POST_IN_TEXT = re.compile(r"(?<![\w./-])([\w./-]{1,200}\.(?:md|markdown|mdx))(?![\w])")
PAGE_QUOTE = "page-quote"
"""The info string of a code block in a reply that quotes a web page as written (untrusted):
such a block is shown to the user, and never sent to a model with the conversation."""
_PAGE_QUOTE_BLOCK = re.compile(
    rf"^([ \t]{{0,3}})(`{{3,}}|~{{3,}}){PAGE_QUOTE}[ \t]*\n.*?(?:^[ \t]{{0,3}}\2[ \t]*$|\Z)",
    re.S | re.M,
)


def without_page_quotes(text: str) -> str:
    """``text`` with each web page quote (a ``PAGE_QUOTE`` block) replaced by a note: page
    text reaches a model only inside the browsing skills' untrusted-content blocks."""
    return _PAGE_QUOTE_BLOCK.sub(r"\1(a quote of a web page, left out)", text)


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a session: who said it and what (``task_id`` of the task it ran)."""

    role: Role
    content: str
    task_id: str | None = None


def bound_turns(turns: tuple[Turn, ...] | list[Turn], max_tokens: int) -> tuple[Turn, ...]:
    """The newest turns whose estimated tokens fit in ``max_tokens`` (oldest first).

    A turn longer than a third of the bound is cut (its start kept), so one long answer never
    crowds out the turns around it; the newest turn is always kept, cut to fit if need be.
    """
    per_turn = max(16, max_tokens // 3)
    kept: list[Turn] = []
    used = 0
    for turn in reversed(turns):
        content = _clip_tokens(turn.content, per_turn)
        cost = estimate_tokens(content) + 4  # the role and the message's framing
        if kept and used + cost > max_tokens:
            break
        if not kept and cost > max_tokens:
            content = _clip_tokens(content, max(1, max_tokens - 4))
            cost = estimate_tokens(content) + 4
        kept.append(Turn(turn.role, content, turn.task_id))
        used += cost
    return tuple(reversed(kept))


def _clip_tokens(text: str, limit: int) -> str:
    if estimate_tokens(text) <= limit:
        return text
    size = len(text)
    while size > 1 and estimate_tokens(text[:size]) > limit - 1:
        size = size * 3 // 4
    return text[:size].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class Conversation:
    """What a skill knows of its session: the recent turns (bounded) and the focus.

    ``turns`` are oldest first and end with the current request; ``max_tokens`` is the bound
    they were cut to. ``mentioned`` lists the posts named in the turns, newest first (for a
    "which post?" question).
    """

    session_id: str
    turns: tuple[Turn, ...] = ()
    focus: str | None = None
    max_tokens: int = 1500

    @property
    def mentioned(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for turn in reversed(self.turns):
            for path in _POST_IN_TEXT.findall(turn.content):
                seen.setdefault(path.strip("./") if path.startswith("./") else path, None)
        return tuple(seen)

    @property
    def last_answer(self) -> str | None:
        """The assistant's last reply before the current request."""
        for turn in reversed(self.turns):
            if turn.role == "assistant":
                return without_page_quotes(turn.content)
        return None

    def messages(self, *, exclude_last: bool = False) -> list[LLMMessage]:
        """The turns as chat messages (already within ``max_tokens``)."""
        turns = self.turns[:-1] if exclude_last and self.turns else self.turns
        return [{"role": t.role, "content": without_page_quotes(t.content)} for t in turns]

    def transcript(self) -> str:
        """The turns as plain text, one ``role: content`` paragraph each."""
        return "\n\n".join(f"{t.role}: {without_page_quotes(t.content)}" for t in self.turns)


def focus_from_result(skill: str | None, data: Mapping[str, Any]) -> tuple[bool, str | None]:
    """``(changed, focus)`` after a task that completed with ``data``.

    ``focus`` in the data wins; a deleted post drops the focus; else a post ``path`` (or a
    summarised post's ``source``) becomes it. Anything that is not a post path is ignored.
    """
    if "focus" in data:
        value = data["focus"]
        return True, value if _is_post(value) else None
    if data.get("deleted") is True:
        return True, None
    for key in ("path", "source"):
        value = data.get(key)
        if _is_post(value):
            return True, str(value)
    return False, None


def _is_post(value: object) -> bool:
    return isinstance(value, str) and value.lower().endswith(POST_SUFFIXES) and len(value) < 500


class _Session:
    __slots__ = ("focus", "last_skill", "turns")

    def __init__(self) -> None:
        self.turns: deque[Turn] = deque(maxlen=KEEP_TURNS)
        self.focus: str | None = None
        self.last_skill: str | None = None  # the skill of the session's last task


HistoryReader = Callable[[str, int], list[dict[str, Any]]]
"""``history.messages(session_id, limit)``: newest first."""


class Sessions:
    """Every session's turns and focus, read back from the history on first use.

    ``reader`` returns a session's stored messages (newest first); a message with a ``focus``
    key records the focus as it was then (``None`` when cleared). Only ``user`` and
    ``assistant`` messages are turns. At most ``max_sessions`` are held in memory (a server
    may see many); the least recently used is dropped and read back when it returns.
    """

    def __init__(
        self, reader: HistoryReader | None, *, max_tokens: int = 1500, max_sessions: int = 256
    ) -> None:
        self.reader = reader
        self.max_tokens = max_tokens
        self.max_sessions = max(1, max_sessions)
        self._sessions: OrderedDict[str, _Session] = OrderedDict()

    def _get(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is not None:
            self._sessions.move_to_end(session_id)
            return session
        stored = self.reader(session_id, KEEP_TURNS * 2) if self.reader is not None else []
        return self._build(session_id, stored)

    def held(self, session_id: str) -> bool:
        """Whether the session is in memory (else the next use reads it from the history)."""
        return session_id in self._sessions

    def load(self, session_id: str, stored: list[dict[str, Any]]) -> None:
        """Hold the session from ``stored`` (what ``reader`` would return, read elsewhere: a
        server reads it in a thread, off its event loop), unless it is held already."""
        if session_id not in self._sessions:
            self._build(session_id, stored)

    def _build(self, session_id: str, stored: list[dict[str, Any]]) -> _Session:
        session = _Session()
        focus_seen = False
        for entry in stored:  # newest first
            if not focus_seen and "focus" in entry:
                value = entry["focus"]
                session.focus = value if _is_post(value) else None
                focus_seen = True
            if session.last_skill is None and isinstance(entry.get("skill"), str):
                session.last_skill = entry["skill"]
        for entry in reversed(stored):
            role, content = entry.get("role"), entry.get("content")
            if role in ("user", "assistant") and isinstance(content, str):
                task_id = entry.get("task_id")
                session.turns.append(
                    Turn(role, content, task_id if isinstance(task_id, str) else None)
                )
        if self.reader is not None:  # before the history is open, nothing is kept
            self._sessions[session_id] = session
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
        return session

    def add_turn(self, session_id: str, role: Role, content: str, task_id: str | None) -> None:
        self._get(session_id).turns.append(Turn(role, content, task_id))

    def focus(self, session_id: str) -> str | None:
        return self._get(session_id).focus

    def set_focus(self, session_id: str, path: str | None) -> None:
        self._get(session_id).focus = path if _is_post(path) else None

    def last_skill(self, session_id: str) -> str | None:
        """The skill of the session's last task (a browsing session's follow-ups go on)."""
        return self._get(session_id).last_skill

    def set_last_skill(self, session_id: str, skill: str | None) -> None:
        if skill is not None:
            self._get(session_id).last_skill = skill

    def conversation(self, session_id: str, *, max_tokens: int | None = None) -> Conversation:
        session = self._get(session_id)
        bound = self.max_tokens if max_tokens is None else max_tokens
        return Conversation(
            session_id=session_id,
            turns=bound_turns(list(session.turns), bound),
            focus=session.focus,
            max_tokens=bound,
        )

    def conversation_later(self, session_id: str) -> Callable[[], Conversation]:
        """``conversation(session_id)`` as it stands now, bounded only when first asked for
        (most skills never look, and bounding a long session is not free)."""
        session = self._get(session_id)
        turns, focus, bound = tuple(session.turns), session.focus, self.max_tokens
        return lambda: Conversation(
            session_id=session_id,
            turns=bound_turns(turns, bound),
            focus=focus,
            max_tokens=bound,
        )

    def turns(self, session_id: str) -> tuple[Turn, ...]:
        """Every turn held for the session (unbounded; at most the newest 200)."""
        return tuple(self._get(session_id).turns)

    def forget(self, session_id: str) -> None:
        """Drop a session from memory (it is read back from the history when used again)."""
        self._sessions.pop(session_id, None)
