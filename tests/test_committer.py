"""The group commit: a step is on disk when it returns, many tasks share commits, and a store
that fails is reported, not hidden. Every test runs on both task stores (``store_kind``)."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from skillrt import SkillContext, SkillResult, skill
from skillrt._state.committer import Committer
from skillrt._state.embedded.checkpoints import CheckpointStore, TaskStore
from skillrt._state.records import RecordText, TaskRecord
from skillrt.testing import FunctionModel, ScriptedModel

from .helpers import TopicParams, history_said, make_runtime, model_steps
from .stores import StoreKind
from .test_runtime import writer


class CountingStore:
    """The task store it wraps, counting the commits (``apply`` calls) and what they held."""

    def __init__(self, inner: TaskStore) -> None:
        self.inner = inner
        self.commits = 0
        self.records = 0

    def apply(self, saves: Sequence[TaskRecord | RecordText], deletes: list[str]) -> None:
        self.commits += 1
        self.records += len(saves) + len(deletes)
        self.inner.apply(saves, deletes)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def test_a_step_is_on_disk_when_it_returns(isolated: Path, store_kind: StoreKind) -> None:
    seen: list[dict[str, Any]] = []

    @skill(name="Checker", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def checker(ctx: SkillContext, params: TopicParams) -> SkillResult:
        await ctx.step("first", lambda: {"n": 1})
        # Another connection to the database (as another process would read it) sees it now.
        with store_kind.open(isolated / ".skillrt") as other:
            record = other.get(ctx.task_id)
        seen.append(dict(record.steps) if record else {})
        return SkillResult(message="ok")

    rt = make_runtime(isolated, ScriptedModel([]), [checker])
    msg = await rt.process_input("write an article about disks")
    assert msg.state == "COMPLETED"
    assert seen == [{"first": {"n": 1}}]
    await rt.close()


async def test_concurrent_tasks_share_commits(isolated: Path, store_kind: StoreKind) -> None:
    # Each of the 3 steps is a model call, and the 40 tasks' calls of one step return together.
    # With a step that returns at once and calls that sleep 10 ms, the tasks reached their
    # first step one by one as each was routed (CPU), and on a machine busy elsewhere that
    # took longer than the sleep: their steps spread over as many commit rounds as the commits
    # took to follow (44-46 under load), and the count measured the load, not the sharing.
    waiting: list[asyncio.Future[None]] = []

    async def answer(messages: list[Any], options: Any) -> str:
        gate = asyncio.get_running_loop().create_future()
        waiting.append(gate)
        if len(waiting) == 40:
            for each in waiting:
                each.set_result(None)
            waiting.clear()
        await asyncio.wait([gate], timeout=10)  # a bound, never reached when all 40 call
        return "text"

    with store_kind.open(isolated / ".skillrt") as inner:
        store = CountingStore(inner)
        rt = make_runtime(isolated, FunctionModel(answer), [model_steps])
        rt._store = store  # an injected store (the runtime does not own it)
        msgs = await asyncio.gather(
            *(rt.process_input(f"write an article about topic {i}") for i in range(40))
        )
        assert {m.state for m in msgs} == {"COMPLETED"}
        # Alone, each task needs at least 4 durable writes (3 steps, then its end): 160
        # commits. Together they share them (and a task's writes within one round coalesce).
        assert store.records >= 40
        assert store.commits <= 40
        assert store.all_ids() == []  # every finished task's record is gone
        await rt.close()


class FailingStore(CountingStore):
    """The task store it wraps, failing every commit while ``fail`` is set (a full disk)."""

    fail = False

    def apply(self, saves: Sequence[TaskRecord | RecordText], deletes: list[str]) -> None:
        if self.fail:
            raise OSError(28, "No space left on device")
        super().apply(saves, deletes)


async def test_a_failing_store_fails_the_step_with_a_clear_reply(
    isolated: Path, store_kind: StoreKind
) -> None:
    with store_kind.open(isolated / ".skillrt") as inner:
        store = FailingStore(inner)
        rt = make_runtime(isolated, ScriptedModel(["o", "c", "o", "c"]), [writer([])])
        rt._store = store  # an injected store (the runtime does not own it)
        store.fail = True
        msg = await rt.process_input("write an article about full disks")
        assert msg.state == "ERROR"
        assert "No space left on device" in msg.content
        store.fail = False
        again = await rt.process_input("write an article about space")
        assert again.state == "COMPLETED"  # the runtime is still usable
        await rt.close()


class SlowFailingStore(CheckpointStore):
    """Its first commit waits until released, then fails (a disk filling up mid-commit)."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.applying = threading.Event()
        self.release = threading.Event()
        self.calls = 0

    def apply(self, saves: list[TaskRecord], deletes: list[str]) -> None:
        self.calls += 1
        if self.calls == 1:
            self.applying.set()
            self.release.wait(10)
            raise OSError(28, "No space left on device")
        super().apply(saves, deletes)


