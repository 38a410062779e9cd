"""How long a post is comes from counting it, not from a model: the embedded model said "The
shell post is 12 words." of a post it was not shown whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.skills.writing.post_length import asks_length, length_of
from skillrt.testing import ScriptedModel
from tests.blog import copy_blog, copy_fixture
from tests.writing_support import writing_runtime


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("how many words is the shells post?", True),
        ("how long is my first post?", True),
        ("what's the word count of the go post?", True),
        ("word count of posts/go-concurrency.md", True),
        ("docker 那篇文章有多少字？", True),
        ("how long is a goroutine's stack?", False),  # a question about the topic
        ("how many posts do I have?", False),
        ("what is the go post about?", False),
        # about posts in general: a question as any other
        ("how long should a blog post be?", False),
        ("how long does it take to get indexed?", False),
        ("what's the length of a typical blog post?", False),
        ("一篇博客应该写多少字？", False),
        # a general word after the post is named, reading time, a new post: counted
        ("how long does it take to read this post?", True),
        ("how long is the post I wrote about the average salary?", True),
        ("how long is my new post?", True),
    ],
)
def test_a_question_on_a_posts_length_is_told_apart(question: str, asks: bool) -> None:
    assert asks_length(question) is asks


def test_prose_words_code_blocks_and_minutes_are_counted() -> None:
    body = "# Title here\n\nOne two three.\n\n```go\nfunc main() {\n}\n```\n\n容器把应用打包。"
    length = length_of(body)
    assert (length.words, length.han, length.blocks, length.code_lines) == (12, 7, 1, 2)
    assert length.minutes == 1
    assert length_of("word " * 700).minutes == 4  # 700 / 230, rounded up


async def _asked(blog: Path, question: str) -> object:
    llm = ScriptedModel([])  # a model call fails the test
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.process_input(question)
    finally:
        await rt.close()
    assert llm.call_count == 0, msg.content
    return msg


async def test_how_many_words_is_a_post_is_counted(tmp_path: Path) -> None:
    hugo = copy_fixture("hugo", tmp_path / "a" / "hugo")  # (each its own state folder)
    msg = await _asked(hugo, "how many words is the shells post?")
    assert msg.state == "COMPLETED", msg.content  # type: ignore[attr-defined]
    assert msg.content == (  # type: ignore[attr-defined]
        "`content/posts/notes-on-shells.md` (“Notes on shells”) has 10 words of prose, and 1 "
        "code block(s) of 2 line(s): about 1 minute(s) to read."
    )
    assert msg.data["words"] == 10 and msg.data["code_blocks"] == 1  # type: ignore[attr-defined]
    blog = copy_blog(tmp_path / "b" / "blog")
    zh = await _asked(blog, "docker 那篇文章有多少字？")
    assert zh.data["path"] == "posts/docker-basics.md"  # type: ignore[attr-defined]
    assert "正文有 83 个字" in zh.content  # type: ignore[attr-defined]


def test_a_block_holding_fences_is_one_block() -> None:
    length = length_of("Intro.\n\n````md\n```\ncode\n```\n````\n")
    assert (length.blocks, length.code_lines) == (1, 3)


def test_two_blocks_with_no_line_between_are_two() -> None:
    length = length_of("Text.\n\n```\nx = 1\n```\n```\ny = 2\n```\n")
    assert (length.blocks, length.code_lines) == (2, 2)


async def test_the_length_of_another_post_than_the_open_one_is_not_the_open_ones(
    tmp_path: Path,
) -> None:
    """ "how long is the rust post?" with the docker post open counted the docker post: the
    three rust posts fit, the open one does not."""
    blog = copy_blog(tmp_path / "blog")
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        docker = {"current_file": "posts/docker-basics.md"}
        msg = await rt.process_input("how many words is the rust post?", context=docker)
        assert msg.data.get("path") != "posts/docker-basics.md", msg.content
        msg = await rt.process_input("how many words is the post?", context=docker)
        assert msg.data.get("path") == "posts/docker-basics.md", msg.content
    finally:
        await rt.close()


@pytest.mark.parametrize("question", ["how many words is it?", "这篇文章有多少字？"])
async def test_the_length_of_it_with_no_post_open_asks_which_post(
    tmp_path: Path, question: str
) -> None:
    """ "how many words is it?", no post open, was searched for, and the general answer
    made up "A post about Liquid tips has 2 words"."""
    blog = copy_blog(tmp_path / "blog")
    llm = ScriptedModel([])  # a model call fails the test
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        asked = await rt.process_input(question)
        assert asked.state == "WAITING_INPUT", asked.content
        msg = await rt.process_input("posts/docker-basics.md")
    finally:
        await rt.close()
    assert msg.state == "COMPLETED" and msg.data["path"] == "posts/docker-basics.md", msg.content
    assert msg.data["words"] == 83 and llm.call_count == 0
