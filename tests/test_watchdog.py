"""The stall watchdog: steady work is never stopped, a task that goes quiet is, and stays
resumable; ``max_task_s`` caps a task whatever it does."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from skillrt import SkillContext, SkillResult, skill
from skillrt.llm.openai_provider import OpenAIProvider
from skillrt.testing import FunctionModel
from tests.helpers import Recorder, TopicParams, make_runtime
from tests.openai_server import OpenAIServer, Reply, Stall


class Title(BaseModel):
    title: str


def streamer(words: int) -> Any:
    @skill(name="Streamer", params=TopicParams)
    async def run(ctx: SkillContext, params: TopicParams) -> SkillResult:
        seen: list[str] = []
        result = await ctx.llm.chat(
            [{"role": "user", "content": params.topic}], stream_cb=seen.append
        )
        return SkillResult(success=True, message=result.content, data={"deltas": len(seen)})

    return run


async def test_a_task_that_streams_longer_than_the_watchdog_completes(isolated: Path) -> None:
    text = " ".join(f"w{i}" for i in range(30))
    model = FunctionModel(lambda messages, options: text, chunk_delay=0.1)  # about 3 s
    rt = make_runtime(isolated, model, [streamer(30)], watchdog_timeout_s=1.0)
    started = time.monotonic()
    msg = await rt.run_skill("Streamer", {"topic": "go"})
    assert msg.state == "COMPLETED", msg.content
    assert time.monotonic() - started > 2.5  # it did outlive watchdog_timeout_s, three times
    assert msg.content == text
    await rt.close()


async def test_progress_alone_keeps_a_task_alive(isolated: Path) -> None:
    @skill(name="Worker", params=TopicParams)
    async def worker(ctx: SkillContext, params: TopicParams) -> SkillResult:
        for i in range(10):  # 2.5 s of work, reporting every 0.25 s
            await asyncio.sleep(0.25)
            ctx.progress(i + 1, 10, "working")
        return SkillResult(success=True, message="done")

    rt = make_runtime(isolated, FunctionModel(lambda m, o: "x"), [worker], watchdog_timeout_s=1.0)
    msg = await rt.run_skill("Worker", {"topic": "go"})
    assert msg.state == "COMPLETED", msg.content
    await rt.close()


async def test_model_bytes_of_a_structured_call_keep_a_task_alive(isolated: Path) -> None:
    # A structured call streams nothing to the skill; the bytes from the server still count.
    answer = '{"title": "' + "a" * 30 + '"}'
    with OpenAIServer() as server:
        server.push(Reply(answer, chunks=list(answer), chunk_delay=0.08))  # about 3 s
        provider = OpenAIProvider(base_url=server.base_url, api_key="k", model="m")

        @skill(name="Titler", params=TopicParams)
        async def titler(ctx: SkillContext, params: TopicParams) -> SkillResult:
            result = await ctx.llm.chat(
                [{"role": "user", "content": params.topic}], response_model=Title
            )
            return SkillResult(success=True, message=result.parsed_as(Title).title)

        rt = make_runtime(isolated, provider, [titler], watchdog_timeout_s=1.0)
        started = time.monotonic()
        msg = await rt.run_skill("Titler", {"topic": "go"})
        assert msg.state == "COMPLETED", msg.content
        assert time.monotonic() - started > 2.5
        await rt.close()
        await provider.aclose()


def two_calls(calls: list[str]) -> Any:
    @skill(name="TwoCalls", params=TopicParams)
    async def run(ctx: SkillContext, params: TopicParams) -> SkillResult:
        async def ask(name: str) -> str:
            calls.append(name)
            result = await ctx.llm.chat([{"role": "user", "content": f"{name}: {params.topic}"}])
            return result.content

        first = await ctx.step("first", lambda: ask("first"))
        second = await ctx.step("second", lambda: ask("second"))
        return SkillResult(success=True, message=f"{first} / {second}")

    return run


async def test_a_hung_model_call_is_stopped_and_the_task_stays_resumable(isolated: Path) -> None:
    with OpenAIServer() as server:
        server.push(Reply("one"), Stall(seconds=30, after_headers=True))
        provider = OpenAIProvider(base_url=server.base_url, api_key="k", model="m", timeout_s=60)
        calls: list[str] = []
        rt = make_runtime(isolated, provider, [two_calls(calls)], watchdog_timeout_s=1.0)
        events = Recorder(rt)
        started = time.monotonic()
        msg = await rt.run_skill("TwoCalls", {"topic": "go"})
        took = time.monotonic() - started
        assert msg.state == "ERROR"
        assert "WATCHDOG_TIMEOUT" in msg.content and "no progress for 1 s" in msg.content
        assert 1.0 <= took < 5.0  # at the stall deadline, not at the provider's 60 s timeout
        hung = server.chat_requests[1]
        assert server.wait_for(lambda: hung.disconnected_at is not None, 2)  # connection closed
        assert [e.data["reason"] for e in events.of("task:aborted")] == ["watchdog"]
        task_id = msg.task_id
        assert task_id is not None
        await rt.close()
        await provider.aclose()

        # A new process: the journal is on disk, the first step is not asked again.
        server.push(Reply("two"))
        provider = OpenAIProvider(base_url=server.base_url, api_key="k", model="m")
        calls.clear()
        rt = make_runtime(isolated, provider, [two_calls(calls)], watchdog_timeout_s=1.0)
        await rt.initialize()
        resumable = rt.get_resumable_tasks()
        assert [(t.id, t.error_reason, t.steps_done) for t in resumable] == [
            (task_id, "WATCHDOG_TIMEOUT", 1)
        ]
        done = await rt.resume_task(task_id)
        assert done is not None and done.state == "COMPLETED", done
        assert done.content == "one / two"
        assert calls == ["second"]
        assert len(server.chat_requests) == 3
        await rt.close()
        await provider.aclose()


async def test_max_task_s_caps_a_task_that_keeps_streaming(isolated: Path) -> None:
    text = " ".join(f"w{i}" for i in range(60))
    model = FunctionModel(lambda messages, options: text, chunk_delay=0.1)  # about 6 s
    rt = make_runtime(isolated, model, [streamer(60)], watchdog_timeout_s=1.0, max_task_s=1.5)
    started = time.monotonic()
    msg = await rt.run_skill("Streamer", {"topic": "go"})
    assert msg.state == "ERROR"
    assert "max_task_s" in msg.content
    assert 1.5 <= time.monotonic() - started < 4.5  # the stream alone would take 6 s
    await rt.close()


async def test_planning_keeps_its_short_cap(isolated: Path) -> None:
    # A slow routing call: UNDERSTANDING has a fixed cap (see test_machine for touch()).
    async def slow(messages: list[Any], options: Any) -> str:
        await asyncio.sleep(5)
        return "{}"

    rt = make_runtime(isolated, FunctionModel(slow), [streamer(1)], watchdog_timeout_s=0.5)
    started = time.monotonic()
    msg = await rt.process_input("please do something unusual with the thing")
    assert msg.state == "ERROR" and "UNDERSTANDING lasted more than 0.5 s" in msg.content
    assert time.monotonic() - started < 2
    await rt.close()
