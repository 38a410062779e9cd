"""AnswerQuestion (citations checked, says when the blog has nothing), CodeExplain,
Summarize (map-reduce over long text) and UpdateGraph (per post, incremental)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillrt.llm.base import LLMMessage
from skillrt.skills.writing.answer import code_blocks
from skillrt.skills.writing.summarize import split_parts
from skillrt.testing import Answer, FunctionModel, ModelOptions, ScriptedModel
from tests.blog import POST_COUNT, copy_blog, copy_fixture
from tests.writing_support import EXTRACTION, prompt_kind, writing_runtime


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


async def test_answer_cites_only_posts_that_exist(blog: Path) -> None:
    answer = (
        "借用规则有两条：同一时间只能有一个可变引用或多个不可变引用 "
        "([Rust 借用与引用](posts/rust-borrowing.md))；引用必须有效，见 "
        "[生命周期](./posts/rust-lifetimes.md#省略)。另见 [不存在的文章](posts/made-up.md)、"
        "[[Imaginary Note]]、[[rust-smart-pointers|智能指针]] 和 [官方文档](https://example.com/x)。"
    )
    llm = ScriptedModel([answer])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.process_input("Rust 的借用规则是什么？")
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["citations"] == [
        "posts/rust-borrowing.md",
        "posts/rust-lifetimes.md",
        "posts/rust-smart-pointers.md",
    ]
    assert "[Rust 借用与引用](posts/rust-borrowing.md)" in msg.content
    assert "[生命周期](posts/rust-lifetimes.md)" in msg.content
    assert "made-up.md" not in msg.content and "不存在的文章" in msg.content
    assert "[[Imaginary Note]]" not in msg.content and "Imaginary Note" in msg.content
    assert "example.com" not in msg.content
    for target in re.findall(r"\]\(([^)]+)\)", msg.content):
        assert (blog / target).is_file(), target
    # The model was given the posts found, as sources with their links.
    prompt = llm.calls[0][-1]["content"]
    assert "[Rust 借用与引用](posts/rust-borrowing.md)" in prompt
    await rt.close()


async def test_a_question_the_blog_cannot_answer_says_so_without_the_model(blog: Path) -> None:
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm, answer={"general_fallback": False})
    await rt.initialize()
    msg = await rt.process_input("量子纠缠是什么？")
    assert msg.state == "COMPLETED", msg.content
    assert "博客里没有找到" in msg.content
    assert msg.data["found"] is False and msg.data["citations"] == []
    assert llm.call_count == 0
    await rt.close()


async def test_when_the_sources_do_not_answer_the_model_says_so(blog: Path) -> None:
    llm = ScriptedModel(["NO_ANSWER"])
    rt = writing_runtime(blog, llm, answer={"general_fallback": False})
    await rt.initialize()
    msg = await rt.run_skill("AnswerQuestion", {"question": "Who invented Python generators?"})
    assert msg.data["found"] is False and msg.data["citations"] == []
    assert "The blog has nothing on" in msg.content
    assert llm.call_count == 1
    await rt.close()


async def test_an_answer_without_citations_lists_its_sources(blog: Path) -> None:
    rt = writing_runtime(blog, ScriptedModel(["Use a semaphore to limit concurrency."]))
    await rt.initialize()
    msg = await rt.run_skill("AnswerQuestion", {"question": "How do I limit asyncio concurrency?"})
    assert msg.data["citations"] and all((blog / p).is_file() for p in msg.data["citations"])
    assert "Sources:" in msg.content
    await rt.close()


async def test_a_question_about_a_named_post_is_answered_from_that_post_alone(
    blog: Path,
) -> None:
    """The search's other hits are not given: a question on the Git post was answered with
    the Docker post's steps, and cited it."""
    prompts: list[str] = []

    def answer(messages: list[LLMMessage], options: ModelOptions) -> str:
        prompts.append(str(messages[-1]["content"]))
        return "Short-lived branches ([Git](posts/git-workflow.md))."

    rt = writing_runtime(blog, FunctionModel(answer))
    await rt.initialize()
    msg = await rt.process_input("what does the git workflow post recommend?")
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["sources"] == ["posts/git-workflow.md"]
    assert msg.data["citations"] == ["posts/git-workflow.md"]
    body = (blog / "posts/git-workflow.md").read_text(encoding="utf-8").split("\n---\n", 1)[1]
    assert body.strip()[:200] in prompts[0]  # the post's own text, as written
    assert "docker-basics" not in prompts[0]
    # It is the focus now ("add tags … to it" next asked which post).
    assert rt.conversation().focus == "posts/git-workflow.md"
    # Two posts named: the search decides, as for any question, and the focus stays.
    prompts.clear()
    question = "compare the git workflow post with the docker post"
    msg = await rt.process_input(question)
    assert len(msg.data["sources"]) > 1 and "focus" not in msg.data
    assert rt.conversation().focus == "posts/git-workflow.md"
    await rt.close()


