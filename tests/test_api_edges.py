"""What a blog tool on the public Python API ran into: a sync step's write after the task was
cancelled, a skill's name taken for the request, a failure without a traceback, close() while
a task runs, and params or registrations the API took without a word."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from pathlib import Path

import pytest
from pydantic import BaseModel

from skillrt import SkillContext, SkillResult, skill
from skillrt.exceptions import ConfigError
from skillrt.skills import builtin_skills
from skillrt.testing import FunctionModel, ScriptedModel

from .helpers import make_runtime


class TopicParams(BaseModel):
    topic: str


_go = threading.Event()
_started = threading.Event()
_done = threading.Event()
_raised: list[str] = []


@skill(name="SyncSave", params=TopicParams, description="saves in a sync step")
async def sync_save(ctx: SkillContext, params: TopicParams) -> SkillResult:
    def save() -> str:
        try:
            _started.set()
            _go.wait(10)  # a slow render: the task is aborted meanwhile
            _path, sha = ctx.files.write("posts/saved.md", f"# {params.topic}\n")
            return sha
        except Exception as exc:
            _raised.append(type(exc).__name__)
            raise
        finally:
            _done.set()

    await ctx.step("save", save)
    return SkillResult(message="saved")


async def test_a_sync_step_cannot_write_after_its_task_was_cancelled(isolated: Path) -> None:
    """The thread went on and wrote ``posts/saved.md`` a second after CANCELLED, taking a lock
    for the dead task: the next writer was refused for 5 minutes."""
    (isolated / "posts").mkdir()
    _go.clear(), _started.clear(), _done.clear(), _raised.clear()
    rt = make_runtime(isolated, ScriptedModel([]), [sync_save])
    try:
        await rt.initialize()
        running = asyncio.create_task(rt.run_skill("SyncSave", {"topic": "first"}))
        assert await asyncio.to_thread(_started.wait, 10)  # the step's thread is running
        assert rt.abort()
        cancelled = await running
        assert cancelled.state == "CANCELLED"
        _go.set()  # the thread wakes up after the cancel and tries to save
        assert await asyncio.to_thread(_done.wait, 10)
        await asyncio.sleep(0.05)
        assert _raised == ["TaskCancelled"]
        assert not (isolated / "posts" / "saved.md").exists()
        _done.clear()
        second = await rt.run_skill("SyncSave", {"topic": "second"})
        assert second.state == "COMPLETED", second.content
        assert (isolated / "posts" / "saved.md").read_text() == "# second\n"
    finally:
        _go.set()
        await rt.close()


def test_a_task_view_of_the_files_refuses_writes_once_cancelled(isolated: Path) -> None:
    """Before any lock or rename: the cancelled task neither holds a lock nor changes a file."""
    from skillrt.abort import AbortController
    from skillrt.blog.files import FileStore
    from skillrt.blog.locks import FileLockManager
    from skillrt.exceptions import TaskCancelled

    (isolated / "posts").mkdir()
    (isolated / "posts" / "a.md").write_text("# a\n")
    locks = FileLockManager(isolated / ".skillrt" / "locks")
    controller = AbortController()
    view = FileStore(isolated, locks=locks).for_task("t1", signal=controller.signal)
    view.write("posts/b.md", "# b\n")
    controller.abort()
    locks.release_task_locks("t1")
    for attempt in (
        lambda: view.write("posts/a.md", "# changed\n"),
        lambda: view.move_to_trash("posts/a.md"),
    ):
        try:
            attempt()
        except TaskCancelled:
            pass
        else:
            raise AssertionError("a cancelled task's write went through")
    assert (isolated / "posts" / "a.md").read_text() == "# a\n"
    assert locks.held_by("t1") == []


class CountParams(BaseModel):
    count: int = 1


_seen_text: list[str] = []


@skill(name="Counter", params=CountParams, description="no text params")
async def counter(ctx: SkillContext, params: CountParams) -> SkillResult:
    _seen_text.append(ctx.input.text)
    return SkillResult(message="counted")


async def test_a_skill_run_without_text_params_has_no_request_text(isolated: Path) -> None:
    """The skill's name stood for the request: ``run_skill("ResearchWeb", {})`` asked the
    model (and the web) the question "ResearchWeb", and a skill saw ``ctx.input.text ==
    "Counter"``."""
    _seen_text.clear()
    asked: list[object] = []

    def model(messages: object, options: object) -> str:
        asked.append(messages)
        raise RuntimeError("no model call expected")

    rt = make_runtime(isolated, FunctionModel(model), [*builtin_skills(), counter])
    try:
        done = await rt.run_skill("Counter", {"count": 3})
        assert done.state == "COMPLETED" and _seen_text == [""]
        for name, needs in (("ResearchWeb", "needs a question"), ("Browse", "needs a task")):
            refused = await rt.run_skill(name, {})
            assert needs in refused.content, refused.content
        greeted = await rt.run_skill("Chat", {})  # (the model was asked about nothing)
        assert greeted.state == "COMPLETED" and "What shall we work on?" in greeted.content
        assert asked == []
    finally:
        await rt.close()


def _helper(values: dict[str, str]) -> str:
    return values["x"]


@skill(name="Buggy", params=TopicParams, description="a skill with a bug in a helper")
async def buggy(ctx: SkillContext, params: TopicParams) -> SkillResult:
    return SkillResult(message=_helper({}))


async def test_a_bug_in_a_skill_is_named_in_the_reply_and_its_traceback_logged(
    isolated: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A KeyError in a helper read "The task failed: 'x'", and even at debug level the only log
    line was ``agent.error error="KeyError: 'x'"``: nothing said where."""
    rt = make_runtime(isolated, ScriptedModel([]), [buggy])
    try:
        with caplog.at_level(logging.ERROR, logger="skillrt.runtime"):
            failed = await rt.run_skill("Buggy", {"topic": "x"})
        assert failed.state == "ERROR"
        assert failed.content == "The task failed: KeyError: 'x'"
        assert "Traceback" not in failed.content
        logged = "\n".join(r.getMessage() for r in caplog.records)
        assert "agent.error" in logged and "Traceback" in logged and "_helper" in logged
    finally:
        await rt.close()


