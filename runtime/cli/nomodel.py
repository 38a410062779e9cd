"""The model of commands that never call one (tasks, abandon, doctor, index)."""

from __future__ import annotations

from skillrt.exceptions import UserError
from skillrt.llm.base import BaseLLM, LLMRequest, LLMResult

__all__ = ["NoModel"]


class NoModel(BaseLLM):
    """Loading the embedded model just to list tasks would take seconds for nothing."""

    @property
    def model(self) -> str:
        return "none"

    async def _generate(self, request: LLMRequest) -> LLMResult:
        raise UserError("this command does not load a model")

    _generate_structured = _generate
