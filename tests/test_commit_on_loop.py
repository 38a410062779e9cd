"""``commit_on_loop``: a task running alone has its commits made on the event loop (no hand-over
to the commit thread and back), when the disk is quick. Every promise holds as in the thread:
a step is on disk when ``ctx.step`` returns and the reply's turn before the reply. Two tasks at
once, a slow disk, ``keep_loop_free()`` and ``skillrt serve`` keep every commit in the thread;
the library's default is the thread, the CLI's the loop.

(The checkpoint and resume tests run on this path too: ``store_kind``'s ``sqlite-on-loop``.)"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from skillrt import AgentRuntime, SkillContext, SkillResult, load_config, skill
from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.records import RecordText, TaskRecord
from skillrt.testing import FunctionModel, ScriptedModel

from .helpers import NoParams, TopicParams, history_said, make_runtime, model_steps
from .test_runtime import writer


class WatchedStore(CheckpointStore):
    """The real SQLite store, saying on which thread each commit ran (and, when asked, slow
    or failing like a slow or full disk)."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.threads: list[int] = []
        self.running: list[int] = []  # how many tasks ran at each commit
        self.count_running: Any = None
        self.delay_s = 0.0
        self.fail = False

    def apply(self, saves: Sequence[TaskRecord | RecordText], deletes: list[str]) -> None:
        self.threads.append(threading.get_ident())
        if self.count_running is not None:
            self.running.append(self.count_running())
        if self.fail:
            raise OSError(28, "No space left on device")
        if self.delay_s:
            time.sleep(self.delay_s)
        super().apply(saves, deletes)


def _runtime(root: Path, skills: list[Any], llm: Any = None, **overrides: Any) -> AgentRuntime:
    return make_runtime(root, llm or ScriptedModel(["o", "c"] * 20), skills, **overrides)


def _watch(rt: AgentRuntime, root: Path) -> WatchedStore:
    store = WatchedStore(root / ".skillrt" / "checkpoints")
    rt._store = store  # an injected store (the runtime does not own it)
    return store


async def _quick_enough(rt: AgentRuntime) -> None:
    """Every commit counts as quick: whether one is made on the loop no longer depends on
    how this machine's disk is doing (a moment of slow commits sends them to the thread;
    ``test_a_slow_disk_keeps_the_commits_in_the_thread`` checks that with the real limit)."""
    await rt.initialize()
    rt._run.state.committer.inline_limit_s = 60.0


