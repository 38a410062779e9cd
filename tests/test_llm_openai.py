"""The openai provider: the real ``openai`` client against the OpenAI-compatible test server."""

from __future__ import annotations

import asyncio
import email.utils
import socket
import time
from collections.abc import AsyncIterator, Iterator
from enum import StrEnum
from typing import Any

import pytest
from pydantic import BaseModel, Field

from skillrt.abort import AbortController
from skillrt.exceptions import (
    AuthenticationError,
    BadRequest,
    PermissionDenied,
    ProviderUnavailable,
    RateLimited,
    StructuredOutputError,
    TaskCancelled,
)
from skillrt.llm.base import LLM, LLMMessage, Usage
from skillrt.llm.openai_provider import OpenAIProvider, parse_retry_after
from skillrt.llm.prices import PriceTable
from tests.openai_server import Fail, Garbage, OpenAIServer, Reply, Stall


class IntentType(StrEnum):
    WRITE_ARTICLE = "WRITE_ARTICLE"
    SUMMARIZE = "SUMMARIZE"
    UNKNOWN = "UNKNOWN"


class Intent(BaseModel):
    type: IntentType
    confidence: float = Field(ge=0, le=1)
    parameters: dict[str, Any] = Field(default_factory=dict)


class Outline(BaseModel):
    title: str
    sections: list[str]


GOOD_INTENT = '{"type": "SUMMARIZE", "confidence": 0.9, "parameters": {"topic": "rust"}}'
ASK: list[LLMMessage] = [
    {"role": "system", "content": "You are a router."},
    {"role": "user", "content": "summarize my rust post"},
]


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as srv:
        yield srv


@pytest.fixture
async def make_provider(server: OpenAIServer) -> AsyncIterator[Any]:
    made: list[OpenAIProvider] = []

    def make(**kwargs: Any) -> OpenAIProvider:
        options: dict[str, Any] = {
            "base_url": server.base_url,
            "api_key": "sk-test",
            "model": "gpt-4o-mini",
            "timeout_s": 5.0,
            "max_retries": 3,
            "retry_base_s": 0.01,
            "retry_max_s": 0.05,
        }
        options.update(kwargs)
        provider = OpenAIProvider(**options)
        made.append(provider)
        return provider

    yield make
    for provider in made:
        await provider.aclose()


async def test_is_an_llm(make_provider: Any) -> None:
    assert isinstance(make_provider(), LLM)


async def test_streams_deltas_to_stream_cb(server: OpenAIServer, make_provider: Any) -> None:
    server.push(Reply("Hello brave new world", chunk_delay=0.01, model="gpt-4o-mini-2024-07-18"))
    deltas: list[str] = []
    result = await make_provider().chat(ASK, stream_cb=deltas.append)
    assert deltas == ["Hello ", "brave ", "new ", "world"]
    assert result.content == "Hello brave new world"
    assert result.model == "gpt-4o-mini-2024-07-18"  # what the server reports
    assert result.usage == Usage(11, 4)
    (request,) = server.chat_requests
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    assert request.body["messages"] == ASK
    assert request.headers["authorization"] == "Bearer sk-test"


async def test_async_stream_cb(server: OpenAIServer, make_provider: Any) -> None:
    server.push(Reply("one two"))
    seen: list[str] = []

    async def collect(delta: str) -> None:
        await asyncio.sleep(0)
        seen.append(delta)

    await make_provider().chat(ASK, stream_cb=collect)
    assert "".join(seen) == "one two"


async def test_usage_and_cost_of_a_priced_model(server: OpenAIServer, make_provider: Any) -> None:
    server.push(
        Reply("x", model="gpt-4o-mini-2024-07-18", prompt_tokens=1000, completion_tokens=500)
    )
    result = await make_provider(model="gpt-4o-mini").chat(ASK, max_tokens=50, temperature=0.1)
    assert result.usage == Usage(1000, 500)
    assert result.cost == pytest.approx((1000 * 0.15 + 500 * 0.60) / 1_000_000)
    body = server.chat_requests[0].body
    assert body["max_tokens"] == 50
    assert body["temperature"] == 0.1


async def test_unpriced_model_has_no_cost(server: OpenAIServer, make_provider: Any) -> None:
    server.push(Reply("x", model="my-own-llama"))
    result = await make_provider(model="my-own-llama").chat(ASK)
    assert result.cost is None  # unpriced, not free
    assert result.usage.total_tokens > 0


