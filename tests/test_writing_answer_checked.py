"""AnswerQuestion checks the model's answer before it shows it (a loop, lines said again and
again, code none of its sources has), asks once more, and lists the posts found when the
answer fails again; a request for the posts on a topic is answered from the index, and a
summary's code must come from the text summarised."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.skills.writing.answer import listing_topic, lists_drafts
from skillrt.testing import ScriptedModel
from tests.blog import copy_blog, copy_fixture
from tests.writing_support import run_writing_skill, writing_runtime

QUESTION = "What does the sqlite post say about ranking?"
# The embedded model's answer to "posts that mention sqlite": one line, its numbers aside.
LOOPING = "\n\n".join(
    f"{i}. 可以在 posts/notes 区分两个编辑墨，一是[文档提取][{2 * i}]，"
    f"另一是[文档随机化][{2 * i + 1}]."
    for i in range(1, 15)
)
MADE_UP = (
    "The post ranks matches like this:\n\n```python\ndef mmatch_query(text):\n"
    '    return "mmatch" + text[0] * 256\n```'
)
# The embedded model's answer to "what is the photo walk post about?"
CIRCULAR = "The sqlite post about ranking results with bm25 is about ranking results with bm25."
# The embedded model's answer to "what is my first post about?"
QUESTIONS = "1. What does the sqlite post say about ranking?\n2. What is ranking in SQLite?"
# The embedded model's answer to "what does the shells post say about zsh?", moved to sqlite
GROUNDLESS = (
    "The sqlite post explains that the Linux kernel schedules processes across processor "
    "cores with priority queues, time slices and careful fairness between interactive jobs."
)
GOOD = "It ranks `MATCH` results with `bm25()` ([SQLite FTS5](posts/sqlite-fts5.md))."
# Too short for ``grounded`` to judge, and its figures in no post found
FIGURES = "It ranks with bm25, 37% faster since SQLite 3.45 [1]."

# Shown as answers, done: the model saying it cannot, and one stopping mid-sentence
REFUSAL = "As an AI language model, I cannot access your blog posts or browse files."
CUT_SHORT = "The sqlite post says results are ranked with bm25, which"


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


async def _answer(blog: Path, answers: list[str], question: str = QUESTION) -> tuple:
    llm = ScriptedModel(answers)
    msg = await run_writing_skill(
        blog, llm, "AnswerQuestion", {"question": question}, answer={"general_fallback": False}
    )
    assert msg.state == "COMPLETED", msg.content
    return msg, llm


@pytest.mark.parametrize(
    ("answers", "check"),
    [
        ([LOOPING, LOOPING], "not_repetitive"),
        ([MADE_UP, MADE_UP], "code_from_sources"),
        ([CIRCULAR, CIRCULAR], "not_circular"),
        ([QUESTIONS, QUESTIONS], "not_questions"),
        ([GROUNDLESS, GROUNDLESS], "grounded"),
        ([FIGURES, FIGURES], "figures"),
        ([REFUSAL, REFUSAL], "not_degenerate"),
        ([CUT_SHORT, CUT_SHORT], "not_degenerate"),
    ],
    ids=[
        "repeated-lines",
        "made-up-code",
        "said-twice",
        "questions",
        "groundless",
        "figures",
        "as-an-ai",
        "cut-short",
    ],
)
async def test_an_answer_failing_its_check_twice_is_not_shown(
    blog: Path, answers: list[str], check: str
) -> None:
    msg, llm = await _answer(blog, answers)
    assert llm.call_count == 2  # asked once more, with the reason
    assert "Important: the first answer was refused" in llm.calls[1][-1]["content"]
    assert msg.data["answered"] is False and msg.data["check"] == check
    assert "failed its check" in msg.content
    assert "```" not in msg.content and "256" not in msg.content  # (the reason quotes a line)
    assert msg.content.count("文档随机化") <= 1
    assert "](posts/sqlite-fts5.md)" in msg.content  # the posts found, listed
    assert {c["name"]: c["passed"] for c in msg.data["checks"]}[check] is False


async def test_an_answer_asked_again_is_shown_without_its_words_on_the_first(blog: Path) -> None:
    retry = "The first answer was refused. " + GOOD
    msg, llm = await _answer(blog, [MADE_UP, retry])
    assert llm.call_count == 2
    assert msg.content.startswith(GOOD.split(" ([")[0]), msg.content
    assert "refused" not in msg.content and "mmatch" not in msg.content
    assert msg.data["citations"] == ["posts/sqlite-fts5.md"]
    checks = {c["name"]: c for c in msg.data["checks"]}
    assert checks["code_from_sources"]["passed"] and checks["code_from_sources"]["attempts"] == 2
    assert msg.data["truncated_repetition"] is False


async def test_code_quoted_from_the_post_passes_at_once(blog: Path) -> None:
    quoted = (
        "Order by `rank` ([SQLite FTS5](posts/sqlite-fts5.md)):\n\n```sql\n"
        "SELECT title FROM docs WHERE docs MATCH 'owner' ORDER BY rank;\n```"
    )
    msg, llm = await _answer(blog, [quoted])
    assert llm.call_count == 1 and "ORDER BY rank" in msg.content
    assert "answered" not in msg.data


async def test_an_answer_that_only_talks_about_the_refusal_lists_the_posts(blog: Path) -> None:
    msg, llm = await _answer(blog, [LOOPING, "The first answer was refused."])
    assert llm.call_count == 2
    assert msg.data["answered"] is False and "refused" not in msg.content
    assert "The model wrote no answer from the posts found" in msg.content


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("which posts mention docker?", "docker"),
        ("Which of my articles cover SQLite?", "SQLite"),
        ("posts that mention sqlite", "sqlite"),
        ("show me the posts that talk about python", "python"),
        ("what posts are on rust", "rust"),
        ("which post mentions the borrow checker?", "borrow checker"),
        ("哪些文章提到了 docker？", "docker"),
        ("哪些文章是关于机器学习的？", "机器学习"),
        ("提到 docker 的文章有哪些？", "docker"),
        ("list posts about docker", "docker"),  # as before
        # the model answered these with titles and web addresses it made up
        ("find posts about vim", "vim"),
        ("search my blog for ssh", "ssh"),
        ("any posts on docker?", "docker"),
        ("are there any posts about rust?", "rust"),
        ("find the bug in my code", None),
        ("search the web for rust", None),
        ("what does the docker post say?", None),
        ("which posts should I update first?", None),
        ("does the docker post mention volumes?", None),
        ("what is a post?", None),
    ],
)
def test_a_request_for_the_posts_on_a_topic_is_a_listing(question: str, topic: str | None) -> None:
    assert listing_topic(question) == topic


@pytest.mark.parametrize("question", ["which posts mention docker?", "哪些文章提到了 docker？"])
async def test_which_posts_mention_a_word_is_answered_from_the_index(
    blog: Path, question: str
) -> None:
    msg, llm = await _answer(blog, [], question)
    assert llm.call_count == 0
    assert msg.data["listed"] == 1 and msg.data["citations"] == ["posts/docker-basics.md"]


async def test_a_summary_with_code_the_post_lacks_is_refused(blog: Path) -> None:
    invented = "It fits a line:\n\n```python\nfrom matplotlib import pyplot as plt\nplt.show()\n```"
    llm = ScriptedModel([invented, invented])
    msg = await run_writing_skill(blog, llm, "Summarize", {"path": "posts/ml-intro.md"})
    assert msg.state == "ERROR" and msg.data["check"] == "code_from_sources", msg.content
    assert llm.call_count == 2


async def test_a_summary_that_changes_a_line_of_the_posts_code_is_refused(blog: Path) -> None:
    """The post's generator came back as a list comprehension, the other lines as written."""
    changed = (
        "It fits a line:\n\n```python\nimport numpy as np\n\n"
        "def fit(x, y, lr=0.01, epochs=1000):\n    w, b = 0.0, 0.0\n"
        "    return [w * v + b for v in x]  # a list\n```"
    )
    llm = ScriptedModel([changed, changed])
    msg = await run_writing_skill(blog, llm, "Summarize", {"path": "posts/ml-intro.md"})
    assert msg.state == "ERROR" and msg.data["check"] == "code_from_sources", msg.content
    assert "return [w * v + b" in msg.data["reason"]


