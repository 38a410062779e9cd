"""Routing a small model cannot break: the runtime scores the model's suggestion, asks before a
model-only route reaches the web, deletes or writes (``llm.router_trust = "low"``), offers
numbered choices when unsure, and never starts a task for noise or small talk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from skillrt import AgentRuntime, Skill, SkillContext, SkillResult, load_config
from skillrt._tasks.machine import State
from skillrt.llm.base import LLMMessage
from skillrt.testing import Answer, FunctionModel, ModelOptions


def make_runtime(
    root: Path, llm: Any, skills: list[Skill[Any]], trust: str | None = None
) -> AgentRuntime:
    """A runtime routing by the table and the model alone (no trained classifier): these tests
    are about what a model's guess may start; tests/test_classifier_routing.py has the rest."""
    config = load_config(
        content_root=root,
        intent_classifier=False,
        **({"llm": {"router_trust": trust}} if trust else {}),
    )
    return AgentRuntime(config, llm=llm, skills=skills)


# No pattern of the table matches these: only the model can route them.
MODEL_ONLY = [
    "嗯，那个东西你看着办吧",
    "blorp the flux capacitor for me",
    "内卷化 躺平 那些",
    "\x07zig\x1b[2J tomorrow morning maybe",  # control characters, not mostly
]


class Params(BaseModel):
    topic: str = ""
    question: str = ""
    task: str = ""
    path: str | None = None
    title: str | None = None


def recording_skills(ran: list[tuple[str, dict[str, Any]]]) -> list[Skill[Any]]:
    """A skill per intent that only records that it ran (and with what)."""
    skills = []
    for intent in [
        "RESEARCH_WEB",
        "BROWSE",
        "ANSWER_QUESTION",
        "WRITE_ARTICLE",
        "DELETE_ARTICLE",
        "SUMMARIZE",
    ]:

        async def run(ctx: SkillContext, params: Params, intent: str = intent) -> SkillResult:
            ran.append((intent, params.model_dump()))
            return SkillResult(message=f"ran {intent}")

        skills.append(Skill(name=intent.title(), description=intent, params=Params, fn=run,
                            intents=[intent]))  # fmt: skip
    return skills


def always(intent: str, confidence: float = 1.0) -> FunctionModel:
    def answer(messages: list[LLMMessage], options: ModelOptions) -> Answer:
        return {"type": intent, "confidence": confidence, "parameters": {}}

    return FunctionModel(answer)


