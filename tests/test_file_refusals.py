"""No blocking I/O on the event loop: a FIFO and a 50 MB post are refused at once, before they
are read, while another task keeps running; reads and writes of the blog run in threads; the
checkpoint holds a reference to a post, never its text."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import threading
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from skillrt import PathNotAllowed, SkillContext, SkillResult, UserError, skill
from skillrt.blog.files import FileStore
from skillrt.skills.writing import writing_skills
from skillrt.testing import FunctionModel

from .helpers import make_runtime

BIG = 50 * 1024 * 1024


class TickParams(BaseModel):
    count: int = 300


def ticker(ticks: list[float]) -> object:
    @skill(name="Ticker", params=TickParams)
    async def run(ctx: SkillContext, params: TickParams) -> SkillResult:
        for _ in range(params.count):
            ticks.append(time.monotonic())
            await asyncio.sleep(0.01)
        return SkillResult(message="ticked")

    return run


@contextlib.contextmanager
def fifo_unblocker(fifo: Path, after_s: float):
    """Feed the FIFO after ``after_s`` if someone opened it for reading (the old code did, and
    blocked the loop): the test then fails instead of hanging for ever."""
    done = threading.Event()

    def feed() -> None:
        if done.wait(after_s):
            return
        while not done.is_set():
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader: nothing is blocked on it
                done.wait(0.05)
                continue
            os.write(fd, b"fed\n")
            os.close(fd)
            return

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


@pytest.fixture
def blog(isolated: Path) -> Path:
    posts = isolated / "posts"
    posts.mkdir()
    (posts / "ok.md").write_text("---\ntitle: OK\n---\n\nFine.\n", encoding="utf-8")
    os.mkfifo(posts / "fifo.md")
    with (posts / "big.md").open("wb") as fh:
        fh.truncate(BIG)  # sparse: 50 MB to read, nothing on disk
    return isolated


async def test_a_fifo_and_a_50_mb_post_are_refused_while_another_task_runs(blog: Path) -> None:
    ticks: list[float] = []
    rt = make_runtime(
        blog, FunctionModel(lambda m, o: "edited"), [*writing_skills(), ticker(ticks)]
    )
    await rt.initialize()
    other = asyncio.create_task(rt.run_skill("Ticker", {"count": 300}))
    while len(ticks) < 5:
        await asyncio.sleep(0.01)
    replies = []
    with fifo_unblocker(blog / "posts" / "fifo.md", after_s=5.0):
        for name, params in [
            ("Summarize", {"path": "posts/fifo.md"}),
            ("EditContent", {"instruction": "shorter", "path": "posts/fifo.md"}),
            ("CodeExplain", {"path": "posts/fifo.md"}),
            ("Summarize", {"path": "posts/big.md"}),
            ("EditContent", {"instruction": "shorter", "path": "posts/big.md"}),
        ]:
            started = time.monotonic()
            reply = await asyncio.wait_for(rt.run_skill(name, params), timeout=30)
            replies.append((name, params["path"], reply, time.monotonic() - started))
    during = len(ticks)
    assert not other.done()  # the other task was still running through all of it
    assert (await other).content == "ticked"
    assert len(ticks) > during  # and went on after
    for name, path, reply, took in replies:
        assert took < 1.0, (name, path, took)  # refused within a second, not after reading
        assert reply.state == "ERROR" or reply.data.get("error"), (name, reply)
        if path.endswith("fifo.md"):
            assert "FIFO" in reply.content, reply.content
        else:
            assert "MB" in reply.content and "max_post_bytes" in reply.content, reply.content
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert max(gaps) < 1.0  # the loop was never held (a blocked read would hold it 5 s)
    await rt.close()
    checkpoints = sum(p.stat().st_size for p in (blog / ".skillrt").rglob("*") if p.is_file())
    assert checkpoints < 5 * 1024 * 1024  # nothing of the 50 MB post was journalled


def test_file_store_refuses_what_is_not_a_small_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    (tmp_path / "small.md").write_text("hi\n", encoding="utf-8")
    (tmp_path / "big.md").write_bytes(b"x" * 5000)
    store = FileStore(tmp_path, max_read_bytes=4096)
    with pytest.raises(PathNotAllowed, match="FIFO"):
        store.read("pipe.md")
    assert store.hash_of("pipe.md") is None  # never opened: it would block
    with pytest.raises(UserError, match="max_post_bytes"):
        store.read("big.md")
    assert store.hash_of("big.md") is not None  # hashing streams, whatever the size
    assert store.read("small.md")[0] == "hi\n"
    assert store.for_task("t").max_read_bytes == 4096


async def test_an_edit_journals_its_post_by_reference(isolated: Path) -> None:
    posts = isolated / "posts"
    posts.mkdir()
    body = "".join(f"Paragraph {i} says something.\n\n" for i in range(2000))
    (posts / "long.md").write_text("---\ntitle: Long\n---\n\n" + body, encoding="utf-8")
    seen: dict[str, object] = {}

    @skill(name="Peek", params=TickParams)
    async def peek(ctx: SkillContext, params: TickParams) -> SkillResult:
        text, _digest = await ctx.read("read", "posts/long.md")
        seen.update(ctx._host.journal_get("read")[1], length=len(text))  # type: ignore[attr-defined]
        return SkillResult(message="ok")

    rt = make_runtime(isolated, FunctionModel(lambda m, o: "x"), [peek])
    assert (await rt.run_skill("Peek", {})).content == "ok"
    await rt.close()
    assert set(seen) == {"path", "sha256", "length"}
    assert seen["path"] == "posts/long.md" and seen["length"] == len(
        (posts / "long.md").read_text(encoding="utf-8")
    )


def test_the_index_reports_a_post_over_the_limit_without_reading_it(tmp_path: Path) -> None:
    from skillrt.blog.memory import BlogMemory

    posts = tmp_path / "posts"
    posts.mkdir()
    (posts / "ok.md").write_text("---\ntitle: OK\n---\n\nFine words.\n", encoding="utf-8")
    with (posts / "big.md").open("wb") as fh:
        fh.truncate(BIG)
    os.mkfifo(posts / "pipe.md")
    memory = BlogMemory(tmp_path, tmp_path / ".skillrt", "posts", max_post_bytes=1024 * 1024)
    try:
        report = memory.refresh()
        assert report.added == ["posts/ok.md"]
        assert [path for path, _ in report.errors] == ["posts/big.md"]
        assert "not indexed" in report.errors[0][1]
    finally:
        memory.close()
