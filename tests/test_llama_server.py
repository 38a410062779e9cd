"""The openai provider against a real model server: llama-cpp-python's own OpenAI-compatible
server (``python -m llama_cpp.server``) running the shipped SmolLM2 GGUF on 127.0.0.1.

What it shows about that server: ``json_schema`` is a 500, ``json_object`` with a ``schema`` is
grammar-constrained, streams carry no usage, and a client that goes away stops the generation.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from skillrt import SkillContext, SkillResult, skill
from skillrt.exceptions import ProviderUnavailable, StructuredOutputError
from skillrt.llm.base import LLMMessage
from skillrt.llm.openai_provider import OpenAIProvider
from tests import llama_server
from tests.cli_support import skillrt
from tests.helpers import Recorder, TopicParams, make_runtime
from tests.recording_proxy import RecordingProxy, streamed_text

pytestmark = [pytest.mark.local_model, pytest.mark.slow]

ASK: list[LLMMessage] = [{"role": "user", "content": "Say hello in one short sentence."}]


class Title(BaseModel):
    title: str


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[llama_server.LlamaServer]:
    why = llama_server.missing()
    if why is not None:
        if llama_server.REQUIRE_LOCAL_MODEL:
            pytest.fail(why + " (SKILLRT_REQUIRE_LOCAL_MODEL=1)")
        pytest.skip(why)
    server = llama_server.start(tmp_path_factory.mktemp("llama") / "server.log")
    try:
        yield server
    finally:
        llama_server.stop(server)


@pytest.fixture
async def provider(llama: llama_server.LlamaServer) -> AsyncIterator[Any]:
    made: list[OpenAIProvider] = []

    def make(**kwargs: Any) -> OpenAIProvider:
        options: dict[str, Any] = {
            "base_url": llama.base_url,
            "model": "smollm2",
            "timeout_s": 60,
            "max_retries": 0,
            "temperature": 0.0,
        }
        options.update(kwargs)
        made.append(OpenAIProvider(**options))
        return made[-1]

    yield make
    for p in made:
        await p.aclose()


async def test_chat(provider: Any) -> None:
    result = await provider().chat(ASK, max_tokens=30)
    assert result.content.strip()
    assert result.model == "smollm2"  # the server answers with the name it was asked for
    assert result.cost is None  # unpriced, not free


async def test_streaming(provider: Any) -> None:
    deltas: list[str] = []
    result = await provider().chat(ASK, max_tokens=30, stream_cb=deltas.append)
    assert len(deltas) > 3  # token by token, not one block
    assert "".join(deltas) == result.content


async def test_usage(provider: Any) -> None:
    streamed = await provider().chat(ASK, max_tokens=20)
    assert streamed.usage.estimated  # this server sends no usage in a stream
    assert streamed.usage.completion_tokens > 0
    whole = provider(stream=False)
    result = await whole.chat(ASK, max_tokens=20)
    assert not result.usage.estimated  # a whole answer carries the server's own counts
    assert result.usage.prompt_tokens > 5 and 0 < result.usage.completion_tokens <= 20


async def test_structured_auto_reaches_json_object_despite_the_500(provider: Any) -> None:
    llm = provider()  # structured_output = "auto"
    result = await llm.chat(
        [{"role": "user", "content": "Give a title for a post about green tea."}],
        response_model=Title,
        max_tokens=60,
    )
    assert result.parsed_as(Title).title.strip()
    assert llm.structured_mode == "json_object"  # json_schema was refused with a 500


async def test_structured_json_object_is_grammar_constrained(provider: Any) -> None:
    result = await provider(structured_output="json_object").chat(
        [{"role": "user", "content": "Give a title for a post about black tea."}],
        response_model=Title,
        max_tokens=60,
    )
    assert json.loads(result.content) == result.parsed_as(Title).model_dump()


async def test_structured_json_schema_is_refused_by_this_server(provider: Any) -> None:
    with pytest.raises(ProviderUnavailable, match=r"(?s)HTTP 500.*response_format"):
        await provider(structured_output="json_schema").chat(
            ASK, response_model=Title, max_tokens=60
        )


async def test_structured_prompt_mode(llama: llama_server.LlamaServer, provider: Any) -> None:
    # What the client really sends and gets, through a recording proxy: no response_format in
    # any request, the schema in the system message; then either an answer that validates or,
    # after the answer and its repair (structured_retries=0: one round), StructuredOutputError
    # carrying the model's last answer. A 135M model without a grammar may do either.
    with RecordingProxy(llama.base_url) as proxy:
        llm = provider(base_url=proxy.base_url, structured_output="prompt", structured_retries=0)
        outcome: Any
        try:
            outcome = await llm.chat(
                [{"role": "user", "content": "Give a title for a post about oolong tea."}],
                response_model=Title,
                max_tokens=60,
            )
        except StructuredOutputError as exc:
            outcome = exc
    sent = [e.request for e in proxy.exchanges]
    answers = [streamed_text(e.response) for e in proxy.exchanges]
    assert [e.status for e in proxy.exchanges] == [200] * len(sent)
    assert 1 <= len(sent) <= 2
    for body in sent:
        assert "response_format" not in body
        system = body["messages"][0]
        assert system["role"] == "system" and '"title"' in system["content"]  # the schema
    assert llm.structured_mode == "prompt"
    if len(sent) == 2:  # the first answer did not validate: the second request repairs it
        repair = sent[1]["messages"]
        assert repair[-2] == {"role": "assistant", "content": answers[0]}
        assert "could not be used" in repair[-1]["content"]
    if isinstance(outcome, StructuredOutputError):
        assert len(sent) == 2  # the answer and its repair, then it stops
        assert outcome.raw == answers[1]
        assert "no answer matching Title in 2 request(s)" in str(outcome)
    else:
        assert outcome.content == answers[-1]  # the answer that validated
        assert outcome.parsed_as(Title).title.strip()


def test_write_article_through_the_cli(llama: llama_server.LlamaServer, tmp_path: Path) -> None:
    blog = tmp_path / "blog"  # an empty blog: no related posts to read, short prompts
    (blog / "posts").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "OPENAI_"))}
    env.update(
        SKILLRT_LLM__BASE_URL=llama.base_url,
        SKILLRT_LLM__MODEL="smollm2",
        SKILLRT_LLM__TEMPERATURE="0",
        SKILLRT_CONTENT_ROOT=str(blog),
        NO_COLOR="1",
        TERM="dumb",
        PYTHONUNBUFFERED="1",
    )
    done = skillrt(
        "run",
        "--json",
        "write a short article about green tea in 60 words",
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    message = json.loads(done.stdout)
    assert message["state"] == "COMPLETED"
    post = blog / message["data"]["path"]
    text = post.read_text(encoding="utf-8")
    assert text.startswith("---\n") and "title:" in text
    assert text.split("---", 2)[2].strip()  # a body


async def test_abort_mid_stream_stops_the_server_generating(
    llama: llama_server.LlamaServer, tmp_path: Path
) -> None:
    started = asyncio.Event()

    @skill(name="Ramble", params=TopicParams)
    async def ramble(ctx: SkillContext, params: TopicParams) -> SkillResult:
        def first(delta: str) -> None:
            started.set()

        result = await ctx.llm.chat(
            [{"role": "user", "content": f"Write a very long essay about {params.topic}."}],
            max_tokens=3000,
            stream_cb=first,
        )
        return SkillResult(success=True, message=result.content)

    llm = OpenAIProvider(base_url=llama.base_url, model="smollm2", timeout_s=60, max_retries=0)
    rt = make_runtime(tmp_path, llm, [ramble])
    events = Recorder(rt)
    logged = len(llama.log_text())
    job = asyncio.create_task(rt.run_skill("Ramble", {"topic": "tea"}))
    await asyncio.wait_for(started.wait(), 60)
    assert rt.abort()
    msg = await job
    assert msg.state == "CANCELLED"
    assert [e.data["reason"] for e in events.of("task:aborted")] == ["cancelled"]
    await rt.close()
    await llm.aclose()

    # The server serves one request at a time: a short one answered at once shows the long
    # one (3,000 tokens, tens of seconds here) stopped when the connection closed.
    asked = time.monotonic()
    reply = httpx.post(
        f"{llama.base_url}/chat/completions",
        json={"messages": ASK, "max_tokens": 5},
        timeout=30,
    )
    assert reply.status_code == 200
    assert time.monotonic() - asked < 5
    deadline = time.monotonic() + 5
    while "Disconnected from client" not in llama.log_text()[logged:]:
        assert time.monotonic() < deadline, llama.log_text()[logged:][-2000:]
        await asyncio.sleep(0.1)
