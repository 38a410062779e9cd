"""A summary cut at its token limit is shown without the sentence it stops in: it ended "…
was created by Dennis McIlwraith in 1987. It's" and was shown so."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.skills.writing.summarize import whole_sentences
from skillrt.testing import ScriptedModel
from tests.blog import copy_blog
from tests.writing_support import run_writing_skill, writing_runtime

_WORDS = [
    "linear",
    "regression",
    "fits",
    "a",
    "straight",
    "line",
    "to",
    "data",
    "by",
    "gradient",
    "descent",
    "on",
    "squared",
    "error",
]
# Distinct sentences (the repetition guard would cut one said again), told apart by a letter
# pair, not a number: a figure the post does not have is refused (``figures_from``).
WHOLE = " ".join(
    f"{_WORDS[i % 13].capitalize()} {_WORDS[(i * 5) % 13]} {_WORDS[(i * 7 + 3) % 13]} "
    f"{chr(97 + i // 26)}{chr(97 + i % 26)}."
    for i in range(90)
)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Bash is a shell. Zsh is another. It's", "Bash is a shell. Zsh is another."),
        ("第一句。第二句没有说完", "第一句。"),
        ("A list:\n- one item.\n- two it", "A list:\n- one item."),
        # The embedded model's summary of Rust 1.77 was shown ending "…\n4.".
        ("Items:\n1. **One**: is one.\n2. Two.\n3. **Thr", "Items:\n1. **One**: is one.\n2. Two."),
        ("Items:\n1) One.\n2) Two", "Items:\n1) One."),
        ("Done.", "Done."),  # whole
        ("It ends in code:\n```sh\nls\n```", "It ends in code:\n```sh\nls\n```"),
        ("no sentence ends in it at all", "no sentence ends in it at all"),  # nothing to keep
        ("One. " + "x" * 60, "One. " + "x" * 60),  # a third of it would not be left
        (
            "It fits a line, step by step, as the post shows.\n\n```python\nimport numpy",
            "It fits a line, step by step, as the post shows.",
        ),
    ],
)
def test_whole_sentences(text: str, kept: str) -> None:
    assert whole_sentences(text) == kept


async def test_a_summary_cut_at_its_limit_ends_at_its_last_whole_sentence(
    tmp_path: Path,
) -> None:
    blog = copy_blog(tmp_path / "blog")
    cut = WHOLE + " The C shell was created by"
    llm = ScriptedModel([cut])
    msg = await run_writing_skill(blog, llm, "Summarize", {"path": "posts/ml-intro.md"})
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["summary"] == WHOLE
    assert "created by" not in msg.content


async def test_a_summary_within_its_limit_is_kept_as_written(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    llm = ScriptedModel(["Linear regression fits a line; see the code"])
    msg = await run_writing_skill(blog, llm, "Summarize", {"path": "posts/ml-intro.md"})
    assert msg.data["summary"] == "Linear regression fits a line; see the code"


async def test_a_summary_of_something_else_is_refused(tmp_path: Path) -> None:
    """The embedded model's "summary" of a post can be a text of its own on the topic: the
    summary's words must be, in the main, the post's."""
    blog = copy_blog(tmp_path / "blog")
    elsewhere = (  # (the embedded model's, for "fix the typo … in the go post")
        "The Go language is designed to be a high-performance, lightweight platform for "
        "building applications used in industries such as healthcare, finance, and gaming. "
        "Google created it as an alternative to traditional languages like C++ or Python."
    )
    llm = ScriptedModel([elsewhere, elsewhere])
    msg = await run_writing_skill(blog, llm, "Summarize", {"path": "posts/go-concurrency.md"})
    assert msg.state == "ERROR" and llm.call_count == 2, msg.content
    assert "grounded" in msg.content
    good = "Goroutines are cheap; channels pass values between goroutines; workers read jobs."
    msg = await run_writing_skill(
        blog, ScriptedModel([good]), "Summarize", {"path": "posts/go-concurrency.md"}
    )
    assert msg.state == "COMPLETED" and msg.data["summary"] == good


async def test_a_list_item_begun_and_never_written_is_left_out(tmp_path: Path) -> None:
    """The embedded model's summary of the go post ended "…\n3." (an item it never wrote)."""
    blog = copy_blog(tmp_path / "blog")
    listed = "Goroutines:\n1. **Cheap**: goroutines are cheap.\n2. **Channels** pass values.\n3."
    msg = await run_writing_skill(
        blog, ScriptedModel([listed]), "Summarize", {"path": "posts/go-concurrency.md"}
    )
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["summary"] == listed.removesuffix("\n3.")


