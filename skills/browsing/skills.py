"""The browsing skills: ``Browse`` (carry out a web task) and ``ResearchWeb`` (cited answers)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from skillrt._io.lazy import import_off_loop
from skillrt._io.logs import Redactor, library_logger
from skillrt.exceptions import TaskCancelled, TaskPaused, UserError
from skillrt.skill.context import SkillContext
from skillrt.skill.definition import Skill, SkillResult, skill
from skillrt.skills.browsing.config import browser_config
from skillrt.skills.browsing.followup import recall, remember
from skillrt.skills.browsing.plans import plan_from

# The machinery (the agent loop, the browsers, httpx and Playwright's wrappers, the secret
# guard, research, replay) is imported when a task runs, not when the skills are registered:
# every runtime registers them, and `skillrt chat` waited ~0.1 s for these imports at start.
# They are imported in a thread (``import_off_loop``): on the event loop, the first browsing
# task held every other task and request for them (~90 ms; Playwright's ~65 ms more, imported
# the same way when Chromium first starts).
if TYPE_CHECKING:
    from skillrt.skills.browsing.agent import AgentResult, BrowserAgent
    from skillrt.skills.browsing.browser import Browser

_BROWSE_MODULES = (
    "skillrt.skills.browsing.agent",
    "skillrt.skills.browsing.backends",
    "skillrt.skills.browsing.secret_guard",
    "skillrt.skills.browsing.replay",
)
_RESEARCH_MODULES = ("skillrt.skills.browsing.research",)

__all__ = [
    "BrowseParams",
    "ResearchParams",
    "browse",
    "browsing_skills",
    "close_pending_browsers",
    "research_web",
]

_URL = re.compile(r"https?://[^\s<>\"'`)\]]+")
_closing: set[asyncio.Task[None]] = set()
_log = library_logger("skillrt.browsing")  # stdlib logging: silent unless the host sets it up

_REASONS_ZH = {
    "max_steps": "步数用完",
    "max_failures": "连续失败过多",
    "repeated_action": "反复执行相同操作",
    "completed": "完成",
    "unsuccessful": "没能做到",
}


class BrowseParams(BaseModel):
    task: str = Field(default="", description="What to do on the web, in words")
    url: str | None = Field(default=None, description="Where to start")
    plan: str | list[str] | None = Field(
        default=None, description="A predefined plan's name (config/plans) or its steps"
    )
    backend: Literal["http", "chromium"] | None = Field(
        default=None, description="http (no scripts) or chromium (default: the settings')"
    )
    replay: str | None = Field(
        default=None, description="Run a recorded Browse task again, without a model (its id)"
    )


class ResearchParams(BaseModel):
    question: str = Field(default="", description="What to find out on the web")
    topic: str = Field(default="", description="Or a topic to research")
    max_pages: int = Field(default=5, ge=1, le=20, description="How many pages to read, at most")
    note: bool = Field(default=False, description="A Markdown research note, not a short answer")


def _close_in_background(browser: Browser) -> None:
    """Close a browser without making a cancelled task wait for it."""

    async def close() -> None:
        try:
            await browser.close()
        except Exception as exc:
            _log.warning("browser.close_failed", error=str(exc))

    task = asyncio.ensure_future(close())
    _closing.add(task)
    task.add_done_callback(_closing.discard)


async def close_pending_browsers() -> None:
    """Wait for the browsers that cancelled tasks left closing (for hosts shutting down)."""
    if _closing:
        await asyncio.gather(*list(_closing), return_exceptions=True)


def _as_dict(result: AgentResult) -> dict[str, Any]:
    return {
        "success": result.success,
        "answer": result.answer,
        "reason": result.reason,
        "detail": result.detail,
        "url": result.url,
        "steps": [s.summary() for s in result.steps],
    }


@skill(
    name="Browse",
    intents=["BROWSE"],
    params=BrowseParams,
    description="Carry out a web task: open pages, follow links, fill in forms, report back",
)
async def browse(ctx: SkillContext, params: BrowseParams) -> SkillResult:
    """Browse the web for a task, with the planner/navigator loop, and report the answer."""
    if params.replay:
        return await _replay(ctx, params.replay, params.backend)
    task = params.task.strip() or ctx.input.text.strip()
    if not task:
        raise UserError("Browse needs a task")
    found = _URL.search(task)
    start = params.url or (found.group(0).rstrip(".,;:!?") if found else None)
    previous = recall(ctx) if start is None else None
    if previous is not None:  # a follow-up: go on from the page the last task ended on
        start = previous["url"]
        task = f"{task}\n(A follow-up to the previous task: {previous['task']})"
    await import_off_loop(_BROWSE_MODULES)
    from skillrt.skills.browsing.agent import CHECKS_FAILED_TWICE, BrowserAgent
    from skillrt.skills.browsing.backends import open_browser
    from skillrt.skills.browsing.secret_guard import SecretGuard

    plan = plan_from(params.plan)
    guard = SecretGuard.from_config(ctx.config, start)  # where each secret may go
    browser = open_browser(browser_config(ctx.config), backend=params.backend, guard=guard)
    agent = BrowserAgent(
        ctx,
        browser,
        task,
        start_url=start,
        plan=plan,
        start_from_page=previous is not None,
        guard=guard,
    )
    try:
        result = await agent.run()  # every turn of the loop is a durable step
    except BaseException as exc:
        _record(ctx, agent, start, exc)
        _close_in_background(browser)
        raise
    recording = _record(ctx, agent, start, result)
    redact = _redactor(ctx, agent)
    remember(ctx, url=result.url, task=task, redact=redact)
    await browser.close()
    outcome: dict[str, Any] = redact(_as_dict(result))  # what leaves the skill: redacted
    if recording is not None:
        outcome["recording"] = str(recording)
    steps = len(outcome["steps"])
    data = {**outcome, "plan": plan.name if plan else None}
    if outcome["success"]:
        source = ctx.say(f"\n\n来源：{outcome['url']}", f"\n\nSource: {outcome['url']}")
        answer = outcome["answer"] or ctx.say("任务已完成。", "Done.")
        return SkillResult(success=True, message=answer + source, data=data)
    reason = outcome["reason"]
    message = ctx.say(
        f"浏览任务未完成（{_REASONS_ZH.get(reason, reason)}，共 {steps} 步）：{outcome['detail']}",
        f"The browsing task did not finish ({reason}, {steps} steps): {outcome['detail']}",
    )
    if outcome["answer"] and outcome["detail"].startswith(CHECKS_FAILED_TWICE):
        # (not "found": a figure no page gives, refused twice, was shown as what was found)
        message += ctx.say("\n\n未通过检查的回答：", "\n\nThe answer that failed them: ")
        message += outcome["answer"]
    elif outcome["answer"]:
        message += ctx.say("\n\n目前的结果：", "\n\nWhat was found so far: ") + outcome["answer"]
    return SkillResult(success=False, message=message, data=data)


def _record(
    ctx: SkillContext, agent: BrowserAgent, start: str | None, end: AgentResult | BaseException
) -> Path | None:
    """Write the task's replay recording, however it ended (a failure to write it is logged,
    never raised over the task's own outcome)."""
    from skillrt.skills.browsing.replay import save_recording

    status, detail = _how_it_ended(end)
    try:
        return save_recording(
            ctx,
            agent.task,
            start,
            agent.history,
            status=status,
            detail=detail,
            redact=_redactor(ctx, agent),
        )
    except OSError as exc:
        _log.warning("browse.recording_failed", task_id=ctx.task_id, error=str(exc))
        return None


