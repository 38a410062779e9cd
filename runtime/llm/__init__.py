"""The LLM layer: one protocol (``BaseLLM.chat``), several providers.

The providers import their SDKs, so they are loaded on first use:
``from skillrt.llm import OpenAIProvider`` imports ``openai`` only then. The protocol's own
names (``skillrt.llm.base``) load on first use too: ``skillrt doctor`` describes the model
through ``skillrt.llm.select`` without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillrt.llm.base import (
        LLM,
        BaseLLM,
        LLMMessage,
        LLMRequest,
        LLMResult,
        StreamCallback,
        Usage,
    )
    from skillrt.llm.local import LocalProvider
    from skillrt.llm.openai_provider import OpenAIProvider
    from skillrt.llm.prices import Price, PriceTable
    from skillrt.llm.select import create_llm, describe_llm

__all__ = [
    "LLM",
    "BaseLLM",
    "LLMMessage",
    "LLMRequest",
    "LLMResult",
    "LocalProvider",
    "OpenAIProvider",
    "Price",
    "PriceTable",
    "StreamCallback",
    "Usage",
    "create_llm",
    "describe_llm",
]

_LAZY = {
    **dict.fromkeys(
        ("LLM", "BaseLLM", "LLMMessage", "LLMRequest", "LLMResult", "StreamCallback", "Usage"),
        "skillrt.llm.base",
    ),
    "LocalProvider": "skillrt.llm.local",
    "OpenAIProvider": "skillrt.llm.openai_provider",
    "Price": "skillrt.llm.prices",
    "PriceTable": "skillrt.llm.prices",
    "create_llm": "skillrt.llm.select",
    "describe_llm": "skillrt.llm.select",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'skillrt.llm' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