async def test_asking_while_a_failing_commit_is_in_flight_hears_the_failure(
    isolated: Path,
) -> None:
    """A record queued before ``durable()`` may already be in the round being written: if that
    round fails, ``durable()`` raises, even though a later round (with nothing queued) is fine."""
    store = SlowFailingStore(isolated / "checkpoints")
    committer = Committer(store)
    record = TaskRecord(id="a" * 16, session_id="s", state="EXECUTING", created_at=1.0,
                        updated_at=1.0)  # fmt: skip
    committer.put(record)
    first = asyncio.ensure_future(committer.durable())
    await asyncio.to_thread(store.applying.wait, 10)  # the round holding the record is writing
    second = asyncio.ensure_future(committer.durable())  # asked now: the record is in that round
    await asyncio.sleep(0.05)
    store.release.set()
    for waiting in (first, second):
        with pytest.raises(OSError, match="No space left"):
            await waiting
    assert store.get(record.id) is None  # and indeed it is not on disk
    store.close()


async def test_history_and_checkpoints_are_written_off_the_event_loop(isolated: Path) -> None:
    """Every checkpoint round runs in the commit thread, one thread for all of them (no pool
    hand-off per round), and every history write there too or, on a slow disk, in one other
    thread (the side thread, beside the round's commit); the reply's turn is in the history
    before ``process_input`` returns; closing stops both threads."""
    loop_thread = threading.get_ident()
    threads: dict[str, set[int]] = {"apply": set(), "history": set()}
    rt = make_runtime(isolated, ScriptedModel(["o", "c"] * 3), [writer([])])
    await rt.initialize()
    store, history = rt.store, rt.history
    apply, add_batch = store.apply, history.add_batch

    def watched_apply(*args: Any) -> None:
        threads["apply"].add(threading.get_ident())
        apply(*args)

    def watched_batch(*args: Any) -> None:
        threads["history"].add(threading.get_ident())
        add_batch(*args)

    store.apply = watched_apply  # type: ignore[method-assign]
    history.add_batch = watched_batch  # type: ignore[method-assign]
    for i in range(3):
        msg = await rt.process_input(f"write an article about threads {i}")
        assert msg.state == "COMPLETED"
        # Another connection reads the reply's turn at once.
        assert history_said(isolated)[-1] == msg.content
    assert threads["apply"] and threads["history"]
    assert loop_thread not in threads["apply"] | threads["history"]
    assert len(threads["apply"]) == 1  # one commit thread, every round
    assert len(threads["history"] - threads["apply"]) <= 1  # and at most one side thread
    await rt.close()
    assert not (threads["apply"] | threads["history"]) & {t.ident for t in threading.enumerate()}


