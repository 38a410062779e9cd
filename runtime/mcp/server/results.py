"""What a tool call answers: the ``ChatMessage`` as text plus structured content.

The text is the message's Markdown; the structured content is its ``data`` with the task's id
and state beside it, so a client can fetch, resume or answer the task. A refusal (bad params,
an unknown tool, a task that failed) is an error result with the reason, never a protocol
error: the model on the other side reads it and can try again.

Whatever leaves for the client is redacted first, as the HTTP API redacts its replies and
problems (``redacted``, ``redacted_result``): an echoing model may repeat a key, and under
``skillrt serve`` the bearer token.
"""

from __future__ import annotations

from typing import Any

from mcp import types
from pydantic_core import to_jsonable_python

from skillrt._io.redaction import Redactor
from skillrt.messages import ChatMessage
from skillrt.outcomes import exit_code

__all__ = [
    "error_result",
    "is_waiting",
    "message_result",
    "redacted",
    "redacted_result",
    "structured",
]

# Exit codes that are no failure: done (0) and "not finished yet" (3: waiting, paused).
_NOT_ERRORS = frozenset({0, 3})


def structured(message: ChatMessage) -> dict[str, Any]:
    """The message's data as JSON, with ``task_id`` and ``state`` (the data's own keys win)."""
    data: dict[str, Any] = to_jsonable_python(message.data, fallback=str)
    return {"task_id": message.task_id, "state": message.state, **data}


def is_waiting(message: ChatMessage) -> bool:
    """The task asked a question and waits for the answer."""
    return message.state == "WAITING_INPUT"


def message_result(message: ChatMessage) -> types.CallToolResult:
    """A finished (or waiting) call: text plus structured content; an error when it failed."""
    content = message.content or "(no reply)"
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=content)],
        structuredContent=structured(message),
        isError=exit_code(message) not in _NOT_ERRORS,
    )


def error_result(reason: str, **data: Any) -> types.CallToolResult:
    """A refusal: the reason as text, and as ``error`` in the structured content."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=reason)],
        structuredContent={"error": reason, **data},
        isError=True,
    )


def redacted(redactor: Redactor, message: ChatMessage) -> ChatMessage:
    """``message`` as it may leave the process (the redactor's cheap scan first: most replies
    hold nothing to redact and are returned as they are)."""
    walked = redactor.dump(message)[1]
    return message if walked is None else ChatMessage.model_validate(walked)


def redacted_result(redactor: Redactor, result: types.CallToolResult) -> types.CallToolResult:
    """A tool result as it may leave the process: its text and structured content redacted."""
    if redactor.is_clean(result.model_dump_json()):
        return result
    content = [
        types.TextContent(type="text", text=redactor.text(block.text))
        if isinstance(block, types.TextContent)
        else block
        for block in result.content
    ]
    structured_content = result.structuredContent
    if structured_content is not None:
        structured_content = redactor(structured_content)
    return types.CallToolResult(
        content=content, structuredContent=structured_content, isError=result.isError
    )