@skill(name="Slow", params=TopicParams, description="a step that takes its time")
async def slow(ctx: SkillContext, params: TopicParams) -> SkillResult:
    async def first() -> str:
        return "one"

    async def second() -> str:
        await asyncio.sleep(30)
        return "two"

    await ctx.step("first", first)
    await ctx.step("second", second)
    return SkillResult(message=f"done {params.topic}")


async def test_close_while_a_task_runs_leaves_it_paused_and_resumable(isolated: Path) -> None:
    """The caller got a reply in EXECUTING (not an ending), subscribers no event, ``rt.state``
    stayed EXECUTING after close, and reopening listed the task EXECUTING: resume, abort and
    abandon refused it until a new process."""
    rt = make_runtime(isolated, ScriptedModel([]), [slow])
    seen: list[tuple[str, dict[str, object]]] = []
    rt.on("*", lambda e: seen.append((e.type, dict(e.data))))
    await rt.initialize()
    running = asyncio.create_task(rt.run_skill("Slow", {"topic": "long"}))
    for _ in range(500):
        await asyncio.sleep(0.01)
        if rt.state == "EXECUTING":
            break
    await asyncio.sleep(0.1)  # in its second step
    seen.clear()
    await rt.close()
    reply = await running
    assert reply.state == "PAUSED" and reply.data["outcome"] == "interrupted"
    assert ("state:changed", {"from": "EXECUTING", "to": "PAUSED"}) in seen
    # (not aborted: it was not cancelled, and is resumable, as a paused task is)
    assert not [d for t, d in seen if t == "task:aborted"]
    assert rt.state == "IDLE"
    try:
        await rt.initialize()  # reopened: the task comes back from its checkpoint
        assert [(t.id, t.state) for t in rt.get_resumable_tasks()] == [(reply.task_id, "PAUSED")]
        assert reply.task_id is not None
        assert rt.abort(reply.task_id)  # (refused before: it read EXECUTING)
    finally:
        await rt.close()


_topics: list[str] = []


@skill(name="Topical", params=TopicParams, description="journals its topic")
async def topical(ctx: SkillContext, params: TopicParams) -> SkillResult:
    topic = await ctx.step("topic", lambda: params.topic)
    _topics.append(topic)
    return SkillResult(message="ok")


async def test_run_skill_params_are_cleaned_and_checked_as_json(isolated: Path) -> None:
    """A lone surrogate in a param failed the first step with advice for the skill's developer
    shown to the user; an ``object()`` was taken, then failed the task at its first checkpoint
    ("Unable to serialize unknown type")."""
    _topics.clear()
    rt = make_runtime(isolated, ScriptedModel([]), [topical])
    try:
        done = await rt.run_skill("Topical", {"topic": "caf\udce9\x00 au lait\n"})
        assert done.state == "COMPLETED", done.content
        assert _topics == ["caf? au lait\n"]
        refused = await rt.run_skill("Topical", {"topic": "x", "extra": object()})
        assert refused.data["error"] == "bad_params"
        assert refused.content == "param extra is not a JSON value: object"
        assert rt.get_resumable_tasks() == [] and rt.list_tasks() == []
    finally:
        await rt.close()