async def test_a_failing_history_write_never_fails_the_round(isolated: Path) -> None:
    rt = make_runtime(isolated, ScriptedModel(["o", "c", "o", "c"]), [writer([])])
    await rt.initialize()

    def full_disk(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    rt.history.add_batch = full_disk  # type: ignore[method-assign]
    msg = await rt.process_input("write an article about a full history")
    assert msg.state == "COMPLETED"  # the history is a record; the task's journal was fine
    assert rt.store.all_ids() == []
    await rt.close()


class GatedStore(CountingStore):
    """Its first commit waits until released (a slow disk); counts the commits."""

    def __init__(self, inner: TaskStore) -> None:
        super().__init__(inner)
        self.applying = threading.Event()
        self.release = threading.Event()

    def apply(self, saves: Sequence[TaskRecord | RecordText], deletes: list[str]) -> None:
        if self.commits == 0:
            self.applying.set()
            self.release.wait(10)
        super().apply(saves, deletes)


def _record(task_id: str) -> TaskRecord:
    return TaskRecord(id=task_id, session_id="s", state="EXECUTING", created_at=1.0,
                      updated_at=1.0)  # fmt: skip


async def test_rounds_queued_during_a_commit_share_the_next_one(isolated: Path) -> None:
    """Rounds handed over while the thread writes (one per turn of the loop) are written
    together, in one transaction, and each of their waiters hears of it."""
    inner = CheckpointStore(isolated / "checkpoints")
    store = GatedStore(inner)
    committer = Committer(store)
    committer.put(_record("first"))
    first = asyncio.ensure_future(committer.durable())
    await asyncio.to_thread(store.applying.wait, 10)
    later = []
    for i in range(5):  # five rounds, each from its own turn of the loop
        committer.put(_record(f"later-{i}"))
        later.append(asyncio.ensure_future(committer.durable()))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
    store.release.set()
    await asyncio.wait_for(asyncio.gather(first, *later), 10)
    assert store.commits == 2  # the first, then the five rounds together
    assert sorted(inner.all_ids()) == ["first", *(f"later-{i}" for i in range(5))]
    committer.close()
    inner.close()


class HeldStore(CountingStore):
    """Each commit waits for its gate, if one is queued (a slow disk), and notes whether the
    gate opened before its time ran out."""

    def __init__(self, inner: TaskStore) -> None:
        super().__init__(inner)
        self.gates: list[tuple[threading.Event, float]] = []
        self.opened: list[bool] = []
        self.applying = threading.Event()
        self.threads: list[int] = []

    def apply(self, saves: Sequence[TaskRecord | RecordText], deletes: list[str]) -> None:
        self.threads.append(threading.get_ident())
        if self.gates:
            gate, wait_s = self.gates.pop(0)
            self.applying.set()
            self.opened.append(gate.wait(wait_s))
        super().apply(saves, deletes)


async def test_on_a_slow_disk_a_rounds_side_writes_run_while_its_checkpoints_commit(
    isolated: Path,
) -> None:
    """Once the store's commits are slow, a round's side writes (the history) run in a thread
    of their own while the commit thread writes the round's checkpoints, not after them (a
    task's ending waited for the history's write after its commit's fsync). The round is
    settled once both are done."""
    inner = CheckpointStore(isolated / "checkpoints")
    store = HeldStore(inner)
    committer = Committer(store)
    store.gates.append((threading.Event(), 0.05))  # a commit of 50 ms: a slow disk
    committer.put(_record("first"))
    await asyncio.wait_for(committer.durable(), 10)
    gate = threading.Event()
    store.gates.append((gate, 10.0))
    store.applying.clear()
    side_threads: list[int] = []

    def side() -> None:
        # Only a side write that runs while the commit is under way can open its gate in time.
        store.applying.wait(10)
        side_threads.append(threading.get_ident())
        gate.set()

    jobs = [side]
    committer.add_side(lambda: jobs.pop() if jobs else None)
    committer.put(_record("ending"))
    committer.nudge()
    started = time.monotonic()
    await asyncio.wait_for(committer.durable(), 20)
    assert time.monotonic() - started < 5  # not the gate's 10 s: opened by the side write
    assert store.opened == [False, True] and side_threads
    assert side_threads[0] != store.threads[-1] != threading.get_ident()
    assert sorted(inner.all_ids()) == ["ending", "first"]
    committer.close()
    inner.close()


async def test_on_a_quick_disk_a_rounds_side_writes_follow_its_commit(isolated: Path) -> None:
    """With quick commits the side writes run in the commit thread after the checkpoints: two
    threads taking the GIL from each other cost the round more than the overlap saves."""
    inner = CheckpointStore(isolated / "checkpoints")
    store = HeldStore(inner)
    committer = Committer(store)
    order: list[tuple[str, int]] = []
    apply = store.apply

    def watched(saves: Sequence[TaskRecord | RecordText], deletes: list[str]) -> None:
        apply(saves, deletes)
        order.append(("commit", threading.get_ident()))

    store.apply = watched  # type: ignore[method-assign]
    jobs = [lambda: order.append(("side", threading.get_ident()))]
    committer.add_side(lambda: jobs.pop() if jobs else None)
    committer.put(_record("ending"))
    committer.nudge()
    await asyncio.wait_for(committer.durable(), 10)
    assert [what for what, _ in order] == ["commit", "side"]
    assert order[0][1] == order[1][1] != threading.get_ident()
    committer.close()
    inner.close()


def test_a_committer_outlives_the_event_loop_it_was_used_in(isolated: Path) -> None:
    """A host that runs its work in one event loop, then in another (two ``asyncio.run``),
    keeps a working group commit; what the first loop left queued is written at close."""
    store = CheckpointStore(isolated / "checkpoints")
    committer = Committer(store)

    async def first() -> None:
        committer.put(_record("one"))
        await committer.durable()
        committer.put(_record("left"))  # queued as the loop ends: no one waits for it

    async def second() -> None:
        committer.put(_record("two"))
        await asyncio.wait_for(committer.durable(), 10)

    asyncio.run(first())
    asyncio.run(second())
    assert {"one", "two"} <= set(store.all_ids())
    committer.close()
    assert sorted(store.all_ids()) == ["left", "one", "two"]
    store.close()


async def test_a_reply_is_written_with_its_task_ending(isolated: Path) -> None:
    """A turn's history is one write, in the same round as the task's ending: the request,
    the task's entry and the reply (no round of its own before the caller hears it)."""
    rt = make_runtime(isolated, ScriptedModel(["o", "c"] * 2), [writer([])])
    await rt.initialize()
    history = rt.history
    add_batch = history.add_batch
    batches: list[tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]] = []

    def watched_batch(tasks: Any, messages: Any) -> None:
        batches.append((list(tasks), list(messages)))
        add_batch(tasks, messages)

    history.add_batch = watched_batch  # type: ignore[method-assign]
    msg = await rt.process_input("write an article about rounds")
    assert msg.state == "COMPLETED"
    assert len(batches) == 1
    tasks, messages = batches[0]
    assert [t["task_id"] for t in tasks] == [msg.task_id]
    assert [m["role"] for _, m in messages] == ["user", "assistant"]
    assert messages[1][1]["content"] == msg.content
    await rt.close()


