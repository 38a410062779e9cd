"""Tags suggested for a post come from the blog's own tags, counted in the post's words: the
chat answered "suggest tags for it" with tags the embedded model made up."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from skillrt.skills.writing.tag_suggest import _ASKS, tags_suggestion_asked
from skillrt.testing import ScriptedModel
from tests.blog import copy_blog
from tests.writing_support import writing_runtime

INTENTS = Path(__file__).resolve().parent.parent / "config" / "intents.toml"


@pytest.mark.parametrize(
    ("question", "post"),
    [
        ("suggest tags for it", "it"),
        ("Suggest some tags for this post", "this post"),
        ("can you recommend a few good tags for the docker post?", "the docker post"),
        ("what tags should I use for it?", "it"),
        ("which tags fit the go post?", "the go post"),
        ("给它推荐几个标签", "它"),
        ("这篇文章应该加什么标签？", "这篇文章"),
        ("what tags does it have?", None),  # its own tags: post_tags
        ("find tags on the docker post", None),
        ("add the tag rust to it", None),
        ("suggest a title for it", None),
        ("what tags should a blog use?", None),
    ],
)
def test_a_request_for_tag_suggestions_is_told_apart(question: str, post: str | None) -> None:
    assert tags_suggestion_asked(question) == post


def test_the_routing_table_holds_the_same_regexes() -> None:
    rules = tomllib.loads(INTENTS.read_text(encoding="utf-8"))["intents"]["ANSWER_QUESTION"]
    table = "\n".join(rule["regex"] for rule in rules["patterns"])
    for pattern in _ASKS:
        assert pattern.pattern.replace("(?P<post>", "(?:") in table


async def test_the_blogs_tags_that_the_post_says_are_suggested(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts" / "cache-notes.md"
    post.write_text(
        "---\ntitle: Caching query results in SQLite\ntags: [notes]\n---\n\n"
        "A database cache keeps rows. The database answers a query once; rust code reads the "
        "cache. Going on, let it go.\n",
        encoding="utf-8",
    )
    before = post.read_bytes()
    llm = ScriptedModel([])  # a model call fails the test
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.process_input("suggest tags for it", context={"current_file": str(post)})
        zh = await rt.process_input("给它推荐几个标签", context={"current_file": str(post)})
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    # sqlite in the title (3), database said twice; rust and go said once: not suggested
    assert msg.data["suggested"] == ["sqlite", "database"], msg.content
    assert msg.data["tags"] == ["notes"] and "add the tags sqlite, database" in msg.content
    assert "on 1 post(s); said 3 time(s)" in msg.content
    assert (
        zh.data["suggested"] == ["sqlite", "database"]
        and "给它加标签 sqlite, database" in zh.content
    )
    assert llm.call_count == 0 and post.read_bytes() == before


async def test_no_tag_that_fits_is_said_and_a_post_is_asked_for(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    try:
        asked = await rt.process_input("suggest tags for it")  # no post open: which one
        assert asked.state == "WAITING_INPUT", asked.content
        msg = await rt.process_input("posts/sqlite-fts5.md")
    finally:
        await rt.close()
    assert msg.state == "COMPLETED" and msg.data["suggested"] == [], msg.content
    assert "None of the blog's 21 other tag(s) is said twice" in msg.content


async def test_a_blog_whose_only_tags_are_the_posts_own_says_so(tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    post = blog / "posts" / "a.md"
    post.write_text("---\ntitle: A\ntags: [rust]\n---\n\nRust rust rust.\n", encoding="utf-8")
    (blog / "posts" / "b.md").write_text("---\ntitle: B\n---\n\nNo tags.\n", encoding="utf-8")
    rt = writing_runtime(blog, ScriptedModel([]))
    msg = await rt.process_input("suggest tags for it", context={"current_file": "posts/a.md"})
    await rt.close()
    assert msg.data["suggested"] == [] and "no tags but its own" in msg.content, msg.content


async def test_a_tag_said_only_in_code_is_not_suggested(tmp_path: Path) -> None:
    """The docker post's Dockerfile, "FROM python:3.12-slim", made python a tag for it."""
    blog = copy_blog(tmp_path / "blog")
    rt = writing_runtime(blog, ScriptedModel([]))
    msg = await rt.process_input("suggest tags for posts/docker-basics.md")
    await rt.close()
    assert "python" not in msg.data["suggested"], msg.content


def test_a_tag_with_a_sign_in_it_is_counted_as_itself() -> None:
    """ "c#" was counted as the word "c" (its # taken for a hashtag's)."""
    from skillrt.skills.writing.tag_suggest import _said

    assert _said("c#", "Plan C for your team", "We tried plan c. Then c again.") == 0
    assert _said("c#", "Learning C#", "C# has records.") == 4
    assert _said("#rust", "Rust notes", "rust") == 4
