"""An author's session about their blog (fresh round 13), answered from the index and the
knowledge graph with no model: before, "how many words is my blog in total?" and "what is
related to rust?" went to the search and the model; "how many words?" (the post in focus),
"is it still a draft?" and "what other posts link here?" were answered from a search;
"which posts link to 笔记一?" (a title of three characters) and "what links to Unwritten
Ideas?" (a note no post has written) were said to be no post on the blog."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillrt.blog.markdown import split_post
from skillrt.llm.base import LLMMessage
from skillrt.skills.writing.answer import asked_of_another_year
from skillrt.skills.writing.blog_facts import busiest_asked, words_asked
from skillrt.skills.writing.listing import related_asked
from skillrt.skills.writing.post_facts import fact_asked
from skillrt.skills.writing.post_length import length_of
from skillrt.testing import FunctionModel, ModelOptions
from tests.blog import copy_blog
from tests.writing_support import WritingModelFn, writing_runtime


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


def _no_model(messages: list[LLMMessage], options: ModelOptions) -> Any:
    raise AssertionError(f"the model was asked: {messages[-1]['content'][:200]}")


async def _session(blog: Path, lines: list[str], focus: str | None = None) -> list[Any]:
    rt = writing_runtime(blog, FunctionModel(_no_model), session_id="author")
    await rt.initialize()
    try:
        if focus is not None:
            await rt.set_focus(focus)
        replies = []
        for line in lines:
            msg = await rt.process_input(line)
            assert msg.state == "COMPLETED", (line, msg.content)
            replies.append(msg)
        return replies
    finally:
        await rt.close()


def _words_of_the_blog(blog: Path) -> tuple[int, int]:
    """(posts, words of prose), counted here from the files."""
    files = sorted((blog / "posts").rglob("*.md"))
    return len(files), sum(
        length_of(split_post(f.read_text(encoding="utf-8"))[1]).words for f in files
    )


async def test_the_whole_blogs_words_are_counted_in_the_question_language(blog: Path) -> None:
    posts, words = _words_of_the_blog(blog)
    en, zh = await _session(blog, ["how many words is my blog in total", "整个博客一共多少字"])
    assert en.data["posts"] == posts and en.data["words"] == words, en.content
    assert f"{words} words" in en.content and f"{posts} published" in en.content
    assert f"{words} 个字" in zh.content and f"{posts} 篇" in zh.content


def test_the_whole_blogs_words_are_told_apart_from_one_posts() -> None:
    assert words_asked("total word count across the whole blog?")
    assert words_asked("what's the average length of my posts")
    assert not words_asked("how many words is the go post?")
    assert not words_asked("这篇文章有多少字")
    assert not words_asked("how many words should a blog post have?")


async def test_the_post_in_focus_its_length_its_state_and_its_backlinks(blog: Path) -> None:
    length, draft, links = await _session(
        blog,
        ["how many words?", "is it still a draft?", "what other posts link here?"],
        focus="posts/sqlite-fts5.md",
    )
    assert length.data["path"] == "posts/sqlite-fts5.md" and "words of prose" in length.content
    assert draft.data["fact"] == "draft" and draft.data["value"] == "published"
    assert "is published, not a draft" in draft.content
    assert links.data["path"] == "posts/sqlite-fts5.md" and links.data["links"] == "to"
    assert set(links.data["citations"]) == {
        "posts/database-indexing.md",
        "posts/knowledge-graph-notes.md",
    }


async def test_a_draft_is_said_to_be_one(blog: Path) -> None:
    post = blog / "posts" / "go-concurrency.md"
    text = post.read_text(encoding="utf-8")
    post.write_text(text.replace("---\n", "---\ndraft: true\n", 1), encoding="utf-8")
    (reply,) = await _session(blog, ["这篇还是草稿吗？"], focus="posts/go-concurrency.md")
    assert reply.data["value"] == "draft" and "是草稿" in reply.content


def test_a_draft_question_names_its_post() -> None:
    assert fact_asked("is it still a draft?") == ("draft", "it")
    assert fact_asked("is the rust post published?") == ("draft", "the rust post")
    assert fact_asked("is this draft good?") is None
    assert fact_asked("is rust published?") is None  # (no post named: the blog is searched)


async def test_the_newest_thing_published_and_the_posts_of_last_year(blog: Path) -> None:
    newest, last_year = await _session(
        blog, ["whats the newest thing I published", "give me the list of posts from 2023"]
    )
    assert newest.data["path"] == "posts/notes/weekly-review.md"
    dated_2023 = sorted(
        str(p.relative_to(blog))
        for p in (blog / "posts").rglob("*.md")
        if "\ndate: 2023-" in p.read_text(encoding="utf-8")
    )
    assert sorted(last_year.data["citations"]) == dated_2023


async def test_what_is_related_to_a_tag_comes_from_the_graph(blog: Path) -> None:
    en, zh, post = await _session(
        blog,
        ["what is related to rust?", "和 rust 相关的有哪些", "what's related to the sqlite post?"],
    )
    tagged = sorted(
        str(p.relative_to(blog))
        for p in (blog / "posts").rglob("*.md")
        if "rust" in p.read_text(encoding="utf-8").split("\ntags:", 1)[-1].split("\n", 1)[0]
    )
    assert sorted(en.data["citations"]) == tagged, en.content
    assert en.content.startswith("Posts related to “rust”")
    assert zh.content.startswith("知识图谱里与“rust”相关的文章有 4 篇")
    assert "posts/database-indexing.md" in post.data["citations"]
    assert "sqlite" in post.data["entities"]


def test_related_is_told_apart() -> None:
    assert related_asked("what is related to rust?") == "rust"
    assert related_asked("which posts are related to the docker post?") == "the docker post"
    assert related_asked("跟 docker 有关的文章") == "docker"
    assert related_asked("how is rust related to c++?") is None


async def test_a_note_no_post_has_written_and_a_short_chinese_title(blog: Path) -> None:
    (blog / "posts" / "note-one.md").write_text(
        "---\ntitle: 笔记一\ndate: 2024-10-01\n---\n第一篇笔记。\n", encoding="utf-8"
    )
    (blog / "posts" / "note-two.md").write_text(
        "---\ntitle: 笔记二\ndate: 2024-10-02\n---\n接着 [[笔记一]] 写。\n", encoding="utf-8"
    )
    note, short = await _session(
        blog, ["what links to Unwritten Ideas?", "which posts link to 笔记一?"]
    )
    assert note.data["note"] == "Unwritten Ideas"
    assert note.data["citations"] == ["posts/notes/weekly-review.md"]
    assert "no post yet" in note.content
    assert short.data["path"] == "posts/note-one.md"
    assert short.data["citations"] == ["posts/note-two.md"]


async def test_a_topic_the_graph_does_not_know_is_searched(blog: Path) -> None:
    """ "what is related to kubernetes?" (no tag, no entity, no post): left to the search, which
    finds nothing and says so, not an empty list from the graph."""
    calls: list[str] = []

    def model(messages: list[LLMMessage], options: ModelOptions) -> str:
        calls.append("asked")
        return "NO_ANSWER"

    rt = writing_runtime(blog, FunctionModel(model), session_id="author")
    await rt.initialize()
    try:
        msg = await rt.process_input("what is related to kubernetes?")
    finally:
        await rt.close()
    assert "related" not in msg.data


async def test_typos_and_a_bare_newest_are_answered_from_the_index(blog: Path) -> None:
    """ "wich posts mention docker?" was searched for ("wich", "mention") and the docker post
    was not among the posts found; "list posts abuot rust" was offered three actions;
    "最新的一篇是什么" (no word for a post) was searched, and the model asked."""
    docker, rust, newest = await _session(
        blog, ["wich posts mention docker?", "list posts abuot rust", "最新的一篇是什么"]
    )
    assert docker.data["citations"] == ["posts/docker-basics.md"], docker.content
    assert {
        "posts/rust-borrowing.md",
        "posts/rust-lifetimes.md",
        "posts/rust-smart-pointers.md",
    } <= set(rust.data["citations"])
    assert newest.data["path"] == "posts/notes/weekly-review.md"
    assert newest.content.startswith("你最新的文章")


async def test_and_in_another_year_asks_the_last_question_of_that_year(blog: Path) -> None:
    """ "and in 2023?" after "how many posts did I write in 2024?" was offered the chat, an
    edit and a question; a follow-up of a follow-up asks the first question's again."""
    by_year: dict[str, list[str]] = {}
    for post in (blog / "posts").rglob("*.md"):
        year = post.read_text(encoding="utf-8").split("\ndate: ", 1)[1][:4]
        by_year.setdefault(year, []).append(str(post.relative_to(blog)))
    first, en, zh, none, topic = await _session(
        blog,
        [
            "how many posts did I write in 2024?",
            "and in 2023?",
            "那 2024 年呢？",
            "and in 2022?",
            "what did I write about docker in 2023?",
        ],
    )
    assert sorted(first.data["citations"]) == sorted(by_year["2024"])
    assert sorted(en.data["citations"]) == sorted(by_year["2023"]), en.content
    assert sorted(zh.data["citations"]) == sorted(by_year["2024"]) and "2024" in zh.content
    assert not none.data.get("citations") and "2022" in none.content
    assert "2023" in topic.content