async def test_a_long_tasks_request_is_in_the_history_while_it_runs(isolated: Path) -> None:
    """A request waits for its reply's write only a moment: while its task still runs (a
    long model call), it is in the history within a second or so."""
    gate = asyncio.Event()

    async def slow(messages: list[Any], options: Any) -> str:
        await gate.wait()
        return "text"

    rt = make_runtime(isolated, FunctionModel(slow), [writer([])])
    await rt.initialize()
    job = asyncio.create_task(rt.process_input("write an article about waiting"))
    db = isolated / ".skillrt" / "history" / "history.db"
    said: list[str] = []
    for _ in range(100):  # up to 5 s
        await asyncio.sleep(0.05)
        if db.exists():
            said = history_said(isolated)
            if said:
                break
    assert said == ["write an article about waiting"]
    assert not job.done()
    gate.set()
    assert (await job).state == "COMPLETED"
    await rt.close()


async def test_without_checkpoints_the_history_in_memory_is_written_without_the_thread(
    isolated: Path,
) -> None:
    """``checkpoints = false`` keeps task records and the history in memory (no file: no
    I/O): the history's writes are made on the loop, before the reply, and no task hands a
    round to the commit thread (a thread's round trip and two turns of the loop a task, for a
    write to memory). With a history file the writes stay in the commit thread
    (``test_history_and_checkpoints_are_written_off_the_event_loop``)."""
    loop_thread = threading.get_ident()
    rt = make_runtime(isolated, ScriptedModel(["o", "c"] * 2), [writer([])], checkpoints=False)
    await rt.initialize()
    history = rt.history
    assert history.in_memory
    add_batch = history.add_batch
    threads: set[int] = set()

    def watched_batch(*args: Any) -> None:
        threads.add(threading.get_ident())
        add_batch(*args)

    history.add_batch = watched_batch  # type: ignore[method-assign]
    committer = rt._run.state.committer
    for i in range(2):
        msg = await rt.process_input(f"write an article about memory {i}")
        assert msg.state == "COMPLETED"
        assert history.tasks()[0]["task_id"] == msg.task_id  # before the reply
        assert history.messages(rt.session_id)[0]["content"] == msg.content
    assert threads == {loop_thread}
    assert not committer._thread.alive and committer.rounds == 0
    await rt.close()


