"""WriteArticle end to end through the runtime: Chinese and English, progress, cost, graph,
slug clashes, target paths, abort mid-content, bad input."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import frontmatter
import pytest

from skillrt import AgentRuntime, Event
from skillrt.testing import FunctionModel, ScriptedModel
from tests.blog import POST_COUNT, copy_blog
from tests.writing_support import (
    OUTLINE_ZH,
    SECTION_ZH,
    WritingModelFn,
    en_script,
    writing_runtime,
    zh_script,
)


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


def posts_in(blog: Path) -> set[str]:
    return {p.relative_to(blog).as_posix() for p in (blog / "posts").rglob("*.md")}


async def started(rt: AgentRuntime) -> AgentRuntime:
    await rt.initialize()
    return rt


async def test_write_article_in_chinese_end_to_end(blog: Path) -> None:
    llm = ScriptedModel(zh_script())
    rt = await started(writing_runtime(blog, llm))
    events: list[Event] = []
    rt.on("*", events.append)

    msg = await rt.process_input("写一篇关于 Rust 所有权的文章")

    assert msg.state == "COMPLETED", msg.content
    path = msg.data["path"]
    assert path == "posts/rust-suo-you-quan.md"  # pinyin slug of the topic
    assert "已写好文章" in msg.content and path in msg.content
    post = frontmatter.load(blog / path)
    assert post["title"] == OUTLINE_ZH["title"]
    assert str(post["date"])[:4].isdigit()
    assert post["tags"] == ["rust", "所有权"]
    assert post["description"] == OUTLINE_ZH["description"]
    # wikiLinks name posts that exist, and Rust posts come first.
    assert post["wikiLinks"][0] == "rust-borrowing"
    for name in post["wikiLinks"]:
        target = rt.memory.resolve_link(name)
        assert target is not None and (blog / target).is_file(), name
    assert "## 什么是所有权" in post.content and "## 移动与复制" in post.content
    assert post.content.count("## 什么是所有权") == 1  # the repeated heading was dropped
    assert msg.data["word_count"] > 30
    assert msg.data["outline"].startswith("# Rust 所有权")

    # Entity graph: the new post links to the posts it used; extracted entities are nodes.
    graph = rt.memory.graph
    assert path in graph.backlinks("posts/rust-borrowing.md")
    assert graph.post_state(path) is not None and graph.post_state(path)[1] is True
    assert graph.entity("Copy trait") == {
        "name": "Copy trait",
        "type": "concept",
        "description": "Types copied on assignment.",
    }
    assert msg.data["graph"]["links_added"] >= 4

    # Progress events in order, all from this task; cost and tokens recorded.
    progress = [e for e in events if e.type == "task:progress"]
    assert [e.data["step"] for e in progress] == [1, 2, 3, 3, 4, 5]
    assert all(e.task_id == msg.task_id for e in progress)
    percents = [e.data["percent"] for e in progress]
    assert percents == sorted(percents) and percents[-1] == 100.0
    assert any(e.type == "task:stream" for e in events)  # the content was streamed
    assert llm.remaining == 0 and llm.call_count == 4
    assert msg.tokens > 0 and msg.cost == 0.0
    assert rt.costs.task(msg.task_id).tokens == msg.tokens
    assert rt.locks is not None and rt.locks.held_by(msg.task_id) == []
    # The index knows the new post at once.
    assert rt.memory.posts.search("所有权", 10)[0].path in {path, "posts/rust-borrowing.md"}
    assert len(rt.memory.posts) == POST_COUNT + 1
    await rt.close()


async def test_write_article_in_english_end_to_end(blog: Path) -> None:
    llm = ScriptedModel(en_script())
    rt = await started(writing_runtime(blog, llm))
    progress: list[Event] = []
    rt.on("task:progress", progress.append)

    msg = await rt.process_input("write an article about Rust ownership")

    assert msg.state == "COMPLETED", msg.content
    assert msg.data["path"] == "posts/rust-ownership.md"
    assert msg.content.startswith("Wrote “Understanding Rust Ownership”")
    post = frontmatter.load(blog / msg.data["path"])
    assert post["title"] == "Understanding Rust Ownership"
    assert post["wikiLinks"] and all(rt.memory.resolve_link(n) for n in post["wikiLinks"])
    assert [e.data["message"] for e in progress][:2] == [
        "Finding related posts",
        "Drafting the outline",
    ]
    assert [e.data["detail"] for e in progress if e.data["step"] == 3] == [
        "What ownership means",
        "Moves and copies",
        "Borrowing instead of moving",
    ]
    assert msg.data["word_count"] > 20  # English: words
    assert msg.data["next_steps"]
    await rt.close()


async def test_a_frontmatter_block_in_front_of_a_section_is_not_saved(blog: Path) -> None:
    """A small model put a post's frontmatter in front of its section ("---\ntitle: Oops\n
    date: …\n---"): it was saved in the body, a rule and a heading "title: Oops date: …"."""
    script = en_script()
    script[1] = f"---\ntitle: Oops\ndate: 2020-01-01\n---\n\n{script[1]}"
    rt = await started(writing_runtime(blog, ScriptedModel(script)))
    try:
        msg = await rt.run_skill("WriteArticle", {"topic": "Rust ownership"})
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    post = frontmatter.load(blog / msg.data["path"])
    assert "Oops" not in post.content and "2020-01-01" not in post.content, post.content
    assert "exactly one owner" in post.content