async def test_a_summary_asked_again_is_shown_without_the_retry_note_it_echoed(
    tmp_path: Path,
) -> None:
    """The embedded model's second summary of the Jekyll liquid tips post ended with "The text
    was refused (template_from_sources: …). Write only the text asked for above, without any
    of these instructions in it.", and that was shown as part of the summary."""
    blog = copy_blog(tmp_path / "blog")
    good = "Goroutines are cheap; channels pass values between goroutines; workers read jobs."
    echoed = (
        f"{good}\n\nThe text was refused (grounded: its words are not the text's). Write only "
        "the text asked for above, without any of these instructions in it."
    )
    elsewhere = (
        "The Go language is designed to be a high-performance, lightweight platform for "
        "building applications used in industries such as healthcare, finance, and gaming. "
        "Google created it as an alternative to traditional languages like C++ or Python."
    )
    msg = await run_writing_skill(
        blog, ScriptedModel([elsewhere, echoed]), "Summarize", {"path": "posts/go-concurrency.md"}
    )
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["summary"] == good


def test_a_lead_in_of_the_summary_itself_is_kept() -> None:
    from skillrt.skills.writing.summarize import _SUMMARY_LABEL

    assert _SUMMARY_LABEL.match("The post gives a summary of three tools:\n- a\n") is None


@pytest.mark.parametrize(
    "label", ["A one-sentence summary:", "Here is a summary of the post:", "总结：", "Summary:"]
)
async def test_a_first_line_announcing_the_summary_is_left_out(tmp_path: Path, label: str) -> None:
    """The embedded model's summary of the weekly review post began "A one-sentence
    summary:", and that was shown as part of it."""
    blog = copy_blog(tmp_path / "blog")
    good = "Goroutines are cheap; channels pass values between goroutines; workers read jobs."
    msg = await run_writing_skill(
        blog,
        ScriptedModel([f"{label}\n\n{good}"]),
        "Summarize",
        {"path": "posts/go-concurrency.md"},
    )
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["summary"] == good


_GOOD = "Goroutines are cheap; channels pass values between goroutines; workers read jobs."


@pytest.mark.parametrize(
    "loose_end",
    [
        # (the embedded model's summary of the docker post ended in a block it never closed)
        "\n```go\nfunc worker(id int, jobs <-chan int, results chan<- int) {",
        # (and the rust post's in headings with nothing under them)
        "\n\n## Workers\n\n### 1.",
    ],
)
async def test_what_a_summary_ends_with_and_does_not_finish_is_left_out(
    tmp_path: Path, loose_end: str
) -> None:
    blog = copy_blog(tmp_path / "blog")
    msg = await run_writing_skill(
        blog, ScriptedModel([_GOOD + loose_end]), "Summarize", {"path": "posts/go-concurrency.md"}
    )
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["summary"] == _GOOD


async def test_a_summary_with_nothing_but_headings_and_code_is_refused(tmp_path: Path) -> None:
    """The embedded model's summary of the rust borrowing post was its title as a heading, a
    code block copied from it and a heading: shown as done."""
    blog = copy_blog(tmp_path / "blog")
    copied = (
        "# Concurrency in Go\n\n```go\nfunc main() {\n    jobs := make(chan int, 100)\n}\n```"
        "\n\n## Goroutines and channels"
    )
    llm = ScriptedModel([copied, copied])
    msg = await run_writing_skill(blog, llm, "Summarize", {"path": "posts/go-concurrency.md"})
    assert msg.state == "ERROR" and llm.call_count == 2, msg.content
    assert "not_degenerate" in msg.content and "no sentences outside" in msg.content
    msg = await run_writing_skill(
        blog, ScriptedModel([copied, _GOOD]), "Summarize", {"path": "posts/go-concurrency.md"}
    )
    assert msg.state == "COMPLETED" and msg.data["summary"] == _GOOD


def test_a_summary_in_any_script_has_prose() -> None:
    from skillrt.skills.writing.checks import Generated
    from skillrt.skills.writing.summarize import has_prose

    check = has_prose("Goroutines are cheap.")
    assert check(Generated(text="Горутины дешёвые, а каналы передают значения.")).passed
    assert not check(Generated(text="# Go\n\n```go\nfunc main() {}\n```")).passed


@pytest.mark.parametrize(
    "start",
    [
        "```\n# Concurrency in Go\n\n",  # a fence never closed, then the post's own title
        "# Concurrency in Go\n\n",
        "## Concurrency In Go!\n\n",  # one character changed, and the case
        "# Concurrency\n\n",  # a part of the post's heading
    ],
)
async def test_what_a_summary_opens_with_and_is_no_summary_is_left_out(
    tmp_path: Path, start: str
) -> None:
    """The embedded model's summary of the rust borrowing post was "```", the post's title
    as a heading and its first paragraph, and it was shown so; of the ML post, it began with
    a part of the post's title as a heading."""
    blog = copy_blog(tmp_path / "blog")
    msg = await run_writing_skill(
        blog, ScriptedModel([start + _GOOD]), "Summarize", {"path": "posts/go-concurrency.md"}
    )
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["summary"] == _GOOD


