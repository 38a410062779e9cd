"""A path in quotes is the path, spaces and Chinese characters included: the table's path
was ASCII alone, so ``delete "posts/my notes/first day.md"`` was routed with the path
``day.md`` (the last word), and ``把 'posts/旅行 日记.md' 翻译成英文`` with none."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bench_routing import _router
from skillrt.testing import FunctionModel
from tests.blog import copy_blog
from tests.writing_support import WritingModelFn, writing_runtime

QUOTED = [
    ('delete "posts/my notes/first day.md"', "DELETE_ARTICLE", "posts/my notes/first day.md"),
    ("delete 'posts/旅行 日记.md'", "DELETE_ARTICLE", "posts/旅行 日记.md"),
    ('summarize "posts/my notes/first day.md"', "SUMMARIZE", "posts/my notes/first day.md"),
    ("把 'posts/旅行 日记.md' 翻译成英文", "TRANSLATE", "posts/旅行 日记.md"),
    (
        "edit “posts/my notes/first day.md”: fix the typos",
        "EDIT_CONTENT",
        "posts/my notes/first day.md",
    ),
    # unquoted, as before: ASCII, and a sentence's full stop is no part of it
    ("delete posts/old-draft.md.", "DELETE_ARTICLE", "posts/old-draft.md"),
    ("summarize posts/go-concurrency.md", "SUMMARIZE", "posts/go-concurrency.md"),
]


@pytest.mark.parametrize("classifier", [False, True], ids=["table", "with-classifier"])
@pytest.mark.parametrize(("text", "intent", "path"), QUOTED)
async def test_a_quoted_path_is_the_whole_path(
    text: str, intent: str, path: str, classifier: bool
) -> None:
    parsed = await _router(None, classifier=classifier).parse(text, ask_model=False)
    assert (parsed.type, parsed.parameters.get("path")) == (intent, path)


async def test_a_post_named_in_quotes_with_spaces_is_the_one_deleted(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts" / "my notes" / "first day.md"
    post.parent.mkdir()
    post.write_text("---\ntitle: First day\ndate: 2024-10-01\n---\n\nIt rained.\n", "utf-8")
    rt = writing_runtime(blog, FunctionModel(WritingModelFn()))
    await rt.initialize()
    try:
        asked = await rt.process_input('delete "posts/my notes/first day.md"')
        assert "posts/my notes/first day.md" in asked.content, asked.content
        done = await rt.process_input("yes")
    finally:
        await rt.close()
    assert done.data.get("deleted") is True and done.data["path"] == "posts/my notes/first day.md"
    assert not post.exists()


@pytest.mark.parametrize(
    "text",
    [
        'show me the post "posts/my notes/first day.md"',
        "show me 'posts/my notes/first day.md'",
        "show the file posts/my-notes.md",
    ],
)
async def test_a_post_shown_by_its_path_after_the_post_or_in_quotes(text: str) -> None:
    """ "show me the post <path>" and a quoted path were offered a delete, an edit or a
    summary (the classifier's DeleteArticle at 0.30), never the post shown."""
    parsed = await _router(None).parse(text, ask_model=False)
    assert (parsed.type, parsed.confidence) == ("ANSWER_QUESTION", 1.0)


async def test_a_post_with_spaces_in_its_path_is_shown(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts" / "my notes" / "first day.md"
    post.parent.mkdir()
    post.write_text("---\ntitle: First day\ndate: 2024-10-01\n---\n\nIt rained.\n", "utf-8")
    rt = writing_runtime(blog, FunctionModel(WritingModelFn()))
    await rt.initialize()
    try:
        shown = await rt.process_input('show me the post "posts/my notes/first day.md"')
    finally:
        await rt.close()
    assert shown.content.startswith("`posts/my notes/first day.md`, as it is written:")
    assert "It rained." in shown.content