async def test_usage_is_estimated_when_the_server_sends_none(
    server: OpenAIServer, make_provider: Any
) -> None:
    server.push(Reply("an answer of a few words", usage=False))
    result = await make_provider().chat(ASK)
    assert result.usage.estimated
    assert result.usage.completion_tokens > 0
    assert result.usage.to_dict()["estimated"] == 1


async def test_retry_after_429_and_500_then_success(
    server: OpenAIServer, make_provider: Any
) -> None:
    server.push(Fail(429, headers={"Retry-After": "0.2"}), Fail(500), Reply("finally"))
    result = await make_provider().chat(ASK)
    assert result.content == "finally"
    assert len(server.chat_requests) == 3
    first, second, _ = server.chat_requests
    assert second.received_at - first.received_at >= 0.2  # Retry-After honoured


async def test_retry_after_is_capped(server: OpenAIServer, make_provider: Any) -> None:
    server.push(Fail(429, headers={"Retry-After": "3600"}), Reply("ok"))
    started = time.perf_counter()
    result = await make_provider(retry_after_cap_s=0.05).chat(ASK)
    assert result.content == "ok"
    assert time.perf_counter() - started < 2


def test_parse_retry_after() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None
    date = email.utils.formatdate(1_000_030, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=1_000_000) == pytest.approx(30)
    assert parse_retry_after({"retry-after": "-5"}) == 0


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (401, AuthenticationError),
        (403, PermissionDenied),
        (400, BadRequest),
        (404, BadRequest),
        (422, BadRequest),
    ],
)
async def test_no_retry_on_client_errors(
    server: OpenAIServer, make_provider: Any, status: int, error: type[Exception]
) -> None:
    server.push(Fail(status, "nope"), Reply("never"))
    with pytest.raises(error) as caught:
        await make_provider(model="gpt-4.1").chat(ASK)
    assert len(server.chat_requests) == 1
    exc = caught.value
    assert exc.fatal  # type: ignore[attr-defined]
    assert exc.status == status  # type: ignore[attr-defined]
    assert exc.provider == "openai"  # type: ignore[attr-defined]
    assert exc.model == "gpt-4.1"  # type: ignore[attr-defined]
    assert "nope" in str(exc)
    assert "sk-test" not in str(exc)


async def test_rate_limit_after_retries_carries_retry_after(
    server: OpenAIServer, make_provider: Any
) -> None:
    server.push(*[Fail(429, headers={"Retry-After": "0.01"}) for _ in range(3)])
    with pytest.raises(RateLimited) as caught:
        await make_provider(max_retries=2).chat(ASK)
    assert caught.value.retry_after == pytest.approx(0.01)
    assert not caught.value.fatal
    assert len(server.chat_requests) == 3


async def test_quota_exhausted_is_fatal(server: OpenAIServer, make_provider: Any) -> None:
    server.push(Fail(429, "You exceeded your current quota", code="insufficient_quota"))
    with pytest.raises(PermissionDenied):
        await make_provider().chat(ASK)
    assert len(server.chat_requests) == 1


async def test_server_errors_exhaust_retries(server: OpenAIServer, make_provider: Any) -> None:
    server.push(*[Fail(503, "overloaded") for _ in range(3)])
    with pytest.raises(ProviderUnavailable) as caught:
        await make_provider(max_retries=2).chat(ASK)
    assert caught.value.status == 503
    assert len(server.chat_requests) == 3


async def test_connection_refused_is_unavailable(make_provider: Any) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = make_provider(base_url=f"http://127.0.0.1:{port}/v1", max_retries=1)
    with pytest.raises(ProviderUnavailable, match="connection failed"):
        await provider.chat(ASK)


async def test_timeout_is_unavailable(server: OpenAIServer, make_provider: Any) -> None:
    server.push(Stall(10))
    started = time.perf_counter()
    with pytest.raises(ProviderUnavailable, match="no answer within"):
        await make_provider(timeout_s=0.3, max_retries=0).chat(ASK)
    assert time.perf_counter() - started < 3


async def test_stalled_stream_times_out(server: OpenAIServer, make_provider: Any) -> None:
    server.push(Stall(10, after_headers=True))
    with pytest.raises(ProviderUnavailable):
        await make_provider(timeout_s=0.3, max_retries=0).chat(ASK)


