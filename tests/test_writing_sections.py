"""An article from a small model's answers: its outline without echoes and placeholders, and
each section taken out of an answer that is the whole article again (what SmolLM2-135M, the
embedded model, writes). Before, such an article was refused, or saved with the title line
and every section's text in each section."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import frontmatter
import pytest

from skillrt.llm.base import LLMMessage, LLMResult, Usage
from skillrt.skills.writing.checks import Generated
from skillrt.skills.writing.repeats import no_repeated_paragraphs, not_repetitive
from skillrt.skills.writing.sections import completed, repaired_sections, section_of
from skillrt.skills.writing.write import Outline, OutlineSection, _clean_section, choose_title
from skillrt.testing import Answer, FunctionModel, ModelOptions
from tests.blog import copy_blog
from tests.writing_support import EXTRACTION, prompt_kind, writing_runtime

OUTLINE = Outline(
    title="Python Decorators: A Beginner's Guide",
    sections=[
        OutlineSection(heading="What is a decorator?"),
        OutlineSection(heading="Writing your first decorator"),
        OutlineSection(heading="Decorators with arguments"),
    ],
)
BODIES = [
    "A decorator takes a function and returns a new one.",
    "Define a wrapper, return it, and put `@my_decorator` above the function.\n\n"
    "```python\n@my_decorator\ndef greet():\n    pass\n```",
    "A decorator factory takes the arguments and returns the decorator.",
]
WHOLE = (
    "Python Decorators: A Beginner's Guide\n\n"
    "# Python Decorators: A Beginner's Guide\n\n"
    f"## What is a decorator?\n\n{BODIES[0]}\n\n"
    f"## Writing your first decorator:\n\n{BODIES[1]}\n\n"
    f"### A note on names\n\nUse functools.wraps.\n\n"
    f"## 3. Decorators with arguments\n\n{BODIES[2]}\n"
)


@pytest.mark.parametrize("index", [0, 2])
def test_a_section_is_taken_out_of_the_whole_article(index: int) -> None:
    text, to_the_end = section_of(WHOLE, OUTLINE, index)
    assert text == BODIES[index]
    assert to_the_end is (index == 2)


def test_a_section_keeps_its_subheadings_and_code() -> None:
    text, to_the_end = section_of(WHOLE, OUTLINE, 1)
    assert text == f"{BODIES[1]}\n\n### A note on names\n\nUse functools.wraps."
    assert to_the_end is False


def test_without_its_heading_a_section_ends_where_another_begins() -> None:
    answer = (
        f"Python Decorators: A Beginner's Guide\n\n{BODIES[0]}\n\n"
        "**Writing your first decorator**\n\nMore."
    )
    assert section_of(answer, OUTLINE, 0) == (BODIES[0], False)


def test_sections_labelled_in_plain_lines_are_told_apart() -> None:
    answer = (
        "Title: Python Decorators: A Beginner's Guide\n\nIntroduction:\nA start.\n\n"
        f"Section 1: What is a decorator?\n{BODIES[0]}\n\n"
        f"Section 2: Writing your first decorator\n{BODIES[1]}\n"
    )
    assert section_of(answer, OUTLINE, 0) == (BODIES[0], False)
    assert section_of(answer, OUTLINE, 1) == (BODIES[1], True)
    zh = Outline(title="装饰器入门", sections=[OutlineSection(heading="什么是装饰器"),
                                              OutlineSection(heading="第一个装饰器")])  # fmt: skip
    answer = "第一节：什么是装饰器\n装饰器包装函数。\n\n第二节：第一个装饰器\n先写包装函数。"
    assert section_of(answer, zh, 1) == ("先写包装函数。", True)
    assert section_of(answer, zh, 0) == ("装饰器包装函数。", False)


def test_a_section_the_model_named_its_own_way_is_found() -> None:
    """SmolLM2-135M, asked for "A worked example", wrote the whole article under headings of
    its own, the prompt's title line echoed first; its "### Example" is that section."""
    outline = Outline(
        title="Python Decorators",
        sections=[
            OutlineSection(heading="Overview"),
            OutlineSection(heading="How it works"),
            OutlineSection(heading="A worked example"),
        ],
    )
    answer = (
        "Python Decorators (topic: python decorators; style: technical blog post)\n"
        "## Python Decorators\n### What is a decorator?\nA wrapper.\n"
        "### How it works\nIt wraps.\n### Example\n`@timed` times a call.\n"
        "### Key points:\nWrap things."
    )
    assert section_of(answer, outline, 2) == ("`@timed` times a call.", False)
    assert section_of(answer, outline, 1) == ("It wraps.", False)
    # "Overview" is named nowhere: the text before the title's heading, its echo left out
    assert section_of("Python Decorators (topic: x)\nAn intro.\n## How it works\nIt wraps.",
                      outline, 0) == ("An intro.", False)  # fmt: skip