async def test_a_lone_task_commits_on_the_loop_and_keeps_every_promise(isolated: Path) -> None:
    seen: list[dict[str, Any]] = []

    @skill(name="Checker", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def checker(ctx: SkillContext, params: TopicParams) -> SkillResult:
        for name in ("first", "second", "third"):
            await ctx.step(name, lambda name=name: {"step": name})
            # Another connection (as another process would read it) sees the step now.
            other = CheckpointStore(isolated / ".skillrt" / "checkpoints")
            record = other.get(ctx.task_id)
            other.close()
            seen.append(dict(record.steps) if record else {})
        return SkillResult(message=f"done {params.topic}")

    rt = _runtime(isolated, [checker], commit_on_loop=True)
    store = _watch(rt, isolated)
    await _quick_enough(rt)
    loop_thread = threading.get_ident()
    for i in range(3):
        msg = await rt.process_input(f"write an article about loops {i}")
        assert msg.state == "COMPLETED"
        # The reply's turn is in the history file before the reply.
        assert history_said(isolated)[-1] == msg.content
    assert [sorted(s) for s in seen] == [
        ["first"],
        ["first", "second"],
        ["first", "second", "third"],
    ] * 3
    # The first rounds went to the thread (they measured the disk); then they stayed here.
    pattern = "".join("L" if t == loop_thread else "T" for t in store.threads)
    # A round no one waits for (a task's first state change) goes to the thread, and the
    # round after it follows it there (rounds are written in order): two of a task's four.
    assert len(pattern) >= 12 and pattern.count("L") >= 6, pattern
    assert store.all_ids() == []  # every finished task's record is gone
    await rt.close()


async def test_the_library_default_and_false_commit_in_the_thread(isolated: Path) -> None:
    loop_thread = threading.get_ident()
    for setting in ({}, {"commit_on_loop": False}):
        rt = _runtime(isolated, [writer([])], **setting)
        store = _watch(rt, isolated)
        for i in range(2):
            assert (
                await rt.process_input(f"write an article about threads {i}")
            ).state == "COMPLETED"
        assert store.threads and loop_thread not in store.threads, setting
        await rt.close()
        store.close()


async def test_tasks_at_once_commit_in_the_thread(isolated: Path) -> None:
    """Only a task alone commits on the loop: with others running, its commit would hold
    theirs up (and they share the thread's rounds instead)."""

    async def answer(messages: list[Any], options: Any) -> str:
        await asyncio.sleep(0.01)
        return "text"

    rt = _runtime(isolated, [model_steps], FunctionModel(answer), commit_on_loop=True)
    store = _watch(rt, isolated)
    await _quick_enough(rt)
    store.count_running = lambda: rt._run.running
    loop_thread = threading.get_ident()
    msgs = await asyncio.gather(
        *(rt.process_input(f"write an article about {i}") for i in range(8))
    )
    assert {m.state for m in msgs} == {"COMPLETED"}
    together = [t for t, n in zip(store.threads, store.running, strict=True) if n > 1]
    assert together and loop_thread not in together
    # Alone again: back on the loop.
    before = len(store.threads)
    assert (await rt.process_input("write an article about one")).state == "COMPLETED"
    assert store.threads[before:].count(loop_thread) >= 3
    await rt.close()


async def test_a_slow_disk_keeps_the_commits_in_the_thread(isolated: Path) -> None:
    rt = _runtime(isolated, [writer([])], commit_on_loop=True)
    store = _watch(rt, isolated)
    store.delay_s = 0.005  # each commit 5 ms: the loop would be held that long
    loop_thread = threading.get_ident()
    for i in range(3):
        assert (
            await rt.process_input(f"write an article about slow disks {i}")
        ).state == "COMPLETED"
    assert len(store.threads) >= 6 and loop_thread not in store.threads
    await rt.close()


async def test_keep_loop_free_sends_every_commit_to_the_thread(isolated: Path) -> None:
    rt = _runtime(isolated, [writer([])], commit_on_loop=True)
    store = _watch(rt, isolated)
    await _quick_enough(rt)
    loop_thread = threading.get_ident()
    assert (await rt.process_input("write an article about before")).state == "COMPLETED"
    assert loop_thread in store.threads  # on the loop until now
    rt.keep_loop_free()
    before = len(store.threads)
    for i in range(2):
        assert (await rt.process_input(f"write an article about after {i}")).state == "COMPLETED"
    assert len(store.threads) > before and loop_thread not in store.threads[before:]
    await rt.close()


async def test_a_task_of_many_steps_lets_the_loop_run_between_its_commits(isolated: Path) -> None:
    @skill(name="Many", params=NoParams, intents=["MANY"], description="many steps")
    async def many(ctx: SkillContext, params: NoParams) -> SkillResult:
        for n in range(40):
            await ctx.step(f"s{n}", lambda n=n: n)
        return SkillResult(message="many done")

    rt = _runtime(isolated, [many], commit_on_loop=True)
    store = _watch(rt, isolated)
    await _quick_enough(rt)
    ticks = 0
    done = False

    async def ticker() -> None:
        nonlocal ticks
        while not done:
            ticks += 1
            await asyncio.sleep(0)

    watching = asyncio.ensure_future(ticker())
    loop_thread = threading.get_ident()
    msg = await rt.run_skill("Many", {})
    done = True
    await watching
    assert msg.state == "COMPLETED"
    assert store.threads.count(loop_thread) >= 35  # its commits were made here
    assert ticks >= 35  # and the loop ran something else between each of them
    await rt.close()


async def test_a_commit_failing_on_the_loop_fails_the_task_with_a_clear_reply(
    isolated: Path,
) -> None:
    rt = _runtime(isolated, [writer([])], commit_on_loop=True)
    store = _watch(rt, isolated)
    await _quick_enough(rt)
    loop_thread = threading.get_ident()
    assert (await rt.process_input("write an article about a full disk")).state == "COMPLETED"
    assert loop_thread in store.threads  # commits are made on the loop by now
    store.fail = True
    msg = await rt.process_input("write an article about no space")
    assert msg.state == "ERROR"
    assert "No space left on device" in msg.content
    store.fail = False
    again = await rt.process_input("write an article about space again")
    assert again.state == "COMPLETED"  # the runtime is still usable
    await rt.close()


def test_the_cli_commits_on_the_loop_unless_told_not_to(isolated: Path) -> None:
    from skillrt.cli.common import make_runtime as cli_runtime

    assert load_config(content_root=isolated).commit_on_loop is None  # the library: unset
    on = cli_runtime(load_config(content_root=isolated))
    assert on.config.commit_on_loop is True
    off = cli_runtime(load_config(content_root=isolated, commit_on_loop=False))
    assert off.config.commit_on_loop is False


def test_skillrt_serve_keeps_its_loop_free(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    from .server_support import LiveServer, StepModel
    from .server_support import make_runtime as server_runtime

    rt = server_runtime(tmp_path, FunctionModel(StepModel()), commit_on_loop=True)
    store = WatchedStore(tmp_path / "state" / "checkpoints")
    rt._store = store
    server = LiveServer(rt)
    try:
        with server.client() as client:
            for _ in range(3):
                answer = client.post("/v1/skills/Steps/run", json={"params": {"topic": "x"}})
                assert answer.status_code == 200, answer.text
        assert store.threads and server.thread.ident not in store.threads
    finally:
        server.stop()
