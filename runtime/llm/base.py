"""The one protocol every model speaks, and the value it returns.

``await llm.chat(messages, *, signal, response_model=None, max_tokens=None,
temperature=None, stream_cb=None) -> LLMResult``
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypedDict, TypeVar, runtime_checkable

from pydantic import BaseModel, ValidationError

from skillrt.abort import AbortSignal
from skillrt.exceptions import StructuredOutputError

__all__ = [
    "LLM",
    "LLMMessage",
    "LLMResult",
    "StreamCallback",
    "Usage",
    "call_stream_cb",
    "estimate_tokens",
    "parse_structured",
]

M = TypeVar("M", bound=BaseModel)

StreamCallback = Callable[[str], object]
"""Receives each text delta as it arrives; may be sync or return an awaitable."""


class LLMMessage(TypedDict):
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass(slots=True)
class LLMResult:
    """What a model answered. ``cost`` is None when the model has no price (unpriced, not free)."""

    content: str
    parsed: BaseModel | None = None
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
    model: str = ""

    def parsed_as(self, model: type[M]) -> M:
        """The structured answer, typed; raises if the call had no matching ``response_model``."""
        if not isinstance(self.parsed, model):
            raise StructuredOutputError(
                f"expected a parsed {model.__name__}, got {type(self.parsed).__name__}",
                raw=self.content,
                model=self.model,
            )
        return self.parsed


@runtime_checkable
class LLM(Protocol):
    """A chat model. Implementations: the openai and local providers, the test models."""

    @property
    def model(self) -> str: ...

    async def chat(
        self,
        messages: Sequence[LLMMessage],
        *,
        signal: AbortSignal | None = None,
        response_model: type[BaseModel] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stream_cb: StreamCallback | None = None,
    ) -> LLMResult: ...


def estimate_tokens(text: str) -> int:
    """A rough token count (about four characters a token, one a CJK character)."""
    cjk = sum(1 for ch in text if "\u3000" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff")
    return cjk + max(0, len(text) - cjk + 3) // 4


async def call_stream_cb(stream_cb: StreamCallback | None, delta: str) -> None:
    """Deliver one delta to a sync or async stream callback."""
    if stream_cb is None or not delta:
        return
    out = stream_cb(delta)
    if inspect.isawaitable(out):
        await out


def _strip_fences(text: str) -> str:
    text = text.strip()
    if text.startswith("```"):
        first_newline = text.find("\n")
        text = text[first_newline + 1 :] if first_newline != -1 else text[3:]
        if text.rstrip().endswith("```"):
            text = text.rstrip()[:-3]
    return text.strip()


def _first_json_object(text: str) -> str:
    """The first balanced ``{...}`` in ``text`` (models like to add prose around JSON)."""
    start = text.find("{")
    if start == -1:
        return text
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return text[start:]


def parse_structured(raw: str | dict[str, object], response_model: type[M]) -> M:
    """Validate a model's answer against ``response_model``.

    Accepts a dict or JSON text, tolerating code fences and prose around the object.
    Raises ``StructuredOutputError`` (carrying the raw text) when it does not fit.
    """
    if isinstance(raw, dict):
        try:
            return response_model.model_validate(raw)
        except ValidationError as exc:
            raise StructuredOutputError(
                f"answer does not match {response_model.__name__}: {exc}", raw=json.dumps(raw)
            ) from exc
    candidates = [raw, _strip_fences(raw)]
    candidates.append(_first_json_object(candidates[-1]))
    last_error: Exception | None = None
    for candidate in candidates:
        try:
            return response_model.model_validate_json(candidate)
        except ValidationError as exc:
            last_error = exc
    raise StructuredOutputError(
        f"answer is not valid JSON for {response_model.__name__}: {last_error}", raw=raw
    )
