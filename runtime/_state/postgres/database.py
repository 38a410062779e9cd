"""The PostgreSQL database the shared state backend keeps: its pools, its schema, this worker.

Two pools per process, both psycopg's synchronous ``ConnectionPool``. Checkpoints go through
the *durable* one (each commit waits for the WAL flush), and so do the reads. Leases,
heartbeats, file-lock holders and the history written alone go through a *bookkeeping* one
whose sessions run with ``synchronous_commit = off``: a lease write lost in a database crash
costs at most a takeover that fencing already guards, and it spares every task start and end a
WAL flush (a few ms on a busy disk). The advisory locks themselves live in the server's memory.
A commit round is one statement (``grouped``, ``rounds``): its checkpoints, its history entries
and the leases given back, through the durable pool when it has checkpoints (the rest then
costs no flush of its own), else through the bookkeeping one.

The pools are synchronous on purpose. The storage protocols are synchronous: the lease
renewal is a thread, and an asyncio pool belongs to one event loop (a runtime driven through
``process_input_sync`` would meet it on a loop of its own). What the loop sends itself goes on
sessions of that loop's own instead, one bookkeeping (``on_loop``: leases, the queue) and one
durable (``commit_session``: the commit rounds, ``looprounds``); the committer's thread and
the pools write a round while that session connects. The few calls the runtime
makes per task outside those threads are single round trips, cheap to run in a thread, or
batched: the leases asked for in one turn of the loop are taken in one statement, a task
gives its lease back in its ending's commit round's statement, and
``PgRunLocks.held_elsewhere`` asks for many tasks at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from skillrt._io.processes import pid_alive
from skillrt._state.postgres.rounds import PgRound
from skillrt._state.postgres.schema import SCHEMA_VERSION, migrate, schema_version
from skillrt._state.postgres.wire import Pending, Rows, Watch
from skillrt._state.protocol import LeaseLost
from skillrt.exceptions import MissingDependency, StoreUnavailable, UserError

if TYPE_CHECKING:
    from skillrt._state.postgres.leases import PgRunLocks
    from skillrt._state.postgres.wire import Statement

__all__ = ["PgDatabase", "default_worker_id", "inspect_database", "redact_url"]


_URL_PASSWORD = re.compile(r"(://[^:/@]*:)[^/?#]*@")  # to the last @ of the host part
# A password given as a parameter: ``?password=...`` in a URL (up to ``&`` or ``#``), or
# ``password=...`` in a libpq key/value string (quoted, or up to white space).
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)
_KEY_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_NO_WAL_WAIT = "-c synchronous_commit=off"  # the bookkeeping sessions' setting
T = TypeVar("T")


def redact_url(url: str) -> str:
    """The URL (or libpq key/value string) with its password replaced by ``***`` (for
    messages and logs), wherever it is given: ``user:password@``, ``?password=`` or
    ``password=``."""
    if "://" in url:
        return _QUERY_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", url))
    return _KEY_PASSWORD.sub(r"\1***", url)


def default_worker_id(state_path: str) -> str:
    """A worker's name when none is configured: its host and its state folder, so that a
    worker restarted on the same machine over the same folder is the same worker (and takes
    its own tasks back at once instead of waiting for their leases to run out)."""
    folder = hashlib.sha256(os.path.realpath(state_path).encode("utf-8", "replace")).hexdigest()
    return f"{socket.gethostname()}:{folder[:10]}"


def clean_text(value: Any) -> Any:
    """``value`` with NUL removed from every string in it: PostgreSQL's text cannot hold it
    (a NUL reaching the server is a ``DataError``)."""
    if isinstance(value, str):
        return value.replace("\x00", "") if "\x00" in value else value
    if isinstance(value, list | tuple):
        return type(value)(clean_text(v) for v in value)
    return value


def _modules() -> tuple[Any, Any]:
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise MissingDependency("a PostgreSQL state_url", "postgres") from exc
    return psycopg, psycopg_pool


class PgDatabase:
    """The database's two pools (durable and bookkeeping, see the module docstring), the
    schema brought up to date, and this worker's id.

    Raises ``StoreUnavailable`` when the server cannot be reached (at once when it refuses,
    else within ``connect_timeout_s``) or the database is on a newer schema than this package.
    """

    def __init__(
        self,
        url: str,
        *,
        worker_id: str | None = None,
        identity: str | None = None,
        pool_size: int = 8,
        connect_timeout_s: float = 10.0,
        timeout_s: float = 5.0,
        stale_s: float = 30.0,
    ) -> None:
        psycopg, psycopg_pool = _modules()
        self._psycopg = psycopg
        self.refused: type[Exception] = psycopg.Error  # a statement refused or not sent
        self.operational: type[Exception] = psycopg.OperationalError  # ... the session broke
        self._rounds = threading.local()  # the round open on each thread (``grouped``)
        self.url = url
        self.timeout_s = timeout_s
        # ``worker_id``: taken as given. ``identity``: the stable default name, taken unless a
        # live process elsewhere still uses it (then this worker gets a name of its own).
        self.worker_id = (
            worker_id
            or identity
            or (f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}")
        )
        self._stale_s = stale_s
        self.reclaimed = False  # the worker's name was a dead process's: its tasks are ours
        self._down_since: float | None = None  # the store stopped answering then
        self.outages = 0
        self._health = threading.Condition()
        self._closing = threading.Event()
        # The event loop's own bookkeeping session (``on_loop``).
        self._on_loop: dict[asyncio.AbstractEventLoop, _LoopSession] = {}  # one per loop
        # ... and its durable one, for the commit rounds it sends itself (``commit_session``).
        self._committing: dict[asyncio.AbstractEventLoop, _LoopSession] = {}
        # Durable sessions connected in a thread, not yet taken by their loop: ``close`` closes
        # them (a loop that stopped meanwhile never runs the callback that would).
        self._adopting: set[Any] = set()
        self._adopting_lock = threading.Lock()
        # Every session fails a read or write the server does not answer within the timeout
        # (a frozen server, a cut network), instead of waiting for TCP to give up (minutes).
        connect = {
            "autocommit": True,
            "connect_timeout": max(1, int(connect_timeout_s)),
            "keepalives": 1,
            "keepalives_idle": max(1, int(timeout_s)),
            "keepalives_interval": 1,
            "keepalives_count": 3,
            "tcp_user_timeout": int(timeout_s * 1000),
        }
        self._durable = connect  # a durable session's settings
        self._connect = {**connect, "options": _NO_WAL_WAIT}  # a bookkeeping session's
        self._start(connect, identity=worker_id is None and identity is not None)
        self.pool = psycopg_pool.ConnectionPool(
            url, min_size=1, max_size=pool_size, kwargs=connect, open=False, name="skillrt",
            timeout=timeout_s,
        )  # fmt: skip
        self.bookkeeping = psycopg_pool.ConnectionPool(
            url,
            min_size=1,
            max_size=4,
            kwargs=self._connect,
            open=False,
            name="skillrt-bookkeeping",
            timeout=timeout_s,
        )
        try:
            for pool in (self.pool, self.bookkeeping):
                pool.open(wait=True, timeout=connect_timeout_s)
        except psycopg_pool.PoolTimeout as exc:
            self._close_pools()
            raise StoreUnavailable(
                f"cannot reach PostgreSQL at {redact_url(url)} within {connect_timeout_s:g} s "
                "(is the server running, and state_url right?)"
            ) from exc
        self._prober = threading.Thread(target=self._probe_loop, name="skillrt-store-probe",
                                        daemon=True)  # fmt: skip
        self._prober.start()

    def _start(self, connect: dict[str, Any], *, identity: bool) -> None:
        """Connect once on its own, migrate the schema and register this worker.

        A wrong URL or a server that is down is reported at once with the server's or the
        client library's reason (a pool would retry until its timeout and say only that).
        """
        psycopg = self._psycopg
        try:
            with psycopg.connect(self.url, **connect) as conn:
                self.migrated_from, self.schema_version = migrate(conn)
                if identity:
                    self._claim_identity(conn)
                conn.execute(
                    "INSERT INTO skillrt_workers (worker_id, host, pid) VALUES (%s, %s, %s) "
                    "ON CONFLICT (worker_id) DO UPDATE SET heartbeat_at = now(), "
                    "host = EXCLUDED.host, pid = EXCLUDED.pid, started_at = now()",
                    (self.worker_id, socket.gethostname(), os.getpid()),
                )
        except psycopg.Error as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            password = psycopg.conninfo.conninfo_to_dict(self.url).get("password")
            if password:
                reason = reason.replace(str(password), "***")
            raise StoreUnavailable(
                f"cannot use PostgreSQL at {redact_url(self.url)}: {reason} "
                "(is the server running, and state_url right?)"
            ) from exc

    def _claim_identity(self, conn: Any) -> None:
        """Take the stable name, unless a live process still answers to it: one on another
        host whose heartbeat is fresh, or one on this host that is still running, however
        stale its heartbeat. (A worker frozen by SIGSTOP has a live pid and a stale heartbeat:
        a second worker over its state folder took its name and its task back, and once it
        thawed both ran the task under one name, no write fenced, every step run 2-3 times.
        A pid reused by another process costs a name of its own and a takeover after
        ``lease_s``, never a task run twice.)"""
        row = conn.execute(
            "SELECT host, pid, heartbeat_at > now() - make_interval(secs => %s) "
            "FROM skillrt_workers WHERE worker_id = %s",
            (self._stale_s, self.worker_id),
        ).fetchone()
        if row is None:
            return
        host, pid, fresh = row
        here = host == socket.gethostname()
        if here and pid != os.getpid() and not pid_alive(int(pid)):
            self.reclaimed = True  # the same worker, restarted: its leases are its own
            return
        # Another live worker has this name: two workers over one state folder (one of them
        # perhaps frozen), or two runtimes in this process (a closed one removes its row).
        if fresh or here:
            self.worker_id = f"{self.worker_id}:{os.getpid()}:{secrets.token_hex(2)}"
        else:
            self.reclaimed = True  # a stale name from another host: nobody uses it

    # --- health ---------------------------------------------------------------------------------

    @property
    def available(self) -> bool:
        """False while the server does not answer (calls fail at once until it does again)."""
        return self._down_since is None

    @property
    def down_for_s(self) -> float:
        since = self._down_since
        return 0.0 if since is None else time.monotonic() - since

    def _went_down(self) -> None:
        with self._health:
            if self._down_since is None:
                self._down_since = time.monotonic()
                self.outages += 1
                self._health.notify_all()

    def _came_back(self) -> None:
        # The sessions the outage broke are dropped before anyone is told the store is back:
        # a step resumed at once on a broken pooled session met the outage again, and ran
        # a third time (test_an_outage_of_the_database_mid_task). The loops' own sessions
        # from before the outage are dropped by their loops (``_LoopSession.outages``).
        for pool in (self.pool, self.bookkeeping):
            with contextlib.suppress(Exception):
                pool.check()
        with self._health:
            if self._down_since is not None:
                self._down_since = None
                self._health.notify_all()

    def probe(self) -> bool:
        """One connection of its own, one round trip: does the server answer now?"""
        try:
            with self._psycopg.connect(self.url, **{**self._connect, "connect_timeout": 2}) as c:
                c.execute("SELECT 1")
        except Exception:
            return False
        return True

    def _probe_loop(self) -> None:
        """While the store is down, try it every half second; mark it up once it answers."""
        while not self._closing.is_set():
            with self._health:
                while self._down_since is None and not self._closing.is_set():
                    self._health.wait(1.0)
            if self._closing.wait(0.5):
                return
            if self.probe():
                self._came_back()

    def _unavailable(self, exc: BaseException) -> StoreUnavailable:
        self._went_down()
        return StoreUnavailable(
            f"PostgreSQL at {redact_url(self.url)} does not answer: {exc}", reason="unreachable"
        )

    async def off_loop(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` (a blocking round trip) in a thread; the loop waits no longer than the
        store's timeout (the thread's own socket timeouts end it soon after)."""
        try:
            async with asyncio.timeout(self.timeout_s + 1):
                return await asyncio.to_thread(fn, *args)
        except TimeoutError:
            raise StoreUnavailable(
                f"PostgreSQL did not answer within {self.timeout_s:g} s", reason="unreachable"
            ) from None

    @contextlib.contextmanager
    def connection(self, *, durable: bool = True) -> Iterator[Any]:
        """A pooled connection (autocommit); database errors become ``StoreUnavailable``, and
        a value the database refuses (``DataError``) a ``UserError``.

        ``durable=False``: a bookkeeping connection, whose commits do not wait for the WAL
        flush (leases, heartbeats, lock holders; never checkpoints or history). While the
        server does not answer, this fails at once (a probe finds when it is back).
        """
        psycopg = self._psycopg
        if self._down_since is not None:
            raise StoreUnavailable(
                f"PostgreSQL at {redact_url(self.url)} has not answered for "
                f"{self.down_for_s:.0f} s; retrying",
                reason="unreachable",
            )
        pool = self.pool if durable else self.bookkeeping
        try:
            with pool.connection() as conn:
                yield conn
        except psycopg.OperationalError as exc:
            raise self._unavailable(exc) from exc
        except psycopg.DataError as exc:
            raise UserError(f"the database refused a value: {exc}") from exc
        except Exception as exc:
            if type(exc).__name__ != "PoolTimeout":
                raise
            if not self.probe():  # no connection free because the server is gone
                raise self._unavailable(exc) from exc
            # The server answers: every pooled connection is busy (a burst of work). Not an
            # outage: this call fails, the others go on.
            raise StoreUnavailable(
                f"PostgreSQL at {redact_url(self.url)}: no pooled connection free within "
                f"{self.timeout_s:g} s (busy)",
                reason="busy",
            ) from exc

    def grouped(
        self, runlocks: PgRunLocks | None = None
    ) -> contextlib.AbstractContextManager[PgRound]:
        """The writes made on this thread meanwhile, gathered into one round and sent as one
        statement at the end (see ``rounds``), with the lease releases queued in
        ``runlocks``. Inside an open round, the writes join that one (sent when it ends).

        Raises ``StoreUnavailable(reason="lease_lost")`` after the rest is committed when
        checkpoints of tasks another live worker holds were not written."""
        opened: PgRound | None = getattr(self._rounds, "open", None)
        if opened is not None:  # most calls (a round the loop gathers): no generator
            return _Joined(opened)
        return self._new_round(runlocks)

    @contextlib.contextmanager
    def _new_round(self, runlocks: PgRunLocks | None) -> Iterator[PgRound]:
        round_ = self._rounds.open = PgRound()
        try:
            yield round_
        except BaseException:
            self._rounds.open = None
            # What the other parts gathered is written all the same (a side write is not
            # lost with a checkpoint that could not be made); the first error is the one told.
            with contextlib.suppress(Exception):
                round_.send(self, runlocks)
            raise
        self._rounds.open = None
        fenced = round_.send(self, runlocks)
        if fenced:
            raise LeaseLost(fenced)

    def gathering(self) -> contextlib.AbstractContextManager[PgRound]:
        """A round opened on this thread and not sent when it closes: the writes made meanwhile
        (``grouped`` inside joins it) are gathered for the caller to send (``LoopRounds``)."""
        if getattr(self._rounds, "open", None) is not None:
            raise RuntimeError("a round is already open on this thread")
        return _Gathering(self._rounds)

    def commit_session(self, loop: asyncio.AbstractEventLoop) -> Any | None:
        """The durable session ``loop`` sends its commit rounds on (non-blocking, this loop's
        alone), or None while it is being connected (in a thread, started here), the store is
        down, or the platform's loop watches no sockets (Windows' proactor)."""
        session = self._committing.get(loop)
        if (  # the common case first, in the order of the checks below
            session is not None
            and self._down_since is None
            and session.outages == self.outages
            and session.conn is not None
            and not self._closing.is_set()
            and not session.conn.closed
        ):
            return session.conn
        if sys.platform == "win32" or self._down_since is not None or self._closing.is_set():
            return None
        if session is not None and session.outages != self.outages:
            self.drop_commit_session(loop)  # from before an outage: its socket may be dead
            session = None
        if session is not None and session.conn is not None and not session.conn.closed:
            return session.conn
        if session is not None and session.connecting:
            return None
        if session is not None:
            session.close()  # broken: not watched any more (its descriptor may be given out)
        for gone in [other for other in list(self._committing) if other.is_closed()]:
            self.drop_commit_session(gone)
        session = self._committing[loop] = _LoopSession(loop, self.outages)
        session.connecting = True

        def connected(future: asyncio.Future[Any]) -> None:
            session.connecting = False
            if future.cancelled() or future.exception() is not None:
                self._committing.pop(loop, None)  # the next round tries again (or the thread)
                return
            conn = future.result()
            with self._adopting_lock:
                self._adopting.discard(conn)
            if self._committing.get(loop) is not session or self._closing.is_set():
                conn.close()  # dropped meanwhile
                return
            conn.pgconn.nonblocking = 1
            session.watch(conn)

        connecting = loop.run_in_executor(None, self._connect_durable)
        connecting.add_done_callback(connected)
        return None

    def _connect_durable(self) -> Any:
        conn = self._psycopg.connect(self.url, **self._durable)
        with self._adopting_lock:
            if not self._closing.is_set():
                self._adopting.add(conn)
                return conn
        conn.close()  # closed meanwhile: no loop will take it
        raise StoreUnavailable("the database was closed", reason="unreachable")

    def drop_commit_session(self, loop: asyncio.AbstractEventLoop) -> None:
        session = self._committing.pop(loop, None)
        if session is not None:
            session.close()

    def refusal(self, exc: BaseException) -> BaseException:
        """What ``connection`` raises for ``exc``, raised by a statement of its session:
        ``StoreUnavailable`` for a connection that broke, ``UserError`` for a refused value,
        else ``exc``."""
        psycopg = self._psycopg
        if isinstance(exc, psycopg.OperationalError):
            return self._unavailable(exc)
        if isinstance(exc, psycopg.DataError):
            return UserError(f"the database refused a value: {exc}")
        return exc

    async def on_loop(
        self, statement: Statement, params: Mapping[str, bytes | None]
    ) -> list[tuple[str | None, ...]]:
        """A bookkeeping statement (no wait for the WAL flush) the event loop sends itself, on
        a session of its own driven by the loop (``Statement.run_on_loop``): no thread and no
        hand-off either way, where ``off_loop`` costs two thread wake-ups, each a wait for a
        CPU on a busy machine. A session per loop (loops in several threads never share one),
        one statement at a time on it; its errors are
        ``connection``'s, and a server that does not answer fails it within the timeout."""
        if sys.platform == "win32":  # the proactor loop watches no sockets: in a thread

            def pooled() -> list[tuple[str | None, ...]]:
                with self.connection(durable=False) as conn:
                    return statement.run(conn, params)

            return await self.off_loop(pooled)
        loop = asyncio.get_running_loop()
        if self._down_since is not None:
            raise StoreUnavailable(
                f"PostgreSQL at {redact_url(self.url)} has not answered for "
                f"{self.down_for_s:.0f} s; retrying",
                reason="unreachable",
            )
        session = self._on_loop.get(loop)
        if session is not None and session.outages != self.outages and not session.lock.locked():
            self._drop_loop_session(loop)  # from before an outage: its socket may be dead
            session = None
        if session is None:
            for gone in [other for other in list(self._on_loop) if other.is_closed()]:
                self._drop_loop_session(gone)  # a loop that ran the runtime before
            session = self._on_loop[loop] = _LoopSession(loop, self.outages)
        psycopg = self._psycopg
        async with session.lock:
            try:
                async with asyncio.timeout(self.timeout_s + 1):
                    if session.conn is None or session.conn.closed:
                        conn = await self._connected_in_thread()
                        conn.pgconn.nonblocking = 1
                        if self._on_loop.get(loop) is not session:  # dropped meanwhile
                            conn.close()
                            raise StoreUnavailable("the database was closed",
                                                   reason="unreachable")  # fmt: skip
                        session.watch(conn)
                    return await statement.run_on_loop(session.conn, params)
            except psycopg.DataError as exc:  # refused; the session is as it was
                raise UserError(f"the database refused a value: {exc}") from exc
            except psycopg.OperationalError as exc:
                self._drop_loop_session(loop)
                raise self._unavailable(exc) from exc
            except TimeoutError:
                self._drop_loop_session(loop)
                raise StoreUnavailable(
                    f"PostgreSQL did not answer within {self.timeout_s:g} s", reason="unreachable"
                ) from None
            except (psycopg.Error, StoreUnavailable):
                raise  # refused (the session is as it was), or no session made
            except BaseException:  # cancelled mid-statement: the session's state is unknown
                self._drop_loop_session(loop)
                raise

    def on_loop_now(
        self,
        statement: Statement,
        params: Mapping[str, bytes | None],
        done: Callable[[Rows | None, BaseException | None], None],
    ) -> bool:
        """``on_loop`` without a coroutine: ``statement`` sent now on the running loop's
        bookkeeping session, and ``done(rows, None)`` or ``done(None, error)`` called on the
        loop once (the errors ``on_loop`` raises, within the same timeout). No task, no
        coroutines awaiting each other, no timeout context: a task's lease is taken in the
        turn it is asked and its waiter told in the turn its answer comes (two turns of the
        loop fewer each way). False, with nothing sent: that session is busy, not connected
        (yet, or again after an outage) or the store is down; ``on_loop`` then does it."""
        if sys.platform == "win32" or self._down_since is not None:
            return False
        loop = asyncio.get_running_loop()
        session = self._on_loop.get(loop)
        if (
            session is None
            or session.outages != self.outages
            or session.conn is None
            or session.conn.closed
            or not _taken_now(session.lock)
        ):
            return False
        psycopg = self._psycopg
        timer: asyncio.TimerHandle | None = None

        def answered(rows: Rows | None, exc: BaseException | None) -> None:
            if timer is not None:
                timer.cancel()
            refused = isinstance(exc, psycopg.Error) and not isinstance(
                exc, psycopg.OperationalError
            )  # a refusal leaves the session as it was
            if exc is not None and not refused and self._on_loop.get(loop) is session:
                self._drop_loop_session(loop)  # broken, silent or its state unknown
            session.lock.release()
            if exc is None:
                done(rows, None)
            elif isinstance(exc, psycopg.DataError):  # refused; the session is as it was
                done(None, UserError(f"the database refused a value: {exc}"))
            elif isinstance(exc, psycopg.OperationalError):
                done(None, self._unavailable(exc))
            elif isinstance(exc, TimeoutError):
                done(None, StoreUnavailable(
                    f"PostgreSQL did not answer within {self.timeout_s:g} s", reason="unreachable"
                ))  # fmt: skip
            else:
                done(None, exc)

        pending = Pending(loop, session.conn, statement, params, answered)
        timer = loop.call_later(self.timeout_s + 1, pending.fail, TimeoutError())
        pending.begin()
        return True

    async def _connected_in_thread(self) -> Any:
        """A ``dedicated`` connection, made in a thread. A caller that stops waiting (cancelled,
        timed out, its loop closing) leaves it to the thread, which closes it when it arrives:
        before, it was dropped open, and psycopg warned it was deleted while still open."""
        made = _Connecting()

        def connect() -> Any:
            conn = self.dedicated()
            with made.lock:
                if made.abandoned or self._closing.is_set():
                    conn.close()
                    raise StoreUnavailable("the database was closed", reason="unreachable")
                made.conn = conn
            return conn

        try:
            return await asyncio.to_thread(connect)
        except BaseException:
            with made.lock:
                made.abandoned = True
                conn, made.conn = made.conn, None
            if conn is not None:  # it came, but its caller had stopped waiting
                with contextlib.suppress(Exception):
                    conn.close()
            raise

    def _drop_loop_session(self, loop: asyncio.AbstractEventLoop) -> None:
        session = self._on_loop.pop(loop, None)
        if session is not None:
            session.close()

    def dedicated(self) -> Any:
        """A bookkeeping connection of its own (not pooled), for session-level advisory locks."""
        if self._down_since is not None:
            raise StoreUnavailable(f"PostgreSQL at {redact_url(self.url)} does not answer",
                                   reason="unreachable")  # fmt: skip
        try:
            return self._psycopg.connect(self.url, **self._connect)
        except self._psycopg.OperationalError as exc:
            raise self._unavailable(exc) from exc

    def listener(self) -> Any:
        """A connection of its own for LISTEN (not pooled; the caller closes it)."""
        return self._psycopg.connect(self.url, **self._connect)

    def live_workers(self, stale_s: float) -> list[dict[str, Any]]:
        """Workers that sent a heartbeat within ``stale_s`` seconds, newest first."""
        with self.connection() as conn:
            rows = conn.execute(
                "SELECT worker_id, host, pid, started_at, heartbeat_at, "
                "(SELECT count(*) FROM skillrt_leases l WHERE l.worker_id = w.worker_id "
                " AND l.expires_at > now()) FROM skillrt_workers w "
                "WHERE heartbeat_at > now() - make_interval(secs => %s) "
                "ORDER BY heartbeat_at DESC",
                (stale_s,),
            ).fetchall()
        keys = ("worker_id", "host", "pid", "started_at", "heartbeat_at", "tasks")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def heartbeat(self) -> None:
        with self.connection(durable=False) as conn:
            conn.execute(
                "UPDATE skillrt_workers SET heartbeat_at = now() WHERE worker_id = %s",
                (self.worker_id,),
            )

    def close(self) -> None:
        self._closing.set()
        with self._adopting_lock:
            adopting, self._adopting = self._adopting, set()
        for conn in adopting:  # connected for a loop that has not taken it (or never will)
            with contextlib.suppress(Exception):
                conn.close()
        for loop in list(self._on_loop):
            self._drop_loop_session(loop)
        for loop in list(self._committing):
            self.drop_commit_session(loop)
        with self._health:
            self._health.notify_all()
        if self._down_since is None:
            with contextlib.suppress(Exception), self.pool.connection(timeout=2) as conn:
                conn.execute("DELETE FROM skillrt_workers WHERE worker_id = %s", (self.worker_id,))
        self._close_pools()

    def _close_pools(self) -> None:
        self.bookkeeping.close()
        self.pool.close()


