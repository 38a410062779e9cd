"""What a custom skill gets from the runtime: typed durable steps (``returns=``), sync steps run
off the event loop, text params declared with ``Chars`` and checked when the skill runs, its
own ``Replies`` read by ``ctx.reply``, and the errors a user can fix answered as refusals."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from skillrt import (
    AgentRuntime,
    BadParam,
    Replies,
    SkillContext,
    SkillResult,
    UserError,
    load_config,
    skill,
)
from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt._state.records import TaskRecord
from skillrt.skill.params import Chars, LongText, PostPath, Text
from skillrt.testing import FunctionModel, ScriptedModel

from .helpers import TopicParams, make_runtime


class Plan(BaseModel):
    title: str
    parts: list[str]


def planner(seen: list[Any]) -> Any:
    """Plan (a typed step), write (a model call), tidy: what the plan step returned is seen."""

    @skill(name="Planner", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def run(ctx: SkillContext, params: TopicParams) -> SkillResult:
        async def plan() -> Plan:
            return Plan(title=params.topic.title(), parts=["why", "how"])

        planned = await ctx.step("plan", plan, returns=Plan)
        seen.append(planned)

        async def write() -> str:
            answer = await ctx.llm.chat([{"role": "user", "content": f"write {planned.title}"}])
            return answer.content

        text: str = await ctx.step("write", write)
        tidy: str = await ctx.step("tidy", lambda: text.strip())  # a pause stops before it
        return SkillResult(message=tidy, data={"title": planned.title})

    return run


async def test_a_typed_step_gives_its_model_on_the_first_run_and_after_a_resume(
    isolated: Path,
) -> None:
    seen: list[Any] = []
    gate = asyncio.Event()

    async def answer(messages: list[Any], options: Any) -> str:
        await gate.wait()
        return "an article"

    rt = make_runtime(isolated, FunctionModel(answer), [planner(seen)])
    job = asyncio.create_task(rt.process_input("write an article about typed steps"))
    while not seen:
        await asyncio.sleep(0.005)
    assert rt.pause() is True
    gate.set()
    paused = await job
    assert paused.state == "PAUSED"
    await rt.close()

    store = CheckpointStore(isolated / ".skillrt" / "checkpoints")
    record = store.get(paused.task_id or "")
    store.close()
    assert record is not None  # the journal holds the model's JSON
    assert record.steps["plan"] == {"title": "Typed Steps", "parts": ["why", "how"]}

    again = make_runtime(isolated, ScriptedModel([]), [planner(seen)])  # "write" is journalled
    await again.initialize()
    done = await again.resume_task(paused.task_id or "")
    await again.close()
    assert done is not None and done.state == "COMPLETED", done
    assert [type(p) for p in seen] == [Plan, Plan]  # the resumed run got a Plan too
    assert seen[0] == seen[1] == Plan(title="Typed Steps", parts=["why", "how"])


async def test_a_journalled_result_that_does_not_fit_its_model_fails_clearly(
    isolated: Path,
) -> None:
    rt = make_runtime(isolated, ScriptedModel(["x"]), [planner([])])
    await rt.initialize()
    await rt.close()
    store = CheckpointStore(isolated / ".skillrt" / "checkpoints")
    now = time.time()
    store.save(
        TaskRecord(
            id="bad-plan",
            session_id="s",
            state="EXECUTING",
            raw_input="write an article about x",
            skill="Planner",
            params={"topic": "x"},
            steps={"plan": {"title": "X", "parts": "not a list"}},
            created_at=now,
            updated_at=now,
        )
    )
    store.close()
    again = make_runtime(isolated, ScriptedModel(["x"]), [planner([])])
    await again.initialize()
    msg = await again.resume_task("bad-plan")
    await again.close()
    assert msg is not None and msg.state == "ERROR"
    assert "corrupt checkpoint step 'plan'" in msg.content and "not a Plan" in msg.content


async def test_sync_steps_run_in_a_thread_and_async_steps_on_the_loop(isolated: Path) -> None:
    threads: dict[str, int] = {}

    @skill(name="Threads", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def run(ctx: SkillContext, params: TopicParams) -> SkillResult:
        threads["loop"] = threading.get_ident()

        def blocking() -> dict[str, int]:
            threads["sync"] = threading.get_ident()
            return {"n": 1}

        async def on_loop() -> int:
            threads["async"] = threading.get_ident()
            return 2

        first = await ctx.step("sync", blocking)
        second = await ctx.step("async", on_loop)
        third = await ctx.step("made", lambda: on_loop())  # a sync callable making a coroutine
        return SkillResult(message="ok", data={"got": [first, second, third]})

    rt = make_runtime(isolated, ScriptedModel([]), [run])
    msg = await rt.run_skill("Threads", {"topic": "t"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["got"] == [{"n": 1}, 2, 2]
    assert threads["sync"] != threads["loop"]  # blocking I/O never holds the loop
    assert threads["async"] == threads["loop"]


REPLIES = Replies(
    {
        "no_name": ("请告诉我名字。", "Please tell me the name."),
        "name_too_long": (
            "名字太长了（{chars} 个字符，最多 {limit}）。",
            "That name is too long ({chars} characters; at most {limit}).",
        ),
        "hello": ("你好，{name}！", "Hello, {name}!"),
        "taken": ("{name} 已经有了。", "{name} is taken."),
    }
)


class GreetParams(BaseModel):
    name: Annotated[str, Chars(12, empty="no_name", too_long="name_too_long")]
    note: LongText = "-"
    nickname: Annotated[str | None, Chars()] = None
    path: PostPath = None


def greeter(seen: list[GreetParams]) -> Any:
    @skill(name="Greeter", params=GreetParams, replies=REPLIES)
    async def run(ctx: SkillContext, params: GreetParams) -> SkillResult:
        seen.append(params)
        if params.name == "Admin":
            raise BadParam("name", "taken", name=params.name)
        if params.path:
            ctx.files.read(params.path)
        return SkillResult(message=ctx.reply("hello", name=params.name))

    return run


def greeting_runtime(root: Path, seen: list[GreetParams]) -> AgentRuntime:
    config = load_config(content_root=root, max_input_chars=40)
    return AgentRuntime(config, llm=ScriptedModel([]), skills=[greeter(seen)])


async def test_text_params_are_cleaned_when_parsed(isolated: Path) -> None:
    seen: list[GreetParams] = []
    rt = greeting_runtime(isolated, seen)
    params = {"name": "  Ada \n Lovelace ", "note": "  two\n\nparagraphs  ", "nickname": "  "}
    msg = await rt.run_skill("Greeter", {**params, "path": " "})
    await rt.close()
    assert msg.content == "Hello, Ada Lovelace!"
    [got] = seen
    assert (got.name, got.note, got.nickname, got.path) == (
        "Ada Lovelace",  # squashed
        "two\n\nparagraphs",  # stripped only
        None,  # blank where None is allowed
        None,
    )


@pytest.mark.parametrize(
    ("params", "error", "reply"),
    [
        ({"name": "   "}, "no_name", "Please tell me the name."),
        ({"name": "x" * 13}, "name_too_long", "That name is too long (13 characters; at most 12)."),
        ({"name": "名" * 13}, "name_too_long", "名字太长了（13 个字符，最多 12）。"),
        ({"name": "Ada", "note": "y" * 41}, "param_too_long", "The note is too long (41 char"),
        ({"name": "Ada", "note": " "}, "param_empty", "Please give the note."),
        ({"name": "Admin"}, "taken", "Admin is taken."),
    ],
)
async def test_a_refused_param_gets_one_line_in_the_users_language(
    isolated: Path, params: dict[str, str], error: str, reply: str
) -> None:
    seen: list[GreetParams] = []
    rt = greeting_runtime(isolated, seen)
    msg = await rt.run_skill("Greeter", params)
    await rt.close()
    assert msg.state == "ERROR" and msg.content.startswith(reply), msg.content
    assert "\n" not in msg.content
    assert msg.data["error"] == error and msg.data["field"] in ("name", "note")
    assert len(seen) == (1 if error == "taken" else 0)  # refused before the skill ran
    assert rt.get_resumable_tasks() == []


async def test_a_missing_file_and_a_path_outside_are_refusals_for_any_skill(
    isolated: Path,
) -> None:
    (isolated / "posts").mkdir()
    (isolated / "posts" / "hello-world.md").write_text("# Hello\n", encoding="utf-8")
    rt = greeting_runtime(isolated, [])
    missing = await rt.run_skill("Greeter", {"name": "Ada", "path": "posts/hello-wrld.md"})
    outside = await rt.run_skill("Greeter", {"name": "Ada", "path": "../secrets.md"})
    await rt.close()
    assert missing.content == (
        "`posts/hello-wrld.md` does not exist. Did you mean `posts/hello-world.md`?"
    )
    assert missing.data["error"] == "not_found"
    assert missing.data["suggestions"] == ["posts/hello-world.md"]
    assert "is outside the blog" in outside.content
    assert outside.data == {"error": "path_not_allowed", "outside_blog": True, "outcome": "refused"}


def test_replies_pick_the_language_and_refuse_a_bad_table() -> None:
    assert REPLIES.text("hello", "zh", name="Ada") == "你好，Ada！"
    assert REPLIES.text("hello", "en", name="Ada") == "Hello, Ada!"
    joined = REPLIES | Replies({"bye": ("再见", "Bye")})
    assert set(joined) == {*REPLIES, "bye"}
    assert (joined | REPLIES)["hello"] == REPLIES["hello"]  # the same words twice: fine
    with pytest.raises(UserError, match="'hello' are worded twice"):
        REPLIES | Replies({"hello": ("嗨", "Hi")})
    with pytest.raises(UserError, match="pair of texts"):
        Replies({"half": ("只有中文", "")})
    with pytest.raises(KeyError, match="no reply 'nope'"):
        REPLIES.text("nope", "en")


def test_chars_must_annotate_the_whole_optional_type() -> None:
    class Wrong(BaseModel):
        name: Text | None = None

    with pytest.raises(UserError, match=r"Annotated\[str \| None, Chars"):

        @skill(name="Wrong", params=Wrong)
        async def run(ctx: SkillContext, params: Wrong) -> SkillResult:
            return SkillResult()


async def test_a_step_returning_text_that_is_not_utf8_is_refused_by_name(isolated: Path) -> None:
    """A lone surrogate (bytes decoded with ``surrogateescape``) cannot be journalled: the step
    is refused in words naming it, not at the checkpoint in the serialiser's, and nothing after
    it runs; a step with ordinary non-ASCII text is kept as it was returned."""
    after: list[str] = []

    @skill(name="Surrogates", params=TopicParams, intents=["WRITE_ARTICLE"])
    async def run(ctx: SkillContext, params: TopicParams) -> SkillResult:
        fine = await ctx.step("fine", lambda: {"text": "博客 ünïcode"})
        if params.topic == "text":
            await ctx.step("bad", lambda: b"caf\xe9".decode("utf-8", "surrogateescape"))
        else:
            await ctx.step("bad", lambda: {"page": b"caf\xe9".decode("utf-8", "surrogateescape")})
        after.append("ran")
        return SkillResult(message="ok", data=fine)

    rt = make_runtime(isolated, ScriptedModel([]), [run])
    for shape in ("text", "dict"):
        msg = await rt.run_skill("Surrogates", {"topic": shape})
        assert msg.state == "ERROR", msg.content
        assert "step 'bad'" in msg.content and "\\udce9" in msg.content, msg.content
    await rt.close()
    assert after == []


def test_a_step_is_told_async_or_sync_as_inspect_tells_it() -> None:
    """``ctx.step`` runs an async step on the loop and a sync one in a thread; it tells them
    apart from a plain function's code flags (through partials) and asks ``inspect`` for
    anything else: the same answer as ``inspect.iscoroutinefunction`` for every kind."""
    import functools
    import inspect

    from skillrt.skill.context import _is_async

    async def coro(x: int = 1) -> int:
        return x

    def plain(x: int = 1) -> int:
        return x

    async def agen() -> Any:
        yield 1

    class Steps:
        async def method(self) -> None: ...

        def sync_method(self) -> None: ...

        async def __call__(self) -> None: ...

    steps = Steps()
    kinds: list[Any] = [
        coro,
        plain,
        agen,
        lambda: 1,
        functools.partial(coro, 2),
        functools.partial(plain, 2),
        functools.partial(functools.partial(coro, 2)),
        steps.method,
        steps.sync_method,
        steps,  # an object whose __call__ is async: inspect says no (it runs in a thread)
        functools.partial(steps.method),
        print,
        functools.partial(print, "x"),
    ]
    for fn in kinds:
        assert _is_async(fn) is inspect.iscoroutinefunction(fn), fn
