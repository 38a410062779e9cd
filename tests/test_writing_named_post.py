"""A request that names its post without a path: by the title or file name written out, or by
words only that post's title has. One post that fits is taken; none, or two, are asked about."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.messages import ChatMessage
from skillrt.testing import FunctionModel, ScriptedModel
from tests.blog import copy_blog, copy_fixture
from tests.writing_support import writing_runtime


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


async def _summarised(
    blog: Path, request: str, open_post: str | None = None
) -> tuple[ChatMessage, ScriptedModel]:
    """The completed reply to ``request`` (with ``open_post`` open) and the model it asked."""
    llm = ScriptedModel(["The summary."])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    context = {"current_file": open_post} if open_post else None
    try:
        msg = await rt.process_input(request, context=context)
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    return msg, llm


@pytest.mark.parametrize(
    ("request_text", "path"),
    [
        # the title, unquoted, in another case
        ("summarize getting started with Python asyncio", "posts/python-asyncio.md"),
        ("summarize rust-lifetimes", "posts/rust-lifetimes.md"),  # the file's name
        ("summarize the post about smart pointers", "posts/rust-smart-pointers.md"),
        ("can you summarize my go concurrency article, please", "posts/go-concurrency.md"),
        ("give me a summary of the post on git branching workflows", "posts/git-workflow.md"),
        ("总结一下关于生命周期的文章", "posts/rust-lifetimes.md"),
        ("总结数据库索引原理", "posts/database-indexing.md"),  # a Chinese title, written out
        # words before "那篇": Latin ones as words, Chinese ones as a phrase, the verb aside
        ("把 docker 那篇文章总结一下", "posts/docker-basics.md"),
        ("总结一下机器学习那篇文章", "posts/ml-intro.md"),
        ("总结 rust lifetimes 那篇", "posts/rust-lifetimes.md"),
    ],
)
async def test_a_post_named_without_its_path_is_taken(
    blog: Path, request_text: str, path: str
) -> None:
    msg, llm = await _summarised(blog, request_text)
    assert msg.data["source"] == path
    body = (blog / path).read_text(encoding="utf-8").split("---", 2)[2].strip()
    assert body[:200] in llm.calls[0][-1]["content"]  # that post, not another, was summarised


@pytest.mark.parametrize(
    "request_text",
    [
        "summarize the post about rust",  # three posts have Rust in their titles
        "summarize the post about kubernetes",  # none has
        "summarize my notes on python",  # "Notes" is one short word: not a title written out
        "summarize it",
    ],
)
async def test_a_post_not_named_alone_is_asked_about(blog: Path, request_text: str) -> None:
    (blog / "posts" / "jottings.md").write_text("---\ntitle: Notes\n---\n\nSome notes.\n")
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.process_input(request_text)
    assert msg.state == "WAITING_INPUT" and "Which post should I summarise?" in msg.content
    assert llm.call_count == 0
    await rt.close()


async def test_the_longer_title_written_out_wins(blog: Path) -> None:
    """A post titled "Python asyncio" and one titled "Getting Started with Python asyncio":
    a request holding the second holds the first too, and means the second."""
    (blog / "posts" / "short.md").write_text("---\ntitle: Python asyncio\n---\n\nShort.\n")
    llm = ScriptedModel(["The summary.", "Another."])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.process_input("summarize Getting Started with Python asyncio")
    assert msg.data["source"] == "posts/python-asyncio.md", msg.content
    msg = await rt.process_input("summarize python asyncio")  # only the short one whole
    assert msg.state == "COMPLETED" and msg.data["source"] == "posts/short.md", msg.content
    await rt.close()


async def test_an_edit_and_a_delete_find_their_post_and_still_confirm(blog: Path) -> None:
    path = "posts/docker-basics.md"
    before = (blog / path).read_text(encoding="utf-8")
    llm = ScriptedModel(["```markdown\n# Docker 容器入门\n\n容器把应用打包在一起。\n```"])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.process_input("精简关于Docker 容器的那篇文章")
    if msg.state == "WAITING_INPUT":  # the router confirms what it understood first
        msg = await rt.process_input("y")
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["path"] == path
    after = (blog / path).read_text(encoding="utf-8")
    assert after != before and after.endswith("容器把应用打包在一起。\n")
    assert after.split("---", 2)[1] == before.split("---", 2)[1]  # the frontmatter, untouched
    msg = await rt.process_input("delete the git branching workflow post")
    assert msg.state == "WAITING_INPUT" and "posts/git-workflow.md" in msg.content
    msg = await rt.process_input("no")
    assert msg.data.get("deleted") is False and (blog / "posts" / "git-workflow.md").exists()
    await rt.close()


async def test_this_post_about_is_the_open_one(blog: Path) -> None:
    open_post = "posts/docker-basics.md"
    msg, _ = await _summarised(blog, "summarize this post about smart pointers", open_post)
    assert msg.data["source"] == "posts/docker-basics.md"


async def _edited(blog: Path, request: str, open_post: str) -> str:
    """The post an edit request worked on (written, or refused by the edit's checks), with
    ``open_post`` open; no other post was changed."""
    before = {p: p.read_bytes() for p in (blog / "posts").glob("*.md")}
    llm = FunctionModel(lambda messages, options: "```markdown\n# Rewritten\n\nShorter.\n```")
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.process_input(request, context={"current_file": open_post})
    if msg.state == "WAITING_INPUT":  # the router confirms what it understood first
        msg = await rt.process_input("y", context={"current_file": open_post})
    await rt.close()
    path = msg.data.get("path")
    assert isinstance(path, str), msg.content
    changed = [p.name for p, data in before.items() if p.read_bytes() != data]
    assert changed in ([], [path.removeprefix("posts/")])
    return path


@pytest.mark.parametrize(
    ("request_text", "changed"),
    [
        ("edit my git branching workflow post: make it shorter", "posts/git-workflow.md"),
        ("shorten the post about smart pointers", "posts/rust-smart-pointers.md"),
        # a post named in the instruction is not the one to edit: the open one is
        ("add a link to the smart pointers post in the intro", "posts/docker-basics.md"),
        ("mention Getting Started with Python asyncio in the intro", "posts/docker-basics.md"),
        ("make it more like the git branching workflow post", "posts/docker-basics.md"),
        # an instruction's topic that is another post's title is not the post to edit
        ("add a paragraph about Getting Started with Python asyncio", "posts/docker-basics.md"),
        ("edit Getting Started with Python asyncio: make it shorter", "posts/python-asyncio.md"),
        (
            "add a section to the git branching workflow post about rebasing",
            "posts/git-workflow.md",
        ),
        # a title that ends the request after "in", "of", "to": the post to edit
        ("fix the typos in Getting Started with Python asyncio", "posts/python-asyncio.md"),
        ("make the first paragraph shorter in rust-lifetimes", "posts/rust-lifetimes.md"),
        # after "on", or a word that makes it a post to link: not the one to edit
        ("add a paragraph on Getting Started with Python asyncio", "posts/docker-basics.md"),
        ("add a link to Getting Started with Python asyncio", "posts/docker-basics.md"),
        # compared "to" another: the open post's paragraph
        (
            "add a paragraph comparing the smart pointers post to the git branching workflow post",
            "posts/docker-basics.md",
        ),
        # the post to link, then the post to edit after "in" (it asked which post)
        (
            "add a link to the smart pointers post in the git branching workflow post",
            "posts/git-workflow.md",
        ),
        (
            "mention the smart pointers post in the git branching workflow post",
            "posts/git-workflow.md",
        ),
    ],
)
async def test_an_edit_with_a_post_open_takes_another_only_from_its_lead(
    blog: Path, request_text: str, changed: str
) -> None:
    assert await _edited(blog, request_text, "posts/docker-basics.md") == changed


@pytest.mark.parametrize(
    ("request_text", "source"),
    [
        ("I'd like a summary of the post about smart pointers", "posts/rust-smart-pointers.md"),
        ("summarize the git branching workflow post, briefly", "posts/git-workflow.md"),
        ("summarize it and compare it with the smart pointers post", "posts/docker-basics.md"),
        ("summarize it in the style of the git branching workflow post", "posts/docker-basics.md"),
    ],
)
async def test_a_summary_with_a_post_open_takes_another_only_from_its_lead(
    blog: Path, request_text: str, source: str
) -> None:
    msg, _ = await _summarised(blog, request_text, "posts/docker-basics.md")
    assert msg.data["source"] == source, msg.content


async def test_a_translation_with_a_post_open_takes_the_post_its_request_names(
    blog: Path,
) -> None:
    llm = FunctionModel(
        lambda messages, options: "这是一篇关于分支工作流的文章，讲的是如何使用分支。"
    )
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.process_input(
        "translate the git branching workflow post to Chinese",
        context={"current_file": "posts/docker-basics.md"},
    )
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["source"] == "posts/git-workflow.md"
    assert (blog / "posts" / "git-workflow-zh.md").is_file()
    assert not (blog / "posts" / "docker-basics-zh.md").exists()
    await rt.close()


async def test_a_title_used_as_a_thing_of_its_kind_names_no_post(blog: Path) -> None:
    """ "Add a hello world example" with a post titled "Hello World": no post is named."""
    (blog / "posts" / "hello.md").write_text("---\ntitle: Hello World\n---\n\nFirst post.\n")
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    msg = await rt.run_skill(
        "EditContent", {"instruction": "add a hello world example"}, context={}
    )
    assert msg.state == "WAITING_INPUT" and "Which post should I edit?" in msg.content
    await rt.close()


async def test_a_dated_file_goes_by_its_name_without_the_date(tmp_path: Path) -> None:
    """Jekyll's ``_posts/2024-01-15-liquid-tips.md`` is "liquid-tips" in a request."""
    blog = copy_fixture("jekyll", tmp_path / "blog")
    msg, _ = await _summarised(blog, "summarize liquid-tips")
    assert msg.data["source"] == "_posts/2024-01-15-liquid-tips.md"


async def test_an_edit_naming_its_post_at_the_end_takes_it(tmp_path: Path) -> None:
    """ "fix the typo 'recieve' in my first post" asked which post: a title counted only
    right after the edit's verb."""
    hugo = copy_fixture("hugo", tmp_path / "hugo")
    rt = writing_runtime(hugo, ScriptedModel(["Hugo builds this site from Markdown files."]))
    await rt.initialize()
    msg = await rt.run_skill("EditContent", {"instruction": "fix the typos in my first post"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["path"] == "content/posts/first-post.md"


@pytest.mark.parametrize(
    "instruction",
    [
        "make the first paragraph of my first post friendlier",
        "make the intro in first-post friendlier",
    ],
)
async def test_an_edit_naming_its_post_after_a_part_of_it_takes_it(
    tmp_path: Path, instruction: str
) -> None:
    """ "make the first paragraph of my first post friendlier" asked which post."""
    hugo = copy_fixture("hugo", tmp_path / "hugo")
    rt = writing_runtime(hugo, ScriptedModel(["Hi! Hugo builds this whole site from Markdown."]))
    await rt.initialize()
    msg = await rt.run_skill("EditContent", {"instruction": instruction})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["path"] == "content/posts/first-post.md"


async def test_an_edit_instruction_naming_a_title_asks_which_post(blog: Path) -> None:
    """A blog tool's edit button with no post: its instruction's topic is a post's title, and
    the question is asked rather than that post edited."""
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    msg = await rt.run_skill(
        "EditContent", {"instruction": "add a paragraph about Getting Started with Python asyncio"}
    )
    assert msg.state == "WAITING_INPUT" and "Which post should I edit?" in msg.content
    await rt.close()


@pytest.mark.parametrize(
    ("request_text", "path"),
    [
        ("summarise the post about Rust 1.78.0", "content/Rust-1.78.0.md"),
        ("summarise the post about Rust 1.77.0.", "content/Rust-1.77.0.md"),
        ("summarise the post about Rust 1.77.0: the short version", "content/Rust-1.77.0.md"),
    ],
)
async def test_a_version_number_in_a_description_is_read_whole(
    tmp_path: Path, request_text: str, path: str
) -> None:
    """Zola's "Announcing Rust 1.78.0" and "Announcing Rust 1.77.0": the stops inside the
    version do not end the description (it read "Rust 1", which both titles have, and asked)."""
    blog = copy_fixture("zola", tmp_path / "blog")
    msg, _ = await _summarised(blog, request_text)
    assert msg.data["source"] == path


@pytest.mark.parametrize(
    ("follow_up", "place"),
    [("summarize the second one", 2), ("总结第一篇", 1), ("summarize the last one", -1)],
)
async def test_a_post_picked_by_its_number_in_the_listing_just_shown(
    blog: Path, follow_up: str, place: int
) -> None:
    """ "summarize the second one" after "list posts about python" asked which post."""
    llm = ScriptedModel(["The summary."])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        listing = await rt.process_input("list posts about python")
        msg = await rt.process_input(follow_up)
    finally:
        await rt.close()
    listed = listing.data["citations"]
    assert len(listed) >= 3
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["source"] == listed[place - 1 if place > 0 else -1]


async def test_an_answer_to_which_post_that_names_none_picks_none(blog: Path) -> None:
    """ "make it shorter", typed where a post was asked for, picked a post the list did not
    even show (the search's best hit for those words)."""
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        asked = await rt.process_input("summarize the third one")  # nothing listed before
        msg = await rt.process_input("make it shorter")
    finally:
        await rt.close()
    assert asked.state == "WAITING_INPUT", asked.content
    assert msg.data.get("error") == "no_post_chosen" and llm.call_count == 0, msg.content


def test_a_title_ending_in_a_question_mark_ends_an_edit() -> None:
    from skillrt.skills.writing.pick import _ends_with

    assert _ends_with("fix the typo in what is rust?", "What is Rust?")
    assert not _ends_with("add a paragraph on what is rust?", "What is Rust?")


@pytest.mark.parametrize(
    "request_text",
    ["summarize my latest post", "summarise the most recent article", "总结一下我最新的一篇文章"],
)
async def test_my_latest_post_is_the_newest_published_one(blog: Path, request_text: str) -> None:
    """ "what is my latest post?" was answered "I found no post on the blog that is “my latest
    post”". A draft of a later date is not the latest post."""
    draft = "---\ntitle: Later, unfinished\ndate: 2030-01-01\ndraft: true\n---\n\nNot yet.\n"
    (blog / "posts/later-draft.md").write_text(draft, encoding="utf-8")
    msg, _ = await _summarised(blog, request_text)
    assert msg.data["source"] == "posts/notes/weekly-review.md"  # 2024-09-20, the newest
    # The newest of those that fit: the docker post is older than the weekly review.
    msg, _ = await _summarised(blog, "summarize my latest post about docker")
    assert msg.data["source"] == "posts/docker-basics.md"


async def test_an_edit_linking_to_my_latest_post_edits_the_open_one(blog: Path) -> None:
    answer = "Docker runs containers. See my latest post."
    llm = ScriptedModel([answer, answer])  # (refused or not: the post it worked on counts)
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.run_skill(
            "EditContent",
            {"instruction": "add a link to my latest post", "path": None},
            context={"current_file": "posts/docker-basics.md"},
        )
    finally:
        await rt.close()
    assert msg.data.get("path") == "posts/docker-basics.md", msg.content


@pytest.mark.parametrize(
    ("question", "lead"),
    [
        ("what is my latest post?", "Your latest post:"),
        ("which post did I write last?", "Your latest post:"),
        ("我最新的文章是哪篇？", "你最新的文章："),
    ],
)
async def test_the_latest_post_asked_about_is_listed_from_the_index(
    blog: Path, question: str, lead: str
) -> None:
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.process_input(question)
        assert msg.state == "COMPLETED", msg.content
        assert msg.content.startswith(lead), msg.content
        assert "[Weekly Review: What I Learned](posts/notes/weekly-review.md)" in msg.content
        assert llm.call_count == 0
        # It is the focus now: "summarize it" follows it.
        assert rt.conversation().focus == "posts/notes/weekly-review.md"
    finally:
        await rt.close()


@pytest.mark.parametrize(
    ("request_text", "strict", "fits"),
    [
        ("summarize my latest post", False, []),
        ("summarize my latest post about docker", False, ["docker"]),
        ("总结一下我最近一篇关于 Go 的文章", False, ["go"]),
        ("compare it with my latest post", False, None),  # a post to compare with
        ("shorten my latest post", True, []),  # right after the edit's verb
        ("fix the typos in my latest post", True, []),  # at the end
        ("add tags rust to my latest post", True, []),  # at the end, no edit verb
        ("add a link to my latest post", True, None),  # a post to link to
        ("make my most recent article shorter", True, None),  # neither
    ],
)
def test_which_requests_name_the_newest_post(
    request_text: str, strict: bool, fits: list[str] | None
) -> None:
    from skillrt.skills.writing.pick import _EDIT_VERB, _newest_named

    request = " ".join(request_text.casefold().split())
    verb = _EDIT_VERB.match(request)
    names_in = (request[verb.end() :] if verb else "") if strict else request
    assert _newest_named(request, names_in, strict) == fits


@pytest.mark.parametrize("answer", ["no", "none of them", "算了"])
async def test_no_where_a_post_is_asked_for_picks_none(blog: Path, answer: str) -> None:
    """ "no" at "Which post should I delete?" was found in a listed post's path
    (`posts/notes/weekly-review.md`), and the delete asked about that post: a declining answer
    picks no post, and nothing is asked or deleted."""
    before = sorted(p.relative_to(blog).as_posix() for p in blog.rglob("*.md"))
    rt = writing_runtime(blog, ScriptedModel([]))
    asked = await rt.process_input("bin the rust one")
    assert asked.state == "WAITING_INPUT" and "Which post" in asked.content, asked.content
    done = await rt.process_input(answer)
    await rt.close()
    assert done.state != "WAITING_INPUT", done.content
    assert done.data.get("error") == "no_post_chosen", done.data
    assert sorted(p.relative_to(blog).as_posix() for p in blog.rglob("*.md")) == before
