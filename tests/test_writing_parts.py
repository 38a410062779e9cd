"""Scoped edits: an instruction naming a part sends only that part to the model and splices the
answer back; every other byte of the post stays as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.llm.base import LLMMessage
from skillrt.skills.writing.parts import (
    PartRef,
    Span,
    locate,
    named_part,
    paragraphs,
    removed_part,
    sections,
)
from skillrt.testing import FunctionModel, ModelOptions, ScriptedModel
from tests.writing_support import writing_runtime

P1 = "Ownership is how Rust manages memory without a garbage collector at all."
P2 = "Each value has one owner, and the value is dropped when its owner goes away."
P3 = "Borrowing lets code read a value without taking it over from its owner."
P4 = "In short, ownership makes memory safety a compile-time property of programs."
BODY = (
    f"\n{P1}\n\n## Moves\n\n{P2}\n\n```rust\nlet a = String::new();\n\nlet b = a;\n```\n\n"
    f"## Borrowing\n\n{P3}\n\n## Conclusion\n\n{P4}\n"
)
YAML = "---\ntitle: Rust ownership  # the title\ntags: [rust]\ndraft: false\n---\n" + BODY
TOML = '+++\ntitle = "Rust ownership"  # the title\ntags = ["rust"]\n+++\n' + BODY
PATH = "posts/ownership.md"


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    root = tmp_path / "blog"
    (root / "posts").mkdir(parents=True)
    (root / PATH).write_text(YAML, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [
        ("make the first paragraph shorter", PartRef("paragraph", 1)),
        ("rewrite the second section", PartRef("section", 2)),
        ("expand paragraph 3", PartRef("paragraph", 3)),
        ("tighten the last paragraph", PartRef("paragraph", -1)),
        ("improve the title", PartRef("title")),
        ("rewrite the conclusion", PartRef("conclusion")),
        ("第二段改得更简洁", PartRef("paragraph", 2)),
        ("把第三节扩写一下", PartRef("section", 3)),
        ("改一下标题", PartRef("title")),
        ("结尾写得更有力一些", PartRef("conclusion")),
        ("make it shorter", None),
    ],
)
def test_the_part_an_instruction_names(instruction: str, expected: PartRef | None) -> None:
    assert named_part(instruction) == expected


def test_parts_are_found_in_the_body() -> None:
    def text(ref: PartRef) -> str:
        span = locate(BODY, ref)
        assert span is not None
        return BODY[span.start : span.end]

    assert text(PartRef("paragraph", 1)) == P1
    assert text(PartRef("paragraph", 2)) == P2  # headings and code are not paragraphs
    assert text(PartRef("paragraph", -1)) == P4
    assert text(PartRef("section", 2)) == f"## Borrowing\n\n{P3}"
    assert text(PartRef("conclusion")) == f"## Conclusion\n\n{P4}"
    assert locate(BODY, PartRef("section", 9)) is None


@pytest.mark.parametrize(
    ("instruction", "old", "new"),
    [
        ("make the first paragraph shorter", P1, "Rust manages memory without a GC."),
        ("第二段改得更简洁", P2, "Every value has one owner."),
        ("rewrite the second section", f"## Borrowing\n\n{P3}", "## Borrowing\n\nBorrow it."),
        ("rewrite the conclusion", f"## Conclusion\n\n{P4}", "## Conclusion\n\nSafe at last."),
    ],
)
async def test_a_scoped_edit_changes_only_its_part(
    blog: Path, instruction: str, old: str, new: str
) -> None:
    llm = ScriptedModel([new + "\n"])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill("EditContent", {"instruction": instruction, "path": PATH})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert (blog / PATH).read_text(encoding="utf-8") == YAML.replace(old, new)
    sent = llm.calls[0][-1]["content"]
    assert old in sent and all(p not in sent for p in (P1, P2, P3, P4) if p not in old)


@pytest.mark.parametrize("front", [YAML, TOML], ids=["yaml", "toml"])
async def test_the_title_is_edited_in_the_frontmatter_alone(blog: Path, front: str) -> None:
    (blog / PATH).write_text(front, encoding="utf-8")
    llm = ScriptedModel(["“Ownership in Rust, explained”"])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill("EditContent", {"instruction": "improve the title", "path": PATH})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    text = (blog / PATH).read_text(encoding="utf-8")
    assert "Ownership in Rust, explained" in text and "Rust ownership" not in text
    assert text.split("\n", 2)[2] == front.split("\n", 2)[2]  # every line after the title
    assert llm.calls[0][-1]["content"].endswith("Text:\nRust ownership")
    assert {c["name"]: c["passed"] for c in msg.data["checks"]}["frontmatter"] is True


async def test_a_title_edit_says_the_frontmatter_changed_and_names_a_stale_heading(
    blog: Path,
) -> None:
    """The reply said "the frontmatter is unchanged" after setting its title; a heading that
    repeats the old title atop the body is left as it is, and the reply says so."""
    headed = YAML.replace("---\n\n", "---\n\n# Rust ownership\n\n", 1)
    (blog / PATH).write_text(headed, encoding="utf-8")
    rt = writing_runtime(blog, ScriptedModel([]))
    msg = await rt.run_skill(
        "EditContent", {"instruction": 'change the title to "Ownership in Rust"', "path": PATH}
    )
    plain = await rt.run_skill(
        "EditContent", {"instruction": 'change the title to "Rust, owned"', "path": PATH}
    )
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert "the rest of the frontmatter is unchanged" in msg.content
    assert "`# Rust ownership`, still has the old title" in msg.content
    text = (blog / PATH).read_text(encoding="utf-8")
    assert text == headed.replace("title: Rust ownership", "title: Rust, owned")
    # the heading no longer repeats the title: nothing said of it
    assert "the rest of the frontmatter is unchanged" in plain.content
    assert "still has the old title" not in plain.content


@pytest.mark.parametrize(
    "answer",
    [
        "Ownership in Rust, explained.\n\nText:\nOwnership in Rust, explained.",
        "New title: “Ownership in Rust, explained”",
        # the embedded model's answer to "suggest a better title for …"
        "Ownership in Rust, explained\n\nA practical guide that is not a title.",
    ],
    ids=["said-twice-around-a-label", "labelled", "talk-after-it"],
)
async def test_a_title_answer_with_a_label_or_said_twice_is_the_title(
    blog: Path, answer: str
) -> None:
    """The embedded model answered a title, the prompt's "Text:" and the title again; it was
    refused as two lines. A label before it and a full stop after it are not the title's."""
    llm = ScriptedModel([answer])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill("EditContent", {"instruction": "improve the title", "path": PATH})
    await rt.close()
    assert msg.state == "COMPLETED" and llm.call_count == 1, msg.content
    text = (blog / PATH).read_text(encoding="utf-8")
    assert text == YAML.replace("title: Rust ownership", "title: Ownership in Rust, explained")


