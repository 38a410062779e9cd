"""The process ``test_mcp_client.py`` kills with -9 between two tool calls.

``python mcp_crash_child.py start|resume BLOG WORK``: a runtime with the notes server of the
tests as ``[mcp.servers.notes]`` and the skill ``TwoNotes``, which adds the note "first",
then (with ``CRASH_AT=between``) writes ``WORK/paused`` and hangs until killed, then adds
"second". ``resume`` resumes the task left behind and prints its reply as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

from pydantic import BaseModel

from skillrt import AgentRuntime, SkillContext, SkillResult, load_config, skill
from skillrt.testing import ScriptedModel

HERE = Path(__file__).resolve().parent


class NoParams(BaseModel):
    pass


def notes_server(work: Path) -> dict[str, object]:
    return {
        "command": sys.executable,
        "args": [str(HERE / "mcp_notes_server.py")],
        "env": {"NOTES_FILE": str(work / "notes.txt"), "NOTES_LOG": str(work / "calls.log")},
    }


def make_skill(work: Path):  # type: ignore[no-untyped-def]
    @skill(name="TwoNotes", params=NoParams, description="Adds two notes")
    async def two_notes(ctx: SkillContext, params: NoParams) -> SkillResult:
        (work / "task_id").write_text(ctx.task_id, encoding="utf-8")
        first = await ctx.tools.call("notes", "add_note", {"text": "first"})
        if os.environ.get("CRASH_AT") == "between":
            (work / "paused").write_text("between", encoding="utf-8")
            time.sleep(120)  # blocks the loop on purpose: the test kills the process here
        second = await ctx.tools.call("notes", "add_note", {"text": "second"})
        return SkillResult(message=f"{first.text}; {second.text}")

    return two_notes


async def main(mode: str, blog: Path, work: Path) -> None:
    config = load_config(
        content_root=blog,
        state_dir=work / "state",
        mcp={"servers": {"notes": notes_server(work)}},
    )
    runtime = AgentRuntime(config, llm=ScriptedModel([]), skills=[make_skill(work)])
    await runtime.initialize()
    try:
        if mode == "start":
            await runtime.run_skill("TwoNotes", {})
            return
        seen = [t.id for t in runtime.get_resumable_tasks()]
        message = await runtime.resume_task(seen[0]) if seen else None
        print(
            json.dumps(
                {"seen": seen, "message": message.model_dump(mode="json") if message else None}
            )
        )
    finally:
        await runtime.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])))
