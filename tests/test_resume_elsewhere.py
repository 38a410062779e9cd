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
from typing import Any

from pydantic import BaseModel

from skillrt import AgentRuntime, ChatMessage, SkillContext, SkillResult, load_config, skill
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

    async def opened(self, root: Path) -> AgentRuntime:
        """A runtime over ``root``, initialised: it has read the resumable tasks now."""
        rt = self.runtime(root)
        await rt.initialize()
        return rt

    def hold_at(self, step: str) -> None:
        """The next run of ``step`` waits for a new ``gate`` (``reached`` says it is there)."""
        self.hold, self.gate, self.reached = step, asyncio.Event(), asyncio.Event()

    async def cut_off_at(self, rt: AgentRuntime, run: asyncio.Future[Any]) -> None:
        """Shut ``rt`` down while its task waits in the held step: it stays resumable."""
        await asyncio.wait_for(self.reached.wait(), 30)
        await rt.close()
        await run
        self.hold = None

    async def cut_off_task(self, root: Path) -> str:
        """A task cut off in its step "two" ("one" done), resumable; its id."""
        first = await self.opened(root)
        self.hold_at("two")
        await self.cut_off_at(first, asyncio.ensure_future(first.run_skill("Three", {})))
        return self.task_id

    async def completed_elsewhere(self, root: Path, task_id: str) -> None:
        """Another runtime resumes the task and completes it."""
        tool = await self.opened(root)
        done = await tool.resume_task(task_id)
        assert done is not None and done.state == "COMPLETED"
        await tool.close()

    async def running_in(
        self, rt: AgentRuntime, task_id: str
    ) -> asyncio.Future[ChatMessage | None]:
        """``rt`` resumes the task, which runs there now (held in step "two")."""
        self.hold_at("two")
        resumed = asyncio.ensure_future(rt.resume_task(task_id))
        await asyncio.wait_for(self.reached.wait(), 30)
        return resumed


def _history_states(rt: AgentRuntime, task_id: str) -> list[str]:
    """The states the history records for the task (one entry a task)."""
    return [e["state"] for e in rt.history.tasks(limit=5) if e.get("task_id") == task_id]


async def test_a_task_completed_elsewhere_is_not_resumed_again(tmp_path: Path) -> None:
    steps = _Steps()
    task_id = await steps.cut_off_task(tmp_path)
    repl = await steps.opened(tmp_path)  # open since: it lists the task, as read now
    assert [t.id for t in repl.get_resumable_tasks()] == [task_id]
    await steps.completed_elsewhere(tmp_path, task_id)
    assert steps.ran == Counter(one=1, two=2, three=1)

    again = await repl.resume_task(task_id)
    assert again is None  # nothing left to resume: not run a second time
    assert steps.ran == Counter(one=1, two=2, three=1)
    assert repl.get_resumable_tasks() == []  # and no longer offered
    await repl.close()


async def test_a_task_taken_further_elsewhere_goes_on_from_there(tmp_path: Path) -> None:
    steps = _Steps()
    task_id = await steps.cut_off_task(tmp_path)  # "one" done
    repl = await steps.opened(tmp_path)  # read now: "one" done
    tool = await steps.opened(tmp_path)
    steps.hold_at("three")
    resumed = asyncio.ensure_future(tool.resume_task(task_id))
    await steps.cut_off_at(tool, resumed)  # "two" done there, cut off in "three"
    assert steps.ran == Counter(one=1, two=2, three=1)

    done = await repl.resume_task(task_id)
    assert done is not None and done.state == "COMPLETED"
    assert steps.ran == Counter(one=1, two=2, three=2)  # "two" not run again
    await repl.close()


async def test_a_task_resumed_elsewhere_right_now_is_refused(tmp_path: Path) -> None:
    steps = _Steps()
    task_id = await steps.cut_off_task(tmp_path)
    repl = await steps.opened(tmp_path)
    tool = await steps.opened(tmp_path)
    resumed = await steps.running_in(tool, task_id)
    refused = await repl.resume_task(task_id)
    assert refused is not None and refused.data.get("error") == "running_elsewhere"
    steps.gate.set()
    done = await resumed
    assert done is not None and done.state == "COMPLETED"
    assert steps.ran == Counter(one=1, two=2, three=1)
    await tool.close()
    await repl.close()


