"""The process that ``test_crash_resume.py`` kills: a runtime running a four-step writing skill.

``python crash_child.py start|resume BLOG WORK`` with the environment:

- ``CRASH_AT``: where to stop and wait to be killed: ``after:<step>`` (a step boundary: the
  step's result is journalled) or ``in:save`` (the skill announces the save, waits for the
  file ``WORK/go``, then writes a big file; the test kills it while the temp file exists).
  Empty: run to the end.
- ``CRASH_SCRIPT``: the ScriptedModel's answers, as a JSON list.
- ``CRASH_BIG``: "1" makes the article about 24 MB, so that its write takes a while.

Every step appends its name to ``WORK/steps.log`` when it runs (so the test counts model
calls: the outline and content steps make one each), the task id goes to ``WORK/task_id``,
and ``resume`` prints one JSON line: the resumable ids it saw, the final state, and the
resumable ids left.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

from pydantic import BaseModel

from skillrt import AgentRuntime, Skill, SkillContext, SkillResult, load_config, skill
from skillrt.testing import ScriptedModel

TARGET = "posts/crash-test.md"
END = "<!-- end of article -->\n"


def article_text(outline: str, content: str, *, big: bool) -> str:
    """The saved article: the same every time for the same inputs (the save is idempotent)."""
    repeat = 400_000 if big else 20
    body = "".join(f"{content} ({n})\n" for n in range(repeat))
    return f"---\ntitle: {outline}\n---\n\n{body}{END}"


class Topic(BaseModel):
    topic: str


def _log(work: Path, name: str) -> None:
    with (work / "steps.log").open("a", encoding="utf-8") as fh:
        fh.write(name + "\n")


def _stop_here(work: Path, point: str) -> None:
    """If the test asked to crash here: say so, then hang until SIGKILL."""
    if os.environ.get("CRASH_AT") == point:
        (work / "paused").write_text(point, encoding="utf-8")
        time.sleep(120)  # blocks the event loop on purpose: nothing else may happen
        raise SystemExit("the test did not kill this process")


def make_skill(work: Path, big: bool) -> Skill[Topic]:
    @skill(name="CrashWriter", params=Topic, description="Write an article in four steps")
    async def crash_writer(ctx: SkillContext, params: Topic) -> SkillResult:
        (work / "task_id").write_text(ctx.task_id, encoding="utf-8")

        def context() -> dict[str, list[str]]:
            _log(work, "context")
            return {"related": ctx.files.list("posts/*.md")}

        await ctx.step("context", context)
        _stop_here(work, "after:context")

        async def outline() -> str:
            _log(work, "outline")
            result = await ctx.llm.chat([{"role": "user", "content": f"outline: {params.topic}"}])
            return result.content

        title: str = await ctx.step("outline", outline)
        _stop_here(work, "after:outline")

        async def content() -> str:
            _log(work, "content")
            result = await ctx.llm.chat([{"role": "user", "content": f"write: {title}"}])
            return result.content

        body: str = await ctx.step("content", content)
        _stop_here(work, "after:content")

        def save() -> dict[str, str]:
            _log(work, "save")
            text = article_text(title, body, big=big)
            if os.environ.get("CRASH_AT") == "in:save":
                # Say we are about to write, and wait for the test to be watching for the temp file.
                (work / "paused").write_text("in:save", encoding="utf-8")
                deadline = time.monotonic() + 120
                while not (work / "go").exists() and time.monotonic() < deadline:
                    time.sleep(0.001)
            path, digest = ctx.files.write(TARGET, text)
            return {"path": str(path), "sha256": digest}

        saved = await ctx.step("save", save)
        _stop_here(work, "after:save")
        return SkillResult(message=f"saved {TARGET}", data=saved)

    return crash_writer


async def main(mode: str, blog: Path, work: Path) -> None:
    script = json.loads(os.environ.get("CRASH_SCRIPT", "[]"))
    big = os.environ.get("CRASH_BIG") == "1"
    config = load_config(content_root=blog)
    runtime = AgentRuntime(config, llm=ScriptedModel(script), skills=[make_skill(work, big)])
    await runtime.initialize()
    if mode == "start":
        await runtime.run_skill("CrashWriter", {"topic": "Rust ownership"})
        return
    seen = [t.id for t in runtime.get_resumable_tasks()]
    message = await runtime.resume_task(seen[0]) if seen else None
    left = [t.id for t in runtime.get_resumable_tasks()]
    print(
        json.dumps(
            {
                "resumable": seen,
                "state": None if message is None else message.state,
                "content": None if message is None else message.content,
                "left": left,
            }
        ),
        flush=True,
    )
    await runtime.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])))