def _redactor(ctx: SkillContext, agent: BrowserAgent) -> Callable[[Any], Any]:
    """What a browsing record goes through before it rests or leaves: the secrets this run
    typed and the guard knows become ``<secret>``, then the runtime's redactor (configured
    secrets, key shapes, secret-named keys) makes the rest ``***``."""
    redactor = Redactor(ctx.config.secret_values())

    def redact(value: Any) -> Any:
        return redactor(agent.secrets.redact(value))

    return redact


def _how_it_ended(end: AgentResult | BaseException) -> tuple[str, str]:
    """The recording's ``status`` and ``detail``."""
    from skillrt.skills.browsing.agent import AgentResult

    if isinstance(end, AgentResult):
        return ("completed" if end.success else "unfinished"), end.detail
    if isinstance(end, asyncio.CancelledError | TaskCancelled):
        return "cancelled", str(end) or "cancelled"
    if isinstance(end, TaskPaused):  # the runtime's pause at a step boundary
        return "paused", "paused between steps; the resumed task records the rest"
    return "failed", f"{type(end).__name__}: {end}"


async def _replay(
    ctx: SkillContext, task_id: str, backend: Literal["http", "chromium"] | None
) -> SkillResult:
    """Run a recorded Browse task again without a model."""
    await import_off_loop(_BROWSE_MODULES)
    from skillrt.skills.browsing.backends import open_browser
    from skillrt.skills.browsing.replay import load_recording, replay
    from skillrt.skills.browsing.secret_guard import SecretGuard

    recording = load_recording(ctx, task_id)
    guard = SecretGuard.from_config(ctx.config, recording.get("start_url"))
    browser = open_browser(browser_config(ctx.config), backend=backend, guard=guard)
    try:
        done = await replay(ctx, browser, recording)
    except BaseException:
        _close_in_background(browser)
        raise
    url = browser.url
    await browser.close()
    data = {"replayed": task_id, "actions": done, "url": url}
    message = ctx.say(
        f"重放了任务 {task_id} 的 {len(done)} 个操作，停在 {url}",
        f"Replayed {len(done)} actions of task {task_id}; now at {url}",
    )
    return SkillResult(success=True, message=message, data=data)


@skill(
    name="ResearchWeb",
    intents=["RESEARCH_WEB"],
    params=ResearchParams,
    description="Search the web, read the top pages and answer with checked citations",
)
async def research_web(ctx: SkillContext, params: ResearchParams) -> SkillResult:
    """Research a question on the web: an answer (or a note) citing only pages it read."""
    question = params.question.strip() or params.topic.strip() or ctx.input.text.strip()
    if not question:
        raise UserError("ResearchWeb needs a question or a topic")
    await import_off_loop(_RESEARCH_MODULES)
    from skillrt.skills.browsing.research import research

    return await research(ctx, question, params.max_pages, params.note)


def browsing_skills() -> list[Skill[Any]]:
    """The browsing skills, for the runtime's builtin list."""
    return [browse, research_web]
