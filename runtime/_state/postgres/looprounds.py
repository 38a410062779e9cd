"""``LoopRounds``: the group commit's rounds, sent by the event loop itself (issue 29).

The committer hands each round to its commit thread, which writes it and tells the loop: two
thread wake-ups per round (the thread's, then the loop's self-pipe), each a wait for a CPU and
for the GIL, 0.15-0.25 ms of a step's time on this machine beside a commit of 0.3 ms. On
PostgreSQL the round is one statement (``rounds``), so the loop can send it itself: here each
round is gathered on the loop (``PgDatabase.gathering``: the checkpoints, the side writes, the
lease releases; no I/O), sent on a durable session of the loop's own (non-blocking libpq), and
settled by the callback that reads its result (``wire.Pending``): no thread either way.

The group commit is the thread's: one statement in flight at a time, and the rounds that queue
up meanwhile go together in the next one, so the batch grows with the load. The commit
thread still writes a round when the loop's session is not there yet (it is connected in the
background on first use, and again after an outage) and on Windows; rounds never go to both at
once (a round goes to the loop only once the thread's are settled, and to the thread only
when none wait here), so they are written in the order they came. A round the server refuses
as a whole is sent again in a thread the way the commit thread sends it (its checkpoints
apart from a refused side write). A synchronous flush (``Committer.flush_sync``, at close,
while the loop is blocked in it) first finishes what is in flight here, reading it blocking.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from skillrt._state.postgres.wire import Pending, Rows
from skillrt._state.protocol import LeaseLost

if TYPE_CHECKING:
    from skillrt._state.postgres.database import PgDatabase
    from skillrt._state.postgres.leases import PgRunLocks
    from skillrt._state.postgres.rounds import PgRound

__all__ = ["LoopRounds"]


class Round(Protocol):
    """The committer's round (``committer._Round``), as this module uses it."""

    loop: asyncio.AbstractEventLoop
    ops: dict[str, Any]
    sides: list[Callable[[], None]]


Write = Callable[[dict[str, Any], list[Callable[[], None]]], None]
Settle = Callable[[list[Any], BaseException | None], None]


class LoopRounds:
    """The committer's rounds of one loop at a time, sent by that loop (module docstring)."""

    def __init__(
        self, db: PgDatabase, runlocks: PgRunLocks | None, write: Write, settle: Settle
    ) -> None:
        self.db, self.runlocks = db, runlocks
        self._write = write  # the committer's: the round's writes, in the open (gathered) round
        self._settle = settle  # the committer's: on the loop, the rounds are written (or failed)
        self._queued: list[Round] = []
        self._flight: _Flight | None = None
        self._mine: set[int] = set()  # ids of the rounds queued or in flight here
        self._idle: list[threading.Event] = []  # threads waiting for nothing to be in flight
        self.sent = 0  # statements sent by a loop (tests, the benchmark)

    def take(self, round_: Round, outstanding: Sequence[Round]) -> bool:
        """Queue ``round_`` to be sent by its loop; False: the commit thread is to write it
        (the loop's session is not connected yet, or the thread has rounds not settled)."""
        if self._flight is not None or self._queued:
            if round_.loop is not self._loop():
                self.finish_now()  # another loop's, left behind: written first
            else:
                self._queue(round_)
                return True
        if any(id(r) not in self._mine for r in outstanding if r is not round_):
            return False  # the thread's rounds first
        if self.db.commit_session(round_.loop) is None:
            return False
        self._queue(round_)
        self._next()
        return True

    def _loop(self) -> asyncio.AbstractEventLoop | None:
        if self._flight is not None:
            return self._flight.loop
        return self._queued[0].loop if self._queued else None

    def _queue(self, round_: Round) -> None:
        self._queued.append(round_)
        self._mine.add(id(round_))

    def _next(self) -> None:
        """Send what is queued as one statement (called with nothing in flight)."""
        rounds, self._queued = self._queued, []
        if not rounds:
            return
        loop = rounds[0].loop
        ops: dict[str, Any] = {}
        for r in rounds:
            ops.update(r.ops)
        flight = self._flight = _Flight(self, loop, rounds)
        with self.db.gathering() as gathered:
            try:
                self._write(ops, [side for r in rounds for side in r.sides])
            except BaseException as exc:  # a record that cannot be written: the rest goes
                flight.error = exc
        flight.send(gathered)

    def _ended(self, flight: _Flight) -> None:
        """On the loop (or in ``finish_now``): the flight's rounds are written or failed."""
        if self._flight is flight:
            self._flight = None
        for r in flight.rounds:
            self._mine.discard(id(r))
        with contextlib.suppress(RuntimeError):  # its loop is gone: no one to tell
            self._settle(flight.rounds, flight.error)
        if self._queued and self._flight is None:
            self._next()  # (a session that failed meanwhile: they go as the thread sends)
        self._tell_idle()

    def _tell_idle(self) -> None:
        if self._flight is None and not self._queued:
            waiting, self._idle = self._idle, []
            for event in waiting:
                event.set()

    def finish_now(self) -> None:
        """Write here, blocking, what is queued or in flight (a synchronous flush while the
        loop cannot run, or rounds of a loop that is gone): settled before this returns. From
        another thread while that loop runs, wait for the loop to write them instead (its
        session is the loop's alone)."""
        while self._flight is not None or self._queued:
            loop = self._loop()
            if loop is not None and loop.is_running() and not _running(loop):
                idle = threading.Event()
                try:
                    loop.call_soon_threadsafe(self._wait_idle, idle)
                except RuntimeError:  # closed meanwhile: read it here
                    continue
                idle.wait(self.db.timeout_s + 1)
                return
            if self._flight is None:
                self._next()
            flight = self._flight
            if flight is not None:
                flight.finish_now()

    def _wait_idle(self, idle: threading.Event) -> None:
        self._idle.append(idle)
        self._tell_idle()


