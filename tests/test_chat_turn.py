"""A chat turn's history: in memory written as it is made, with a file written with the
rounds, a request's entry within the second either way (real runtimes, real SQLite)."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillrt._state.embedded.history import History, MemoryHistory
from skillrt.exceptions import UserError
from skillrt.testing import FunctionModel

from .helpers import make_runtime
from .test_runtime import writer


def _entry(rng: random.Random, n: int) -> dict[str, Any]:
    return {
        "task_id": f"t{rng.randrange(12)}",
        "session_id": rng.choice(["s1", "s2", "写"]),
        "state": rng.choice(["COMPLETED", "ERROR"]),
        "n": n,
        "cost": rng.random(),
        "input": rng.choice(["é\u2028\x00 写", "", "x" * 40]),
        "error": None,
    }


def _message(rng: random.Random, n: int) -> tuple[str, dict[str, Any]]:
    return rng.choice(["s1", "s2", "写"]), {"role": "user", "content": f"m{n}", "at": n / 3}


@pytest.mark.parametrize("limit", [1, 3, 7])
def test_the_history_in_memory_keeps_what_the_sqlite_one_in_memory_keeps(limit: int) -> None:
    """``MemoryHistory`` (``checkpoints = false``) against ``History(None)``, which it
    replaces: the same entries, order, bound (replaced task entries leave gaps in the seqs,
    which the bound counts), reads, limits and refusals, over random writes."""
    rng = random.Random(limit)
    old, new = History(None, limit=limit), MemoryHistory(limit=limit)
    for n in range(400):
        kind = rng.randrange(5)
        op: tuple[Any, ...]
        if kind == 0:
            op = ("add_task", _entry(rng, n))
        elif kind == 1:
            op = ("add_message", *_message(rng, n))
        else:
            tasks = [_entry(rng, n) for _ in range(rng.randrange(4))]
            said = [_message(rng, n) for _ in range(rng.choice([0, 1, 2, 3, 20]))]
            if kind == 4 and tasks:  # a bad one among them: nothing of the batch is kept
                tasks[-1] = rng.choice(
                    [{**tasks[-1], "cost": float("nan")}, {"session_id": "s1"}, {"x": object()}]
                )
            op = ("add_batch", tasks, said)
        outcomes = []
        for history in (old, new):
            try:
                getattr(history, op[0])(*op[1:])
                outcomes.append("ok")
            except UserError as exc:
                outcomes.append(str(exc))
        assert outcomes[0] == outcomes[1]
        for session in (None, "s1", "s2", "写", "none"):
            for bound in (50, 2, 0, -1):
                assert new.tasks(session, bound) == old.tasks(session, bound)
                if session is not None:
                    assert new.messages(session, bound) == old.messages(session, bound)
    old.close()
    new.close()
    with pytest.raises(UserError):
        MemoryHistory(limit=0)


def _chatlog_timers(rt: Any, calls: list[float]) -> Callable[[], None]:
    """Count the timers the chat log arms on the running loop (their delays in ``calls``)."""
    loop = asyncio.get_running_loop()
    call_later = loop.call_later

    def counted(delay: float, callback: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(callback, "__self__", None) is rt.chatlog:
            calls.append(delay)
        return call_later(delay, callback, *args, **kwargs)

    loop.call_later = counted  # type: ignore[method-assign]
    return lambda: setattr(loop, "call_later", call_later)


async def test_without_checkpoints_each_entry_is_in_the_history_as_it_is_made(
    isolated: Path,
) -> None:
    """``checkpoints = false``: the history is in memory (``MemoryHistory``, no SQLite), and
    each entry is written as it is made, on the loop: a running task's request is there at
    once (not when a timer rings), and the chat log arms no timer and queues nothing."""
    gate = asyncio.Event()

    async def slow(messages: list[Any], options: Any) -> str:
        await gate.wait()
        return "text"

    rt = make_runtime(isolated, FunctionModel(slow), [writer([])], checkpoints=False)
    await rt.initialize()
    assert type(rt.history) is MemoryHistory
    timers: list[float] = []
    restore = _chatlog_timers(rt, timers)
    try:
        job = asyncio.create_task(rt.process_input("write an article about memory"))
        for _ in range(50):
            await asyncio.sleep(0.01)
            if rt.history.messages(rt.session_id):
                break
        said = [m["content"] for m in rt.history.messages(rt.session_id)]
        assert said == ["write an article about memory"]
        assert not job.done()
        gate.set()
        msg = await job
        assert msg.state == "COMPLETED"
        assert rt.history.tasks()[0]["task_id"] == msg.task_id
        assert rt.history.messages(rt.session_id)[0]["content"] == msg.content
        assert timers == []
        assert not rt.chatlog._tasks and not rt.chatlog._messages
    finally:
        restore()
    await rt.close()


def _requests(db: Path) -> list[str]:
    if not db.exists():
        return []
    other = sqlite3.connect(db)
    try:
        rows = other.execute("SELECT data FROM messages").fetchall()
    finally:
        other.close()
    return [m["content"] for (d,) in rows if (m := json.loads(d))["role"] == "user"]


async def test_requests_one_after_another_share_one_timer(isolated: Path) -> None:
    """With a history file, a request waits (a second at most) for its reply to share its
    write. Tasks one after another arm one timer between them, not one each (a timer armed
    and cancelled per request stayed in the loop's heap until its time); each turn is still
    one write, with its ending."""
    rt = make_runtime(isolated, FunctionModel(lambda m, o: "text"), [writer([])])
    await rt.initialize()
    add_batch = rt.history.add_batch
    batches: list[int] = []

    def watched(tasks: Any, messages: Any) -> None:
        batches.append(len(messages))
        add_batch(tasks, messages)

    rt.history.add_batch = watched  # type: ignore[method-assign]
    timers: list[float] = []
    restore = _chatlog_timers(rt, timers)
    try:
        for i in range(6):
            msg = await rt.process_input(f"write an article about turn {i}")
            assert msg.state == "COMPLETED"
    finally:
        restore()
    assert len(timers) == 1
    assert batches == [2] * 6  # each turn's request and reply in its ending's write
    await rt.close()


async def test_a_request_still_waits_for_its_reply_up_to_its_own_second(isolated: Path) -> None:
    """The one timer, armed by an earlier request, rings before a later request's second is up:
    that request is not written then (alone, without its reply) but when its own second is,
    and by then at the latest."""
    gate = asyncio.Event()
    slow_now = False

    async def answer(messages: list[Any], options: Any) -> str:
        if slow_now:
            await gate.wait()
        return "text"

    rt = make_runtime(isolated, FunctionModel(answer), [writer([])])
    await rt.initialize()
    db = isolated / ".skillrt" / "history" / "history.db"
    assert (await rt.process_input("write an article about first")).state == "COMPLETED"
    await asyncio.sleep(0.6)  # the first request's timer rings 0.4 s after the next request
    slow_now = True
    started = time.monotonic()
    job = asyncio.create_task(rt.process_input("write an article about second"))
    await asyncio.sleep(0.75)  # past the first timer, before the second's own second
    if time.monotonic() - started < 0.95:  # (a machine too loaded to tell: not asserted)
        assert _requests(db) == ["write an article about first"]
    for _ in range(100):  # up to 5 s
        if len(_requests(db)) == 2:
            break
        await asyncio.sleep(0.05)
    assert _requests(db) == ["write an article about first", "write an article about second"]
    assert time.monotonic() - started >= 0.95
    assert not job.done()
    gate.set()
    assert (await job).state == "COMPLETED"
    await rt.close()


def test_past_the_limit_the_history_trims_every_32_writes_and_shows_only_the_newest(
    tmp_path: Path,
) -> None:
    """A trim dirtied as many pages of the log as the write itself: past the limit the rows
    below it are deleted every 32 writes, not at each, and the reads show only the newest
    ``limit`` by seq meanwhile (what a trim at every write leaves), after reopening and to
    another connection of the file too."""
    history = History(tmp_path / "state", limit=5)
    deletes: list[str] = []
    history._db.set_trace_callback(lambda sql: deletes.append(sql) if "DELETE" in sql else None)
    for n in range(100):
        history.add_batch([{"task_id": f"t{n % 7}", "session_id": "s", "n": n}], [("s", {"n": n})])
        assert [m["n"] for m in history.messages("s")] == list(range(n, max(-1, n - 5), -1))
        tasks = [t["n"] for t in history.tasks("s")]
        assert tasks == [t["n"] for t in history.tasks()]
        assert tasks[0] == n and len(tasks) <= 5
    # Past the limit from the 6th write on: a trim at the first, then one in 32 writes each
    # (two statements each, one a table), not one at every write.
    assert 2 <= len(deletes) <= 2 * 4
    newest_tasks = history.tasks(limit=50)
    history.close()
    db = sqlite3.connect(tmp_path / "state" / "history.db")
    (kept,) = db.execute("SELECT COUNT(*) FROM messages").fetchone()
    db.close()
    assert 5 <= kept < 5 + 32
    reopened, other = History(tmp_path / "state", limit=5), History(tmp_path / "state", limit=5)
    assert reopened.tasks(limit=50) == newest_tasks == other.tasks(limit=50)
    assert [m["n"] for m in other.messages("s", limit=50)] == [99, 98, 97, 96, 95]
    other.add_message("s", {"n": 100})  # the first write of a new life trims what is left
    db = sqlite3.connect(tmp_path / "state" / "history.db")
    assert db.execute("SELECT COUNT(*) FROM messages").fetchone() == (5,)
    db.close()
    assert [m["n"] for m in reopened.messages("s", limit=50)] == [100, 99, 98, 97, 96]
    reopened.close()
    other.close()


@pytest.mark.parametrize("made", [lambda: History(None), lambda: MemoryHistory()])
def test_an_entry_is_kept_as_written_and_read_back_fresh(made: Callable[[], Any]) -> None:
    """The history in memory keeps a plain entry without its JSON text: what it keeps is not the
    caller's dict, and each read is a fresh object, as from the text (a change to either is
    never seen by the next read); an entry that is not plain is still kept as its text."""
    history = made()
    entry = {"task_id": "t1", "session_id": "s", "n": 1, "at": 0.5, "ok": True, "none": None}
    message = {"role": "user", "content": "hi", "nested": {"a": [1, 2]}}
    history.add_batch([entry], [("s", message)])
    entry["n"] = 2
    message["nested"]["a"].append(3)
    first = history.tasks()[0]
    first["n"] = 3
    said = history.messages("s")[0]
    said["nested"]["a"].append(4)
    assert history.tasks() == [{**entry, "n": 1}]
    assert history.messages("s") == [{"role": "user", "content": "hi", "nested": {"a": [1, 2]}}]
    history.close()
