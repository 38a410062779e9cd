"""Output guards: a looping generation is stopped early and kept up to the loop, whatever the
provider or skill; summaries get a max_tokens sized to the job; a reply that rich's Markdown
would render to (almost) nothing is shown as plain text; llama.cpp's repeat penalty is on."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pydantic import BaseModel
from rich.console import Console

from skillrt import AgentRuntime, Event, SkillContext, SkillResult, load_config, skill
from skillrt.cli.display import Display, renders_faithfully
from skillrt.exceptions import RepetitionStopped
from skillrt.llm.base import LLMMessage
from skillrt.llm.guard import RepetitionGuard
from skillrt.llm.local import DEFAULT_REPEAT_PENALTY, LocalProvider
from skillrt.llm.openai_provider import OpenAIProvider
from skillrt.llm.select import create_llm
from skillrt.messages import ChatMessage
from skillrt.skills.writing import writing_skills
from skillrt.skills.writing.summarize import summary_tokens
from skillrt.testing import FunctionModel, ModelOptions, ScriptedModel
from tests.blog import copy_blog
from tests.openai_server import OpenAIServer, Reply

LOOP = "1. " * 341
DEGENERATE = "Here is the answer.\n\n" + LOOP + "\n\nSources: [Rust](posts/rust.md)"
ARTICLE = """# Ownership in Rust

Every value has one owner. When the owner goes out of scope, the value is dropped.

| kind | moves | copies |
|------|-------|--------|
| String | yes | no |
| i32 | no | yes |

- Moves transfer ownership.
- Borrows lend it for a while.
- Lifetimes say for how long.

```rust
fn main() {
    let a = String::from("hi");
    let b = a;
    println!("{b}");
}
```

---

