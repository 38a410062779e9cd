"""``gc_tuning``: while tasks run, the young generation is collected less often; the process's
own thresholds come back when the last task ends, and a host's own change is never undone."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillrt import Skill, SkillContext, SkillResult, skill
from skillrt._io import gcpolicy
from skillrt.testing import ScriptedModel

from .helpers import TopicParams, make_runtime


@pytest.fixture(autouse=True)
def thresholds() -> Iterator[tuple[int, int, int]]:
    """The test's thresholds are CPython's defaults, and the process's come back after it."""
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*before)


def watcher(
    seen: list[tuple[int, int, int]], gate: asyncio.Event | None = None
) -> Skill[TopicParams]:
    @skill(name="Watcher", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def watch(ctx: SkillContext, params: TopicParams) -> SkillResult:
        seen.append(gc.get_threshold())
        if gate is not None:
            await gate.wait()
            seen.append(gc.get_threshold())
        await ctx.step("one", lambda: 1)
        return SkillResult(message="ok")

    return watch


async def test_raised_while_a_task_runs_and_put_back_after(isolated: Path) -> None:
    seen: list[tuple[int, int, int]] = []
    rt = make_runtime(isolated, ScriptedModel([]), [watcher(seen)])
    msg = await rt.process_input("write an article about frogs")
    assert msg.state == "COMPLETED"
    assert seen == [(gcpolicy.MIN_GEN0, 10, 10)]  # the older generations as they were
    assert gc.get_threshold() == (700, 10, 10)
    await rt.close()


async def test_grows_with_the_tasks_running_and_comes_back_once_all_end(isolated: Path) -> None:
    seen: list[tuple[int, int, int]] = []
    gate = asyncio.Event()
    rt = make_runtime(isolated, ScriptedModel([]), [watcher(seen, gate)])
    await rt.initialize()
    n = 600  # 600 x 50 = 30,000 > MIN_GEN0
    runs = [asyncio.create_task(rt.process_input(f"write an article about t{i}")) for i in range(n)]
    while len(seen) < n:
        await asyncio.sleep(0.01)
    assert gc.get_threshold()[0] == gcpolicy.PER_TASK * n
    gate.set()
    messages = await asyncio.gather(*runs)
    assert all(m.state == "COMPLETED" for m in messages)
    assert gc.get_threshold() == (700, 10, 10)
    await rt.close()


async def test_off_leaves_the_process_alone(isolated: Path) -> None:
    seen: list[tuple[int, int, int]] = []
    rt = make_runtime(isolated, ScriptedModel([]), [watcher(seen)], gc_tuning=False)
    assert (await rt.process_input("write an article about frogs")).state == "COMPLETED"
    assert seen == [(700, 10, 10)]
    await rt.close()


async def test_a_host_that_collects_less_often_already_is_left_alone(isolated: Path) -> None:
    gc.set_threshold(50_000, 20, 20)
    seen: list[tuple[int, int, int]] = []
    rt = make_runtime(isolated, ScriptedModel([]), [watcher(seen)])
    assert (await rt.process_input("write an article about frogs")).state == "COMPLETED"
    assert seen == [(50_000, 20, 20)]
    assert gc.get_threshold() == (50_000, 20, 20)
    await rt.close()


async def test_a_change_the_host_makes_meanwhile_stands(isolated: Path) -> None:
    seen: list[tuple[int, int, int]] = []
    gate = asyncio.Event()
    rt = make_runtime(isolated, ScriptedModel([]), [watcher(seen, gate)])
    run = asyncio.create_task(rt.process_input("write an article about frogs"))
    while not seen:
        await asyncio.sleep(0.01)
    gc.set_threshold(1234, 5, 5)  # the host tunes its collector mid-task
    gate.set()
    assert (await run).state == "COMPLETED"
    assert gc.get_threshold() == (1234, 5, 5)
    await rt.close()


async def test_a_failed_task_puts_them_back_too(isolated: Path) -> None:
    seen: list[tuple[int, int, int]] = []

    @skill(name="Boom", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def boom(ctx: SkillContext, params: TopicParams) -> SkillResult:
        seen.append(gc.get_threshold())
        raise RuntimeError("broken skill")

    rt = make_runtime(isolated, ScriptedModel([]), [boom])
    msg = await rt.process_input("write an article about frogs")
    assert msg.state == "ERROR"
    assert seen == [(gcpolicy.MIN_GEN0, 10, 10)]
    assert gc.get_threshold() == (700, 10, 10)
    await rt.close()


async def test_a_task_cancelled_before_it_ran_puts_them_back(isolated: Path) -> None:
    """The policy hears of a task's end from the task's own done-callback: one whose run is
    cancelled before it began (a runtime closing) ends it all the same."""
    seen: list[tuple[int, int, int]] = []
    rt = make_runtime(isolated, ScriptedModel([]), [watcher(seen)])
    await rt.initialize()
    driver = rt._run
    task = driver.direct_task("Watcher", {"topic": "frogs"}, {}, "s1")
    turn = driver.start(task, route=False)
    assert gc.get_threshold() == (gcpolicy.MIN_GEN0, 10, 10)
    assert task.runner is not None
    task.runner.cancel()
    message = await turn
    assert message.data["outcome"] == "closed" and seen == []  # it never ran
    assert gc.get_threshold() == (700, 10, 10)
    await rt.close()


async def test_a_failing_end_hook_still_sends_the_reply(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``on_end`` runs before the reply is sent (the runner's last act, or else its
    done-callback): if it raised, the caller would wait for ever. It is reported to the loop's
    exception handler instead."""
    rt = make_runtime(isolated, ScriptedModel([]), [watcher([])])
    await rt.initialize()
    reported: list[dict[str, object]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: reported.append(ctx))

    def broken() -> None:
        raise RuntimeError("the hook broke")

    monkeypatch.setattr("skillrt._tasks.run.task_ended", broken)
    driver = rt._run
    task = driver.direct_task("Watcher", {"topic": "frogs"}, {}, "s1")
    message = await asyncio.wait_for(driver.start(task, route=False), 10)
    assert message.state == "COMPLETED"
    assert [str(ctx["exception"]) for ctx in reported] == ["the hook broke"]
    await rt.close()


async def test_the_reply_comes_after_the_end_hook_and_only_once(isolated: Path) -> None:
    """The runner sends its reply itself (a turn of the loop before its done-callback): the
    thresholds are back when the caller hears it, and a turn the caller opens at once is not
    handed the same reply again by the done-callback."""
    rt = make_runtime(isolated, ScriptedModel([]), [watcher([])])
    await rt.initialize()
    driver = rt._run
    task = driver.direct_task("Watcher", {"topic": "frogs"}, {}, "s1")
    message = await driver.start(task, route=False)  # (awaited itself: no hop of wait_for's)
    assert message.state == "COMPLETED"
    assert gc.get_threshold() == (700, 10, 10)
    again = task.replies.open()  # before the runner's done-callback has run
    for _ in range(3):
        await asyncio.sleep(0)
    assert task.runner is not None and task.runner.done()
    assert not again.done()
    await rt.close()
