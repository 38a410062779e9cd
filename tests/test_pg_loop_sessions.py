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