@pytest.mark.parametrize("framing", ["chunked", "close"])
async def test_truncated_stream_is_retryable(
    server: OpenAIServer, make_provider: Any, framing: str
) -> None:
    server.push(Reply("a b c d e f", truncate_after=2, framing=framing))  # type: ignore[arg-type]
    with pytest.raises(ProviderUnavailable):
        await make_provider(max_retries=0).chat(ASK)
    server.push(Reply("a b c d e f", truncate_after=2, framing=framing), Reply("whole"))  # type: ignore[arg-type]
    result = await make_provider(max_retries=1).chat(ASK)
    assert result.content == "whole"


async def test_truncated_stream_is_not_retried_once_text_was_streamed(
    server: OpenAIServer, make_provider: Any
) -> None:
    server.push(Reply("a b c d e f", truncate_after=2), Reply("again"))
    deltas: list[str] = []
    with pytest.raises(ProviderUnavailable, match="ended before the model finished"):
        await make_provider(max_retries=3).chat(ASK, stream_cb=deltas.append)
    assert deltas == ["a ", "b "]
    assert len(server.chat_requests) == 1


async def test_malformed_stream_data_is_unavailable(
    server: OpenAIServer, make_provider: Any
) -> None:
    server.push(Garbage(), Reply("fine"))
    assert (await make_provider(max_retries=1).chat(ASK)).content == "fine"
    server.push(Garbage())
    with pytest.raises(ProviderUnavailable, match="malformed"):
        await make_provider(max_retries=0).chat(ASK)


async def test_abort_mid_stream_closes_the_connection(
    server: OpenAIServer, make_provider: Any
) -> None:
    server.push(Reply(" ".join(f"w{i}" for i in range(500)), chunk_delay=0.01))
    controller = AbortController()
    third = asyncio.Event()
    deltas: list[str] = []

    def on_delta(delta: str) -> None:
        deltas.append(delta)
        if len(deltas) == 3:
            third.set()

    async def abort_later() -> float:
        await third.wait()
        aborted_at = time.perf_counter()
        controller.abort("user pressed stop")
        return aborted_at

    aborter = asyncio.create_task(abort_later())
    with pytest.raises(TaskCancelled) as caught:
        await make_provider().chat(ASK, signal=controller.signal, stream_cb=on_delta)
    raised_at = time.perf_counter()
    aborted_at = await aborter
    assert caught.value.reason == "user pressed stop"
    (request,) = server.chat_requests
    assert server.wait_for(lambda: request.disconnected_at is not None, timeout=2)
    assert request.disconnected_at is not None
    assert request.disconnected_at - aborted_at < 0.1  # the server saw the socket close
    assert raised_at - aborted_at < 0.1
    assert request.finished_at is None
    assert request.chunks_sent < 20  # no more tokens were read
    assert len(deltas) <= 4


async def test_cancelling_the_calling_task_closes_the_connection(
    server: OpenAIServer, make_provider: Any
) -> None:
    server.push(Reply(" ".join(f"w{i}" for i in range(500)), chunk_delay=0.01))
    started = asyncio.Event()
    provider = make_provider()
    call = asyncio.create_task(provider.chat(ASK, stream_cb=lambda _d: started.set()))
    await started.wait()
    cancelled_at = time.perf_counter()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    (request,) = server.chat_requests
    assert server.wait_for(lambda: request.disconnected_at is not None, timeout=2)
    assert request.disconnected_at is not None
    assert request.disconnected_at - cancelled_at < 0.1


async def test_abort_before_the_call_sends_nothing(
    server: OpenAIServer, make_provider: Any
) -> None:
    controller = AbortController()
    controller.abort()
    with pytest.raises(TaskCancelled):
        await make_provider().chat(ASK, signal=controller.signal)
    assert server.chat_requests == []


async def test_abort_during_backoff(server: OpenAIServer, make_provider: Any) -> None:
    server.push(Fail(429, headers={"Retry-After": "5"}))
    controller = AbortController()
    provider = make_provider(retry_after_cap_s=10)
    asyncio.get_running_loop().call_later(0.2, controller.abort)
    started = time.perf_counter()
    with pytest.raises(TaskCancelled):
        await provider.chat(ASK, signal=controller.signal)
    assert time.perf_counter() - started < 1


