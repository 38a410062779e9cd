"""A browsing session's follow-ups typed in the chat ("now open the second result") go to the
browsing skill, through ``process_input``, because the runtime tells routing which skill the
session's last task ran; without that, the same words start no browsing."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from skillrt import SkillContext, SkillResult, skill
from skillrt.testing import ScriptedModel

from .helpers import make_runtime


class BrowseParams(BaseModel):
    task: str = ""
    url: str | None = None


def browsing(seen: list[str]) -> object:
    @skill(name="Browse", intents=["BROWSE"], params=BrowseParams, description="Use a browser")
    async def run(ctx: SkillContext, params: BrowseParams) -> SkillResult:
        seen.append(params.task or params.url or "")
        return SkillResult(message=f"browsed: {params.task or params.url}")

    return run


async def test_follow_ups_of_a_browsing_session_go_to_the_browser(isolated: Path) -> None:
    seen: list[str] = []
    rt = make_runtime(isolated, ScriptedModel([]), [browsing(seen)])  # type: ignore[list-item]
    first = await rt.run_skill("Browse", {"task": "search for rust books", "url": "http://x.test"})
    assert first.state == "COMPLETED"
    for text in ("now open the second result", "点开第二个结果", "go back", "scroll down"):
        msg = await rt.process_input(text)
        assert msg.state == "COMPLETED", (text, msg.content)
        assert seen[-1] == text  # the browsing skill got the follow-up as its task
    await rt.close()


async def test_the_same_words_without_a_browsing_session_start_no_browsing(isolated: Path) -> None:
    seen: list[str] = []
    rt = make_runtime(isolated, ScriptedModel([]), [browsing(seen)])  # type: ignore[list-item]
    for text in ("go back", "scroll down"):
        msg = await rt.process_input(text)
        assert msg.state != "COMPLETED" or not seen, (text, msg.content)
    assert seen == []
    await rt.close()


async def test_the_last_skill_of_a_session_survives_a_restart(isolated: Path) -> None:
    seen: list[str] = []
    rt = make_runtime(isolated, ScriptedModel([]), [browsing(seen)])  # type: ignore[list-item]
    await rt.run_skill("Browse", {"task": "open the docs", "url": "http://x.test"})
    session = rt.session_id
    await rt.close()
    again = make_runtime(isolated, ScriptedModel([]), [browsing(seen)], session_id=session)  # type: ignore[list-item]
    msg = await again.process_input("now open the second result")
    assert msg.state == "COMPLETED" and seen[-1] == "now open the second result"
    await again.close()
