"""Publishing a draft from the chat ("publish the post X", "发布这篇文章"): the draft mark comes
off the blog's way, with no model, and undo puts the draft back. Before, the request went to
the model as an edit of the body."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillrt import AgentRuntime, ChatMessage
from skillrt.testing import ScriptedModel
from skills.writing.publishing import UNPUBLISH_EN, UNPUBLISH_ZH, is_publish, is_unpublish
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
        ("发布 git rebase 笔记 那篇", True),  # (it asked whether to delete or write one)
        ("发布《Git rebase 笔记》", True),
        ("发布会上说了什么", False),
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


HEXO_DRAFT = (
    "---\ntitle: Git rebase 笔记\ndate: 2026-11-29\ntags:\n---\n\nrebase 把提交移到新的基点上。\n"
)


@pytest.mark.parametrize(
    ("posts", "dated"),
    [
        # Hexo's new_post_name is ":title.md" by default: no date prefix, as the posts there
        (["docker-compose-tips.md", "python-async.md"], False),
        # a Hexo blog whose posts carry the date in their names: as they do
        (["2025-03-02-docker.md", "2025-05-10-python.md"], True),
    ],
)
async def test_a_hexo_draft_is_published_named_as_the_blogs_posts(
    tmp_path: Path, posts: list[str], dated: bool
) -> None:
    """ "发布 git rebase 笔记 那篇" on a Hexo blog was not understood; once it was, the draft was
    published as ``2026-11-29-git-rebase.md`` beside ``docker-compose-tips.md`` (the prefix is
    Jekyll's)."""
    import datetime as dt

    blog = tmp_path / "hexo"
    (blog / "source" / "_posts").mkdir(parents=True)
    (blog / "source" / "_drafts").mkdir()
    (blog / "_config.yml").write_text("title: Mine\nnew_post_name: :title.md\n", "utf-8")
    for name in posts:
        (blog / "source" / "_posts" / name).write_text(
            f"---\ntitle: {name}\ntags: [x]\n---\n\nText.\n", encoding="utf-8"
        )
    (blog / "source" / "_drafts" / "git-rebase.md").write_text(HEXO_DRAFT, encoding="utf-8")
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await _sent(rt, "发布 git rebase 笔记 那篇")
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    prefix = f"{dt.date.today().isoformat()}-" if dated else ""
    path = f"source/_posts/{prefix}git-rebase.md"
    assert msg.data["path"] == path
    assert (blog / path).read_text(encoding="utf-8") == HEXO_DRAFT
    assert not (blog / "source" / "_drafts" / "git-rebase.md").exists()


@pytest.mark.parametrize(
    ("instruction", "unpublishing"),
    [
        ("unpublish it", True),
        ("move it back to drafts", True),
        ("move it to the drafts folder", True),
        ("mark the docker post as a draft", True),
        ("make it a draft again", True),
        ("把它改回草稿", True),
        ("撤回发布这篇文章", True),
        ("publish it", False),
        ("move the intro to the end", False),
        ("make a draft of a post about rust", False),
        ("make it a draft about rust", False),
        # the opposite, a part of the post, or more than the move (a read found them taken)
        ("set it to draft false", False),
        ("set this post to draft = false", False),
        ("move the conclusion of this post to the drafts", False),
        ("move the TODO section of the docker post to the draft", False),
        ("put the quote from this article into the draft", False),
        ("make the intro of this post a draft", False),
        ("turn the last section of this post into a draft", False),
        ("send it to drafts and fix typos", False),
        ("把开头改成草稿里的版本", False),
        ("把结论改为草稿中写的内容", False),
        ("取消发布时间", False),
        ("撤回发布的那段话", False),
    ],
)
def test_an_unpublish_request_is_told_apart(instruction: str, unpublishing: bool) -> None:
    assert is_unpublish(instruction) is unpublishing


def test_the_unpublish_rules_are_the_tables() -> None:
    table = (Path(__file__).parents[1] / "config" / "intents.toml").read_text(encoding="utf-8")
    assert UNPUBLISH_EN in table and UNPUBLISH_ZH in table


async def test_a_post_is_made_a_draft_again_the_blogs_way_and_undone(tmp_path: Path) -> None:
    """ "unpublish it" went to the chat's choices (translate, edit, talk) and "move it to
    drafts" to an edit or a delete: a post is now a draft again with no model, by its draft
    field (Hugo), or moved into the drafts folder (Jekyll, its date prefix off), and undo
    brings it back."""
    blog = copy_fixture("hugo", tmp_path / "hugo")
    post = "content/posts/first-post.md"
    before = (blog / post).read_text(encoding="utf-8")
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.process_input("unpublish it", context={"current_file": post})
        assert msg.state == "COMPLETED", msg.content
        assert msg.data["draft"] is True and msg.data["changed"] is True
        after = (blog / post).read_text(encoding="utf-8")
        from skillrt.blog.frontmatter import split_frontmatter

        assert split_frontmatter(after).fields()["draft"] is True
        assert split_frontmatter(after).body == split_frontmatter(before).body
        again = await rt.process_input("unpublish it", context={"current_file": post})
        assert "is a draft already; nothing changed" in again.content
        assert (await rt.undo()).state == "COMPLETED"
    finally:
        await rt.close()
    assert (blog / post).read_text(encoding="utf-8") == before and llm.call_count == 0
    jekyll = copy_fixture("jekyll", tmp_path / "jekyll")
    dated = "_posts/2024-01-15-liquid-tips.md"
    text = (jekyll / dated).read_text(encoding="utf-8")
    rt = writing_runtime(jekyll, ScriptedModel([]))
    await rt.initialize()
    try:
        moved = await rt.process_input("把它改回草稿", context={"current_file": dated})
        assert moved.state == "COMPLETED", moved.content
        # its name kept: the date prefix is its only date, and publishing brings it back
        assert moved.data["path"] == "_drafts/2024-01-15-liquid-tips.md"
        assert (jekyll / moved.data["path"]).read_text(encoding="utf-8") == text
        assert not (jekyll / dated).exists()
        listed = await rt.process_input("what posts do I have?")
        assert "Liquid tips" not in listed.content and "Hello, Jekyll" in listed.content
        back = await rt.process_input("publish _drafts/2024-01-15-liquid-tips.md")
        if back.state == "WAITING_INPUT" and "(y/n)" in back.content:
            back = await rt.process_input("yes")
        assert back.data["path"] == dated, back.content
        assert (jekyll / dated).read_text(encoding="utf-8") == text
    finally:
        await rt.close()


async def test_a_draft_mark_said_twice_is_published_where_it_is_read(tmp_path: Path) -> None:
    """The first ``draft`` was removed and PyYAML reads the last: "Published" was said of a
    post still a draft."""
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    post = blog / "posts" / "x.md"
    post.write_text(
        "---\ntitle: T\ndraft: false\ntags: [a]\ndraft: true\n---\n\nB.\n", encoding="utf-8"
    )
    rt = writing_runtime(blog, ScriptedModel([]))
    msg = await _sent(rt, "publish posts/x.md")
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert post.read_text(encoding="utf-8") == "---\ntitle: T\ntags: [a]\n---\n\nB.\n"
