"""The task's life cycle does only what a task uses: its model, files and logger are made when
a skill first asks for them, and a stretch of watched states is one entry of the watchdog's
sweep. The watchdog's deadlines and what a skill sees are as before."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from skillrt import SkillContext, SkillResult, skill
from skillrt._tasks import machine as machine_module
from skillrt._tasks.machine import State, TaskMachine
from skillrt.blog.files import FileStore
from skillrt.llm.taskllm import TaskLLM
from skillrt.testing import ScriptedModel

from .helpers import TopicParams, make_runtime


def _count(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """How many times ``owner.name`` is called (the real one still runs)."""
    calls = [0]
    real = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


async def test_a_skill_that_never_asks_gets_no_model_files_or_logger_made(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = _count(monkeypatch, TaskLLM, "__init__")
    stores = _count(monkeypatch, FileStore, "for_task")

    @skill(name="Quiet", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def quiet(ctx: SkillContext, params: TopicParams) -> SkillResult:
        await ctx.step("one", lambda: {"topic": params.topic})
        return SkillResult(message="done")

    rt = make_runtime(isolated, ScriptedModel([]), [quiet], log_level="warning")
    await rt.initialize()
    try:
        for i in range(3):
            reply = await rt.run_skill("Quiet", {"topic": f"t{i}"})
            assert reply.state == "COMPLETED"
    finally:
        await rt.close()
    assert models[0] == 0
    assert stores[0] == 0


async def test_a_skill_that_asks_gets_its_model_files_and_logger_as_before(
    isolated: Path,
) -> None:
    log = isolated / "agent.log"

    @skill(name="Busy", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def busy(ctx: SkillContext, params: TopicParams) -> SkillResult:
        first = ctx.llm
        answer = await ctx.llm.chat([{"role": "user", "content": params.topic}])
        assert ctx.llm is first  # made once, then kept
        ctx.files.write("posts/busy.md", answer.content)
        ctx.logger.info("agent.file.saved", note="by hand")
        return SkillResult(message=answer.content, tokens=answer.usage.total_tokens)

    model = ScriptedModel(["hello there"])
    rt = make_runtime(isolated, model, [busy], log_level="info", log_file=str(log))
    await rt.initialize()
    try:
        reply = await rt.run_skill("Busy", {"topic": "t"})
    finally:
        await rt.close()
    assert reply.state == "COMPLETED" and reply.content == "hello there"
    assert reply.tokens > 0  # counted through the task's model
    assert (isolated / "posts" / "busy.md").read_text() == "hello there"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    saved = [line for line in lines if line["event"] == "agent.file.saved"]
    assert len(saved) == 2  # the write, and the skill's own line
    assert all(line["task_id"] == reply.task_id and line["skill"] == "Busy" for line in saved)
    called = [line for line in lines if line["event"] == "agent.llm.called"]
    assert all(line["task_id"] == reply.task_id for line in called)


async def test_a_stretch_of_watched_states_is_one_entry_of_the_sweep(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    watches = _count(monkeypatch, machine_module._Sweep, "watch")
    machine = TaskMachine(
        "lean", watchdog_s=5, on_change=lambda a, b: None, on_timeout=lambda s, t: None
    )
    machine.to(State.UNDERSTANDING)
    machine.to(State.PLANNING)
    machine.to(State.EXECUTING)
    assert watches[0] == 1
    machine.to(State.COMPLETED)


async def test_a_shorter_watchdog_in_executing_still_fires_on_time() -> None:
    fired: list[tuple[State, str]] = []
    machine = TaskMachine(
        "short",
        watchdog_s=5,
        on_change=lambda a, b: None,
        on_timeout=lambda s, t: fired.append((s, machine.fired)),
    )
    machine.to(State.UNDERSTANDING)
    machine.to(State.PLANNING)
    machine.watchdog_s = 0.05  # a skill's own, shorter than the runtime's
    machine.to(State.EXECUTING)
    await asyncio.sleep(0.3)
    assert fired == [(State.EXECUTING, "stall")]


async def test_planning_gets_its_whole_deadline_after_a_long_understanding() -> None:
    fired: list[tuple[State, str]] = []
    machine = TaskMachine(
        "long",
        watchdog_s=0.2,
        on_change=lambda a, b: None,
        on_timeout=lambda s, t: fired.append((s, machine.fired)),
    )
    machine.to(State.UNDERSTANDING)
    await asyncio.sleep(0.15)
    machine.to(State.PLANNING)  # the sweep still has UNDERSTANDING's deadline, 0.05 s away
    await asyncio.sleep(0.1)  # past it, but not past PLANNING's own
    assert fired == []
    await asyncio.sleep(0.3)
    assert fired == [(State.PLANNING, "deadline")]
