"""A free answer (AnswerQuestion's, its general fallback's, small talk's) that says its own
instructions back is not shown as an answer: the embedded model answered "list my posts" with
the general fallback's system prompt, reworded, under "General answer (not from the blog)"."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt import AgentRuntime, load_config
from skillrt.llm.base import LLMMessage
from skillrt.skills.chat import CHAT_SYSTEM
from skillrt.skills.writing.prompts import ANSWER_SYSTEM, GENERAL_SYSTEM
from skillrt.skills.writing.scaffold import without_echo
from skillrt.testing import FunctionModel, ModelOptions, ScriptedModel
from tests.blog import copy_blog
from tests.writing_support import writing_runtime

# What SmolLM2-135M answered (the prompt with "English from" left out).
GENERAL_ECHO = (
    "The author's blog has nothing on this question. Answer it briefly in general knowledge, "
    "without citing or inventing any post or link. If you do not know, say so."
)


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


def test_an_echo_is_taken_out_and_the_rest_kept() -> None:
    system = GENERAL_SYSTEM.format(lang="English")
    assert without_echo(GENERAL_ECHO, [system]) == ""
    mixed = "Rust is a systems language. It is fast.\n\nIf you do not know, say so. It is safe."
    assert without_echo(mixed, [system]) == "Rust is a systems language. It is fast.\n\nIt is safe."
    assert without_echo("Yes.", [system]) == "Yes."  # too short to be taken for one
    untouched = "Rust is fast.\n\n- one\n- two\n"
    assert without_echo(untouched, [system]) == untouched.strip()


async def test_the_general_fallback_that_echoes_its_prompt_is_not_shown(blog: Path) -> None:
    llm = ScriptedModel([GENERAL_ECHO])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.run_skill("AnswerQuestion", {"question": "What is quantum entanglement?"})
    await rt.close()
    assert llm.call_count == 1
    assert msg.state == "COMPLETED" and msg.data["found"] is False
    assert "general" not in msg.data and "General answer" not in msg.content
    assert "Answer it briefly" not in msg.content and "say so" not in msg.content


async def test_a_sourced_answer_that_echoes_its_prompt_counts_as_none(blog: Path) -> None:
    echo = ANSWER_SYSTEM.format(lang="English")
    rt = writing_runtime(blog, ScriptedModel([echo]), answer={"general_fallback": False})
    await rt.initialize()
    msg = await rt.run_skill("AnswerQuestion", {"question": "How do I limit asyncio concurrency?"})
    await rt.close()
    # The search found posts; the model said nothing from them: the posts, not "nothing".
    assert msg.data["found"] is True and msg.data["answered"] is False
    assert "The model wrote no answer from the posts found" in msg.content
    assert msg.data["citations"] and all(f"]({p})" in msg.content for p in msg.data["citations"])
    assert "numbered sources" not in msg.content


async def test_a_lead_in_to_the_sources_own_heading_counts_as_no_answer(blog: Path) -> None:
    """The embedded model answered "The answer to your question is:" and a code block holding
    the first source's heading line from its prompt."""
    prompts: list[str] = []

    def answer(messages: list[LLMMessage], options: ModelOptions) -> str:
        prompt = str(messages[-1]["content"])
        prompts.append(prompt)
        heading = next(line for line in prompt.splitlines() if line.startswith("[1] "))
        return f"The answer to your question is:\n```bash\n{heading}\n```"

    rt = writing_runtime(blog, FunctionModel(answer), answer={"general_fallback": False})
    await rt.initialize()
    msg = await rt.run_skill("AnswerQuestion", {"question": "How do I limit asyncio concurrency?"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["answered"] is False and msg.data["found"] is True
    assert "The answer to your question is" not in msg.content
    assert "```" not in msg.content  # the excerpts shown leave code out


@pytest.mark.parametrize(
    "said",
    ["The asyncio post about [2] is [1].", "[1]", "Limit asyncio concurrency [1][2]."],
)
async def test_an_answer_of_the_questions_own_words_and_citations_counts_as_none(
    blog: Path, said: str
) -> None:
    """ "what is the newest post about?" was answered "The newest post about [2] is [3].",
    and that was shown as the answer."""
    rt = writing_runtime(blog, ScriptedModel([said]), answer={"general_fallback": False})
    await rt.initialize()
    msg = await rt.run_skill("AnswerQuestion", {"question": "How do I limit asyncio concurrency?"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["answered"] is False and msg.data["found"] is True
    assert said not in msg.content


async def test_small_talk_that_echoes_its_prompt_gets_our_own_reply(tmp_path: Path) -> None:
    echo = CHAT_SYSTEM.format(lang="English")
    config = load_config(content_root=tmp_path / "blog", state_dir=tmp_path / "state")
    rt = AgentRuntime(config, llm=ScriptedModel([echo]))
    await rt.initialize()
    msg = await rt.process_input("hi")
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["fallback"] is True and msg.content.startswith("Hello!")


@pytest.mark.parametrize(
    ("answer", "shown"),
    [
        ("You're welcome! I hope you have a great day!\n\nBest,\nAlex", "You're welcome! I hope"),
        ("Happy to help.\n\nBest regards,\n[Your Name]", "Happy to help."),
        ("不客气！\n\n祝好，\n小明", "不客气！"),
    ],
)
async def test_small_talk_signed_with_a_made_up_name_is_shown_unsigned(
    tmp_path: Path, answer: str, shown: str
) -> None:
    """The embedded model answered "thanks!" with a letter's closing and a name ("Best,
    Alex")."""
    config = load_config(content_root=tmp_path / "blog", state_dir=tmp_path / "state")
    rt = AgentRuntime(config, llm=ScriptedModel([answer]))
    await rt.initialize()
    msg = await rt.process_input("谢谢！" if "不客气" in answer else "thanks!")
    await rt.close()
    assert msg.state == "COMPLETED" and msg.data["fallback"] is False, msg.content
    assert msg.content.startswith(shown)
    assert not any(name in msg.content for name in ("Alex", "Best", "[Your Name]", "小明", "祝好"))


@pytest.mark.parametrize(
    ("said", "question", "says"),
    [
        ("The newest post about [2] is [3].", "what is the newest post about?", False),
        ("最新的文章是[1]。", "我最新的文章是哪篇？", False),
        ("It is about compiler planning [1].", "what is the newest post about?", True),
        # a yes, or a choice the question names, said in its words
        ("Rebase.", "Which is better, git merge or git rebase?", True),
        ("It does [1].", "Does the docker post use Alpine images?", True),
        ("是的 [1]。", "docker 那篇文章用了 Alpine 吗？", True),
        ("docker 那篇文章用了 Alpine [1]。", "docker 那篇文章用了 Alpine 吗？", True),
    ],
)
def test_what_an_answer_says_beyond_its_question(said: str, question: str, says: bool) -> None:
    from skillrt.skills.writing.answer import _says_something

    assert _says_something(said, question) is says
