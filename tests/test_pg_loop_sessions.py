"""PostgreSQL: the event loop's own sessions (issue 29), against a real server. The loop watches
each session's socket once for the session's life, not once per statement; a session the
server ends while idle is no longer watched, and the next round and lease go on a new one; a
lease cancelled in flight leaves the next ones working."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skillrt._state.postgres.wire import Watch
from skillrt._state.records import TaskRecord
from tests.pg_loop_support import commit_session, open_backend, stored


def _record(task_id: str, updated_at: float) -> TaskRecord:
    return TaskRecord(id=task_id, session_id="s", state="EXECUTING", raw_input="write",
                      steps={"outline": {"text": "an outline"}}, created_at=updated_at - 1,
                      updated_at=updated_at)  # fmt: skip


@pytest.fixture
async def backend(pg_url: str, tmp_path: Path) -> AsyncIterator[Any]:
    for opened in open_backend(pg_url, tmp_path):  # opened in the test's loop, as before
        yield opened


def _leases(url: str) -> dict[str, str]:
    with psycopg.connect(url, autocommit=True) as conn:
        return dict(conn.execute("SELECT task_id, worker_id FROM skillrt_leases").fetchall())


def _count_readers(loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every reader the loop adds or removes from now on."""
    calls: list[str] = []
    for name in ("add_reader", "remove_reader"):
        real: Callable[..., Any] = getattr(loop, name)

        def counted(*args: Any, _real: Callable[..., Any] = real, _name: str = name) -> Any:
            calls.append(_name)
            return _real(*args)

        monkeypatch.setattr(loop, name, counted)
    return calls


