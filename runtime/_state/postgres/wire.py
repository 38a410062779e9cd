"""Statements sent through libpq directly: the commit rounds' and the leases' (issue 29).

psycopg's ``execute`` spends 25-50 µs of CPU on each statement in Python: the query converted,
each parameter dumped by an adapter, the prepared-statement cache, the result wrapped in a
cursor. A task one at a time makes five statements on the durable path (its lease and four
commit rounds), each while the event loop waits, and the commit thread holds the GIL for all of
that. Here a statement is prepared once per connection under a name of its own (``Statement``)
and sent with ``PGconn.exec_prepared``: one libpq call, which lets go of the GIL while it waits
for the server. Its parameters are bytes made here, text or (for arrays) PostgreSQL's binary
array format, which costs no escaping; its result is read as text.

Errors are psycopg's, as ``execute`` raises them: a connection that broke is an
``OperationalError`` (``PgDatabase.connection`` makes it ``StoreUnavailable``), a refused value
the ``DataError`` of its SQLSTATE, and so on.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import select
import struct
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["Pending", "Statement", "Watch", "float8_array", "text", "text_array"]

_PLACEHOLDER = re.compile(r"%\((\w+)\)([sb])")
_TEXT_OID, _FLOAT8_OID = 25, 701
_HEADER = struct.Struct("!iiiii")  # dimensions, has-nulls, element type, length, lower bound
_LENGTH = struct.Struct("!i")
_FLOAT8 = struct.Struct("!id")  # an element: its length (8), its value
_UNDEFINED_STATEMENT = b"26000"  # invalid_sql_statement_name: not prepared on this session
# libpq's ``ExecStatusType`` (``psycopg.pq.ExecStatus``), as plain ints: read for every result,
# where the enum's members cost an attribute lookup each and their import a statement a read.
_COMMAND_OK, _TUPLES_OK, _FATAL_ERROR = 1, 2, 7
_SUCCEEDED = (_COMMAND_OK, _TUPLES_OK)

# The statements each connection has prepared (a connection is used by one thread at a time;
# the lock guards the mapping, which several threads' connections share).
_prepared: weakref.WeakKeyDictionary[Any, set[bytes]] = weakref.WeakKeyDictionary()
_prepared_lock = threading.Lock()
# The loop's reader of each watched session (``Watch``), by connection.
_watches: weakref.WeakKeyDictionary[Any, Watch] = weakref.WeakKeyDictionary()


class Statement:
    """A statement written with psycopg's named placeholders (``%(name)s``: a text parameter;
    ``%(name)b``: a binary one, an array made by ``text_array`` or ``float8_array``), sent
    prepared with parameters given by name as bytes, None for NULL (``run``)."""

    __slots__ = ("formats", "name", "names", "sql")

    def __init__(self, sql: str) -> None:
        names: list[str] = []
        formats: list[int] = []

        def number(match: re.Match[str]) -> str:
            name, kind = match.group(1), match.group(2)
            if name not in names:
                names.append(name)
                formats.append(1 if kind == "b" else 0)
            elif formats[names.index(name)] != (1 if kind == "b" else 0):
                raise ValueError(f"parameter {name!r} is both text and binary")
            return f"${names.index(name) + 1}"

        text = _PLACEHOLDER.sub(number, sql)
        self.sql = text.encode("utf-8")
        self.name = b"skillrt_" + hashlib.sha256(self.sql).hexdigest()[:20].encode("ascii")
        self.names = tuple(names)
        self.formats = tuple(formats)

    def run(self, conn: Any, params: Mapping[str, bytes | None]) -> list[tuple[str | None, ...]]:
        """Execute on ``conn`` (a psycopg connection in autocommit, used by this thread alone)
        and return the rows, each value as text (None for NULL)."""
        values = [params[name] for name in self.names]
        pgconn = conn.pgconn
        names = _names(conn)
        if self.name not in names:
            _check(conn, pgconn.prepare(self.name, self.sql))
            names.add(self.name)
        result = pgconn.exec_prepared(self.name, values, self.formats)
        if _missing(result):  # deallocated behind our back (DISCARD ALL): prepare it again
            names.discard(self.name)
            _check(conn, pgconn.prepare(self.name, self.sql))
            names.add(self.name)
            result = pgconn.exec_prepared(self.name, values, self.formats)
        _check(conn, result)
        return _rows(result)

    async def run_on_loop(
        self, conn: Any, params: Mapping[str, bytes | None]
    ) -> list[tuple[str | None, ...]]:
        """``run`` driven by the running event loop (libpq in non-blocking mode, the socket
        watched by the loop): no thread, no hand-off. ``conn`` is this loop's alone and one
        statement at a time; a caller bounds the wait (a server that does not answer)."""
        values = [params[name] for name in self.names]
        pgconn = conn.pgconn
        names = _names(conn)
        watch = Watch.of(conn, asyncio.get_running_loop())
        if self.name not in names:
            pgconn.send_prepare(self.name, self.sql)
            _check(conn, await _result(pgconn, watch))
            names.add(self.name)
        pgconn.send_query_prepared(self.name, values, self.formats)
        result = await _result(pgconn, watch)
        if _missing(result):
            names.discard(self.name)
            pgconn.send_prepare(self.name, self.sql)
            _check(conn, await _result(pgconn, watch))
            names.add(self.name)
            pgconn.send_query_prepared(self.name, values, self.formats)
            result = await _result(pgconn, watch)
        _check(conn, result)
        return _rows(result)


Rows = list[tuple[str | None, ...]]


class Watch:
    """The event loop's reader of a non-blocking session's socket, registered once for the
    session's life: a statement in flight sets ``on_readable`` instead of adding a reader and
    removing it again (two ``epoll_ctl`` calls and ~13 µs of the loop's CPU a statement, and a
    task one at a time makes five). With nothing in flight, what comes is read and dropped (a
    notice); a session the server ended (end of file) is no longer watched, and its next
    statement finds it broken. ``close`` before closing the connection: a descriptor closed
    while the loop still watches it would stay in the loop's map under a number the system
    gives out again."""

    __slots__ = ("__weakref__", "conn", "fd", "loop", "on_readable")

    def __init__(self, loop: asyncio.AbstractEventLoop, conn: Any) -> None:
        self.loop, self.conn = loop, conn
        self.on_readable: Callable[[], None] | None = None
        self.fd = conn.pgconn.socket
        try:
            loop.add_reader(self.fd, self._readable)
        except OSError:  # the number of a closed session still in the loop's map: replaced
            loop.remove_reader(self.fd)
            loop.add_reader(self.fd, self._readable)
        _watches[conn] = self

    @staticmethod
    def of(conn: Any, loop: asyncio.AbstractEventLoop) -> Watch | None:
        """The watch of ``conn`` by ``loop``, if it has one."""
        watch = _watches.get(conn)
        return watch if watch is not None and watch.loop is loop and watch.fd >= 0 else None

    def _readable(self) -> None:
        callback = self.on_readable
        if callback is not None:
            callback()
            return
        pgconn = self.conn.pgconn
        try:
            pgconn.consume_input()  # raises at end of file
            while not pgconn.is_busy() and pgconn.get_result() is not None:
                pass
        except Exception:
            self.close()
            return
        if self.conn.closed:
            self.close()

    def close(self) -> None:
        """Stop watching (on the loop's thread, or with the loop stopped or closed)."""
        fd, self.fd = self.fd, -1
        self.on_readable = None
        _watches.pop(self.conn, None)
        if fd >= 0 and not self.loop.is_closed():
            with contextlib.suppress(Exception):
                self.loop.remove_reader(fd)


class Pending:
    """A statement in flight on a non-blocking session (``Statement.run`` without a thread and
    without a coroutine): sent by ``begin``, its result read by callbacks when the event loop
    sees the socket ready, then ``done(rows, None)`` or ``done(None, error)`` is called once,
    on the loop. Where the loop cannot run (a synchronous close while it is blocked in it),
    ``finish_now`` reads the result here, blocking. Errors are ``run``'s."""

    __slots__ = ("conn", "done", "finished", "found", "loop", "names", "params", "phase",
                 "retried", "statement", "watch", "writing")  # fmt: skip

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        conn: Any,
        statement: Statement,
        params: Mapping[str, bytes | None],
        done: Callable[[Rows | None, BaseException | None], None],
    ) -> None:
        self.loop, self.conn, self.statement, self.done = loop, conn, statement, done
        self.params = [params[name] for name in statement.names]
        self.names = _names(conn)  # the statements prepared on its session
        self.phase = "execute" if statement.name in self.names else "prepare"
        self.found: Any = None
        self.retried = False
        self.writing = False
        self.finished = False
        self.watch = Watch.of(conn, loop)

    def begin(self) -> None:
        try:
            self._send()
        except BaseException as exc:  # nothing in flight: the caller's turn to know
            self._finish(None, exc)
            return
        if self.watch is not None:
            self.watch.on_readable = self._readable
        else:
            self.loop.add_reader(self.conn.pgconn.socket, self._readable)

    def _send(self) -> None:
        pgconn, statement = self.conn.pgconn, self.statement
        if self.phase == "prepare":
            pgconn.send_prepare(statement.name, statement.sql)
        else:
            pgconn.send_query_prepared(statement.name, self.params, statement.formats)
        self._flush()

    def _flush(self) -> None:
        more = self.conn.pgconn.flush() == 1  # 1: the socket took part of it
        if more and not self.writing:
            self.loop.add_writer(self.conn.pgconn.socket, self._flush_callback)
        elif not more and self.writing:
            self.loop.remove_writer(self.conn.pgconn.socket)
        self.writing = more

    def _flush_callback(self) -> None:
        try:
            self._flush()
        except BaseException as exc:
            self._finish(None, exc)

    def _readable(self) -> None:
        try:
            self._read()
        except BaseException as exc:
            self._finish(None, exc)

    def _read(self) -> None:
        pgconn = self.conn.pgconn
        pgconn.consume_input()
        while not self.finished and not pgconn.is_busy():
            result = pgconn.get_result()
            if result is not None:  # the first failed result if any (a statement has one)
                if self.found is None or self.found.status in _SUCCEEDED:
                    self.found = result
                continue
            found, self.found = self.found, None  # all of this phase's results are in
            if found is None:
                from psycopg import OperationalError

                raise OperationalError("the server sent no result")
            self._phase_done(found)

    def _phase_done(self, found: Any) -> None:
        names = self.names
        if self.phase == "prepare":
            _check(self.conn, found)
            names.add(self.statement.name)
            self.phase = "execute"
            self._send()
        elif _missing(found) and not self.retried:  # deallocated behind our back
            names.discard(self.statement.name)
            self.phase, self.retried = "prepare", True
            self._send()
        else:
            _check(self.conn, found)
            self._finish(_rows(found), None)

    def fail(self, error: BaseException) -> None:
        """End it now with ``error`` (a caller's timeout): ``done`` hears it, a late answer is
        not read. The session is left mid-statement: the caller drops it."""
        self._finish(None, error)

    def _finish(self, rows: Rows | None, error: BaseException | None) -> None:
        if self.finished:
            return
        self.finished = True
        watch = self.watch
        if watch is not None and watch.on_readable == self._readable:
            watch.on_readable = None
        if watch is None or self.writing:
            try:
                fd = self.conn.pgconn.socket
            except Exception:  # the session is gone: the loop watches nothing of it any more
                fd = -1
            if fd >= 0:
                if watch is None:
                    self.loop.remove_reader(fd)
                if self.writing:
                    self.loop.remove_writer(fd)
        self.done(rows, error)

    def finish_now(self, timeout_s: float) -> None:
        """Read the result here, blocking (the loop does not run meanwhile); ``done`` is
        called before this returns. A server silent for ``timeout_s`` fails it."""
        from psycopg import OperationalError

        while not self.finished:
            try:
                fd = self.conn.pgconn.socket
                writing = [fd] if self.writing else []
                readable, writable, _ = select.select([fd], writing, [], timeout_s)
                if not readable and not writable:
                    raise OperationalError(f"no answer within {timeout_s:g} s")
                if writable:
                    self._flush()
                if readable:
                    self._read()
            except BaseException as exc:
                self._finish(None, exc)


