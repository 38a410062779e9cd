"""A description written out in the request is set as written, in the frontmatter's own
format and in the field the post uses for it, with no model; every other byte stays. The
embedded model, sent "add a description to the rust 1.77 post: …" as an edit of the body,
wrote the body's first lines again and was refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.skills.writing.fields import given_description
from skillrt.testing import ScriptedModel
from tests.blog import copy_blog, copy_fixture
from tests.writing_support import writing_runtime


@pytest.mark.parametrize(
    ("instruction", "value"),
    [
        ("add a description to the rust 1.77 post: A release with C-string literals",
         "A release with C-string literals"),
        ('set the description of the go post to "Goroutines in practice"',
         "Goroutines in practice"),
        ("set the description to Goroutines in practice", "Goroutines in practice"),
        ("update the summary: Now covers Rust 2024", "Now covers Rust 2024"),
        ("把描述改成“一篇入门文章”", "一篇入门文章"),
        ("给这篇文章加上描述：讲解 Docker 的基本用法", "讲解 Docker 的基本用法"),
        # Described, not written out: the model's.
        ("change the description to something catchier", None),
        ("improve the description of the go post", None),
        ("把 docker 那篇文章的描述改成更吸引人的", None),
        ("make the description of the go post shorter", None),
        # A paragraph of the body, not the frontmatter's field.
        ("add a summary to the end of the post: In short, use channels.", None),
        ("add a summary: In short, use channels.", None),
        ("add a description to the start of the post: Hello", None),
        ("summarize the go post", None),
        # A quoted value at the end, whatever the post's name holds before it.
        ('set the description of the Getting Started with Docker post to "Containers from zero"',
         "Containers from zero"),
        # Not a description written out: a language, an instruction, another field's value.
        ("change the description to English", None),
        ("update the description: make it mention Docker", None),
        ("update the description with SEO keywords", None),
        ('Change the title to "Excerpt: chapter one"', None),
        # a possessive, a quoted post name, a description that starts with a verb
        ('set the rust post\'s description to "Fast and safe systems code"',
         "Fast and safe systems code"),
        ("把“Go 入门”的描述改成“一篇入门文章”", "一篇入门文章"),
        ("set the description to: Write better commit messages", "Write better commit messages"),
        ('add a description to the "Intro to Go" post: Learn goroutines',
         "Learn goroutines"),
        ("In the 'Intro to Go' post, set the description to \"Goroutines\"", "Goroutines"),
        # two fields in one request: not the description's alone
        ('set the description to "A guide to Go" and the title to "Go"', None),
    ],
)  # fmt: skip
def test_a_description_written_out_is_told_apart(instruction: str, value: str | None) -> None:
    assert given_description(instruction) == value


async def _edit(blog: Path, *requests: str) -> list:
    llm = ScriptedModel([])  # any model call fails: nothing is asked of it
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        replies = [await rt.process_input(text) for text in requests]
    finally:
        await rt.close()
    assert llm.call_count == 0
    return replies


async def test_a_yaml_post_gets_its_description_and_keeps_every_other_byte(
    tmp_path: Path,
) -> None:
    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts/go-concurrency.md"
    before = post.read_text(encoding="utf-8")
    (msg,) = await _edit(
        blog, 'set the description of the go post to "Goroutines: channels, in practice"'
    )
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["field"] == "description" and msg.data["path"] == "posts/go-concurrency.md"
    assert "is now “Goroutines: channels, in practice”" in msg.content
    after = post.read_text(encoding="utf-8")
    assert after == before.replace(
        "tags: [go, concurrency]\n",
        'tags: [go, concurrency]\ndescription: "Goroutines: channels, in practice"\n',
        1,
    ) or after == before.replace(
        "tags: [go, concurrency]\n",
        "tags: [go, concurrency]\ndescription: 'Goroutines: channels, in practice'\n",
        1,
    )


async def test_toml_and_json_posts_and_a_field_already_there(tmp_path: Path) -> None:
    zola = copy_fixture("zola", tmp_path / "a" / "zola")  # (each its own state folder)
    release = zola / "content/Rust-1.77.0.md"
    before = release.read_text(encoding="utf-8")
    (msg,) = await _edit(
        zola, "add a description to the rust 1.77 post: A release with C-string literals"
    )
    assert msg.state == "COMPLETED", msg.content
    assert release.read_text(encoding="utf-8") == before.replace(
        'aliases = ["2024/03/21/Rust-1.77.0.html"]\n',
        'aliases = ["2024/03/21/Rust-1.77.0.html"]\n'
        'description = "A release with C-string literals"\n',
        1,
    )  # a top-level key, before the [extra] table; the comment and the body as they were
    hugo = copy_fixture("hugo", tmp_path / "b" / "hugo")
    json_post = hugo / "content/posts/json-post.md"
    json_post.write_text(
        json_post.read_text(encoding="utf-8").replace(
            '"draft": false', '"draft": false,\n  "summary": "Old words."'
        ),
        encoding="utf-8",
    )
    before = json_post.read_text(encoding="utf-8")
    again, same = await _edit(
        hugo,
        "set the summary of content/posts/json-post.md to 'JSON front matter, read by Hugo'",
        "set the summary of content/posts/json-post.md to 'JSON front matter, read by Hugo'",
    )
    assert again.state == "COMPLETED" and again.data["field"] == "summary", again.content
    assert json_post.read_text(encoding="utf-8") == before.replace(
        '"Old words."', '"JSON front matter, read by Hugo"'
    )
    assert same.data["changed"] is False  # already so: the file untouched