def test_an_answer_of_one_section_is_left_as_it_is() -> None:
    answer = f"{BODIES[0]}\n\n### Why it matters\n\nIt keeps code short."
    assert section_of(answer, OUTLINE, 0) == (answer, True)


def test_an_answer_of_headings_only_is_left_for_the_checks() -> None:
    answer = "# Python Decorators: A Beginner's Guide\n\n## What is a decorator?\n"
    assert section_of(answer, OUTLINE, 0) == (answer, True)


def test_a_cut_off_text_ends_at_its_last_whole_sentence() -> None:
    text = "One sentence here, with more words. Another one follows, as long! And a third, cut"
    assert completed(text) == "One sentence here, with more words. Another one follows, as long!"
    assert completed("Short. And then a very long sentence that goes on and on and on") is None
    assert completed(text, min_words=12) is None  # (11 words kept)
    code = "Some text first, ended.\n\n```python\ndef f():\n    return 1. \n    x = 2"
    assert completed(code) is None  # (a code block's line is no sentence end)
    closed = "Text here.\n\n```python\nx = 1\n```\n\nAnd a rest that is cut"
    assert completed(closed) == "Text here.\n\n```python\nx = 1\n```"


def test_sections_that_name_nothing_are_replaced_in_their_place() -> None:
    sections = [
        OutlineSection(heading="git rebase", points=["git_rebase_description"]),
        OutlineSection(heading="git_rebase_description"),
        OutlineSection(heading="Rebasing onto main", points=["1. Rebasing onto main", "fetch"]),
        OutlineSection(heading="rebasing onto MAIN"),
        OutlineSection(heading="Fixing conflicts", points=["1. ours", "2. ours", "theirs"]),
        OutlineSection(heading="2.1.0.4.6", points=["1.1.1.1.1.1."]),
        OutlineSection(heading="Pushing", points=["1.1.1.1.1.1.1.", "- 2.1.0.3.3.4"]),
        # web addresses alone (made up), not the names of files or tools
        OutlineSection(
            heading="Remote work",
            points=[
                "tmux.com",
                "- tmux.io/remote",
                "https://x.dev",
                "Node.js",
                "config.toml",
                "Fly.io",
            ],
        ),
    ]
    repaired, added = repaired_sections(sections, "en")
    assert [(s.heading, s.points) for s in repaired] == [
        ("git rebase", []),  # named like the article: a prompt the model answers, kept
        ("Overview", []),
        ("Rebasing onto main", ["fetch"]),
        ("How it works", []),
        ("Fixing conflicts", ["1. ours", "theirs"]),
        ("A worked example", []),
        ("Pushing", []),
        ("Remote work", ["Node.js", "config.toml", "Fly.io"]),
    ]  # as many sections as the model gave: as many calls
    assert added == ["Overview", "How it works", "A worked example"]
    zh, added = repaired_sections(
        [OutlineSection(heading="2.1.0"), OutlineSection(heading="Rust 借用与引用 (posts/b.md)")],
        "zh",
    )
    assert [s.heading for s in zh] == ["概述", "工作原理"] and added == ["概述", "工作原理"]
    kept, added = repaired_sections(sections[1:2], "fr")
    assert kept == sections[1:2] and added == []  # no fillers in that language: as it was


