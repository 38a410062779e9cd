"""The process ``test_writing_resume.py`` kills: the runtime running WriteArticle.

``python writing_crash_child.py start|resume BLOG STATE WORK``. The model answers each
writing prompt by its kind and appends the kind to ``WORK/calls.log`` (so the test counts
model calls across both processes). ``start`` blocks the event loop right after the outline
is journalled (at the first "writing section" progress event) and writes ``WORK/paused``,
waiting to be killed. ``resume`` resumes the one resumable task and prints a JSON line.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from skillrt import AgentRuntime, Event, load_config
from skillrt.llm.base import LLMMessage
from skillrt.skills.writing import writing_skills
from skillrt.testing import Answer, FunctionModel, ModelOptions

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.writing_support import WritingModelFn


def model(work: Path) -> FunctionModel:
    answer = WritingModelFn()

    def fn(messages: list[LLMMessage], options: ModelOptions) -> Answer:
        out = answer(messages, options)
        with (work / "calls.log").open("a", encoding="utf-8") as fh:
            fh.write(answer.kinds[-1] + "\n")
        return out

    return FunctionModel(fn)


async def main(mode: str, blog: Path, state: Path, work: Path) -> None:
    config = load_config(content_root=blog, state_dir=state)
    runtime = AgentRuntime(config, llm=model(work), skills=writing_skills())
    await runtime.initialize()
    if mode == "start":

        def on_progress(event: Event) -> None:
            if event.data["step"] == 3:  # the outline is in the journal
                (work / "task_id").write_text(event.task_id or "", encoding="utf-8")
                (work / "paused").write_text("after:outline", encoding="utf-8")
                time.sleep(120)  # blocks the loop on purpose: the test kills us here
                raise SystemExit("the test did not kill this process")

        runtime.on("task:progress", on_progress)
        await runtime.process_input("write an article about Rust ownership")
        return
    seen = [t.id for t in runtime.get_resumable_tasks()]
    message = await runtime.resume_task(seen[0]) if seen else None
    print(
        json.dumps(
            {
                "resumable": seen,
                "state": None if message is None else message.state,
                "data": None if message is None else message.data,
                "left": [t.id for t in runtime.get_resumable_tasks()],
            }
        ),
        flush=True,
    )
    await runtime.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])))
