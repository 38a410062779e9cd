"""Tags changed without the model: an edit that only adds, removes or sets a post's tags is
made where the post keeps them, in their shape there, and every other byte stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.testing import ScriptedModel
from skills.writing.tags import TagChange, tag_change
from tests.blog import copy_blog, copy_fixture
from tests.writing_support import writing_runtime


@pytest.mark.parametrize(
    ("instruction", "action", "tags"),
    [
        ("add a tag 'release' to the Rust 1.77.0 post", "add", ("release",)),
        ("add tags rust, cli", "add", ("rust", "cli")),
        ("add the tag jekyll to liquid-tips", "add", ("jekyll",)),
        ("remove the tag draft from rust-lifetimes", "remove", ("draft",)),
        ("add tags rust async", "add", ("rust", "async")),
        ("add the tag machine learning", "add", ("machine learning",)),
        ("please add a tag called release-notes", "add", ("release-notes",)),
        ("tag it with rust and async", "add", ("rust", "async")),
        ("tag the rust post as release please", "add", ("release",)),
        ("add rust as a tag", "add", ("rust",)),
        ("add #rust to the tags", "add", ("rust",)),
        ("edit the rust post: add the tag release", "add", ("release",)),
        ("remove the tag draft from the rust post", "remove", ("draft",)),
        ("remove draft from the tags", "remove", ("draft",)),
        ("untag draft", "remove", ("draft",)),
        # the tag before "tag" (it went to the model, to edit the body for it)
        ("remove the go tag", "remove", ("go",)),
        ("delete the rust and go tags from the rust post", "remove", ("rust", "go")),
        ("drop the draft tag please", "remove", ("draft",)),
        ("add the rust tag", "add", ("rust",)),
        ("add the rust and cli tags to it", "add", ("rust", "cli")),
        ("add a new tag", "add", ()),  # (asked which)
        ("add a new tag: rust", "add", ("rust",)),
        ("set the tags to rust, cli", "set", ("rust", "cli")),
        ("add tags", "add", ()),
        ("add more tags", "add", ()),
        # the tags after the post they are for (before, "which tags?" was asked)
        ("add tags to the go post: go, goroutines", "add", ("go", "goroutines")),
        ("add a tags line to the go post: go, goroutines", "add", ("go", "goroutines")),
        ("add tags to the go post", "add", ()),
        ("给这篇文章添加标签 rust、异步", "add", ("rust", "异步")),
        ("加上 rust 标签", "add", ("rust",)),
        ("删除标签“草稿”", "remove", ("草稿",)),
        ("把标签改成 a，b", "set", ("a", "b")),
    ],
)
def test_a_tag_instruction_is_read(instruction: str, action: str, tags: tuple[str, ...]) -> None:
    assert tag_change(instruction) == TagChange(action, tags)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "instruction",
    [
        "add a paragraph about tags",
        "add more examples to the tags section",
        "add a tagline",
        "remove the tag line from the intro",
        "add a tags section",
        "include the tags in the summary",  # (not "include": a summary's)
        "给这篇文章添加标签 rust，然后总结一下",
        "给文章加一个标签云",
        "add a conclusion",
        "explain how html tags work in the intro",
        "add the tag this is a whole sentence rather than a tag",  # not a tag: the model's
        "add the tag rust and a conclusion",
        "add the tag rust and fix the typos",
        "add tags to the code blocks",  # language tags on the fences: the body's
        "add language tags to each code block",
        "remove the tags from the headings",
        "remove the h1 tag",  # an element's
        "remove all the HTML tags",
        "remove the <br> tags",
        "remove the og:image tag",
        "add the h1 tag",
        "add an alt tag to the image",
        "add a canonical tag",
        "remove the tag line from the intro",
    ],
)
def test_other_edits_are_not_tag_changes(instruction: str) -> None:
    assert tag_change(instruction) is None


async def _run(blog: Path, request: str, *, answer: str | None = None) -> tuple[object, int]:
    """The reply to ``request`` (and to ``answer`` when the task asks), and how many model
    calls were made."""
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.process_input(request)
        if answer is not None:
            assert msg.state == "WAITING_INPUT", msg.content
            msg = await rt.process_input(answer)
    finally:
        await rt.close()
    return msg, llm.call_count


ZOLA_POST = """+++
title = "Compiler team planning, September"
date = 2024-09-10

