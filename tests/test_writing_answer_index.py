"""Questions on the author's own blog that the index answers (its dates, drafts, lists and
links), and the posts a question names: answered from the index or said to be missing, where
they went to the search and the model, whose wrong facts were shown as the blog's."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bench_routing import _router
from skillrt import AgentRuntime
from skillrt.messages import ChatMessage
from skillrt.testing import FunctionModel
from tests.writing_support import writing_runtime

POSTS = {
    "posts/docker-basics.md": """
        ---
        title: Docker Basics
        date: 2024-03-01
        tags: [docker, containers]
        ---

        Docker packages an app with its dependencies into an image. Run it with `docker run`.
        Volumes keep data outside the container. See also [[rust-ownership]].
        """,
    "posts/rust-ownership.md": """
        ---
        title: Rust Ownership
        date: 2023-05-10
        tags: [rust]
        ---

        Every value in Rust has one owner. When the owner goes out of scope the value is dropped.
        """,
    "posts/rust-async.md": """
        ---
        title: Async Rust in Practice
        date: 2024-07-15
        tags: [rust, async]
        ---

        Tokio is the usual runtime. I deploy my async services in a docker container.
        See [[Rust Ownership]].
        """,
    "posts/go-generics.md": """
        ---
        title: Go Generics
        date: 2022-01-20
        tags: [go]
        ---

        Go 1.18 brought generics; type parameters go in square brackets.
        """,
    "posts/k8s-notes.md": """
        ---
        title: Kubernetes Notes
        date: 2024-12-01
        draft: true
        tags: [docker, kubernetes]
        ---

        Kubernetes schedules docker containers. Pods and deployments. See [[go-generics]].
        """,
    "posts/weekly/2024-02-02.md": """
        ---
        title: Weekly Notes
        date: 2024-02-02
        tags: [weekly]
        ---

        This week I read about SQLite full text search. See [[go-generics]].
        """,
    "posts/weekly-notes.md": """
        ---
        title: Weekly Notes
        date: 2025-01-05
        tags: [weekly]
        ---

        This week I migrated the blog to Zola and learned about docker compose.
        """,
    "posts/linking.md": """
        ---
        title: Linking Post
        date: 2021-06-06
        tags: [meta]
        ---

        See [docker](docker-basics.md) and [[go-generics]] and [[missing-note]].
        """,
}

MADE_UP = (
    "You have five posts tagged rust and no drafts; see [Rust Ownership](posts/rust-ownership.md)"
    " and [Async Rust in Practice](posts/rust-async.md)."
)


def build(root: Path) -> Path:
    for rel, text in POSTS.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


class Model:
    """A model that says ``answer`` to everything and keeps what it was asked."""

    def __init__(self, answer: str = MADE_UP) -> None:
        self.answer = answer
        self.asked: list[str] = []

    def __call__(self, messages: list[Any], options: Any) -> Any:
        self.asked.append(messages[-1]["content"])
        if options.response_model is not None:
            return {"entities": []}
        return self.answer


@pytest.fixture
async def chat(tmp_path: Path) -> Any:
    """A runtime over the blog above and the model it asks."""
    model = Model()
    rt = writing_runtime(build(tmp_path / "blog"), FunctionModel(model))
    await rt.initialize()
    try:
        yield rt, model
    finally:
        await rt.close()


async def _answer(rt: AgentRuntime, question: str) -> ChatMessage:
    return await rt.run_skill("AnswerQuestion", {"question": question})


async def test_a_date_some_posts_have_is_not_said_to_be_no_posts(chat: Any) -> None:
    """ "did I write about docker in 2023?" (Rust Ownership is dated 2023) was told "No post
    on the blog is dated 2023" and answered from the 2024 posts."""
    rt, model = chat
    for question in ("what did I write about docker in 2023?", "did I write about docker in 2023?"):
        msg = await _answer(rt, question)
        assert msg.content.startswith(f"No post from 2023 is on “{question}”."), msg.content
        assert "is dated 2023" not in msg.content and not msg.data["date_missed"]
        assert "posts/docker-basics.md" in msg.data["elsewhere"]
        assert "posts/rust-ownership.md" not in msg.content
    assert model.asked == []
    msg = await _answer(rt, "我在 2023 年写过 docker 吗？")
    assert msg.content.startswith("博客里日期在 2023 的文章没有关于"), msg.content
    # a date no post has: said as before
    msg = await _answer(rt, "what did I write about docker in 2019?")
    assert msg.data["date_missed"] is True and "No post on the blog is dated 2019" in msg.content


