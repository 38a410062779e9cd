"""The process ``test_edit_resume.py`` kills: EditContent on a post holding a key-shaped string.

``python edit_crash_child.py start|resume BLOG STATE WORK``. ``start`` runs EditContent on
``posts/keys.md`` (a selection or, with ``WORK/whole``, the whole body); the model blocks the
event loop in its first call and writes ``WORK/paused``, waiting to be killed. ``resume``
resumes the one resumable task with a model that answers, and prints a JSON line.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from skillrt import AgentRuntime, load_config
from skillrt.llm.base import LLMMessage
from skillrt.skills.writing import writing_skills
from skillrt.testing import FunctionModel, ModelOptions

SELECTION = "This paragraph is clumsy and it should read better."
REVISED = "This paragraph reads better now."


def model(mode: str, work: Path) -> FunctionModel:
    def fn(messages: list[LLMMessage], options: ModelOptions) -> str:
        prompt = str(messages[-1]["content"])
        with (work / "calls.log").open("a", encoding="utf-8") as fh:
            fh.write("edit\n")
        if mode == "start":
            (work / "paused").write_text("in:edit", encoding="utf-8")
            time.sleep(120)  # blocks the loop on purpose: the test kills us here
            raise SystemExit("the test did not kill this process")
        if (work / "whole").exists():  # the whole body, with its key, comes back edited
            return prompt.split("Text:\n", 1)[1].replace("clumsy and it should read better", "fine")
        return REVISED

    return FunctionModel(fn)


async def main(mode: str, blog: Path, state: Path, work: Path) -> None:
    config = load_config(content_root=blog, state_dir=state)
    runtime = AgentRuntime(config, llm=model(mode, work), skills=writing_skills())
    await runtime.initialize()
    if mode == "start":
        params = {"instruction": "make it read better", "path": "posts/keys.md"}
        if not (work / "whole").exists():
            params["selected_text"] = SELECTION
        await runtime.run_skill("EditContent", params)
        return
    seen = [t.id for t in runtime.get_resumable_tasks()]
    message = await runtime.resume_task(seen[0]) if seen else None
    print(
        json.dumps(
            {
                "resumable": seen,
                "state": None if message is None else message.state,
                "content": None if message is None else message.content,
            }
        ),
        flush=True,
    )
    await runtime.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])))