async def test_a_waiter_on_an_idle_committer_starts_the_write_before_the_loop_turns(
    isolated: Path,
) -> None:
    """Tasks one at a time: a task that waits for its write while the commit thread is idle
    hands the round over at once (the thread writes it while this turn of the loop still
    runs); one that asks while a round is in flight waits for the end of the turn, and the
    rounds of that turn go together."""
    inner = CheckpointStore(isolated / "checkpoints")
    store = GatedStore(inner)
    committer = Committer(store)
    committer.put(_record("first"))
    first = committer.waiter()
    assert first is not None
    # No await since: the loop has not turned, yet the thread is already writing.
    assert store.applying.wait(10)
    committer.put(_record("second"))
    second = committer.waiter()
    committer.put(_record("third"))
    third = committer.waiter()
    assert second is not None and third is not None
    await asyncio.sleep(0)  # the end of the turn: one round for both
    store.release.set()
    await asyncio.wait_for(asyncio.gather(first, second, third), 10)
    assert store.commits == 2
    assert sorted(inner.all_ids()) == ["first", "second", "third"]
    assert committer.waiter() is None  # nothing queued or in flight: nothing to wait for
    committer.close()
    inner.close()


async def test_a_task_waiting_for_its_round_resumes_with_the_threads_notice(
    isolated: Path,
) -> None:
    """The commit thread's notice (a callback of the loop) resumes the tasks that waited for
    its rounds then and there, not a turn of the loop later; a failed round's error reaches
    them the same way, and awaiting the waiter through ``wait_for`` or ``gather`` still works."""
    inner = CheckpointStore(isolated / "checkpoints")
    store = GatedStore(inner)
    store.release.set()
    committer = Committer(store)
    order: list[str] = []
    settle = committer._settle

    def watched(*args: Any) -> None:
        settle(*args)
        order.append("notice handled")

    committer._settle = watched  # type: ignore[method-assign]

    async def step(name: str) -> None:
        committer.put(_record(name))
        waiter = committer.waiter()
        assert waiter is not None
        await waiter
        order.append(f"{name} resumed")

    await asyncio.wait_for(asyncio.ensure_future(step("a")), 10)
    await asyncio.wait_for(asyncio.ensure_future(step("b")), 10)
    assert order == ["a resumed", "notice handled", "b resumed", "notice handled"]
    committer.put(_record("c"))
    waiter = committer.waiter()
    assert waiter is not None
    await asyncio.wait_for(asyncio.gather(waiter), 10)

    def failing(saves: Sequence[Any], deletes: list[str]) -> None:
        raise OSError(28, "No space left on device")

    store.apply = failing  # type: ignore[method-assign]
    order.clear()
    with pytest.raises(OSError, match="No space left"):
        await asyncio.wait_for(asyncio.ensure_future(step("d")), 10)
    assert order == ["notice handled"]
    assert sorted(inner.all_ids()) == ["a", "b", "c"]
    committer.close()
    inner.close()