async def test_a_paragraph_edit_answered_with_the_whole_post_is_refused(blog: Path) -> None:
    llm = ScriptedModel([BODY, BODY])  # the model rewrote everything, twice
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill(
        "EditContent", {"instruction": "make the first paragraph clearer", "path": PATH}
    )
    await rt.close()
    assert msg.state == "ERROR" and msg.data["outcome"] == "refused", msg.content
    assert msg.data["check"] == "scope" and len(llm.calls) == 2
    assert (blog / PATH).read_text(encoding="utf-8") == YAML  # nothing saved


async def test_a_part_the_post_does_not_have_is_refused(blog: Path) -> None:
    rt = writing_runtime(blog, ScriptedModel([]))
    msg = await rt.run_skill(
        "EditContent", {"instruction": "rewrite the ninth section", "path": PATH}
    )
    await rt.close()
    assert msg.data["error"] == "part_not_found" and "ninth section" in msg.content


async def test_a_shorter_title_asked_for_is_shorter(blog: Path) -> None:
    """The embedded model, asked for a shorter title, made it longer, and it was saved."""
    longer = ScriptedModel(["The rules of Rust ownership", "Ownership in the Rust language"])
    rt = writing_runtime(blog, longer)
    refused = await rt.run_skill(
        "EditContent", {"instruction": "make the title shorter", "path": PATH}
    )
    await rt.close()
    assert refused.state == "ERROR" and longer.call_count == 2
    assert "asked for a shorter title, but it went from 14 to 30 characters" in refused.content
    assert (blog / PATH).read_text(encoding="utf-8") == YAML  # nothing saved
    shorter = ScriptedModel(["Ownership"])
    rt = writing_runtime(blog, shorter)
    msg = await rt.run_skill("EditContent", {"instruction": "shorten the title", "path": PATH})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert {c["name"]: c["passed"] for c in msg.data["checks"]}["title_length"] is True
    assert (blog / PATH).read_text(encoding="utf-8") == YAML.replace(
        "title: Rust ownership  #", "title: Ownership  #"
    )


