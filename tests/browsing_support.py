"""Helpers for the browsing tests.

``agent_model(policy)`` is a ``FunctionModel`` playing the browsing agent: it reads the page
from the prompt (the observation inside the untrusted block), asks ``policy(page, prompt)``
for the navigator's actions, and plays a planner that confirms the navigator's answer.
``make_runtime`` builds an ``AgentRuntime`` with the browsing skills and the test's firewall
(127.0.0.1 allowed explicitly, ``evil.example`` denied).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from skillrt import AgentRuntime, Event, load_config
from skillrt.llm.base import LLMMessage
from skillrt.skills.browsing import browsing_skills
from skillrt.skills.browsing.research import ResearchAnswer, SubQueries
from skillrt.skills.browsing.schemas import (
    ExtractOutput,
    NavigatorOutput,
    PlannerOutput,
    PredefinedPlannerOutput,
)
from skillrt.testing import FunctionModel, ModelOptions

_BLOCK = re.compile(
    r'<untrusted-page-content nonce="([0-9a-f]+)">\n(.*)\n</untrusted-page-content nonce="\1">',
    re.DOTALL,
)
_ELEMENT = re.compile(r'^\*?\[(\d+)\] (\w+) "([^"]*)"(.*)$', re.MULTILINE)
_ANSWER = re.compile(r"The navigator says the task is done\. Its answer: (.*)")
REQUIRE_CHROMIUM = os.environ.get("SKILLRT_REQUIRE_CHROMIUM") == "1"
"""Read at import: the shared conftest clears SKILLRT_* variables before each test."""


@dataclass
class PageView:
    """The page as the model saw it in a prompt."""

    url: str = ""
    title: str = ""
    elements: list[tuple[int, str, str, str]] = field(default_factory=list)
    text: str = ""
    raw: str = ""

    @property
    def path(self) -> str:
        return re.sub(r"^https?://[^/]+", "", self.url) or "/"

    def find(self, role: str, label: str) -> int:
        for index, got_role, got_label, _ in self.elements:
            if got_role == role and got_label == label:
                return index
        raise LookupError(f'no {role} "{label}" on {self.url}: {self.elements}')


def page_in(messages: list[LLMMessage]) -> PageView:
    content = messages[-1]["content"]
    found = _BLOCK.search(content)
    if found is None:
        return PageView()
    raw = found.group(2)
    url = re.search(r"^URL: (.*)$", raw, re.MULTILINE)
    title = re.search(r"^Title: (.*)$", raw, re.MULTILINE)
    text = raw.split("\nText:\n", 1)[1] if "\nText:\n" in raw else ""
    elements = [
        (int(m.group(1)), m.group(2), m.group(3), m.group(4)) for m in _ELEMENT.finditer(raw)
    ]
    return PageView(
        url.group(1) if url else "", title.group(1) if title else "", elements, text, raw
    )


Policy = Callable[[PageView, str], list[dict[str, Any]]]


def navigator_answer(prompt: str) -> str | None:
    found = _ANSWER.search(prompt)
    return found.group(1) if found else None


def agent_model(
    policy: Policy,
    *,
    planner: Callable[[PageView, str], dict[str, Any]] | None = None,
    delay: float = 0.0,
    calls: list[str] | None = None,
) -> FunctionModel:
    """A FunctionModel agent: ``policy`` navigates, the planner confirms a done answer."""

    def fn(messages: list[LLMMessage], options: ModelOptions) -> dict[str, Any]:
        model = options.response_model
        prompt = messages[-1]["content"]
        page = page_in(messages)
        if calls is not None:
            calls.append(model.__name__ if model else "text")
        if model is NavigatorOutput:
            return {
                "current_state": {"next_goal": f"work on {page.path}", "memory": ""},
                "actions": policy(page, prompt),
            }
        if planner is not None and model in (PlannerOutput, PredefinedPlannerOutput):
            return planner(page, prompt)
        answer = navigator_answer(prompt)
        if model is PlannerOutput:
            return {
                "step_by_step_reasoning": "follow the page",
                "proposed_actions": ["find the answer"],
                "task_complete": answer is not None,
                "final_answer": answer or "",
            }
        if model is PredefinedPlannerOutput:
            return predefined_planner(prompt, answer)
        if model is ExtractOutput:
            question = re.search(r"^Question: (.*)$", prompt, re.MULTILINE)
            words = [
                w for w in (question.group(1) if question else "").lower().split() if len(w) > 4
            ]
            text = page_text_of(prompt)
            scored = [(sum(w in ln.lower() for w in words), ln) for ln in text.splitlines()]
            best = max(scored, default=(0, ""))
            line = best[1] if best[0] else ""
            return {"answer": line or text[:200], "found": bool(line)}
        raise AssertionError(f"unexpected call for {model}")

    return FunctionModel(fn, delay=delay)


def predefined_planner(prompt: str, answer: str | None) -> dict[str, Any]:
    """Ticks the plan's steps as the history shows them done."""
    steps = re.findall(r"^\d+\. (.*)$", prompt, re.MULTILINE)
    done = answer is not None
    todo = "\n".join(f"- [{'x' if done else ' '}] {s}" for s in steps)
    return {
        "todo_markdown": todo,
        "proposed_actions": ["work through the checklist"],
        "all_todos_complete": done,
        "final_answer": answer or "",
    }


def page_text_of(prompt: str) -> str:
    found = _BLOCK.search(prompt)
    return found.group(2) if found else ""


def research_model(answer: str, *, queries: list[str] | None = None) -> FunctionModel:
    """A FunctionModel for ResearchWeb: fixed sub-queries and a fixed cited answer."""

    def fn(messages: list[LLMMessage], options: ModelOptions) -> dict[str, Any]:
        if options.response_model is SubQueries:
            return {"queries": queries or ["capital of Atlantis", "Atlantis harbour"]}
        if options.response_model is ResearchAnswer:
            return {"title": "Atlantis", "answer": answer}
        raise AssertionError(f"unexpected call for {options.response_model}")

    return FunctionModel(fn)


def make_runtime(
    tmp_path: Path, model: FunctionModel, config: dict[str, Any] | None = None, **browser: Any
) -> AgentRuntime:
    """A runtime with the browsing skills; ``browser`` overrides ``[browser]`` settings."""
    settings = {"allow_private": ["127.0.0.1"], "deny": ["evil.example"], **browser}
    loaded = load_config(
        content_root=tmp_path, browser=settings, **{"checkpoints": False, **(config or {})}
    )
    return AgentRuntime(config=loaded, llm=model, skills=browsing_skills())


class Recorder:
    """Collects every event of a runtime."""

    def __init__(self, runtime: AgentRuntime) -> None:
        self.events: list[Event] = []
        runtime.on("*", self.events.append)

    def of(self, event_type: str) -> list[dict[str, Any]]:
        return [e.data for e in self.events if e.type == event_type]

    def types(self) -> set[str]:
        return {e.type for e in self.events}


def require_chromium() -> None:
    """Skip (or, with SKILLRT_REQUIRE_CHROMIUM=1, fail) when Chromium cannot be driven."""
    problems = []
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        problems.append("playwright is not installed (pip install 'skillrt[browser]')")
    if not (Path("/usr/bin/chromium").exists() or shutil.which("chromium")):
        problems.append("no chromium executable (apt install chromium)")
    if problems:
        reason = "Chromium backend unavailable: " + "; ".join(problems)
        if REQUIRE_CHROMIUM:
            pytest.fail(reason + " (SKILLRT_REQUIRE_CHROMIUM=1)")
        pytest.skip(reason)