def _names(conn: Any) -> set[bytes]:
    """The statements prepared on ``conn``'s session."""
    with _prepared_lock:
        names = _prepared.get(conn)
        if names is None:
            names = _prepared[conn] = set()
    return names


def _rows(result: Any) -> list[tuple[str | None, ...]]:
    columns = range(result.nfields)
    return [
        tuple(_text(result.get_value(row, column)) for column in columns)
        for row in range(result.ntuples)
    ]


async def _result(pgconn: Any, watch: Watch | None = None) -> Any:
    """The result of what was sent on ``pgconn`` (non-blocking), the loop waiting for its
    socket (through ``watch``, its session's, if it has one); the first failed result if any
    (a statement has one)."""
    from psycopg import OperationalError

    loop = asyncio.get_running_loop()
    fd = pgconn.socket
    while pgconn.flush():  # 1: more to send once the socket takes it
        await _ready(loop, fd, write=True)
    found = None
    while True:
        while pgconn.is_busy():
            await _ready(loop, fd, write=False, watch=watch)
            pgconn.consume_input()
        result = pgconn.get_result()
        if result is None:
            break
        if found is None or found.status in _SUCCEEDED:
            found = result
    if found is None:
        raise OperationalError("the server sent no result")
    return found


async def _ready(
    loop: asyncio.AbstractEventLoop, fd: int, *, write: bool, watch: Watch | None = None
) -> None:
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    if watch is not None and not write:
        watch.on_readable = wake
        try:
            await ready
        finally:
            if watch.on_readable is wake:
                watch.on_readable = None
        return
    if write:
        loop.add_writer(fd, wake)
    else:
        loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        if write:
            loop.remove_writer(fd)
        else:
            loop.remove_reader(fd)


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("utf-8")