@pytest.mark.parametrize("question", ["我 2024 年写了多少篇文章？", "2024年我写了几篇文章？"])
async def test_a_chinese_count_of_a_years_posts_is_the_index(chat: Any, question: str) -> None:
    """Both were told "博客里没有日期在 2024 的文章" and answered in general: four posts are."""
    rt, model = chat
    msg = await _answer(rt, question)
    assert msg.content.startswith("日期在 2024 的文章有 3 篇"), msg.content
    assert msg.data["listed"] == 3 and model.asked == []


@pytest.mark.parametrize(
    "question",
    [
        "do I have any drafts?",
        "do I have drafts?",
        "how many drafts?",
        "any drafts?",
        "which posts are drafts?",
        "有草稿吗？",
        "草稿呢？",
    ],
)
async def test_a_question_on_the_drafts_lists_them(chat: Any, question: str) -> None:
    """They went to the search (which leaves drafts out), then to a general answer ("You have
    no drafts"), or listed five published posts as "on it"; the blog has one draft."""
    rt, model = chat
    msg = await _answer(rt, question)
    assert msg.data["listed"] == 1 and msg.data["citations"] == ["posts/k8s-notes.md"]
    assert msg.content.startswith(("Drafts on the blog: 1", "博客有 1 篇草稿")), msg.content
    assert model.asked == []


@pytest.mark.parametrize(
    ("question", "start"),
    [
        ("how many posts are on my blog right now?", "Posts on the blog: 7"),
        ("how many articels have i published", "Posts on the blog: 7"),
        ("我一共写了多少篇文章？", "博客共有 7 篇文章"),
        ("我目前有多少篇文章", "博客共有 7 篇文章"),
        ("list everything I wrote in 2024", "Posts from 2024: 3"),
        ("did I ever write about kubernetes", "The blog has no posts on “kubernetes”"),
        ("have I written anything on docker?", "Posts on “docker”: 4"),
    ],
)
async def test_a_count_or_a_list_asked_in_other_words_is_the_indexs(
    chat: Any, question: str, start: str
) -> None:
    """Each went to the search and the model: "我一共写了多少篇文章？" was told the blog has
    nothing on it, "how many posts are on my blog right now?" answered from two posts' text,
    "did I ever write about kubernetes" from posts on other things."""
    rt, model = chat
    msg = await _answer(rt, question)
    assert msg.content.startswith(start), msg.content
    assert model.asked == []


# Routed to AnswerQuestion by the table's firm drafts rules, which it did not take for a drafts
# question: searched (drafts left out), then answered in general.
ROUTED_FOR_DRAFTS = [
    "what about drafts?",
    "and drafts?",
    "my drafts",
    "have I got any drafts?",
    "drafts at all?",
    "do i still have unpublished drafts lying around?",
    "count my drafts please",
    "any drafts yet?",
    "那草稿呢",
    "有草稿嘛",
    "我的草稿呢",
]


@pytest.mark.parametrize("question", ROUTED_FOR_DRAFTS)
async def test_a_drafts_question_the_table_routes_lists_them(chat: Any, question: str) -> None:
    rt, model = chat
    parsed = await _router(None).parse(question, ask_model=False)
    assert (parsed.type, parsed.confidence) == ("ANSWER_QUESTION", 1.0)
    msg = await _answer(rt, question)
    assert msg.data["listed"] == 1 and msg.data["citations"] == ["posts/k8s-notes.md"]
    assert msg.content.startswith(("Drafts on the blog: 1", "博客有 1 篇草稿")), msg.content
    assert model.asked == []


