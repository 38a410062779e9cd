"""Provider selection: create_llm and describe_llm."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillrt.exceptions import ConfigError, UserError
from skillrt.llm.local import LocalProvider
from skillrt.llm.openai_provider import OpenAIProvider
from skillrt.llm.select import create_llm, describe_llm
from skillrt.settings import load_config
from skillrt.testing import ScriptedModel
from tests.openai_server import OpenAIServer, Reply


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as srv:
        yield srv


def test_auto_without_key_or_url_is_local() -> None:
    llm, why = create_llm(load_config())
    assert isinstance(llm, LocalProvider)
    assert "no API key or base URL" in why
    info = describe_llm(load_config())
    assert info["provider"] == "local"
    assert info["model"] == llm.model
    assert info["base_url"] is None
    llm.close()


def test_auto_with_openai_api_key_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-1234567890")
    llm, why = create_llm(load_config())
    assert isinstance(llm, OpenAIProvider)
    assert llm.model == "gpt-4o-mini"
    assert llm.base_url == "https://api.openai.com/v1"
    assert "OPENAI_API_KEY is set" in why
    assert "sk-from-env" not in why
    info = describe_llm(load_config())
    assert info["api_key"] == "set"
    assert "sk-from-env" not in json.dumps(info)
    assert info["ready"] is True


def test_auto_with_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    llm, why = create_llm(load_config(llm={"model": "qwen2.5:7b"}))
    assert isinstance(llm, OpenAIProvider)
    assert llm.base_url == "http://127.0.0.1:11434/v1"
    assert llm.model == "qwen2.5:7b"
    assert "OPENAI_BASE_URL is set" in why

    monkeypatch.setenv("SKILLRT_LLM__BASE_URL", "http://127.0.0.1:8080/v1")
    llm, why = create_llm(load_config())
    assert isinstance(llm, OpenAIProvider)
    assert llm.base_url == "http://127.0.0.1:8080/v1"  # skillrt's own setting wins
    assert "llm.base_url" in why


def test_structured_output_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLRT_LLM__BASE_URL", "http://127.0.0.1:8080/v1")
    llm, _ = create_llm(load_config())
    assert isinstance(llm, OpenAIProvider)
    assert llm.structured_output == "auto" and llm.structured_mode == "json_schema"
    monkeypatch.setenv("SKILLRT_LLM__STRUCTURED_OUTPUT", "json_object")
    llm, _ = create_llm(load_config())
    assert isinstance(llm, OpenAIProvider)
    assert llm.structured_output == "json_object" and llm.structured_mode == "json_object"
    monkeypatch.setenv("SKILLRT_LLM__STRUCTURED_OUTPUT", "xml")
    with pytest.raises(ConfigError, match="structured_output"):
        load_config()


def test_structured_output_from_a_config_file(isolated: Path) -> None:
    (isolated / "skillrt.toml").write_text(
        '[llm]\nbase_url = "http://127.0.0.1:8080/v1"\nstructured_output = "prompt"\n'
    )
    llm, _ = create_llm(load_config())
    assert isinstance(llm, OpenAIProvider)
    assert llm.structured_mode == "prompt"


def test_configured_openai_provider_talks_to_the_endpoint(server: OpenAIServer) -> None:
    import asyncio

    config = load_config(
        llm={"base_url": server.base_url, "api_key": "sk-config", "model": "deepseek-chat"}
    )
    llm, why = create_llm(config)
    assert "api key is configured" in why.lower()
    server.push(Reply("hello", prompt_tokens=100, completion_tokens=10))

    async def ask() -> None:
        assert isinstance(llm, OpenAIProvider)
        try:
            result = await llm.chat([{"role": "user", "content": "hi"}])
        finally:
            await llm.aclose()
        assert result.content == "hello"
        assert result.cost is not None and result.cost > 0

    asyncio.run(ask())
    assert server.chat_requests[0].headers["authorization"] == "Bearer sk-config"


@pytest.mark.local_model  # describe_llm checks llama-cpp-python before the file
def test_local_with_a_missing_model_file(tmp_path: Path) -> None:
    config = load_config(llm={"provider": "local", "model_path": str(tmp_path / "nope.gguf")})
    info = describe_llm(config)
    assert info["provider"] == "local"
    assert info["model"] == "nope"
    assert info["ready"] is False
    assert "nope.gguf" in info["problem"]


def test_openai_without_key_is_not_ready() -> None:
    info = describe_llm(load_config(llm={"provider": "openai"}))
    assert info["ready"] is False
    assert "API key" in info["problem"]


def test_scripted_needs_a_script(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="script_path"):
        create_llm(load_config(llm={"provider": "scripted"}))
    script = tmp_path / "answers.json"
    script.write_text(json.dumps(["one", {"type": "SUMMARIZE", "confidence": 0.9}]))
    llm, why = create_llm(load_config(llm={"provider": "scripted", "script_path": str(script)}))
    assert isinstance(llm, ScriptedModel)
    assert llm.remaining == 2
    assert "answers.json" in why
    assert describe_llm(load_config(llm={"provider": "scripted", "script_path": str(script)}))[
        "ready"
    ]


def test_a_model_of_your_own_named_by_its_import_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLRT_LLM__PROVIDER", "python")
    monkeypatch.setenv("SKILLRT_LLM__FACTORY", "tests.writing_support:followup_model")
    llm, why = create_llm(load_config())
    assert llm.model == "function" and "tests.writing_support:followup_model" in why
    assert describe_llm(load_config())["ready"] is True
    for bad, said in (
        ("", "needs llm.factory"),
        ("tests.writing_support", "needs llm.factory"),
        ("tests.nowhere:make", "cannot be imported"),
        ("tests.writing_support:nothing", "cannot be imported"),
        ("tests.writing_support:OUTLINE_EN", "not a class or a function"),
    ):
        monkeypatch.setenv("SKILLRT_LLM__FACTORY", bad)
        with pytest.raises(UserError, match=said):
            create_llm(load_config())
        info = describe_llm(load_config())
        assert info["ready"] is False and said in info["problem"]
