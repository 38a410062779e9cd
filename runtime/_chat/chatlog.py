"""What the runtime keeps for people: chat turns, each session's focus, the history of tasks,
and the summaries and error texts it shows.

Every text here is shown or stored for people, so it is redacted and *then* cut (a secret that
straddles the cut must not survive as a prefix), and paths inside the blog are given relative
to it. A write to the history that fails (a read-only or full disk) is logged and never fails a
task or a reply: the history is a record, not the task's state.

History writes are queued and written together, in one transaction, by the group commit's
thread right after the round's checkpoints (never on the event loop), and at the latest before
a reply reaches its caller (``written``): one commit for a chat turn, or for many tasks ending
at once. A history kept in memory (``checkpoints = false``: ``MemoryHistory``) is no I/O and
no SQLite: each entry is written as it is made, on the loop, with nothing queued, no timer and
no round trip to the thread.
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
from collections.abc import Callable
from threading import get_ident
from typing import TYPE_CHECKING, Any, Literal

import structlog

from skillrt._io.logs import Redactor
from skillrt._state.records import TaskRecord
from skillrt._state.summary import summarize
from skillrt.exceptions import SkillrtError, UserError
from skillrt.messages import ChatMessage, TaskSummary
from skillrt.settings import RuntimeConfig
from skillrt.skill.conversation import KEEP_TURNS, Sessions, focus_from_result

if TYPE_CHECKING:
    from skillrt._state.committer import Committer
    from skillrt._state.protocol import HistoryStore
    from skillrt.blog.files import FileStore

__all__ = ["ChatLog"]

_DB_FAULTS = (SkillrtError, sqlite3.Error, OSError)
_LATER_S = 1.0  # how long a request's history entry may wait for its reply's


class ChatLog:
    """The sessions (turns and focus) and the history, as people see them."""

    def __init__(
        self,
        config: RuntimeConfig,
        redactor: Redactor,
        clock: Callable[[], float],
        logger: structlog.stdlib.BoundLogger,
    ) -> None:
        self.redactor = redactor
        self.clock = clock
        self.logger = logger
        self.history: HistoryStore | None = None  # once the runtime is open
        self._committer: Committer | None = None  # whose thread writes the history
        self._tasks: list[dict[str, Any]] = []  # history writes not made yet
        self._messages: list[tuple[str, dict[str, Any]]] = []
        self._flush_due = False
        # A request's entry is written by then at the latest (with the committer: one timer
        # for every request of its second, on the loop that armed it; see ``_later``).
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None
        self._since: float | None = None  # when the oldest request still queued was (loop time)
        self._at_once = False  # each entry written as it is made (``MemoryHistory``)
        # Each session's recent turns and focus, read back from the history once it is open.
        self.sessions = Sessions(None, max_tokens=config.conversation.max_tokens)
        self._roots = [r for r in {str(config.root), str(config.root.resolve())} if r != os.sep]

    def open(self, history: HistoryStore, committer: Committer | None = None) -> None:
        self.history = history
        # A history in memory (``checkpoints = false``) is no I/O: written here, at the end of
        # the turn or before the reply (``written``), not handed to the commit thread and
        # waited for (a thread's round trip and two turns of the loop a task, for a write to
        # memory).
        if getattr(history, "in_memory", False):
            committer = None
        self._committer = committer
        # A history in Python (``MemoryHistory``): a write costs less than queueing it, so each
        # entry goes at once; nothing is ever queued, timed or flushed.
        self._at_once = committer is None and getattr(history, "written_at_once", False)
        if committer is not None:
            committer.add_side(self._collect)
        self.sessions.reader = self._read_messages

    @property
    def at_once(self) -> bool:
        """Whether every entry is written as it is made (so the history holds the turn once
        its reply is recorded, with nothing to wait for)."""
        return self._at_once

    @property
    def in_rounds(self) -> bool:
        """Whether the history is written with the committer's rounds (so a round on disk
        holds every entry queued before it)."""
        return self._committer is not None

    # --- texts shown to people --------------------------------------------------------------

    def shown(self, text: str, limit: int) -> str:
        """``text`` redacted, *then* cut."""
        return self.redactor.text(text)[:limit]

    def blog_relative(self, text: str) -> str:
        """``text`` with the blog's absolute path cut off its paths (``posts/a.md``, never
        ``/home/me/blog/posts/a.md``): an error a library raised names files by full path."""
        for root in self._roots:
            # The root itself, or followed by a separator; not a longer name (/blog2).
            pattern = re.escape(root) + r"(?:/|(?![\w.\-]))"
            text = re.sub(pattern, lambda m: "" if m.group(0).endswith("/") else ".", text)
        return text

    def error_text(self, exc: BaseException) -> str:
        """An exception's message as it may be shown: blog-relative and redacted."""
        return self.redactor.text(self.blog_relative(str(exc)))

    def summary(self, record: TaskRecord) -> TaskSummary:
        return summarize(record, self.redactor)

    # --- the history and the sessions -------------------------------------------------------

    def add_task(self, record: TaskRecord, state: str, message: str) -> None:
        """One history entry for a task that ended: every field redacted, texts before cutting."""
        if self.history is None:
            return
        error = record.last_error
        # ``fields``: every string redacted (one shorter than any secret as it is, without a
        # call); none of these keys is named like a secret.
        entry = self.redactor.fields(
            {
                "task_id": record.id,
                "session_id": record.session_id,
                "skill": record.skill,
                "intent": record.intent.get("type"),
                "state": state,
                "input": self.shown(record.raw_input, 500),
                "tokens": record.tokens,
                "cost": record.cost,
                "started_at": record.created_at,
                "finished_at": self.clock(),
                "message": self.shown(message, 2000),
                "error": None if error is None else self.shown(error, 2000),
            }
        )
        if self._at_once:
            self._write(self.history, [entry], [])
            return
        self._tasks.append(entry)
        self._queued()

    def add_message(
        self,
        session_id: str,
        role: Literal["user", "assistant"],
        content: str,
        task_id: str | None = None,
    ) -> None:
        """One chat message, kept as a turn of the session and in the history (an assistant
        message records the session's focus, and its last skill, as they are after it)."""
        text = self.shown(content, 4000)
        self.sessions.add_turn(session_id, role, text, task_id)
        if self.history is not None:
            entry: dict[str, Any] = {"role": role, "content": text, "task_id": task_id}
            if role == "assistant":
                entry["focus"] = self.sessions.focus(session_id)
                last_skill = self.sessions.last_skill(session_id)
                if last_skill is not None:
                    entry["skill"] = last_skill
            entry["at"] = self.clock()
            if self._at_once:
                self._write(self.history, [], [(session_id, entry)])
                return
            self._messages.append((session_id, entry))
            # A request waits (a second at most) for its turn's reply, to share its write.
            self._queued(later=role == "user")

    def add_reply(self, session_id: str, skill: str | None, message: ChatMessage) -> None:
        """A task's reply: a completed one may move the focus (the post it wrote or read)."""
        self.sessions.set_last_skill(session_id, skill)
        if message.state == "COMPLETED":
            changed, focus = focus_from_result(skill, message.data)
            if changed:
                self.sessions.set_focus(session_id, focus)
        self.add_message(session_id, "assistant", message.content, message.task_id)

    async def written(self) -> None:
        """Return once the history holds what was queued (before a caller hears its reply)."""
        if self._committer is None:
            self.flush()
        else:
            self._due()  # a request still waiting for company: now
            await self._committer.settled()

    def set_focus(self, session_id: str, path: str | None) -> None:
        self.sessions.set_focus(session_id, path)
        if self.history is not None:
            entry: dict[str, Any] = {
                "role": "system",
                "content": "",
                "focus": self.sessions.focus(session_id),
            }
            entry["at"] = self.clock()
            if self._at_once:
                self._write(self.history, [], [(session_id, entry)])
                return
            self._messages.append((session_id, entry))
            self._queued()

    def focus_on(self, path: str | None, session_id: str, files: FileStore) -> str | None:
        """Set the session's focus to ``path`` (None clears it); returns it relative to the
        blog. ``UserError`` for a path outside the blog or a file that does not exist."""
        rel = None if path is None else files.relative(path)
        if rel is not None and not files.exists(rel):
            raise UserError(f"{rel} does not exist")
        self.set_focus(session_id, rel)
        return self.sessions.focus(session_id)

    def apply_focus(self, context: dict[str, Any], session_id: str, files: FileStore) -> None:
        """An open file a blog tool passed becomes the session's focus; without one, the focus
        stands for it, so "make it shorter" acts on the post last worked on. The skill of the
        session's last task goes along too (a browsing session's follow-ups)."""
        last_skill = self.sessions.last_skill(session_id)
        if last_skill is not None:
            context["last_skill"] = last_skill
        current = context.get("current_file")
        if isinstance(current, str) and current.strip():
            try:
                path = files.relative(current)
            except UserError:
                return
            if path != self.sessions.focus(session_id):
                self.set_focus(session_id, path)
            return
        focus = self.sessions.focus(session_id)
        if focus is None:
            return
        if not files.exists(focus):  # deleted or moved outside skillrt
            self.set_focus(session_id, None)
            return
        context["current_file"] = focus
        context["focus"] = focus

    def _queued(self, *, later: bool = False) -> None:
        """Have the queued entries written: with the next commit round, or within
        ``_LATER_S`` when ``later`` (a request: its reply usually comes first, and both go in
        one write; a long task's request is in the history within the second all the same)."""
        if self._committer is not None:
            if not later:
                self._committer.nudge()
            else:
                self._later(self._committer)
            return
        if self._flush_due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a synchronous caller: write now
            self.flush()
            return
        if later:  # (in memory: the reply's write, or the timer's, takes it)
            if self._timer is None:
                self._timer = loop.call_later(_LATER_S, self._due)
            return
        self._flush_due = True
        loop.call_soon(self.flush)

    def _later(self, committer: Committer) -> None:
        """Have a request's entry written within ``_LATER_S`` if no round takes it first (its
        reply's, usually). One timer serves the requests one after another: it is armed when
        none is due on this loop, and when it rings it looks at the oldest request still
        queued (``_since``), re-armed for what that one has left, or has it written; a round
        that takes the entries meanwhile leaves it nothing to do. (Arming and cancelling a
        timer at every request left each in the loop's heap until its time, and every timer
        after it was sifted past them.)"""
        loop = self._timer_loop
        if loop is None or getattr(loop, "_thread_id", None) != get_ident():
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                committer.nudge()
                return
            if self._timer is not None:  # armed on a loop that no longer runs here
                self._timer.cancel()
                self._timer = None
            self._timer_loop = loop
        if self._since is None:
            self._since = loop.time()
        if self._timer is None:
            self._timer = loop.call_later(_LATER_S, self._rang)

    def _rang(self) -> None:
        """The timer of ``_later``: the oldest request still queued written if its time is up,
        else the timer armed again for what it has left."""
        self._timer = None
        since, loop = self._since, self._timer_loop
        if since is None or loop is None:  # written meanwhile
            return
        left = since + _LATER_S - loop.time()
        if left > 0:
            self._timer = loop.call_later(left, self._rang)
            return
        self._due()

    def _due(self) -> None:
        """Have what is queued written with the next round (the timer's end, or now)."""
        if self._timer is not None and self._committer is None:
            self._timer.cancel()
            self._timer = None
        if self._tasks or self._messages:
            if self._committer is not None:
                self._committer.nudge()
            else:
                self.flush()

    def _collect(self) -> Callable[[], None] | None:
        """The queued entries as one job for the commit thread (asked on the event loop)."""
        history, tasks, messages = self.history, self._tasks, self._messages
        if history is None or not (tasks or messages):
            return None
        if self._committer is not None:
            self._since = None  # (``_later``'s timer, if armed, finds nothing to do)
        elif self._timer is not None:  # written now: no later flush needed
            self._timer.cancel()
            self._timer = None
        self._tasks, self._messages = [], []
        return lambda: self._write(history, tasks, messages)

    def _write(
        self,
        history: HistoryStore,
        tasks: list[dict[str, Any]],
        messages: list[tuple[str, dict[str, Any]]],
    ) -> None:
        try:
            history.add_batch(tasks, messages)
        except _DB_FAULTS as exc:
            self.logger.error("agent.error", where="history", error=self.blog_relative(str(exc)))

    def flush(self) -> None:
        """Write the queued history entries now, in one transaction (in the commit thread, after
        what it is writing, when there is one)."""
        self._flush_due = False
        if self._committer is not None:
            self._committer.flush_sync()
            if self._timer is not None:  # nothing left for it (at close: no timer left behind)
                self._timer.cancel()
                self._timer = None
            return
        job = self._collect()
        if job is not None:
            job()

    async def load_session(self, session_id: str) -> None:
        """Read a session that is not in memory from the history in a thread, after what is
        queued is written (the commit thread's turn): its first use then reads nothing on
        the event loop. Otherwise a new session (a server sees many) would flush the queue
        and read SQLite on the loop, holding up every other request meanwhile."""
        if self.history is None or self.sessions.held(session_id):
            return
        if self._committer is not None:
            self._due()
            await self._committer.settled()
        else:
            self.flush()  # (in memory: no I/O)
        stored = await asyncio.to_thread(self._read_stored, session_id, KEEP_TURNS * 2)
        self.sessions.load(session_id, stored)

    def _read_stored(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        if self.history is None:  # pragma: no cover - checked by the caller
            return []
        try:
            return self.history.messages(session_id, limit)
        except _DB_FAULTS as exc:
            self.logger.error("agent.error", where="history", error=self.blog_relative(str(exc)))
            return []

    def _read_messages(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        if self.history is None:
            return []
        self.flush()
        try:
            return self.history.messages(session_id, limit)
        except _DB_FAULTS as exc:
            self.logger.error("agent.error", where="history", error=self.blog_relative(str(exc)))
            return []
