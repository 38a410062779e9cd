"""A task resumed by another process meanwhile: a runtime that read it before (a REPL open
since, listing it) resumes it as the store holds it now, read under its run lock. Ended
elsewhere (completed, abandoned), it is no longer there to resume; taken further and paused
again, it goes on from there. Before, the copy read at start was resumed: the steps done
elsewhere ran again (a post written a second time over the first).

Each runtime opens the state folder as another process would: its own databases and its own
open file for the run locks (OFD locks exclude open files, not processes)."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from skillrt import AgentRuntime, SkillContext, SkillResult, load_config, skill
from skillrt.testing import FunctionModel


class _Params(BaseModel):
    topic: str = "x"


class _Steps:
    """A three-step skill that counts its step runs; a step in ``hold`` waits for ``gate``."""

    def __init__(self) -> None:
        self.ran: Counter[str] = Counter()
        self.hold: str | None = None
        self.gate = asyncio.Event()
        self.reached = asyncio.Event()
        self.task_id = ""

        @skill(name="Three", params=_Params, intents=["WRITE_ARTICLE"], description="three")
        async def three(ctx: SkillContext, params: _Params) -> SkillResult:
            self.task_id = ctx.task_id
            for name in ("one", "two", "three"):
                await ctx.step(name, lambda name=name: self._step(name))
            return SkillResult(message="done")

        self.skill = three

    async def _step(self, name: str) -> str:
        self.ran[name] += 1
        if name == self.hold:
            self.reached.set()
            await self.gate.wait()
        return name

    def runtime(self, root: Path) -> AgentRuntime:
        config = load_config(content_root=root, state_dir=root / "state")
        return AgentRuntime(config, llm=FunctionModel(lambda m, o: "ok"), skills=[self.skill])

    async def cut_off_at(self, rt: AgentRuntime, step: str, run: asyncio.Future[object]) -> None:
        """Shut ``rt`` down while its task waits in ``step``: the task stays resumable."""
        self.hold, self.gate, self.reached = step, asyncio.Event(), asyncio.Event()
        await asyncio.wait_for(self.reached.wait(), 30)
        await rt.close()
        await run
        self.hold = None


async def test_a_task_completed_elsewhere_is_not_resumed_again(tmp_path: Path) -> None:
    steps = _Steps()
    first = steps.runtime(tmp_path)
    await first.initialize()
    steps.hold, steps.reached = "two", asyncio.Event()
    run = asyncio.ensure_future(first.run_skill("Three", {}))
    await steps.cut_off_at(first, "two", run)
    task_id = steps.task_id
    repl = steps.runtime(tmp_path)  # open since: it lists the task, as read now
    await repl.initialize()
    assert [t.id for t in repl.get_resumable_tasks()] == [task_id]
    tool = steps.runtime(tmp_path)
    await tool.initialize()
    done = await tool.resume_task(task_id)
    assert done is not None and done.state == "COMPLETED"
    await tool.close()
    assert steps.ran == Counter(one=1, two=2, three=1)

    again = await repl.resume_task(task_id)
    assert again is None  # nothing left to resume: not run a second time
    assert steps.ran == Counter(one=1, two=2, three=1)
    assert repl.get_resumable_tasks() == []  # and no longer offered
    await repl.close()


async def test_a_task_taken_further_elsewhere_goes_on_from_there(tmp_path: Path) -> None:
    steps = _Steps()
    first = steps.runtime(tmp_path)
    await first.initialize()
    steps.hold, steps.reached = "two", asyncio.Event()
    run = asyncio.ensure_future(first.run_skill("Three", {}))
    await steps.cut_off_at(first, "two", run)  # "one" done
    task_id = steps.task_id
    repl = steps.runtime(tmp_path)  # read now: "one" done
    await repl.initialize()
    tool = steps.runtime(tmp_path)
    await tool.initialize()
    steps.hold, steps.reached = "three", asyncio.Event()
    resumed = asyncio.ensure_future(tool.resume_task(task_id))
    await steps.cut_off_at(tool, "three", resumed)  # "two" done there, cut off in "three"
    assert steps.ran == Counter(one=1, two=2, three=1)

    done = await repl.resume_task(task_id)
    assert done is not None and done.state == "COMPLETED"
    assert steps.ran == Counter(one=1, two=2, three=2)  # "two" not run again
    await repl.close()


async def test_a_task_resumed_elsewhere_right_now_is_refused(tmp_path: Path) -> None:
    steps = _Steps()
    first = steps.runtime(tmp_path)
    await first.initialize()
    steps.hold, steps.reached = "two", asyncio.Event()
    run = asyncio.ensure_future(first.run_skill("Three", {}))
    await steps.cut_off_at(first, "two", run)
    task_id = steps.task_id
    repl = steps.runtime(tmp_path)
    await repl.initialize()
    tool = steps.runtime(tmp_path)
    await tool.initialize()
    steps.hold, steps.gate, steps.reached = "two", asyncio.Event(), asyncio.Event()
    resumed = asyncio.ensure_future(tool.resume_task(task_id))
    await asyncio.wait_for(steps.reached.wait(), 30)  # running in the other one
    refused = await repl.resume_task(task_id)
    assert refused is not None and refused.data.get("error") == "running_elsewhere"
    steps.gate.set()
    done = await resumed
    assert done is not None and done.state == "COMPLETED"
    assert steps.ran == Counter(one=1, two=2, three=1)
    await tool.close()
    await repl.close()


async def test_an_abort_leaves_a_task_another_process_runs(tmp_path: Path) -> None:
    """Its copy here reads paused; the other process resumed it and runs it. No channel
    reaches that process (the shared store has one): the abort is refused, and the record
    that run writes stays. Before, it was deleted under the run and "cancelled" recorded."""
    steps = _Steps()
    first = steps.runtime(tmp_path)
    await first.initialize()
    steps.hold, steps.reached = "two", asyncio.Event()
    run = asyncio.ensure_future(first.run_skill("Three", {}))
    await steps.cut_off_at(first, "two", run)
    task_id = steps.task_id
    repl = steps.runtime(tmp_path)
    await repl.initialize()
    tool = steps.runtime(tmp_path)
    await tool.initialize()
    steps.hold, steps.gate, steps.reached = "two", asyncio.Event(), asyncio.Event()
    resumed = asyncio.ensure_future(tool.resume_task(task_id))
    await asyncio.wait_for(steps.reached.wait(), 30)
    assert repl.abort(task_id) is False
    assert tool.store.get(task_id) is not None  # its journal, as that run left it
    assert [e["state"] for e in repl.history.tasks(limit=5)] == []
    steps.gate.set()
    done = await resumed
    assert done is not None and done.state == "COMPLETED"
    await tool.close()
    await repl.close()


async def test_a_task_completed_elsewhere_is_not_abandoned_here(tmp_path: Path) -> None:
    """Giving up an old copy of a task another process completed since: nothing to give up
    (False), its history entry still says it completed (before, "abandoned" replaced it), and
    it is no longer listed."""
    steps = _Steps()
    first = steps.runtime(tmp_path)
    await first.initialize()
    steps.hold, steps.reached = "two", asyncio.Event()
    run = asyncio.ensure_future(first.run_skill("Three", {}))
    await steps.cut_off_at(first, "two", run)
    task_id = steps.task_id
    repl = steps.runtime(tmp_path)
    await repl.initialize()
    tool = steps.runtime(tmp_path)
    await tool.initialize()
    done = await tool.resume_task(task_id)
    assert done is not None and done.state == "COMPLETED"
    await tool.close()

    assert await repl.abandon_task(task_id) is False
    states = [e["state"] for e in repl.history.tasks(limit=5) if e.get("task_id") == task_id]
    assert states == ["COMPLETED"]  # as the other process recorded it (one entry a task)
    assert repl.get_resumable_tasks() == []
    await repl.close()


async def test_a_task_completed_elsewhere_is_not_cancelled_here(tmp_path: Path) -> None:
    """``abort_task`` (the REPL's ``/cancel``) of an old copy of a task another process
    completed since: refused, and its history entry still says it completed."""
    steps = _Steps()
    first = steps.runtime(tmp_path)
    await first.initialize()
    steps.hold, steps.reached = "two", asyncio.Event()
    run = asyncio.ensure_future(first.run_skill("Three", {}))
    await steps.cut_off_at(first, "two", run)
    task_id = steps.task_id
    repl = steps.runtime(tmp_path)
    await repl.initialize()
    tool = steps.runtime(tmp_path)
    await tool.initialize()
    done = await tool.resume_task(task_id)
    assert done is not None and done.state == "COMPLETED"
    await tool.close()

    assert await repl.abort_task(task_id) is False
    states = [e["state"] for e in repl.history.tasks(limit=5) if e.get("task_id") == task_id]
    assert states == ["COMPLETED"]
    assert repl.get_resumable_tasks() == []
    await repl.close()


async def test_a_paused_task_is_cancelled_with_its_record_gone(tmp_path: Path) -> None:
    """``abort_task`` of a paused task no one runs: cancelled, its record deleted before its
    run lock is let go, no longer offered."""
    steps = _Steps()
    first = steps.runtime(tmp_path)
    await first.initialize()
    steps.hold, steps.reached = "two", asyncio.Event()
    run = asyncio.ensure_future(first.run_skill("Three", {}))
    await steps.cut_off_at(first, "two", run)
    task_id = steps.task_id
    repl = steps.runtime(tmp_path)
    await repl.initialize()
    assert await repl.abort_task(task_id) is True
    assert repl.store.get(task_id) is None
    states = [e["state"] for e in repl.history.tasks(limit=5) if e.get("task_id") == task_id]
    assert states == ["CANCELLED"]
    assert repl.get_resumable_tasks() == []
    await repl.close()