[taxonomies]
# what the site lists
tags = ["compiler", "planning"]  # two for now
categories = ["team"]
+++

The compiler team met to plan the incremental compilation work.
"""


async def test_a_zola_tag_is_added_to_its_taxonomies_table_and_nothing_else_moves(
    tmp_path: Path,
) -> None:
    blog = copy_fixture("zola", tmp_path / "blog")
    post = blog / "content" / "inside-rust" / "2024-09-10-compiler-team.md"
    post.write_text(ZOLA_POST, encoding="utf-8")
    msg, calls = await _run(blog, "add the tag incremental to the compiler team post")
    assert msg.state == "COMPLETED", msg.content  # type: ignore[attr-defined]
    assert calls == 0  # no model asked
    expected = ZOLA_POST.replace('"planning"]', '"planning", "incremental"]')
    assert post.read_text(encoding="utf-8") == expected
    data = msg.data  # type: ignore[attr-defined]
    assert data["tags"] == ["compiler", "planning", "incremental"]
    assert data["field"] == "taxonomies.tags" and data["changed"] is True


async def test_a_zola_post_without_tags_gets_a_taxonomies_table_and_a_note(
    tmp_path: Path,
) -> None:
    """The fixture's config.toml declares no taxonomy: the reply says Zola needs it."""
    blog = copy_fixture("zola", tmp_path / "blog")
    post = blog / "content" / "Rust-1.77.0.md"
    before = post.read_text(encoding="utf-8")
    msg, calls = await _run(blog, "add a tag 'release' to the Rust 1.77.0 post")
    assert msg.state == "COMPLETED" and calls == 0  # type: ignore[attr-defined]
    _, fields, body = before.split("+++\n", 2)
    expected = "+++\n" + fields + '\n[taxonomies]\ntags = ["release"]\n+++\n' + body
    assert post.read_text(encoding="utf-8") == expected
    assert 'taxonomies = [{name = "tags"}]' in msg.content  # type: ignore[attr-defined]
    # Declared: no note.
    config = blog / "config.toml"
    config.write_text(
        'taxonomies = [{name = "tags"}]\n' + config.read_text(encoding="utf-8"), encoding="utf-8"
    )
    msg, _ = await _run(blog, "add the tag stable to content/Rust-1.78.0.md")
    assert msg.state == "COMPLETED" and "config.toml" not in msg.content  # type: ignore[attr-defined]