async def test_a_question_on_a_release_is_answered_from_the_post_of_that_release(
    tmp_path: Path,
) -> None:
    """ "what is new in rust 1.77?" was answered from five posts, and the embedded model said
    1.77 brought async closures (another post's subject)."""
    zola = copy_fixture("zola", tmp_path / "zola")
    prompts: list[str] = []

    def answer(messages: list[LLMMessage], options: ModelOptions) -> str:
        prompts.append(str(messages[-1]["content"]))
        return "C-string literals ([Rust 1.77.0](content/Rust-1.77.0.md))."

    rt = writing_runtime(zola, FunctionModel(answer))
    await rt.initialize()
    msg = await rt.run_skill("AnswerQuestion", {"question": "what is new in rust 1.77?"})
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["sources"] == ["content/Rust-1.77.0.md"]
    assert "Async closures" not in prompts[0] and "1.78" not in prompts[0]
    # Two releases named, or one no title holds: the search decides.
    for question in ("what changed between rust 1.77 and 1.78?", "what is new in rust 1.7?"):
        msg = await rt.run_skill("AnswerQuestion", {"question": question})
        assert len(msg.data["sources"]) > 1, question
    await rt.close()


async def test_explain_selected_code(blog: Path) -> None:
    llm = ScriptedModel(["这段代码把 `a` 移动给了 `b`。"])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.process_input(
        "解释这段代码", context={"selected_text": 'let b = a;\nprintln!("{a}");'}
    )
    assert msg.state == "COMPLETED", msg.content
    assert msg.content == "这段代码把 `a` 移动给了 `b`。"
    assert "let b = a;" in llm.calls[0][-1]["content"]
    assert "简体中文" in llm.calls[0][0]["content"]
    await rt.close()


async def test_explain_a_code_block_of_the_current_file(blog: Path) -> None:
    llm = ScriptedModel(["It starts three workers."])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.process_input(
        "explain this code", context={"current_file": "posts/go-concurrency.md"}
    )
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["language"] == "go" and msg.data["source"] == "posts/go-concurrency.md"
    assert "go worker(w, jobs, results)" in llm.calls[0][-1]["content"]
    await rt.close()


def test_code_blocks_and_choice() -> None:
    text = "x\n```python\nprint(1)\n```\ntext\n~~~rust\nfn main() {}\n~~~\n"
    assert code_blocks(text) == [
        {"language": "python", "code": "print(1)"},
        {"language": "rust", "code": "fn main() {}"},
    ]


async def test_explain_without_code_says_so(blog: Path) -> None:
    (blog / "posts" / "prose.md").write_text("---\ntitle: Prose\n---\nNo code here.\n")
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.run_skill("CodeExplain", {"question": "explain", "path": "posts/prose.md"})
    assert msg.data.get("error") == "no_code" and llm.call_count == 0
    assert msg.content.startswith("I found no code to explain in `posts/prose.md`.")
    await rt.close()


async def test_explain_the_code_of_the_post_a_request_names(blog: Path) -> None:
    """ "explain the code in go-concurrency": the post it names, with no post open (it used to
    say there was no code, as if no post were named)."""
    llm = ScriptedModel(["It starts three workers."])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.process_input("explain the code in go-concurrency")
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["source"] == "posts/go-concurrency.md"
    assert "go worker(w, jobs, results)" in llm.calls[0][-1]["content"]


async def test_summarize_a_post(blog: Path) -> None:
    llm = ScriptedModel(["asyncio runs coroutines on one thread."])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.process_input("summarize posts/python-asyncio.md")
    assert msg.state == "COMPLETED", msg.content
    assert msg.content.startswith("Summary of `posts/python-asyncio.md`:")
    assert msg.data["parts"] == 1 and llm.call_count == 1
    assert "asyncio.gather" in llm.calls[0][-1]["content"]
    await rt.close()


