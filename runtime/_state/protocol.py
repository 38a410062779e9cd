"""The state backend: one protocol for where tasks are kept, whichever store keeps them.

A backend holds four parts and says how to reach them from the event loop:

- ``store`` (``TaskStore``): task records, each with its journal of completed steps (the
  checkpoint), written in rounds by the group ``committer``;
- ``history`` (``HistoryStore``): what ended, and the chat turns of each session, bounded;
- ``runlocks`` (``RunLockTable``): who runs a task right now (OS locks in the state folder, or
  leases in a database), so no other process resumes it meanwhile;
- ``locks`` (``FileLockManager``): per-post write locks, with their OS (or database) half;
- ``control`` (``ControlChannel``, shared stores only): requests about a task (pause, abort,
  answer, follow its events) sent from any worker to the worker that runs it.

The task code sees only ``StateBackend``: its calls that may block are coroutines here, and each
implementation decides how they leave the event loop. The embedded backend
(``skillrt._state.embedded``) keeps SQLite files in the state folder; the PostgreSQL one
(``skillrt._state.postgres``) a database several workers share. ``skillrt._state.open`` picks
one at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from skillrt._state.records import RecordText, TaskRecord
from skillrt.exceptions import StoreUnavailable

if TYPE_CHECKING:
    import asyncio  # an annotation only: listing tasks (skillrt tasks) loads no asyncio

    from skillrt._state.committer import Committer
    from skillrt.blog.locks import FileLockManager

__all__ = [
    "LISTED",
    "ControlChannel",
    "ControlRequest",
    "HistoryStore",
    "LazyLoad",
    "LazyRecord",
    "LeaseLost",
    "LoadResult",
    "QueuedTask",
    "RunLockTable",
    "StateBackend",
    "TaskStore",
    "WorkQueue",
]


class LeaseLost(StoreUnavailable):
    """``StoreUnavailable(reason="lease_lost")`` of a commit round: the checkpoints of
    ``tasks`` were not written (another worker holds their lease), the rest of the round was.
    So only the waiters of those tasks hear it (``Committer``): the round's other tasks went
    on told they "were taken over by another worker" (they were not), and stopped."""

    def __init__(self, tasks: Sequence[str]) -> None:
        self.tasks = frozenset(tasks)
        super().__init__(
            f"task(s) {', '.join(tasks)} run on another worker (this worker does not hold "
            "their lease); not writing or deleting their checkpoints",
            reason="lease_lost",
        )


@dataclass(slots=True)
class LoadResult:
    """What ``load_recent`` found: the records in the window and what was moved aside."""

    records: list[TaskRecord] = field(default_factory=list)
    quarantined: list[str] = field(default_factory=list)


LISTED = (
    "session_id",
    "question",
    "skill",
    "intent.type",
    "raw_input",
    "created_at",
    "last_error",
    "tokens",
    "cost",
    "progress",  # its JSON, as text or UTF-8 bytes
    "steps",  # how many
)
"""A record's fields a listing shows (``LazyRecord.listed``), as paths into its JSON; None for
a field the JSON lacks. The last two are kept as plain values (its progress as JSON, text or
the UTF-8 bytes the store read; the number of its completed steps), so that a dormant entry
holds no container the cyclic GC must keep scanning."""


class LazyRecord(NamedTuple):
    """A record found by a lazy load: the fields that decide whether its task can be resumed,
    and its JSON, parsed only when the task is wanted. ``listed``: what a listing shows of it,
    as the store read it with the rest (in the order of ``LISTED``), or None (then the listing
    reads it from the JSON)."""

    id: str
    state: str
    error_reason: str | None
    updated_at: float
    text: bytes
    listed: tuple[Any, ...] | None = None


@dataclass(slots=True)
class LazyLoad:
    """What a lazy load found: records in the window, newest first, and what was moved aside."""

    records: list[LazyRecord] = field(default_factory=list)
    quarantined: list[str] = field(default_factory=list)


@runtime_checkable
class TaskStore(Protocol):
    """Where task records are kept (a record holds the task's journal)."""

    def save(self, record: TaskRecord) -> None: ...
    def apply(self, saves: Sequence[TaskRecord | RecordText], deletes: list[str]) -> None: ...
    def get(self, task_id: str) -> TaskRecord | None: ...
    def delete(self, task_id: str) -> bool: ...
    def load_recent(self, *, max_age_s: float, now: float) -> LoadResult: ...
    def all_ids(self) -> list[str]: ...
    def close(self) -> None: ...


class HistoryStore(Protocol):
    """Task entries and chat messages per session, newest first, bounded."""

    def add_task(self, entry: dict[str, Any]) -> None: ...
    def add_message(self, session_id: str, message: dict[str, Any]) -> None: ...
    def add_batch(
        self, tasks: list[dict[str, Any]], messages: list[tuple[str, dict[str, Any]]]
    ) -> None: ...
    def tasks(self, session_id: str | None = None, limit: int = 50) -> list[dict[str, Any]]: ...
    def messages(self, session_id: str, limit: int = 50) -> list[dict[str, Any]]: ...
    def close(self) -> None: ...


class RunLockTable(Protocol):
    """Who runs which task now. ``hold`` is re-entrant for its holder."""

    def hold(self, task_id: str) -> bool: ...
    def release(self, task_id: str) -> None: ...
    def running_elsewhere(self, task_id: str) -> bool: ...
    def held_elsewhere(self, task_ids: Sequence[str]) -> set[str]: ...
    def close(self) -> None: ...


class ControlRequest(NamedTuple):
    """A request about a task, from the worker ``sender`` to the one that runs the task."""

    id: int
    task_id: str
    verb: str  # "pause", "abort", "answer" (payload: the text), "follow"
    payload: str
    sender: str


class ControlChannel(Protocol):
    """Requests between the workers of a shared store (``skillrt._state.postgres.control``).

    ``start`` begins listening; its callbacks run on ``loop``: ``on_request`` for a request
    about a task this worker holds, ``on_events(task_id, json_text)`` for events of a task it
    follows. Every coroutine is one bounded round trip, except ``result``, which waits."""

    worker_id: str

    def start(
        self,
        loop: asyncio.AbstractEventLoop,
        on_request: Callable[[ControlRequest], None],
        on_events: Callable[[str, str], None],
    ) -> None: ...
    def send_sync(self, task_id: str, verb: str, payload: str = "") -> int | None: ...
    async def send(self, task_id: str, verb: str, payload: str = "") -> int | None:
        """Record a request for the live worker holding the task (None: no other one does)."""
        ...

    async def take(self, request_id: int) -> bool: ...
    async def finish(self, request_id: int, result: str) -> None: ...
    async def result(self, request_id: int, timeout_s: float | None) -> str | None:
        """The request's result; None if it was not taken within ``timeout_s`` (withdrawn)."""
        ...

    async def publish(self, follower: str, task_id: str, text: str) -> None: ...


class QueuedTask(NamedTuple):
    """A task taken from the work queue: its request (JSON) and the worker that queued it."""

    id: int
    task_id: str
    request: str
    sender: str


class WorkQueue(Protocol):
    """The work queue of a shared store (``skillrt._state.postgres.queue``)."""

    def listen(self, on_work: Callable[[], None]) -> None: ...
    async def put(self, task_id: str, request: str, priority: int) -> int: ...
    async def take(self, n: int, keys: list[str], limits: dict[str, int]) -> list[QueuedTask]:
        """Up to ``n`` waiting tasks for this worker, within the limits of its ``keys``."""
        ...

    async def done(self, request_id: int, result: str | None) -> None: ...
    async def result(self, request_id: int) -> str | None:
        """Wait until the task is done; its reply as JSON (None: it ended with none here)."""
        ...

    async def withdraw(self, request_id: int) -> bool: ...
    async def cancel_waiting(self, task_id: str, result: str) -> bool: ...
    def requeue_dead(self) -> int: ...


class StateBackend(Protocol):
    """Where the runtime keeps its tasks (see the module docstring)."""

    @property
    def store(self) -> TaskStore: ...
    @property
    def history(self) -> HistoryStore: ...
    @property
    def locks(self) -> FileLockManager: ...
    @property
    def committer(self) -> Committer: ...
    @property
    def runlocks(self) -> RunLockTable | None:
        """None where tasks are not journalled (``checkpoints = false``): nothing can resume
        them elsewhere, so nothing needs to lock them."""
        ...

    @property
    def journaled(self) -> bool:
        """False: checkpoints are off and nothing is written to the store (paused tasks resume
        only in this process, from memory)."""
        ...

    @property
    def control(self) -> ControlChannel | None:
        """The control channel between workers (None where nobody else shares the store)."""
        ...

    @property
    def queue(self) -> WorkQueue | None:
        """The work queue (None where nobody else shares the store)."""
        ...

    @property
    def available(self) -> bool:
        """False while the store does not answer (an outage): new work waits or is refused."""
        ...

    @property
    def shared(self) -> bool:
        """Other workers write to this store too: what it holds may be newer than what this
        runtime holds, and a task whose worker died is taken over (failover)."""
        ...

    # --- run locks and post locks (coroutines: a database call leaves the event loop) --------

    async def hold(self, task_id: str) -> bool:
        """Take the task's run lock; False if another process holds it. True without locks."""
        ...

    def hold_soon(self, task_id: str) -> asyncio.Future[bool] | None:
        """``hold``'s answer as a future, asked now where taking the lock is a round trip (a
        database's lease): the caller does work with no effect while it is in flight, and
        awaits it before anything else. None: ask ``hold`` (a local lock, taken at once, or
        no lock to ask now)."""
        ...

    async def release(self, task_id: str) -> None:
        """Release the task's post locks and its run lock."""
        ...

    @property
    def releases_with_ending(self) -> bool:
        """True where ``release`` queues the run lock's release for the next commit round (a
        database's lease, deleted in the round of the task's ending): the runner releases a
        task before it waits for its ending. False where the release takes effect at once (an
        OS lock): the runner releases a task only once its ending is on disk, or another
        process would meanwhile find a record that still says the task runs, held by no one,
        and could resume it."""
        ...

    def release_soon(self, task_id: str) -> None:
        """Release the task's post locks now if that does not block, else leave it to
        ``release`` (a watchdog that fired calls this from the event loop)."""
        ...

    async def running_elsewhere(self, task_id: str) -> bool: ...

    def held_elsewhere(self, task_ids: Sequence[str]) -> set[str]:
        """Of ``task_ids``, those another process runs now."""
        ...

    # --- records ------------------------------------------------------------------------------

    def load_resumable(self, *, max_age_s: float, now: float) -> LoadResult | LazyLoad:
        """The checkpoints of the resume window (lazily where the store can), and what was
        moved aside as unreadable."""
        ...

    def parse(self, record: LazyRecord) -> TaskRecord | None:
        """The full record of a lazily loaded one (None: unusable, moved aside, or gone)."""
        ...

    def newer(
        self, held: Sequence[str], task_id: str | None = None, *, max_age_s: float, now: float
    ) -> dict[str, TaskRecord | None]:
        """What another worker may have written since this runtime last read: one task, or every
        task of the resume window and every one of ``held`` (None: the store no longer has it).
        The embedded store answers for one task only (another process may have resumed and
        ended it); for every task, nothing (nobody else writes a task this runtime runs).
        Blocking."""
        ...

    async def read(self, task_id: str) -> TaskRecord | None:
        """One record as the store has it now."""
        ...

    def orphans(self, states: tuple[str, ...]) -> list[str]:
        """Tasks left in ``states`` by a worker that died (empty where there are no leases)."""
        ...

    def lost(self) -> list[str]:
        """Tasks this runtime runs whose lease another worker has taken (it froze or was cut
        off past its lease): they are that worker's now, and stop here. Empty where there are
        no leases. No I/O: what the lease renewals found."""
        ...

    def close(self) -> None:
        """Write what is still queued, then close every part this backend opened."""
        ...