async def test_a_summary_quoting_the_posts_code_passes(blog: Path) -> None:
    quoted = "It fits a line:\n\n```python\ndef fit(x, y, lr=0.01, epochs=1000):\n```"
    llm = ScriptedModel([quoted])
    msg = await run_writing_skill(blog, llm, "Summarize", {"path": "posts/ml-intro.md"})
    assert msg.state == "COMPLETED" and "def fit" in msg.content and llm.call_count == 1


@pytest.mark.parametrize(
    ("request_text", "drafts"),
    [
        ("list my drafts", True),
        ("what drafts do I have?", True),
        ("我有哪些草稿？", True),
        ("列出草稿", True),
        ("list my posts", False),
        ("list posts about drafts", False),  # a topic
    ],
)
def test_a_listing_of_the_drafts_is_told_apart(request_text: str, drafts: bool) -> None:
    assert lists_drafts(request_text) is drafts


async def test_list_my_drafts_lists_the_drafts_alone(tmp_path: Path) -> None:
    """ "list my drafts" was not understood: the drafts are left out of every other listing."""
    blog = copy_fixture("hugo", tmp_path / "hugo")
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.process_input("list my drafts")
        posts = await rt.process_input("list my posts")
    finally:
        await rt.close()
    assert msg.state == "COMPLETED" and llm.call_count == 0, msg.content
    assert msg.content.startswith("Drafts on the blog: 1")
    assert msg.data["citations"] == ["content/posts/toml-post.md"]
    assert "content/posts/toml-post.md" not in posts.data["citations"]
    assert "drafts left out: 1" in posts.content


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("what did I write in September 2024?", "September 2024"),
        ("what did I write about shells?", None),  # a question (its answer names drafts)
        ("what did I write?", ""),
        ("how many posts do I have?", ""),
        ("how many posts did I write in 2024?", "2024"),
        ("我 2024 年写了什么？", "2024 年"),
        ("博客有多少篇文章？", ""),
        ("what did I write wrong in the git post?", None),  # a question, not a list
        ("how many words is the docker post?", None),
        ("list posts about rust 2024 edition", "rust 2024 edition"),  # a topic, not dates
    ],
)
def test_what_did_i_write_and_how_many_posts_are_listings(question: str, topic: str | None) -> None:
    assert listing_topic(question) == topic