async def test_a_heading_of_the_summarys_own_is_kept(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    own = f"## Key points\n\n{_GOOD}"
    msg = await run_writing_skill(
        blog, ScriptedModel([own]), "Summarize", {"path": "posts/go-concurrency.md"}
    )
    assert msg.state == "COMPLETED" and msg.data["summary"] == own


async def test_a_bold_list_item_begun_and_never_written_is_left_out(tmp_path: Path) -> None:
    """The embedded model's summary of the ML post ended "**3." (an item it never wrote)."""
    blog = copy_blog(tmp_path / "blog")
    listed = "Goroutines:\n\n**1. Cheap**: goroutines are cheap.\n\n**2. Channels** pass values."
    msg = await run_writing_skill(
        blog,
        ScriptedModel([listed + "\n\n**3."]),
        "Summarize",
        {"path": "posts/go-concurrency.md"},
    )
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["summary"] == listed


async def test_inline_code_the_post_does_not_hold_is_made_up(tmp_path: Path) -> None:
    """The embedded model's summary of the rust lifetimes post showed `#[unmanaged_alloc]`,
    which the post does not hold; the post's own code, inline, is kept."""
    blog = copy_blog(tmp_path / "blog")
    made_up = f"{_GOOD} Workers use `#[unmanaged_alloc]` for their jobs."
    own = f"{_GOOD} Jobs come from `make(chan int, 100)`."
    llm = ScriptedModel([made_up, own])
    msg = await run_writing_skill(blog, llm, "Summarize", {"path": "posts/go-concurrency.md"})
    assert msg.state == "COMPLETED" and llm.call_count == 2, msg.content
    assert msg.data["summary"] == own


async def test_inline_code_of_the_posts_own_names_is_kept(tmp_path: Path) -> None:
    """Short spans and the post's names, reworded (`go`, `chan`, `worker()` for the post's
    `worker(id int, …)`), are the post's: the prose between two spans was taken for code."""
    blog = copy_blog(tmp_path / "blog")
    own = f"{_GOOD} Start one with `go`, pass values over a `chan`, and call `worker()`."
    llm = ScriptedModel([own])
    msg = await run_writing_skill(blog, llm, "Summarize", {"path": "posts/go-concurrency.md"})
    assert msg.state == "COMPLETED" and llm.call_count == 1, msg.content
    assert msg.data["summary"] == own


@pytest.mark.parametrize(
    "request_text", ["summarize my posts about sqlite", "总结一下我所有关于 rust 的文章"]
)
async def test_a_summary_of_several_posts_asks_which_one(tmp_path: Path, request_text: str) -> None:
    """ "summarize my posts about docker" summarised the first post named so, and did not say
    the others were left: a summary is of one post, and which is asked."""
    blog = copy_blog(tmp_path / "blog")
    llm = ScriptedModel(["Lifetimes describe how references relate."])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        asked = await rt.process_input(request_text)
        # (sqlite: one post's title has it, two more posts mention it)
        assert asked.state == "WAITING_INPUT", asked.content
        topic = "sqlite" if "sqlite" in request_text else "rust"
        assert asked.content.index(f"posts/{topic}") < asked.content.index("2."), asked.content
        assert llm.call_count == 0
        done = await rt.process_input("1")
    finally:
        await rt.close()
    assert done.state == "COMPLETED", done.content
    assert done.data["source"].startswith(f"posts/{topic}"), done.content


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("As an AI language model, I cannot read files on your computer.", "cannot do it"),
        ("I'm sorry, but I cannot help with that.", "cannot do it"),
        ("The post shows how SQLite ranks full-text matches with bm25, which", "mid-sentence"),
    ],
    ids=["as-an-ai", "sorry", "cut-short"],
)
async def test_a_summary_that_refuses_or_stops_mid_sentence_is_refused(
    tmp_path: Path, answer: str, reason: str
) -> None:
    """Each was shown as the summary of the sqlite post, done."""
    blog = copy_blog(tmp_path / "blog")
    llm = ScriptedModel([answer] * 6)
    msg = await run_writing_skill(blog, llm, "Summarize", {"path": "posts/sqlite-fts5.md"})
    assert msg.state == "ERROR" and msg.data["check"] == "not_degenerate", msg.content
    assert reason in msg.data["reason"]
    assert llm.call_count == 2  # asked once more, then refused
