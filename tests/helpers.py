"""Small builders shared by tests (real runtime, real stores, test models)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from skillrt import LLM, AgentRuntime, Event, Skill, SkillContext, SkillResult, load_config, skill


class Recorder:
    """Collects every event of a runtime, in order."""

    def __init__(self, runtime: AgentRuntime) -> None:
        self.events: list[Event] = []
        runtime.on("*", self.events.append)

    def types(self, task_id: str | None = None) -> list[str]:
        return [e.type for e in self.events if task_id is None or e.task_id == task_id]

    def of(self, event_type: str) -> list[Event]:
        return [e for e in self.events if e.type == event_type]


def make_runtime(
    root: Path,
    llm: LLM,
    skills: list[Skill[Any]] | None = None,
    **overrides: Any,
) -> AgentRuntime:
    """A runtime over ``root`` (the blog) with its state in ``root/.skillrt``."""
    config = load_config(content_root=root, **overrides)
    return AgentRuntime(config, llm=llm, skills=skills if skills is not None else [])


def history_said(root: Path) -> list[str]:
    """The chat messages' contents in the history file of the runtime over ``root``, in
    order, read through a connection of their own (as another process would see them)."""
    other = sqlite3.connect(root / ".skillrt" / "history" / "history.db")
    try:
        rows = other.execute("SELECT data FROM messages").fetchall()
    finally:
        other.close()
    return [json.loads(d)["content"] for (d,) in rows]


class NoParams(BaseModel):
    pass


class TopicParams(BaseModel):
    topic: str


@skill(name="Writer", params=TopicParams, intents=["WRITE_ARTICLE"])
async def model_steps(ctx: SkillContext, params: TopicParams) -> SkillResult:
    """Three durable steps, each one model call about the topic (context, outline, content)."""
    for name in ("context", "outline", "content"):

        async def call() -> str:
            return (await ctx.llm.chat([{"role": "user", "content": params.topic}])).content

        await ctx.step(name, call)
    return SkillResult(message="done")