def test_a_follow_up_on_another_year_is_told_apart() -> None:
    before = "how many posts did I write in 2024?"
    assert asked_of_another_year("and in 2023?", before) == "how many posts did I write in 2023?"
    assert asked_of_another_year("what about 2022", None) == "list my posts from 2022"
    assert asked_of_another_year("那 2023 年呢？", "我2024年写了几篇？") == "我2023年写了几篇？"
    assert asked_of_another_year("and in the intro?", before) is None


async def test_the_x_one_is_asked_about_as_the_x_post(blog: Path) -> None:
    """ "when did i write the sqlite one" and "how long is the sqlite one" were searched, and
    the model asked; "the sqlite post" was answered from the post's own frontmatter and text."""
    date, length = await _session(
        blog, ["when did i write the sqlite one", "how long is the sqlite one"]
    )
    assert date.data["fact"] == "date" and date.data["value"] == "2024-06-10"
    assert length.data["path"] == "posts/sqlite-fts5.md" and "words of prose" in length.content


async def test_did_i_ever_mention_is_a_list_of_the_posts_on_it(blog: Path) -> None:
    """ "did I ever mention Lisbon on the blog?" searched for "ever" and "mention" too: the
    model was given the git, rust and asyncio posts to answer from."""
    lisbon, docker = await _session(
        blog, ["did I ever mention Lisbon on the blog?", "did I ever mention docker?"]
    )
    assert not lisbon.data.get("citations") and "Lisbon" in lisbon.content
    assert docker.data["citations"] == ["posts/docker-basics.md"]