async def test_summarize_long_text_in_parts(blog: Path) -> None:
    paragraph = "所有权规则：每个值都有一个所有者；所有者离开作用域时，值被丢弃。" * 20
    long_text = "\n\n".join(f"第 {i} 段。{paragraph}" for i in range(12))
    kinds: list[str] = []

    def model(messages: list[LLMMessage], options: ModelOptions) -> Answer:
        kind = prompt_kind(messages)
        kinds.append(kind)
        if kind == "summary_part":
            number = re.search(r"Part (\d+) of", messages[-1]["content"])
            return f"第 {number.group(1) if number else '?'} 部分：所有权。"
        return "总体：Rust 用所有权管理内存。"

    llm = FunctionModel(model)
    rt = writing_runtime(blog, llm, llm={"n_ctx": 2048})
    await rt.initialize()
    msg = await rt.process_input("总结选中的内容", context={"selected_text": long_text})
    assert msg.state == "COMPLETED", msg.content
    parts = msg.data["parts"]
    assert parts > 1
    assert kinds == ["summary_part"] * parts + ["summary_combine"]
    assert msg.content == "总结：\n\n总体：Rust 用所有权管理内存。"
    # Every request stayed within the budget.
    assert len(llm.calls) == parts + 1
    for call in llm.calls:
        assert sum(len(m["content"]) for m in call) < 4000
    await rt.close()


def test_split_parts_respects_the_budget() -> None:
    text = "\n\n".join(["word " * 300] * 10) + "\n\n" + "长" * 5000
    parts = split_parts(text, 400)
    from skillrt.llm.base import estimate_tokens

    assert all(estimate_tokens(p) <= 400 for p in parts)
    assert "".join(parts).replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(
        " ", ""
    )


async def test_summarize_pasted_text_and_nothing(blog: Path) -> None:
    rt = writing_runtime(blog, ScriptedModel(["A short summary.", "摘要。"]))
    await rt.initialize()
    pasted = "Summarize this: " + "Generators yield values lazily and keep their state. " * 3
    msg = await rt.run_skill("Summarize", {"text": pasted})
    assert msg.data["source"] == "text" and msg.content.endswith("A short summary.")
    empty = await rt.run_skill("Summarize", {})
    assert empty.state == "WAITING_INPUT" and "Which post should I summarise?" in empty.content
    empty = await rt.process_input("qqqq zzzz")
    assert empty.data.get("error") == "no_post_chosen"
    url = await rt.run_skill("Summarize", {"url": "https://example.com"})
    assert url.data.get("error") == "url_not_supported"
    pasted_with_url = await rt.process_input(
        "总结一下这段文字：异步编程让一个线程同时处理许多网络请求，详见 example.com 上的文档，"
        "关键是不要在协程里阻塞事件循环。"
    )
    assert pasted_with_url.data.get("source") == "text", pasted_with_url.content
    await rt.close()


async def test_update_graph_for_the_whole_blog_then_nothing_to_do(blog: Path) -> None:
    calls: list[str] = []

    def model(messages: list[LLMMessage], options: ModelOptions) -> Answer:
        assert prompt_kind(messages) == "extract"
        title = re.search(r"Title: (.*)", messages[-1]["content"])
        calls.append(title.group(1) if title else "?")
        return EXTRACTION

    llm = FunctionModel(model)
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    events: list[str] = []
    rt.on("task:progress", lambda e: events.append(e.data["message"]))
    msg = await rt.process_input("更新知识图谱")
    assert msg.state == "COMPLETED", msg.content
    assert len(calls) == POST_COUNT  # one extraction per post
    assert msg.data["entities_added"] >= 1 and msg.data["links_added"] > POST_COUNT
    assert "新增实体" in msg.content
    assert rt.memory.graph.entity("Copy trait") is not None
    assert any("提取实体 1/" in m for m in events)

    again = await rt.run_skill("UpdateGraph", {})
    assert len(calls) == POST_COUNT  # unchanged posts are skipped
    assert again.data["skipped"] == POST_COUNT
    assert again.data["entities_added"] == 0 and again.data["links_added"] == 0

    # One post changed: only that one is extracted again.
    post = blog / "posts" / "git-workflow.md"
    post.write_text(post.read_text() + "\nUse git bisect.\n")
    one = await rt.run_skill("UpdateGraph", {"path": "posts/git-workflow.md", "force": True})
    assert len(calls) == POST_COUNT + 1
    assert one.data["posts"][0]["path"] == "posts/git-workflow.md"
    missing = await rt.run_skill("UpdateGraph", {"path": "posts/none.md"})
    assert missing.data.get("error") == "not_found"
    await rt.close()