def web_runs(ran: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [i for i, _ in ran if i in ("RESEARCH_WEB", "BROWSE")]


# --- the must-show: no web search without the user's yes ----------------------------------------


@pytest.mark.parametrize("text", MODEL_ONLY)
async def test_a_model_sure_of_a_web_search_cannot_start_one_without_a_yes(
    isolated: Path, text: str
) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    model = always("RESEARCH_WEB", 1.0)
    rt = make_runtime(isolated, model, recording_skills(ran), trust="low")
    asked = await rt.process_input(text)
    assert model.call_count >= 1  # the model was asked, and said RESEARCH_WEB with 1.0
    assert asked.state == "WAITING_INPUT"
    assert "(y/n)" in asked.content
    assert ("网上搜索" in asked.content) or ("Search the web" in asked.content)
    assert ran == [] and rt.state is State.WAITING_INPUT
    no = await rt.process_input("n")
    assert no.state == "IDLE" and no.data["outcome"] == "declined"
    assert web_runs(ran) == [] and rt.state is State.IDLE
    # The same request again, answered yes: now, and only now, the search runs.
    again = await rt.process_input(text)
    assert again.state == "WAITING_INPUT" and web_runs(ran) == []
    done = await rt.process_input("是" if not text.isascii() else "y")
    assert done.state == "COMPLETED" and done.content == "ran RESEARCH_WEB"
    assert web_runs(ran) == ["RESEARCH_WEB"]
    assert ran[0][1]["topic"]  # the request itself stands for the topic the model left out


@pytest.mark.parametrize("answer", ["", "whatever", "不要", "no", "maybe later then", "2"])
async def test_anything_but_yes_does_not_search(isolated: Path, answer: str) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    rt = make_runtime(isolated, always("RESEARCH_WEB"), recording_skills(ran), trust="low")
    assert (await rt.process_input("blorp the flux capacitor")).state == "WAITING_INPUT"
    await rt.process_input(answer)
    assert web_runs(ran) == []


@pytest.mark.parametrize("answer", ["y", "yes", "Yes!", "是", "好的", "ok"])
async def test_each_way_of_saying_yes_runs_it(isolated: Path, answer: str) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    rt = make_runtime(isolated, always("BROWSE"), recording_skills(ran), trust="low")
    asked = await rt.process_input("blorp the flux capacitor")
    assert "browser" in asked.content and "(y/n)" in asked.content
    assert (await rt.process_input(answer)).state == "COMPLETED"
    assert web_runs(ran) == ["BROWSE"]


@pytest.mark.parametrize(
    ("intent", "words"),
    [("DELETE_ARTICLE", ("Delete", "删除")), ("WRITE_ARTICLE", ("Write an article", "写一篇"))],
)
async def test_deletes_and_writes_ask_first_too(
    isolated: Path, intent: str, words: tuple[str, str]
) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    rt = make_runtime(isolated, always(intent), recording_skills(ran), trust="low")
    en = await rt.process_input("blorp the flux capacitor")
    assert en.state == "WAITING_INPUT" and words[0] in en.content and ran == []
    await rt.process_input("no")
    zh = await rt.process_input("那个东西你看着办吧")
    assert zh.state == "WAITING_INPUT" and words[1] in zh.content and ran == []
    await rt.process_input("y")
    assert [i for i, _ in ran] == [intent]


async def test_a_new_request_instead_of_an_answer_is_routed_afresh(isolated: Path) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    rt = make_runtime(isolated, always("RESEARCH_WEB"), recording_skills(ran), trust="low")
    assert (await rt.process_input("那个东西你看着办吧")).state == "WAITING_INPUT"
    msg = await rt.process_input("总结 posts/rust.md")
    assert msg.state == "COMPLETED" and ran == [("SUMMARIZE", ran[0][1])]
    assert ran[0][1]["path"] == "posts/rust.md"
    assert rt.state is State.IDLE


async def test_regex_routes_need_no_yes_under_low_trust(isolated: Path) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    model = always("ANSWER_QUESTION")
    rt = make_runtime(isolated, model, recording_skills(ran), trust="low")
    msg = await rt.process_input("在网上搜索关于 Rust 异步运行时的资料")
    assert msg.state == "COMPLETED" and web_runs(ran) == ["RESEARCH_WEB"]
    assert model.call_count == 0


# --- trust levels -------------------------------------------------------------------------------


async def test_high_trust_asks_before_a_model_route_the_text_supports(isolated: Path) -> None:
    """Even a capable model's web search asks first (issue 25: a model's pick never starts a
    write, delete or web task without a yes); its yes/no question is one step, not choices."""
    ran: list[tuple[str, dict[str, Any]]] = []
    rt = make_runtime(isolated, always("RESEARCH_WEB"), recording_skills(ran))
    assert rt.router_trust == "high"  # a FunctionModel is not the embedded model
    msg = await rt.process_input("zig compiler news from this week")  # "news": evidence
    assert msg.state == "WAITING_INPUT" and "(y/n)" in msg.content and web_runs(ran) == []
    assert (await rt.process_input("y")).state == "COMPLETED"
    assert web_runs(ran) == ["RESEARCH_WEB"]
    # With no evidence for it, a high-trust model's 1.0 is asked about all the same.
    unsure = await rt.process_input("blorp the flux capacitor")
    assert unsure.state == "WAITING_INPUT" and "(y/n)" in unsure.content
    assert web_runs(ran) == ["RESEARCH_WEB"]


def test_the_embedded_model_gets_low_trust_by_default(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillrt.llm.local import LocalProvider

    local = LocalProvider(model_path=isolated / "absent.gguf")  # nothing is loaded yet
    assert AgentRuntime(load_config(), llm=local, skills=[]).router_trust == "low"
    high = AgentRuntime(load_config(llm={"router_trust": "high"}), llm=local, skills=[])
    assert high.router_trust == "high"
    monkeypatch.setenv("SKILLRT_LLM__ROUTER_TRUST", "low")
    assert AgentRuntime(load_config(), llm=always("X"), skills=[]).router_trust == "low"
    monkeypatch.setenv("SKILLRT_LLM__ROUTER_TRUST", "sometimes")
    with pytest.raises(Exception, match="router_trust"):
        load_config()


# --- numbered choices ---------------------------------------------------------------------------


@pytest.mark.parametrize("pick", ["2", "２", "第二个", "search"])
async def test_an_unclear_input_offers_choices_and_a_number_picks_one(
    isolated: Path, pick: str
) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    rt = make_runtime(isolated, always("UNKNOWN", 0.0), recording_skills(ran))
    asked = await rt.process_input("blorp the flux capacitor")
    assert asked.state == "WAITING_INPUT"
    lines = asked.content.splitlines()
    assert lines[1].startswith("1. Answer from your blog")
    assert lines[2].startswith("2. Search the web")
    assert "rephrase" not in asked.content
    done = await rt.process_input(pick)
    assert done.state == "COMPLETED" and done.content == "ran RESEARCH_WEB"
    assert ran == [("RESEARCH_WEB", ran[0][1])] and ran[0][1]["topic"] == "blorp the flux capacitor"


async def test_choices_put_the_models_suggestion_first(isolated: Path) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    rt = make_runtime(isolated, always("SUMMARIZE"), recording_skills(ran))
    asked = await rt.process_input("嗯那个东西你看着办吧")
    assert asked.content.splitlines()[1].startswith("1. 总结")
    assert (await rt.process_input("1")).content == "ran SUMMARIZE"


# --- noise and small talk -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["clear", "ok", "hi", "hello", "thanks!", "谢谢", "你好", "好的", "exit", "blorp"]
)
async def test_small_talk_and_one_word_never_start_a_task(isolated: Path, text: str) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    model = always("RESEARCH_WEB")
    rt = make_runtime(isolated, model, recording_skills(ran), trust="high")
    msg = await rt.process_input(text)
    assert msg.data["outcome"] == "chat" and msg.data["intent"] == "CHAT"
    assert msg.task_id is None and msg.state == "IDLE"
    assert ran == [] and model.call_count == 0


@pytest.mark.parametrize("text", ["\x1b[A\x1b[A\x1b[B", "\x00\x01x\x02\x03", "\x1b]0;title\x07"])
async def test_control_character_noise_never_starts_a_task(isolated: Path, text: str) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    model = always("RESEARCH_WEB")
    rt = make_runtime(isolated, model, recording_skills(ran), trust="high")
    msg = await rt.process_input(text)
    assert msg.data["error"] == "noise_input" and msg.task_id is None
    assert ran == [] and model.call_count == 0


async def test_a_chat_skill_gets_the_small_talk(isolated: Path) -> None:
    """The hook for a Chat skill: one listing the CHAT intent receives greetings."""
    seen: list[str] = []

    async def chat(ctx: SkillContext, params: Params) -> SkillResult:
        seen.append(ctx.input.text)
        return SkillResult(message="hello to you")

    skills = [Skill(name="Chat", description="small talk", params=Params, fn=chat,
                    intents=["CHAT"])]  # fmt: skip
    rt = make_runtime(isolated, always("RESEARCH_WEB"), skills)
    msg = await rt.process_input("hello")
    assert (msg.state, msg.content, seen) == ("COMPLETED", "hello to you", ["hello"])


# --- with the default skills (the Chat skill registered) ----------------------------------------


def recording_model() -> FunctionModel:
    return FunctionModel(lambda messages, options: "Hello! How can I help?")


@pytest.mark.parametrize(
    "text", ["ok", "好的", "clear", "嗯", "OK!", "okay", "收到", "cool", "lol"]
)
async def test_one_short_word_starts_no_task_even_with_a_chat_skill(
    isolated: Path, text: str
) -> None:
    model = recording_model()
    rt = AgentRuntime(load_config(content_root=isolated), llm=model)  # the builtin skills
    assert rt.router.handles("CHAT")
    msg = await rt.process_input(text)
    assert (msg.task_id, msg.state, msg.data["outcome"], msg.data["intent"]) == (
        None,
        "IDLE",
        "chat",
        "CHAT",
    )
    assert model.call_count == 0
    assert msg.content  # a short reply, in the session's language
    await rt.close()


@pytest.mark.parametrize("text", ["hi", "hello", "thanks", "你好", "谢谢", "good morning", "再见"])
async def test_greetings_and_thanks_go_to_the_chat_skill(isolated: Path, text: str) -> None:
    model = recording_model()
    rt = AgentRuntime(load_config(content_root=isolated), llm=model)
    msg = await rt.process_input(text)
    assert msg.state == "COMPLETED" and msg.task_id is not None
    assert msg.data.get("chat") is True  # the Chat skill answered
    assert model.call_count == 1  # the chat skill's reply; routing asked no model
    await rt.close()


async def test_a_skill_known_only_by_its_own_pattern_runs_when_the_pattern_matches(
    isolated: Path,
) -> None:
    """A skill with a ``pattern`` and no intents is routed by that pattern, not questioned."""
    from skillrt import skill

    class Word(BaseModel):
        word: str

    @skill(name="Shout", params=Word, pattern=r"^shout (?P<word>\w+)$", description="Shout")
    async def shout(ctx: SkillContext, params: Word) -> SkillResult:
        return SkillResult(message=params.word.upper())

    rt = AgentRuntime(load_config(content_root=isolated), llm=FunctionModel(lambda m, o: "x"),
                      skills=[shout, *recording_skills([])])  # fmt: skip
    msg = await rt.process_input("shout hello")
    assert msg.state == "COMPLETED" and msg.content == "HELLO", msg.content
    await rt.close()
