"""Small things that used to raise raw exceptions or leak details: answering an aborted task,
a context or params that is not a dict, pydantic's raw error, absolute blog paths in replies,
temp files of killed writers."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from pydantic import BaseModel

from skillrt import SkillContext, SkillResult, skill
from skillrt.testing import ScriptedModel

from .helpers import make_runtime


class AskParams(BaseModel):
    topic: str
    count: int = 1


@skill(name="Asker", params=AskParams, intents=["WRITE_ARTICLE"])
async def asker(ctx: SkillContext, params: AskParams) -> SkillResult:
    answer = await ctx.ask("Which one?")
    return SkillResult(message=f"got {answer}")


@skill(name="Opener", params=AskParams, intents=["SUMMARIZE"])
async def opener(ctx: SkillContext, params: AskParams) -> SkillResult:
    # A library error naming the file by its absolute path, as open() does.
    Path(ctx.config.root, "posts", f"{params.topic}.md").read_text(encoding="utf-8")
    return SkillResult(message="read")


async def test_answering_a_task_just_aborted_starts_a_new_one(isolated: Path) -> None:
    rt = make_runtime(isolated, ScriptedModel([]), [asker])
    try:
        asked = await rt.run_skill("Asker", {"topic": "x"})
        assert asked.state == "WAITING_INPUT"
        assert rt.abort(asked.task_id)
        reply = await rt.process_input("the first one")  # raised InvalidStateError before
        assert reply.task_id != asked.task_id
        assert rt.task_state(asked.task_id or "") in (None, "CANCELLED")
    finally:
        await rt.close()


async def test_a_context_or_params_that_is_not_a_dict_gets_a_clear_reply(isolated: Path) -> None:
    rt = make_runtime(isolated, ScriptedModel([]), [asker])
    try:
        for bad in (["a"], "text", 5):
            reply = await rt.process_input("hello", bad)  # type: ignore[arg-type]
            assert reply.data["error"] == "bad_input"
            kind = type(bad).__name__
            assert reply.content == f"context must be a dict of names to values, not {kind}"
            reply = await rt.run_skill("Asker", bad)  # type: ignore[arg-type]
            assert reply.data["error"] == "bad_params"
            assert "params must be a dict" in reply.content
            reply = await rt.run_skill("Asker", {"topic": "x"}, bad)  # type: ignore[arg-type]
            assert "context must be a dict" in reply.content
    finally:
        await rt.close()


async def test_a_context_text_field_that_is_not_text_gets_a_clear_reply(isolated: Path) -> None:
    # {"selected_text": ["a"]} started a task that failed: "AttributeError: 'list' object has
    # no attribute 'strip'".
    rt = make_runtime(isolated, ScriptedModel([]), [asker])
    try:
        for name, bad in (("selected_text", ["a"]), ("current_file", 5), ("session_id", {})):
            reply = await rt.process_input("summarize it", {name: bad})
            assert reply.data["error"] == "bad_input"
            assert reply.task_id is None
            kind = type(bad).__name__
            assert reply.content == f"context {name} must be text (str), not {kind}"
            reply = await rt.run_skill("Asker", {"topic": "x"}, {name: bad})
            assert reply.content == f"context {name} must be text (str), not {kind}"
        reply = await rt.run_skill("Asker", {"topic": "x"}, {"selected_text": None})
        assert reply.state == "WAITING_INPUT"
    finally:
        await rt.close()


class _Said(BaseModel):
    pass


@skill(name="Replacer", params=_Said, intents=["EDIT_CONTENT"])
async def replacer(ctx: SkillContext, params: _Said) -> SkillResult:
    return SkillResult(message=ctx.input.language)


async def test_a_chinese_instruction_on_quoted_english_words_is_chinese(isolated: Path) -> None:
    """ "把“Docker”改成“Podman”" was answered in English: its words outnumbered its Chinese."""
    rt = make_runtime(isolated, ScriptedModel([]), [replacer])
    try:
        context = {"current_file": "posts/a.md", "focus": "posts/a.md"}
        reply = await rt.process_input("把“Docker”改成“Podman”", context)
        assert (reply.state, reply.content) == ("COMPLETED", "zh")
    finally:
        await rt.close()


_GATE: dict[str, asyncio.Event] = {}


@skill(name="Waiter", params=AskParams, intents=["WRITE_ARTICLE"])
async def waiter(ctx: SkillContext, params: AskParams) -> SkillResult:
    await ctx.step("wait", lambda: _GATE["open"].wait())
    return SkillResult(message="done")


async def test_a_task_another_process_runs_is_said_to_run_there(isolated: Path) -> None:
    """The caller of a queued task another worker took over heard "it cannot be resumed
    here", though nobody asked to resume it: the reply says where it runs."""
    _GATE["open"] = asyncio.Event()
    owner = make_runtime(isolated, ScriptedModel([]), [waiter])
    job = asyncio.create_task(owner.run_skill("Waiter", {"topic": "x"}))
    while owner.current_task_id is None:
        await asyncio.sleep(0.005)
    task_id = owner.current_task_id
    await owner._run.state.committer.durable()
    other = make_runtime(isolated, ScriptedModel([]), [waiter])  # as a second process would
    try:
        await other.initialize()
        refused = await other.resume_task(task_id)
        assert refused is not None and refused.data["error"] == "running_elsewhere"
        said = (
            f"Task {task_id} was taken over by another process: it runs (or ran) there, not here."
        )
        assert refused.content == said
    finally:
        _GATE["open"].set()
        assert (await job).state == "COMPLETED"
        await owner.close()
        await other.close()


