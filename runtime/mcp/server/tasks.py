"""Long calls as MCP tasks (task-augmented ``tools/call``), backed by skillrt's durable tasks.

The MCP task id is the skillrt task's id. ``TaskBook`` runs the call beside the request that
started it and answers ``tasks/get``, ``tasks/result``, ``tasks/cancel`` and ``tasks/list``.
What lasts is on disk: a small JSON file per task in ``<state>/mcp-tasks/`` (written when the
task is created, replaced by its result when it ends, atomically) and the task's own
checkpoint. So a client that comes back later, or a server started again after it stopped or
crashed, still finds it: a task cut off by the restart is resumed from its last completed step
when asked for, and its result is fetched as if nothing had happened.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import tempfile
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp import types
from mcp.shared.exceptions import McpError

from skillrt.agent import AgentRuntime
from skillrt.mcp.server.results import is_waiting, message_result, redacted
from skillrt.messages import ChatMessage, TaskSummary, new_id

__all__ = ["TaskBook", "mcp_status"]

Run = Callable[[Callable[[str], None]], Awaitable[ChatMessage | None]]
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_POLL_MS = 500
# The ttl of a task whose client asked for none (``task: {}``): the SDK sends a Task's null
# fields not at all, and its client refuses a Task with no ttl ("task.ttl Field required"),
# so such a call's CreateTaskResult, and every tasks/get and tasks/list after, failed.
_DEFAULT_TTL_MS = 24 * 3600 * 1000
_NOT_OVER = frozenset({"paused", "interrupted", "closed"})  # the task goes on (resumable)
_STOPPED = frozenset({"PAUSED", "ERROR"})  # a task's states in which it can be resumed


def mcp_status(message: ChatMessage) -> str:
    """The MCP status a reply stands for."""
    if is_waiting(message):
        return "input_required"
    if message.data.get("outcome") in _NOT_OVER:
        return "working"
    if message.state == "CANCELLED" or message.data.get("outcome") == "cancelled":
        return "cancelled"
    return "failed" if message_result(message).isError else "completed"


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _not_found(task_id: str) -> McpError:
    return McpError(
        types.ErrorData(code=types.INVALID_PARAMS, message=f"Task not found: {task_id}")
    )


class TaskBook:
    """The MCP tasks of one runtime: the calls running now and the records on disk."""

    def __init__(self, runtime: AgentRuntime, folder: Path | None = None) -> None:
        self.runtime = runtime
        self.folder = folder or runtime.config.state_path / "mcp-tasks"
        self.jobs: dict[str, asyncio.Future[ChatMessage | None]] = {}
        self._resumed: set[str] = set()  # the jobs that resume a stopped task (``_resume``)
        self.eliciting: set[str] = set()  # the tasks whose question is out by elicitation

    # --- records ---------------------------------------------------------------------------------

    def _path(self, task_id: str) -> Path | None:
        return self.folder / f"{task_id}.json" if _ID.match(task_id) else None

    def _read(self, task_id: str) -> dict[str, Any] | None:
        path = self._path(task_id)
        if path is None:
            return None
        try:
            found: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return found

    def _write(self, task_id: str, record: dict[str, Any]) -> None:
        path = self._path(task_id)
        if path is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(record, fh, ensure_ascii=False)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def record(self, task_id: str, message: ChatMessage) -> None:
        """Keep what a call on an MCP task answered (its status, and its result once over),
        redacted: the record is read back by ``tasks/get`` and ``tasks/result``."""
        old = self._read(task_id)
        if old is None:
            return  # not an MCP task
        message = redacted(self.runtime.redactor, message)
        status = mcp_status(message)
        old.update(status=status, statusMessage=_short(message.content), lastUpdatedAt=_now())
        if status != "working":
            old["result"] = message_result(message).model_dump(mode="json", exclude_none=True)
        self._write(task_id, old)

    # --- calls -----------------------------------------------------------------------------------

    def prune(self, now: float | None = None) -> int:
        """Forget the records of tasks that ended longer ago than their ``ttl``; how many."""
        if not self.folder.is_dir():
            return 0
        now = datetime.now(UTC).timestamp() if now is None else now
        gone = 0
        for path in self.folder.glob("*.json"):
            found = self._read(path.stem)
            if found is None or found.get("status") not in ("completed", "failed", "cancelled"):
                continue
            ttl = found.get("ttl")
            try:
                ended = datetime.fromisoformat(found["lastUpdatedAt"]).timestamp()
            except (KeyError, TypeError, ValueError):
                continue
            if isinstance(ttl, int) and ended + ttl / 1000 < now:
                path.unlink(missing_ok=True)
                gone += 1
        return gone

    async def start(self, run: Run, ttl: int | None) -> types.CreateTaskResult:
        """Start the call as a task; returns once its id is known (at once, for a refusal)."""
        await asyncio.to_thread(self.prune)
        bound: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        created = _now()

        def on_task(task_id: str) -> None:
            if not bound.done():
                self._open(task_id, created, ttl)
                bound.set_result(task_id)

        job = asyncio.ensure_future(run(on_task))
        waiting: list[asyncio.Future[Any]] = [bound, job]
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if not bound.done():  # no task: refused, or answered in one line
            on_task("mcp-" + new_id())
        task_id = bound.result()
        self.jobs[task_id] = job
        job.add_done_callback(lambda fut: self._done(task_id, fut))
        return types.CreateTaskResult(task=self._task(task_id))

    def _open(self, task_id: str, created: str, ttl: int | None) -> None:
        """The record of a call that starts task ``task_id``: a new one, or, for a task that
        has one (``answer`` made as a task goes on with the task it answers), that record
        working again, its creation time and ttl kept. (The answer's call wrote a new record
        over it: the task seemed created by the answer, and was forgotten after the answer's
        ttl, not its own.)"""
        old = self._read(task_id)
        if old is None:
            self._write(task_id, _record(task_id, created, ttl))
            return
        for done in ("result", "statusMessage"):  # the question answered: over no more
            old.pop(done, None)
        old.update(status="working", lastUpdatedAt=created)
        self._write(task_id, old)

    async def refused(
        self, result: types.CallToolResult, ttl: int | None
    ) -> types.CreateTaskResult:
        """A call made as a task that was refused before it ran (bad params, an unknown tool or
        task): a task over at once, ``failed``, whose result is the refusal. (Answered with the
        refusal itself, the client that asked for a task could not read it.)"""
        await asyncio.to_thread(self.prune)
        task_id = "mcp-" + new_id()
        record = _record(task_id, _now(), ttl)
        record.update(
            status="failed",
            statusMessage=_short(" ".join(b.text for b in result.content if b.type == "text")),
            result=result.model_dump(mode="json", exclude_none=True),
        )
        self._write(task_id, record)
        return types.CreateTaskResult(task=self._task(task_id))

    def _done(self, task_id: str, fut: asyncio.Future[ChatMessage | None]) -> None:
        if self.jobs.get(task_id) is fut:
            del self.jobs[task_id]
            self._resumed.discard(task_id)
        if fut.cancelled():
            return
        error = fut.exception()
        if error is not None:
            message = ChatMessage(
                content=f"{type(error).__name__}: {error}",
                task_id=task_id,
                state="ERROR",
                data={"outcome": "failed", "error": "internal"},
            )
        else:
            message = fut.result() or ChatMessage(
                content="the task cannot be resumed now", task_id=task_id, state="ERROR",
                data={"outcome": "failed", "error": "task_conflict"},
            )  # fmt: skip
        self.record(task_id, message)

    def _task(self, task_id: str) -> types.Task:
        found = self._read(task_id)
        if found is None:
            raise _not_found(task_id)
        return types.Task(
            taskId=task_id,
            status=found.get("status", "working"),
            statusMessage=found.get("statusMessage"),
            createdAt=found["createdAt"],
            lastUpdatedAt=found.get("lastUpdatedAt", found["createdAt"]),
            ttl=_ttl(found.get("ttl")),
            pollInterval=_POLL_MS,
        )

    def _adopt(self, task_id: str) -> bool:
        """Give a record to a task that a plain call (``tools/call`` without ``task``) of an
        MCP session started and a server that died cut off: its checkpoint holds it, resumable
        (``skillrt resume`` resumed it), but the editor, given no task, could neither see nor
        resume it ("Task not found"). Listed and fetched as an MCP task from then on, it is
        resumed as one. Whether it was adopted (False: not such a task)."""
        if task_id in self.jobs or self._read(task_id) is not None:
            return False
        summary = self.runtime.get_task(task_id)
        if summary is None or not _cut_off(summary):
            return False
        created = datetime.fromtimestamp(summary.created_at, UTC).isoformat()
        self._write(task_id, _record(task_id, created, None))
        return True

    def _revive(self, task_id: str) -> None:
        """A task cut off by a restart, or paused: resume it (its completed steps are kept)."""
        if task_id in self.jobs:
            return
        found = self._read(task_id)
        if found is None or found.get("status") not in ("working", "input_required"):
            return
        summary = self.runtime.get_task(task_id)
        if summary is None or summary.state not in _STOPPED:
            return
        self._resume(task_id, None)

    def _resume(self, task_id: str, session_id: str | None) -> asyncio.Future[ChatMessage | None]:
        async def resume() -> ChatMessage | None:
            return await self.runtime.resume_task(task_id, session_id=session_id)

        job = asyncio.ensure_future(resume())
        self.jobs[task_id] = job
        self._resumed.add(task_id)
        job.add_done_callback(lambda fut: self._done(task_id, fut))
        return job

    async def asked_again(self, task_id: str, session_id: str | None) -> ChatMessage | None:
        """A task that waits for an answer, but in the store, not here (a restart cut it off
        while it waited, or ``tasks/get`` is resuming it): resumed (as ``skillrt resume``
        does) until it asks its question again; its reply, or None when there is no such task
        (unknown, running, over, or stopped other than on a question)."""
        summary = None if task_id in self.jobs else await self.runtime.get_task_async(task_id)
        if task_id in self._resumed:  # being resumed already (by ``tasks/get``)
            return await asyncio.shield(self.jobs[task_id])
        if task_id in self.jobs:  # its call runs here: it does not wait
            return None
        if summary is None or summary.state not in _STOPPED or not summary.question:
            return None
        return await asyncio.shield(self._resume(task_id, session_id))

    # --- the protocol's calls ---------------------------------------------------------------------

    async def get(self, task_id: str) -> types.Task:
        await self.runtime.initialize()
        self._adopt(task_id)
        self._revive(task_id)
        return self._task(task_id)

    async def result(self, task_id: str) -> types.CallToolResult:
        """The result, once the task is over (``tasks/result`` waits for it)."""
        await self.runtime.initialize()
        self._adopt(task_id)
        while True:
            self._revive(task_id)
            found = self._read(task_id)
            if found is None:
                raise _not_found(task_id)
            if "result" in found:  # over, or waiting for an answer: the question is the result
                return types.CallToolResult.model_validate(found["result"])
            job = self.jobs.get(task_id)
            if job is None:
                raise McpError(
                    types.ErrorData(
                        code=types.INVALID_PARAMS,
                        message=f"task {task_id} is not running and has no result",
                    )
                )
            await asyncio.wait([job], timeout=30)

    async def cancel(self, task_id: str) -> types.Task:
        await self.runtime.initialize()
        self._adopt(task_id)
        found = self._read(task_id)
        if found is None:
            raise _not_found(task_id)
        if found.get("status") in ("completed", "failed", "cancelled"):
            raise McpError(
                types.ErrorData(
                    code=types.INVALID_PARAMS,
                    message=f"task {task_id} is already {found['status']}",
                )
            )
        job = self.jobs.get(task_id)
        if await self.runtime.abort_task(task_id) and job is not None:
            if task_id in self.eliciting:
                # Its call waits on the client's answer, not on the task: it is stopped, not
                # waited for (it waited up to 30 s, and an answer given later recorded the task
                # "failed" over "cancelled").
                job.cancel()
            await asyncio.wait([job], timeout=30)
        elif job is None and await self.runtime.abandon_task(task_id):
            self.record(task_id, _cancelled(task_id))
        if (self._read(task_id) or {}).get("status") not in ("cancelled", "completed", "failed"):
            self.record(task_id, _cancelled(task_id))
        return self._task(task_id)

    def list(self) -> list[types.Task]:
        for summary in self.runtime.get_resumable_tasks():  # plain calls cut off (``_adopt``)
            if _cut_off(summary):
                self._adopt(summary.id)
        if not self.folder.is_dir():
            return []
        ids = sorted(p.stem for p in self.folder.glob("*.json"))
        return [self._task(i) for i in ids if self._read(i) is not None]


def _cut_off(summary: TaskSummary) -> bool:
    """A task of an MCP session stopped, resumable, by the end of the server that ran it
    (MCP has no pause: a paused task of an MCP session was cut off)."""
    return (summary.session_id or "").startswith("mcp-") and summary.state == "PAUSED"


def _ttl(ttl: object) -> int:
    """A record's ttl, or the default (``_DEFAULT_TTL_MS``) for none (an older record's null)."""
    return ttl if isinstance(ttl, int) and not isinstance(ttl, bool) else _DEFAULT_TTL_MS


def _record(task_id: str, created: str, ttl: int | None) -> dict[str, Any]:
    return {"taskId": task_id, "status": "working", "createdAt": created,
            "lastUpdatedAt": created, "ttl": _ttl(ttl)}  # fmt: skip


def _cancelled(task_id: str) -> ChatMessage:
    return ChatMessage(
        content=f"task {task_id} was cancelled",
        task_id=task_id,
        state="CANCELLED",
        data={"outcome": "cancelled"},
    )


def _short(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