PASTA = (
    "To cook pasta, bring a large pot of salted water to a boil and add the spaghetti. Stir "
    "it now and then, taste it after eight minutes, and drain it when it is tender but firm."
)


async def test_a_section_about_something_else_is_refused_and_nothing_saved(blog: Path) -> None:
    """Asked for "Rust ownership", a model wrote every section on cooking pasta: every check
    passed, and the article was saved and reported written."""
    before = posts_in(blog)
    script = en_script()
    script[1:4] = [PASTA, PASTA]  # the first section, and its retry
    rt = await started(writing_runtime(blog, ScriptedModel(script)))
    try:
        msg = await rt.run_skill("WriteArticle", {"topic": "Rust ownership"})
    finally:
        await rt.close()
    assert msg.state == "ERROR" and msg.data["check"] == "not_degenerate", msg.content
    assert "about something else" in msg.content and "ownership" in msg.content
    assert posts_in(blog) == before


async def test_a_post_with_only_a_word_in_common_is_not_related(blog: Path) -> None:
    """ "SQLite for small web apps": the SQLite post, not the Git post that says "small" (it
    scored a quarter of the SQLite post's, and was linked from the article)."""
    rt = await started(writing_runtime(blog, ScriptedModel(en_script())))
    msg = await rt.run_skill("WriteArticle", {"topic": "using SQLite for small web apps"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["related"] == ["posts/sqlite-fts5.md"]


async def test_a_post_that_has_the_topics_word_only_in_its_code_is_not_related(
    blog: Path,
) -> None:
    """ "tmux sessions": the Chinese asyncio post has ``session`` in its code alone (``async
    def fetch(session, url)``). It was the one related post; the embedded model titled the tmux
    article's first section after it ("Python 中的各种编程实现方式"), and the article linked it."""
    rt = await started(writing_runtime(blog, ScriptedModel(en_script())))
    msg = await rt.run_skill("WriteArticle", {"topic": "tmux sessions"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["related"] == []
    assert "Linked posts" not in msg.content


async def test_slug_clash_gets_a_suffix_never_an_overwrite(blog: Path) -> None:
    original = "---\ntitle: Mine\n---\n\nDo not overwrite me.\n"
    (blog / "posts" / "rust-ownership.md").write_text(original, encoding="utf-8")
    # The second article differs (two byte-identical posts would be taken for one: a save
    # finding its own text already written counts it as saved, the crash-resume rule).
    again = [*en_script()[:-2], "A different last section.", en_script()[-1]]
    rt = await started(writing_runtime(blog, ScriptedModel(en_script() + again)))
    first = await rt.run_skill("WriteArticle", {"topic": "Rust ownership"})
    second = await rt.run_skill("WriteArticle", {"topic": "Rust ownership"})
    assert first.data["path"] == "posts/rust-ownership-2.md"
    assert second.data["path"] == "posts/rust-ownership-3.md"
    assert (blog / "posts" / "rust-ownership.md").read_text(encoding="utf-8") == original
    assert "already existed" in first.content
    await rt.close()


async def test_target_path_inside_the_blog(blog: Path) -> None:
    rt = await started(writing_runtime(blog, FunctionModel(WritingModelFn())))
    msg = await rt.run_skill(
        "WriteArticle", {"topic": "Rust ownership", "target_path": "posts/drafts/own"}
    )
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["path"] == "posts/drafts/own.md"
    assert (blog / "posts" / "drafts" / "own.md").is_file()
    await rt.close()


@pytest.mark.parametrize(
    "target",
    ["../outside.md", "/etc/passwd.md", "posts/../../x.md", ".skillrt/evil.md", "~/x.md"],
)
async def test_target_path_outside_the_blog_is_refused(blog: Path, target: str) -> None:
    llm = FunctionModel(WritingModelFn())
    rt = await started(writing_runtime(blog, llm))
    before = posts_in(blog)
    msg = await rt.run_skill("WriteArticle", {"topic": "Rust ownership", "target_path": target})
    assert msg.data.get("error") == "path_not_allowed", msg.content
    assert "not allowed" in msg.content
    assert llm.call_count == 0  # refused before any money was spent
    assert posts_in(blog) == before
    assert not (blog.parent / "outside.md").exists() and not (blog.parent / "x.md").exists()
    assert rt.state.value == "IDLE"
    await rt.close()


async def test_a_10000_character_topic_gets_a_clear_reply(blog: Path) -> None:
    llm = FunctionModel(WritingModelFn())
    rt = await started(writing_runtime(blog, llm))
    before = posts_in(blog)
    msg = await rt.run_skill("WriteArticle", {"topic": "所有权" * 3334})
    assert msg.data.get("error") == "topic_too_long"
    assert "太长" in msg.content or "too long" in msg.content
    # Through the chat as well: a clear reply, nothing written, the runtime usable after.
    chat = await rt.process_input("写一篇关于" + "很长的主题" * 2000 + "的文章")
    assert chat.content and posts_in(blog) == before
    assert llm.call_count == 0 or all(k != "section" for k in llm.fn.kinds)
    ok = await rt.run_skill("WriteArticle", {"topic": "Rust ownership"})
    assert ok.state == "COMPLETED"
    await rt.close()


async def test_a_saved_article_is_logged_once(blog: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    model = FunctionModel(WritingModelFn())
    rt = await started(writing_runtime(blog, model, log_file=log, log_level="info"))
    msg = await rt.run_skill("WriteArticle", {"topic": "Rust ownership"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    saved = [line for line in lines if line["event"] == "agent.file.saved"]
    assert [line["path"] for line in saved] == [msg.data["path"]]  # by the file store, once
    assert saved[0]["sha256"] == msg.data["hash"][:16]


async def test_empty_topic_is_refused(blog: Path) -> None:
    rt = await started(writing_runtime(blog, FunctionModel(WritingModelFn())))
    msg = await rt.run_skill("WriteArticle", {"topic": "   "})
    assert msg.state != "COMPLETED" and "topic" in msg.content
    await rt.close()


async def test_abort_during_content_generation(blog: Path) -> None:
    long_section = "所有权" * 400
    llm = ScriptedModel([OUTLINE_ZH, long_section, *SECTION_ZH], chunk_delay=0.01)
    rt = await started(writing_runtime(blog, llm))
    before = posts_in(blog)
    streaming = asyncio.Event()
    rt.on("task:stream", lambda e: streaming.set())

    task = asyncio.create_task(rt.process_input("写一篇关于 Rust 所有权的文章"))
    await asyncio.wait_for(streaming.wait(), 10)
    started_at = asyncio.get_running_loop().time()
    assert rt.abort() is True
    msg = await asyncio.wait_for(task, 5)
    assert asyncio.get_running_loop().time() - started_at < 1.0

    assert msg.state == "CANCELLED"
    assert rt.state.value == "IDLE"
    assert posts_in(blog) == before  # no file written
    assert not list((blog / "posts").glob(".skillrt-*.tmp"))
    assert rt.locks is not None and rt.locks.held_by(msg.task_id) == []
    assert "取消" in msg.content
    await rt.close()


async def test_a_blog_with_a_broken_post_still_works(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog", broken=True)
    rt = await started(writing_runtime(blog, ScriptedModel(en_script())))
    msg = await rt.run_skill("WriteArticle", {"topic": "Rust ownership"})
    assert msg.state == "COMPLETED", msg.content
    assert "broken-frontmatter" not in str(frontmatter.load(blog / msg.data["path"])["wikiLinks"])
    await rt.close()


async def test_outline_given_by_the_user_and_markdown_fallback(blog: Path) -> None:
    fn = WritingModelFn()
    rt = await started(writing_runtime(blog, FunctionModel(fn)))
    msg = await rt.run_skill(
        "WriteArticle",
        {
            "topic": "Rust ownership",
            "outline": "# My Title\n- First part\n  - a point\n- Second part",
            "length": "short",
            "extract_entities": False,
        },
    )
    assert msg.state == "COMPLETED", msg.content
    assert fn.kinds == ["section", "section"]  # no outline call, no extraction
    assert msg.data["sections"] == ["First part", "Second part"]
    assert msg.data["title"] == "My Title"

    # A model that answers the outline in Markdown instead of JSON: still an outline.
    llm = ScriptedModel(["# Rust Title\n\n## One\n## Two", "one", "two", {"entities": []}])
    rt2 = await started(writing_runtime(blog, llm, state_dir=blog.parent / "state2"))
    msg = await rt2.run_skill("WriteArticle", {"topic": "Rust moves"})
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["sections"] == ["One", "Two"]
    await rt.close()
    await rt2.close()


async def test_state_changes_are_logged_at_debug_only(blog: Path, tmp_path: Path) -> None:
    for level, expected in (("debug", ["EXECUTING", "COMPLETED"]), ("info", [])):
        log = tmp_path / f"{level}.jsonl"
        model = FunctionModel(WritingModelFn())
        rt = await started(writing_runtime(blog, model, log_file=log, log_level=level))
        msg = await rt.run_skill("WriteArticle", {"topic": f"Rust ownership {level}"})
        await rt.close()
        assert msg.state == "COMPLETED", msg.content
        lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        changes = [line for line in lines if line["event"] == "agent.state.changed"]
        assert [c["dest"] for c in changes if c["dest"] in expected] == expected
        assert all(c["task_id"] == msg.task_id for c in changes)


async def test_a_sections_heading_said_again_as_a_bullet_is_taken_out(blog: Path) -> None:
    """The embedded model put "- ssh Agent Fetching", a key point of its section in the
    prompt, between its paragraphs; it was saved in the article. A plain line, a list of the
    points and a line in a code block stay."""
    from tests.cli_support import article

    first = (
        "Agent forwarding lends your keys to a remote host.\n- Part 1 matters\n"
        "It keeps the keys on your laptop.\n\n- Part 1 matters\n- and more\n\nPart 1 matters\n\n"
        "```text\n- Part 1 matters\n```\n"
    )
    second = "Turn it off for hosts you do not trust."
    answers = article("SSH agent forwarding", [first, second])
    rt = await started(writing_runtime(blog, ScriptedModel(answers)))
    msg = await rt.process_input("write an article about ssh agent forwarding")
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    text = (blog / msg.data["path"]).read_text(encoding="utf-8")
    assert "remote host.\nIt keeps the keys" in text, text
    assert (
        "\n- Part 1 matters\n- and more\n\nPart 1 matters\n\n```text\n- Part 1 matters\n```" in text
    )


def test_an_echo_inside_a_longer_fence_is_code() -> None:
    """A ``` line inside a ```` block closed it: the lines after were taken for text."""
    from skillrt.skills.writing.sections import without_name_lines

    text = "a\n````md\n```\n- Part 1\n```\n````\n- Part 1\nb"
    assert without_name_lines(text, ["Part 1"]) == "a\n````md\n```\n- Part 1\n```\n````\nb"


async def test_writing_an_article_reads_again_only_the_links_it_may_change(blog: Path) -> None:
    """Each article written re-resolved the wikilinks of every post (``relink``): in a vault
    of 3,000 notes, 3,000 notes' links for one new post. The links that may name it now are
    found from what changed, as a refresh finds them."""
    for i in range(40):
        note = blog / "posts" / "ideas" / f"idea-{i}.md"
        note.parent.mkdir(exist_ok=True)
        note.write_text(f"# Idea {i}\n\nNext: [[idea-{(i + 1) % 40}]].\n", encoding="utf-8")
    rt = await started(writing_runtime(blog, ScriptedModel(en_script())))
    try:
        rt.memory.refresh()
        lookups: list[str] = []
        rt.memory.posts._db.set_trace_callback(
            lambda sql: lookups.append(sql) if "FROM names" in sql else None
        )
        msg = await rt.run_skill("WriteArticle", {"topic": "Rust ownership", "language": "en"})
        assert msg.state == "COMPLETED", msg.content
        assert rt.memory.graph.backlinks("posts/rust-borrowing.md")  # its links are in
        assert not any("idea-" in sql for sql in lookups)  # no note's link read again
        assert rt.memory.sync_graph().empty  # nothing left for the next refresh
    finally:
        await rt.close()
