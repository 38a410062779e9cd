"""PostgreSQL: the group commit's rounds sent by the event loop itself (``LoopRounds``, issue 29),
against a real server: a round is on disk when ``durable`` returns, without the commit thread;
a synchronous flush finishes the round in flight first (no older write lands after a newer);
a session the server cut fails its round as an outage and the next round connects again; a
round the server refuses whole still writes its checkpoints and tells of the fenced ones."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skillrt._state.records import TaskRecord
from skillrt.exceptions import StoreUnavailable
from tests.pg_loop_support import commit_session, open_backend, stored


def _record(task_id: str, updated_at: float, state: str = "EXECUTING") -> TaskRecord:
    return TaskRecord(id=task_id, session_id="s", state=state, raw_input="write",
                      steps={"outline": {"text": "一个大纲"}}, created_at=updated_at - 1,
                      updated_at=updated_at)  # fmt: skip


@pytest.fixture
async def backend(pg_url: str, tmp_path: Path) -> AsyncIterator[Any]:
    for opened in open_backend(pg_url, tmp_path):  # opened in the test's loop, as before
        yield opened


def _pooled(backend: Any) -> list[bool]:
    """Count the pooled sessions taken from now on (the commit thread's way)."""
    taken: list[bool] = []
    connection = backend.database.connection

    def counted(*, durable: bool = True) -> Any:
        taken.append(durable)
        return connection(durable=durable)

    backend.database.connection = counted
    return taken


async def test_rounds_go_out_on_the_loops_session_and_are_on_disk_when_durable_returns(
    backend: Any, pg_url: str
) -> None:
    await commit_session(backend)
    committer = backend.committer
    sent, taken = committer._on_loop.sent, _pooled(backend)
    for n in range(1, 6):
        committer.put(_record("t", float(n)))
        await committer.durable()
        assert stored(pg_url, "t") == float(n)  # committed before durable returned
    assert committer._on_loop.sent - sent == 5  # one statement a round, sent by the loop
    assert taken == []  # no pooled session: the commit thread wrote none of them


async def test_a_synchronous_flush_finishes_the_round_the_loop_has_in_flight(
    backend: Any, pg_url: str
) -> None:
    await commit_session(backend)
    committer = backend.committer
    committer.put(_record("t", 1.0))
    waiting = asyncio.ensure_future(committer.durable())
    deadline = time.monotonic() + 5
    while committer._on_loop._flight is None:  # handed over and sent, its answer not read
        assert time.monotonic() < deadline
        await asyncio.sleep(0)
    committer.put(_record("t", 2.0))  # newer, queued behind it
    committer.flush_sync()  # the loop is blocked here: the flight is read here, then this
    assert committer._on_loop._flight is None and not committer._outstanding
    await waiting  # its waiter heard it was written
    await asyncio.sleep(0.05)
    assert stored(pg_url, "t") == 2.0  # the older round never lands after the newer


async def test_a_cut_loop_session_fails_its_round_as_an_outage_and_the_next_reconnects(
    backend: Any, pg_url: str
) -> None:
    conn = await commit_session(backend)
    committer = backend.committer
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (conn.pgconn.backend_pid,)).fetchone()
    committer.put(_record("t", 1.0))
    with pytest.raises(StoreUnavailable) as caught:
        await committer.durable()
    assert caught.value.reason == "unreachable"
    deadline = time.monotonic() + 15
    while not backend.database.available:  # the probe finds the server answers
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    committer.put(_record("t", 2.0))
    await committer.durable()  # through the thread while the loop connects again
    assert stored(pg_url, "t") == 2.0
    await commit_session(backend)
    sent = committer._on_loop.sent
    committer.put(_record("t", 3.0))
    await committer.durable()
    assert committer._on_loop.sent == sent + 1 and stored(pg_url, "t") == 3.0