async def test_the_commit_thread_rings_the_loop_through_a_pipe_of_its_own(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each round's notice reaches the loop through the committer's own pipe, not asyncio's
    ``call_soon_threadsafe`` (a handle and two reads of the self-pipe per commit, the second
    raising); closing the committer closes that pipe and the loop stops reading it. A loop
    that cannot read a pipe (``add_reader``: NotImplementedError) is told asyncio's way."""
    loop = asyncio.get_running_loop()
    threadsafe: list[object] = []
    call_soon_threadsafe = loop.call_soon_threadsafe

    def counted(*args: Any, **kwargs: Any) -> Any:
        threadsafe.append(args[0])
        return call_soon_threadsafe(*args, **kwargs)

    monkeypatch.setattr(loop, "call_soon_threadsafe", counted)
    readers = len(loop._selector.get_map())  # type: ignore[attr-defined]
    fds = set(os.listdir("/proc/self/fd"))
    store = CheckpointStore(isolated / "checkpoints")
    committer = Committer(store)
    for i in range(5):
        committer.put(_record(f"r{i}"))
        await asyncio.wait_for(committer.durable(), 10)
    assert threadsafe == []
    assert len(loop._selector.get_map()) == readers + 1  # type: ignore[attr-defined]
    committer.close()
    assert len(loop._selector.get_map()) == readers  # type: ignore[attr-defined]
    store.close()
    assert set(os.listdir("/proc/self/fd")) <= fds

    def no_readers(*args: Any) -> None:
        raise NotImplementedError

    monkeypatch.setattr(loop, "add_reader", no_readers)
    store = CheckpointStore(isolated / "checkpoints")
    committer = Committer(store)
    committer.put(_record("told asyncio's way"))
    await asyncio.wait_for(committer.durable(), 10)
    assert len(threadsafe) == 1
    assert sorted(store.all_ids()) == ["r0", "r1", "r2", "r3", "r4", "told asyncio's way"]
    committer.close()
    store.close()


async def test_a_step_whose_waiter_is_cancelled_is_still_written(isolated: Path) -> None:
    """Cancelling a task that waits for its step's round cancels only its wait: the round
    handed over at once is written all the same, and the committer serves the next task."""
    inner = CheckpointStore(isolated / "checkpoints")
    store = GatedStore(inner)
    committer = Committer(store)

    async def step() -> None:
        committer.put(_record("cancelled"))
        waiter = committer.waiter()
        assert waiter is not None
        await waiter

    task = asyncio.ensure_future(step())
    await asyncio.to_thread(store.applying.wait, 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    store.release.set()
    committer.put(_record("next"))
    await asyncio.wait_for(committer.durable(), 10)
    assert sorted(inner.all_ids()) == ["cancelled", "next"]
    committer.close()
    inner.close()


async def test_a_write_no_one_waits_for_still_reaches_the_disk(isolated: Path) -> None:
    """A state change is queued without waiting: the hand-over due at the end of the turn
    writes it although nobody asks; and when a task of the same turn waits for its own write,
    both go in that task's round, with no round of their own."""
    inner = CheckpointStore(isolated / "checkpoints")
    store = CountingStore(inner)
    committer = Committer(store)
    committer.put(_record("unwaited"))
    for _ in range(200):
        if "unwaited" in inner.all_ids():
            break
        await asyncio.sleep(0.01)
    assert inner.all_ids() == ["unwaited"]
    assert store.commits == 1
    committer.put(_record("state-change"))  # queued, its hand-over due at the turn's end
    committer.put(_record("step"))
    waiter = committer.waiter()  # in the same turn: hands both over now
    assert waiter is not None
    await asyncio.wait_for(waiter, 10)
    for _ in range(3):
        await asyncio.sleep(0)  # the cancelled hand-over would have run by now
    assert store.commits == 2
    assert sorted(inner.all_ids()) == ["state-change", "step", "unwaited"]
    committer.close()
    inner.close()


def test_a_committer_used_from_loops_in_two_threads_waits_on_each_ones_own(
    isolated: Path,
) -> None:
    """The committer remembers the loop of its last waiter (asking for the running loop costs
    a system call in CPython 3.11): a loop run by another thread, while the first one still
    runs, gets waiters of its own loop, not of the one remembered."""
    store = CheckpointStore(isolated / "checkpoints")
    committer = Committer(store)
    loops: list[asyncio.AbstractEventLoop] = []

    async def write(name: str) -> None:
        committer.put(_record(name))
        waiter = committer.waiter()
        assert waiter is not None
        assert waiter.get_loop() is asyncio.get_running_loop()
        loops.append(asyncio.get_running_loop())
        await asyncio.wait_for(waiter, 10)

    async def first() -> None:
        await write("main-1")
        # Another thread runs its own loop meanwhile (this one still runs, blocked here).
        other = threading.Thread(target=lambda: asyncio.run(write("other")))
        other.start()
        other.join(10)
        await write("main-2")

    asyncio.run(first())
    assert loops[0] is loops[2] and loops[1] is not loops[0]
    committer.close()
    assert sorted(store.all_ids()) == ["main-1", "main-2", "other"]
    store.close()


async def test_tasks_that_all_wait_at_once_after_a_round_of_many_writes_share_one_commit(
    isolated: Path,
) -> None:
    """Many tasks at once: their state changes go in one round no one waits for; when they
    all come back in one turn to wait for a step, the first does not take a commit of its
    own (the others would wait for two): the turn's writes go together."""
    inner = CheckpointStore(isolated / "checkpoints")
    store = CountingStore(inner)
    committer = Committer(store)
    for i in range(10):
        committer.put(_record(f"task-{i}"))  # EXECUTING, no one waits
    for _ in range(200):
        if store.commits:
            break
        await asyncio.sleep(0.01)
    assert store.commits == 1
    waiters = []
    for i in range(10):  # one turn: each task's step
        committer.put(_record(f"task-{i}"))
        waiter = committer.waiter()
        assert waiter is not None
        waiters.append(waiter)
    await asyncio.wait_for(asyncio.gather(*waiters), 10)
    assert store.commits == 2
    assert store.records == 20
    committer.close()
    inner.close()


async def test_a_step_on_the_store_in_memory_still_lets_the_loop_run_others(
    isolated: Path,
) -> None:
    """With the store in memory nothing waits for a disk, but a step still waits for the end
    of the turn: a task of many steps never holds the loop (and a cancel reaches it)."""
    from skillrt._state.embedded.checkpoints import MemoryCheckpointStore

    store = MemoryCheckpointStore()
    committer = Committer(store, threaded=False)
    ran: list[int] = []

    async def other() -> None:
        ran.append(1)

    other_task = asyncio.ensure_future(other())
    committer.put(_record("step"))
    waiter = committer.waiter()
    assert waiter is not None and not waiter.done()
    await waiter
    assert ran == [1]  # the other task ran while this one waited
    await other_task
    assert store.get("step") is not None
    committer.close()