1. Read the chapter on ownership.
2. Write a small program that moves a String.
3. Borrow it instead and compare.
"""


def feed_all(guard: RepetitionGuard, text: str, chunk: int = 3) -> int:
    """Feed ``text`` in small chunks; returns how many characters went in before a stop."""
    fed = 0
    for i in range(0, len(text), chunk):
        guard.feed(text[i : i + chunk])
        fed = i + chunk
    return fed


def test_guard_stops_a_loop_early_and_keeps_what_came_before() -> None:
    guard = RepetitionGuard()
    with pytest.raises(RepetitionStopped) as caught:
        feed_all(guard, DEGENERATE)
    stop = caught.value
    assert stop.kept == "Here is the answer."  # the loop's few characters are not content
    assert stop.streamed < len("Here is the answer.\n\n") + 400  # stopped within ~100 repeats
    assert stop.unit.strip() == "1."


def test_guard_catches_a_numbered_line_repeated() -> None:
    text = "Intro.\n" + "".join(f"{i}. The article talks about Rust.\n" for i in range(1, 40))
    guard = RepetitionGuard()
    with pytest.raises(RepetitionStopped) as caught:
        feed_all(guard, text, chunk=5)
    assert caught.value.kept == "Intro.\n1. The article talks about Rust."
    assert caught.value.streamed < len(text) // 2


def test_guard_catches_a_short_line_looping() -> None:
    # What SmolLM2-135M wrote for a section of 写一篇关于躺平的短文 before the guard.
    text = "躺平\n- 躺平\n" + "".join(
        f"{'  ' if i % 3 else ''}- 走走走{'；' if i % 4 == 0 else ''}\n" for i in range(60)
    )
    guard = RepetitionGuard()
    with pytest.raises(RepetitionStopped) as caught:
        feed_all(guard, text, chunk=2)
    assert caught.value.kept == "躺平\n- 躺平\n- 走走走；"
    assert caught.value.streamed < len(text) // 2


def test_guard_catches_a_cycle_of_lines() -> None:
    # What SmolLM2-135M wrote for a section of 写一篇关于内卷化的短文 before the guard.
    text = "Title:\n内卷化\n" + "".join(f"{i}. Title: \n- Key points:\n" for i in range(1, 60))
    guard = RepetitionGuard()
    with pytest.raises(RepetitionStopped) as caught:
        feed_all(guard, text, chunk=4)
    assert caught.value.kept == "Title:\n内卷化\n1. Title: \n- Key points:"
    assert caught.value.streamed < len(text) // 2


@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_guard_leaves_ordinary_markdown_alone(chunk: int) -> None:
    guard = RepetitionGuard()
    code = "def f():\n" + "".join(f"    if x{i}:\n        pass\n" for i in range(6)) + "end\n" * 5
    text = ARTICLE * 3 + "=" * 80 + "\n" + "中文段落。" * 30 + "\n" + code
    assert feed_all(guard, text, chunk) > 0
    assert guard.text.startswith("# Ownership")


class Ask(BaseModel):
    question: str


@skill(name="Echo", intents=["ANSWER_QUESTION"], params=Ask, description="stream an answer")
async def echo(ctx: SkillContext, params: Ask) -> SkillResult:
    result = await ctx.llm.chat([{"role": "user", "content": params.question}], max_tokens=4000)
    return SkillResult(message=result.content, data={"cut": result.truncated_repetition})


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_runtime_stops_a_scripted_loop_and_the_reply_is_shown(
    tmp_path: Path, language: str
) -> None:
    model = ScriptedModel([DEGENERATE])
    config = load_config(content_root=tmp_path, state_dir=tmp_path / "state")
    rt = AgentRuntime(config, llm=model, skills=[echo])
    await rt.initialize()
    streamed: list[Event] = []
    rt.on("task:stream", streamed.append)
    question = "why?" if language == "en" else "为什么？"
    try:
        msg = await rt.run_skill("Echo", {"question": question}, context={"language": language})
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert len(streamed) < 150  # of 341+ deltas: the stream was cut, not run to the end
    assert msg.data["truncated_repetition"] is True and msg.data["cut"] is True
    assert msg.content.startswith("Here is the answer.")
    assert ("重复" in msg.content) == (language == "zh")
    assert ("repeating" in msg.content) == (language == "en")
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    Display(console).reply(msg)
    shown = out.getvalue()
    assert "Here is the answer." in shown and ("stopped there" in shown or "截断" in shown)


async def test_the_guard_stops_a_real_provider_stream_too(tmp_path: Path) -> None:
    with OpenAIServer() as server:
        server.push(Reply(text=DEGENERATE, chunk_delay=0.002))
        provider = OpenAIProvider(
            base_url=server.base_url, api_key="sk-test", model="gpt-4o-mini", timeout_s=5.0
        )
        config = load_config(content_root=tmp_path, state_dir=tmp_path / "state")
        rt = AgentRuntime(config, llm=provider, skills=[echo])
        streamed: list[Event] = []
        rt.on("task:stream", streamed.append)
        try:
            msg = await rt.run_skill("Echo", {"question": "why?"})
        finally:
            await rt.close()
            await provider.aclose()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["truncated_repetition"] is True
    assert msg.content.startswith("Here is the answer.")
    assert len(streamed) < 150  # the connection was closed long before the 345th chunk
    # Priced as the model is, on its estimated usage: it was counted "unpriced" (the chat's
    # line said so for the free embedded model's looping calls).
    assert msg.cost is not None and msg.cost > 0
    assert rt.costs.task(msg.task_id or "").unpriced_calls == 0


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [("make it shorter", "nothing was saved"), ("把它改得更简洁", "没有保存任何内容")],
)
async def test_an_edit_cut_by_the_guard_is_not_saved(
    tmp_path: Path, instruction: str, expected: str
) -> None:
    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts" / "rust-borrowing.md"
    before = post.read_bytes()
    config = load_config(content_root=blog, state_dir=tmp_path / "state")
    llm = ScriptedModel([DEGENERATE, DEGENERATE])  # asked again once, with the reason
    rt = AgentRuntime(config, llm=llm, skills=writing_skills())
    try:
        msg = await rt.run_skill(
            "EditContent", {"instruction": instruction, "path": "posts/rust-borrowing.md"}
        )
    finally:
        await rt.close()
    assert expected in msg.content, msg.content
    assert msg.data["error"] == "checks_failed" and msg.data["check"] == "not_degenerate"
    assert msg.data["truncated_repetition"] is True and msg.data["outcome"] == "refused"
    assert "the text above" not in msg.content and "截断前的内容" not in msg.content
    assert post.read_bytes() == before


def test_a_reply_that_renders_to_nothing_is_shown_as_plain_text() -> None:
    assert not renders_faithfully(DEGENERATE)
    assert renders_faithfully(ARTICLE)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    Display(console).reply(ChatMessage(content=DEGENERATE, state="COMPLETED"))
    shown = out.getvalue()
    assert "1. 1. 1." in shown and "Sources: [Rust](posts/rust.md)" in shown


async def test_summaries_ask_for_tokens_sized_to_the_part(tmp_path: Path) -> None:
    asked: list[int | None] = []

    def answer(messages: object, options: ModelOptions) -> str:
        asked.append(options.max_tokens)
        return "- a point"

    config = load_config(content_root=tmp_path, state_dir=tmp_path / "state")
    rt = AgentRuntime(config, llm=FunctionModel(answer), skills=writing_skills())
    await rt.initialize()
    try:
        long_text = "Rust ownership moves values between owners. " * 800  # several parts
        msg = await rt.run_skill("Summarize", {"text": long_text})
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert len(asked) > 2
    assert all(t is not None and t <= 700 for t in asked)
    assert summary_tokens("x " * 10, final=False) == 160
    assert summary_tokens("word " * 5000, final=False) == 400
    assert summary_tokens("word " * 5000, final=True) == 700


@pytest.mark.local_model
async def test_the_repeat_penalty_reaches_llama_cpp_sampling(tmp_path: Path) -> None:
    """Greedy decoding (temperature 0) is deterministic, so two answers to one prompt differ
    only by what llama.cpp's sampler was given: the local model made from the default config
    stops echoing, the one configured with ``repeat_penalty = 1.0`` loops to ``max_tokens``."""
    assert DEFAULT_REPEAT_PENALTY > 1.0
    echo: list[LLMMessage] = [{"role": "user", "content": "Repeat exactly: " + "tea " * 16}]
    answers = []
    for penalty in ({}, {"repeat_penalty": 1.0}):
        config = load_config(content_root=tmp_path, llm={"provider": "local", **penalty})
        llm, _ = create_llm(config)
        assert isinstance(llm, LocalProvider)
        try:
            answers.append(await llm.chat(echo, max_tokens=80, temperature=0.0))
        finally:
            await llm.aclose()
    default, off = answers
    assert off.usage.completion_tokens == 80 and off.content.count("tea") > 50
    assert default.usage.completion_tokens < 40 and default.content.count("tea") < 20


def test_guard_catches_long_paragraphs_written_again_and_again() -> None:
    # What SmolLM2-135M wrote for a section of "write an article about tokio channels": the
    # related post's lines again and again, a turn too long for the character rule (360 > 200).
    turn = (
        "A: Async Rust allows a program to wait for many sockets at once. Tokio is the usual "
        "runtime. Pinning Futures that borrow from themselves must be pinned before they are "
        "polled.\nThe following are some of the things you can do with async in async "
        "programming, and there's no better place to start when it comes to "
        "async-in-async-worlds than this one:\n"
    )
    text = "Tokio channels.\n\n" + turn * 8
    guard = RepetitionGuard()
    with pytest.raises(RepetitionStopped) as caught:
        feed_all(guard, text, chunk=5)
    assert caught.value.kept == "Tokio channels.\n\n" + turn.rstrip()
    assert caught.value.streamed <= len("Tokio channels.\n\n") + 4 * len(turn) + 5


def test_guard_leaves_long_paragraphs_repeated_thrice_or_apart_alone() -> None:
    para = " ".join(f"Sentence {i} of a long paragraph says its own thing." for i in range(6))
    para += "\n"
    text = para * 3 + "Something else.\n" + para * 3 + "\n".join(f"line {i}" for i in range(20))
    guard = RepetitionGuard()
    assert feed_all(guard, text, chunk=9) > 0


def test_guard_catches_a_sentence_looping_across_its_line_breaks() -> None:
    # What SmolLM2-135M wrote for a section of "write an article about learning to swim as an
    # adult": one sentence again and again, three or four a line, so that no line repeats
    # four times and no exact period spans a line break.
    sentence = "This topic is very important to me, and I am always looking for ways to improve."
    lines = [" ".join([sentence] * (4 if i % 3 == 0 else 3)) for i in range(8)]
    text = "Learning to swim as an adult\n" + "\n".join(lines) + "\n"
    guard = RepetitionGuard()
    with pytest.raises(RepetitionStopped) as caught:
        feed_all(guard, text, chunk=5)
    assert caught.value.kept == "Learning to swim as an adult\n" + sentence
    assert caught.value.streamed < len(text) // 3


def test_the_writing_check_sees_a_sentence_looping_across_its_line_breaks() -> None:
    """``not_degenerate`` feeds a whole text at once: the whitespace-blind look runs then too."""
    from skillrt.skills.writing.checks import Generated, not_degenerate

    sentence = "This topic is very important to me, and I am always looking for ways to improve."
    lines = [" ".join([sentence] * (4 if i % 3 == 0 else 3)) for i in range(8)]
    verdict = not_degenerate(Generated(text="Swimming\n" + "\n".join(lines)))
    assert not verdict.passed and "repeats itself" in verdict.reason
