"""Lists by tag come from the index, with no model: "which posts are tagged rust?" lists the
posts whose frontmatter has the tag (Zola's ``[taxonomies]`` too), and "list my tags" the
blog's tags with their counts. The embedded model, asked "posts tagged rust", listed titles
it made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.skills.writing.listing import TagAsk, links_asked, tag_ask
from skillrt.testing import ScriptedModel
from tests.blog import copy_blog, copy_fixture
from tests.writing_support import writing_runtime

RUST_POSTS = [
    "posts/notes/weekly-review.md",
    "posts/rust-smart-pointers.md",
    "posts/rust-lifetimes.md",
    "posts/rust-borrowing.md",
]


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("which posts are tagged rust?", "rust"),
        ("posts tagged rust", "rust"),
        ("show me posts with the tag docker", "docker"),
        ('list posts tagged with "machine learning"', "machine learning"),
        ("which of my articles are tagged #go?", "go"),
        ("what's tagged rust?", "rust"),
        ("标签为 rust 的文章", "rust"),
        ("带 docker 标签的文章有哪些？", "docker"),
        ("rust 标签下的文章", "rust"),
        ("what tags do I use?", ""),
        ("list my tags", ""),
        ("how many tags do I have?", ""),
        ("列出所有标签", ""),
        ("我用了哪些标签？", ""),
        # Not lists: tag edits, a question about one post, a topic.
        ("tag the rust post with async", None),
        ("add the tag rust to the go post", None),
        ("给 rust 那篇文章加上标签 异步", None),
        ("what are the tags of the rust post?", None),
        ("which posts mention docker?", None),
    ],
)
def test_a_list_by_tag_is_told_apart(text: str, tag: str | None) -> None:
    assert tag_ask(text) == (None if tag is None else TagAsk(tag))


async def _ask(blog: Path, *texts: str) -> list:
    llm = ScriptedModel([])  # any model call fails the test: there is no answer to give
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        replies = [await rt.process_input(text) for text in texts]
    finally:
        await rt.close()
    assert llm.call_count == 0
    return replies


async def test_posts_tagged_rust_are_the_posts_with_that_tag(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    tagged, chinese, plural, missing = await _ask(
        blog,
        "which posts are tagged rust?",
        "带 RUST 标签的文章有哪些？",
        "posts tagged databases",  # a plural's "s" aside
        "posts tagged pyth",
    )
    assert tagged.state == "COMPLETED", tagged.content
    assert tagged.content.startswith("Posts tagged “rust”: 4")
    assert tagged.data["citations"] == RUST_POSTS  # newest first
    assert "[Rust 借用与引用](posts/rust-borrowing.md)" in tagged.content
    assert chinese.content.startswith("标签为“RUST”的文章有 4 篇") and chinese.data["listed"] == 4
    assert plural.data["citations"] == ["posts/sqlite-fts5.md"]
    assert missing.data["found"] is False and missing.data["close"] == ["python"]
    assert missing.content == "No post is tagged “pyth”. Tags close to it: “python”."


async def test_two_tags_with_and_or_or(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    both, either = await _ask(blog, "posts tagged rust and python", "posts tagged go or memory")
    assert both.data["citations"] == ["posts/notes/weekly-review.md"]
    assert either.data["citations"] == ["posts/go-concurrency.md", "posts/rust-smart-pointers.md"]


async def test_list_my_tags_counts_each_tag_once_a_post(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    (listed,) = await _ask(blog, "list my tags")
    assert listed.state == "COMPLETED" and listed.content.startswith("Tags on the blog: ")
    lines = listed.content.split("\n\n", 1)[1].splitlines()
    assert lines[:2] == ["- python (5)", "- rust (4)"]  # the most used first
    assert "- 运维 (1)" in lines and len(lines) == listed.data["tags"] == 24


async def test_zola_taxonomies_and_drafts_left_out(tmp_path: Path) -> None:
    zola = copy_fixture("zola", tmp_path / "a" / "zola")  # (each its own state folder)
    (compiler,) = await _ask(zola, "which posts are tagged compiler?")
    assert compiler.data["citations"] == ["content/inside-rust/2024-09-10-compiler-team.md"]
    hugo = copy_fixture("hugo", tmp_path / "b" / "hugo")
    draft, tags = await _ask(hugo, "posts tagged shortcodes", "what tags do I use?")
    assert draft.data["found"] is False  # its one post is a draft
    assert "No post is tagged “shortcodes”." in draft.content and "drafts left out: 1" in (
        draft.content
    )
    assert "shortcodes" not in tags.content and "- hugo (2)" in tags.content


@pytest.mark.parametrize(
    ("text", "untagged"),
    [
        ("which posts have no tags?", True),
        ("what posts don't have tags?", True),
        ("list untagged posts", True),
        ("show me posts without tags", True),
        ("posts without tags", True),
        ("which posts are untagged?", True),
        ("list untagged entries", True),
        ("list posts without a tag", True),
        ("list the posts that have no tags", True),
        ("哪些文章没有标签？", True),
        ("没有标签的文章", True),
        ("which posts have tags?", False),
        ("没有标签", False),
    ],
)
def test_a_request_for_the_posts_with_no_tag_is_told_apart(text: str, untagged: bool) -> None:
    ask = tag_ask(text)
    assert (ask is not None and ask.untagged) is untagged


def test_the_table_routes_what_the_listing_answers() -> None:
    """The table's rule for the posts with no tag is the listing's own regex: a request the
    table sent to AnswerQuestion that the listing did not take went to the model."""
    from skillrt._routing.intent_table import IntentTable
    from skillrt.skills.writing.listing import _UNTAGGED_EN

    table = IntentTable.default()
    assert any(p.regex.pattern == _UNTAGGED_EN.pattern for p in table.patterns)


async def test_the_posts_with_no_tag_come_from_the_index(tmp_path: Path) -> None:
    """ "which posts have no tags?" went to the model as a question on the blog, which
    answered that the docker post "isn't a post about do", four times over."""
    blog = copy_blog(tmp_path / "blog")
    none, chinese = await _ask(blog, "which posts have no tags?", "哪些文章没有标签？")
    assert none.state == "COMPLETED" and none.content == "Every post has tags."
    assert chinese.content == "每篇文章都有标签。"
    bare = blog / "posts" / "untitled-thoughts.md"
    bare.write_text("---\ntitle: Untitled thoughts\ndate: 2025-01-02\n---\n\nHm.\n", "utf-8")
    (blog / "posts" / "idea.md").write_text("---\ntitle: Idea\ndraft: true\n---\n\nX.\n", "utf-8")
    (listed,) = await _ask(blog, "list untagged posts")
    assert listed.content.startswith("Posts without tags: 1 (drafts left out: 1)\n\n1. ")
    assert listed.data["citations"] == ["posts/untitled-thoughts.md"]


@pytest.mark.parametrize(
    ("question", "direction"),
    [
        ("which posts link to the rust borrowing post?", "to"),
        ("what links to the git workflow post?", "to"),
        ("show me the backlinks of rust-lifetimes", "to"),
        ("哪些文章链接到了 rust 生命周期那篇？", "to"),
        ("what does the docker post link to?", "from"),
        ("docker 那篇链接了哪些文章", "from"),
        ("add a link to the git post", None),  # an edit
        ("which posts mention docker?", None),
    ],
)
def test_a_question_on_a_posts_links_is_told_apart(question: str, direction: str | None) -> None:
    assert links_asked(question) == direction


async def test_a_posts_links_both_ways_come_from_the_graph(tmp_path: Path) -> None:
    """The embedded model listed "Rust 生命周期需要被标注的原创代码特性" three times for the posts
    linking to the lifetimes post."""
    blog = copy_blog(tmp_path / "blog")
    to, back_zh, out, none = await _ask(
        blog,
        "which posts link to the rust borrowing post?",
        "哪些文章链接到了 rust 生命周期那篇？",
        "what does the docker post link to?",
        "which posts link to the git workflow post?",
    )
    assert to.state == "COMPLETED", to.content
    assert to.content.startswith(
        "Posts that link to `posts/rust-borrowing.md` (“Rust 借用与引用”): 3"
    )
    assert to.data["citations"] == [
        "posts/notes/weekly-review.md",
        "posts/rust-lifetimes.md",
        "posts/rust-smart-pointers.md",
    ]
    assert back_zh.data["citations"] == ["posts/rust-borrowing.md"]
    assert back_zh.content.startswith("链接到 `posts/rust-lifetimes.md`")
    assert out.data["links"] == "from" and out.data["citations"] == ["posts/git-workflow.md"]
    assert none.data["found"] is True  # the docker post and the notes link to it
    assert "posts/docker-basics.md" in none.data["citations"]


async def test_a_jekyll_category_answers_when_no_post_has_the_tag(tmp_path: Path) -> None:
    """Jekyll's posts have `categories: [jekyll, liquid]` and no tags: "which posts are
    tagged jekyll?" said none was."""
    jekyll = copy_fixture("jekyll", tmp_path / "jekyll")
    (listed,) = await _ask(jekyll, "which posts are tagged jekyll?")
    assert listed.state == "COMPLETED", listed.content
    assert listed.content.startswith(
        "No post has the tag “jekyll”; posts in the category “jekyll”: 2"
    )
    assert listed.data["category"] is True and len(listed.data["citations"]) == 2
