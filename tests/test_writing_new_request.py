"""A new request typed where a skill asked a question is routed as a request, not read as the
answer: "summarize the rust post" asked which post, and "what tags does the docker post have?"
typed next was read as a post's name, matched none, and was lost ("I could not tell which post
you meant"). A request naming posts other than the open one (or the focus) asks which of them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from skillrt.messages import ChatMessage
from skillrt.skills.writing.asking import new_request
from skillrt.testing import ScriptedModel
from tests.blog import copy_blog
from tests.writing_support import writing_runtime


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


async def _two_turns(
    blog: Path, first: str, second: str, answers: list[str] | None = None
) -> tuple[ChatMessage, ChatMessage, ScriptedModel, list[str]]:
    """The replies to ``first`` and ``second`` in one session, the model, and why the tasks
    that stopped did (their ``task:aborted`` events)."""
    llm = ScriptedModel(answers or [])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    stopped: list[str] = []
    rt.on("task:aborted", lambda e: stopped.append(f"{e.task_id}:{e.data.get('reason')}"))
    try:
        asked = await rt.process_input(first)
        msg = await rt.process_input(second)
        assert asked.task_id is not None
        assert rt.task_state(asked.task_id) is None  # ended, not left waiting
        assert rt.get_task(asked.task_id) is None  # and no journal kept for it
    finally:
        await rt.close()
    return asked, msg, llm, stopped


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("what tags does the docker post have?", "docker, 运维"),
        ("docker 那篇文章有哪些标签？", "docker, 运维"),
    ],
)
async def test_a_request_typed_where_a_post_was_asked_for_is_routed(
    blog: Path, typed: str, expected: str
) -> None:
    asked, msg, llm, stopped = await _two_turns(blog, "summarize the post about rust", typed)
    assert asked.state == "WAITING_INPUT" and "Which post should I summarise?" in asked.content
    assert msg.state == "COMPLETED", msg.content
    assert expected in msg.content, msg.content  # the tags, from the index: the new request's
    assert msg.task_id != asked.task_id
    assert llm.call_count == 0  # nothing was summarised
    assert stopped == [f"{asked.task_id}:cancelled"]  # the question's task, no other


async def test_a_name_that_fits_no_post_is_still_an_answer(blog: Path) -> None:
    """A short reply is the answer even when it names no post listed: the reply says so."""
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        asked = await rt.process_input("summarize the post about rust")
        msg = await rt.process_input("the banana one")
    finally:
        await rt.close()
    assert asked.state == "WAITING_INPUT"
    assert msg.task_id == asked.task_id and msg.data.get("error") == "no_post_chosen"


async def test_an_answer_sent_to_the_task_itself_is_always_its_answer(blog: Path) -> None:
    """``answer_task`` names the task: a question typed there is its answer (no post fits)."""
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    try:
        asked = await rt.process_input("summarize the post about rust")
        assert asked.task_id is not None
        msg = await rt.answer_task(asked.task_id, "what tags does the docker post have?")
    finally:
        await rt.close()
    assert msg is not None and msg.data.get("error") == "no_post_chosen", msg


async def test_a_request_typed_where_tags_were_asked_for_adds_none(blog: Path) -> None:
    """ "what tags does it have?", typed where "which tags should I add?" was asked, was split
    into the tags "what", "tags", "does", "it", "have" and written into the post."""
    post = blog / "posts" / "docker-basics.md"
    before = post.read_bytes()
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    try:
        asked = await rt.run_skill(
            "EditContent", {"instruction": "add tags", "path": "posts/docker-basics.md"}
        )
        msg = await rt.process_input("what tags does the docker post have?")
    finally:
        await rt.close()
    assert asked.state == "WAITING_INPUT", asked.content
    assert post.read_bytes() == before
    assert msg.task_id != asked.task_id and "docker, 运维" in msg.content, msg.content


@pytest.mark.parametrize(
    "text",
    [
        "what tags does the docker post have?",
        "summarize the go post",
        "please translate it into English",
        "docker 那篇文章有哪些标签？",
        "这篇文章讲了什么",
        "请总结一下",
        "is there a post about rust lifetimes in this blog?",
        "suggest tags for it",  # (read as a post's name, it named none, and was lost)
        "add the tag rust to it",
        "change its category to linux",
        "把它的分类改成 工具",
        "给它加一个标签 编辑器",
    ],
)
def test_what_reads_as_a_new_request(text: str) -> None:
    assert new_request(text)


@pytest.mark.parametrize(
    "text",
    ["2", "第二篇", "the docker one", "the docker one?", "posts/x.md", "rust, async", "no",
     "make it shorter", "Rust 借用与引用", ""],
)  # fmt: skip
def test_what_reads_as_an_answer(text: str) -> None:
    assert not new_request(text)


async def test_a_request_naming_other_posts_than_the_focus_asks_which(blog: Path) -> None:
    """ "summarize the post about rust" with the docker post in focus summarised the docker
    post: three posts fit "rust", and none is the focus."""
    llm = ScriptedModel(["The summary of a post.", "A summary of the rust post."])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        open_docker = {"current_file": "posts/docker-basics.md"}
        msg = await rt.process_input("summarize the rust post", context=open_docker)
        assert msg.state == "WAITING_INPUT", msg.content
        listed = [line for line in msg.content.splitlines() if line[:2] in ("1.", "2.", "3.")]
        assert all("rust" in line.casefold() for line in listed), msg.content  # those first
        assert llm.call_count == 0
        # A description that fits no post leaves the open one meant (typed at the question:
        # a new request); so does one that fits the open post.
        msg = await rt.process_input("summarize the whole post", context=open_docker)
        assert msg.state == "COMPLETED" and msg.data["source"] == "posts/docker-basics.md"
        rust = {"current_file": "posts/rust-lifetimes.md"}
        msg = await rt.process_input("summarize the rust post", context=rust)
        assert msg.state == "COMPLETED" and msg.data["source"] == "posts/rust-lifetimes.md"
    finally:
        await rt.close()


async def test_a_request_typed_where_a_delete_was_to_be_confirmed_deletes_nothing(
    blog: Path,
) -> None:
    """ "what tags does the docker post have?", typed where "Delete …? Answer yes or no." was
    asked, was read as "no" and lost; it is run now, and the post stays. "delete it" there
    is a yes."""
    post = blog / "posts" / "go-concurrency.md"
    asked, msg, _, stopped = await _two_turns(
        blog, "delete posts/go-concurrency.md", "what tags does the docker post have?"
    )
    assert asked.state == "WAITING_INPUT" and "Delete" in asked.content, asked.content
    assert "docker, 运维" in msg.content and post.exists()
    assert stopped == [f"{asked.task_id}:cancelled"]
    asked, msg, _, _ = await _two_turns(blog, "delete posts/go-concurrency.md", "delete it")
    assert msg.task_id == asked.task_id and msg.data.get("deleted") is True, msg.content
    assert not post.exists()


@pytest.mark.parametrize(
    "typed",
    [
        "add the tag containers to posts/docker-basics.md",
        "给 posts/docker-basics.md 加一个标签 containers",
    ],
)
async def test_a_request_with_a_verb_of_its_own_at_a_yes_or_no_is_run(
    blog: Path, typed: str
) -> None:
    """ "把它的分类改成 工具", typed where a change waited for its yes, was read as a no: the
    change was dropped and the request lost. A request that starts with a verb of its own is
    routed there now, and nothing is deleted."""
    asked, msg, _, stopped = await _two_turns(blog, "delete posts/go-concurrency.md", typed)
    assert asked.state == "WAITING_INPUT" and stopped == [f"{asked.task_id}:cancelled"]
    assert msg.state == "COMPLETED" and msg.task_id != asked.task_id, msg.content
    assert (blog / "posts" / "go-concurrency.md").exists()
    assert "containers" in (blog / "posts" / "docker-basics.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("text", "answers", "deletes"),
    [("y", True, False), ("no", True, False), ("delete it", True, True),
     ("yes, remove it", True, True), ("删除吧", True, True), ("请删除", True, True),
     ("帮我删掉它", True, True), ("确认删除", True, True), ("好的，删掉吧", True, True),
     ("keep it", True, False), ("save it", True, False),
     ("what is in the json post?", False, False), ("summarize the go post", False, False),
     ("delete the docker post instead", False, False),
     ("write an article about rust", False, False),
     ("change its category to linux", False, False), ("把它的分类改成 工具", False, False),
     ("make it shorter", False, False), ("给它加一个标签 编辑器", False, False),
     ("add it", True, False), ("把它删掉", True, True), ("不用了", True, False),
     ("make it so", True, False), ("add them all", True, False), ("go ahead", True, False),
     ("no thanks", True, False), ("算了", True, False)],
)  # fmt: skip
def test_what_answers_a_yes_or_no_question(text: str, answers: bool, deletes: bool) -> None:
    from skillrt.skills.writing.asking import DELETE_IT, SAVE_IT, confirms_or_answers

    assert confirms_or_answers(text) is answers
    assert bool(DELETE_IT.match(text)) is deletes
    assert bool(SAVE_IT.match(text)) is (text == "save it")


@pytest.mark.parametrize(
    ("text", "tags"),
    [("how-to, containers", True), ("how-to", True), ("search", True), ("draft, update", True),
     ("翻译", True), ("发布", True), ("rust async tokio", True),
     ("what tags does it have?", False), ("summarize the go post", False),
     ("请总结一下这篇文章", False)],
)  # fmt: skip
def test_what_answers_which_tags(text: str, tags: bool) -> None:
    from skillrt.skills.writing.asking import tags_or_request

    assert tags_or_request(text) is tags


async def test_this_post_is_the_open_one_whatever_its_verb_names(blog: Path) -> None:
    """ "总结这篇文章" with two posts titled "…年度总结" read "总结" as a description and asked
    which of them: 这篇 is the open post."""
    for name in ("2023", "2024"):
        year = f"---\ntitle: {name} 年度总结\ndate: {name}-12-31\n---\n\n这一年写了很多。\n"
        (blog / "posts" / f"review-{name}.md").write_text(year, encoding="utf-8")
    llm = ScriptedModel(["生命周期标注描述引用之间的关系。", "Smart pointers own their data."])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        open_rust = {"current_file": "posts/rust-lifetimes.md"}
        msg = await rt.process_input("总结这篇文章", context=open_rust)
        assert msg.data.get("source") == "posts/rust-lifetimes.md", msg.content
        pointers = {"current_file": "posts/rust-smart-pointers.md"}
        msg = await rt.process_input("summarize this post", context=pointers)
        assert msg.data.get("source") == "posts/rust-smart-pointers.md", msg.content
    finally:
        await rt.close()


async def test_links_and_code_of_another_post_than_the_open_one(blog: Path) -> None:
    """With the docker post open, "what does the rust lifetimes post link to?" listed the
    docker post's links ("link" made the question name no post), and "explain the code in
    the rust post" (three fit) said there was no code to explain."""
    llm = ScriptedModel(["It compares the lengths of two string slices."])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        docker = {"current_file": "posts/docker-basics.md"}
        msg = await rt.process_input("what does the rust lifetimes post link to?", docker)
        assert msg.state == "COMPLETED" and "rust-borrowing" in msg.content, msg.content
        msg = await rt.run_skill("CodeExplain", {"question": "explain the code in the rust post"},
                                 docker)  # fmt: skip
        assert msg.state == "WAITING_INPUT", msg.content
        assert "Which post should I explain the code of?" in msg.content
        msg = await rt.process_input("rust-lifetimes")
    finally:
        await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert "two string slices" in msg.content and llm.call_count == 1


async def test_an_answer_racing_a_new_request_to_the_question_is_not_an_error(
    blog: Path,
) -> None:
    """A new request left the question to be ended in a task of its own, and an answer sent
    by id meanwhile made the request fail ("InvalidStateError"): the hand-over is at once."""
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    try:
        asked = await rt.process_input("summarize the post about rust")
        assert asked.task_id is not None
        new, late = await asyncio.gather(
            rt.process_input("what tags does the docker post have?"),
            rt.answer_task(asked.task_id, "1"),
        )
    finally:
        await rt.close()
    assert new.state == "COMPLETED" and "docker, 运维" in new.content, new.content
    assert late is None  # the question was gone: not waiting


async def test_which_posts_tags_is_asked_in_good_chinese(blog: Path) -> None:
    """ "它有哪些标签？" with no post open asked "要查看标签哪篇文章？"."""
    rt = writing_runtime(blog, ScriptedModel([]))
    await rt.initialize()
    try:
        msg = await rt.process_input("它有哪些标签？")
    finally:
        await rt.close()
    assert msg.state == "WAITING_INPUT", msg.content
    assert msg.content.startswith("要查看哪篇文章的标签？\n\n1. "), msg.content