async def test_structured_output_with_server_schema_support(
    server: OpenAIServer, make_provider: Any
) -> None:
    server.push(Reply(GOOD_INTENT), Reply('{"title": "T", "sections": ["a", "b"]}'))
    provider = make_provider()
    result = await provider.chat(ASK, response_model=Intent)
    assert result.parsed_as(Intent).type is IntentType.SUMMARIZE
    assert result.parsed_as(Intent).parameters == {"topic": "rust"}
    fmt = server.chat_requests[0].body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Intent"
    assert fmt["json_schema"]["strict"] is False  # a free-form dict cannot be strict
    assert server.chat_requests[0].body["messages"] == ASK  # no schema prompt needed
    assert provider.structured_mode == "json_schema"

    outline = await provider.chat(ASK, response_model=Outline)
    assert outline.parsed_as(Outline).sections == ["a", "b"]
    strict = server.chat_requests[1].body["response_format"]["json_schema"]
    assert strict["strict"] is True
    assert strict["schema"]["additionalProperties"] is False
    assert strict["schema"]["required"] == ["title", "sections"]


async def test_structured_output_falls_back_when_the_server_rejects_schemas(
    make_provider: Any,
) -> None:
    with OpenAIServer(reject_response_format=True) as server:
        server.push(Reply(GOOD_INTENT), Reply(GOOD_INTENT))
        provider = make_provider(base_url=server.base_url)
        result = await provider.chat(ASK, response_model=Intent)
        assert result.parsed_as(Intent).confidence == 0.9
        schema_try, object_try, accepted = server.chat_requests
        assert schema_try.body["response_format"]["type"] == "json_schema"
        assert object_try.body["response_format"]["type"] == "json_object"
        assert getattr(schema_try.behaviour, "status", 0) == 400
        assert "response_format" not in accepted.body
        system = accepted.body["messages"][0]
        assert system["role"] == "system"
        assert system["content"].startswith("You are a router.")
        assert '"confidence"' in system["content"]  # the schema is in the instructions
        assert provider.structured_mode == "prompt"
        # Remembered: the next structured call goes straight to the prompt mode.
        await provider.chat(ASK, response_model=Intent)
        assert len(server.chat_requests) == 4
        assert "response_format" not in server.chat_requests[3].body


async def test_auto_falls_back_on_a_500_naming_response_format(make_provider: Any) -> None:
    # llama-cpp-python's server: json_schema is a 500 validation error, json_object works.
    with OpenAIServer(refuse_format_types=("json_schema",), refuse_status=500) as server:
        server.default = Reply(GOOD_INTENT)
        provider = make_provider(base_url=server.base_url, max_retries=3)
        result = await provider.chat(ASK, response_model=Intent)
        assert result.parsed_as(Intent).type is IntentType.SUMMARIZE
        refused, accepted = server.chat_requests  # the 500 is not retried as an outage
        assert getattr(refused.behaviour, "status", 0) == 500
        fmt = accepted.body["response_format"]
        assert fmt == {"type": "json_object", "schema": Intent.model_json_schema()}
        assert '"confidence"' in accepted.body["messages"][0]["content"]
        assert provider.structured_mode == "json_object"
        await provider.chat(ASK, response_model=Intent)  # learnt once for this provider
        assert len(server.chat_requests) == 3
        assert server.chat_requests[2].body["response_format"]["type"] == "json_object"


async def test_a_500_without_format_words_is_an_outage_not_a_fallback(
    server: OpenAIServer, make_provider: Any
) -> None:
    server.push(Fail(500, "model crashed"), Reply(GOOD_INTENT))
    provider = make_provider()
    result = await provider.chat(ASK, response_model=Intent)
    assert result.parsed_as(Intent).confidence == 0.9
    assert [r.body["response_format"]["type"] for r in server.chat_requests] == [
        "json_schema",
        "json_schema",
    ]  # retried as an outage, the format kept
    assert provider.structured_mode == "json_schema"


async def test_fixed_modes_send_what_they_name(server: OpenAIServer, make_provider: Any) -> None:
    server.default = Reply(GOOD_INTENT)
    await make_provider(structured_output="json_object").chat(ASK, response_model=Intent)
    await make_provider(structured_output="prompt").chat(ASK, response_model=Intent)
    obj, prompt = server.chat_requests
    assert obj.body["response_format"]["type"] == "json_object"
    assert obj.body["response_format"]["schema"]["title"] == "Intent"
    assert "response_format" not in prompt.body


async def test_fixed_json_schema_mode_does_not_fall_back(make_provider: Any) -> None:
    with OpenAIServer(refuse_format_types=("json_schema",), refuse_status=500) as server:
        provider = make_provider(base_url=server.base_url, structured_output="json_schema")
        with pytest.raises(ProviderUnavailable, match="response_format"):
            await provider.chat(ASK, response_model=Intent)
        assert len(server.chat_requests) == 1


