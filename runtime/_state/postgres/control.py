"""``PgControl``: requests about a task, sent from any worker to the worker that runs it.

A request (pause, abort, answer, follow) is a row of ``skillrt_control`` addressed to the worker
that holds the task's lease, and a ``NOTIFY`` on ``skillrt_control`` sent in the same
transaction, so it arrives when the row is committed. Each worker LISTENs on a connection of its
own (a thread); it also looks for open requests on the tasks it holds every ``poll_s`` and after
each reconnection, so a notification missed (the connection dropped, the worker restarted, the
lease moved to another worker) is not a request lost. The worker *takes* a request (one atomic
update: a request acts once), acts, and *finishes* it with its result, which wakes the sender
(``NOTIFY skillrt_reply``; the sender also polls while it waits). A request not yet taken can be
*withdrawn* by its sender (it gave up waiting), so it never acts late.

Events of a followed task (progress, streamed text) go the other way, as ``NOTIFY
skillrt_events`` to the follower: never stored, each payload under PostgreSQL's 8,000 bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from skillrt._io.logs import library_logger
from skillrt._state.postgres.database import clean_text
from skillrt._state.protocol import ControlRequest

if TYPE_CHECKING:
    from skillrt._state.postgres.database import PgDatabase

__all__ = ["MAX_PAYLOAD", "ControlRequest", "PgControl"]


MAX_PAYLOAD = 7000  # bytes of an event notification's text (PostgreSQL's limit is 8000)
_log = library_logger("skillrt._state.postgres.control")


class PgControl:
    """The control channel of one worker (see the module docstring).

    ``start(loop, on_request, on_events)`` begins listening; the two callbacks run on ``loop``.
    The coroutines run their round trip in a thread, bounded by the database's timeout.
    """

    def __init__(self, db: PgDatabase, *, poll_s: float = 1.0) -> None:
        self.db = db
        self.poll_s = poll_s
        self.worker_id = db.worker_id
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_request: Callable[[ControlRequest], None] | None = None
        self._on_events: Callable[[str, str], None] | None = None
        self.on_work: Callable[[], None] | None = None  # work was queued (the queue's)
        self._replies: dict[int, asyncio.Event] = {}
        self._seen: set[int] = set()  # requests handed to the loop already
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: Any = None
        self.connected = threading.Event()

    # --- the listener -----------------------------------------------------------------------

    def start(
        self,
        loop: asyncio.AbstractEventLoop,
        on_request: Callable[[ControlRequest], None],
        on_events: Callable[[str, str], None],
    ) -> None:
        self._loop, self._on_request, self._on_events = loop, on_request, on_events
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._listen_loop, name="skillrt-control", daemon=True
            )
            self._thread.start()

    def _listen_loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._listen()
            except Exception as exc:  # the server went away: reconnect, then look again
                _log.debug("control listener: %s", exc)
            self.connected.clear()
            with contextlib.suppress(Exception):
                if self._conn is not None:
                    self._conn.close()
            self._conn = None
            self._stop.wait(0.5)

    def _listen(self) -> None:
        conn = self._conn = self.db.listener()
        self._seen.clear()
        for channel in ("skillrt_control", "skillrt_reply", "skillrt_events", "skillrt_queue"):
            conn.execute(f"LISTEN {channel}")
        self.connected.set()
        self._deliver(self._pending(conn))  # what was sent while this worker was not listening
        self._wake_all()  # and the replies it may have missed
        if self.on_work is not None:
            self._call(self.on_work)  # and the work queued meanwhile
        rounds = 0
        while not self._stop.is_set():
            # The generator holds the connection: leave it to read the requests a
            # notification announced (at once), or after ``poll_s`` (the missed ones).
            for note in conn.notifies(timeout=self.poll_s):
                if self._notified(note.channel, note.payload):
                    break
            if self._stop.is_set():
                return
            self._deliver(self._pending(conn))
            rounds += 1
            if rounds % 600 == 0:  # requests answered an hour ago are kept for nobody
                conn.execute(
                    "DELETE FROM skillrt_control WHERE done_at < now() - interval '1 hour'"
                )

    def _notified(self, channel: str, payload: str) -> bool:
        """Handle one notification; True when it announces a request to read."""
        if channel == "skillrt_queue":
            if self.on_work is not None:
                self._call(self.on_work)
            return False
        target, _, rest = payload.partition("\t")
        if target != self.worker_id or self._loop is None:
            return False
        if channel == "skillrt_reply":
            with contextlib.suppress(ValueError):
                self._wake(int(rest))
        elif channel == "skillrt_events" and self._on_events is not None:
            task_id, _, text = rest.partition("\t")
            self._call(self._on_events, task_id, text)
        return channel == "skillrt_control"

    def _pending(self, conn: Any) -> list[ControlRequest]:
        """Open requests about the tasks this worker holds now."""
        rows = conn.execute(
            "SELECT c.id, c.task_id, c.verb, c.payload, c.sender FROM skillrt_control c "
            "JOIN skillrt_leases l ON l.task_id = c.task_id WHERE c.done_at IS NULL "
            "AND c.taken_at IS NULL AND l.worker_id = %s ORDER BY c.id",
            (self.worker_id,),
        ).fetchall()
        return [ControlRequest(*row) for row in rows]

    def _deliver(self, requests: list[ControlRequest]) -> None:
        if self._on_request is None:
            return
        if len(self._seen) > 10_000:
            self._seen.clear()  # a request handed over twice is taken once anyway
        for request in requests:
            if request.id not in self._seen:
                self._seen.add(request.id)
                self._call(self._on_request, request)

    def _call(self, fn: Callable[..., None], *args: Any) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(fn, *args)

    def _wake(self, request_id: int) -> None:
        loop = self._loop
        event = self._replies.get(request_id)
        if loop is not None and event is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(event.set)

    def _wake_all(self) -> None:
        for request_id in list(self._replies):
            self._wake(request_id)

    # --- requests ------------------------------------------------------------------------------

    def send_sync(self, task_id: str, verb: str, payload: str = "") -> int | None:
        """Record a request for the live worker (not this one) holding ``task_id``'s lease and
        notify it; None when no other live worker holds it. One round trip."""
        with self.db.connection(durable=False) as conn:
            row = conn.execute(
                "WITH holder AS (SELECT worker_id FROM skillrt_leases WHERE task_id = %s "
                " AND worker_id <> %s AND expires_at > now()), "
                "req AS (INSERT INTO skillrt_control (task_id, verb, payload, sender, worker_id) "
                " SELECT %s, %s, %s, %s, worker_id FROM holder RETURNING id, worker_id) "
                "SELECT id, pg_notify('skillrt_control', worker_id || E'\\t' || id) FROM req",
                clean_text((task_id, self.worker_id, task_id, verb, payload, self.worker_id)),
            ).fetchone()
        return None if row is None else int(row[0])

    async def send(self, task_id: str, verb: str, payload: str = "") -> int | None:
        request_id = await self.db.off_loop(self.send_sync, task_id, verb, payload)
        if request_id is not None:
            self.waiter(request_id)
        return request_id

    def waiter(self, key: int) -> asyncio.Event:
        """The event set when the reply to request ``key`` is announced (a queued task's
        reply: its queue id, negated). On the loop."""
        return self._replies.setdefault(key, asyncio.Event())

    def forget(self, key: int) -> None:
        self._replies.pop(key, None)

    async def take(self, request_id: int) -> bool:
        """Claim a request to act on it (False: taken already, or withdrawn)."""

        def take() -> bool:
            with self.db.connection(durable=False) as conn:
                row = conn.execute(
                    "UPDATE skillrt_control SET taken_at = now() WHERE id = %s "
                    "AND taken_at IS NULL AND done_at IS NULL RETURNING id",
                    (request_id,),
                ).fetchone()
            return row is not None

        return bool(await self.db.off_loop(take))

    async def finish(self, request_id: int, result: str) -> None:
        """Record the result of a request and wake its sender."""

        def finish() -> None:
            with self.db.connection(durable=False) as conn:
                conn.execute(
                    "WITH done AS (UPDATE skillrt_control SET done_at = now(), result = %s "
                    " WHERE id = %s RETURNING id, sender) "
                    "SELECT pg_notify('skillrt_reply', sender || E'\\t' || id) FROM done",
                    (clean_text(result), request_id),
                )

        await self.db.off_loop(finish)

    async def result(self, request_id: int, timeout_s: float | None) -> str | None:
        """Wait for the request's result (None: not taken within ``timeout_s``, and withdrawn;
        a request already taken is waited for until it is finished)."""
        event = self.waiter(request_id)
        loop = asyncio.get_running_loop()
        deadline = None if timeout_s is None else loop.time() + timeout_s
        try:
            while True:
                done, taken, result = await self.db.off_loop(self._state, request_id)
                if done:
                    return result
                if deadline is not None and not taken and loop.time() >= deadline:
                    if await self.db.off_loop(self._withdraw, request_id):
                        return None
                    continue  # taken just now: its result follows
                wait = self.poll_s
                if deadline is not None and not taken:
                    wait = max(0.01, min(wait, deadline - loop.time()))
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await event.wait()
                event.clear()
        finally:
            self._replies.pop(request_id, None)

    def _state(self, request_id: int) -> tuple[bool, bool, str | None]:
        with self.db.connection(durable=False) as conn:
            row = conn.execute(
                "SELECT done_at IS NOT NULL, taken_at IS NOT NULL, result FROM skillrt_control "
                "WHERE id = %s",
                (request_id,),
            ).fetchone()
        if row is None:
            return True, True, None
        return bool(row[0]), bool(row[1]), row[2]

    def _withdraw(self, request_id: int) -> bool:
        with self.db.connection(durable=False) as conn:
            row = conn.execute(
                "UPDATE skillrt_control SET done_at = now() WHERE id = %s "
                "AND taken_at IS NULL AND done_at IS NULL RETURNING id",
                (request_id,),
            ).fetchone()
        return row is not None

    async def publish(self, follower: str, task_id: str, text: str) -> None:
        """Send a followed task's events (JSON text, cut by the caller) to ``follower``."""

        def publish() -> None:
            with self.db.connection(durable=False) as conn:
                conn.execute(
                    "SELECT pg_notify('skillrt_events', %s)",
                    (clean_text(f"{follower}\t{task_id}\t{text}"),),
                )

        await self.db.off_loop(publish)

    def close(self) -> None:
        self._stop.set()
        conn = self._conn
        if conn is not None:
            _interrupt(conn)  # its wait for notifications ends now, not after ``poll_s``
        if self._thread is not None:
            self._thread.join(timeout=self.poll_s + 2)
        with contextlib.suppress(Exception):
            if conn is not None:
                conn.close()


def _interrupt(conn: Any) -> None:
    """Wake the listener from its wait for notifications (up to ``poll_s``, a second): the
    listening connection's socket is shut down, from the closing thread, so the wait ends at
    once with the connection read as closed, and the listener, told to stop, returns. Without
    it, closing a runtime held its event loop until the wait timed out (0.75-0.95 s measured).
    ``conn.close()`` cannot do it: the waiting generator holds the connection's lock. No round
    trip either (a NOTIFY to itself): it works with the database gone. Where the socket cannot
    be reached, the listener stops after its wait, as before."""
    with contextlib.suppress(Exception):  # closed already: nothing waits on it
        fd = conn.pgconn.socket
        with socket.socket(fileno=os.dup(fd)) as sock:  # a duplicate: closing it leaves fd
            sock.shutdown(socket.SHUT_RDWR)