@pytest.mark.parametrize(
    ("question", "start", "paths"),
    [
        (
            "what did I write in September 2024?",
            "Posts from September 2024: 2",
            ["posts/notes/weekly-review.md", "posts/ml-intro.md"],
        ),
        ("what did I write in 2019?", "The blog has no posts from 2019.", []),
        ("我 2024 年写了什么？", "日期在 2024 的文章有 11 篇", None),
        ("how many posts do I have?", "Posts on the blog: 14", None),
    ],
)
async def test_a_listing_by_date_or_count_needs_no_model(
    blog: Path, question: str, start: str, paths: list[str] | None
) -> None:
    """ "what did I write in September 2024?" was given to the model, which wrote nothing; "how
    many posts do I have?" listed five search hits."""
    msg, llm = await _answer(blog, [], question)
    assert llm.call_count == 0
    assert msg.content.startswith(start), msg.content
    if paths is not None:
        assert msg.data["citations"] == paths


VIM = (
    "---\ntitle: Vim tips I use daily\ntags: [vim]\n---\nVim is a modal editor. Once you learn "
    "a few motions it becomes very fast.\n\n<!-- more -->\n\n## Motions\n\nUse `w` and `b` to "
    "move by words.\n\n## Macros\n\nRecord a macro with `qa`, stop with `q`, and replay it "
    "with `@a`.\n\n```\nqa0iX<Esc>jq\n```\n"
)


@pytest.fixture
def vim_blog(tmp_path: Path) -> Path:
    blog = tmp_path / "hexo"
    (blog / "source" / "_posts").mkdir(parents=True)
    (blog / "_config.yml").write_text("title: Hexo\n", encoding="utf-8")
    (blog / "source" / "_posts" / "vim-tips.md").write_text(VIM, encoding="utf-8")
    return blog


async def test_a_refused_answer_lists_each_posts_paragraph_on_the_question(
    vim_blog: Path,
) -> None:
    """Refused twice, the answer about macros listed the vim post's first lines ("Vim is a
    modal editor … <!-- more --> ## Motions …"): each post found now shows its paragraph
    holding the most of the question's words, its heading before it, no comment nor code."""
    msg, _ = await _answer(
        vim_blog, [MADE_UP, MADE_UP], question="what does my vim post say about macros?"
    )
    assert msg.data["answered"] is False, msg.content
    assert "Macros: Record a macro with `qa`, stop with `q`, and replay it with `@a`." in (
        msg.content
    )
    assert "<!--" not in msg.content and "Motions" not in msg.content


