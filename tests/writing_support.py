"""Shared pieces of the writing-skill tests: a runtime over a copy of the fixture blog and a
test model that answers each kind of prompt of the writing skills."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from skillrt import LLM, AgentRuntime, load_config
from skillrt.llm.base import LLMMessage
from skillrt.messages import ChatMessage
from skillrt.skills.writing import prompts, writing_skills
from skillrt.skills.writing.checks import kind_of
from skillrt.testing import Answer, ModelOptions

OUTLINE_ZH: dict[str, Any] = {
    "title": "Rust 所有权：移动、复制与借用",
    "description": "一篇讲清 Rust 所有权规则的文章。",
    "tags": ["rust", "所有权"],
    "sections": [
        {"heading": "什么是所有权", "points": ["每个值都有一个所有者"]},
        {"heading": "移动与复制", "points": ["String 会移动", "整数会复制"]},
    ],
}
OUTLINE_EN: dict[str, Any] = {
    "title": "Understanding Rust Ownership",
    "description": "Ownership rules, moves and borrows.",
    "tags": ["rust", "ownership"],
    "sections": [
        {"heading": "What ownership means", "points": ["one owner per value"]},
        {"heading": "Moves and copies", "points": []},
        {"heading": "Borrowing instead of moving", "points": []},
    ],
}
SECTION_ZH = [
    "## 什么是所有权\n\nRust 中每个值都有一个所有者，所有者离开作用域时值被释放。"
    "参见 [[rust-borrowing]]。",
    '```rust\nlet a = String::from("hi");\nlet b = a; // a 被移动\n```\n\n'
    "整数实现了 Copy，赋值时复制。",
]
SECTION_EN = [
    "Every value in Rust has exactly one owner; when the owner goes out of scope, the value "
    "is dropped.",
    "Assigning a `String` moves it; integers are `Copy`.",
    "Borrowing lets you use a value without taking ownership: see [[rust-borrowing]].",
]
EXTRACTION: dict[str, Any] = {
    "entities": [
        {
            "name": "Rust",
            "type": "language",
            "description": "A systems programming language.",
            "mentions": ["Rust 中每个值"],
        },
        {"name": "Copy trait", "type": "concept", "description": "Types copied on assignment."},
    ]
}


def zh_script() -> list[Answer]:
    return [OUTLINE_ZH, *SECTION_ZH, EXTRACTION]


def en_script() -> list[Answer]:
    return [OUTLINE_EN, *SECTION_EN, EXTRACTION]


def writing_runtime(blog: Path, model: LLM, **overrides: Any) -> AgentRuntime:
    """A runtime over ``blog`` with its state beside it and only the writing skills."""
    overrides.setdefault("state_dir", blog.parent / "state")
    config = load_config(content_root=blog, **overrides)
    return AgentRuntime(config, llm=model, skills=writing_skills())


async def run_writing_skill(
    blog: Path, model: LLM, skill: str, params: dict[str, Any], **overrides: Any
) -> ChatMessage:
    """``skill`` run once with ``params`` on a fresh ``writing_runtime``, closed after."""
    rt = writing_runtime(blog, model, **overrides)
    await rt.initialize()
    try:
        return await rt.run_skill(skill, params)
    finally:
        await rt.close()


def prompt_kind(messages: list[LLMMessage]) -> str:
    """Which writing prompt this is: outline, section, extract, edit, answer, summary..."""
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    kinds = {
        "outline": prompts.OUTLINE_SYSTEM,
        "section": prompts.SECTION_SYSTEM,
        "extract": prompts.EXTRACT_SYSTEM,
        "edit": prompts.EDIT_SYSTEM,
        "answer": prompts.ANSWER_SYSTEM,
        "explain": prompts.EXPLAIN_SYSTEM,
        "summary_part": prompts.SUMMARY_PART_SYSTEM,
        "summary_combine": prompts.SUMMARY_COMBINE_SYSTEM,
        "summary": prompts.SUMMARY_SYSTEM,
    }
    kinds |= {"outline_zh": prompts.ARTICLE_ZH.outline, "section_zh": prompts.ARTICLE_ZH.section}
    for kind, start in kinds.items():
        if system.startswith(start.split("{")[0]):
            return kind.removesuffix("_zh")  # a Chinese article's prompts are Chinese
    return "other"


def section_number(messages: list[LLMMessage]) -> int | None:
    """The number of the section a section prompt asks for, in English or Chinese."""
    found = re.search(r"Write section (\d+)|请写第 (\d+) 节", messages[-1]["content"])
    return int(found.group(1) or found.group(2)) if found else None


class WritingModelFn:
    """A ``FunctionModel`` callable that answers each writing prompt by its kind."""

    def __init__(self, outline: dict[str, Any] | None = None) -> None:
        self.outline = outline or OUTLINE_EN
        self.kinds: list[str] = []

    def __call__(self, messages: list[LLMMessage], options: ModelOptions) -> Answer:
        kind = prompt_kind(messages)
        self.kinds.append(kind)
        if kind == "outline":
            return self.outline
        if kind == "extract":
            return EXTRACTION
        if kind == "section":
            return f"Section {section_number(messages) or '?'} text about ownership."
        return f"({kind}) answer"


class FollowUpModel(WritingModelFn):
    """The writing model, with every edit different (so each edit changes the file)."""

    def __call__(self, messages: list[LLMMessage], options: ModelOptions) -> Any:
        answer = super().__call__(messages, options)
        if self.kinds[-1] == "edit":  # an addition keeps the text (the edit's checks see to it)
            instruction, _, original = messages[-1]["content"].partition("\n\nText:\n")
            if kind_of(instruction) == "add":
                return f"{original.rstrip()}\n\nAdded part number {len(self.kinds)}.\n"
            if kind_of(instruction) == "shorten":
                words = original.split()
                return " ".join(words[: max(1, len(words) // 2)]) + "\n"
            return f"Edited body number {len(self.kinds)}.\n"
        return answer


def followup_model() -> LLM:
    """The follow-up model as a CLI process loads it: ``llm.provider = "python"``,
    ``llm.factory = "tests.writing_support:followup_model"``."""
    from skillrt.testing import FunctionModel

    return FunctionModel(FollowUpModel())