async def test_the_newest_said_in_chinese_and_a_mixed_tag_question(blog: Path) -> None:
    """ "把最新那篇概括成一句话" summarised the post in focus, not the newest; "how many 文章
    have tag python" was searched, and the model asked."""
    tagged = sorted(
        str(p.relative_to(blog))
        for p in (blog / "posts").rglob("*.md")
        if "python" in p.read_text(encoding="utf-8").split("\ntags:", 1)[-1].split("\n", 1)[0]
    )
    rt = writing_runtime(blog, FunctionModel(WritingModelFn()), session_id="author")
    await rt.initialize()
    try:
        await rt.set_focus("posts/sqlite-fts5.md")
        summary = await rt.process_input("把最新那篇概括成一句话")
        listed = await rt.process_input("how many 文章 have tag python")
    finally:
        await rt.close()
    assert summary.data["source"] == "posts/notes/weekly-review.md", summary.content
    assert sorted(listed.data["citations"]) == tagged, listed.content


async def test_the_month_and_the_year_posted_most_in_are_counted(blog: Path) -> None:
    """ "which month did I post most in?" got an honest "nothing on it" and no answer: the
    index has every post's date. Counted with no model (published posts only: a draft of
    that month is left out, else the tie would be four)."""
    for day in (1, 2, 3, 4):
        draft = "draft: true\n" if day == 4 else ""
        (blog / "posts" / f"march-{day}.md").write_text(
            f"---\ntitle: March {day}\ndate: 2022-03-0{day}\n{draft}---\nA note.\n",
            encoding="utf-8",
        )
    (blog / "posts" / "undated.md").write_text("---\ntitle: Undated\n---\nNo date.\n", "utf-8")
    month, year, zh, zh_year = await _session(
        blog,
        ["which month did I post most in?", "which year did I write the most?",
         "我哪个月写得最多？", "哪一年发的文章最多"],
    )  # fmt: skip
    assert month.data["month"] == ["2022-03"] and month.data["count"] == 3, month.content
    assert "You posted most in March 2022 (3 post(s))" in month.content
    assert "1 post(s) with no date not counted" in month.content
    assert year.data["year"] == ["2024"] and year.data["count"] == 11, year.content
    assert "2022 年 3 月（3 篇）" in zh.content and "2024（11 篇）" in zh_year.content
    for not_asked in ("which month did I write about rust?", "how many posts in 2024"):
        assert busiest_asked(not_asked) is None, not_asked
