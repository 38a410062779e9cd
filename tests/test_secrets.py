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
    assert paused.state == "PAUSED"
    await rt.close()
    state = _all_bytes(isolated / ".skillrt")
    assert len(state) > 0
    assert b"***" in state  # the redacted places are there
    assert KEY.encode() not in state
    assert CONFIGURED.encode() not in state
    assert b"sk-test" not in state


async def test_file_saves_are_logged(isolated: Path) -> None:
    @skill(name="Saver", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def saver(ctx: SkillContext, params: TopicParams) -> SkillResult:
        path, digest = ctx.files.write("posts/saved.md", "# hello\n")
        return SkillResult(data={"path": ctx.files.relative(path), "sha": digest})

    log = isolated / "log.jsonl"
    rt = make_runtime(
        isolated, FunctionModel(lambda m, o: "x"), [saver], log_file=log, log_level="info"
    )
    msg = await rt.process_input("write an article about saving")
    await rt.close()
    assert msg.data["path"] == "posts/saved.md"
    assert (isolated / "posts" / "saved.md").read_text() == "# hello\n"
    lines = [line for line in log.read_text().splitlines() if "agent.file.saved" in line]
    assert len(lines) == 1 and '"path": "posts/saved.md"' in lines[0]
    events = [line.split('"event": "')[1].split('"')[0] for line in log.read_text().splitlines()]
    for name in (
        "agent.input.received",
        "agent.intent.parsed",
        "agent.skill.started",
        "agent.task.completed",
    ):
        assert name in events


async def test_a_paused_task_holding_a_secret_says_it_is_kept_in_memory_only(
    isolated: Path,
) -> None:
    """Its request is never checkpointed (the secret must not rest on disk), so its reply must
    not promise a resume after a restart; in this process it still resumes."""
    gate = asyncio.Event()

    async def held(messages: list[Any], options: Any) -> str:
        await gate.wait()
        return "text"

    rt = make_runtime(isolated, FunctionModel(held), [leaky()], secrets=[CONFIGURED])
    job = asyncio.create_task(rt.process_input(f"write an article about my key {KEY}"))
    while rt.state is not State.EXECUTING:
        await asyncio.sleep(0.005)
    assert rt.pause() is True
    gate.set()
    paused = await job
    assert paused.state == "PAUSED"
    assert "kept in memory only" in paused.content and "cannot be resumed" in paused.content
    other = make_runtime(isolated, FunctionModel(held), [leaky()], secrets=[CONFIGURED])
    await other.initialize()
    assert other.get_resumable_tasks() == []  # as its reply said: not on disk
    await other.close()
    assert paused.task_id is not None
    resumed = await rt.resume_task(paused.task_id)
    assert resumed is not None and resumed.state == "COMPLETED"
    await rt.close()


async def test_an_ordinary_paused_task_promises_nothing_more(isolated: Path) -> None:
    gate = asyncio.Event()

    async def held(messages: list[Any], options: Any) -> str:
        await gate.wait()
        return "text"

    rt = make_runtime(isolated, FunctionModel(held), [leaky()])
    job = asyncio.create_task(rt.process_input("write an article about tea"))
    while rt.state is not State.EXECUTING:
        await asyncio.sleep(0.005)
    rt.pause()
    gate.set()
    paused = await job
    assert paused.state == "PAUSED" and "memory only" not in paused.content
    await rt.close()
    other = make_runtime(isolated, FunctionModel(held), [leaky()])
    await other.initialize()
    assert [t.id for t in other.get_resumable_tasks()] == [paused.task_id]
    await other.close()


async def test_a_secret_streamed_in_pieces_is_redacted(isolated: Path) -> None:
    """The model's answer streams word by word: a configured secret spread over several
    pieces (a pass phrase) never shows in the streamed events, in any piece or joined."""
    phrase = "correct horse battery staple"

    async def answer(messages: list[Any], options: Any) -> str:
        return f"the pass phrase is {phrase}, keep it"

    @skill(name="Teller", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def teller(ctx: SkillContext, params: TopicParams) -> SkillResult:
        out = await ctx.step("say", lambda: _content(ctx, "tell"))
        return SkillResult(message="told" if out else "")

    rt = make_runtime(isolated, FunctionModel(answer), [teller], secrets=[phrase])
    pieces: list[str] = []
    rt.on("task:stream", lambda event: pieces.append(event.data["delta"]))
    done = await rt.process_input("write an article about secrets")
    assert done.state == "COMPLETED"
    assert len(pieces) > 1  # it did stream in pieces
    assert "".join(pieces) == "the pass phrase is ***, keep it"
    assert not any(word in piece for piece in pieces for word in ("horse", "battery"))
    await rt.close()


def test_a_stream_cut_anywhere_shows_what_the_whole_text_shows() -> None:
    """However a text is cut into pieces, what the stream shows joined is the text redacted
    whole: a configured secret, a key shape still growing, a bearer token."""
    import random

    from skillrt._io.redaction import Redactor

    redactor = Redactor(["hunter2-secret", "open sesame"])
    text = f"a hunter2-secret, {KEY}, Bearer abcdefghijklmnopqrs and open sesame. sk- s B end"
    rng = random.Random(7)
    for _ in range(500):
        cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, 20)))
        stream = redactor.stream()
        shown = [
            stream.feed(text[a:b]) for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)
        ]
        assert "".join(shown) + stream.flush() == redactor.text(text)
