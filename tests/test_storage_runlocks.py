"""Run locks across real processes."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillrt._state.embedded.runlocks import RunLocks


def test_hold_release_and_probe(tmp_path: Path) -> None:
    tmp_path = tmp_path / "runs"
    locks = RunLocks(tmp_path)
    assert locks.running_elsewhere("t1") is False
    assert locks.hold("t1") is True
    assert locks.hold("t1") is True  # re-entrant for its holder
    other = RunLocks(tmp_path)  # a second holder (as another runtime would be)
    assert other.hold("t1") is False
    assert other.running_elsewhere("t1") is True
    assert other.held_elsewhere(["t1", "t2"]) == {"t1"}  # the same question for many tasks
    locks.release("t1")
    assert other.running_elsewhere("t1") is False
    assert other.hold("t1") is True
    other.close()
    locks.close()
    # Released locks leave no file per task behind (at most the one shared lock file).
    assert {p.name for p in tmp_path.iterdir()} <= {f"running-{k:x}.lock" for k in range(16)}


def test_a_deleted_state_folder_keeps_the_locks_held(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    locks = RunLocks(folder)
    assert locks.hold("t1") is True
    for child in folder.iterdir():  # the state folder is emptied under a live runtime
        child.unlink()
    folder.rmdir()
    assert locks.hold("t2") is True  # made again, with t1 locked again in the new file
    other = RunLocks(folder)
    assert other.running_elsewhere("t1") is True and other.running_elsewhere("t2") is True
    locks.close()
    assert other.running_elsewhere("t1") is False
    other.close()


def test_a_deleted_state_folder_keeps_every_lock_file_held(tmp_path: Path) -> None:
    """The locks are spread over several files: a hold after the folder was emptied locks
    again the tasks of every file, not only those of the file the new task falls in."""
    folder = tmp_path / "runs"
    locks = RunLocks(folder)
    held = [f"task-{i}" for i in range(40)]
    assert all(locks.hold(t) for t in held)
    assert len(list(folder.iterdir())) > 1  # (spread: the kernel walks one file's locks)
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
    assert locks.hold("one-more") is True
    other = RunLocks(folder)
    assert other.held_elsewhere([*held, "one-more", "free"]) == {*held, "one-more"}
    locks.close()
    assert other.held_elsewhere([*held, "one-more"]) == set()
    other.close()


@contextlib.contextmanager
def _holder(folder: Path, task_ids: list[str]) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``task_ids``' run locks in ``folder`` until it is killed."""
    code = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from skillrt._state.embedded.runlocks import RunLocks
        locks = RunLocks(Path({str(folder)!r}))
        assert all(locks.hold(t) for t in {task_ids!r})
        print("held", flush=True)
        time.sleep(60)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        yield child
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()


def test_a_live_process_holds_and_a_killed_one_frees(tmp_path: Path) -> None:
    with _holder(tmp_path, ["task-x"]) as child:
        here = RunLocks(tmp_path)
        assert here.running_elsewhere("task-x") is True
        assert here.hold("task-x") is False
        child.kill()
        child.wait(timeout=10)
        assert here.running_elsewhere("task-x") is False  # the kernel dropped the lock
        assert here.hold("task-x") is True
        here.close()


def test_many_tasks_probed_at_once_across_processes(tmp_path: Path) -> None:
    """``held_elsewhere`` over many tasks (the listing's question) names exactly those another
    process holds, not those this holder holds itself nor the free ones."""
    theirs = [f"theirs-{i}" for i in range(0, 300, 7)]
    with _holder(tmp_path, theirs) as child:
        here = RunLocks(tmp_path)
        mine = [f"mine-{i}" for i in range(200)]
        assert all(here.hold(t) for t in mine)
        free = [f"free-{i}" for i in range(300)]
        asked = [*free, *theirs, *mine]
        assert here.held_elsewhere(asked) == set(theirs)
        assert here.held_elsewhere(free) == set()
        child.kill()
        child.wait(timeout=10)
        assert here.held_elsewhere(asked) == set()
        here.close()


async def test_a_task_holds_its_run_lock_until_its_ending_is_on_disk(tmp_path: Path) -> None:
    """While a task's ending is not on disk (another process writes to the checkpoint database
    just then), its record still says it runs: its run lock must still be held, or another
    process would find it held by no one and resume a task that is ending. Released once the
    ending is on disk."""
    import asyncio
    import sqlite3
    import threading
    import time

    from pydantic import BaseModel

    from skillrt import AgentRuntime, SkillContext, SkillResult, load_config, skill
    from skillrt.testing import FunctionModel

    class Params(BaseModel):
        topic: str = "x"

    other = RunLocks(tmp_path / "state" / "locks" / "running")  # as another process sees it
    probes: list[bool] = []
    records: list[int] = []
    busy = threading.Event()

    def write_meanwhile(db: Path, task_id: str) -> None:
        con = sqlite3.connect(db, timeout=0, isolation_level=None)
        con.execute("BEGIN IMMEDIATE")  # the ending's commit waits for this write to end
        busy.set()
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:  # the task ends meanwhile: its ending is queued
            probes.append(other.running_elsewhere(task_id))
            time.sleep(0.01)
        records.append(con.execute("SELECT count(*) FROM Cache").fetchone()[0])
        con.execute("ROLLBACK")
        con.close()

    @skill(name="One", params=Params, intents=["WRITE_ARTICLE"], description="one step")
    async def one(ctx: SkillContext, params: Params) -> SkillResult:
        async def value() -> str:
            return "v"

        await ctx.step("a", value)
        db = rt.store.db_path  # type: ignore[attr-defined]
        threading.Thread(target=write_meanwhile, args=(db, ctx.task_id), daemon=True).start()
        await asyncio.to_thread(busy.wait, 10)
        return SkillResult(message="done")

    config = load_config(content_root=tmp_path, state_dir=tmp_path / "state")
    rt = AgentRuntime(config, llm=FunctionModel(lambda m, o: "ok"), skills=[one])
    await rt.initialize()
    try:
        reply = await rt.run_skill("One", {})
        assert reply.state == "COMPLETED"
        assert records == [1]  # the task's record was still there, saying it runs
        assert len(probes) > 10 and all(probes), probes  # held all along
        assert other.running_elsewhere(reply.task_id or "") is False  # let go once on disk
    finally:
        await rt.close()
        other.close()


def test_a_lock_file_deleted_between_open_and_lock_is_not_a_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without OFD locks (macOS, Windows: a file per task, deleted when let go): a holder that
    opens a task's file just before its holder lets go of it (and deletes it) locks a file no
    one else will open. It must take the file now at the path instead, or a third holder would
    lock that one too: two processes running one task."""
    from skillrt._state.embedded import runlocks

    monkeypatch.setattr(runlocks, "_OFD", False)  # the portable path, on this system's flock
    folder = tmp_path / "runs"
    first = RunLocks(folder)
    assert first.hold("t1") is True

    class LetGoMeanwhile(RunLocks):
        """Opens the task's file, then the first holder lets go before this one locks it."""

        def _open(self, path: str) -> int:
            fd = super()._open(path)
            first.release("t1")  # its file deleted, its lock dropped
            return fd

    second = LetGoMeanwhile(folder)
    assert second.hold("t1") is True
    third = RunLocks(folder)
    assert third.hold("t1") is False  # the second holds the file at the path
    assert third.running_elsewhere("t1") is True
    second.release("t1")
    assert third.hold("t1") is True
    for locks in (first, second, third):
        locks.close()