@pytest.mark.parametrize(
    ("question", "start", "citations"),
    [
        (
            "how many posts are tagged rust?",
            "Posts tagged “rust”: 2",
            ["posts/rust-async.md", "posts/rust-ownership.md"],
        ),
        (
            "what posts did I publish in January 2025?",
            "Posts from January 2025: 1",
            ["posts/weekly-notes.md"],
        ),
        ("show my posts from 2023", "Posts from 2023: 1", ["posts/rust-ownership.md"]),
        ("what's the title of my newest post?", "Your latest post:", ["posts/weekly-notes.md"]),
    ],
)
async def test_counts_and_lists_the_index_has_are_not_the_models(
    chat: Any, question: str, start: str, citations: list[str]
) -> None:
    """Each went to the search and the model, whose "You have five posts tagged rust and no
    drafts" was shown with real posts cited."""
    rt, model = chat
    msg = await _answer(rt, question)
    assert msg.content.startswith(start), msg.content
    assert msg.data["citations"] == citations and model.asked == []


@pytest.mark.parametrize(
    "question",
    [
        "what did I write about quantum chromodynamics?",
        "do I have anything on quantum chromodynamics?",
        "我写过量子色动力学吗？",
        "which post is in the category quantum?",
    ],
)
async def test_a_question_on_what_the_author_wrote_gets_no_general_answer(
    chat: Any, question: str
) -> None:
    """What the author has or wrote is the blog's to say: a general answer made one up."""
    rt, model = chat
    msg = await _answer(rt, question)
    assert msg.data["found"] is False and "general" not in msg.data, msg.content
    assert model.asked == []


async def test_a_question_on_links_is_on_the_post_it_names_not_the_focus(chat: Any) -> None:
    """With Async Rust in focus, "what does the linking post link to?" listed the focus's
    links, and "which posts link to the photo walk post?" said none linked to the focus; with
    no focus, they went to the search and the model."""
    rt, model = chat
    focus = {"session_id": "s1"}
    msg = await rt.process_input("what is the Async Rust in Practice post about?", focus)
    assert rt.conversation("s1").focus == "posts/rust-async.md"
    model.asked.clear()
    msg = await rt.process_input("what does it link to?", focus)  # the focus, said "it"
    assert msg.data["path"] == "posts/rust-async.md"
    assert msg.data["citations"] == ["posts/rust-ownership.md"]
    msg = await rt.process_input("what does the linking post link to?", focus)
    assert msg.data["path"] == "posts/linking.md", msg.content
    assert msg.data["citations"] == ["posts/go-generics.md"]
    for question, post in [
        ("what links to the missing note?", "the missing note"),
        ("which posts link to the photo walk post?", "the photo walk post"),
    ]:
        for session in ("s1", "s2"):  # in focus, and with none
            msg = await rt.process_input(question, {"session_id": session})
            assert msg.content.startswith(f"I found no post on the blog that is “{post}”")
            assert msg.data["found"] is False and "rust-async" not in msg.content
    # two posts are "Weekly Notes": asked which
    msg = await rt.process_input("what does the weekly notes post link to?", focus)
    assert msg.state == "WAITING_INPUT", msg.content
    assert "posts/weekly-notes.md" in msg.content and "posts/weekly/2024-02-02.md" in msg.content
    msg = await rt.process_input("posts/weekly/2024-02-02.md", focus)
    assert msg.data["path"] == "posts/weekly/2024-02-02.md"
    assert msg.data["citations"] == ["posts/go-generics.md"]
    assert model.asked == []


async def test_backlinks_leave_drafts_out_and_follow_a_rename(chat: Any, tmp_path: Path) -> None:
    """A draft was listed among the posts linking to go-generics with no note; after a rename
    on disk the reply named the old path (the post was looked up before the index was
    refreshed); and "No post links to" the docker post, which a Markdown link points at."""
    rt, model = chat
    msg = await _answer(rt, "what links to go-generics?")
    assert msg.content.startswith(
        "Posts that link to `posts/go-generics.md` (“Go Generics”): 2 (drafts left out: 1)"
    ), msg.content
    assert msg.data["citations"] == ["posts/linking.md", "posts/weekly/2024-02-02.md"]
    blog = tmp_path / "blog"
    (blog / "posts/linking.md").rename(blog / "posts/links-page.md")
    msg = await _answer(rt, "what does the linking post link to?")
    assert msg.data["path"] == "posts/links-page.md", msg.content
    assert msg.content.startswith("`posts/links-page.md` (“Linking Post”) links to 1 post(s)")
    msg = await _answer(rt, "what links to the docker basics post?")
    assert msg.content == (
        "No post's wikilinks ([[…]]) point to `posts/docker-basics.md` (“Docker Basics”)."
    )
    assert model.asked == []


