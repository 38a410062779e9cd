"""Publishing a draft from the chat ("publish the post X", "发布这篇文章"): the draft mark comes
off the blog's way, with no model, and undo puts the draft back. Before, the request went to
the model as an edit of the body."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillrt import AgentRuntime, ChatMessage
from skillrt.testing import ScriptedModel
from skills.writing.publishing import is_publish
from tests.blog import copy_fixture
from tests.writing_support import writing_runtime

TOML_DRAFT = "content/posts/toml-post.md"


async def _sent(rt: AgentRuntime, text: str) -> ChatMessage:
    """The reply to ``text``, a yes given when the router asks first (the trained classifier
    has seen no "publish" request, and where it disputes the table a write asks)."""
    msg = await rt.process_input(text)
    if msg.state == "WAITING_INPUT" and "(y/n)" in msg.content:
        msg = await rt.process_input("yes")
    return msg


@pytest.mark.parametrize(
    ("instruction", "publishing"),
    [
        ("publish it", True),
        ("please publish the post Shortcodes in TOML land", True),
        ("publish content/posts/toml-post.md", True),
        ("发布这篇文章", True),
        ("把 content/posts/toml-post.md 发布", True),
        ("publishing with hugo, explained", False),
        ("write about how to publish a blog", False),
        ("发布一篇关于 Rust 的文章", False),
    ],
)
def test_a_publish_request_is_told_apart(instruction: str, publishing: bool) -> None:
    assert is_publish(instruction) is publishing


async def test_a_draft_is_published_byte_for_byte_and_undone(tmp_path: Path) -> None:
    blog = copy_fixture("hugo", tmp_path / "blog")
    before = (blog / TOML_DRAFT).read_text(encoding="utf-8")
    assert "draft = true\n" in before
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await _sent(rt, "publish the post Shortcodes in TOML land")
        assert msg.state == "COMPLETED", msg.content
        assert llm.call_count == 0
        assert msg.data["path"] == TOML_DRAFT and msg.data["changed"] is True
        assert (blog / TOML_DRAFT).read_text(encoding="utf-8") == before.replace(
            "draft = true\n", ""
        )
        again = await _sent(rt, f"publish {TOML_DRAFT}")
        assert "is not a draft; nothing changed" in again.content
        undone = await rt.undo()
        assert undone.state == "COMPLETED", undone.content
    finally:
        await rt.close()
    assert (blog / TOML_DRAFT).read_text(encoding="utf-8") == before


async def test_a_jekyll_draft_moves_to_posts_with_its_date(tmp_path: Path) -> None:
    blog = copy_fixture("jekyll", tmp_path / "blog")
    text = (blog / "_drafts" / "unfinished-idea.md").read_text(encoding="utf-8")
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    msg = await _sent(rt, "发布 _drafts/unfinished-idea.md")
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.content.startswith("已发布：`_drafts/unfinished-idea.md` 移到了 `_posts/")
    moved = msg.data["path"]
    assert re.fullmatch(r"_posts/\d{4}-\d{2}-\d{2}-unfinished-idea\.md", moved)
    assert (blog / moved).read_text(encoding="utf-8") == text
    assert not (blog / "_drafts" / "unfinished-idea.md").exists()