@pytest.mark.parametrize(
    "instruction",
    [
        "suggest a better title for the ownership post",
        "come up with a catchier title for it",
        "give the post a better title",
        "suggest a better title",  # the open post's
        "give my new post a better title",
    ],
)
def test_a_title_asked_for_is_the_titles_edit(instruction: str) -> None:
    """ "suggest a better title for the git workflow post" was offered as a new post, an edit or
    an article: it is the title's edit."""
    from skillrt.skills.writing.parts import named_part

    assert named_part(instruction) == PartRef("title")


async def test_a_title_asked_for_that_is_the_old_one_is_asked_again(blog: Path) -> None:
    """ "suggest a better title for …" came back as the title the post had, and the reply said
    nothing had changed; it is asked once more, then refused."""
    same = ScriptedModel(["Rust ownership", "Rust Ownership."])
    rt = writing_runtime(blog, same)
    msg = await rt.run_skill("EditContent", {"instruction": "improve the title", "path": PATH})
    await rt.close()
    assert msg.state == "ERROR" and same.call_count == 2, msg.content
    assert "it is the title the post has" in msg.content
    assert (blog / PATH).read_text(encoding="utf-8") == YAML


@pytest.mark.parametrize(
    "instruction",
    [
        "add a title to the diagram",
        "give the table a title",
        "add a title image to the post",
        "add a headline to each section",
        "suggest a title for my next post about rust",  # a post not written yet
    ],
)
def test_a_title_of_something_else_is_not_the_posts(instruction: str) -> None:
    from skillrt.skills.writing.parts import named_part

    assert named_part(instruction) is None


# --- a section named by its heading ---------------------------------------------------------


def _step(topic: str) -> str:
    return (
        f"The {topic} step matters because every build of the project depends on it, and "
        f"skipping the {topic} work tends to break the release pipeline in subtle ways that "
        f"take hours to debug when the team is under pressure to ship the next version. "
    )


GUIDE_BODY = (
    "\n"
    + _step("intro") * 2
    + "\n\n"
    + "".join(
        f"## {h}\n\n{_step(h.lower()) * 2}\n\n" for h in ("Setup", "Usage", "Testing", "Release")
    )
)
GUIDE = "---\ntitle: Build guide\ntags: [build]\n---\n" + GUIDE_BODY
USAGE = f"## Usage\n\n{_step('usage') * 2}".rstrip()
USAGE_NEW = "## Usage\n\nUsage is simple: run the build command and read the report it prints."


@pytest.mark.parametrize(
    ("instruction", "name"),
    [
        ("make the Usage section clearer", "Usage"),
        ("shorten the usage section", "usage"),
        ("rewrite the section about usage to be friendlier", "usage"),
        ('tighten the "Getting started" section', "Getting started"),
        ("rewrite the section called Getting started", "Getting started"),
        ("fix the typos in the post's Usage section", "Usage"),
        ("add an example to the Usage section", "Usage"),
        ("把用法一节写得更清楚", "用法"),
        ("把 Usage 这一节写得更清楚", "Usage"),
        ("重写关于用法的部分", "用法"),
        ("把“用法”部分改短", "用法"),
    ],
)
def test_a_section_named_by_its_heading(instruction: str, name: str) -> None:
    assert named_part(instruction) == PartRef("section", 0, name)


