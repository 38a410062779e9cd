"""Progress while the model thinks: a structured step (an outline) streams nothing to the
skill, so the runtime says every second that the model is working: tokens so far, time."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import Console

from skillrt import SkillContext, SkillResult, skill
from skillrt.cli.display import Display
from skillrt.llm.base import LLMMessage, note_activity
from skillrt.testing import FunctionModel, ModelOptions
from tests.helpers import Recorder, TopicParams, make_runtime


class Outline(BaseModel):
    sections: list[str]


async def slow_outline(_messages: list[LLMMessage], _options: ModelOptions) -> Any:
    for _ in range(5):  # a model that takes 2.5 s, 5 tokens, to answer with JSON
        await asyncio.sleep(0.5)
        note_activity()
    return '{"sections": ["one", "two"]}'


@skill(name="Outliner", intents=["WRITE_ARTICLE"], params=TopicParams)
async def outliner(ctx: SkillContext, params: TopicParams) -> SkillResult:
    answer = await ctx.llm.chat(
        [{"role": "user", "content": f"outline {params.topic}"}], response_model=Outline
    )
    return SkillResult(message=", ".join(answer.parsed_as(Outline).sections))


async def test_a_structured_call_reports_tokens_and_time_while_it_runs(tmp_path: Path) -> None:
    rt = make_runtime(tmp_path, FunctionModel(slow_outline), [outliner])
    seen = Recorder(rt)
    out = io.StringIO()
    display = Display(Console(file=out, width=100, force_terminal=False))
    display.attach(rt)
    try:
        msg = await rt.run_skill("Outliner", {"topic": "frogs"})
    finally:
        await rt.close()
    assert msg.state == "COMPLETED" and msg.content == "one, two"
    thinking = seen.of("ai:thinking")
    assert len(thinking) >= 2  # at about 1 s and 2 s
    assert [e.data["elapsed_s"] for e in thinking] == sorted(e.data["elapsed_s"] for e in thinking)
    assert thinking[0].data["elapsed_s"] >= 1.0 and thinking[-1].data["tokens"] >= 3
    assert all(e.task_id == msg.task_id for e in thinking)
    # The watchdog still hears every token through the counting listener (the task did not
    # stall), and the plain-text display printed what the model was doing.
    assert "the model is thinking · " in out.getvalue()


async def test_a_fast_structured_call_says_nothing(tmp_path: Path) -> None:
    rt = make_runtime(tmp_path, FunctionModel(lambda _m, _o: '{"sections": ["a"]}'), [outliner])
    seen = Recorder(rt)
    try:
        msg = await rt.run_skill("Outliner", {"topic": "frogs"})
    finally:
        await rt.close()
    assert msg.state == "COMPLETED" and seen.of("ai:thinking") == []
