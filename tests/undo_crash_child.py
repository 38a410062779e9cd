"""The process ``test_undo.py`` kills between EditContent's model step and its save.

``python undo_crash_child.py start|resume BLOG STATE WORK``. ``start`` runs EditContent on
``posts/keys.md``; the model answers, and when the skill reports that it is saving, a progress
listener blocks the event loop and writes ``WORK/paused``, waiting to be killed. ``resume``
resumes the one resumable task, then undoes the last write, and prints a JSON line.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from skillrt import AgentRuntime, load_config
from skillrt.skills.writing import writing_skills
from skillrt.testing import ScriptedModel

REVISED = "A body the model rewrote.\n"


def stop_at_the_save(work: Path) -> Any:
    def listener(event: Any) -> None:
        if event.data.get("message") == "Saving":
            (work / "paused").write_text("before the save", encoding="utf-8")
            time.sleep(120)  # blocks the loop on purpose: the test kills us here
            raise SystemExit("the test did not kill this process")

    return listener


async def main(mode: str, blog: Path, state: Path, work: Path) -> None:
    config = load_config(content_root=blog, state_dir=state)
    model = ScriptedModel([REVISED] if mode == "start" else [])  # resumed: no model call
    runtime = AgentRuntime(config, llm=model, skills=writing_skills())
    await runtime.initialize()
    if mode == "start":
        runtime.on("task:progress", stop_at_the_save(work))
        params = {"instruction": "rewrite it", "path": "posts/keys.md"}
        await runtime.run_skill("EditContent", params)
        return
    seen = [t.id for t in runtime.get_resumable_tasks()]
    message = await runtime.resume_task(seen[0]) if seen else None
    edited = (blog / "posts" / "keys.md").read_text(encoding="utf-8")
    undone = await runtime.undo("posts/keys.md")
    print(
        json.dumps(
            {
                "resumable": seen,
                "state": None if message is None else message.state,
                "edited": edited,
                "undone": undone.data,
            }
        ),
        flush=True,
    )
    await runtime.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])))