async def test_a_task_another_process_runs_is_not_shown_as_paused_here(tmp_path: Path) -> None:
    """``get_task`` gave the copy read at start, PAUSED with CRASH, while the listings left it
    out and ``resume_task`` said it runs in another process: now it is not held here either."""
    steps = _Steps()
    task_id = await steps.cut_off_task(tmp_path)
    repl = await steps.opened(tmp_path)
    tool = await steps.opened(tmp_path)
    resumed = await steps.running_in(tool, task_id)
    assert repl.get_resumable_tasks() == [] and repl.list_tasks() == []
    assert repl.get_task(task_id) is None
    assert await repl.get_task_async(task_id) is None
    shown = tool.get_task(task_id)  # where it runs, it is shown running
    assert shown is not None and shown.state == "EXECUTING"
    steps.gate.set()
    done = await resumed
    assert done is not None and done.state == "COMPLETED"
    await tool.close()
    await repl.close()


async def test_an_abort_leaves_a_task_another_process_runs(tmp_path: Path) -> None:
    """Its copy here reads paused; the other process resumed it and runs it. No channel
    reaches that process (the shared store has one): the abort is refused, and the record
    that run writes stays. Before, it was deleted under the run and "cancelled" recorded."""
    steps = _Steps()
    task_id = await steps.cut_off_task(tmp_path)
    repl = await steps.opened(tmp_path)
    tool = await steps.opened(tmp_path)
    resumed = await steps.running_in(tool, task_id)
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
    task_id = await steps.cut_off_task(tmp_path)
    repl = await steps.opened(tmp_path)
    await steps.completed_elsewhere(tmp_path, task_id)

    assert await repl.abandon_task(task_id) is False
    assert _history_states(repl, task_id) == ["COMPLETED"]  # as the other process recorded it
    assert repl.get_resumable_tasks() == []
    await repl.close()


async def test_a_task_completed_elsewhere_is_not_cancelled_here(tmp_path: Path) -> None:
    """``abort_task`` (the REPL's ``/cancel``) of an old copy of a task another process
    completed since: refused, and its history entry still says it completed."""
    steps = _Steps()
    task_id = await steps.cut_off_task(tmp_path)
    repl = await steps.opened(tmp_path)
    await steps.completed_elsewhere(tmp_path, task_id)

    assert await repl.abort_task(task_id) is False
    assert _history_states(repl, task_id) == ["COMPLETED"]
    assert repl.get_resumable_tasks() == []
    await repl.close()


async def test_a_paused_task_is_cancelled_with_its_record_gone(tmp_path: Path) -> None:
    """``abort_task`` of a paused task no one runs: cancelled, its record deleted before its
    run lock is let go, no longer offered."""
    steps = _Steps()
    task_id = await steps.cut_off_task(tmp_path)
    repl = await steps.opened(tmp_path)
    assert await repl.abort_task(task_id) is True
    assert repl.store.get(task_id) is None
    assert _history_states(repl, task_id) == ["CANCELLED"]
    assert repl.get_resumable_tasks() == []
    await repl.close()


async def test_a_synchronous_abort_of_a_task_completed_elsewhere_is_refused(
    tmp_path: Path,
) -> None:
    """``abort(id)``, the synchronous call, of an old copy of a task another process completed
    since: the store is read again first, so it is refused (False), its history entry still
    says it completed (before, "cancelled" replaced it and the call said True), and it is no
    longer listed."""
    steps = _Steps()
    task_id = await steps.cut_off_task(tmp_path)
    repl = await steps.opened(tmp_path)
    await steps.completed_elsewhere(tmp_path, task_id)

    assert repl.abort(task_id) is False
    await repl.close()  # (whatever it would have written, on disk)
    again = await steps.opened(tmp_path)
    assert _history_states(again, task_id) == ["COMPLETED"]
    assert again.get_resumable_tasks() == []
    await again.close()