class _Joined:
    """``grouped`` inside an open round: the writes join it (nothing to do at either end)."""

    __slots__ = ("round",)

    def __init__(self, round_: PgRound) -> None:
        self.round = round_

    def __enter__(self) -> PgRound:
        return self.round

    def __exit__(self, *exc: object) -> None:
        return None


class _Gathering:
    """``gathering``: a round open on this thread until the block ends (sent by the caller)."""

    __slots__ = ("round", "rounds")

    def __init__(self, rounds: threading.local) -> None:
        self.rounds = rounds
        self.round = rounds.open = PgRound()

    def __enter__(self) -> PgRound:
        return self.round

    def __exit__(self, *exc: object) -> None:
        self.rounds.open = None


def _taken_now(lock: asyncio.Lock) -> bool:
    """Acquire ``lock`` if that needs no wait (its ``acquire`` ends without suspending); False,
    and not acquired, otherwise."""
    if lock.locked():
        return False
    acquiring = lock.acquire()
    try:
        acquiring.send(None)
    except StopIteration:
        return True
    acquiring.close()  # it would wait (waiters still queued): given up, nothing left behind
    return False


class _Connecting:
    """A connection being made in a thread for a caller that may stop waiting for it."""

    __slots__ = ("abandoned", "conn", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.abandoned = False
        self.conn: Any = None


class _LoopSession:
    """A session an event loop drives itself: its bookkeeping one (``PgDatabase.on_loop``) or
    its durable one (``commit_session``). The loop watches its socket for as long as it has it
    (``wire.Watch``)."""

    __slots__ = ("_watch", "conn", "connecting", "lock", "loop", "outages")

    def __init__(self, loop: asyncio.AbstractEventLoop, outages: int) -> None:
        self.loop = loop
        self.outages = outages  # the database's count when it was made
        self.conn: Any = None  # connected on first use
        self._watch: Watch | None = None
        self.connecting = False
        self.lock = asyncio.Lock()  # one statement at a time

    def watch(self, conn: Any) -> None:
        """Take ``conn`` (non-blocking, connected), watched by the loop (on its thread), in
        place of a session that broke."""
        if self._watch is not None:
            self._watch.close()
        self.conn = conn
        self._watch = Watch(self.loop, conn)

    def close(self) -> None:
        """Stop watching, then close the session."""
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        if self.conn is not None:
            with contextlib.suppress(Exception):
                self.conn.close()


def inspect_database(url: str, *, stale_s: float) -> dict[str, Any]:
    """What ``skillrt doctor`` shows of the database at ``url``, read only (nothing migrated):
    its schema version, this package's, the workers alive within ``stale_s`` and the tasks."""
    psycopg, _ = _modules()
    with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
        version = schema_version(conn)
        workers: list[dict[str, Any]] = []
        tasks = 0
        if version >= 2:
            rows = conn.execute(
                "SELECT worker_id, host, pid, heartbeat_at FROM skillrt_workers "
                "WHERE heartbeat_at > now() - make_interval(secs => %s) ORDER BY worker_id",
                (stale_s,),
            ).fetchall()
            workers = [
                {"worker_id": w, "host": h, "pid": p, "heartbeat_at": at.isoformat()}
                for w, h, p, at in rows
            ]
        if version >= 1:
            (tasks,) = conn.execute("SELECT count(*) FROM skillrt_tasks").fetchone()
    return {"schema": version, "package_schema": SCHEMA_VERSION, "workers": workers,
            "tasks": tasks}  # fmt: skip