@pytest.mark.parametrize(
    "instruction",
    [
        "add a section about aliases",  # a section to write
        "add the section about aliases",
        "remove the Usage section",  # the whole body's edit: the section goes
        "move the Testing section before the Usage section",
        "make each section shorter",
        "make the whole section shorter",
        "tighten the next section",
        "make the Usage and Testing sections clearer",
        "添加一个小节",
        "加一节关于别名的内容",
        "删掉用法一节",
        "把这部分改短",
        "每一节都改短",
    ],
)
def test_sections_not_named_by_a_heading(instruction: str) -> None:
    part = named_part(instruction)
    assert part is None or not part.name


def test_a_named_section_is_the_one_heading_that_matches() -> None:
    body = "\nIntro.\n\n## Usage\n\nU.\n\n### Flags\n\nF.\n\n## Advanced usage\n\nA.\n\n"
    body += "## 2. Installing\n\nI.\n\n## Setup on Linux\n\nL.\n\n## Setup on macOS\n\nM.\n"

    def text(name: str) -> str | None:
        span = locate(body, PartRef("section", 0, name))
        return None if span is None else body[span.start : span.end]

    assert text("Usage") == "## Usage\n\nU.\n\n### Flags\n\nF."  # the same words first
    assert text("advanced usage") == "## Advanced usage\n\nA."
    assert text("flags") == "### Flags\n\nF."  # a heading of any level
    assert text("installation") == "## 2. Installing\n\nI."  # a word's forms alike
    assert text("setup") is None  # two alike: not guessed
    assert text("deployment") is None  # none
    assert text("intro") == "Intro."  # no such heading: the text above the first section


