"""Structured output: the loop every provider runs to get an answer that validates.

``ask_structured`` sends requests through a provider's ``ask`` until an answer validates
against the call's ``response_model`` (``parse_structured``), at most ``attempts`` requests in
all. After an answer that does not validate, the next request is a repair (the conversation,
the bad answer, and what was wrong with it), unless the previous one already was (then it asks
afresh) or the provider repairs its own way (``repair=False``: the provider changes the request
by ``Attempt.number``, as the local provider tightens its grammar). Usage adds up over every
request; only the answer that validated reaches ``stream_cb``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from skillrt.exceptions import StructuredOutputError
from skillrt.llm.base import (
    LLMMessage,
    LLMRequest,
    LLMResult,
    Usage,
    bound_messages,
    call_stream_cb,
    parse_structured,
    truncate_middle,
)

__all__ = ["Attempt", "Reply", "ask_structured"]

REPAIR_REQUEST = (
    "That answer could not be used: {error}\n"
    "Reply with only the corrected JSON object, matching the schema."
)


@dataclass(frozen=True, slots=True)
class Reply:
    """What a model answered to one request."""

    content: str
    usage: Usage
    model: str
    capped: bool = False  # its strings were cut to a fallback grammar's length


@dataclass(frozen=True, slots=True)
class Attempt:
    """One request of a structured call. ``number`` counts every request from 0; ``answer``
    and ``error`` are set when this request repairs the answer before it."""

    number: int
    answer: str = ""
    error: str = ""

    @property
    def repair(self) -> bool:
        return bool(self.error)

    def conversation(self, messages: Sequence[LLMMessage], max_chars: int) -> list[LLMMessage]:
        """``messages``; for a repair, followed by the bad answer and a request to correct it,
        the whole fitted into ``max_chars``."""
        if not self.repair:
            return list(messages)
        request = REPAIR_REQUEST.format(error=truncate_middle(self.error, 2000))
        return bound_messages(
            [
                *messages,
                {"role": "assistant", "content": truncate_middle(self.answer, 20_000)},
                {"role": "user", "content": request},
            ],
            max_chars,
        )


Ask = Callable[[Attempt], Awaitable[Reply | None]]
"""Sends one request. None: it gave no answer to judge (a server refused the response format
and the provider moved on to another); the next request asks afresh."""


async def ask_structured(
    request: LLMRequest,
    ask: Ask,
    *,
    attempts: int,
    price: Callable[[str, Usage], float | None],
    provider: str,
    model: str,
    where: str,
    repair: bool = True,
) -> LLMResult:
    """The first answer that validates against ``request.response_model``, as an ``LLMResult``
    priced by ``price(model, usage)``, or ``StructuredOutputError`` (carrying the last raw
    answer) after ``attempts`` requests. ``where`` says who gave no answer, in that error."""
    response_model = request.output_model
    total = Usage()
    attempt = Attempt(0)
    last = Reply("", Usage(), model)
    error = "no answer"
    for number in range(1, attempts + 1):
        reply = await ask(attempt)
        if reply is None:
            attempt = Attempt(number)
            continue
        total += reply.usage
        last = reply
        try:
            parsed = parse_structured(reply.content, response_model)
        except StructuredOutputError as exc:
            error = str(exc)
            again = repair and not attempt.repair
            attempt = Attempt(number, reply.content, error) if again else Attempt(number)
            continue
        await call_stream_cb(request.stream_cb, reply.content)
        return LLMResult(
            content=reply.content,
            parsed=parsed,
            usage=total,
            cost=price(reply.model, total),
            model=reply.model,
            capped=reply.capped,
        )
    raise StructuredOutputError(
        f"{where} gave no answer matching {response_model.__name__} in {attempts} request(s): "
        f"{truncate_middle(error, 1000)}",
        raw=last.content,
        provider=provider,
        model=last.model,
    )