async def test_a_synchronous_abort_cancels_a_task_as_the_store_holds_it(tmp_path: Path) -> None:
    """``abort(id)`` of an old copy of a task another process took further and paused again:
    the task is cancelled, its record (the newer one) deleted; and one no one touched since is
    cancelled as before."""
    steps = _Steps()
    task_id = await steps.cut_off_task(tmp_path)  # "one" done
    repl = await steps.opened(tmp_path)
    tool = await steps.opened(tmp_path)
    steps.hold_at("three")
    await steps.cut_off_at(tool, asyncio.ensure_future(tool.resume_task(task_id)))

    assert repl.abort(task_id) is True
    await repl.close()
    again = await steps.opened(tmp_path)
    assert again.store.get(task_id) is None
    assert _history_states(again, task_id) == ["CANCELLED"]
    assert again.get_resumable_tasks() == []
    await again.close()


async def test_serve_says_409_of_a_task_another_process_runs(tmp_path: Path) -> None:
    """``serve`` on the state folder a REPL runs a task in: GET, pause, abort, resume and
    DELETE of that task answered 404 "no task is running or resumable" while it ran, and its
    client took it for lost. Now 409, saying where it runs; ``get_task`` still says None (its
    copy here is stale), and the task runs on there, untouched."""
    from tests.server_support import LiveServer

    steps = _Steps()
    task_id = await steps.cut_off_task(tmp_path)
    live = LiveServer(steps.runtime(tmp_path))
    tool = await steps.opened(tmp_path)
    try:
        resumed = await steps.running_in(tool, task_id)
        with live.client() as client:
            calls = [("GET", ""), ("POST", "/pause"), ("POST", "/abort"), ("POST", "/resume"),
                     ("DELETE", ""), ("GET", "/events")]  # fmt: skip
            for method, path in calls:
                got = await asyncio.to_thread(client.request, method, f"/v1/tasks/{task_id}{path}")
                assert got.status_code == 409, (method, path, got.text)
                assert "runs in another process" in got.json()["detail"], got.text
        assert live.call(live.runtime.get_task_async(task_id)) is None
        steps.gate.set()
        done = await resumed
        assert done is not None and done.state == "COMPLETED"
        assert steps.ran == Counter(one=1, two=2, three=1)
    finally:
        live.stop()
        await tool.close()


async def test_serve_finds_a_task_another_process_cut_off_after_it_started(
    tmp_path: Path,
) -> None:
    """``serve`` read the resumable tasks when it started; a task another process on the
    same state folder cut off after that was 404 to GET and resume until ``serve`` restarted.
    Now the store's record is found (and put in the table as a restored one would be): GET
    says PAUSED, and resume runs it on from its last completed step."""
    from tests.server_support import LiveServer

    steps = _Steps()
    live = LiveServer(steps.runtime(tmp_path))
    try:
        with live.client() as client:
            opened = await asyncio.to_thread(client.get, "/v1/tasks")
            assert opened.status_code == 200, opened.text
            task_id = await steps.cut_off_task(tmp_path)
            got = await asyncio.to_thread(client.get, f"/v1/tasks/{task_id}")
            assert got.status_code == 200, got.text
            assert got.json()["state"] == "PAUSED", got.text
            resumed = await asyncio.to_thread(client.post, f"/v1/tasks/{task_id}/resume")
            assert resumed.status_code == 200, resumed.text
            assert resumed.json()["state"] == "COMPLETED", resumed.text
            again = await steps.cut_off_task(tmp_path)  # resume_task, with no GET before
            done = await asyncio.to_thread(live.call, live.runtime.resume_task(again))
            assert done is not None and done.state == "COMPLETED", done
        assert steps.ran == Counter(one=2, two=4, three=2)
    finally:
        live.stop()