def _missing(result: Any) -> bool:
    if result.status != _FATAL_ERROR:
        return False
    from psycopg import pq

    return bool(result.error_field(pq.DiagnosticField.SQLSTATE) == _UNDEFINED_STATEMENT)


def _check(conn: Any, result: Any) -> None:
    """Raise what psycopg's ``execute`` would for a result that is not a success."""
    if result.status in _SUCCEEDED:
        return
    from psycopg import OperationalError, errors, pq

    if conn.pgconn.status == pq.ConnStatus.BAD:  # the connection broke: no SQLSTATE to go by
        message = result.get_error_message("utf-8") or "the connection to the server broke"
        raise OperationalError(message)
    raise errors.error_from_result(result, encoding="utf-8")


def text(value: str) -> bytes:
    """A text parameter. (A lone surrogate, which UTF-8 cannot hold, raises
    ``UnicodeEncodeError``, as psycopg's own dumpers do.)"""
    return value.encode("utf-8")


def text_array(values: Sequence[str]) -> bytes:
    """``values`` as a binary ``text[]`` (no element is NULL)."""
    if not values:
        return _HEADER.pack(0, 0, _TEXT_OID, 0, 0)[:12]
    parts = [_HEADER.pack(1, 0, _TEXT_OID, len(values), 1)]
    for value in values:
        data = value.encode("utf-8")
        parts.append(_LENGTH.pack(len(data)))
        parts.append(data)
    return b"".join(parts)


def float8_array(values: Sequence[float]) -> bytes:
    """``values`` as a binary ``float8[]``."""
    if not values:
        return _HEADER.pack(0, 0, _FLOAT8_OID, 0, 0)[:12]
    head = _HEADER.pack(1, 0, _FLOAT8_OID, len(values), 1)
    return head + b"".join(_FLOAT8.pack(8, float(value)) for value in values)
