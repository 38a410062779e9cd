"""The one LLM base: every model's ``chat`` is ``BaseLLM.chat``, which packs the call into an
``LLMRequest`` for ``_generate`` / ``_generate_structured``."""

from __future__ import annotations

import pytest
import structlog
from pydantic import BaseModel

from skillrt.abort import AbortController
from skillrt.cli.nomodel import NoModel
from skillrt.exceptions import StructuredOutputError, TaskCancelled
from skillrt.llm.base import BaseLLM, LLMMessage
from skillrt.llm.local import LocalProvider
from skillrt.llm.openai_provider import OpenAIProvider
from skillrt.llm.taskllm import TaskLLM
from skillrt.settings import BudgetConfig
from skillrt.testing import FunctionModel, ModelOptions, ScriptedModel

ASK: list[LLMMessage] = [{"role": "user", "content": "hi"}]


class Title(BaseModel):
    title: str


def test_every_model_speaks_through_the_one_chat() -> None:
    for model in (OpenAIProvider, LocalProvider, TaskLLM, ScriptedModel, FunctionModel, NoModel):
        assert issubclass(model, BaseLLM)
        assert model.chat is BaseLLM.chat, model.__name__


async def test_an_aborted_call_is_refused_before_the_model_is_asked() -> None:
    controller = AbortController()
    controller.abort("stop")
    scripted = ScriptedModel(["unused"])
    for model in (scripted, NoModel()):
        with pytest.raises(TaskCancelled, match="stop"):
            await model.chat(ASK, signal=controller.signal)
    assert scripted.call_count == 0 and scripted.remaining == 1  # no answer was used up


async def test_a_wrapper_passes_the_whole_request_on() -> None:
    seen: list[tuple[list[LLMMessage], ModelOptions]] = []

    def answer(messages: list[LLMMessage], options: ModelOptions) -> str:
        seen.append((messages, options))
        return '{"title": "Tea"}'

    used: list[int] = []

    def sink(model: str, tokens: int, cost: float | None) -> tuple[int, float]:
        used.append(tokens)
        return sum(used), 0.0

    task = TaskLLM(
        FunctionModel(answer),
        signal=AbortController().signal,
        budget=BudgetConfig(),
        sink=sink,
        emit=lambda *args, **kwargs: None,
        logger=structlog.get_logger(),
    )
    extra: LLMMessage = {"role": "user", "content": "hi", "name": "x"}  # type: ignore[typeddict-unknown-key]
    result = await task.chat([extra], response_model=Title, max_tokens=7, temperature=0.3)
    assert result.parsed_as(Title).title == "Tea"
    ((messages, options),) = seen
    assert messages == [{"role": "user", "content": "hi"}]  # role and content only
    assert options == ModelOptions(Title, 7, 0.3, stream=False)
    assert used == [result.usage.total_tokens]


async def test_test_models_take_one_answer_per_structured_call() -> None:
    model = ScriptedModel([{"wrong": 1}, {"title": "Tea"}])
    with pytest.raises(StructuredOutputError, match="Title"):
        await model.chat(ASK, response_model=Title)
    assert model.remaining == 1  # not repaired, not asked again
    assert (await model.chat(ASK, response_model=Title)).parsed_as(Title).title == "Tea"
