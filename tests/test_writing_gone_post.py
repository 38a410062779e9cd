"""A post deleted in the session, asked about afterwards, is said to be gone: "what tags does
the docker post have?" and "summarize the docker post" asked which post instead, listing
others, as if the one deleted had never been. "it" is asked about still (another post may be
meant), the question saying first that the post is gone."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt import AgentRuntime, load_config
from skillrt.messages import ChatMessage
from skillrt.skills import builtin_skills
from skillrt.testing import FunctionModel
from tests.blog import copy_blog
from tests.writing_support import WritingModelFn, writing_runtime


@pytest.mark.parametrize(
    "request_",
    [
        "summarize the docker post",
        "how many words is the docker post?",
        "what tags does the docker post have?",
        "show me the docker post",
        "docker 那篇有多少字？",
    ],
)
async def test_a_deleted_post_named_is_said_to_be_gone(tmp_path: Path, request_: str) -> None:
    said, kinds = await _after_deleting_docker(tmp_path, request_)
    assert said.state != "WAITING_INPUT" and "question" not in said.data, said.content
    assert "posts/docker-basics.md" in said.content and "posts/ml-intro.md" not in said.content
    assert kinds == []  # nothing made up about it


@pytest.mark.parametrize(
    ("request_", "gone"),
    [
        ("what tags does it have?", "is no longer on the blog"),
        ("summarize it", "is no longer on the blog"),
        ("这篇多少字？", "已经不在博客里了"),
    ],
)
async def test_it_meaning_a_deleted_post_asks_saying_it_is_gone(
    tmp_path: Path, request_: str, gone: str
) -> None:
    said, _kinds = await _after_deleting_docker(tmp_path, request_)
    assert said.state == "WAITING_INPUT", said.content
    assert said.content.startswith(f"`posts/docker-basics.md` {gone}"), said.content


async def _after_deleting_docker(tmp_path: Path, request_: str) -> tuple[ChatMessage, list[str]]:
    """The reply to ``request_`` right after posts/docker-basics.md was deleted, and the
    prompts the model was sent for it."""
    blog = copy_blog(tmp_path / "blog")
    model = WritingModelFn()
    rt = writing_runtime(blog, FunctionModel(model))
    await rt.initialize()
    try:
        await rt.process_input("delete posts/docker-basics.md")
        deleted = await rt.process_input("yes")
        assert deleted.data.get("deleted") is True, deleted.content
        said = await rt.process_input(request_)
    finally:
        await rt.close()
    return said, model.kinds


async def test_a_post_still_there_is_asked_about_as_before(tmp_path: Path) -> None:
    """Words that name posts still on the blog are no gone post's ("my python post", after
    the generators post was deleted, is one of the other python posts)."""
    blog = copy_blog(tmp_path / "blog")
    rt = writing_runtime(blog, FunctionModel(WritingModelFn()))
    await rt.initialize()
    try:
        await rt.process_input("delete posts/python-generators.md")
        await rt.process_input("yes")
        said = await rt.process_input("summarize my python post")
    finally:
        await rt.close()
    assert "question" in said.data, said.content
    assert "posts/python-asyncio.md" in said.content


@pytest.mark.parametrize(
    ("request_", "path"),
    [
        ("which posts link to the sqlite one?", "posts/sqlite-fts5.md"),
        ("summarize the docker one", "posts/docker-basics.md"),
        ("what tags does the go one have?", "posts/go-concurrency.md"),
    ],
)
async def test_the_x_one_names_a_post_as_the_x_post_does(
    tmp_path: Path, request_: str, path: str
) -> None:
    """ "which posts link to the sqlite one?" was told no post on the blog is "the sqlite one";
    the others asked which post."""
    blog = copy_blog(tmp_path / "blog")
    rt = writing_runtime(blog, FunctionModel(WritingModelFn()))
    await rt.initialize()
    try:
        said = await rt.process_input(request_)
    finally:
        await rt.close()
    assert said.state == "COMPLETED" and path in said.content, said.content


async def test_the_example_path_of_a_reply_is_no_post_gone(tmp_path: Path) -> None:
    """The chat's "what can you do?" gives "summarize posts/x.md" as an example (and "which
    post?" answered with none says "Give its path (like posts/x.md)"): "summarize it" next
    began "`posts/x.md` is no longer on the blog (deleted or moved).", a post that never was."""
    blog = copy_blog(tmp_path / "blog")
    config = load_config(content_root=blog, state_dir=blog.parent / "state")
    rt = AgentRuntime(config, llm=FunctionModel(WritingModelFn()), skills=builtin_skills())
    await rt.initialize()
    try:
        helped = await rt.process_input("what can you do?")
        assert "posts/x.md" in helped.content
        asked = await rt.process_input("summarize it")
    finally:
        await rt.close()
    assert asked.state == "WAITING_INPUT", asked.content
    assert "posts/x.md" not in asked.content and "no longer on the blog" not in asked.content
