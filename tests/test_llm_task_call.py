"""A model call as a task makes it (``TaskLLM``): what it costs the event loop, and that the
shorter path keeps the provider's defaults, its own ``chat``, the usage, the cost, the events
and the log line."""

from __future__ import annotations

import io
import json
import logging
import sys
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
import structlog
from pydantic import BaseModel

from skillrt import AgentRuntime, SkillContext, SkillResult, load_config, skill
from skillrt._io.redaction import Redactor
from skillrt.abort import AbortController
from skillrt.llm.base import BaseLLM, LLMMessage, LLMResult, Usage
from skillrt.llm.cost import CostTracker
from skillrt.llm.taskllm import TaskLLM
from skillrt.settings import BudgetConfig
from skillrt.testing import FunctionModel, ModelOptions, _chunks

ASK: list[LLMMessage] = [{"role": "user", "content": "hi"}]


class NoParams(BaseModel):
    pass


def _logger(level: int, out: io.StringIO) -> Any:
    return structlog.wrap_logger(
        structlog.PrintLogger(out),
        processors=[structlog.processors.JSONRenderer()],
        wrapper_class=structlog.make_filtering_bound_logger(level),
    )


def _task_llm(model: BaseLLM, **kwargs: Any) -> TaskLLM:
    options: dict[str, Any] = {
        "signal": AbortController().signal,
        "budget": BudgetConfig(),
        "sink": lambda model, tokens, cost: (tokens, cost or 0.0),
        "emit": lambda *args, **kwargs: None,
        "logger": _logger(logging.WARNING, io.StringIO()),
        "redactor": Redactor(),
    }
    options.update(kwargs)
    return TaskLLM(model, **options)


async def _answer(messages: list[LLMMessage], options: ModelOptions) -> str:
    return "ok"


