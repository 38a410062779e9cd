"""FileLockManager with real OS locks: tasks, expiry (freezegun), and two real processes."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from freezegun import freeze_time

from skillrt.blog.files import FileStore
from skillrt.blog.locks import FileLockManager
from skillrt.exceptions import LockConflict


@pytest.fixture
def lock_dir(tmp_path: Path) -> Path:
    return tmp_path / "state" / "locks"


@pytest.fixture
def locks(lock_dir: Path) -> Iterator[FileLockManager]:
    manager = FileLockManager(lock_dir)
    yield manager
    manager.close()


def test_acquire_release_and_queries(locks: FileLockManager) -> None:
    locks.acquire("posts/a.md", "t1")
    locks.acquire("posts/a.md", "t1")  # re-entrant
    locks.acquire("posts/b.md", "t1")
    locks.acquire("posts/c.md", "t2")
    assert locks.holder("posts/a.md") == "t1"
    assert locks.holder("posts/none.md") is None
    assert locks.held_by("t1") == ["posts/a.md", "posts/b.md"]

    with pytest.raises(LockConflict) as caught:
        locks.acquire("posts/a.md", "t2")
    assert caught.value.holder == "t1" and caught.value.path == "posts/a.md"
    assert "posts/a.md is locked by task t1" in str(caught.value)

    assert locks.release("posts/a.md", "t2") is False  # not the holder
    assert locks.release("posts/a.md", "t1") is True
    assert locks.release("posts/a.md", "t1") is False
    locks.acquire("posts/a.md", "t2")
    assert locks.release_task_locks("t1") == 1
    assert locks.release_task_locks("t2") == 2
    assert locks.release_task_locks("t2") == 0
    assert locks.held_by("t2") == []


def test_each_lock_is_an_os_lock(lock_dir: Path, locks: FileLockManager) -> None:
    other = FileLockManager(lock_dir)  # a second manager behaves like another process
    locks.acquire("posts/a.md", "t1")
    with pytest.raises(LockConflict, match=r"t1 \(process \d+\)"):
        other.acquire("posts/a.md", "t2")
    locks.release_task_locks("t1")
    other.acquire("posts/a.md", "t2")
    with pytest.raises(LockConflict, match="t2"):
        locks.acquire("posts/a.md", "t1")
    other.close()
    locks.acquire("posts/a.md", "t1")


def test_locks_expire(lock_dir: Path) -> None:
    with freeze_time("2025-03-01 12:00:00") as frozen:
        locks = FileLockManager(lock_dir, expiry_s=300)
        other = FileLockManager(lock_dir)
        locks.acquire("posts/a.md", "t1")
        frozen.tick(299)
        with pytest.raises(LockConflict):
            locks.acquire("posts/a.md", "t2")
        locks.acquire("posts/a.md", "t1")  # refreshes the age
        frozen.tick(299)
        assert locks.holder("posts/a.md") == "t1"
        frozen.tick(2)
        assert locks.holder("posts/a.md") is None
        assert locks.held_by("t1") == []
        locks.acquire("posts/a.md", "t2")  # free again
        assert locks.holder("posts/a.md") == "t2"
        with pytest.raises(LockConflict, match="t2"):  # and the OS lock moved with it
            other.acquire("posts/a.md", "t3")
        assert locks.release_task_locks("t1") == 0
        assert locks.release_task_locks("t2") == 1
        locks.close()
        other.close()


def test_wait_is_opt_in(locks: FileLockManager) -> None:
    locks.acquire("posts/a.md", "t1")
    started = time.monotonic()
    with pytest.raises(LockConflict):
        locks.acquire("posts/a.md", "t2")
    assert time.monotonic() - started < 0.05  # fail fast

    started = time.monotonic()
    with pytest.raises(LockConflict):
        locks.acquire("posts/a.md", "t2", wait=0.3)
    assert 0.25 <= time.monotonic() - started < 2

    timer = threading.Timer(0.2, locks.release_task_locks, args=("t1",))
    timer.start()
    locks.acquire("posts/a.md", "t2", wait=5)
    assert locks.holder("posts/a.md") == "t2"
    timer.join()


# --- two real processes --------------------------------------------------------------------

COUNTER = """
import sys
from pathlib import Path
from skillrt.exceptions import LockConflict
from skillrt.blog.files import FileStore
from skillrt.blog.locks import FileLockManager
root, lock_dir, task, rounds = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
locks = FileLockManager(lock_dir)
files = FileStore(root, locks=locks).for_task(task)
print("ready", flush=True)
sys.stdin.readline()
conflicts = 0
for _ in range(rounds):
    try:
        locks.acquire("count.txt", task)
    except LockConflict:
        conflicts += 1
        locks.acquire("count.txt", task, wait=20)
    text, digest = files.read("count.txt")
    files.write("count.txt", str(int(text) + 1), expected_hash=digest)
    locks.release_task_locks(task)