@pytest.mark.parametrize("streams", ["json", "refuse"])
async def test_a_server_that_does_not_stream(streams: str, make_provider: Any) -> None:
    with OpenAIServer(streams=streams) as server:  # type: ignore[arg-type]
        server.default = Reply("hello there", prompt_tokens=7, completion_tokens=2)
        provider = make_provider(base_url=server.base_url, max_retries=0)
        seen: list[str] = []
        result = await provider.chat(ASK, stream_cb=seen.append)
        assert result.content == "hello there" and seen == ["hello there"]
        assert result.usage == Usage(7, 2)  # the whole body's exact usage
        assert provider.stream is False
        await provider.chat(ASK)  # learnt: asked without streaming from then on
        assert server.chat_requests[-1].body.get("stream") is False
        assert "stream_options" not in server.chat_requests[-1].body


async def test_prompt_mode_repairs_malformed_json(server: OpenAIServer, make_provider: Any) -> None:
    bad = '{"type": "SUMMARIZE", "confidence": 0.9, "parameters": {'
    good = f"Here you go:\n```json\n{GOOD_INTENT}\n```"
    server.push(Reply(bad), Reply(good))
    seen: list[str] = []
    result = await make_provider(structured_output="prompt").chat(
        ASK, response_model=Intent, stream_cb=seen.append
    )
    assert result.parsed_as(Intent).type is IntentType.SUMMARIZE
    assert seen == [result.content]  # only the answer that validated is streamed
    assert result.usage == Usage(22, len(Reply(bad).pieces()) + len(Reply(good).pieces()))
    first, repair = server.chat_requests
    assert "response_format" not in first.body
    assert repair.body["messages"][-2] == {"role": "assistant", "content": bad}
    assert repair.body["messages"][-1]["role"] == "user"
    assert "could not be used" in repair.body["messages"][-1]["content"]


async def test_native_mode_repairs_an_answer_that_ignores_the_schema(
    server: OpenAIServer, make_provider: Any
) -> None:
    server.push(Reply('{"type": "DANCE", "confidence": 3}'), Reply(GOOD_INTENT))
    result = await make_provider().chat(ASK, response_model=Intent)
    assert result.parsed_as(Intent).confidence == 0.9
    assert "response_format" in server.chat_requests[1].body


async def test_structured_output_error_after_bounded_retries(
    server: OpenAIServer, make_provider: Any
) -> None:
    server.default = Reply("I refuse to answer in JSON")
    server.push(*[Reply(f"nonsense {i}") for i in range(4)])
    with pytest.raises(StructuredOutputError) as caught:
        await make_provider(structured_output="prompt", structured_retries=1).chat(
            ASK, response_model=Intent
        )
    assert caught.value.raw == "nonsense 3"
    assert caught.value.model == "gpt-4o-mini"
    assert caught.value.provider == "openai"
    assert len(server.chat_requests) == 4  # 2 rounds of answer + repair, then it stops


async def test_every_structured_request_counts_toward_one_bound(make_provider: Any) -> None:
    # auto against a server that refuses both formats: each refusal is a request of the call,
    # and the bound leaves room for one round (answer + repair) after the last fallback.
    with OpenAIServer(reject_response_format=True) as server:
        server.default = Reply("not JSON at all")
        provider = make_provider(base_url=server.base_url, structured_retries=0)
        with pytest.raises(StructuredOutputError, match=r"in 4 request\(s\)") as caught:
            await provider.chat(ASK, response_model=Intent)
        assert caught.value.raw == "not JSON at all"
        formats = [r.body.get("response_format", {}).get("type") for r in server.chat_requests]
        assert formats == ["json_schema", "json_object", None, None]
        # Learnt: nothing is left to fall back from, so the next call gets one round only.
        with pytest.raises(StructuredOutputError, match=r"in 2 request\(s\)"):
            await provider.chat(ASK, response_model=Intent)
        assert len(server.chat_requests) == 6


async def test_long_messages_are_cut_from_the_middle(
    server: OpenAIServer, make_provider: Any
) -> None:
    server.push(Reply("ok"))
    long = "A" * 3000 + "B" * 3000
    messages: list[LLMMessage] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "old question " * 50},
        {"role": "assistant", "content": "old answer " * 50},
        {"role": "user", "content": long},
    ]
    await make_provider(max_prompt_chars=1000).chat(messages)
    sent = server.chat_requests[0].body["messages"]
    assert sent[0] == {"role": "system", "content": "Be brief."}
    assert sent[-1]["role"] == "user"
    assert sum(len(m["content"]) for m in sent) <= 1000
    assert sent[-1]["content"].startswith("AAA") and sent[-1]["content"].endswith("BBB")
    assert "characters cut" in sent[-1]["content"]