async def test_a_yaml_flow_list_keeps_its_style_and_the_body_stays(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts" / "go-concurrency.md"
    before = post.read_text(encoding="utf-8")
    assert "tags: [go, concurrency]\n" in before
    msg, calls = await _run(blog, "add tags goroutines, channels to posts/go-concurrency.md")
    assert msg.state == "COMPLETED" and calls == 0  # type: ignore[attr-defined]
    assert post.read_text(encoding="utf-8") == before.replace(
        "tags: [go, concurrency]\n", "tags: [go, concurrency, goroutines, channels]\n"
    )
    # and removed again, case aside
    request = "remove the tags Goroutines and channels from posts/go-concurrency.md"
    msg, _ = await _run(blog, request)
    assert msg.state == "COMPLETED"  # type: ignore[attr-defined]
    assert post.read_text(encoding="utf-8") == before


async def test_tags_as_a_string_stay_a_string(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts" / "strings.md"
    post.write_text("---\ntitle: Strings\ntags: a, b\n---\n\nText.\n", encoding="utf-8")
    msg, _ = await _run(blog, "add the tag c to posts/strings.md")
    assert msg.state == "COMPLETED"  # type: ignore[attr-defined]
    assert post.read_text(encoding="utf-8") == "---\ntitle: Strings\ntags: a, b, c\n---\n\nText.\n"


async def test_a_tag_already_there_or_missing_leaves_the_file_untouched(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts" / "go-concurrency.md"
    before = post.read_text(encoding="utf-8")
    msg, calls = await _run(blog, "add the tag Go to posts/go-concurrency.md")
    assert msg.state == "COMPLETED" and calls == 0  # type: ignore[attr-defined]
    assert "already has the tags “Go”" in msg.content  # type: ignore[attr-defined]
    assert msg.data["changed"] is False  # type: ignore[attr-defined]
    msg, _ = await _run(blog, "remove the tag rust from posts/go-concurrency.md")
    assert "has no tag “rust”" in msg.content  # type: ignore[attr-defined]
    assert post.read_text(encoding="utf-8") == before


async def test_tags_not_named_are_asked_for(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts" / "go-concurrency.md"
    before = post.read_text(encoding="utf-8")
    msg, calls = await _run(blog, "add tags to posts/go-concurrency.md", answer="sync, mutex")
    assert msg.state == "COMPLETED" and calls == 0  # type: ignore[attr-defined]
    assert msg.data["tags"] == ["go", "concurrency", "sync", "mutex"]  # type: ignore[attr-defined]
    assert post.read_text(encoding="utf-8") == before.replace(
        "[go, concurrency]", "[go, concurrency, sync, mutex]"
    )


async def test_hugo_toml_tags_and_a_post_without_frontmatter(tmp_path: Path) -> None:
    blog = copy_fixture("hugo", tmp_path / "blog")
    post = blog / "content" / "posts" / "toml-post.md"
    before = post.read_text(encoding="utf-8")
    msg, _ = await _run(blog, "set the tags of content/posts/toml-post.md to hugo, toml")
    assert msg.state == "COMPLETED", msg.content  # type: ignore[attr-defined]
    assert post.read_text(encoding="utf-8") == before.replace(
        'tags = ["shortcodes"]', 'tags = ["hugo", "toml"]'
    )
    bare = blog / "content" / "posts" / "bare.md"
    bare.write_text("# Bare\n\nNo fields at all.\n", encoding="utf-8")
    msg, _ = await _run(blog, "add the tag notes to content/posts/bare.md")
    assert msg.state == "COMPLETED", msg.content  # type: ignore[attr-defined]
    # Hugo's YAML posts write their lists ["a", "b"]: a post with none of its own gets that.
    assert bare.read_text(encoding="utf-8") == (
        '---\ntags: ["notes"]\n---\n\n# Bare\n\nNo fields at all.\n'
    )
    # The diff shows the block it was given (it showed the blank line after it alone).
    assert '+tags: ["notes"]' in msg.data["diff"] and '+tags: ["notes"]' in msg.content  # type: ignore[attr-defined]


async def test_a_chinese_request_gets_a_chinese_reply(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts" / "python-async-zh.md"
    before = post.read_text(encoding="utf-8")
    assert "tags: [python, 异步, 并发]\n" in before
    msg, calls = await _run(blog, "给 posts/python-async-zh.md 添加标签 协程")
    assert msg.state == "COMPLETED" and calls == 0  # type: ignore[attr-defined]
    assert "python、异步、并发、协程" in msg.content  # type: ignore[attr-defined]
    assert post.read_text(encoding="utf-8") == before.replace(
        "tags: [python, 异步, 并发]\n", "tags: [python, 异步, 并发, 协程]\n"
    )


async def test_the_add_tags_step_offered_after_a_new_post_works(tmp_path: Path) -> None:
    """CreateArticle offers "Add tags" as a next step: taken, it asks which, and sets them on
    the post just made (before, the model was asked to rewrite the empty body)."""
    blog = copy_blog(tmp_path / "blog")
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        made = await rt.process_input("create a new post titled Hello tags")
        assert made.state == "COMPLETED" and "Add tags" in made.data["next_steps"]
        asked = await rt.process_input("Add tags")
        assert asked.state == "WAITING_INPUT" and "Which tags" in asked.content
        done = await rt.process_input("greeting, intro")
    finally:
        await rt.close()
    assert done.state == "COMPLETED", done.content
    assert llm.call_count == 0
    text = (blog / "posts" / "hello-tags.md").read_text(encoding="utf-8")
    assert "tags: [greeting, intro]\n---\n" in text  # the blog's posts write [a, b]


@pytest.mark.parametrize(
    ("request_text", "title", "tags"),
    [
        ("create a new post titled Shortcodes in depth with tags hugo, shortcodes",
         "Shortcodes in depth", ["hugo", "shortcodes"]),
        ("create a new post titled Rust tips tagged rust", "Rust tips", ["rust"]),
        ("create a new post titled Writing with tags considered harmful",
         "Writing with tags considered harmful", []),
    ],
)  # fmt: skip
async def test_a_new_post_titled_with_its_tags_gets_them(
    tmp_path: Path, request_text: str, title: str, tags: list[str]
) -> None:
    """The title a request gives may go on with the post's tags: they are cut off it and set
    (one-word tags only; "with tags considered harmful" is the title's own)."""
    blog = copy_blog(tmp_path / "blog")
    msg, calls = await _run(blog, request_text)
    assert msg.state == "COMPLETED" and calls == 0, msg.content  # type: ignore[attr-defined]
    data = msg.data  # type: ignore[attr-defined]
    assert data["title"] == title and data["tags"] == tags
    text = (blog / data["path"]).read_text(encoding="utf-8")
    assert f"title: {title}\n" in text
    if tags:  # as the blog's posts write their lists
        assert "tags: [" + ", ".join(tags) + "]\n" in text
    else:
        assert "\ntags:" not in text
    # "Add tags" is offered only to a post that has none.
    assert ("Add tags" in data["next_steps"]) is not bool(tags)


async def test_a_tag_edit_finds_the_post_named_after_the_tags(tmp_path: Path) -> None:
    """ "add the tag jekyll to liquid-tips": the post is the one named after "to" (an edit's
    stricter reading took only a name right after its verb, and asked which post)."""
    blog = copy_fixture("jekyll", tmp_path / "blog")
    post = blog / "_posts" / "2024-01-15-liquid-tips.md"
    before = post.read_text(encoding="utf-8")
    msg, calls = await _run(blog, "add the tag jekyll to liquid-tips")
    assert msg.state == "COMPLETED" and calls == 0, msg.content  # type: ignore[attr-defined]
    assert post.read_text(encoding="utf-8") == before.replace(
        "categories: [jekyll, liquid]\n", "categories: [jekyll, liquid]\ntags: [jekyll]\n"
    )


async def test_jekylls_tags_separated_by_spaces_stay_so(tmp_path: Path) -> None:
    """Jekyll splits ``tags: rust go`` at spaces: "rust, go, python" was read as "rust,",
    "go," and "python"."""
    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts" / "spaced.md"
    post.write_text("---\ntitle: Spaced\ntags: rust go\n---\n\nText.\n", encoding="utf-8")
    msg, _ = await _run(blog, "add the tag python to posts/spaced.md")
    assert msg.state == "COMPLETED"  # type: ignore[attr-defined]
    assert (
        post.read_text(encoding="utf-8")
        == "---\ntitle: Spaced\ntags: rust go python\n---\n\nText.\n"
    )
    msg, _ = await _run(blog, "add the tag machine learning to posts/spaced.md")
    assert "tags:\n- rust\n- go\n- python\n- machine learning\n" in post.read_text(encoding="utf-8")


async def test_a_tag_change_that_would_break_an_alias_is_refused_as_such(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts" / "anchored.md"
    text = "---\ntitle: T\ntags: &t [rust, go]\nkeywords: *t\n---\n\nText.\n"
    post.write_text(text, encoding="utf-8")
    msg, _ = await _run(blog, "add the tag python to posts/anchored.md")
    assert msg.data["error"] == "frontmatter_not_kept", msg.content  # type: ignore[attr-defined]
    assert "was not changed" in msg.content and "Fix it" not in msg.content  # type: ignore[attr-defined]
    assert post.read_text(encoding="utf-8") == text


async def test_a_jekyll_posts_one_tag_string_grows_with_spaces(tmp_path: Path) -> None:
    """Jekyll splits a tags string at spaces: "rust, go" was read as "rust," and "go"."""
    blog = copy_fixture("jekyll", tmp_path / "jekyll")
    post = blog / "_posts" / "2024-01-15-liquid-tips.md"
    text = post.read_text(encoding="utf-8")
    one = text.replace(
        "categories: [jekyll, liquid]\n", "categories: [jekyll, liquid]\ntags: liquid\n"
    )
    assert one != text
    post.write_text(one, encoding="utf-8")
    msg, _ = await _run(blog, "add the tag jekyll to _posts/2024-01-15-liquid-tips.md")
    assert msg.state == "COMPLETED", msg.content  # type: ignore[attr-defined]
    assert post.read_text(encoding="utf-8") == one.replace(
        "tags: liquid\n", "tags: liquid jekyll\n"
    )
