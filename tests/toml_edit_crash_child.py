"""The process ``test_toml_edit_crash.py`` kills: EditContent on a Zola (TOML) post.

``python toml_edit_crash_child.py start|resume BLOG STATE WORK POINT``. ``start`` edits the
post's whole body and stops at ``POINT``, writing ``WORK/paused`` and sleeping until killed:

- ``model``: in the model call (nothing written yet);
- ``rename``: in the save, the new text fsynced in its temp file, just before the rename over
  the post (the real ``os.replace`` runs after the pause; the test kills first);
- ``saved``: just after the rename, before the save step is journalled.

``resume`` resumes the one resumable task with a model that answers, and prints a JSON line.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from skillrt import AgentRuntime, load_config
from skillrt.llm.base import LLMMessage
from skillrt.skills.writing import writing_skills
from skillrt.testing import FunctionModel, ModelOptions

POST = "content/Rust-1.77.0.md"
REVISED = "Rust 1.77.0 is out: C-string literals and async recursion are stable."


def pause(work: Path, where: str) -> None:
    (work / "paused").write_text(where, encoding="utf-8")
    time.sleep(120)  # blocks on purpose: the test kills us here
    raise SystemExit("the test did not kill this process")


def model(mode: str, point: str, work: Path) -> FunctionModel:
    def fn(messages: list[LLMMessage], options: ModelOptions) -> str:
        with (work / "calls.log").open("a", encoding="utf-8") as fh:
            fh.write("edit\n")
        if mode == "start" and point == "model":
            pause(work, "model")
        return REVISED

    return FunctionModel(fn)


def stop_around_the_rename(point: str, work: Path, target: Path) -> None:
    """Pause the real ``os.replace`` of the post before (``rename``) or after (``saved``) it."""
    real = os.replace

    def replace(src: Any, dst: Any, **kw: Any) -> None:
        ours = Path(os.fsdecode(dst)).name == target.name  # a name beside a folder's fd, or a path
        if ours and point == "rename":
            pause(work, "rename")
        real(src, dst, **kw)
        if ours and point == "saved":
            pause(work, "saved")

    os.replace = replace  # type: ignore[assignment]


async def main(mode: str, blog: Path, state: Path, work: Path, point: str) -> None:
    config = load_config(content_root=blog, state_dir=state)
    runtime = AgentRuntime(config, llm=model(mode, point, work), skills=writing_skills())
    await runtime.initialize()
    if mode == "start":
        stop_around_the_rename(point, work, (blog / POST).resolve())
        await runtime.run_skill("EditContent", {"instruction": "shorten it", "path": POST})
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
    args = sys.argv[1:]
    asyncio.run(main(args[0], Path(args[1]), Path(args[2]), Path(args[3]), args[4]))