async def test_bad_params_get_one_line_naming_the_field(isolated: Path) -> None:
    rt = make_runtime(isolated, ScriptedModel([]), [asker])
    try:
        reply = await rt.run_skill("Asker", {"topic": "x", "count": "many"})
        assert reply.content == (
            "Bad parameters for Asker: count: Input should be a valid integer,"
            " unable to parse string as an integer"
        )
        assert reply.data["outcome"] == "bad_params"
        assert reply.data["error"] == "bad_params"  # (as a param that is no JSON value)
        missing = await rt.run_skill("Asker", {})
        assert missing.content == "Bad parameters for Asker: topic: Field required"
        chinese = await rt.run_skill("Asker", {"topic": "关于所有权的文章", "count": "很多"})
        assert chinese.content.startswith("Asker 的参数有误：count:")
        for message in (reply, missing, chinese):
            assert "\n" not in message.content and "pydantic" not in message.content
        assert rt.get_resumable_tasks() == []
    finally:
        await rt.close()


async def test_a_missing_file_is_named_relative_to_the_blog(isolated: Path) -> None:
    rt = make_runtime(isolated, ScriptedModel([]), [opener])
    try:
        reply = await rt.run_skill("Opener", {"topic": "nowhere"})
        assert reply.state == "ERROR"
        assert "posts/nowhere.md" in reply.content
        root = str(rt.config.root)
        assert root not in reply.content
        assert rt.history is not None
        entry = rt.history.tasks(limit=1)[0]
        assert root not in entry["error"] and "posts/nowhere.md" in entry["error"]
    finally:
        await rt.close()


async def test_stale_temp_files_are_removed_at_start_up(isolated: Path) -> None:
    posts = isolated / "posts"
    posts.mkdir()
    old = posts / ".skillrt-0123456789abcdef.tmp"
    fresh = posts / ".skillrt-fedcba9876543210.tmp"
    other = posts / ".notes.tmp"
    hidden = isolated / ".git" / ".skillrt-00aa.tmp"  # dot-folders are not walked
    hidden.parent.mkdir()
    for path in (old, fresh, other, hidden):
        path.write_bytes(b"x" * 1000)
    hour_ago = time.time() - 3700
    for path in (old, other, hidden):
        os.utime(path, (hour_ago, hour_ago))
    rt = make_runtime(isolated, ScriptedModel([]), [])
    await rt.initialize()
    await rt.close()
    assert not old.exists()
    assert fresh.exists() and other.exists() and hidden.exists()


def test_only_the_blog_path_itself_is_cut_from_messages(isolated: Path) -> None:
    rt = make_runtime(isolated, ScriptedModel([]), [])
    root = str(rt.config.root)
    text = f"no such file: '{root}/posts/x.md' under {root}; {root}2/x.md and {root}.old stay"
    assert rt.chatlog.blog_relative(text) == (
        f"no such file: 'posts/x.md' under .; {root}2/x.md and {root}.old stay"
    )


async def test_a_skill_run_by_name_stands_for_its_request_without_control_characters(
    isolated: Path,
) -> None:
    rt = make_runtime(isolated, ScriptedModel([]), [asker])
    try:
        waiting = await rt.run_skill("Asker", {"topic": "tea\x1b[31m \x07time"})
        assert waiting.state == "WAITING_INPUT" and waiting.task_id is not None
        summary = rt.get_task(waiting.task_id)
        assert summary is not None and summary.description == "tea[31m time"
    finally:
        await rt.close()
