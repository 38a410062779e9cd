"""A post's author, date or categories, asked about, come from its frontmatter (its date, when
it has none there, as the index read it), no model. The embedded model answered "who is the
author of the vim post?" with a made-up name and date, and "when was it written?", the ssh
post open, from a search that found another post; both were shown as done."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.skills.writing.post_facts import fact_asked
from skillrt.testing import ScriptedModel
from tests.blog import copy_blog, copy_fixture
from tests.writing_support import writing_runtime


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("who wrote it?", ("author", "it")),
        ("who is the author of the vim post?", ("author", "the vim post")),
        ("what is its author?", ("author", "its")),
        ("when was it written?", ("date", "it")),
        ("when did I write the vim post?", ("date", "the vim post")),
        ("what is the date of this post?", ("date", "this post")),
        ("when was posts/x.md published?", ("date", "posts/x.md")),
        ("what category is the vim post in?", ("categories", "the vim post")),
        ("what are its categories?", ("categories", "its")),
        ("这篇文章是谁写的？", ("author", "这篇文章")),
        ("这篇文章是什么时候写的？", ("date", "这篇文章")),
        ("这篇文章属于什么分类？", ("categories", "这篇文章")),
        # asked which of three actions, and searched
        ("what date is the git workflow post from", ("date", "the git workflow post")),
        ("关于 docker 的文章是哪天发的？", ("date", "关于 docker 的文章")),
        ("what date is the 1980s from?", None),
        # the blog asked, or no post named: the search's
        ("when did I write about rust?", None),
        ("who wrote the book rust in action?", None),
        ("when was rust released?", None),
        ("what category is best?", None),
        # another thing named in the post, or no post at all (a read found them taken)
        ("who wrote the paper cited in this article?", None),
        ("who wrote the Communist Manifesto mentioned in this post?", None),
        ("这篇文章里提到的那本书是谁写的？", None),
        ("who is the author of the page linked in this post?", None),
        ("when was the notes app created?", None),
        ("who wrote the post that the vim post links to?", None),
    ],
)
def test_a_posts_fact_asked_is_told_apart(question: str, asked: tuple[str, str] | None) -> None:
    assert fact_asked(question) == asked


async def test_a_posts_author_date_and_categories_come_from_its_frontmatter(
    tmp_path: Path,
) -> None:
    zola = copy_fixture("zola", tmp_path / "zola")
    llm = ScriptedModel([])  # never asked
    rt = writing_runtime(zola, llm)
    post = "content/Rust-1.77.0.md"
    author = await rt.run_skill(
        "AnswerQuestion", {"question": "who wrote it?"}, context={"current_file": post}
    )
    assert author.data["fact"] == "author" and author.data["value"] == "The Rust Release Team"
    assert author.content == f"[Announcing Rust 1.77.0]({post}) is by The Rust Release Team."
    date = await rt.run_skill(
        "AnswerQuestion", {"question": "when was it written?"}, context={"current_file": post}
    )
    assert date.data["value"] == "2024-03-21", date.content  # from its `path`, as indexed
    await rt.close()
    jekyll = copy_fixture("jekyll", tmp_path / "jekyll")
    (jekyll / "_posts" / "2024-01-15-liquid-tips.md").write_text(
        '---\nlayout: post\ntitle: "Liquid tips"\ncategories: [jekyll, liquid]\n'
        "lastmod: 2024-02-01\n---\n\nUse filters.\n",
        encoding="utf-8",
    )
    rt = writing_runtime(jekyll, llm)
    filed = await rt.run_skill(
        "AnswerQuestion", {"question": "what category is the liquid tips post in?"}
    )
    assert filed.data["value"] == "jekyll, liquid", filed.content
    dated = await rt.run_skill(
        "AnswerQuestion", {"question": "when did I write the liquid tips post?"}
    )
    assert dated.content.endswith("is dated 2024-01-15 (updated 2024-02-01)."), dated.content
    nobody = await rt.run_skill(
        "AnswerQuestion",
        {"question": "这篇文章是谁写的？"},
        context={"current_file": "_posts/2023-04-05-hello-jekyll.md"},
    )
    assert nobody.data["value"] == "" and "没有写明作者" in nobody.content
    await rt.close()
    assert llm.calls == []


@pytest.mark.parametrize(
    ("frontmatter", "author"),
    [
        ("author: Jane Doe", "Jane Doe"),  # one name, not "Jane, Doe"
        ("author:\n  name: Jane Doe\n  email: j@x.org", "Jane Doe"),  # Jekyll's table
        ("params:\n  author: Jane Doe", "Jane Doe"),  # Hugo's params
        ("authors: [Ann, Bob]", "Ann, Bob"),
    ],
)
async def test_a_posts_author_is_read_where_the_blog_keeps_it(
    tmp_path: Path, frontmatter: str, author: str
) -> None:
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    (blog / "posts" / "x.md").write_text(f"---\ntitle: X\n{frontmatter}\n---\nBody.\n", "utf-8")
    rt = writing_runtime(blog, ScriptedModel([]))
    msg = await rt.run_skill(
        "AnswerQuestion", {"question": "who wrote it?"}, context={"current_file": "posts/x.md"}
    )
    await rt.close()
    assert msg.data["value"] == author, msg.content


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("who wrote posts/docker-basics.md?", "names no author"),
        ("what category is posts/go-concurrency.md in?", "has no categories"),
        ("when was posts/docker-basics.md written?", "is dated 2024-08-15"),
    ],
)
async def test_a_fact_of_a_post_named_by_its_path_is_routed_and_read(
    tmp_path: Path, question: str, said: str
) -> None:
    """ "what category is posts/go.md in?" went to a summary, and "who wrote posts/x.md?"
    offered choices: a firm rule now routes them."""
    blog = copy_blog(tmp_path / "blog")
    llm = ScriptedModel([])  # a model call fails the test
    rt = writing_runtime(blog, llm)
    msg = await rt.process_input(question)
    await rt.close()
    assert msg.state == "COMPLETED" and said in msg.content, msg.content
    assert llm.call_count == 0


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("what date is the git workflow post from", "is dated 2023-08-30"),
        ("关于 docker 的文章是哪天发的？", "的日期：2024-08-15"),
    ],
)
async def test_a_posts_date_asked_in_other_words_is_its_own(
    tmp_path: Path, question: str, said: str
) -> None:
    from benchmarks.bench_routing import _router

    assert (await _router(None).parse(question, ask_model=False)).type == "ANSWER_QUESTION"
    llm = ScriptedModel([])
    rt = writing_runtime(copy_blog(tmp_path / "blog"), llm)
    await rt.initialize()
    try:
        msg = await rt.process_input(question)
    finally:
        await rt.close()
    assert said in msg.content and llm.call_count == 0, msg.content