def _running(loop: asyncio.AbstractEventLoop) -> bool:
    """Is ``loop`` the one running in this thread?"""
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


class _Flight:
    """One statement of rounds in flight: on the loop's session (``Pending``), or in a thread
    (no session, or the statement refused whole and sent again in parts)."""

    __slots__ = ("error", "gathered", "loop", "outcome", "owner", "pending", "released",
                 "rounds", "thread", "written")  # fmt: skip

    def __init__(self, owner: LoopRounds, loop: asyncio.AbstractEventLoop, rounds: list[Round]):
        self.owner, self.loop, self.rounds = owner, loop, rounds
        self.error: BaseException | None = None
        self.gathered: PgRound | None = None
        self.pending: Pending | None = None
        self.thread: threading.Thread | None = None
        self.released: list[str] = []
        self.outcome: list[Any] = []  # the thread's: the fenced tasks, or the error
        self.written = False

    def send(self, gathered: PgRound) -> None:
        owner, db = self.owner, self.owner.db
        self.gathered = gathered
        runlocks = owner.runlocks
        self.released = runlocks.take_releases() if runlocks is not None else []
        gathered.own(runlocks, self.released)
        if not (gathered.checkpointed or gathered.tasks or gathered.messages or self.released):
            self._end([])
            return
        conn = None if self.loop.is_closed() else db.commit_session(self.loop)
        if conn is None:  # its session failed since (or its loop is gone): as the thread would
            self._in_thread()
            return
        try:
            statement, params, _durable = gathered.compose(db, self.released)
        except BaseException as exc:  # a value that cannot be sent (a lone surrogate)
            self._failed(exc)
            return
        self.pending = Pending(self.loop, conn, statement, params, self._answered)
        owner.sent += 1
        self.pending.begin()

    def _answered(self, rows: Rows | None, exc: BaseException | None) -> None:
        self.pending = None
        if exc is None:
            assert self.gathered is not None and rows is not None
            self._end(self.gathered.fenced(rows))
            return
        db = self.owner.db
        if isinstance(exc, db.refused) and not isinstance(exc, db.operational):
            # Refused, not cut: nothing of it is written. As the commit thread does, the
            # checkpoints go again apart from a refused side write (in a thread: rare).
            self._in_thread()
            return
        db.drop_commit_session(self.loop)  # broken, or its state unknown
        self._failed(db.refusal(exc))

    def _failed(self, exc: BaseException) -> None:
        if self.error is None:
            self.error = exc
        self._end([])

    def _end(self, fenced: list[str]) -> None:
        if self.written:
            return
        self.written = True
        owner = self.owner
        if owner.runlocks is not None:
            owner.runlocks.releases_done(self.released)
        if fenced and self.error is None:
            self.error = LeaseLost(fenced)
        owner._ended(self)

    def _in_thread(self) -> None:
        """Send the gathered round as the commit thread does (``PgRound._send``: a refused
        side write apart), in a thread; the loop hears when it is done."""
        gathered, db = self.gathered, self.owner.db
        assert gathered is not None

        def send() -> None:
            try:
                self.outcome.append(gathered._send(db, self.released))
            except BaseException as exc:
                self.outcome.append(exc)
            with contextlib.suppress(RuntimeError):  # the loop is gone: finish_now ends it
                self.loop.call_soon_threadsafe(self._thread_done)

        self.thread = threading.Thread(target=send, name="skillrt-commit-once", daemon=True)
        self.thread.start()

    def _thread_done(self) -> None:
        if self.written:  # ended by finish_now already
            return
        self.thread = None
        (found,) = self.outcome
        if isinstance(found, BaseException):
            self._failed(found)
        else:
            self._end(found)

    def finish_now(self) -> None:
        if self.pending is not None:
            self.pending.finish_now(self.owner.db.timeout_s + 1)
        elif self.thread is not None:
            self.thread.join()
            self._thread_done()
