"""A post shown as it is written ("show it", "display the post"): the file's text, no model."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt._routing.intent_table import IntentTable
from skillrt.skills.writing.show_post import MAX_SHOWN_CHARS, PATTERNS, asks_to_show, shown_part
from skillrt.testing import ScriptedModel
from tests.blog import copy_blog
from tests.writing_support import writing_runtime

POST = "posts/docker-basics.md"


@pytest.mark.parametrize(
    ("text", "shows"),
    [
        ("show it", True),
        ("show me the post", True),
        ("display the post", True),  # (the classifier's DeleteArticle, at 0.92)
        ("print it", True),
        ("open the git workflow post", True),
        ("show me the git workflow post", True),
        ("show posts/docker-basics.md", True),
        ("please show me the whole post again", True),
        ("给我看看这篇文章", True),
        ("显示 docker 那篇", True),
        ("打开 git 那篇文章", True),
        # (not "open it", which in a browsing session is a page's, nor "open posts/foo.md")
        ("show me the posts related to the docker post", False),
        ("show me the changes to the post", False),
        ("view github.com/user/repo/README.md", False),  # a page's, not the blog's
        ("打开 posts/Go.MD", True),
        ("open it", False),
        ("open posts/foo.md", False),
        ("打开它", False),
        ("show me the posts tagged rust", False),
        ("show me the tags of the rust post", False),
        ("open https://example.com", False),
        ("open it in the browser", False),
        ("show it to me in Chinese", False),
        ("打开 https://example.com", False),
    ],
)
def test_a_request_to_see_a_post_is_told_apart(text: str, shows: bool) -> None:
    assert asks_to_show(text) is shows


def test_the_table_routes_what_the_skill_shows() -> None:
    """The table's rules are the skill's regexes: a request the table sent to AnswerQuestion
    that the skill did not take would go to the model as a question."""
    patterns = {p.regex.pattern for p in IntentTable.default().patterns}
    assert all(own.pattern in patterns for own in PATTERNS)


@pytest.mark.parametrize("request_text", ["display the post", "show it", "给我看看这篇文章"])
async def test_the_open_post_is_shown_as_written_and_nothing_is_changed(
    tmp_path: Path, request_text: str
) -> None:
    """The classifier sent "display the post" to DeleteArticle, and "show it", after a new
    article, to an edit of it."""
    blog = copy_blog(tmp_path / "blog")
    before = (blog / POST).read_text(encoding="utf-8")
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.process_input(request_text, {"current_file": POST})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert llm.call_count == 0
    assert msg.data["path"] == POST and msg.data["shown"] == "post" and not msg.data["cut"]
    assert before.rstrip("\n") in msg.content  # frontmatter and all, as written
    assert msg.content.count("````markdown") == 1  # a fence longer than the post's own
    assert (blog / POST).read_text(encoding="utf-8") == before


async def test_a_post_named_is_shown_and_a_long_one_is_cut_with_a_note(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    long_post = blog / "posts" / "long-read.md"
    long_post.write_text(
        "---\ntitle: A long read\n---\n\n" + "A sentence of the long read.\n" * 1000,
        encoding="utf-8",
    )
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    named = await rt.process_input("show me the git workflow post")
    long = await rt.process_input("show posts/long-read.md")
    await rt.close()
    assert named.state == "COMPLETED" and named.data["path"] == "posts/git-workflow.md"
    assert "A Practical Git Branching Workflow" in named.content
    assert long.data["cut"] is True and long.data["chars"] > MAX_SHOWN_CHARS
    assert f"The first {MAX_SHOWN_CHARS} of its {long.data['chars']} characters" in long.content


async def test_with_no_post_open_it_asks_which(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    msg = await rt.process_input("show it")
    assert msg.state == "WAITING_INPUT" and "show" in msg.content.lower()
    await rt.close()


@pytest.mark.parametrize(
    ("text", "part"),
    [
        ("list the sections", "outline"),  # (the classifier's edit, at 0.96)
        ("show me the outline of the git workflow post", "outline"),
        ("what are the sections of it?", "outline"),
        ("列出这篇文章的小节", "outline"),
        ("看看 docker 那篇的目录", "outline"),
        ("show the frontmatter", "frontmatter"),  # (the classifier's edit, at 0.95)
        ("what's in the metadata?", "frontmatter"),
        ("显示它的元数据", "frontmatter"),
        ("show it", "post"),
        ("list the posts", None),
        ("add a section about tmux", None),
        ("这篇文章的标题是什么", None),
        ("列出目录", None),  # (a directory, as like as not)
    ],
)
def test_what_of_a_post_a_request_asks_to_see(text: str, part: str | None) -> None:
    assert shown_part(text) == part


async def test_the_sections_and_the_frontmatter_are_shown_and_nothing_is_changed(
    tmp_path: Path,
) -> None:
    """The classifier sent "list the sections" to an edit of the open post (0.96), and the
    scripted answer "x" became its body."""
    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts" / "outlined.md"
    post.write_text(
        "---\ntitle: Outlined\ntags: [a]\n---\n\n# Outlined\n\nIntro.\n\n## First\n\n"
        "```sh\n# not a heading\n```\n\n### Deeper\n\n## Learning C#\n\nEnd.\n",
        encoding="utf-8",
    )
    before = post.read_text(encoding="utf-8")
    llm = ScriptedModel(["x", "x"])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    context = {"current_file": "posts/outlined.md"}
    outline = await rt.process_input("list the sections", context)
    block = await rt.process_input("show the frontmatter", context)
    bare = await rt.process_input("列出 docker 那篇的小节")
    await rt.close()
    assert llm.call_count == 0 and post.read_text(encoding="utf-8") == before
    assert outline.data["headings"] == ["Outlined", "First", "Deeper", "Learning C#"]
    assert "- Outlined\n  - First\n    - Deeper\n  - Learning C#" in outline.content
    assert block.data["frontmatter"] == "---\ntitle: Outlined\ntags: [a]\n---\n"
    assert "title: Outlined" in block.content
    assert bare.data["path"] == "posts/docker-basics.md", bare.content


@pytest.mark.parametrize("text", ["show it", "list the sections", "display the post"])
async def test_right_after_browsing_a_request_to_see_is_the_pages(text: str) -> None:
    """In a browsing session "show it" and "list the sections" are about the page: the
    table's rules for a post's text are not tried there."""
    from benchmarks.bench_routing import _router

    router = _router(None)
    plain = await router.parse(text, {}, ask_model=False)
    browsing = await router.parse(text, {"last_skill": "bench_browse"}, ask_model=False)
    assert plain.type == "ANSWER_QUESTION" and plain.source == "regex"
    assert browsing.type != "ANSWER_QUESTION" or browsing.source != "regex"


async def test_the_latest_post_shown_is_the_newest(tmp_path: Path) -> None:
    """ "show me my latest post" with another post open: the index's newest, not the open one."""
    blog = copy_blog(tmp_path / "blog")
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    newest = await rt.process_input("what is my latest post?")
    shown = await rt.process_input("show me my latest post", {"current_file": POST})
    # a post it names that none matches: asked which, never the open one shown instead
    first = await rt.process_input("show me the first post", {"current_file": POST})
    await rt.close()
    assert shown.state == "COMPLETED" and shown.data["path"] == newest.data["path"] != POST
    assert first.state == "WAITING_INPUT", first.content


async def test_count_the_words_is_counted_not_edited(tmp_path: Path) -> None:
    """The classifier sent "count the words" to an edit of the open post at 0.92."""
    from skillrt.skills.writing.post_length import COUNT_WORDS

    patterns = {p.regex.pattern for p in IntentTable.default().patterns}
    assert COUNT_WORDS.pattern in patterns
    blog = copy_blog(tmp_path / "blog")
    before = (blog / POST).read_text(encoding="utf-8")
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.process_input("count the words", {"current_file": POST})
    await rt.close()
    assert msg.state == "COMPLETED" and msg.data["words"] > 0, msg.content
    assert llm.call_count == 0 and (blog / POST).read_text(encoding="utf-8") == before


@pytest.mark.parametrize(
    ("text", "counted"),
    [
        ("count the words in this post", True),
        ("count the words in the docker post", True),
        ("count the words in this paragraph", False),
        ("count the words in the second paragraph of the post", False),
        ("count the words in it and cut it to 500", False),
    ],
)
def test_what_counting_the_words_takes(text: str, counted: bool) -> None:
    from skillrt.skills.writing.post_length import asks_length

    assert asks_length(text) is counted