async def test_an_answer_that_only_names_its_source_is_no_answer(vim_blog: Path) -> None:
    """ "how do I replay a macro in vim?" was answered "The answer is:" and "[2] Vim tips I use
    daily", shown as done: a lead-in and the source's own name say nothing. A question whose
    answer is a post's name is answered by it."""
    msg, llm = await _answer(
        vim_blog,
        ["The answer is:\n[2] Vim tips I use daily", "See [Vim tips I use daily](x.md) [1]."],
        question="how do I replay a macro in vim?",
    )
    assert msg.data["answered"] is False and llm.call_count == 1, msg.content
    assert "The model wrote no answer from the posts found" in msg.content
    assert "replay it with `@a`" in msg.content
    named, _ = await _answer(
        vim_blog,
        ["Vim tips I use daily [1]."],
        question="which post is about vim macros?",
    )
    assert "answered" not in named.data and "Vim tips I use daily" in named.content


@pytest.mark.parametrize(
    ("answer", "question", "says"),
    [
        ("The answer is:\n[2] Vim tips I use daily", "how do I replay a macro in vim?", False),
        ("See [Vim tips I use daily](x.md).", "how do I replay a macro in vim?", False),
        ("Replay it with `@a` [1].", "how do I replay a macro in vim?", True),
        # a name alone may be the answer; several posts too
        ("Vim tips I use daily [1].", "what should I read about vim?", True),
        ("tmux [1].", "what terminal multiplexer do I use?", True),
        ("Vim tips I use daily [1] and tmux [2].", "where should I start?", True),
        ("The answer is Google [1].", "what search engine do I use?", True),  # not "Go"
        # a pointer is the answer where the question asks where to read
        ("See [Vim tips I use daily](x.md) [1].", "where did I write about vim macros?", True),
        ("Read Vim tips I use daily [1].", "what should I read to learn vim?", True),
        ("答案是 Vim tips I use daily [1]。", "怎么录制宏？", False),
    ],
)
def test_a_pointer_to_a_source_is_no_answer_but_a_name_may_be(
    answer: str, question: str, says: bool
) -> None:
    from skillrt.skills.writing.answer import _says_something

    names = ["[Vim tips I use daily](x.md)", "x.md", "Vim tips I use daily", "tmux", "Go"]
    assert _says_something(answer, question, names) is says


async def test_a_reason_said_again_in_the_second_answer_is_no_part_of_it(blog: Path) -> None:
    """Asked again with the reason, the embedded model answered "The vim post is written by
    @a_vim_post: it shows code that none of its sources has (…)": a sentence saying a reason
    of the note again is taken out, and the rest is the answer."""
    echoed = f"The post says: it shows code that none of its sources has (mmatch).\n{GOOD}"
    msg, llm = await _answer(blog, [MADE_UP, echoed])
    assert llm.call_count == 2 and "none of its sources" not in msg.content, msg.content
    assert "bm25()" in msg.content


async def test_an_answer_of_made_up_web_addresses_is_refused(blog: Path) -> None:
    """ "search my blog for ssh" was answered with a reddit thread and a Stack Overflow question
    the model made up, and nothing else, shown as done: an answer that is little but
    addresses no source has fails (its lead-in and made-up links' titles are no more); one
    made-up address beside a real answer is left, not cut out of its sentence."""
    made_up = (
        "1. https://www.reddit.com/r/blogs/b/search-my-blog for your search\n"
        "2. https://stackoverflow.com/questions/48076935/what-is-the-best-way"
    )
    msg, llm = await _answer(blog, [made_up, made_up])
    assert llm.call_count == 2 and msg.data["answered"] is False, msg.content
    assert msg.data["check"] == "addresses_from_sources", msg.content
    titled = (
        "Here are some posts:\n- [SQLite tips - Reddit](https://reddit.com/a)\n- https://b.io/x"
    )
    msg, _ = await _answer(blog, [titled, titled])
    assert msg.data["check"] == "addresses_from_sources", msg.content
    kept, _ = await _answer(blog, [GOOD.replace("([SQLite", "(https://made.up/fts) ([SQLite")])
    assert "answered" not in kept.data and "bm25()" in kept.content, kept.content
