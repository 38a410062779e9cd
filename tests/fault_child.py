"""A host program for the storage-fault tests: ``python fault_child.py BLOG FAULT WHEN``.

Opens a runtime over BLOG, breaks its state folder (FAULT) at start (before this runs, done by
the test) or while running (WHEN=running, done here), runs a small two-step skill and prints one
JSON line: what ``initialize`` raised, or each reply's state, outcome and text. Faults done here:

- ``delete``: the state folder is deleted;
- ``full``: every file write fails (a file-size limit of 0 bytes: EFBIG, as a full disk);
- ``read_only``: the state folder and everything in it made read-only (the test runs this
  process without the capabilities that let root write anyway);
- ``truncate``: the checkpoint database is cut to 0 bytes (its WAL and index removed);
- ``pause_full``: the disk fills between two steps, then the task is asked to pause;
- ``close_full``: the disk fills while a task runs, then the runtime is closed.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from skillrt import AgentRuntime, SkillContext, SkillResult, load_config, skill
from skillrt.exceptions import SkillrtError
from skillrt.testing import ScriptedModel


class Params(BaseModel):
    topic: str = "storage"


BREAK_MID_TASK: list[Any] = []  # set to a callable: run between the two steps


@skill(name="TwoSteps", params=Params, intents=["WRITE_ARTICLE"])
async def two_steps(ctx: SkillContext, params: Params) -> SkillResult:
    await ctx.step("one", lambda: {"n": 1})
    for action in BREAK_MID_TASK:
        action(ctx)
    await ctx.step("two", lambda: {"n": 2})
    return SkillResult(message=f"done with {params.topic}")


def fill_disk() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def make_read_only(state: Path) -> None:
    for folder, dirs, files in os.walk(state, topdown=False):
        for name in files:
            os.chmod(Path(folder) / name, 0o444)
        for name in dirs:
            os.chmod(Path(folder) / name, 0o555)
    os.chmod(state, 0o555)


def break_now(fault: str, root: Path, runtime: AgentRuntime) -> None:
    state = runtime.config.state_path
    if fault == "delete":
        shutil.rmtree(state)
    elif fault == "full":
        fill_disk()
    elif fault == "read_only":
        make_read_only(state)
    elif fault == "truncate":
        db = state / "checkpoints" / "cache" / "cache.db"
        os.truncate(db, 0)
        for suffix in ("-wal", "-shm"):
            db.with_name(db.name + suffix).unlink(missing_ok=True)


def shown(message: Any) -> dict[str, Any]:
    return {
        "state": message.state,
        "outcome": message.data.get("outcome"),
        "error": message.data.get("error"),
        "content": message.content,
        "task_id": message.task_id,
    }


async def main(root: Path, fault: str, when: str) -> dict[str, Any]:
    runtime = AgentRuntime(
        load_config(content_root=root), llm=ScriptedModel([]), skills=[two_steps]
    )
    out: dict[str, Any] = {}
    runtime.on(
        "runtime:checkpoints_loaded",
        lambda e: out.update(quarantined=e.data["quarantined"], restored=e.data["tasks"]),
    )
    try:
        await runtime.initialize()
    except SkillrtError as exc:
        return {"init": type(exc).__name__, "message": str(exc)}
    if fault == "close_full":  # the disk fills while a task runs, then the program closes
        started = asyncio.Event()

        def hold(ctx: SkillContext) -> None:
            started.set()

        BREAK_MID_TASK.append(hold)
        running = asyncio.ensure_future(runtime.run_skill("TwoSteps", {"topic": "slow"}))
        await started.wait()
        fill_disk()
        await runtime.close()  # must not raise, and must not promise a resume
        message = await running
        return {"replies": [shown(message)], "closed": True}
    if fault == "pause_full":

        def pause_on_full_disk(ctx: SkillContext) -> None:
            fill_disk()
            runtime.pause(ctx.task_id)

        BREAK_MID_TASK.append(pause_on_full_disk)
    elif when == "running":
        break_now(fault, root, runtime)
    replies = [await runtime.run_skill("TwoSteps", {"topic": "first"})]
    BREAK_MID_TASK.clear()
    replies.append(await runtime.run_skill("TwoSteps", {"topic": "second"}))
    replies.append(await runtime.process_input("   "))  # a chat input still gets a reply
    out["replies"] = [shown(m) for m in replies]
    out["resumable"] = [t.id for t in runtime.get_resumable_tasks()]
    await runtime.close()
    return out


if __name__ == "__main__":
    blog, fault_name, moment = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    print(json.dumps(asyncio.run(main(blog, fault_name, moment))), flush=True)