async def test_update_graph_survives_a_bad_extraction(blog: Path) -> None:
    rt = writing_runtime(blog, FunctionModel(lambda m, o: "not json at all"))
    await rt.initialize()
    msg = await rt.run_skill("UpdateGraph", {"path": "posts/git-workflow.md"})
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["errors"] and "schema" in msg.data["errors"][0]["error"]
    assert "skipped" in msg.content
    await rt.close()


@pytest.mark.parametrize(
    ("question", "post"),
    [
        ("what is the photo walk post about?", "the photo walk post"),
        ("what did the post about bread baking say?", "the post about bread baking"),
        ("烘焙那篇文章讲了什么？", "烘焙那篇文章"),
    ],
)
async def test_a_question_on_a_post_the_blog_lacks_gets_no_general_answer(
    tmp_path: Path, question: str, post: str
) -> None:
    """The embedded model's general answer to "what is the photo walk post about?" (a post the
    blog does not have) was "a documentary film titled Frozen": a general answer cannot be
    about one of the user's posts."""
    blog = copy_blog(tmp_path / "blog")
    llm = ScriptedModel([])  # the general fallback is on: any call fails the test
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    msg = await rt.run_skill("AnswerQuestion", {"question": question})
    await rt.close()
    assert msg.state == "COMPLETED" and llm.call_count == 0, msg.content
    assert msg.data["found"] is False and msg.data["post_asked_about"] == post
    assert "general" not in msg.data


@pytest.mark.parametrize(
    "question",
    ["what is the ideal length for a blog post?", "how do I end my next blog post well?"],
)
def test_a_question_on_posts_in_general_names_no_post(question: str) -> None:
    from skillrt.skills.writing.answer import _a_post_asked_about

    assert _a_post_asked_about(question) is None  # (the general answer stays)


@pytest.mark.parametrize(
    "question",
    ["what did the intro to go post say?", "what's in my trip to japan post?"],
)
def test_a_post_whose_name_holds_small_words_is_still_one_post(question: str) -> None:
    from skillrt.skills.writing.answer import _a_post_asked_about

    assert _a_post_asked_about(question) is not None


async def test_a_question_on_a_web_page_gets_no_general_answer(tmp_path: Path) -> None:
    """ "what does http://…/sqlite.html say about checkpoints?" was answered in general: "a
    cross-site request for authentication and authorization"."""
    blog = copy_blog(tmp_path / "web")
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    try:
        msg = await rt.run_skill(
            "AnswerQuestion", {"question": "what is https://sqlite.org/wal.html about?"}
        )
    finally:
        await rt.close()
    assert msg.data["url"] == "https://sqlite.org/wal.html", msg.content
    assert "research https://sqlite.org/wal.html" in msg.content
    assert llm.call_count == 0


async def test_an_explanation_that_only_shows_the_code_is_refused(blog: Path) -> None:
    """The embedded model "explained" the Hugo shells post's code with "The code in the shell
    is:" and the block again (a line made up, never closed), shown as done."""
    shown = "The code in the shell is:\n```go\nfunc worker(id int) {\n    fmt.Println(id)"
    llm = ScriptedModel([shown, shown])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.run_skill(
            "CodeExplain", {"question": "explain it", "path": "posts/go-concurrency.md"}
        )
        assert msg.state == "ERROR" and llm.call_count == 2, msg.content
        assert msg.data["check"] == "explained", msg.data
    finally:
        await rt.close()
    good = "It starts three workers that double each job they read."
    rt = writing_runtime(blog, ScriptedModel([shown, good]))
    await rt.initialize()
    try:
        msg = await rt.run_skill(
            "CodeExplain", {"question": "explain it", "path": "posts/go-concurrency.md"}
        )
    finally:
        await rt.close()
    assert msg.state == "COMPLETED" and msg.content.startswith(good), msg.content
    assert msg.data["truncated_repetition"] is False and msg.data["checks"], msg.data