async def test_a_bad_budget_to_resume_is_a_config_error(isolated: Path) -> None:
    """pydantic's raw ValidationError came out of ``resume_task``, not one of
    ``skillrt.exceptions``; ``load_config`` turns the same mistake into a ``ConfigError``."""
    rt = make_runtime(isolated, ScriptedModel([]), [])
    try:
        for bad, key in (({"max_tokens": "lots"}, "budget.max_tokens"), ("lots", "budget")):
            with pytest.raises(ConfigError) as raised:
                await rt.resume_task("0123456789abcdef", budget=bad)  # type: ignore[arg-type]
            assert raised.value.key == key
    finally:
        await rt.close()


def test_get_instance_takes_the_constructors_keywords(isolated: Path) -> None:
    """DESIGN: ``get_instance(config=None, **same_keywords)``; ``skills=`` raised TypeError."""
    from skillrt import AgentRuntime, load_config

    model = ScriptedModel([])
    rt = AgentRuntime.get_instance(load_config(content_root=isolated), llm=model, skills=[counter])
    try:
        assert "Counter" in rt.skills and rt.llm is model
        assert AgentRuntime.get_instance() is rt
    finally:
        AgentRuntime.reset_instance()


async def _plain(ctx: SkillContext, params: TopicParams) -> SkillResult:
    return SkillResult(message="plain")


def test_misuse_of_registration_and_subscription_is_a_clear_type_error(isolated: Path) -> None:
    """An undecorated function, None or a name raised AttributeError at ``register_skill``, as
    did ``@skill(params=dict)``; ``@skill`` on a sync def failed only at run time ("object
    SkillResult can't be used in 'await' expression"); ``rt.on`` took a non-callable."""
    rt = make_runtime(isolated, ScriptedModel([]), [])
    for wrong in (_plain, None, "Counter"):
        with pytest.raises(TypeError, match="register_skill takes a Skill"):
            rt.register_skill(wrong)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="params must be a pydantic BaseModel class, not dict"):
        skill(name="Dicts", params=dict)  # type: ignore[type-var]
    with pytest.raises(TypeError, match="must be an async def"):

        @skill(name="Sync", params=TopicParams)
        def sync(ctx: SkillContext, params: TopicParams) -> SkillResult:
            return SkillResult(message="sync")

    with pytest.raises(TypeError, match="callback must be callable"):
        rt.on("task:progress", "print")  # type: ignore[arg-type]
    unsubscribe = rt.on("my_plugin:done", lambda event: None)  # a plugin's own event: taken
    unsubscribe()
    for blank in ("", "  "):  # was taken, and its callback never called
        with pytest.raises(ValueError, match="is blank"):
            rt.on(blank, lambda event: None)
        with pytest.raises(ValueError, match="is blank"):
            rt.events.on_raw(blank, lambda event: None)


def test_a_config_or_model_of_the_wrong_kind_is_a_clear_type_error(isolated: Path) -> None:
    """``AgentRuntime("blog")`` raised "'str' object has no attribute 'session_id'", and
    ``llm="gpt-4"`` was taken, to fail at the first request."""
    from skillrt import AgentRuntime, load_config

    for wrong in ("blog", {"content_root": str(isolated)}):
        with pytest.raises(TypeError, match=f"takes a RuntimeConfig.*not {type(wrong).__name__}"):
            AgentRuntime(wrong, llm=ScriptedModel([]), skills=[])  # type: ignore[arg-type]
    config = load_config(content_root=isolated / "blog", state_dir=isolated / "state")
    with pytest.raises(TypeError, match=r"llm is a model .* not str; a model's name goes in"):
        AgentRuntime(config, llm="gpt-4", skills=[])  # type: ignore[arg-type]


async def test_a_skill_that_returns_no_skill_result_says_what_it_should_return(
    isolated: Path,
) -> None:
    @skill(name="Text", params=TopicParams)
    async def text(ctx: SkillContext, params: TopicParams) -> SkillResult:
        return "hello"  # type: ignore[return-value]

    rt = make_runtime(isolated, ScriptedModel([]), [text])
    try:
        msg = await rt.run_skill("Text", {"topic": "x"})
    finally:
        await rt.close()
    assert msg.state == "ERROR"
    assert "returned str, not a SkillResult (return SkillResult(message=" in msg.content


def test_every_exception_is_in_the_tree_the_module_draws() -> None:
    """STYLE.md: one exceptions module, its tree drawn in its docstring. FrontmatterNotKept
    was raised (and refused in the user's words) but missing from the tree."""
    import inspect

    from skillrt import exceptions

    drawn = set(re.findall(r"[├└]── (\w+)", exceptions.__doc__ or "")) | {"SkillrtError"}
    defined = {
        name
        for name, value in inspect.getmembers(exceptions, inspect.isclass)
        if issubclass(value, Exception) and value.__module__ == exceptions.__name__
    }
    assert defined - drawn == set()
