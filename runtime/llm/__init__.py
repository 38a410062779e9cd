"""The LLM layer: one protocol, several providers."""

from skillrt.llm.base import LLM, LLMMessage, LLMResult, StreamCallback, Usage

__all__ = ["LLM", "LLMMessage", "LLMResult", "StreamCallback", "Usage"]