print(conflicts, flush=True)
"""


def test_two_processes_lose_no_update(tmp_path: Path) -> None:
    root, lock_dir = tmp_path / "blog", tmp_path / "locks"
    FileStore(root).write("count.txt", "0")
    rounds = 100
    children = [
        subprocess.Popen(
            [sys.executable, "-c", COUNTER, str(root), str(lock_dir), f"task-{n}", str(rounds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    conflicts = 0
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        for child in children:  # start both at once
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        for child in children:
            out, _ = child.communicate(timeout=60)
            assert child.returncode == 0
            conflicts += int(out.strip())
    finally:
        for child in children:
            child.kill()
            child.wait()
    assert (root / "count.txt").read_text() == str(2 * rounds)
    assert conflicts > 0  # they really did contend for the lock


HOLDER = """
import sys
from pathlib import Path
from skillrt.blog.files import FileStore
from skillrt.blog.locks import FileLockManager
locks = FileLockManager(Path(sys.argv[2]))
files = FileStore(Path(sys.argv[1]), locks=locks).for_task("child-task")
files.write("posts/a.md", "from the child")  # takes the lock and keeps it
print("locked", flush=True)
if sys.stdin.readline().strip() == "release":
    import time
    time.sleep(0.3)
    locks.release_task_locks("child-task")
    print("released", flush=True)
    sys.stdin.readline()
"""


def start_holder(root: Path, lock_dir: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root), str(lock_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "locked"
    return child


def test_the_loser_fails_fast_naming_the_holder_or_waits(tmp_path: Path) -> None:
    root, lock_dir = tmp_path / "blog", tmp_path / "locks"
    locks = FileLockManager(lock_dir)
    mine = FileStore(root, locks=locks).for_task("parent-task")
    with start_holder(root, lock_dir) as child:
        assert child.stdin is not None and child.stdout is not None
        started = time.monotonic()
        with pytest.raises(LockConflict) as caught:
            mine.write("posts/a.md", "from the parent")
        assert time.monotonic() - started < 0.5
        assert f"child-task (process {child.pid})" in str(caught.value)
        assert (root / "posts" / "a.md").read_text() == "from the child"

        child.stdin.write("release\n")
        child.stdin.flush()
        mine.write("posts/a.md", "from the parent", wait=10)  # waits for the release
        assert child.stdout.readline().strip() == "released"
        assert (root / "posts" / "a.md").read_text() == "from the parent"
        child.stdin.close()
        child.wait(timeout=10)
    locks.close()


def test_a_killed_holder_frees_its_locks(tmp_path: Path) -> None:
    root, lock_dir = tmp_path / "blog", tmp_path / "locks"
    locks = FileLockManager(lock_dir)
    with start_holder(root, lock_dir) as child:
        with pytest.raises(LockConflict):
            locks.acquire("posts/a.md", "parent-task")
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    locks.acquire("posts/a.md", "parent-task")  # the kernel dropped the dead process's lock
    assert locks.holder("posts/a.md") == "parent-task"
    locks.close()
