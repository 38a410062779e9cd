"""A post's tags asked about ("what tags does it have?") come from its frontmatter, no model:
the embedded model answered with three made-up tags and web addresses. And a question on "it"
with a post open (or in focus) is answered from that post: "it" was searched for as a word."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.llm.base import LLMMessage
from skillrt.skills.writing.post_tags import post_tags_asked, refers_to_open
from skillrt.testing import FunctionModel, ModelOptions, ScriptedModel
from tests.blog import copy_blog, copy_fixture
from tests.writing_support import writing_runtime


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("what tags does it have?", "it"),
        ("Which tags does this post have", "this post"),
        ("what are the tags of the docker post?", "the docker post"),
        ("how is the rust post tagged?", "the rust post"),
        ("这篇文章有哪些标签？", "这篇文章"),
        ("docker 那篇的标签是什么", "docker 那篇"),
        ("what tags does my blog have?", ""),  # "": the blog's tags
        ("what are the tags on this blog?", ""),
        ("what tags do my posts use?", ""),
        ("我有哪些标签", ""),
        ("what are its tags?", "its"),  # (the model answered it from a search of the blog)
        ("show its tags", "its"),
        ("add tags rust, go to it", None),  # an edit
        ("posts tagged rust", None),
    ],
)
def test_post_tags_asked(question: str, words: str | None) -> None:
    assert post_tags_asked(question) == words


def test_refers_to_open() -> None:
    assert refers_to_open("it") and refers_to_open("this post") and refers_to_open("这篇文章")
    assert not refers_to_open("the docker post")


async def test_the_tags_of_the_open_post_and_of_a_named_one(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.process_input(
            "what tags does it have?", context={"current_file": "posts/docker-basics.md"}
        )
        assert msg.state == "COMPLETED", msg.content
        assert msg.data["tags"] == ["docker", "运维"], msg.content
        assert "docker, 运维" in msg.content and "(posts/docker-basics.md)" in msg.content
        msg = await rt.process_input("what are the tags of the smart pointers post?")
        assert msg.data["path"] == "posts/rust-smart-pointers.md", msg.content
        assert "rust" in msg.data["tags"]
        msg = await rt.process_input("what tags do my posts use?")  # the blog's, not a post's
        assert "docker (1)" in msg.content, msg.content
        assert llm.call_count == 0
    finally:
        await rt.close()


async def test_a_posts_categories_are_said_when_it_has_no_tags(tmp_path: Path) -> None:
    jekyll = copy_fixture("jekyll", tmp_path / "jekyll")
    rt = writing_runtime(jekyll, ScriptedModel([]))
    try:
        msg = await rt.process_input("what tags does the hello jekyll post have?")
    finally:
        await rt.close()
    assert msg.data["tags"] == [] and msg.data["categories"] == ["jekyll"], msg.content
    assert "has no tags" in msg.content and "Its categories: jekyll" in msg.content


async def test_a_question_on_it_is_answered_from_the_open_post(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    prompts: list[str] = []

    def answer(messages: list[LLMMessage], options: ModelOptions) -> str:
        prompts.append(str(messages[-1]["content"]))
        return "Containers share the host's kernel ([Docker](posts/docker-basics.md))."

    rt = writing_runtime(blog, FunctionModel(answer))
    try:
        msg = await rt.process_input(
            "what does it say about images?", context={"current_file": "posts/docker-basics.md"}
        )
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["sources"] == ["posts/docker-basics.md"], msg.data


@pytest.mark.parametrize(
    ("question", "open_file"),
    [
        # "it" that is not the open post: the search decides
        ("what is docker and how do I install it?", "posts/rust-borrowing.md"),
        ("博客里有其它关于 Docker 的内容吗", "posts/rust-borrowing.md"),
        # an open file outside the blog (an editor's): the search, not a failure
        ("what does it say about docker?", "/elsewhere/README.md"),
    ],
)
async def test_it_is_the_open_post_only_when_the_question_says_so(
    tmp_path: Path, question: str, open_file: str
) -> None:
    blog = copy_blog(tmp_path / "blog")

    def answer(messages: list[LLMMessage], options: ModelOptions) -> str:
        return "Docker runs containers ([Docker](posts/docker-basics.md))."

    rt = writing_runtime(blog, FunctionModel(answer))
    try:
        msg = await rt.run_skill(
            "AnswerQuestion", {"question": question}, context={"current_file": open_file}
        )
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert "posts/docker-basics.md" in msg.data["sources"], msg.data


@pytest.mark.parametrize("question", ["what are its tags?", "show its tags", "list its tags"])
async def test_its_tags_are_the_open_posts_from_its_frontmatter(
    tmp_path: Path, question: str
) -> None:
    """ "what are its tags?" was answered by the model from a search of the blog, and the
    classifier sent "show its tags" to an edit of the open post."""
    from skillrt._routing.intent_table import IntentTable
    from skillrt.skills.writing.post_tags import ITS_TAGS

    table = {p.regex.pattern for p in IntentTable.default().patterns}
    assert ITS_TAGS.pattern.replace("(?P<post>", "(?:") in table
    blog = copy_blog(tmp_path / "blog")
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.process_input(question, {"current_file": "posts/docker-basics.md"})
    await rt.close()
    assert msg.state == "COMPLETED" and msg.data["tags"] == ["docker", "运维"], msg.content
    assert llm.call_count == 0