async def test_a_draft_picked_from_a_list_by_number_is_said_to_be_a_draft(chat: Any) -> None:
    """ "list my drafts", then "what is the first one about?" was searched past the draft and
    answered from Rust Ownership, found through the word "one"."""
    rt, model = chat
    session = {"session_id": "d"}
    await rt.process_input("list my drafts", session)
    msg = await rt.process_input("what is the first one about?", session)
    assert msg.content.startswith("[Kubernetes Notes](posts/k8s-notes.md) is a draft"), msg.content
    assert msg.data["drafts"] == ["posts/k8s-notes.md"] and model.asked == []


async def test_a_question_on_a_post_deleted_or_never_written_is_not_answered_from_others(
    chat: Any, tmp_path: Path
) -> None:
    """The docker post deleted while the chat ran, "what is the docker basics post about?" was
    answered by the model from the posts the search found (the linking post, the weekly
    notes)."""
    rt, model = chat
    (tmp_path / "blog/posts/docker-basics.md").unlink()
    for question in (
        "what is the docker basics post about?",
        "what did I say about volumes in the docker basics post?",
    ):
        msg = await _answer(rt, question)
        assert msg.content.startswith(
            "I found no post on the blog that is “the docker basics post”"
        ), msg.content
        assert msg.data["post_asked_about"] == "the docker basics post"
    assert model.asked == []
    # a post whose tags hold the words, a topic, or which post by its place: searched as before
    for question in (
        "what does the tokio post say about runtimes?",  # (its text says "Tokio")
        "what does the gen post say?",  # (the start of a word of a title: "Generics")
        "what does the kubernetes post say about pods?",
        "what does the post about tokio say?",
        "what is my first post about?",
    ):
        msg = await _answer(rt, question)
        assert "post_asked_about" not in msg.data, (question, msg.content)


@pytest.mark.parametrize(
    "question",
    [
        "I wrote a bash script that fails with permission denied on quarks, why?",
        "do I have to restart the quark daemon after a change?",
    ],
)
async def test_a_general_question_in_the_first_person_gets_its_general_answer(
    chat: Any, question: str
) -> None:
    """ "I wrote …" and "do I have to …" are no questions on the blog: a general answer is
    still given when the blog has nothing on it."""
    rt, _ = chat
    msg = await _answer(rt, question)
    assert msg.data.get("general") is True, msg.content


async def test_a_general_answer_that_says_an_earlier_reply_again_is_dropped(
    tmp_path: Path,
) -> None:
    """The embedded model's general answer was the reply before it ("The model wrote no answer
    from the posts found. These posts are on it: …"), shown as "General answer (not from the
    blog)"."""

    def parrot(messages: list[Any], options: Any) -> Any:
        if options.response_model is not None:
            return {"entities": []}
        replies = [m["content"] for m in messages if m["role"] == "assistant"]
        return ("Sure. " + replies[-1]) if replies else "Chromodynamics is about quarks."

    rt = writing_runtime(build(tmp_path / "blog"), FunctionModel(parrot))
    await rt.initialize()
    try:
        session = {"session_id": "g"}
        await rt.process_input("list my posts", session)
        question = "what does the blog say about quantum chromodynamics?"
        msg = await rt.process_input(question, session)
        assert (
            msg.content == f"The blog has nothing on “{question}”, so I cannot answer this from it."
        )
        assert "general" not in msg.data
        fresh = await rt.process_input(question, {"session_id": "h"})
        assert fresh.data["general"] is True and "quarks" in fresh.content  # (as before)
    finally:
        await rt.close()
