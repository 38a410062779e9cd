"""No API key reaches a checkpoint, the history or the log, whatever the task does with it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from skillrt import SkillContext, SkillResult, State, skill
from skillrt.testing import FunctionModel

from .helpers import TopicParams, make_runtime

KEY = "sk-test-0123456789abcdefghijklmnop"
CONFIGURED = "cfg-secret-value-42"


def leaky() -> Any:
    @skill(name="Leaky", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def run(ctx: SkillContext, params: TopicParams) -> SkillResult:
        await ctx.step("echo", lambda: {"seen": ctx.input.text, "cfg": CONFIGURED})
        out = await ctx.step(
            "model", lambda: _content(ctx, f"repeat {ctx.input.text} {CONFIGURED}")
        )
        ctx.logger.info("agent.file.saved", note=out)
        await ctx.step("after", lambda: "x")
        return SkillResult(message=f"done {out}")

    return run


async def _content(ctx: SkillContext, prompt: str) -> str:
    return (await ctx.llm.chat([{"role": "user", "content": prompt}])).content


def _all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


async def test_keys_never_reach_the_state_folder(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    gate = asyncio.Event()

    async def echo(messages: list[Any], options: Any) -> str:
        if "pause me" in messages[-1]["content"]:
            await gate.wait()
        return messages[-1]["content"]

    rt = make_runtime(
        isolated,
        FunctionModel(echo),
        [leaky()],
        secrets=[CONFIGURED],
        log_file=isolated / ".skillrt" / "log.jsonl",
        log_level="debug",
    )
    done = await rt.process_input(f"write an article about my key {KEY}")
    assert done.state == "COMPLETED"
    job = asyncio.create_task(rt.process_input(f"write an article about pause me {KEY}"))
    while rt.state is not State.EXECUTING:
        await asyncio.sleep(0.005)
    rt.pause()
    gate.set()
    paused = await job
    assert paused.state == "PAUSED"  # its checkpoint stays on disk
    await rt.close()
    state = _all_bytes(isolated / ".skillrt")
    assert len(state) > 0
    assert b"***" in state  # the redacted places are there
    assert KEY.encode() not in state
    assert CONFIGURED.encode() not in state
    assert b"sk-test" not in state
