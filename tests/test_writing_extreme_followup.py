"""A follow-up asking for one post by an extreme, no post named ("and the oldest one?", "what
about the longest?", "最早的那篇呢？"): of the posts the last reply listed, else of the blog,
from the index, no model. The classifier sent "and the oldest one?", after a list of posts, to
the chat."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bench_routing import _router
from skillrt.testing import FunctionModel
from tests.blog import copy_blog
from tests.writing_support import WritingModelFn, writing_runtime

FOLLOW_UPS = [
    "and the oldest one?",
    "which one is the oldest?",
    "what about the longest?",
    "and the newest",
    "so, the shortest one?",
    "最早的那篇呢？",
    "最长的是哪篇",
]


@pytest.mark.parametrize("classifier", [False, True], ids=["table", "with-classifier"])
@pytest.mark.parametrize("text", FOLLOW_UPS)
async def test_the_follow_up_is_a_question_for_the_blog(text: str, classifier: bool) -> None:
    parsed = await _router(None, classifier=classifier).parse(text, ask_model=False)
    assert (parsed.type, parsed.source) == ("ANSWER_QUESTION", "regex")


@pytest.mark.parametrize("text", ["最新", "最近", "the oldest post is about what?"])
async def test_neighbours_are_not_taken(text: str) -> None:
    parsed = await _router(None).parse(text, ask_model=False)
    assert not (parsed.type == "ANSWER_QUESTION" and parsed.confidence == 1.0), parsed


async def _replies(tmp_path: Path, *said: str) -> tuple[list[str], list[str]]:
    blog = copy_blog(tmp_path / "blog")
    model = WritingModelFn()
    rt = writing_runtime(blog, FunctionModel(model))
    await rt.initialize()
    try:
        replies = [(await rt.process_input(text)).content for text in said]
    finally:
        await rt.close()
    return replies, model.kinds


async def test_the_oldest_of_the_posts_listed(tmp_path: Path) -> None:
    (listing, oldest), kinds = await _replies(
        tmp_path, "list my posts tagged rust", "and the oldest one?"
    )
    assert "posts/rust-smart-pointers.md" in listing  # (the list holds the rust posts)
    assert oldest.startswith("Of the posts listed above, the oldest:"), oldest
    assert "(posts/rust-borrowing.md)" in oldest  # 2024-01-12, the oldest rust post
    assert kinds == []


async def test_the_longest_of_the_blog_with_no_list_before(tmp_path: Path) -> None:
    (_, longest, oldest), kinds = await _replies(
        tmp_path, "hello", "what about the longest?", "最早的那篇呢？"
    )
    assert longest.startswith("Your longest post (") and "(posts/rust-borrowing.md)" in longest
    assert oldest.startswith("你最早的文章") and "(posts/git-workflow.md)" in oldest
    assert kinds == []