async def test_a_round_refused_whole_on_the_loop_still_writes_its_checkpoints(
    backend: Any, pg_url: str
) -> None:
    """Its history part refused: the checkpoints go again apart (a task another worker holds
    fenced, and said so), the history entry is logged, nothing half-written."""
    from skillrt._state.postgres import PgDatabase, PgRunLocks, PgTaskStore

    other = PgDatabase(pg_url, worker_id="other")
    theirs = PgRunLocks(other, lease_s=30)
    PgTaskStore(other).apply([_record("theirs", 1.0)], [])
    assert theirs.hold("theirs") is True
    await commit_session(backend)
    committer = backend.committer
    entry = {"task_id": "mine", "session_id": "s", "state": "EXECUTING"}
    committer.add_side(lambda: lambda: backend.history.add_batch([entry], []))
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("ALTER TABLE skillrt_history_tasks RENAME TO away")
    try:
        sent = committer._on_loop.sent
        committer.put(_record("mine", 2.0))
        committer.put(_record("theirs", 2.0))
        committer.nudge()
        with pytest.raises(StoreUnavailable) as caught:
            await committer.durable()
        assert committer._on_loop.sent == sent + 1  # the loop sent it; refused whole
        assert caught.value.reason == "lease_lost" and "theirs" in str(caught.value)
        assert stored(pg_url, "mine") == 2.0 and stored(pg_url, "theirs") == 1.0
    finally:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("ALTER TABLE away RENAME TO skillrt_history_tasks")
    assert backend.history.tasks() == []
    theirs.close()
    other.close()


async def test_an_ending_that_deletes_one_checkpoint_is_fenced_and_gives_its_lease_back(
    backend: Any, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The round of one deletion (a task's ending) has a statement of its own: the deletion
    and the lease's release in it, and no deletion of a task another live worker runs."""
    from skillrt._state.postgres import PgDatabase, PgRunLocks, PgTaskStore, rounds

    shapes: list[tuple[str, str, str]] = []
    made = rounds._statement

    def shape(checkpoints: str, released: str, history: str) -> Any:
        shapes.append((checkpoints, released, history))
        return made(checkpoints, released, history)

    monkeypatch.setattr(rounds, "_statement", shape)

    def leases() -> dict[str, str]:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            return dict(conn.execute("SELECT task_id, worker_id FROM skillrt_leases").fetchall())

    await commit_session(backend)
    committer = backend.committer
    assert await backend.hold("mine") is True
    committer.put(_record("mine", 1.0))
    await committer.durable()
    sent, shapes[:] = committer._on_loop.sent, []
    committer.delete("mine")
    await backend.release("mine")
    await committer.durable()
    assert stored(pg_url, "mine") is None and "mine" not in leases()
    assert committer._on_loop.sent == sent + 1  # one statement, of the one-deletion shape
    assert shapes == [("gone", "one", "")]

    other = PgDatabase(pg_url, worker_id="other")
    theirs = PgRunLocks(other, lease_s=30)
    PgTaskStore(other).apply([_record("theirs", 1.0)], [])
    assert theirs.hold("theirs") is True
    committer.delete("theirs")
    with pytest.raises(StoreUnavailable) as caught:
        await committer.durable()
    assert caught.value.reason == "lease_lost" and "theirs" in str(caught.value)
    assert stored(pg_url, "theirs") == 1.0 and leases()["theirs"] == "other"
    theirs.close()
    other.close()


async def test_a_flush_from_another_thread_waits_for_the_loop_to_write_its_round(
    backend: Any, pg_url: str
) -> None:
    """The loop's session is the loop's alone: a synchronous flush from another thread while
    the loop runs waits for the loop to write what it has in flight, and then writes its own."""
    await commit_session(backend)
    committer = backend.committer
    committer.put(_record("t", 1.0))
    waiting = asyncio.ensure_future(committer.durable())
    deadline = time.monotonic() + 5
    while committer._on_loop._flight is None:
        assert time.monotonic() < deadline
        await asyncio.sleep(0)
    flushed = asyncio.ensure_future(asyncio.to_thread(committer.flush_sync))
    await waiting
    await flushed  # it returned once the loop had written the round (not reading it there)
    assert stored(pg_url, "t") == 1.0 and committer._on_loop._flight is None
