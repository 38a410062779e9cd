"""The blog's own extremes ("which is my oldest post?", "which post is the longest?", "what is
my most popular tag?") and its newest post in other words ("what did I write last?", "what's
new on my blog?") come from the index, no model; a question on the blog that the blog has
nothing on gets no general answer. Before, the search found no post "on" "my oldest post",
and the embedded model answered the others with general answers it made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.skills.writing.blog_facts import extreme_asked
from skillrt.testing import ScriptedModel
from tests.blog import copy_fixture
from tests.writing_support import writing_runtime


@pytest.mark.parametrize(
    ("question", "which"),
    [
        ("which is my oldest post?", "oldest"),
        ("what was my first post?", "oldest"),
        ("which post did I write first?", "oldest"),
        ("我最早的文章是哪篇？", "oldest"),
        ("which post is the longest?", "longest"),
        ("what's my shortest article?", "shortest"),
        ("我最长的文章是哪篇？", "longest"),
        ("what is my most popular tag?", "top_tag"),
        ("which tags do I use the most?", "top_tag"),
        ("我最常用的标签是什么？", "top_tag"),
        ("which is the oldest post on my blog?", "oldest"),
        ("what did I write first?", "oldest"),
        ("what tag do I use the most?", "top_tag"),
        ("which tag is used most?", "top_tag"),
        ("what was the first post about?", None),
        ("which is the longest river?", None),
        ("what is the most popular tag for rust posts on reddit?", None),
    ],
)
def test_an_extreme_of_the_blog_is_told_apart(question: str, which: str | None) -> None:
    assert extreme_asked(question) == which


async def test_the_blogs_extremes_come_from_the_index(tmp_path: Path) -> None:
    zola = copy_fixture("zola", tmp_path / "zola")
    llm = ScriptedModel(["Most blog generators take a comments plugin, such as giscus."])
    rt = writing_runtime(zola, llm)
    await rt.initialize()
    try:
        oldest = await rt.process_input("which is my oldest post?")
        assert oldest.data["path"] == "content/inside-rust/2023-11-20-this-week.md", oldest.content
        assert oldest.content.startswith("Your oldest post:\n[This week in the compiler]")
        newest = await rt.process_input("what did I write last?")
        assert newest.data["path"] == "content/inside-rust/2024-09-10-compiler-team.md"
        same = await rt.process_input("what's new on my blog?")
        assert same.data["path"] == newest.data["path"]
        longest = await rt.process_input("which post is the longest?")
        shortest = await rt.process_input("which post is the shortest?")
        assert longest.data["path"] != shortest.data["path"]
        assert "words):" in longest.content and "words):" in shortest.content
        top = await rt.process_input("what is my most popular tag?")
        assert top.data["found"] is True and top.data["tags"], top.content
        zh = await rt.process_input("我最常用的标签是什么？")  # (not a post named "我最常用")
        assert zh.data["tags"] == top.data["tags"], zh.content
        # a how-to on the blog's posts still has its general answer: the model is asked
        how = await rt.process_input("how do I add comments to my posts?")
        assert how.state == "COMPLETED"
        # the blog has nothing on it, and a question on the blog gets no general answer
        nothing = await rt.process_input("what do my posts say about quantum gardening?")
        assert nothing.data.get("general") is None and "General answer" not in nothing.content
    finally:
        await rt.close()
    assert llm.call_count == 1  # (the how-to's general answer alone)
