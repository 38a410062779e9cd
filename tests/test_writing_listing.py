"""The blog's list of posts, asked for in the chat ("list my posts", "what posts do I have about
Rust?", "列出所有文章"): AnswerQuestion lists them from the index, with their own titles, dates,
tags and descriptions, and asks no model (the embedded model's list described each post with
made-up facts, and "list my posts" found nothing)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillrt.skills.writing.answer import LISTED, listing_topic
from skillrt.testing import ScriptedModel
from tests.blog import POST_COUNT, copy_blog, copy_fixture
from tests.writing_support import writing_runtime


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("list my posts", ""),
        ("show me all of my blog posts", ""),
        ("what posts have I written?", ""),
        ("what posts do I have about Rust?", "Rust"),
        ("show me the articles on go", "go"),
        ("do I have any posts about sqlite?", "sqlite"),
        ("what are the posts tagged python", "python"),
        ("列出所有文章", ""),
        ("我有哪些关于 Rust 的文章", "Rust"),
        ("列出关于 rust 的文章", "rust"),  # (asked whether to write an article on it)
        ("显示有关数据库的所有文章", "数据库"),
        ("显示关于 rust 的文章列表", "rust"),
        ("what is a borrow checker?", None),
        ("list the steps to install rust", None),
        ("how do I list posts in hugo?", None),
    ],
)
def test_a_request_for_the_list_is_told_from_a_question(question: str, topic: str | None) -> None:
    assert listing_topic(question) == topic


async def _ask(blog: Path, request: str) -> tuple[object, int]:
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.process_input(request)
    finally:
        await rt.close()
    return msg, llm.call_count


async def test_a_chinese_request_for_the_posts_on_a_topic_is_routed_to_the_list(
    tmp_path: Path,
) -> None:
    """ "列出关于 rust 的文章" asked "I'm not sure what you'd like me to do", writing an
    article on it first."""
    blog = copy_blog(tmp_path / "blog")
    msg, calls = await _ask(blog, "列出关于 rust 的文章")
    assert msg.state == "COMPLETED" and calls == 0, msg.content  # type: ignore[attr-defined]
    assert "posts/rust-lifetimes.md" in msg.data["citations"]  # type: ignore[attr-defined]


async def test_every_post_is_listed_newest_first_without_the_model(tmp_path: Path) -> None:
    blog = copy_fixture("zola", tmp_path / "blog")
    msg, calls = await _ask(blog, "list my posts")
    assert msg.state == "COMPLETED" and calls == 0  # type: ignore[attr-defined]
    content: str = msg.content  # type: ignore[attr-defined]
    assert content.startswith("Posts on the blog: 5\n")
    listed = re.findall(r"^\d+\. \[([^\]]+)\]\(([^)]+)\)", content, re.M)
    assert [path for _, path in listed] == [
        "content/inside-rust/2024-09-10-compiler-team.md",
        "content/async-closures/index.md",
        "content/Rust-1.78.0.md",
        "content/Rust-1.77.0.md",
        "content/inside-rust/2023-11-20-this-week.md",
    ]
    assert "— 2024-09-10 · compiler, planning" in content
    assert msg.data["citations"] == [path for _, path in listed]  # type: ignore[attr-defined]
    for _, path in listed:
        assert (blog / path).is_file()


async def test_posts_on_a_topic_are_the_ones_the_search_finds(tmp_path: Path) -> None:
    blog = copy_fixture("zola", tmp_path / "blog")
    msg, calls = await _ask(blog, "do I have any posts about compilers?")
    assert msg.state == "COMPLETED" and calls == 0  # type: ignore[attr-defined]
    content: str = msg.content  # type: ignore[attr-defined]
    assert content.startswith("Posts on “compilers”: 2\n")
    assert "Compiler team planning" in content and "This week in the compiler" in content
    assert "Rust 1.78.0" not in content
    msg, _ = await _ask(blog, "我有哪些关于量子计算的文章")
    assert msg.content == "博客里没有关于“量子计算”的文章。"  # type: ignore[attr-defined]


async def test_drafts_are_left_out_and_counted_and_a_long_list_is_cut(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    for i in range(3):
        (blog / "posts" / f"draft-{i}.md").write_text(
            f"---\ntitle: Draft {i}\ndraft: true\n---\n\nNot yet.\n", encoding="utf-8"
        )
    extra = max(0, LISTED + 5 - POST_COUNT)  # more posts than a list shows
    for i in range(extra):
        (blog / "posts" / f"extra-{i}.md").write_text(
            f"---\ntitle: Extra {i}\ndate: 2020-01-01\n---\n\nMore.\n", encoding="utf-8"
        )
    total = POST_COUNT + extra
    msg, _ = await _ask(blog, "list all posts")
    content: str = msg.content  # type: ignore[attr-defined]
    assert content.startswith(f"Posts on the blog: {total} (drafts left out: 3)\n")
    assert "Draft 0" not in content
    assert len(re.findall(r"^\d+\. \[", content, re.M)) == LISTED
    assert content.endswith(f"… and {total - LISTED} more.")


async def test_a_question_only_drafts_answer_says_so(tmp_path: Path) -> None:
    """Answers leave drafts out: when only a draft is on the question, the reply names it and
    says how to have it used, rather than "the blog has nothing on it" and a general answer."""
    blog = copy_fixture("hugo", tmp_path / "blog")
    msg, calls = await _ask(blog, "what did I write about shortcodes?")
    assert msg.state == "COMPLETED" and calls == 0  # type: ignore[attr-defined]
    content: str = msg.content  # type: ignore[attr-defined]
    assert content.startswith("No published post is on “what did I write about shortcodes?”")
    assert "[Shortcodes in TOML land](content/posts/toml-post.md)" in content
    assert "drafts.in_answers" in content and "General answer" not in content
    assert msg.data["drafts"] == ["content/posts/toml-post.md"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("request_text", "context"),
    [
        ("what is it about?", {"current_file": "content/posts/toml-post.md"}),
        ("what does the shortcodes in toml land post say about shortcodes?", None),
    ],
)
async def test_a_question_on_one_draft_says_it_is_a_draft(
    tmp_path: Path, request_text: str, context: dict[str, str] | None
) -> None:
    """A question on the draft open in the chat (a new article, written as a draft), or on
    one named, says answers leave drafts out. Before, the draft was passed over, the blog
    searched for "what is it about?", and the embedded model answered about git from three
    posts on other things."""
    blog = copy_fixture("hugo", tmp_path / "blog")
    llm = ScriptedModel(["The blog's git post explains branches."])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.process_input(request_text, context)
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert llm.call_count == 0
    assert msg.content.startswith(
        "[Shortcodes in TOML land](content/posts/toml-post.md) is a draft: answers leave drafts"
    )
    assert msg.data["drafts"] == ["content/posts/toml-post.md"]


async def test_a_question_with_a_drafts_title_in_its_words_is_searched(tmp_path: Path) -> None:
    """Only a question that names the post ("the … post") or means the open one gets "… is a
    draft": a question that has a draft's title among its words is a question for the
    published posts, searched as before."""
    blog = copy_fixture("hugo", tmp_path / "blog")
    llm = ScriptedModel(["They are covered there."] * 4)
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.process_input("how do shortcodes in toml land work?")
        posts = await rt.process_input("which posts explain shortcodes in toml land?")
    finally:
        await rt.close()
    assert "is a draft: answers leave drafts" not in posts.content
    assert "is a draft: answers leave drafts" not in msg.content
    assert llm.call_count >= 1  # answered from the published posts found
    prompt = str(llm.calls[0])
    assert "toml-post.md" not in prompt and "Shortcodes in TOML land" not in prompt