class _WholeArticleModel:
    """SmolLM2-135M's habits: an outline of echoes and placeholders, and for every section
    the whole article again, cut off at the length limit in the last one."""

    def __init__(self, outline: dict[str, Any]) -> None:
        self.outline = outline

    def __call__(self, messages: list[LLMMessage], options: ModelOptions) -> Answer:
        kind = prompt_kind(messages)
        if kind == "outline":
            return self.outline
        if kind == "extract":
            return EXTRACTION
        if kind == "section":
            headings = re.findall(r"^- (.+)$", messages[-1]["content"], re.M)
            parts = [f"## {h}\n\nAll about {h.lower()}. It is explained here." for h in headings]
            return "Decorators\n\n# Decorators\n\n" + "\n\n".join(parts) + "\n\nAnd then the tex"
        return "ok"


async def test_an_article_from_a_small_models_answers_is_saved_whole(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    outline = {
        "title": "Decorators",
        "sections": [
            {"heading": "Decorators", "points": ["1. Decorators", "2. Decorators"]},
            {"heading": "What is a decorator?", "points": ["1. What is a decorator?"]},
            {"heading": "decorators_description"},
        ],
    }
    rt = writing_runtime(blog, FunctionModel(_WholeArticleModel(outline)))
    msg = await rt.process_input("write an article about decorators")
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["sections"] == ["Decorators", "What is a decorator?", "Overview"]
    assert msg.data["filled_sections"] == ["Overview"]
    assert "these headings are skillrt's: Overview" in msg.content
    body = frontmatter.load(blog / msg.data["path"]).content
    assert body == (
        "## Decorators\n\nAll about decorators. It is explained here.\n\n"
        "## What is a decorator?\n\nAll about what is a decorator?. It is explained here.\n\n"
        "## Overview\n\nAll about overview. It is explained here."
    )
    await rt.close()


def _cut_off_model(section: str) -> FunctionModel:
    """Every section answered with ``section``, as if stopped at the call's token limit."""

    def answer(messages: list[LLMMessage], options: ModelOptions) -> Answer:
        kind = prompt_kind(messages)
        if kind == "outline":
            sections = [{"heading": "What it is"}, {"heading": "How to write one"}]
            return {"title": "Decorators", "sections": sections}
        if kind == "extract":
            return EXTRACTION
        if kind == "section":
            return LLMResult(section, usage=Usage(completion_tokens=options.max_tokens or 0))
        return "ok"

    return FunctionModel(answer)


async def test_a_section_cut_off_at_the_limit_ends_at_its_last_sentence(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    whole = " ".join(f"Point {i} says a little more about how decorators wrap." for i in range(16))
    rt = writing_runtime(blog, _cut_off_model(whole + " And then the te"))
    msg = await rt.process_input("write an article about decorators")
    assert msg.state == "COMPLETED", msg.content
    body = frontmatter.load(blog / msg.data["path"]).content
    assert body == f"## What it is\n\n{whole}\n\n## How to write one\n\n{whole}"
    await rt.close()


async def test_a_short_section_cut_off_at_the_limit_is_refused(tmp_path: Path) -> None:
    """Ending at the last whole sentence is for a section's worth of text (100 words): a
    short text cut off mid-word fails ``not_degenerate`` as before."""
    blog = copy_blog(tmp_path / "blog")
    text = "Ownership moves a value. Each value has one owner, and it is dropped at the end. Mo"
    rt = writing_runtime(blog, _cut_off_model(text))
    msg = await rt.process_input("write an article about decorators")
    await rt.close()
    assert msg.state == "ERROR" and msg.data["check"] == "not_degenerate", msg.content
    assert "cut off mid-word" in msg.data["reason"]


async def test_a_section_cut_off_early_in_its_last_sentence_is_refused(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    rt = writing_runtime(blog, _cut_off_model("Short. " + "and on " * 30 + "and o"))
    msg = await rt.process_input("write an article about decorators")
    assert msg.state == "ERROR" and msg.data["check"] == "not_degenerate", msg.content
    assert "cut off mid-word" in msg.data["reason"]
    await rt.close()


async def test_a_section_of_headings_only_is_refused_not_saved_as_its_heading(
    tmp_path: Path,
) -> None:
    """A section whose answer holds nothing but headings ("### 9.", its own heading again)
    is empty. Before, it became its own heading ("## How it works\n\nHow it works") and
    passed its checks."""
    blog = copy_blog(tmp_path / "blog")

    def answer(messages: list[LLMMessage], options: ModelOptions) -> Answer:
        kind = prompt_kind(messages)
        if kind == "outline":
            sections = [{"heading": "What it is"}, {"heading": "How it works"}]
            return {"title": "Decorators", "sections": sections}
        if kind == "section":
            if "Write section 1" in messages[-1]["content"]:
                return "A decorator wraps a function."
            return "## How it works\n\n### 9.\n\n### 10\n"
        return EXTRACTION if kind == "extract" else "ok"

    rt = writing_runtime(blog, FunctionModel(answer))
    msg = await rt.process_input("write an article about decorators")
    assert msg.state == "ERROR" and msg.data["check"] == "not_degenerate", msg.content
    assert msg.data["reason"] == "the text is empty"
    assert not list(blog.rglob("decorators*.md"))
    await rt.close()


async def test_an_article_whose_loop_was_asked_again_has_no_loop_note(tmp_path: Path) -> None:
    """A section's first answer loops (the guard cuts it; ``not_degenerate`` refuses it) and
    the second is good: the saved article holds no loop, so the reply does not say "the text
    above is what came before" and ``truncated_repetition`` is False. Before, it said both."""
    blog = copy_blog(tmp_path / "blog")
    asked: list[str] = []

    def answer(messages: list[LLMMessage], options: ModelOptions) -> Answer:
        kind = prompt_kind(messages)
        if kind == "outline":
            sections = [{"heading": "What it is"}, {"heading": "How it works"}]
            return {"title": "Decorators", "sections": sections}
        if kind == "section":
            asked.append(messages[-1]["content"])
            if len(asked) == 1:
                return "A decorator wraps a function.\n" + "It wraps and it wraps again.\n" * 80
            return "A decorator wraps a function and returns the wrapper."
        return EXTRACTION if kind == "extract" else "ok"

    rt = writing_runtime(blog, FunctionModel(answer))
    msg = await rt.process_input("write an article about decorators")
    assert msg.state == "COMPLETED", msg.content
    assert len(asked) == 3  # the first section asked again once
    assert msg.data["truncated_repetition"] is False
    assert "stopped there" not in msg.content
    body = frontmatter.load(blog / msg.data["path"]).content
    assert "wraps again" not in body
    await rt.close()


@pytest.mark.parametrize(
    ("proposed", "topic", "title"),
    [
        ("Python Decorators: A Beginner's Guide to", "python decorators",
         "Python Decorators: A Beginner's Guide"),
        ("Rust ownership and", "rust ownership", "Rust ownership"),
        ("Tips on Git:", "git", "Tips on Git"),
        ("Rust 所有权与", "rust", "Rust 所有权"),
        ("Git: what to look for", "git", "Git: what to look for"),  # a whole title
        ("Logging in", "logging", "Logging in"),
    ],
)  # fmt: skip
def test_a_title_cut_off_at_the_length_cap_loses_its_dangling_word(
    proposed: str, topic: str, title: str
) -> None:
    assert choose_title(proposed, topic, []) == title


def test_a_code_block_left_open_is_closed_or_dropped() -> None:
    assert _clean_section("An example:\n```python\nx = 1") == "An example:\n```python\nx = 1\n```"
    assert _clean_section("The example follows:\n```\n") == "The example follows:"
    whole = "Ok:\n````md\n```\ninner\n```\n````\nDone."
    assert _clean_section(whole) == whole


@pytest.mark.parametrize(
    ("section", "kept"),
    [
        # SmolLM2-135M ended an article with "Here is a new one:" and nothing after it.
        ("It works well.\n\nWe covered it before. Here is a new one:",
         "It works well.\n\nWe covered it before."),
        ("It works well.\n\nHere is an example:\n\n", "It works well."),
        ("第一段。\n\n步骤如下：", "第一段。"),
        ("The example follows:\n```\n", "The example follows:"),  # all it says: the checks'
        ("Steps:\n\n1. one\n2. two", "Steps:\n\n1. one\n2. two"),
        ("Use it like this:\n```py\nx = 1\n```", "Use it like this:\n```py\nx = 1\n```"),
        ("See this: it works.", "See this: it works."),
    ],
)  # fmt: skip
def test_a_last_sentence_that_leads_in_to_nothing_is_dropped(section: str, kept: str) -> None:
    assert _clean_section(section) == kept


TEA = (
    "The article will discuss different methods of using green tea, including making it with "
    "a tea bag or loose leaves, which can be done in various ways such as boiling, steeping, "
    "and adding sweeteners."
)
COFFEE = (
    "The science behind coffee has been extensively researched by scientists who study it. "
    "They have found that the caffeine present in coffee comes from the leaves of the plant. "
    "This makes coffee a drink worth a closer look."
)


def test_paragraphs_nearly_said_before_are_dropped() -> None:
    """The embedded model's tea article saved two paragraphs a word apart, and its coffee
    article ended with the first sentence of the paragraph before; parallel paragraphs that
    differ in their names are the article's own."""
    tea_again = TEA.replace("loose leaves", "loose leaf")
    text = f"Tea is old.\n\n{TEA}\n\n{tea_again}\n\n{COFFEE}\n\n{COFFEE.rsplit(' This', 1)[0]}"
    verdict = no_repeated_paragraphs([])(Generated(text=text))
    assert verdict.reason == "dropped 2 paragraph(s) the article already holds"
    assert verdict.text == f"Tea is old.\n\n{TEA}\n\n{COFFEE}"
    ubuntu = (
        "On Ubuntu, install the package with sudo apt install nginx, then start the service "
        "with systemctl start nginx and check its status."
    )
    fedora = ubuntu.replace("Ubuntu", "Fedora").replace("apt", "dnf")
    assert no_repeated_paragraphs([ubuntu])(Generated(text=fedora)).text is None


def test_paragraphs_the_article_already_holds_are_dropped() -> None:

    earlier = ["In the past, bread was made from flour and water.\n\nIt rose slowly."]
    check = no_repeated_paragraphs(earlier)
    text = (
        "In the past,  bread was made from flour and water.\n\n"
        "The modern way ferments it.\n\n```\nflour + water\n```\n\n"
        "The modern way ferments it.\n\n```\nflour + water\n```"
    )
    verdict = check(Generated(text=text))
    assert verdict.passed and verdict.reason == "dropped 2 paragraph(s) the article already holds"
    assert verdict.text == (
        "The modern way ferments it.\n\n```\nflour + water\n```\n\n```\nflour + water\n```"
    )
    # nothing of its own: left as it is (the section is still the model's answer)
    copy = "In the past, bread was made from flour and water."
    assert check(Generated(text=copy)).text is None


VIM_LIST = (  # SmolLM2-135M's section of a post on vim macros (two items said twice)
    "- vim macro: a tool that can be used to create and manage text.\n"
    "- vim supports multiple programming languages including python.\n"
    "- vim is a powerful command line tool.\n"
    "- vim supports multiple programming languages including python.\n"
    "- vim macros are a set of commands that perform tasks.\n"
    "- vim is a powerful command line tool.\n"
    "- vim records keystrokes into a register."
)


def test_lines_said_word_for_word_again_are_dropped() -> None:
    verdict = no_repeated_paragraphs([])(Generated(text=VIM_LIST))
    assert verdict.passed and verdict.reason == "dropped 2 line(s) said before"
    assert verdict.text is not None and verdict.text.splitlines() == [
        "- vim macro: a tool that can be used to create and manage text.",
        "- vim supports multiple programming languages including python.",
        "- vim is a powerful command line tool.",
        "- vim macros are a set of commands that perform tasks.",
        "- vim records keystrokes into a register.",
    ]
    # A line an earlier section said, under another list mark, goes too.
    earlier = ["Intro.\n\n1. vim records keystrokes into a register."]
    items = "\n".join(VIM_LIST.splitlines()[4:])
    verdict = no_repeated_paragraphs(earlier)(Generated(text=items))
    assert verdict.reason == "dropped 1 line(s) said before"
    assert verdict.text == "\n".join(VIM_LIST.splitlines()[4:6])
    # Short lines, headings, table rows and code may recur.
    kept = (
        "### Step one here now\nRun it once.\n\n### Step one here now\nRun it twice.\n\n"
        "| one | two | three | four |\n| one | two | three | four |\n\n"
        "```\nx = 1 + 2 + 3\nx = 1 + 2 + 3\n```"
    )
    assert no_repeated_paragraphs([])(Generated(text=kept)).text is None


GIT_ITEMS = (  # SmolLM2-135M's Chinese section on git rebase: one item said twice, a char apart
    "你可以使用git安装和部署代码，在本文中提到了git的安装和部署。\n\n"
    "1. Git is a multi-purpose tool that can help you to manage your code.\n"
    "2. 这种工作原理，我们将来讲过是git的主题。"
    "你可以使用git安装和部罚编码；,在本文中提到了git安装和部罚编码.\n"
    "2. 这种工作原能，我们将来讲过是git的主题。"
    "你可以使用git安装和部罚编码；,在本文中提到了git安装和部罚编码."
)


def test_a_line_said_again_right_after_itself_a_character_apart_is_dropped() -> None:
    verdict = no_repeated_paragraphs([])(Generated(text=GIT_ITEMS))
    assert verdict.passed and verdict.reason == "dropped 1 line(s) said before"
    assert verdict.text == GIT_ITEMS.rsplit("\n", 1)[0]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # a negation, words swapped, two characters changed: they say something else
        (
            "It is safe to run this on a shared branch of the repo.",
            "It is not safe to run this on a shared branch of the repo.",
        ),
        (
            "Use git merge to combine two branches into one history.",
            "Use git rebase to combine two branches into one history.",
        ),
        (
            "在私有分支上使用 git rebase 来整理提交历史。",
            "在公共分支上使用 git rebase 来整理提交历史。",
        ),
        (
            "可以在公共分支上使用 git rebase 整理历史记录。",
            "不可以在公共分支上使用 git rebase 整理历史记录。",
        ),
        (  # a letter apart, the opposite said
            "After the merge, it is now safe to delete the feature branch.",
            "After the merge, it is not safe to delete the feature branch.",
        ),
        # a number or a piece of code apart
        (
            "Port 8080 serves the admin API for the internal dashboard.",
            "Port 8081 serves the admin API for the internal dashboard.",
        ),
        (
            "Call `task.cancel()` to stop the coroutine at its next await point.",
            "Call `task.cancal()` to stop the coroutine at its next await point.",
        ),
    ],
)
def test_lines_alike_that_say_something_else_are_kept(first: str, second: str) -> None:
    text = f"- {first}\n- {second}\n- And a line of its own, here at the end."
    assert no_repeated_paragraphs([])(Generated(text=text)).text is None
    # an earlier section's line a character apart: not dropped either (only word for word)
    earlier = [f"- {first}"]
    assert no_repeated_paragraphs(earlier)(Generated(text=f"- {second}\n- Its own.")).text is None


def test_list_items_with_nothing_in_them_are_dropped_outside_code() -> None:
    assert (
        _clean_section("说明：\n\n1. 第一点。\n2. 第二点。\n\n4.")
        == "说明：\n\n1. 第一点。\n2. 第二点。"
    )
    assert _clean_section("- one thing\n-\n- another") == "- one thing\n- another"
    code = "Run:\n\n```text\n1.\n-\n```"
    assert _clean_section(code) == code


def test_a_loop_of_lines_is_left_for_not_repetitive_to_refuse() -> None:
    loop = "\n".join(["- the same line is said again here"] * 5 + ["- and one of its own"])
    verdict = no_repeated_paragraphs([])(Generated(text=loop))
    assert verdict.text is None  # not trimmed to one line: the loop is asked for again
    assert not not_repetitive(Generated(text=loop)).passed


def test_lines_of_quote_marks_alone_are_dropped_outside_code() -> None:
    assert _clean_section('- vim records keystrokes.\n"\n"""\n') == "- vim records keystrokes."
    assert _clean_section('"\n"""') == ""  # nothing else: not_degenerate refuses it
    docstring = 'It reads:\n\n```python\ndef f():\n    """\n    Doc.\n    """\n```'
    assert _clean_section(docstring) == docstring


async def test_a_section_opening_with_the_one_before_keeps_only_its_own(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    first = "In the past, bread was made from flour and water."

    def answer(messages: list[LLMMessage], options: ModelOptions) -> Answer:
        kind = prompt_kind(messages)
        if kind == "outline":
            sections = [{"heading": "History"}, {"heading": "Fermentation"}, {"heading": "Ovens"}]
            return {"title": "Sourdough", "sections": sections}
        if kind == "section":
            number = re.search(r"Write section (\d)", messages[-1]["content"])
            if number and number.group(1) == "2":
                return f"{first}\n\nFermentation makes it rise."
            return first
        return EXTRACTION if kind == "extract" else "ok"

    rt = writing_runtime(blog, FunctionModel(answer))
    msg = await rt.process_input("write an article about sourdough")
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    body = frontmatter.load(blog / msg.data["path"]).content
    assert body == (
        f"## History\n\n{first}\n\n## Fermentation\n\nFermentation makes it rise.\n\n"
        f"## Ovens\n\n{first}"
    )


OVERVIEW_SEEN = (
    "- In the context of programming, a decorator is an object that takes another object.\n"
    "- This allows you to create reusable functions by modifying existing code.\n"
    + "".join(
        f"# {n}. (your choice)\nThe final section ended with:\n"
        "- In the context of programming, a decorator is an object that takes another object.\n"
        "- This allows you to create reusable functions by modifying existing code.\n"
        for n in range(3, 10)
    )
)  # what SmolLM2-135M's "Overview" held at stop 45, before these checks


def test_lines_said_again_with_a_changing_number_are_repetitive() -> None:
    from skillrt.skills.writing.repeats import not_repetitive

    verdict = not_repetitive(Generated(text=OVERVIEW_SEEN))
    assert not verdict.passed and "lines say again what it said" in verdict.reason
    steps = "\n".join(f"Step {n}: run the tests and read what they say." for n in range(1, 3))
    assert not_repetitive(Generated(text=steps)).passed  # said twice: not a loop
    prose = "Decorators wrap functions.\n\nThey keep the call the same.\n\nUse functools.wraps."
    assert not_repetitive(Generated(text=prose)).passed
    code = "```\n" + "print('the same line of code here')\n" * 6 + "```"
    assert not_repetitive(Generated(text=code)).passed


async def test_a_section_of_reworded_prompt_lines_in_a_loop_is_refused(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")

    def answer(messages: list[LLMMessage], options: ModelOptions) -> Answer:
        kind = prompt_kind(messages)
        if kind == "outline":
            return {"title": "Decorators", "sections": [{"heading": "Overview"}]}
        if kind == "section":
            return OVERVIEW_SEEN
        return EXTRACTION if kind == "extract" else "ok"

    rt = writing_runtime(blog, FunctionModel(answer))
    msg = await rt.process_input("write an article about decorators")
    await rt.close()
    assert msg.state == "ERROR" and msg.data["outcome"] == "refused", msg.content
    failed = {c["name"] for c in msg.data["checks"] if not c["passed"]}
    assert failed >= {"no_scaffolding", "not_repetitive"}
    assert not list(blog.rglob("decorators*.md"))


async def test_an_edit_of_a_post_that_says_a_prompt_marker_is_saved(tmp_path: Path) -> None:
    """A post of the author's own holds "Key points:" and "(your choice)", which the skills'
    prompts also use. Kept by an edit, they are the author's words, not scaffolding. Before,
    the edit was refused by ``no_scaffolding``."""
    from skillrt.testing import ScriptedModel

    blog = copy_blog(tmp_path / "blog")
    post = blog / "posts" / "notes.md"
    body = "Key points:\n\n- Pick a theme colour (your choice).\n- Keep it short.\n"
    post.write_text(f"---\ntitle: Notes\n---\n\n{body}", encoding="utf-8")
    edited = body + "- Write every day.\n"
    rt = writing_runtime(blog, ScriptedModel([edited]))
    msg = await rt.run_skill(
        "EditContent", {"instruction": "add one more point", "path": "posts/notes.md"}
    )
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert post.read_text(encoding="utf-8").endswith("- Write every day.\n")


@pytest.mark.parametrize(
    ("answer", "passed"),
    [
        ("The photo walk post about a walk along the river is about a walk along the river.",
         False),
        ("容器把应用和它的依赖打包在一起，容器把应用和它的依赖打包在一起。", False),
        ("The post says to rebase on main before merging, and to squash fix-up commits before "
         "merging.", True),
        ("It ranks `MATCH` results with `bm25()` ([SQLite FTS5](posts/sqlite-fts5.md)).", True),
        # four words again, and a source cited twice: a good short answer
        ("The docker post says volumes persist data. The docker post says bind mounts are "
         "faster.", True),
        ("Volumes persist ([Docker](posts/docker.md)); so do mounts ([Docker](posts/docker.md)).",
         True),
        (" ".join(["a walk along the river"] * 2 + ["and more words"] * 12), True),  # long
    ],
)  # fmt: skip
def test_a_short_answer_saying_the_same_words_twice_is_circular(answer: str, passed: bool) -> None:
    from skillrt.skills.writing.repeats import not_circular

    verdict = not_circular(Generated(text=answer))
    assert verdict.passed is passed, verdict.reason
    assert (
        passed or "“容器把应用和它的依赖打包在一起”" in verdict.reason or "river" in verdict.reason
    )


@pytest.mark.parametrize(
    ("answer", "passed"),
    [
        ("1. What is my first post about?\n2. What is my first post on Hugo?", False),
        ("你的第一篇文章讲了什么？", False),
        ("Is it fast? Yes, it is.", True),
        ("What is a borrow?\n\nA borrow is a reference to a value.", True),
    ],
)
def test_an_answer_of_questions_only_is_no_answer(answer: str, passed: bool) -> None:
    from skillrt.skills.writing.repeats import not_questions

    assert not_questions()(Generated(text=answer)).passed is passed
    faq = "## FAQ\n\n- How do I install Rust?\n- What is Cargo?"
    assert not not_questions()(Generated(text=faq)).passed
    assert not_questions("How do I install Rust?\n\nWhat is Cargo?")(Generated(text=faq)).passed