@pytest.mark.parametrize(
    "instruction",
    [
        "make the Usage section clearer",
        "rewrite the section about usage to be friendlier",
        "shorten the Usage section",
        "把用法一节写得更清楚".replace("用法", "Usage"),
    ],
)
async def test_a_section_named_by_its_heading_is_edited_alone(
    tmp_path: Path, instruction: str
) -> None:
    """A 445-word post, "make the Usage section clearer", and the model's answer, the Usage
    section alone: it replaced the whole body (2,462 bytes to 122), with no check failed."""
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    (blog / "posts/b.md").write_text(GUIDE, encoding="utf-8")
    llm = ScriptedModel([USAGE_NEW])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill("EditContent", {"instruction": instruction, "path": "posts/b.md"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert (blog / "posts/b.md").read_text(encoding="utf-8") == GUIDE.replace(USAGE, USAGE_NEW)
    assert llm.calls[0][-1]["content"].endswith("Text:\n" + USAGE)  # only the section sent


@pytest.mark.parametrize("heading", ["Deployment", "Setup"])
async def test_a_section_named_that_the_post_has_not_or_twice_is_refused(
    tmp_path: Path, heading: str
) -> None:
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    post = GUIDE.replace("## Release", "## Setup")  # two of them
    (blog / "posts/b.md").write_text(post, encoding="utf-8")
    llm = ScriptedModel([USAGE_NEW])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill(
        "EditContent",
        {"instruction": f"make the {heading} section clearer", "path": "posts/b.md"},
    )
    await rt.close()
    assert msg.data["error"] == "part_not_found", msg.content
    assert llm.call_count == 0 and (blog / "posts/b.md").read_text(encoding="utf-8") == post


async def test_a_whole_body_edit_that_names_sections_may_not_cut_the_post_to_one(
    tmp_path: Path,
) -> None:
    """The word "section" let a whole-body answer of one section pass ``on_topic``'s "keeps a
    fifth of the post's words", and the post was replaced by it."""
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    (blog / "posts/b.md").write_text(GUIDE, encoding="utf-8")
    llm = ScriptedModel([USAGE_NEW, USAGE_NEW])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill(
        "EditContent", {"instruction": "make every section clearer", "path": "posts/b.md"}
    )
    await rt.close()
    assert msg.state == "ERROR" and msg.data["check"] == "on_topic", msg.content
    assert (blog / "posts/b.md").read_text(encoding="utf-8") == GUIDE


# --- what is a paragraph, a heading, the ending -----------------------------------------------

CLOSING = "Thanks for reading this far, the approach works well in practice."


@pytest.mark.parametrize(
    "tail",
    [
        "[1]: https://example.com/guide\n[2]: https://example.com/docs",
        "[^1]: Tested on three machines with Ubuntu 22.04 and Fedora 39.\n    And a laptop.",
        "{{< comments >}}",
        '{% include share.html title="x" %}',
        "<!-- more -->",
        '<div id="disqus_thread"></div>',
        "> [!note] Related\n> See [[other-note]] for the setup.",
    ],
    ids=["link-refs", "footnotes", "shortcode", "liquid", "comment", "html", "callout"],
)
def test_the_ending_is_the_last_prose_not_what_follows_it(tail: str) -> None:
    """A post that ended with link reference definitions had them edited as its conclusion
    (and its links broke); footnotes, a shortcode, HTML or a callout the same."""
    body = f"\nOpening paragraph of the post.\n\n{CLOSING}\n\n{tail}\n"
    for ref in (PartRef("conclusion"), PartRef("paragraph", -1)):
        span = locate(body, ref)
        assert span is not None and body[span.start : span.end] == CLOSING
    first = locate(f"\n{tail}\n\n{CLOSING}\n", PartRef("paragraph", 1))
    assert first is not None and first.start == len(tail) + 3  # the prose after it
    if tail.startswith(">"):
        return  # (a callout in a section is the section's)
    # The last section, its conclusion, ends where its prose does.
    sectioned = f"\n## Setup\n\nText.\n\n## Conclusion\n\n{CLOSING}\n\n{tail}\n"
    span = locate(sectioned, PartRef("conclusion"))
    assert span is not None and sectioned[span.start : span.end] == f"## Conclusion\n\n{CLOSING}"


async def test_the_conclusion_of_a_post_with_references_is_its_prose(tmp_path: Path) -> None:
    refs = "[1]: https://example.com/guide\n[2]: https://example.com/docs\n"
    post = f"---\ntitle: T\n---\n\nOpening paragraph.\n\n{CLOSING}\n\n{refs}"
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    (blog / "posts/t.md").write_text(post, encoding="utf-8")
    llm = ScriptedModel(["Thanks so much for reading, friends!"])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill(
        "EditContent", {"instruction": "make the conclusion friendlier", "path": "posts/t.md"}
    )
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    after = (blog / "posts/t.md").read_text(encoding="utf-8")
    assert after == post.replace(CLOSING, "Thanks so much for reading, friends!")


SETEXT = (
    "\nIntro paragraph here.\n\nFirst Section\n-------------\n\nAlpha text.\n\n"
    "Second Section\n--------------\n\nBeta text,\nover two lines.\n\n"
    "Third Section\n=============\n\nGamma text.\n"
)


def test_setext_headings_are_headings() -> None:
    """A line over "===" or "---" is a heading: "the second paragraph" of a setext post was
    its first heading, and its sections were never found."""
    assert [SETEXT[s.start : s.end] for s in paragraphs(SETEXT)] == [
        "Intro paragraph here.",
        "Alpha text.",
        "Beta text,\nover two lines.",
        "Gamma text.",
    ]
    assert [title for _, title in sections(SETEXT)] == ["Third Section"]  # the top level
    flat = SETEXT.replace("=============", "-------------")
    span = locate(flat, PartRef("section", 2))
    assert span is not None
    assert (
        flat[span.start : span.end]
        == "Second Section\n--------------\n\nBeta text,\nover two lines."
    )
    named = locate(flat, PartRef("section", 0, "third section"))
    assert named is not None and flat[named.start : named.end].endswith("Gamma text.")
    # Not a heading: a list's or a quote's "---" (a break), a break after a blank line, a table.
    for body in (
        "- one\n- two\n---\n\nText.",
        "> quoted\n---\n\nText.",
        "Text above.\n\n---\n\nText.",
        "| a | b |\n---\n\nText.",
    ):
        assert sections(body) == [], body
    assert len(paragraphs("Text above.\n\n***\n\nText.")) == 2  # a break is no paragraph


def test_a_lone_title_is_at_the_top_of_the_body() -> None:
    """A "# Title" above the sections does not count; one under the intro is a section."""
    assert [t for _, t in sections("\n# Title\n\nIntro.\n\n## A\n\nA.\n\n## B\n\nB.\n")] == [
        "A",
        "B",
    ]
    assert [t for _, t in sections("\nIntro.\n\n# Part\n\n## A\n\nA.\n\n## B\n\nB.\n")] == ["Part"]


def test_a_byte_order_mark_is_not_the_first_paragraph() -> None:
    """A post with a BOM and no frontmatter: "the first paragraph" was "\\ufeff# Docker notes"
    (the title, BOM and all), and the BOM was lost."""
    body = "\ufeff# Docker notes\n\nDocker packs an app into an image.\n\n## Running\n\nRun it.\n"
    span = locate(body, PartRef("paragraph", 1))
    assert span is not None and body[span.start : span.end] == "Docker packs an app into an image."
    assert [title for _, title in sections(body)] == ["Running"]


async def test_a_byte_order_mark_stays_when_the_first_paragraph_is_edited(
    tmp_path: Path,
) -> None:
    post = "\ufeff# Docker notes\n\nDocker packs an app into an image.\n\nImages run anywhere.\n"
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    (blog / "posts/b.md").write_bytes(post.encode("utf-8"))
    rt = writing_runtime(blog, ScriptedModel(["Docker packs your app into an image!"]))
    msg = await rt.run_skill(
        "EditContent", {"instruction": "make the first paragraph friendlier", "path": "posts/b.md"}
    )
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert (blog / "posts/b.md").read_bytes() == post.replace(
        "Docker packs an app", "Docker packs your app"
    ).replace("image.", "image!", 1).encode("utf-8")


@pytest.mark.parametrize(
    ("body", "paragraphs_", "titles"),
    [
        (
            "Intro.\n\n## A\n\nText A.\n\n<!--\n## draft heading, commented out\n-->\n\n## B\n\nB.",
            ["Intro.", "Text A.", "B."],
            ["A", "B"],
        ),
        (
            "Intro.\n\n## A\n\n<pre>\n# root prompt\n</pre>\n\n## B\n\nB.",
            ["Intro.", "B."],
            ["A", "B"],
        ),
        (
            "Intro.\n\n<div class='x'>\n# not a heading\n</div>\n\n## B\n\nB.",
            ["Intro.", "B."],
            ["B"],
        ),
        ("## A ##\n\nText A.\n\n   ## B\n\nB.", ["Text A.", "B."], ["A", "B"]),
        ("## A\n\n#tag line here\n\n## B\n\nB.", ["#tag line here", "B."], ["A", "B"]),
    ],
    ids=["comment", "pre", "div", "closing-hashes-indent", "obsidian-tag"],
)
def test_html_blocks_are_neither_paragraphs_nor_headings(
    body: str, paragraphs_: list[str], titles: list[str]
) -> None:
    """A "# …" line in a <pre> or a comment was a section, and "<!--", "-->", "<pre>" were
    paragraphs."""
    assert [body[s.start : s.end] for s in paragraphs(body)] == paragraphs_
    assert [title for _, title in sections(body)] == titles


def test_a_fence_indented_in_a_list_item_is_no_paragraph() -> None:
    """A fence under a list item, four spaces in, is code: its lines were a paragraph (the
    "second paragraph" sent to the model was the code), its blank line splitting them in
    two; a fence four spaces in outside a list is an indented code block's text."""
    body = (
        "Intro.\n\n1. Install it:\n\n    ```bash\n    # install\n\n    pip install x\n    ```\n\n"
        "2. Run it.\n\nAfter.\n\n    ```\n    not a fence\n\n"
        "- Deeper:\n  - nested:\n\n      ~~~\n      code\n      ~~~\n"
    )
    assert [body[s.start : s.end] for s in paragraphs(body)] == [
        "Intro.",
        "1. Install it:",
        "2. Run it.",
        "After.",
        "    ```\n    not a fence",  # (an indented code block: not read as code here)
        "- Deeper:\n  - nested:",
    ]


SECTIONED = (
    "---\ntitle: Tool notes\n---\n\nIntro of the post, the first paragraph of all.\n\n"
    "## Setup\n\nSetup paragraph.\n\n## Usage\n\nThe first usage paragraph, with a tyop.\n\n"
    "The second usage paragraph.\n"
)


@pytest.mark.parametrize(
    ("instruction", "paragraph"),
    [
        ("fix the typos in the first paragraph of the Usage section", "The first usage"),
        ("shorten the last paragraph in the second section", "The second usage"),
        ("把用法一节的第一段写得更清楚".replace("用法", "Usage"), "The first usage"),
        ("改写第二节的第二段", "The second usage"),
    ],
)
async def test_a_paragraph_of_a_section_is_counted_in_that_section(
    tmp_path: Path, instruction: str, paragraph: str
) -> None:
    """ "Fix the typos in the first paragraph of the Usage section" sent, and edited, the
    post's first paragraph, a section away from the one named."""
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    (blog / "posts/t.md").write_text(SECTIONED, encoding="utf-8")
    found = next(line for line in SECTIONED.splitlines() if line.startswith(paragraph))
    sent: list[str] = []

    def model(messages: list[LLMMessage], options: ModelOptions) -> str:
        sent.append(messages[-1]["content"].split("Text:\n")[-1])
        return sent[-1].replace("tyop", "typo").replace(" paragraph.", ".")

    rt = writing_runtime(blog, FunctionModel(model))
    msg = await rt.run_skill("EditContent", {"instruction": instruction, "path": "posts/t.md"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert sent == [found]
    after = SECTIONED.replace(found, found.replace("tyop", "typo").replace(" paragraph.", "."))
    assert (blog / "posts/t.md").read_text(encoding="utf-8") == after


def test_a_paragraph_of_a_section_the_post_has_not_is_not_found() -> None:
    ref = named_part("rewrite the first paragraph of the Deployment section")
    assert ref is not None and ref.describe() == "the first paragraph of the Deployment section"
    assert locate(SECTIONED, ref) is None  # (refused: never the post's first paragraph)


USAGE_PART = (
    "\n\n## Usage\n\nThe first usage paragraph, with a tyop.\n\nThe second usage paragraph."
)


@pytest.mark.parametrize(
    ("instruction", "gone"),
    [
        ("remove the second section", USAGE_PART),
        ("delete the Usage section", USAGE_PART),
        (
            "drop the first paragraph of the Usage section",
            "The first usage paragraph, with a tyop.\n\n",
        ),
        ("删掉第一节", "## Setup\n\nSetup paragraph.\n\n"),
        ("把最后一段删除", "\n\nThe second usage paragraph."),
    ],
)
async def test_a_part_removed_is_cut_out_without_the_model(
    tmp_path: Path, instruction: str, gone: str
) -> None:
    """ "Remove the second section" sent the section alone, the model's empty answer was
    refused, and no removal could be made; now the part is cut out as it stands, with the
    blank lines that set it apart, in a CRLF post's line ends."""
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    (blog / "posts/t.md").write_bytes(SECTIONED.replace("\n", "\r\n").encode())
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill("EditContent", {"instruction": instruction, "path": "posts/t.md"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert gone in SECTIONED and llm.call_count == 0
    after = SECTIONED.replace(gone, "").replace("\n", "\r\n")
    assert (blog / "posts/t.md").read_bytes().decode() == after


@pytest.mark.parametrize(
    "instruction",
    ["remove the jargon in the second section", "把第二节里的废话删掉", "remove the title"],
)
def test_words_removed_from_a_part_are_no_part_removed(instruction: str) -> None:
    assert removed_part(instruction) is None


def test_a_math_block_is_no_paragraph() -> None:
    """A ``$$`` block was "the second paragraph" (and a ``---`` in it after a blank line a
    break); math inline in a paragraph leaves it one."""
    body = (
        "Intro.\n\n$$\na + b = c\n\n---\n$$\n\nText $$x$$ inline.\n\n$$ x = 1 $$\n\n"
        "After.\n\n## H\n\nLast.\n"
    )
    assert [body[s.start : s.end] for s in paragraphs(body)] == [
        "Intro.",
        "Text $$x$$ inline.",
        "After.",
        "Last.",
    ]
    assert locate(body, PartRef("paragraph", 2)) == Span(
        body.index("Text"), body.index(" inline.") + 8
    )


PARTS_POST = (
    "---\ntitle: Two parts\n---\n\nIntro.\n\n## Setup\n\nInstall it.\n\n## The first part\n\n"
    "First part text.\n\n## The second part\n\nSecond part text.\n\n## Wrap-up\n\nDone.\n"
)


@pytest.mark.parametrize(
    ("instruction", "gone"),
    [
        ("delete the section about the second part", "## The second part\n\nSecond part text.\n\n"),
        ("remove the section called the first part", "## The first part\n\nFirst part text.\n\n"),
    ],
)
async def test_a_section_named_with_an_ordinal_is_the_one_of_that_heading(
    tmp_path: Path, instruction: str, gone: str
) -> None:
    """ "delete the section about the second part" cut out the post's second section, "## The
    first part", and kept "## The second part": the words after "about" name a heading."""
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    (blog / "posts/t.md").write_text(PARTS_POST, encoding="utf-8")
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill("EditContent", {"instruction": instruction, "path": "posts/t.md"})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert (blog / "posts/t.md").read_text(encoding="utf-8") == PARTS_POST.replace(gone, "")
    assert named_part("make the section about the second part clearer") == PartRef(
        "section", 0, "second part"
    )
    assert named_part("make the second part clearer") == PartRef("section", 2)
    assert removed_part("删掉关于第二部分的那一节") == PartRef("section", 0, "第二部分")


INLINE_FENCE = (
    "---\ntitle: Fences\n---\n\n```js``` is how a code block starts, with its language.\n\n"
    "## Usage\n\nWrite the fence on a line of its own.\n\n```js\nlet a = 1;\n```\n\n"
    "## End\n\nThat is all.\n"
)


async def test_triple_backticks_in_a_line_open_no_code_block(tmp_path: Path) -> None:
    """A line starting with "```js```" (inline code: a backtick fence's info has no backtick)
    opened a code block running to the post's end: the post had no paragraph and no
    section, and "make the Usage section clearer" was refused, "no Usage section"."""
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    (blog / "posts/f.md").write_text(INLINE_FENCE, encoding="utf-8")
    body = INLINE_FENCE.split("---\n", 2)[2]
    assert [title for _, title in sections(body)] == ["Usage", "End"]
    assert len(paragraphs(body)) == 3
    new = "## Usage\n\nWrite the fence alone on its line.\n\n```js\nlet a = 1;\n```"
    rt = writing_runtime(blog, ScriptedModel([new]))
    msg = await rt.run_skill(
        "EditContent", {"instruction": "make the Usage section clearer", "path": "posts/f.md"}
    )
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert (blog / "posts/f.md").read_text(encoding="utf-8") == INLINE_FENCE.replace(
        "on a line of its own", "alone on its line"
    )
