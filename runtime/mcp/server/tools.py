"""The tools: every registered skill (its name, description and params' JSON Schema), plus
``ask`` (free text, as ``process_input``) and ``answer`` (the reply to a task's question).

``parse_call`` checks a call's arguments the way the HTTP API does (the skill's pydantic
params model), so a refusal names the same fields with the same words (``params.topic: Field
required``; the HTTP API puts ``body.`` before them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp import types
from pydantic import ValidationError

from skillrt._io.validation import problems
from skillrt.agent import ID_CHARS, check_length
from skillrt.exceptions import UserError
from skillrt.skill.definition import Skill

__all__ = ["ANSWER", "ASK", "Call", "Refused", "list_tools", "parse_call"]

ASK = "ask"
ANSWER = "answer"

_ASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "What you want, in your words."},
        "current_file": {
            "type": "string",
            "description": "The post open in the editor (a path under the blog), if any.",
        },
        "selected_text": {"type": "string", "description": "The text selected in it, if any."},
    },
    "required": ["text"],
    "additionalProperties": False,
}
_ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task_id": {"type": "string", "description": "The task that asked."},
        "text": {"type": "string", "description": "Your answer to its question."},
    },
    "required": ["task_id", "text"],
    "additionalProperties": False,
}


_TASKS = types.ToolExecution(taskSupport="optional")  # any call may run as an MCP task
_RANK = {"read": 0, "web": 1, "write": 2, "delete": 3}


def _annotations(effects: list[str]) -> types.ToolAnnotations:
    """What the skill's intents do, as MCP's hints (an editor asks before a tool that writes)."""
    worst = max(effects or ["read"], key=lambda e: _RANK.get(e, 2))
    return types.ToolAnnotations(
        readOnlyHint=worst in ("read", "web"),
        destructiveHint=worst == "delete",
        openWorldHint="web" in effects,
    )


def _skill_tool(skill: Skill[Any], effects: list[str]) -> types.Tool:
    schema = skill.params.model_json_schema()
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return types.Tool(
        name=skill.name,
        title=skill.name,
        description=skill.description or skill.name,
        inputSchema=schema,
        annotations=_annotations(effects),
        execution=_TASKS,
    )


def list_tools(
    skills: Mapping[str, Skill[Any]], effects: Mapping[str, str] | None = None
) -> list[types.Tool]:
    """Every skill as a tool, then ``ask`` and ``answer`` (a skill of the same name wins).
    ``effects`` gives each intent's effect (``read``, ``web``, ``write``, ``delete``)."""
    known = effects or {}
    tools = [_skill_tool(s, [known.get(i, "write") for i in s.intents]) for s in skills.values()]
    if ASK not in skills:
        tools.append(
            types.Tool(
                name=ASK,
                title="Ask skillrt",
                description="Ask in free text, as in the chat: skillrt picks the skill (write,"
                " edit, summarise, answer from the blog, research the web...).",
                inputSchema=_ASK_SCHEMA,
                execution=_TASKS,
            )
        )
    if ANSWER not in skills:
        tools.append(
            types.Tool(
                name=ANSWER,
                title="Answer a task's question",
                description="Answer the question a task asked (its result said"
                " state WAITING_INPUT and gave its task_id).",
                inputSchema=_ANSWER_SCHEMA,
                execution=_TASKS,
            )
        )
    return tools


@dataclass(frozen=True, slots=True)
class Call:
    """A checked call: ``kind`` is ``skill``, ``ask`` or ``answer``."""

    kind: str
    name: str
    params: dict[str, Any]


class Refused(Exception):
    """A call that cannot run; ``reason`` says why in the words of the HTTP API."""

    def __init__(self, reason: str, **data: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        self.data = data


def _text(arguments: dict[str, Any], key: str, limit: int | None = None) -> str:
    """The argument ``key``, a non-empty string of at most ``limit`` characters (an id's): a
    10,000-character ``task_id`` came back whole in the error that no such task waits."""
    value = arguments.get(key)
    if not isinstance(value, str) or not value.strip():
        raise Refused(f"{key}: a non-empty string is required", field=key)
    if limit is not None:
        try:
            check_length(key, value, limit, "an id")
        except UserError as exc:
            raise Refused(str(exc), field=key) from None
    return value


def _known_only(name: str, arguments: dict[str, Any], schema: dict[str, Any]) -> None:
    """Refuse an argument the tool does not take: ``{"text": "shorten the intro",
    "currentFile": "posts/a.md"}`` ran without the file, on the session's focus or a post
    the model picked, as if the editor had named none."""
    known = schema["properties"]
    unknown = sorted(key for key in arguments if key not in known)
    if unknown:
        raise Refused(
            f"{name}: unknown argument {unknown[0]!r} (it takes: {', '.join(known)})",
            field=unknown[0],
        )


def parse_call(
    skills: Mapping[str, Skill[Any]], name: str, arguments: dict[str, Any] | None
) -> Call:
    """The call, checked; ``Refused`` for an unknown tool or bad arguments."""
    args = arguments or {}
    if not isinstance(args, dict):
        raise Refused("the arguments must be an object")
    skill = skills.get(name)
    if skill is not None:
        try:
            params = skill.parse_params(args).model_dump(mode="json")
        except ValidationError as exc:
            found = problems(exc.errors(), prefix=("params",))
            raise Refused(found.line, errors=found.rows) from None
        return Call("skill", name, params)
    if name == ASK:
        _known_only(name, args, _ASK_SCHEMA)
        context = {k: args[k] for k in ("current_file", "selected_text") if args.get(k)}
        return Call("ask", name, {"text": _text(args, "text"), "context": context})
    if name == ANSWER:
        _known_only(name, args, _ANSWER_SCHEMA)
        return Call(
            "answer",
            name,
            {"task_id": _text(args, "task_id", ID_CHARS), "text": _text(args, "text")},
        )
    known = ", ".join([*sorted(skills), ASK, ANSWER])
    raise Refused(f"no tool {name!r} (known: {known})")
