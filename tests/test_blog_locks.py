"""Locks follow the blog: two runtimes with different state folders over one blog share the
OS locks of its posts, so read-modify-write with ``expected_hash`` loses no update."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from skillrt.blog.files import FileStore
from skillrt.blog.locks import blog_lock_dir
from skillrt.testing import ScriptedModel

from .helpers import make_runtime

# One runtime per process, each with its own state folder. Each round reads the counter, adds
# one and writes it back with the hash it read; a FileChanged (the other process wrote in
# between) means read again. Nothing takes the lock before the read: expected_hash alone, as
# a skill's edit does, must be enough.
WORKER = """
import asyncio, sys
from pathlib import Path
from skillrt import AgentRuntime, load_config
from skillrt.exceptions import FileChanged
from skillrt.testing import ScriptedModel

root, state, name, rounds = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])

async def main() -> None:
    config = load_config(content_root=root, state_dir=state)
    runtime = AgentRuntime(config, llm=ScriptedModel([]), skills=[])
    await runtime.initialize()
    assert runtime.files is not None and runtime.locks is not None
    print("ready", flush=True)
    sys.stdin.readline()
    done = retries = 0
    while done < rounds:
        task = f"{name}-{done}-{retries}"
        files = runtime.files.for_task(task)
        text, digest = files.read("posts/count.md")
        try:
            files.write("posts/count.md", str(int(text) + 1), expected_hash=digest, wait=30)
        except FileChanged:
            retries += 1
        else:
            done += 1
        finally:
            runtime.locks.release_task_locks(task)
    await runtime.close()
    print(done, retries, flush=True)

asyncio.run(main())
"""


def test_two_state_folders_over_one_blog_lose_no_update(tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    FileStore(blog).write("posts/count.md", "0")
    per_process = 250  # 500 read-modify-write rounds in all
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WORKER,
                str(blog),
                str(tmp_path / f"state-{n}"),
                f"p{n}",
                str(per_process),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    done = retries = 0
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        for child in children:  # both start at once
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        for child in children:
            out, _ = child.communicate(timeout=240)
            assert child.returncode == 0
            wrote, retried = map(int, out.split())
            done += wrote
            retries += retried
    finally:
        for child in children:
            child.kill()
            child.wait()
    assert done == 2 * per_process
    assert (blog / "posts/count.md").read_text() == str(done)  # 0 lost updates of 500
    assert retries > 0  # they really did interleave
    # The locks were in the blog, not in either state folder.
    assert any(blog_lock_dir(blog).glob("*.lock"))
    assert not list((tmp_path / "state-0").rglob("*.lock"))


async def test_the_runtime_locks_posts_under_the_blog(tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    runtime = make_runtime(blog, ScriptedModel([]), state_dir=tmp_path / "elsewhere")
    await runtime.initialize()
    try:
        assert runtime.files is not None and runtime.locks is not None
        assert runtime.locks.lock_dir == blog_lock_dir(blog) == blog.resolve() / ".skillrt/locks"
        runtime.files.for_task("t1").write("posts/a.md", "hello")
        assert runtime.locks.held_by("t1") == ["posts/a.md"]
        assert (blog / ".skillrt/locks/.gitignore").read_text().endswith("*\n")
    finally:
        await runtime.close()
