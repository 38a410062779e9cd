"""AgentRuntime end to end with real stores and test models: routing, states, abort, watchdog,
pause/resume, questions, budgets, bad input, concurrency."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from skillrt import (
    AgentRuntime,
    ChatMessage,
    SkillContext,
    SkillResult,
    State,
    skill,
)
from skillrt.testing import FunctionModel, ScriptedModel

from .helpers import NoParams, Recorder, TopicParams, make_runtime


def writer(calls: list[str], *, watchdog_s: float | None = None) -> Any:
    """A three-step skill: context -> outline -> content, each durable."""

    @skill(name="Writer", params=TopicParams, intents=["WRITE_ARTICLE"], watchdog_s=watchdog_s)
    async def run(ctx: SkillContext, params: TopicParams) -> SkillResult:
        ctx.progress(1, 3, "context")
        context = await ctx.step("context", lambda: {"topic": params.topic})
        ctx.progress(2, 3, "outline")

        async def outline() -> str:
            calls.append("outline")
            return (
                await ctx.llm.chat([{"role": "user", "content": f"outline {params.topic}"}])
            ).content

        out = await ctx.step("outline", outline)

        async def content() -> str:
            calls.append("content")
            return (await ctx.llm.chat([{"role": "user", "content": f"write {out}"}])).content

        body = await ctx.step("content", content)
        ctx.progress(3, 3, "done")
        return SkillResult(
            message=ctx.say(f"写好了：{body}", f"Done: {body}"), data={"topic": context["topic"]}
        )

    return run


async def test_process_input_runs_a_skill_through_the_states(isolated: Path) -> None:
    calls: list[str] = []
    model = ScriptedModel(["an outline", "an article"])
    rt = make_runtime(isolated, model, [writer(calls)])
    events = Recorder(rt)
    msg = await rt.process_input("write an article about Rust ownership")
    assert isinstance(msg, ChatMessage)
    assert msg.state == "COMPLETED"
    assert msg.content == "Done: an article"
    assert msg.data["topic"] == "Rust ownership"
    assert msg.tokens > 0
    assert calls == ["outline", "content"]
    changes = [(e.data["from"], e.data["to"]) for e in events.of("state:changed")]
    assert changes == [
        ("IDLE", "UNDERSTANDING"),
        ("UNDERSTANDING", "PLANNING"),
        ("PLANNING", "EXECUTING"),
        ("EXECUTING", "COMPLETED"),
    ]
    progress = [e.data["step"] for e in events.of("task:progress")]
    assert progress == [1, 2, 3]
    assert events.of("task:progress")[-1].data["percent"] == 100.0
    assert [e.type for e in events.events if e.type.startswith("task:")][-2:] == [
        "task:completed",
        "task:metrics",
    ]
    assert len(events.of("ai:generation")) == 2
    assert rt.state is State.IDLE
    assert rt.get_resumable_tasks() == []
    assert rt.costs.session(rt.session_id).calls == 2
    history = rt.history.tasks(rt.session_id) if rt.history else []
    assert history[0]["state"] == "COMPLETED" and history[0]["skill"] == "Writer"


async def test_abort_cancels_within_100ms_and_replies_in_chinese(isolated: Path) -> None:
    calls: list[str] = []
    slow = ScriptedModel(["outline", "never"], delay=30)
    rt = make_runtime(isolated, slow, [writer(calls)])
    events = Recorder(rt)
    job = asyncio.create_task(rt.process_input("写一篇关于 Rust 所有权的文章"))
    while rt.state is not State.EXECUTING or not slow.calls:
        await asyncio.sleep(0.005)
    started = time.perf_counter()
    assert rt.abort() is True
    msg = await job
    elapsed = time.perf_counter() - started
    assert elapsed < 0.1
    assert msg.state == "CANCELLED"
    assert msg.content == "任务已取消。"
    assert events.of("task:aborted")[0].data["reason"] == "cancelled"
    assert rt.state is State.IDLE
    assert rt.get_resumable_tasks() == []  # cancelled is not resumable
    assert rt.abort() is False  # nothing left to abort


async def test_abort_in_english(isolated: Path) -> None:
    rt = make_runtime(isolated, ScriptedModel(["x"], delay=30), [writer([])])
    job = asyncio.create_task(rt.process_input("write an article about tides"))
    while rt.state is not State.EXECUTING:
        await asyncio.sleep(0.005)
    rt.abort()
    msg = await job
    assert msg.content == "Task cancelled."


async def test_watchdog_cancels_the_work_and_releases_locks(isolated: Path) -> None:
    ticks: list[int] = []

    @skill(name="Spinner", params=TopicParams, intents=["WRITE_ARTICLE"], watchdog_s=0.1)
    async def spinner(ctx: SkillContext, params: TopicParams) -> SkillResult:
        ctx.locks.acquire("posts/a.md", ctx.task_id)
        while True:  # work that never ends by itself
            ticks.append(1)
            await asyncio.sleep(0.01)

    rt = make_runtime(isolated, ScriptedModel([]), [spinner])
    events = Recorder(rt)
    msg = await rt.process_input("write an article about time")
    assert msg.state == "ERROR"
    assert "WATCHDOG_TIMEOUT" in msg.content
    seen = len(ticks)
    await asyncio.sleep(0.05)
    assert len(ticks) == seen  # the coroutine really stopped
    assert rt.locks is not None and rt.locks.holder("posts/a.md") is None
    aborted = events.of("task:aborted")
    assert aborted and aborted[0].data["reason"] == "watchdog"
    resumable = rt.get_resumable_tasks()
    assert [t.error_reason for t in resumable] == ["WATCHDOG_TIMEOUT"]


async def test_two_tasks_keep_separate_states(isolated: Path) -> None:
    gate = asyncio.Event()

    async def answer(messages: list[Any], options: Any) -> str:
        if "slow" in messages[-1]["content"]:
            await gate.wait()
        return "ok"

    rt = make_runtime(isolated, FunctionModel(answer), [writer([])])
    first = asyncio.create_task(rt.process_input("write an article about slow things"))
    while rt.state is not State.EXECUTING:
        await asyncio.sleep(0.005)
    first_id = rt.current_task_id

    @skill(name="Asker", params=NoParams, intents=["SUMMARIZE"])
    async def asker(ctx: SkillContext, params: NoParams) -> SkillResult:
        reply = await ctx.ask("Which one?")
        return SkillResult(message=f"you said {reply}")

    rt.register_skill(asker)
    paused_msg = await rt.process_input("summarize the week")
    assert paused_msg.state == "WAITING_INPUT"
    second_id = paused_msg.task_id
    assert second_id != first_id
    assert rt.task_state(first_id or "") is State.EXECUTING
    assert rt.task_state(second_id or "") is State.WAITING_INPUT
    assert rt.state is State.WAITING_INPUT  # the newest task is in the foreground
    done = await rt.process_input("the second")
    assert done.content == "you said the second"
    assert rt.state is State.EXECUTING  # back to the first task
    gate.set()
    assert (await first).state == "COMPLETED"
    assert rt.state is State.IDLE


async def test_concurrent_process_input_calls_are_independent(isolated: Path) -> None:
    rt = make_runtime(isolated, FunctionModel(lambda m, o: "fine", delay=0.02), [writer([])])
    msgs = await asyncio.gather(
        *(rt.process_input(f"write an article about topic {i}") for i in range(20))
    )
    assert {m.state for m in msgs} == {"COMPLETED"}
    assert len({m.task_id for m in msgs}) == 20


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "empty_input"),
        ("   \n\t ", "empty_input"),
        ("x" * 1_000_000, "input_too_long"),
        ("\x00\x01\x02\x7f", "noise_input"),
        ("\x1b[A\x1b[B\x1b[D", "noise_input"),
    ],
)
async def test_bad_input_gets_a_clear_reply(isolated: Path, text: str, error: str) -> None:
    rt = make_runtime(isolated, ScriptedModel(["o", "c"]), [writer([])])
    msg = await rt.process_input(text)
    assert msg.data["error"] == error
    assert msg.content
    assert rt.state is State.IDLE
    ok = await rt.process_input("write an article about recovery")
    assert ok.state == "COMPLETED"  # still usable


async def test_control_characters_and_surrogates_are_cleaned(isolated: Path) -> None:
    seen: list[str] = []
    rt = make_runtime(
        isolated, FunctionModel(lambda m, o: seen.append(m[-1]["content"]) or "ok"), [writer([])]
    )
    msg = await rt.process_input("write an article about \ud800bad\x07 bytes")
    assert msg.state == "COMPLETED"
    assert all("\ud800" not in s and "\x07" not in s for s in seen)
    assert rt.state is State.IDLE


async def test_non_text_input_is_a_clear_error(isolated: Path) -> None:
    rt = make_runtime(isolated, ScriptedModel([]), [])
    msg = await rt.process_input(b"bytes")  # type: ignore[arg-type]
    assert "must be text" in msg.content


async def test_unclear_input_offers_choices_in_the_users_language(isolated: Path) -> None:
    model = ScriptedModel([{"type": "UNKNOWN", "confidence": 0.1, "parameters": {}}] * 2)
    rt = make_runtime(isolated, model, [writer([])])
    zh = await rt.process_input("嗯，那个东西你看着办吧")
    assert zh.state == "WAITING_INPUT" and "1. " in zh.content
    assert any("\u4e00" <= ch <= "\u9fff" for ch in zh.content)
    no = await rt.process_input("算了")
    assert no.state == "IDLE" and no.data["outcome"] == "declined"
    en = await rt.process_input("hmm hmm, the thing")
    assert en.state == "WAITING_INPUT" and "1. " in en.content
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in en.content)
    assert (await rt.process_input("no")).data["outcome"] == "declined"
    assert rt.state is State.IDLE


async def test_pause_at_step_boundary_then_resume_without_repeating(isolated: Path) -> None:
    calls: list[str] = []
    gate = asyncio.Event()

    async def answer(messages: list[Any], options: Any) -> str:
        if messages[-1]["content"].startswith("outline"):
            await gate.wait()
        return "text"

    rt = make_runtime(isolated, FunctionModel(answer), [writer(calls)])
    job = asyncio.create_task(rt.process_input("write an article about pausing"))
    while "outline" not in calls:
        await asyncio.sleep(0.005)
    assert rt.pause() is True
    gate.set()
    paused = await job
    assert paused.state == "PAUSED"
    assert calls == ["outline"]  # stopped before the content step
    [summary] = rt.get_resumable_tasks()
    assert summary.steps_done == 2
    done = await rt.resume_task(summary.id)
    assert done is not None and done.state == "COMPLETED"
    assert calls == ["outline", "content"]  # outline not generated again
    assert rt.get_resumable_tasks() == []


async def test_abandon_a_paused_task(isolated: Path) -> None:
    gate = asyncio.Event()

    async def answer(messages: list[Any], options: Any) -> str:
        await gate.wait()
        return "t"

    rt = make_runtime(isolated, FunctionModel(answer), [writer([])])
    job = asyncio.create_task(rt.process_input("write an article about giving up"))
    while rt.state is not State.EXECUTING:
        await asyncio.sleep(0.005)
    rt.pause()
    gate.set()
    paused = await job
    assert await rt.abandon_task(paused.task_id or "") is True
    assert rt.get_resumable_tasks() == []
    assert await rt.resume_task(paused.task_id or "") is None
    assert await rt.abandon_task("nope") is False


@pytest.mark.parametrize("how", ["abort_task", "abort"])
async def test_an_abort_as_a_pause_settles_cancels_the_task(isolated: Path, how: str) -> None:
    """An abort that came as the task paused, its run still making the pause durable: the
    run's wait was cancelled, the abort said True, and the task stayed PAUSED for good (still
    listed, resumable). ``serve`` met it in one abort of four after a pause: ``{"ok": true,
    "state": "PAUSED"}``. Now the paused task is cancelled once its run has ended."""
    gate = asyncio.Event()

    async def answer(messages: list[Any], options: Any) -> str:
        await gate.wait()
        return "t"

    rt = make_runtime(isolated, FunctionModel(answer), [writer([])])
    aborts: list[Any] = []

    def on_state(event: Any) -> None:
        if event.data["to"] == "PAUSED":  # inside the run, before its pause is durable
            task = rt._tasks.get(event.task_id or "")
            assert task is not None and task.running
            if how == "abort":
                aborts.append(rt.abort(event.task_id))
            else:
                aborts.append(asyncio.ensure_future(rt.abort_task(event.task_id or "")))

    rt.on("state:changed", on_state)
    job = asyncio.create_task(rt.process_input("write an article about settling"))
    while rt.state is not State.EXECUTING:
        await asyncio.sleep(0.005)
    rt.pause()
    gate.set()
    paused = await job
    task_id = paused.task_id or ""
    [done] = aborts
    assert (await done if how == "abort_task" else done) is True
    deadline = time.monotonic() + 10
    while rt.get_task(task_id) is not None:
        assert time.monotonic() < deadline, rt.get_task(task_id)
        await asyncio.sleep(0.01)
    assert rt.get_resumable_tasks() == []
    assert rt.store.get(task_id) is None
    await rt.close()


async def test_budget_exceeded_stops_the_task(isolated: Path) -> None:
    rt = make_runtime(
        isolated,
        ScriptedModel(["a long outline " * 50, "content"]),
        [writer([])],
        budget={"max_tokens": 20},
    )
    events = Recorder(rt)
    msg = await rt.process_input("write an article about money")
    assert msg.state == "ERROR"
    assert "budget" in msg.content
    assert events.of("task:aborted")[0].data["reason"] == "budget"


async def test_a_failing_subscriber_does_not_break_the_task(isolated: Path) -> None:
    rt = make_runtime(isolated, ScriptedModel(["o", "c"]), [writer([])])

    def boom(event: Any) -> None:
        raise RuntimeError("subscriber bug")

    async def async_boom(event: Any) -> None:
        raise RuntimeError("async subscriber bug")

    rt.on("task:progress", boom)
    rt.on("state:changed", async_boom)
    seen: list[str] = []
    unsubscribe = rt.on("task:completed", lambda e: seen.append(e.type))
    msg = await rt.process_input("write an article about resilience")
    assert msg.state == "COMPLETED"
    assert seen == ["task:completed"]
    unsubscribe()
    await rt.process_input("write an article about resilience again")
    assert seen == ["task:completed"]


async def test_skill_errors_end_in_error_with_a_reply(isolated: Path) -> None:
    @skill(name="Broken", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def broken(ctx: SkillContext, params: TopicParams) -> SkillResult:
        raise ValueError("the skill has a bug")

    rt = make_runtime(isolated, ScriptedModel([]), [broken])
    msg = await rt.process_input("写一篇关于错误的文章")
    assert msg.state == "ERROR"
    assert "执行过程中出现错误" in msg.content and "the skill has a bug" in msg.content
    assert rt.get_resumable_tasks() == []  # a bug is not resumable
    assert rt.state is State.IDLE


async def test_non_json_step_result_is_a_clear_user_error(isolated: Path) -> None:
    @skill(name="Sets", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def sets(ctx: SkillContext, params: TopicParams) -> SkillResult:
        await ctx.step("bad", lambda: {1, 2})
        return SkillResult()

    rt = make_runtime(isolated, ScriptedModel([]), [sets])
    msg = await rt.process_input("write an article about sets")
    assert msg.state == "ERROR"
    assert "step 'bad'" in msg.content and "JSON" in msg.content


async def test_run_skill_needs_no_routing(isolated: Path) -> None:
    rt = make_runtime(isolated, ScriptedModel(["o", "c"]), [writer([])])
    msg = await rt.run_skill("Writer", {"topic": "buttons"})
    assert msg.state == "COMPLETED" and msg.data["topic"] == "buttons"
    with pytest.raises(Exception, match="no skill named"):
        await rt.run_skill("Nope", {})


def test_process_input_sync(isolated: Path) -> None:
    rt = make_runtime(isolated, ScriptedModel(["o", "c", "o2", "c2"]), [writer([])])
    assert rt.process_input_sync("write an article about sync").state == "COMPLETED"
    assert rt.process_input_sync("write an article about sync again").state == "COMPLETED"
    rt.close_sync()


async def test_process_input_sync_refuses_inside_a_loop(isolated: Path) -> None:
    rt = make_runtime(isolated, ScriptedModel([]), [])
    with pytest.raises(Exception, match="inside an event loop"):
        rt.process_input_sync("hello")


def test_singleton(isolated: Path) -> None:
    model = ScriptedModel([])
    first = AgentRuntime.get_instance(llm=model)
    assert AgentRuntime.get_instance() is first
    AgentRuntime.reset_instance()
    assert AgentRuntime.get_instance(llm=model) is not first


async def test_initialize_is_idempotent(isolated: Path) -> None:
    rt = make_runtime(isolated, ScriptedModel([]), [])
    events = Recorder(rt)
    await asyncio.gather(rt.initialize(), rt.initialize())
    await rt.initialize()
    assert events.types().count("runtime:initialized") == 1
    assert events.types().count("runtime:checkpoints_loaded") == 1


async def test_builtin_skills_are_registered_by_default(isolated: Path) -> None:
    rt = AgentRuntime(llm=ScriptedModel([]))
    assert {"WriteArticle", "EditContent", "Summarize", "AnswerQuestion", "Browse"} <= set(
        rt.skills
    )


def asker_skill() -> Any:
    @skill(name="Asker", params=NoParams, intents=["SUMMARIZE"])
    async def asker(ctx: SkillContext, params: NoParams) -> SkillResult:
        await ctx.step("before", lambda: "done before asking")
        reply = await ctx.ask("Which one?")
        return SkillResult(message=f"you said {reply}")

    return asker


async def test_close_keeps_unfinished_tasks_and_a_new_process_answers_them(isolated: Path) -> None:
    first = make_runtime(isolated, ScriptedModel([]), [asker_skill()])
    asked = await first.process_input("summarize the week")
    assert asked.state == "WAITING_INPUT"
    await first.close()  # closing is not cancelling: the task stays resumable
    second = make_runtime(isolated, ScriptedModel([]), [asker_skill()])
    await second.initialize()
    [summary] = second.get_resumable_tasks()
    assert summary.id == asked.task_id and summary.steps_done == 1
    again = await second.resume_task(summary.id)
    assert again is not None and again.state == "WAITING_INPUT"
    done = await second.process_input("the second one")  # this session now owns the task
    assert done.state == "COMPLETED" and done.content == "you said the second one"
    assert second.get_resumable_tasks() == []
    await second.close()


async def test_the_listings_after_close_show_what_get_task_shows(isolated: Path) -> None:
    """After ``close()`` ``get_task`` showed the task it left PAUSED, while ``list_tasks()``
    and ``get_resumable_tasks()`` said []: a host listing after close saw nothing to resume."""
    rt = make_runtime(isolated, ScriptedModel([]), [asker_skill()])
    asked = await rt.process_input("summarize the week")
    assert asked.state == "WAITING_INPUT" and asked.task_id is not None
    await rt.close()
    shown = rt.get_task(asked.task_id)
    assert shown is not None and shown.state == "PAUSED"
    assert [(t.id, t.state) for t in rt.list_tasks()] == [(asked.task_id, "PAUSED")]
    assert [t.id for t in rt.get_resumable_tasks()] == [asked.task_id]


async def test_a_task_running_elsewhere_is_not_offered_or_resumed(isolated: Path) -> None:
    gate = asyncio.Event()

    async def answer(messages: list[Any], options: Any) -> str:
        await gate.wait()
        return "text"

    owner = make_runtime(isolated, FunctionModel(answer), [writer([])])
    job = asyncio.create_task(owner.process_input("write an article about sharing"))
    while owner.state is not State.EXECUTING:
        await asyncio.sleep(0.005)
    task_id = owner.current_task_id or ""
    # Its state changes reach the disk with the next commit round (no one waits for them).
    await owner._run.state.committer.durable()
    other = make_runtime(isolated, ScriptedModel([]), [writer([])])  # as a second process would
    await other.initialize()
    assert other.get_resumable_tasks() == []  # its checkpoint looks unfinished, but it runs
    refused = await other.resume_task(task_id)
    assert refused is not None and refused.data["error"] == "running_elsewhere", refused
    gate.set()
    assert (await job).state == "COMPLETED"
    await owner.close()
    await other.close()


async def test_events_read_as_attributes_or_mappings(isolated: Path) -> None:
    rt = make_runtime(isolated, ScriptedModel(["o", "c"]), [writer([])])
    seen: list[Any] = []
    rt.on("task:progress", seen.append)
    await rt.process_input("write an article about events")
    first = seen[0]
    assert first["type"] == first.type == "task:progress"
    assert first["data"]["step"] == first.data["step"] == 1
    assert dict(first) == first.to_dict()
    assert set(first.to_dict()) == {"type", "task_id", "data", "timestamp"}