async def test_adapts_to_max_completion_tokens(server: OpenAIServer, make_provider: Any) -> None:
    server.push(
        Fail(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            param="max_tokens",
        ),
        Reply("ok"),
        Reply("ok"),
    )
    provider = make_provider(max_retries=0)
    await provider.chat(ASK, max_tokens=20)
    await provider.chat(ASK, max_tokens=20)
    bodies = [r.body for r in server.chat_requests]
    assert bodies[0]["max_tokens"] == 20
    assert bodies[1]["max_completion_tokens"] == 20 and "max_tokens" not in bodies[1]
    assert bodies[2]["max_completion_tokens"] == 20


async def test_adapts_to_servers_without_stream_options(
    server: OpenAIServer, make_provider: Any
) -> None:
    server.push(Fail(400, "Unrecognized request argument supplied: stream_options"), Reply("ok"))
    result = await make_provider(max_retries=0).chat(ASK)
    assert result.content == "ok"
    assert result.usage.estimated
    assert "stream_options" not in server.chat_requests[1].body


def test_one_provider_across_event_loops(server: OpenAIServer) -> None:
    provider = OpenAIProvider(base_url=server.base_url, api_key="k", model="m", max_retries=0)

    async def once() -> str:
        try:
            return (await provider.chat(ASK)).content
        finally:
            await provider.aclose()

    server.push(Reply("first"), Reply("second"))
    assert asyncio.run(once()) == "first"
    assert asyncio.run(once()) == "second"


def test_price_table_matching() -> None:
    prices = PriceTable.load()
    usage = Usage(1_000_000, 1_000_000)
    assert prices.cost("gpt-4o", usage) == pytest.approx(12.5)
    assert prices.cost("GPT-4o-mini-2024-07-18", usage) == pytest.approx(0.75)
    assert prices.cost("qwen-plus-latest", usage) == prices.cost("qwen-plus", usage)
    assert prices.cost("deepseek-chat", usage) is not None
    assert prices.cost("gpt-4o-audio-preview-2024-12-17", usage) is None  # not a dated gpt-4o
    assert prices.cost("scripted", usage) == 0
    assert prices.cost("local:SmolLM2-135M-Instruct.Q4_1", usage) == 0
    assert prices.cost("llama3.2:3b", usage) is None
    assert prices.cost("", usage) is None
    assert "gpt-4.1-mini" in prices


def test_user_prices_override_the_shipped_ones(isolated: Any) -> None:
    from skillrt.llm.prices import user_prices_path

    path = user_prices_path()
    assert str(path).startswith(str(isolated.parent))  # the test's own XDG_CONFIG_HOME
    path.parent.mkdir(parents=True)
    path.write_text(
        '[models]\n"gpt-4o" = { input = 1, output = 1 }\n"my-llama" = { input = 0, output = 0 }\n'
        '[patterns]\n"local:*" = { input = 5, output = 5 }\n'
    )
    prices = PriceTable.load()
    usage = Usage(1_000_000, 0)
    assert prices.cost("gpt-4o", usage) == 1
    assert prices.cost("gpt-4o-2024-08-06", usage) == 1
    assert prices.cost("my-llama", usage) == 0
    assert prices.cost("local:x", usage) == 5  # the user's pattern wins
    assert prices.cost("gpt-4o-mini", usage) == pytest.approx(0.15)  # the rest is kept


def test_price_table_rejects_bad_data(tmp_path: Any) -> None:
    from skillrt.exceptions import ConfigError

    path = tmp_path / "prices.toml"
    path.write_text('[models]\n"m" = { input = "cheap" }\n')
    with pytest.raises(ConfigError, match=r"models\.m"):
        PriceTable.load(path)
    path.write_text("[models\n")
    with pytest.raises(ConfigError, match="TOML"):
        PriceTable.load(path)


async def test_error_message_is_bounded(server: OpenAIServer, make_provider: Any) -> None:
    server.push(Fail(400, "x" * 5000))
    with pytest.raises(BadRequest) as caught:
        await make_provider().chat(ASK)
    assert len(str(caught.value)) < 1000