async def test_the_loops_sessions_are_watched_once_not_once_a_statement(
    backend: Any, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await commit_session(backend)
    committer = backend.committer
    assert await backend.hold("warm") is True  # the bookkeeping session, connected
    calls = _count_readers(asyncio.get_running_loop(), monkeypatch)
    sent = committer._on_loop.sent
    for n in range(1, 6):
        assert await backend.hold(f"t{n}") is True
        committer.put(_record(f"t{n}", float(n)))
        await committer.durable()
        assert stored(pg_url, f"t{n}") == float(n)  # committed before durable returned
    assert committer._on_loop.sent == sent + 5  # the loop sent them, on its own session
    assert calls == []  # ten statements, not one reader added or removed
    assert set(_leases(pg_url)) >= {f"t{n}" for n in range(1, 6)}


async def test_a_session_the_server_ends_while_idle_is_dropped_and_the_next_one_is_new(
    backend: Any, pg_url: str
) -> None:
    """Ended while nothing is in flight (an idle timeout, an administrator): the loop reads the
    end, stops watching it (a descriptor at end of file is readable for ever), and the next
    round and the next lease go on new sessions: no outage, nothing lost."""
    loop = asyncio.get_running_loop()
    conn = await commit_session(backend)
    assert await backend.hold("a") is True
    bookkeeping = backend.database._on_loop[loop].conn
    assert Watch.of(conn, loop) is not None and Watch.of(bookkeeping, loop) is not None
    with psycopg.connect(pg_url, autocommit=True) as admin:
        for session in (conn, bookkeeping):
            admin.execute("SELECT pg_terminate_backend(%s)", (session.pgconn.backend_pid,))
    deadline = time.monotonic() + 10
    while Watch.of(conn, loop) is not None or Watch.of(bookkeeping, loop) is not None:
        assert time.monotonic() < deadline, "the loop still watches a session the server ended"
        await asyncio.sleep(0.01)
    assert conn.closed and bookkeeping.closed
    outages = backend.database.outages
    committer = backend.committer
    committer.put(_record("a", 1.0))
    await committer.durable()  # through the thread while the loop connects again
    assert stored(pg_url, "a") == 1.0
    assert await backend.hold("b") is True  # a new bookkeeping session
    assert backend.database.outages == outages and backend.database.available
    again = await commit_session(backend)
    assert again is not conn and Watch.of(again, loop) is not None
    sent = committer._on_loop.sent
    committer.put(_record("a", 2.0))
    await committer.durable()
    assert committer._on_loop.sent == sent + 1 and stored(pg_url, "a") == 2.0


async def test_a_dropped_session_is_no_longer_watched(backend: Any) -> None:
    loop = asyncio.get_running_loop()
    conn = await commit_session(backend)
    fd = conn.pgconn.socket
    backend.database.drop_commit_session(loop)
    assert Watch.of(conn, loop) is None and conn.closed
    selector = loop._selector  # type: ignore[attr-defined]
    assert fd not in selector.get_map()  # its number may be given out again: not in the map


async def test_a_lease_cancelled_in_flight_leaves_the_next_one_working(
    backend: Any, pg_url: str
) -> None:
    assert await backend.hold("warm") is True
    asking = asyncio.ensure_future(backend.hold("cut"))
    for _ in range(3):  # asked, then sent by the loop
        await asyncio.sleep(0)
    queued = asyncio.ensure_future(backend.hold("next"))  # asked while it is in flight
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    assert await queued is True  # sent after, on a new session
    assert await backend.hold("after") is True
    leases = _leases(pg_url)
    assert leases["next"] == leases["after"] == backend.worker_id


def _no_coroutine_hold(backend: Any, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The holds that go through the coroutine path (``hold_many_async``) from now on."""
    sent: list[list[str]] = []
    real = backend.runlocks.hold_many_async

    async def counted(task_ids: list[str]) -> set[str]:
        sent.append(sorted(task_ids))
        held: set[str] = await real(task_ids)
        return held

    monkeypatch.setattr(backend.runlocks, "hold_many_async", counted)
    return sent


async def test_a_lease_is_sent_in_the_turn_after_it_is_asked_and_told_in_the_turn_it_comes(
    backend: Any, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the loop's session free, a lease goes without a task or coroutines (issue 29):
    its statement is on the wire once the turn that asked it ends, and its waiter has the
    answer in the turn the answer comes. The turn's holds are still one statement."""
    assert await backend.hold("warm") is True  # the bookkeeping session, connected
    sent = _no_coroutine_hold(backend, monkeypatch)
    loop = asyncio.get_running_loop()
    session = backend.database._on_loop[loop]
    asking = [asyncio.ensure_future(backend.hold(f"n{i}")) for i in range(3)]
    await asyncio.sleep(0)  # the tasks ask (one turn) ...
    await asyncio.sleep(0)  # ... and the holds are sent at the end of it
    assert session.lock.locked()  # in flight on the session, no task of its own
    assert backend._holding == set()
    assert await asyncio.gather(*asking) == [True, True, True]
    assert not session.lock.locked()
    assert sent == []  # no coroutine path
    leases = _leases(pg_url)
    assert all(leases[f"n{i}"] == backend.worker_id for i in range(3))
    assert backend.runlocks._held >= {"n0", "n1", "n2"}  # and they are renewed


async def test_a_lease_asked_while_another_is_in_flight_waits_its_turn(
    backend: Any, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert await backend.hold("warm") is True
    sent = _no_coroutine_hold(backend, monkeypatch)
    # The leases' table locked by another session: the first lease's write is in flight for
    # sure when the second is asked (a loaded machine's slower turns gave the server time to
    # answer it within two of them, and the second found the session free).
    other = psycopg.connect(pg_url)
    try:
        other.execute("LOCK TABLE skillrt_leases IN EXCLUSIVE MODE")
        first = asyncio.ensure_future(backend.hold("first"))
        for _ in range(2):
            await asyncio.sleep(0)
        second = asyncio.ensure_future(backend.hold("second"))  # the session is busy: it waits
        for _ in range(2):
            await asyncio.sleep(0)
        assert not first.done() and not second.done()
    finally:
        other.commit()  # the lock released: both go through
        other.close()
    assert await first is True and await second is True
    assert sent == [["second"]]
    assert await backend.hold("third") is True  # and the session is free again
    assert sent == [["second"]]
    assert {"first", "second", "third"} <= set(_leases(pg_url))


async def test_a_lease_the_server_does_not_answer_in_time_fails_and_the_next_one_works(
    pg_url: str, tmp_path: Path
) -> None:
    """A hold stuck behind a row lock (the server alive, so no keepalive ends it) fails within
    the store's timeout as ``StoreUnavailable``; its session is dropped (its state unknown) and
    the next lease goes on a new one. (Should the server still run the stuck statement, its
    lease names this worker, which does not renew it: failover takes such a task back.)"""
    import structlog

    from skillrt import load_config
    from skillrt._state.postgres.backend import PostgresBackend
    from skillrt.exceptions import StoreUnavailable

    cfg = load_config(content_root=tmp_path, state_dir=tmp_path / ".skillrt", state_url=pg_url,
                      store_timeout_s=0.5)  # fmt: skip
    backend = PostgresBackend.open(cfg, logger=structlog.get_logger(), on_reset=lambda: None,
                                   opened=[])  # fmt: skip
    try:
        assert await backend.hold("stuck") is True
        loop = asyncio.get_running_loop()
        session = backend.database._on_loop[loop]
        with psycopg.connect(pg_url) as other:  # holds the lease's row: the hold waits
            other.execute("SELECT 1 FROM skillrt_leases WHERE task_id = 'stuck' FOR UPDATE")
            started = time.monotonic()
            with pytest.raises(StoreUnavailable) as caught:
                await backend.hold("stuck")
            assert caught.value.reason == "unreachable"
            assert time.monotonic() - started < 5
            assert backend.database._on_loop.get(loop) is not session  # dropped
            assert session.conn.closed
        assert await backend.hold("after") is True  # a new session
        assert backend.database.available
        assert _leases(pg_url)["after"] == backend.worker_id
    finally:
        backend.close()


async def test_a_lease_no_statement_can_carry_fails_alone(backend: Any, pg_url: str) -> None:
    assert await backend.hold("warm") is True
    session = backend.database._on_loop[asyncio.get_running_loop()]
    with pytest.raises(UnicodeEncodeError):  # as psycopg's own dumpers refuse it
        await backend.hold("bad \udc80")
    assert await backend.hold("fine") is True
    assert backend.database._on_loop[asyncio.get_running_loop()] is session  # kept


async def test_a_statement_sent_at_once_says_what_on_loop_says(backend: Any) -> None:
    """``on_loop_now``'s errors are ``on_loop``'s: a refused value is a ``UserError`` and a
    statement the server refuses its psycopg error, both leaving the session as it was."""
    from skillrt._state.postgres.wire import Rows, Statement
    from skillrt.exceptions import UserError

    assert await backend.hold("warm") is True
    loop = asyncio.get_running_loop()
    db = backend.database
    session = db._on_loop[loop]

    async def now(sql: str, params: dict[str, bytes | None]) -> Rows:
        told: asyncio.Future[Rows] = loop.create_future()

        def done(rows: Rows | None, exc: BaseException | None) -> None:
            if exc is not None:
                told.set_exception(exc)
            else:
                assert rows is not None
                told.set_result(rows)

        assert db.on_loop_now(Statement(sql), params, done) is True
        return await told

    assert await now("SELECT %(x)s::int + 1", {"x": b"41"}) == [("42",)]
    with pytest.raises(UserError, match="refused a value"):
        await now("SELECT %(x)s::int", {"x": b"forty"})
    with pytest.raises(psycopg.errors.UndefinedTable):
        await now("SELECT * FROM no_such_table WHERE %(x)s::int = 1", {"x": b"1"})
    assert db._on_loop[loop] is session and not session.lock.locked()
    assert await now("SELECT %(x)s::text", {"x": b"still"}) == [("still",)]
    # Busy (a statement in flight): nothing sent, the caller goes through ``on_loop``.
    assert db.on_loop_now(Statement("SELECT pg_sleep(0.2)"), {}, lambda rows, exc: None)
    assert db.on_loop_now(Statement("SELECT 1"), {}, lambda rows, exc: None) is False
    assert await db.on_loop(Statement("SELECT %(x)s::text"), {"x": b"queued"}) == [("queued",)]


def test_the_result_statuses_read_as_ints_are_libpqs() -> None:
    from psycopg import pq

    from skillrt._state.postgres import wire

    assert (wire._COMMAND_OK, wire._TUPLES_OK, wire._FATAL_ERROR) == (
        pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK, pq.ExecStatus.FATAL_ERROR
    )  # fmt: skip


async def test_a_lease_whose_statement_was_deallocated_behind_our_back_is_prepared_again(
    backend: Any, pg_url: str
) -> None:
    """A session whose prepared statements are gone (``DEALLOCATE ALL``, ``DISCARD ALL`` by a
    pooler) answers the first execution with "no such statement": it is prepared again and
    sent once more, and the lease is taken."""
    from psycopg import pq

    assert await backend.hold("warm") is True
    session = backend.database._on_loop[asyncio.get_running_loop()]
    pgconn = session.conn.pgconn
    pgconn.nonblocking = 0
    try:
        assert pgconn.exec_(b"DEALLOCATE ALL").status == pq.ExecStatus.COMMAND_OK
    finally:
        pgconn.nonblocking = 1
    assert await backend.hold("again") is True
    assert _leases(pg_url)["again"] == backend.worker_id
    assert backend.database._on_loop[asyncio.get_running_loop()] is session  # kept


async def test_a_lease_whose_session_is_cut_mid_statement_is_an_outage_and_the_next_one_works(
    backend: Any, pg_url: str
) -> None:
    """The server ends the loop's session while a hold is in flight on it (a restart, a cut):
    the hold's waiter hears ``StoreUnavailable`` at once (not at the timeout), the session is
    dropped, and once the store answers again the next lease goes on a new session."""
    from skillrt.exceptions import StoreUnavailable

    assert await backend.hold("cut") is True
    loop = asyncio.get_running_loop()
    session = backend.database._on_loop[loop]
    with psycopg.connect(pg_url) as other:  # holds the lease's row: the next hold waits there
        other.execute("SELECT 1 FROM skillrt_leases WHERE task_id = 'cut' FOR UPDATE")
        asking = asyncio.ensure_future(backend.hold("cut"))
        for _ in range(3):
            await asyncio.sleep(0)
        assert session.lock.locked()  # in flight
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (session.conn.pgconn.backend_pid,))
        started = time.monotonic()
        with pytest.raises(StoreUnavailable) as caught:
            await asking
        assert caught.value.reason == "unreachable"
        assert time.monotonic() - started < backend.database.timeout_s
        assert backend.database._on_loop.get(loop) is not session and session.conn.closed
    deadline = time.monotonic() + 10
    while not backend.database.available:
        assert time.monotonic() < deadline, "the store never came back"
        await asyncio.sleep(0.05)
    assert await backend.hold("next") is True
    assert _leases(pg_url)["next"] == backend.worker_id
