"""A ``skillrt serve`` worker on the shared PostgreSQL store, for the tests with several workers.

``python pg_serve_worker.py URL BLOG WORK NAME``: a runtime with ``state_url=URL`` over the blog
``BLOG`` (state in ``WORK/state-NAME``, so a restart under the same NAME is the same worker),
served over HTTP on 127.0.0.1 (its port written to ``WORK/port-NAME``), with two skills:

- ``Slow`` (``steps``, ``step_s``): each step appends ``step<n> <NAME>`` to ``WORK/steps.log``
  when it really runs, reports progress and streams a line, then sleeps ``step_s``;
- ``Asks``: asks a question, then completes with the answer in its reply;
- ``Tick``: one 20 ms step, appending ``<task id> <NAME> <start> <end>`` to ``WORK/ticks.log``;
- ``Post`` (``steps``, ``step_s``): each step logs ``post<n> <NAME>``, sleeps ``step_s``, then
  appends ``line<n> <NAME>`` to the blog's ``posts/shared.md`` (read, then written with its
  hash and the post's lock).

``QUEUE`` (JSON) is its ``[queue]`` section.

Every 10 ms it measures how late the event loop wakes; each delay of 20 ms or more is appended
to ``WORK/lag-NAME`` with its time. It stops on SIGTERM.
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
from skillrt.server.run import make_server
from skillrt.testing import ScriptedModel

TOKEN = "test-token-0123456789abcdef"


class SlowParams(BaseModel):
    steps: int = 5
    step_s: float = 0.2
    topic: str = "slow"


class NoParams(BaseModel):
    pass


def skills(work: Path, name: str) -> list[object]:
    def write(line: str) -> None:
        with (work / "steps.log").open("a", encoding="utf-8") as fh:
            fh.write(f"{line} {name}\n")

    async def log(line: str) -> None:
        # Off the loop, which the outage test watches for stalls, and with no fsync: the line
        # only has to outlive this process (a killed worker), not the machine. An fsync on the
        # loop once stalled it 120 ms while the restarted PostgreSQL flushed its own files.
        await asyncio.to_thread(write, line)

    @skill(name="Slow", intents=["SLOW"], params=SlowParams, description="slow steps")
    async def slow(ctx: SkillContext, params: SlowParams) -> SkillResult:
        for n in range(1, params.steps + 1):

            async def run(n: int = n) -> dict[str, int]:
                await log(f"step{n}")
                ctx.progress(n, params.steps, f"step {n}")
                ctx.events.emit("llm:delta", delta=f"text of step {n} ")
                await asyncio.sleep(params.step_s)
                return {"step": n}

            await ctx.step(f"step{n}", run)
        await log("done")
        return SkillResult(success=True, message=f"{params.steps} steps done")

    @skill(name="Asks", intents=["ASKS"], params=NoParams, description="asks a question")
    async def asks(ctx: SkillContext, params: NoParams) -> SkillResult:
        await ctx.step("before", lambda: _value("asked"))
        answer = await ctx.ask("Which colour?")
        return SkillResult(success=True, message=f"colour: {answer}")

    @skill(name="Tick", intents=["TICK"], params=NoParams, description="one short step")
    async def tick(ctx: SkillContext, params: NoParams) -> SkillResult:
        async def run() -> str:
            started = time.time()
            await asyncio.sleep(0.02)
            with (work / "ticks.log").open("a", encoding="utf-8") as fh:
                fh.write(f"{ctx.task_id} {name} {started:.4f} {time.time():.4f}\n")
            return name

        ran_on = await ctx.step("tick", run)
        return SkillResult(success=True, message=f"tick on {ran_on}", data={"worker": ran_on})

    @skill(name="Post", intents=["POST"], params=SlowParams, description="appends to a post")
    async def post(ctx: SkillContext, params: SlowParams) -> SkillResult:
        for n in range(1, params.steps + 1):

            def run(n: int = n) -> int:
                write(f"post{n}")
                time.sleep(params.step_s)
                text, digest = ctx.files.read("posts/shared.md")
                line = f"line{n} {name}\n"
                ctx.files.write("posts/shared.md", text + line, expected_hash=digest, wait=5)
                return n

            await ctx.step(f"post{n}", run)
        await log("done")
        return SkillResult(success=True, message=f"{params.steps} lines")

    return [slow, asks, tick, post]


async def _value(value: str) -> str:
    return value


async def watch_loop(path: Path) -> None:
    """Append ``<unix time> <ms>`` to ``path`` each time the loop wakes 20 ms late or more."""
    while True:
        started = time.perf_counter()
        await asyncio.sleep(0.01)
        late = (time.perf_counter() - started - 0.01) * 1000
        if late >= 20:
            with path.open("a", encoding="utf-8") as fh:
                fh.write(f"{time.time():.3f} {late:.1f}\n")


async def main() -> None:
    url, blog, work, name = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
    config = load_config(
        content_root=blog,
        state_dir=work / f"state-{name}",
        state_url=url,
        lease_s=float(os.environ.get("LEASE_S", "30")),
        store_timeout_s=float(os.environ.get("STORE_TIMEOUT_S", "2")),
        failover=True,
        queue=json.loads(os.environ.get("QUEUE", "{}")),
    )
    rt = AgentRuntime(config, llm=ScriptedModel([]), skills=skills(work, name))  # type: ignore[arg-type]
    server = make_server(rt, token=TOKEN, host="127.0.0.1", port=0)
    watcher = asyncio.ensure_future(watch_loop(work / f"lag-{name}"))

    def started(port: int) -> None:
        (work / f"port-{name}").write_text(str(port), encoding="utf-8")

    server.on_started = started  # type: ignore[attr-defined]
    try:
        await server.serve()
    finally:
        watcher.cancel()


if __name__ == "__main__":
    asyncio.run(main())