async def test_a_task_call_enters_chat_once_and_costs_few_python_calls() -> None:
    """The task's view hands its request to the provider's ``_generate``: the provider's
    ``chat`` (the base's: it would check the signal, copy the messages and fill in the
    defaults again) is not entered a second time. The code before entered it twice and made
    62 Python calls for this call."""
    task = _task_llm(FunctionModel(_answer))
    await task.chat(ASK)  # warm: first-use work is not the call's
    calls: Counter[str] = Counter()

    def count(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            calls[frame.f_code.co_name] += 1

    sys.setprofile(count)
    try:
        result = await task.chat(ASK)
    finally:
        sys.setprofile(None)
    assert result.content == "ok"
    assert calls["chat"] == 1
    assert sum(calls.values()) <= 45, calls


async def test_the_providers_defaults_fill_in_a_task_call() -> None:
    seen: list[ModelOptions] = []

    async def answer(messages: list[LLMMessage], options: ModelOptions) -> str:
        seen.append(options)
        return "ok"

    model = FunctionModel(answer)
    model.default_max_tokens = 50
    model.default_temperature = 0.2
    task = _task_llm(model)
    await task.chat(ASK)
    await task.chat(ASK, max_tokens=7, temperature=0.9)
    assert seen == [ModelOptions(None, 50, 0.2, stream=True), ModelOptions(None, 7, 0.9, True)]


async def test_a_provider_with_its_own_chat_is_called_through_it() -> None:
    asked: list[dict[str, Any]] = []

    class Own(FunctionModel):
        async def chat(self, messages: Any, **options: Any) -> LLMResult:
            asked.append(options)
            return await super().chat(messages, **options)

    task = _task_llm(Own(_answer))
    result = await task.chat(ASK, max_tokens=5)
    assert result.content == "ok"
    ((options,),) = [asked]
    assert options["max_tokens"] == 5 and options["stream_cb"] is not None


async def test_the_call_is_logged_at_debug_and_not_above() -> None:
    for level, lines in ((logging.DEBUG, 1), (logging.INFO, 0)):
        out = io.StringIO()
        task = _task_llm(FunctionModel(_answer, model="m"), logger=_logger(level, out))
        await task.chat(ASK)
        logged = [json.loads(line) for line in out.getvalue().splitlines()]
        assert [e["event"] for e in logged] == ["agent.llm.called"] * lines
        if lines:
            assert logged[0]["model"] == "m" and logged[0]["tokens"] == 2


def test_the_cost_tracker_adds_each_call_to_its_four_totals() -> None:
    costs = CostTracker(keep_tasks=2)
    costs.record(task_id="a", session_id="s", skill="K", model="m", tokens=10, cost=0.5)
    costs.record(task_id="a", session_id="s", skill=None, model="m", tokens=5, cost=None)
    costs.record(task_id="b", session_id="t", skill="K", model="n", tokens=1, cost=0.25)
    a = costs.task("a")
    assert (a.tokens, a.cost, a.calls, a.unpriced_calls) == (15, 0.5, 2, 1)
    s = costs.session("s")
    assert (s.tokens, s.cost, s.calls, s.unpriced_calls) == (15, 0.5, 2, 1)
    k = costs.by_skill["K"]
    assert (k.tokens, k.cost, k.calls, k.unpriced_calls) == (11, 0.75, 2, 0)
    m = costs.by_model["m"]
    assert (m.tokens, m.cost, m.calls, m.unpriced_calls) == (15, 0.5, 2, 1)
    costs.record(task_id="c", session_id="t", skill=None, model="n", tokens=1, cost=0.0)
    assert list(costs.by_task) == ["b", "c"]  # the oldest task dropped


async def test_usage_and_cost_reach_the_record_the_tracker_and_the_events(tmp_path: Path) -> None:
    """Three calls of a priced model: the task's record, the tracker and ``ai:generation``
    carry each call's figures."""

    async def answer(messages: list[LLMMessage], options: ModelOptions) -> LLMResult:
        return LLMResult("fine", usage=Usage(3, 4, estimated=True), cost=0.125, model="priced")

    @skill(name="Asker", params=NoParams, intents=["WRITE_ARTICLE"], description="asks")
    async def asker(ctx: SkillContext, params: NoParams) -> SkillResult:
        for i in range(3):
            await ctx.llm.chat([{"role": "user", "content": f"q{i}"}])
        return SkillResult(message="done")

    config = load_config(content_root=tmp_path, state_dir=tmp_path / ".s", log_level="warning")
    rt = AgentRuntime(config, llm=FunctionModel(answer, model="priced"), skills=[asker])
    await rt.initialize()
    events: list[dict[str, Any]] = []
    rt.events.on("ai:generation", lambda event: events.append(event.data))
    try:
        reply = await rt.run_skill("Asker", {})
        assert reply.state == "COMPLETED"
        assert (reply.tokens, reply.cost) == (21, 0.375)
        totals = rt.costs.task(reply.task_id or "")
        assert (totals.tokens, totals.cost, totals.calls) == (21, 0.375, 3)
        assert rt.costs.by_model["priced"].calls == 3 and rt.costs.by_skill["Asker"].calls == 3
        usage = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7, "estimated": 1}
        assert [(e["usage"], e["model"], e["cost"]) for e in events] == [
            (usage, "priced", 0.125)
        ] * 3
        assert all(isinstance(e["duration"], float) for e in events)
    finally:
        await rt.close()


@pytest.mark.parametrize(
    "text",
    ["", "ok", "one two  three\n", " lead", "tab\there", "nbsp\u00a0x", "sep\x1cx", "写文章",
     "mixé 😀 end", "line\u2028sep", "\u2e80\u2e81", "trail "],
)  # fmt: skip
def test_a_test_model_streams_the_same_deltas(text: str) -> None:
    """``_chunks`` (a word needs no generator now) gives what it gave: a delta ends after a
    space (``str.isspace``) or a character past U+2E80."""
    expected: list[str] = []
    word = ""
    for ch in text:
        word += ch
        if ch.isspace() or ord(ch) > 0x2E80:
            expected.append(word)
            word = ""
    if word:
        expected.append(word)
    assert list(_chunks(text)) == expected
