"""Conversation context: each session's turns and focus, bounded, surviving a restart."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from skillrt import AgentRuntime, SkillContext, SkillResult, load_config, skill
from skillrt.llm.base import LLMMessage, estimate_tokens
from skillrt.skill.conversation import Sessions, Turn, bound_turns, focus_from_result
from skillrt.skills.writing import writing_skills
from skillrt.testing import FunctionModel, ModelOptions, ScriptedModel
from tests.blog import copy_blog
from tests.writing_support import FollowUpModel, WritingModelFn, writing_runtime


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


class Said(BaseModel):
    text: str = ""


def test_bound_turns_keeps_the_newest_within_the_bound() -> None:
    turns = [
        Turn("user" if i % 2 else "assistant", f"turn {i} " + "word " * 50) for i in range(200)
    ]
    kept = bound_turns(turns, 300)
    assert kept[-1].content.startswith("turn 199")
    assert sum(estimate_tokens(t.content) + 4 for t in kept) <= 300
    assert [t.content.split()[1] for t in kept] == [str(i) for i in range(200 - len(kept), 200)]
    huge = bound_turns([Turn("user", "x" * 100_000)], 200)
    assert len(huge) == 1 and estimate_tokens(huge[0].content) <= 200


def test_focus_from_result() -> None:
    assert focus_from_result("WriteArticle", {"path": "posts/a.md"}) == (True, "posts/a.md")
    assert focus_from_result("Summarize", {"source": "posts/b.md"}) == (True, "posts/b.md")
    assert focus_from_result("Summarize", {"source": "selection"}) == (False, None)
    assert focus_from_result("DeleteArticle", {"path": "posts/a.md", "deleted": True}) == (
        True,
        None,
    )
    assert focus_from_result("X", {"focus": "posts/c.md", "path": "posts/d.md"}) == (
        True,
        "posts/c.md",
    )
    assert focus_from_result("X", {"path": "https://example.com"}) == (False, None)


def test_sessions_read_turns_and_focus_back_from_the_history() -> None:
    stored = [  # newest first, as History.messages returns them
        {"role": "assistant", "content": "Edited.", "focus": "posts/b.md", "task_id": "t2"},
        {"role": "user", "content": "make it shorter"},
        {"role": "system", "content": "", "focus": "posts/a.md"},
        {"role": "user", "content": "hello"},
    ]
    sessions = Sessions(lambda sid, limit: stored if sid == "s1" else [], max_tokens=500)
    conv = sessions.conversation("s1")
    assert conv.focus == "posts/b.md"
    assert [t.content for t in conv.turns] == ["hello", "make it shorter", "Edited."]
    assert sessions.conversation("other").turns == ()


async def test_a_200_turn_session_stays_within_the_bound(blog: Path) -> None:
    seen: list[int] = []

    def model(messages: list[LLMMessage], options: ModelOptions) -> str:
        seen.append(sum(estimate_tokens(m["content"]) for m in messages))
        return "ok " * 40

    @skill(name="Echo", params=Said, pattern=r"^echo (?P<text>.+)$")
    async def echo(ctx: SkillContext, params: Said) -> SkillResult:
        assert ctx.conversation.turns[-1].content == ctx.input.text
        result = await ctx.llm.chat(ctx.conversation.messages())
        return SkillResult(message=f"{params.text}: {result.content}")

    config = load_config(content_root=blog, state_dir=blog.parent / "state")
    config.conversation.max_tokens = 400
    rt = AgentRuntime(config, llm=FunctionModel(model), skills=[echo])
    await rt.initialize()
    for i in range(100):
        msg = await rt.process_input(f"echo number {i} " + "padding " * 30)
        assert msg.state == "COMPLETED", msg.content
    assert len(seen) == 100 and max(seen) <= 400
    conv = rt.conversation()
    assert conv.turns[-1].content.startswith("number 99")
    assert len(conv.turns) < 200  # older turns were left out to keep within the bound
    await rt.close()


async def test_focus_follows_the_work_and_survives_a_restart(blog: Path) -> None:
    fn = WritingModelFn()
    rt = writing_runtime(blog, FunctionModel(fn), session_id="s-restart")
    await rt.initialize()
    msg = await rt.process_input("write an article about Rust ownership")
    assert msg.state == "COMPLETED", msg.content
    written = msg.data["path"]
    assert rt.conversation().focus == written

    msg = await rt.process_input("make it shorter")
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["path"] == written
    assert "(edit) answer" in (blog / written).read_text(encoding="utf-8")

    opened = await rt.set_focus("posts/docker-basics.md")
    assert opened == "posts/docker-basics.md"
    await rt.close()

    rt2 = writing_runtime(blog, FunctionModel(fn), session_id="s-restart")
    await rt2.initialize()
    conv = rt2.conversation()
    assert conv.focus == "posts/docker-basics.md"
    assert conv.turns[0].content == "write an article about Rust ownership"
    msg = await rt2.process_input("summarize it")
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["source"] == "posts/docker-basics.md"
    await rt2.close()


async def test_a_blog_tools_open_file_becomes_the_focus_per_session(blog: Path) -> None:
    rt = AgentRuntime(
        load_config(content_root=blog, state_dir=blog.parent / "state"),
        llm=FunctionModel(WritingModelFn()),
        skills=writing_skills(),
    )
    await rt.initialize()
    ctx: dict[str, Any] = {"session_id": "a", "current_file": "posts/git-workflow.md"}
    msg = await rt.process_input("summarize this post", context=ctx)
    assert msg.data["source"] == "posts/git-workflow.md"
    msg = await rt.process_input("summarize it", context={"session_id": "a"})
    assert msg.data["source"] == "posts/git-workflow.md"
    assert rt.conversation("a").focus == "posts/git-workflow.md"
    assert rt.conversation("b").focus is None
    await rt.close()


def candidates(question: str) -> list[str]:
    """The posts a "which post?" question lists, in order."""
    import re

    return re.findall(r"^\d+\. .*\(`([^`]+)`\)$", question, re.M)


async def run_conversation(rt: AgentRuntime, session: str, steps: list[tuple[str, Any]]) -> int:
    """Send each input; check the path it acted on (``data[key] == expected``). Returns how
    many follow-ups (inputs after the first) acted on the right post."""
    done = 0
    for i, (text, check) in enumerate(steps):
        msg = await rt.process_input(text, context={"session_id": session})
        assert msg.state in ("COMPLETED", "WAITING_INPUT"), (text, msg.content)
        check(msg)
        done += i > 0
    return done


async def test_follow_ups_act_on_the_focus_in_english_and_chinese(blog: Path) -> None:
    rt = writing_runtime(blog, FunctionModel(FollowUpModel()))
    await rt.initialize()
    state: dict[str, Any] = {}

    def keep(name: str, key: str = "path") -> Any:
        def check(msg: Any) -> None:
            state[name] = msg.data[key]

        return check

    def on(name: str, key: str = "path") -> Any:
        def check(msg: Any) -> None:
            assert msg.state == "COMPLETED", msg.content
            assert msg.data[key] == state[name], (msg.content, state)

        return check

    def asks(*words: str) -> Any:
        def check(msg: Any) -> None:
            assert msg.state == "WAITING_INPUT", msg.content
            for word in words:
                assert word in msg.content
            state["choices"] = candidates(msg.content)

        return check

    def chose(index: int, key: str = "source") -> Any:
        def check(msg: Any) -> None:
            assert msg.state == "COMPLETED", msg.content
            assert msg.data[key] == state["choices"][index]

        return check

    def deleted(name: str) -> Any:
        def check(msg: Any) -> None:
            assert msg.data["deleted"] is True and msg.data["path"] == state[name]
            assert not (blog / state[name]).exists()

        return check

    def translated(name: str, source: str, lang: str) -> Any:
        def check(msg: Any) -> None:
            assert msg.state == "COMPLETED", msg.content
            assert msg.data["source"] == state[source] and msg.data["language"] == lang
            state[name] = msg.data["path"]
            assert state[name].endswith(f"-{lang}.md")
            text = (blog / state[name]).read_text(encoding="utf-8")
            assert f"translation_of: {state[source]}" in text

        return check

    def similar(name: str, like: str) -> Any:
        def check(msg: Any) -> None:
            assert msg.state == "COMPLETED", msg.content
            state[name] = msg.data["path"]
            assert msg.data["related"][0] == state[like]

        return check

    english = [
        ("write an article about Rust ownership", keep("A")),
        ("make it shorter", on("A")),
        ("summarize it", on("A", "source")),
        ("add a section about error handling to it", on("A")),
        ("shorten it", on("A")),
        ("translate it into Chinese", translated("B", "A", "zh")),
        ("make it more casual", on("B")),
        ("write a similar post about Go channels", similar("C", "B")),
        ("polish it", on("C")),
        ("delete it", asks("Delete", "Answer yes or no")),
        ("yes", deleted("C")),
        ("summarize it", asks("Which post should I summarise?")),
        ("1", chose(0)),
    ]
    chinese = [
        ("写一篇关于 Rust 所有权的文章", keep("A")),
        ("把它改得更口语化", on("A")),
        ("让它更简洁一些", on("A")),
        ("总结一下", on("A", "source")),
        ("给它加一节关于错误处理的内容", on("A")),
        ("把它翻译成英文", translated("B", "A", "en")),
        ("再短一点", on("B")),
        ("再写一篇类似的，关于 Go 的并发", similar("C", "B")),
        ("删掉它", asks("确定要删除")),
        ("是", deleted("C")),
        ("把它改得更正式一点", asks("要修改哪篇文章？")),
        ("2", chose(1, "path")),
    ]
    follow_ups = await run_conversation(rt, "en", english)
    state.clear()
    follow_ups += await run_conversation(rt, "zh", chinese)
    assert follow_ups >= 20
    await rt.close()


async def test_a_follow_up_without_a_focus_asks_which_post(blog: Path) -> None:
    rt = writing_runtime(blog, FunctionModel(FollowUpModel()))
    await rt.initialize()
    msg = await rt.process_input("translate it into English")
    assert msg.state == "WAITING_INPUT"
    listed = candidates(msg.content)
    assert 2 <= len(listed) <= 5 and "Answer with a number or a name." in msg.content
    msg = await rt.process_input("Docker Basics")  # answered by name
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["source"] == "posts/docker-basics.md"
    assert rt.conversation().focus == msg.data["path"] == "posts/docker-basics-en.md"


async def test_translate_that_after_a_general_answer_translates_the_answer(blog: Path) -> None:
    """ "translate that to Chinese" after "what's the capital of france" asked which post to
    translate: the user meant the answer."""
    prompts: list[str] = []

    def model(messages: list[LLMMessage], options: ModelOptions) -> str:
        prompts.append(messages[0]["content"])
        if "translated into Simplified Chinese" in messages[0]["content"]:
            return "巴黎是法国的首都。"
        if "translated into English" in messages[0]["content"]:
            return "Paris is the capital of France."
        return "Paris is the capital of France."

    rt = chat_runtime(blog, FunctionModel(model))
    await rt.initialize()
    msg = await rt.process_input("what's the capital of france")
    assert msg.state == "COMPLETED" and "Paris" in msg.content
    msg = await rt.process_input("translate that to Chinese")
    assert (msg.state, msg.content) == ("COMPLETED", "巴黎是法国的首都。")
    assert msg.data["chat"] is True and msg.data["translated_to"] == "zh"
    assert "Paris is the capital of France." in str(rt.conversation().turns)  # (it saw it)
    msg = await rt.process_input("翻译成英文")
    assert (msg.state, msg.content) == ("COMPLETED", "Paris is the capital of France.")
    # a post named is still the post's translation (the model's is refused, not in Chinese)
    msg = await rt.process_input("translate the docker post into Chinese")  # Translate's
    assert msg.data["source"] == "posts/docker-basics.md" and "translated_to" not in msg.data
    await rt.close()


async def test_a_translation_in_another_language_than_asked_is_not_shown(blog: Path) -> None:
    rt = chat_runtime(blog, FunctionModel(lambda m, o: "Paris is the capital of France."))
    await rt.initialize()
    await rt.process_input("what's the capital of france")
    msg = await rt.process_input("translate that to Chinese")
    assert msg.state == "COMPLETED" and msg.data["fallback"] is True
    assert msg.content == (
        "I could not translate the last answer into Chinese: the model's answer was not in Chinese."
    )
    await rt.close()


async def test_translate_it_with_a_post_in_focus_after_an_answer_is_the_posts(blog: Path) -> None:
    rt = writing_runtime(blog, FunctionModel(FollowUpModel()))
    await rt.initialize()
    await rt.set_focus("posts/docker-basics.md")
    rt.chatlog.sessions.set_last_skill(rt.session_id, "AnswerQuestion")
    msg = await rt.process_input("translate it into Chinese")
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["source"] == "posts/docker-basics.md" and msg.data["language"] == "zh"
    await rt.close()


async def test_the_conversation_is_the_session_when_the_task_started(blog: Path) -> None:
    """``ctx.conversation`` is bounded only when a skill first reads it, but it is the
    session as it stood when the task started: a question and its answer asked later in the
    task are not in it, and a skill that never reads it still sees its turns kept."""
    seen: list[tuple[str, ...]] = []

    @skill(name="Asker", params=Said, pattern=r"^ask (?P<text>.+)$")
    async def asker(ctx: SkillContext, params: Said) -> SkillResult:
        answer = await ctx.ask("which one?")
        seen.append(tuple(t.content for t in ctx.conversation.turns))
        return SkillResult(message=f"{params.text}: {answer}")

    @skill(name="Quiet", params=Said, pattern=r"^quiet (?P<text>.+)$")
    async def quiet(ctx: SkillContext, params: Said) -> SkillResult:
        return SkillResult(message=params.text)

    config = load_config(content_root=blog, state_dir=blog.parent / "state")
    rt = AgentRuntime(config, llm=FunctionModel(lambda m, o: "ok"), skills=[asker, quiet])
    await rt.initialize()
    assert (await rt.process_input("quiet one")).state == "COMPLETED"
    msg = await rt.process_input("ask two")
    assert msg.state == "WAITING_INPUT"
    msg = await rt.process_input("the second")
    assert msg.state == "COMPLETED", msg.content
    assert seen == [("quiet one", "one", "ask two")]
    await rt.close()


def chat_runtime(blog: Path, model: Any, **overrides: Any) -> AgentRuntime:
    from skillrt.skills.chat import chat

    config = load_config(content_root=blog, state_dir=blog.parent / "state", **overrides)
    return AgentRuntime(config, llm=model, skills=[*writing_skills(), chat])


async def test_hello_and_thanks_get_a_chat_reply_and_complete(blog: Path) -> None:
    seen: list[list[LLMMessage]] = []

    def model(messages: list[LLMMessage], options: ModelOptions) -> str:
        seen.append(messages)
        return f"chat reply {len(seen)}"

    rt = chat_runtime(blog, FunctionModel(model))
    await rt.initialize()
    for text in ("hello", "thanks", "你好", "谢谢！"):
        msg = await rt.process_input(text)
        assert msg.state == "COMPLETED", msg.content
        assert msg.content == f"chat reply {len(seen)}" and msg.data["chat"] is True
    # The model saw the conversation: the earlier turns, then the new input last.
    assert [m["content"] for m in seen[-1][1:]] == [
        "hello",
        "chat reply 1",
        "thanks",
        "chat reply 2",
        "你好",
        "chat reply 3",
        "谢谢！",
    ]
    await rt.close()


async def test_a_greeting_answered_in_another_language_gets_ours_in_the_users(
    blog: Path,
) -> None:
    """The embedded model answered "你好" with "Hello, welcome to my blog. I'm here to help…"."""
    english = "Hello, welcome to my blog. I'm here to help with any kind of writing you need."
    rt = chat_runtime(blog, FunctionModel(lambda messages, options: english))
    await rt.initialize()
    msg = await rt.process_input("你好")
    assert msg.state == "COMPLETED" and msg.data["fallback"] is True
    assert msg.content.startswith("你好！")
    msg = await rt.process_input("hello")  # in the user's language: the model's own
    assert msg.content == english and msg.data["fallback"] is False
    msg = await rt.process_input("你觉得 Rust 难学吗")  # not small talk: the model's answer
    assert msg.content == english
    await rt.close()


async def test_a_courtesy_answered_with_one_in_another_language_gets_ours(blog: Path) -> None:
    """The model answered "谢谢" with "You're welcome!": too short for the language check."""
    answers = {"谢谢": "You're welcome!", "你好": "Hello!", "thanks": "不客气！"}

    def model(messages: list[LLMMessage], options: ModelOptions) -> str:
        return answers[messages[-1]["content"]]

    rt = chat_runtime(blog, FunctionModel(model))
    await rt.initialize()
    msg = await rt.process_input("谢谢")
    assert (msg.content, msg.data["fallback"]) == ("不客气！还有什么需要帮忙的吗？", True)
    msg = await rt.process_input("你好")
    assert msg.content.startswith("你好！") and msg.data["fallback"] is True
    msg = await rt.process_input("thanks")
    assert (msg.content, msg.data["fallback"]) == ("You're welcome! Anything else?", True)
    await rt.close()


async def test_thanks_without_a_chat_skill_gets_no_mere_i_am_here(blog: Path) -> None:
    """With only the writing skills, "谢谢" was answered "我在。请告诉我要做什么…"."""
    rt = writing_runtime(blog, ScriptedModel([]))
    for text, said in (("谢谢", "随时为你效劳。"), ("thanks", "Happy to help."), ("hi", "Happy")):
        msg = await rt.process_input(text)
        assert msg.content.startswith(said) and msg.task_id is None, msg.content
    await rt.close()


async def test_small_talk_never_ends_in_error(blog: Path) -> None:
    def broken(messages: list[LLMMessage], options: ModelOptions) -> str:
        raise RuntimeError("the model fell over")

    rt = chat_runtime(blog, FunctionModel(broken))
    await rt.initialize()
    msg = await rt.process_input("hello")
    assert msg.state == "COMPLETED" and "Hello!" in msg.content and msg.data["fallback"]
    msg = await rt.process_input("谢谢")
    assert msg.state == "COMPLETED" and "不客气" in msg.content
    msg = await rt.process_input("why?")
    assert msg.state == "COMPLETED" and msg.content
    # ... and says the model failed: a missing model file answered "hi" with our greeting alone
    assert "The model could not answer: RuntimeError: the model fell over" in msg.content
    assert msg.data["model_error"] == "RuntimeError: the model fell over"
    await rt.close()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("what can you do?", "write an article about Rust ownership"),
        ("what can you help me with?", "summarize posts/x.md"),
        ("你能做什么？", "写一篇关于 Rust 所有权的文章"),
        ("who are you?", "I'm skillrt"),
    ],
)
async def test_what_it_can_do_is_told_from_what_it_does_not_the_model(
    blog: Path, text: str, said: str
) -> None:
    """The embedded model answered "what can you do?" with "grammar and spell check"."""
    model = ScriptedModel([])
    rt = chat_runtime(blog, model)
    await rt.initialize()
    msg = await rt.process_input(text)
    await rt.close()
    assert msg.state == "COMPLETED" and said in msg.content and msg.data["about"] is True
    assert model.call_count == 0


async def test_why_is_answered_about_the_last_answer(blog: Path) -> None:
    def model(messages: list[LLMMessage], options: ModelOptions) -> str:
        if messages[-1]["content"] == "什么意思？":
            from skillrt.skills.chat import ABOUT_LAST

            assert messages[0]["content"].endswith(ABOUT_LAST)
            assert messages[-2]["role"] == "assistant"  # the last answer, just before
            assert messages[-2]["content"].startswith("Summary of `posts/docker-basics.md`")
            return "意思是：上面的总结列出了文章的要点。"
        return WritingModelFn()(messages, options)

    rt = chat_runtime(blog, FunctionModel(model))
    await rt.initialize()
    msg = await rt.process_input("summarize posts/docker-basics.md")
    assert msg.state == "COMPLETED"
    msg = await rt.process_input("什么意思？")
    assert msg.state == "COMPLETED" and msg.content.startswith("意思是")
    assert rt.conversation().focus == "posts/docker-basics.md"  # chat leaves the focus alone
    await rt.close()


async def test_a_question_the_blog_cannot_answer_gets_a_marked_general_answer(blog: Path) -> None:
    def model(messages: list[LLMMessage], options: ModelOptions) -> str:
        assert "nothing on this question" in messages[0]["content"]
        return "Paris is the capital of France."

    rt = chat_runtime(blog, FunctionModel(model))
    await rt.initialize()
    msg = await rt.process_input("what is the capital of France?")
    assert msg.state == "COMPLETED", msg.content
    assert msg.content.startswith("The blog has nothing on “what is the capital of France?”.")
    assert "**General answer (not from the blog):**\n\nParis is the capital" in msg.content
    assert msg.data["found"] is False and msg.data["general"] is True
    msg = await rt.process_input("法国的首都是哪里？")
    assert "博客里没有关于" in msg.content and "一般性回答（不是来自博客）" in msg.content
    await rt.close()

    off = chat_runtime(blog, FunctionModel(model), answer={"general_fallback": False})
    await off.initialize()
    msg = await off.process_input("what is the capital of France?")
    assert "The blog has nothing on" in msg.content and "General answer" not in msg.content
    await off.close()


async def test_a_general_answer_run_by_name_sees_the_answer_it_follows_up(blog: Path) -> None:
    """``run_skill`` adds no user turn: the last turn is the assistant's answer, and it was the
    one dropped (as if it were the question), so the follow-up was asked with no answer
    before it and two user turns in a row."""
    prompts: list[list[LLMMessage]] = []

    def model(messages: list[LLMMessage], options: ModelOptions) -> str:
        prompts.append(messages)
        return "Monads came to programming from category theory."

    rt = chat_runtime(blog, FunctionModel(model))
    await rt.initialize()
    first = await rt.process_input("what is a monad?", {"session_id": "m"})
    assert "General answer" in first.content, first.content
    prompts.clear()
    msg = await rt.run_skill(
        "AnswerQuestion", {"question": "and who invented monads?"}, {"session_id": "m"}
    )
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    sent = [(m["role"], m["content"]) for m in prompts[-1][1:]]
    assert sent[-2] == ("assistant", first.content)
    assert sent[-1] == ("user", "and who invented monads?")
    assert all(a[0] != b[0] for a, b in pairwise(sent)), sent


async def test_a_200_turn_chat_sends_the_model_a_bounded_conversation(blog: Path) -> None:
    sizes: list[int] = []

    def model(messages: list[LLMMessage], options: ModelOptions) -> str:
        sizes.append(sum(estimate_tokens(m["content"]) + 4 for m in messages[1:]))
        return "Hello again! " * 30

    rt = chat_runtime(blog, FunctionModel(model), conversation={"max_tokens": 300})
    await rt.initialize()
    for i in range(100):
        msg = await rt.process_input("hello" if i % 2 else "thanks")
        assert msg.state == "COMPLETED"
    assert len(sizes) == 100 and max(sizes) <= 300
    assert len(rt.sessions._get(rt.session_id).turns) == 200  # all kept, only the newest sent
    await rt.close()


async def test_a_model_only_route_to_translate_asks_first_under_low_trust(blog: Path) -> None:
    def model(messages: list[LLMMessage], options: ModelOptions) -> Any:
        return {"type": "TRANSLATE", "confidence": 1.0, "parameters": {"language": "English"}}

    # The table and the model alone: with the classifier, a low-trust model is not asked.
    rt = chat_runtime(
        blog, FunctionModel(model), llm={"router_trust": "low"}, intent_classifier=False
    )
    await rt.initialize()
    msg = await rt.process_input("嗯，那个东西你看着办吧", context={"current_file": "posts/x.md"})
    assert msg.state == "WAITING_INPUT" and "翻译" in msg.content and "(y/n)" in msg.content
    msg = await rt.process_input("n")
    assert msg.state != "ERROR" and not list((blog / "posts").glob("*-en.md"))
    await rt.close()


async def test_a_url_to_summarise_is_not_taken_for_the_focus(blog: Path) -> None:
    rt = chat_runtime(blog, FunctionModel(WritingModelFn()))
    await rt.initialize()
    await rt.set_focus("posts/docker-basics.md")
    msg = await rt.process_input("summarize https://example.com/page")
    assert msg.data.get("error") == "url_not_supported", msg.content
    assert rt.conversation().focus == "posts/docker-basics.md"
    await rt.close()


def test_follow_ups_in_the_routing_evaluation_set_route_at_95_percent() -> None:
    import asyncio

    from benchmarks.bench_routing import _router, load_eval

    rows = [r for r in load_eval() if r[2] is not None and "focus" in r[2]]
    assert len(rows) >= 30
    assert any(not text.isascii() for *_, text in rows) and any(t.isascii() for *_, t in rows)
    router = _router(None)

    async def route() -> list[bool]:
        return [(await router.parse(text, ctx)).type == want for _, want, ctx, text in rows]

    hits = asyncio.run(route())
    assert sum(hits) / len(hits) >= 0.95, [
        r[3] for r, hit in zip(rows, hits, strict=True) if not hit
    ]


async def test_paths_outside_the_blog_in_the_conversation_are_not_offered(blog: Path) -> None:
    rt = chat_runtime(blog, FunctionModel(WritingModelFn()))
    await rt.initialize()
    msg = await rt.process_input("what is in ../secret.md?")
    assert msg.state == "COMPLETED", msg.content
    assert "../secret.md" in rt.conversation().mentioned
    msg = await rt.process_input("summarize it")
    assert msg.state == "WAITING_INPUT", msg.content
    listed = candidates(msg.content)
    assert listed and all(p.startswith("posts/") for p in listed)
    await rt.close()


async def test_sessions_held_in_memory_are_bounded_and_read_back(blog: Path) -> None:
    rt = chat_runtime(blog, FunctionModel(WritingModelFn()))
    await rt.initialize()
    rt.sessions.max_sessions = 3
    for i in range(6):
        msg = await rt.process_input("summarize posts/git-workflow.md", {"session_id": f"s{i}"})
        assert msg.state == "COMPLETED"
    assert len(rt.sessions._sessions) == 3
    conv = rt.conversation("s0")  # dropped from memory, read back from the history
    assert conv.focus == "posts/git-workflow.md"
    assert conv.turns[0].content == "summarize posts/git-workflow.md"
    await rt.close()


async def test_one_short_word_starts_no_task_even_with_a_chat_skill(blog: Path) -> None:
    model = FunctionModel(lambda messages, options: "a chat reply")
    rt = chat_runtime(blog, model)
    await rt.initialize()
    for word in ("blorp", "clear"):
        msg = await rt.process_input(word)
        assert msg.task_id is None and msg.data["outcome"] == "chat", msg
    assert model.call_count == 0
    msg = await rt.process_input("hello")  # small talk: the Chat skill answers
    assert msg.task_id is not None and msg.content == "a chat reply"
    await rt.close()


async def test_a_session_not_in_memory_is_read_off_the_event_loop(tmp_path: Path) -> None:
    """A server sees many sessions: the first input of one that is not held reads its turns
    from the history in a thread (after the queued writes), never on the event loop."""
    import threading

    class Topic(BaseModel):
        topic: str

    seen: list[tuple[str, ...]] = []

    @skill(name="Recall", params=Topic, description="Says what it remembers")
    async def recall(ctx: SkillContext, params: Topic) -> SkillResult:
        seen.append(tuple(t.content for t in ctx.conversation.turns))
        return SkillResult(message=f"noted {params.topic}")

    (tmp_path / "posts").mkdir()
    config = load_config(content_root=tmp_path, state_dir=tmp_path / ".state")
    rt = AgentRuntime(config, llm=FunctionModel(lambda m, o: "ok"), skills=[recall])
    await rt.initialize()
    first = await rt.run_skill("Recall", {"topic": "one"}, {"session_id": "s-many"})
    assert first.state == "COMPLETED", first.content
    rt.chatlog.sessions.forget("s-many")  # as if pushed out by 256 newer sessions

    history = rt.chatlog.history
    assert history is not None
    read_on: list[int] = []
    messages = history.messages

    def counted(session_id: str, limit: int = 50) -> list[dict[str, Any]]:
        read_on.append(threading.get_ident())
        return messages(session_id, limit)

    history.messages = counted  # type: ignore[method-assign]
    second = await rt.run_skill("Recall", {"topic": "two"}, {"session_id": "s-many"})
    assert second.state == "COMPLETED", second.content
    assert seen[-1] == ("noted one",)  # the turns came back from the history
    assert read_on and threading.get_ident() not in read_on
    said = await rt.process_input("hello there", {"session_id": "s-other"})
    assert said.content
    assert threading.get_ident() not in read_on
    await rt.close()
