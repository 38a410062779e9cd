"""A skillrt worker on the shared PostgreSQL store, for the failover test.

``python pg_worker.py URL BLOG WORK NAME [start]``: a runtime with ``state_url=URL`` over the blog
``BLOG`` (state in ``WORK/state-NAME``), with a five-step skill. Every step appends
``<step> <NAME>`` to ``WORK/steps.log`` when it really runs (a journalled step that returns
its stored result writes nothing). ``start``: this worker runs the task; with
``HANG_AT=<n>`` it hangs at the start of step n (after logging it) until it is killed. The
others only wait, and their failover loop takes over a task whose worker died. Each worker
runs until ``WORK/stop`` exists (at most 120 s).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from pydantic import BaseModel

from skillrt import AgentRuntime, Skill, SkillContext, SkillResult, load_config, skill
from skillrt.testing import ScriptedModel

STEPS = 5


class NoParams(BaseModel):
    pass


def make_skill(work: Path, name: str) -> Skill[NoParams]:
    hang_at = int(os.environ.get("HANG_AT", "0"))

    def log(line: str) -> None:
        with (work / "steps.log").open("a", encoding="utf-8") as fh:
            fh.write(f"{line} {name}\n")
            fh.flush()
            os.fsync(fh.fileno())

    @skill(name="FiveSteps", intents=["FIVE_STEPS"], params=NoParams, description="five steps")
    async def five_steps(ctx: SkillContext, params: NoParams) -> SkillResult:
        (work / "task_id").write_text(ctx.task_id, encoding="utf-8")
        for n in range(1, STEPS + 1):

            async def run(n: int = n) -> dict[str, int]:
                log(f"step{n}")
                if n == hang_at:
                    (work / "hanging").write_text(name, encoding="utf-8")
                    time.sleep(120)  # blocks the loop on purpose: the test kills us here
                await asyncio.sleep(0.2)
                return {"step": n}

            await ctx.step(f"step{n}", run)
        log("done")
        return SkillResult(success=True, message="five steps done")

    return five_steps


async def main() -> None:
    url, blog, work, name = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
    start = len(sys.argv) > 5 and sys.argv[5] == "start"
    config = load_config(
        content_root=blog,
        state_dir=work / f"state-{name}",
        state_url=url,
        lease_s=float(os.environ.get("LEASE_S", "1.5")),
        failover=True,
    )
    rt = AgentRuntime(config, llm=ScriptedModel([]), skills=[make_skill(work, name)])
    await rt.initialize()
    (work / f"ready-{name}").write_text("ready", encoding="utf-8")
    if start:
        msg = await rt.run_skill("FiveSteps", {})
        (work / f"reply-{name}").write_text(msg.state, encoding="utf-8")
    deadline = time.monotonic() + 120
    while not (work / "stop").exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    await rt.close()


if __name__ == "__main__":
    asyncio.run(main())
