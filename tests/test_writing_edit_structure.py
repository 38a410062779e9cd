"""What an edit keeps that the instruction did not ask about: the post's sections (a heading
dropped by a small model is refused, not saved) and, for a new title written out in the
request, everything but the title (set as written, with no model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.testing import ScriptedModel
from skills.writing.checks import Generated, structure_kept
from skills.writing.parts import named_part
from skills.writing.titles import given_title
from tests.blog import copy_fixture
from tests.writing_support import run_writing_skill, writing_runtime

POST = "content/Rust-1.78.0.md"
# What SmolLM2-135M wrote for "rename the Rust 1.78.0 post's title to Rust 1.78 is out": the
# body without its section, which was saved and reported done.
DROPPED = (
    "The Rust team is happy to announce Rust 1.78.0, with diagnostic attributes.\n"
    "```rust\n#[diagnostic::on_unimplemented]\n```\n"
)


@pytest.fixture
def zola(tmp_path: Path) -> Path:
    return copy_fixture("zola", tmp_path / "blog")


async def test_an_edit_that_drops_a_section_unasked_is_refused(zola: Path) -> None:
    before = (zola / POST).read_text(encoding="utf-8")
    llm = ScriptedModel([DROPPED, DROPPED])  # asked again once with the reason
    rt = writing_runtime(zola, llm)
    await rt.initialize()
    msg = await rt.run_skill("EditContent", {"instruction": "make it friendlier", "path": POST})
    await rt.close()
    assert msg.state == "ERROR" and "structure_kept" in msg.content
    assert "heading" in llm.calls[1][-1]["content"]  # the retry said why
    assert (zola / POST).read_text(encoding="utf-8") == before


async def test_an_edit_that_keeps_its_sections_is_saved(zola: Path) -> None:
    friendlier = (
        "Hi all! The Rust team is glad to share Rust 1.78.0, with diagnostic attributes.\n\n"
        "## Diagnostic attributes\n\n"
        "`#[diagnostic::on_unimplemented]` lets a trait author make error messages kinder.\n"
    )
    llm = ScriptedModel([DROPPED, friendlier])  # the first answer fails, the retry passes
    rt = writing_runtime(zola, llm)
    await rt.initialize()
    msg = await rt.run_skill("EditContent", {"instruction": "make it friendlier", "path": POST})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert (zola / POST).read_text(encoding="utf-8").endswith("\n" + friendlier)


@pytest.mark.parametrize(
    ("instruction", "judged"),
    [
        ("make it friendlier", True),
        ("fix the grammar", True),
        ("remove the second section", False),
        ("make it one sentence", False),
        ("shorten it", False),
        ("rewrite it as a list", False),
        ("合并这两节", False),
        # an addition names a section to add, not one to drop (the embedded model's answer to
        # "add a section about aliases" dropped the Hugo shells post's heading, and was saved)
        ("add a section about aliases", True),
        ("添加一个小节", True),
        ("add a section and remove the intro", False),
    ],
)
def test_only_instructions_that_keep_the_sections_are_held_to_them(
    instruction: str, judged: bool
) -> None:
    intro, text = "The intro of the post, as written.", "The text of section one, as written."
    original = f"{intro}\n\n## One\n\n{text}\n\n```sh\n# not a heading\n```\n\n## Two\n\nMore.\n"
    check = structure_kept(instruction, original)
    assert (check is not None) is judged
    if check is not None:
        assert not check(Generated(text=f"{intro}\n\n## One\n\n{text}\n")).passed
        assert check(Generated(text=f"{intro}\n\n## One\n\n{text}\n\n## Two\n\nMore!\n")).passed
        # written anew, no line kept: nothing says what it dropped (a scripted test's answer)
        assert check(Generated(text="A new text altogether.\n")).passed


@pytest.mark.parametrize(
    ("request_text", "title"),
    [
        ("rename the Rust 1.78.0 post's title to Rust 1.78 is out", "Rust 1.78 is out"),
        ('change the title of content/Rust-1.78.0.md to "rust, faster"', "rust, faster"),
    ],
)
async def test_a_title_written_out_is_set_as_written_without_the_model(
    zola: Path, request_text: str, title: str
) -> None:
    before = (zola / POST).read_text(encoding="utf-8")
    llm = ScriptedModel([])
    rt = writing_runtime(zola, llm)
    await rt.initialize()
    msg = await rt.process_input(request_text, context={"confirm": False})
    await rt.close()
    assert msg.state == "COMPLETED", msg.content
    assert llm.call_count == 0
    after = (zola / POST).read_text(encoding="utf-8")
    assert after == before.replace('title = "Announcing Rust 1.78.0"', f'title = "{title}"')


@pytest.mark.parametrize(
    ("instruction", "title"),
    [
        ("rename the Rust 1.78.0 post's title to X", True),
        ("rename the post to X", True),
        ("retitle it", True),
        ("rename the variable foo to bar in the code sample", False),  # the body's
    ],
)
def test_a_rename_is_of_the_title_only_when_it_names_the_post(
    instruction: str, title: bool
) -> None:
    part = named_part(instruction)
    assert (part is not None and part.kind == "title") is title


@pytest.mark.parametrize(
    ("instruction", "title"),
    [
        ("change the title to something catchier", None),  # a description: the model's
        ("make the title shorter", None),
        ("change the title to reflect the release", None),
        ("rename the post to Rust in 2024.", "Rust in 2024"),
        ("把标题改成《Rust 1.78 发布》", "Rust 1.78 发布"),
        ("把标题改成更吸引人的", None),
        # "as" in "async" is not the word "as": the title is the one after "to"
        ("rename the async closures post to Async closures are here", "Async closures are here"),
        ("rename the astronomy post as Stars", "Stars"),
        # a courtesy after the quotes is none of the title's (it was no title given)
        ("rename the title to “Go: the good parts”, please", "Go: the good parts"),
        ("把标题改成《Podman 入门》，谢谢", "Podman 入门"),
        ("rename it to Please Please Me", "Please Please Me"),
    ],
)
def test_only_a_title_written_out_is_taken_as_written(instruction: str, title: str | None) -> None:
    assert given_title(instruction) == title


async def test_an_untitled_post_renamed_gets_a_title_field(tmp_path: Path) -> None:
    """Hugo's shells post has no title field and no heading at its top: "rename it to Shell
    notes" said "The post has no the title". It gets the field, every other byte kept; a
    part it does not have is said in good English."""
    hugo = copy_fixture("hugo", tmp_path / "hugo")
    path = "content/posts/notes-on-shells.md"
    before = (hugo / path).read_text(encoding="utf-8")
    llm = ScriptedModel([])
    rt = writing_runtime(hugo, llm)
    await rt.initialize()
    try:
        msg = await rt.run_skill(
            "EditContent", {"instruction": "rename it to Shell notes", "path": path}
        )
        assert msg.state == "COMPLETED", msg.content
        after = (hugo / path).read_text(encoding="utf-8")
        assert after == before.replace("draft: false\n", "draft: false\ntitle: Shell notes\n")
        assert "the rest of the frontmatter is unchanged" in msg.content, msg.content
        msg = await rt.run_skill(
            "EditContent", {"instruction": "rewrite the ninth section", "path": path}
        )
    finally:
        await rt.close()
    assert msg.data["error"] == "part_not_found" and "has no ninth section" in msg.content
    assert llm.call_count == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # CRLF: the heading's line kept its "\r" in the title, and got "\n" alone
            "---\r\ndate: 2024-01-01\r\n---\r\n\r\n# Old title\r\n\r\nBody line.\r\n",
            "---\r\ndate: 2024-01-01\r\n---\r\n\r\n# Install foo\r\n\r\nBody line.\r\n",
        ),
        (  # an indented code block's comment is no title: the post gets a title field
            "---\ndate: 2024-01-01\n---\n\n    # install the deps as root\n    apt-get install"
            " foo\n\nThen run it.\n",
            "---\ndate: 2024-01-01\ntitle: Install foo\n---\n\n    # install the deps as root\n"
            "    apt-get install foo\n\nThen run it.\n",
        ),
        (  # a byte-order mark before the heading, its closing hashes kept
            "\ufeff# Old title ##\n\nA note.\n",
            "\ufeff# Install foo ##\n\nA note.\n",
        ),
        ("# C#\n\nA note.\n", "# Install foo\n\nA note.\n"),  # "#" of the title's own
    ],
)
async def test_a_heading_that_is_the_title_is_retitled_in_its_line(
    tmp_path: Path, text: str, expected: str
) -> None:
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    post = blog / "posts" / "t.md"
    post.write_bytes(text.encode())
    llm = ScriptedModel([])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    try:
        msg = await rt.run_skill(
            "EditContent",
            {"instruction": 'change the title to "Install foo"', "path": "posts/t.md"},
        )
    finally:
        await rt.close()
    assert msg.state == "COMPLETED" and llm.call_count == 0, msg.content
    assert post.read_bytes() == expected.encode()


FOUR_PARTS = (
    "---\ntitle: Tool notes\n---\n\n"
    "The tool helps you deploy services quickly to many servers at once.\n\n"
    "## Install\n\nDownload the binary and put it in your path, then check the version.\n\n"
    "## Usage\n\nRun the deploy command with your config file and watch the progress output.\n\n"
    "## Errors\n\nWhen the deploy fails, read the log and retry with the verbose flag set.\n"
)


@pytest.mark.parametrize(
    ("instruction", "answer", "saved"),
    [
        # its first paragraph, reworded: the three sections were lost
        (
            "make it clearer",
            "The tool deploys services fast to many servers at the same time.",
            False,
        ),
        (
            "make it friendlier",
            FOUR_PARTS.split("---\n\n", 1)[1].replace("Run the", "Just run the"),
            True,
        ),
        (
            "rewrite it as one paragraph",
            "The tool deploys services fast; install, run, retry.",
            True,
        ),
    ],
)
async def test_a_whole_body_answered_without_its_sections_is_refused(
    tmp_path: Path, instruction: str, answer: str, saved: bool
) -> None:
    """ "Make it clearer" of a post of three sections came back as its first paragraph
    reworded, keeping no line as it was (so ``structure_kept`` did not judge it), and the post
    was saved as that one paragraph."""
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    (blog / "posts/t.md").write_text(FOUR_PARTS, encoding="utf-8")
    llm = ScriptedModel([answer, answer])
    msg = await run_writing_skill(
        blog, llm, "EditContent", {"instruction": instruction, "path": "posts/t.md"}
    )
    after = (blog / "posts/t.md").read_text(encoding="utf-8")
    if saved:
        assert msg.state == "COMPLETED", msg.content
        assert after != FOUR_PARTS
    else:
        assert msg.state == "ERROR" and "structure_kept" in msg.content, msg.content
        assert after == FOUR_PARTS and llm.call_count == 2


async def test_a_whole_body_answered_with_a_fraction_of_its_words_is_refused(
    tmp_path: Path,
) -> None:
    """ "Fix the grammar" of a post of four paragraphs came back as its first one, and the
    post was saved as that paragraph."""
    post = FOUR_PARTS.replace("## Install\n\n", "").replace("## Usage\n\n", "")
    post = post.replace("## Errors\n\n", "")
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    (blog / "posts/t.md").write_text(post, encoding="utf-8")
    first = "The tool helps you deploy services quickly to many servers at the same time."
    llm = ScriptedModel([first, first])
    msg = await run_writing_skill(
        blog, llm, "EditContent", {"instruction": "fix the grammar", "path": "posts/t.md"}
    )
    assert msg.state == "ERROR" and "most of it was dropped" in msg.content, msg.content
    assert (blog / "posts/t.md").read_text(encoding="utf-8") == post


async def test_a_section_answered_with_a_fraction_of_its_words_is_refused(
    tmp_path: Path,
) -> None:
    """ "Make the Usage section clearer" of a section of four paragraphs came back as one
    sentence, and the section was saved as that sentence."""
    post = FOUR_PARTS.replace("## Install\n\n", "## Usage\n\n", 1).replace("## Usage\n\nRun", "Run")
    post = post.replace("## Errors\n\n", "")
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    (blog / "posts/t.md").write_text(post, encoding="utf-8")
    short = "## Usage\n\nGet the binary, run it with your config, and read the log."
    llm = ScriptedModel([short, short])
    msg = await run_writing_skill(
        blog,
        llm,
        "EditContent",
        {"instruction": "make the Usage section clearer", "path": "posts/t.md"},
    )
    assert msg.state == "ERROR" and "most of it was dropped" in msg.content, msg.content
    assert (blog / "posts/t.md").read_text(encoding="utf-8") == post


@pytest.mark.parametrize(
    "instruction",
    [
        "make the Usage section clearer",
        "fix the grammar of the second section",
        "使 Usage 小节更清楚",
    ],
)
def test_an_instruction_naming_a_section_lets_only_that_heading_go(instruction: str) -> None:
    """ "make the Usage section clearer", sent as a whole-post edit, let the answer drop every
    other section's heading (the word "section" was taken to allow reshaping them all), and
    it was saved: only the named section's own heading may go."""
    intro, text = "The intro of the post, as written.", "How to use it, as it was written."
    original = f"{intro}\n\n## Usage\n\n{text}\n\n## Errors\n\nWhat goes wrong.\n\n## End\n\nBye.\n"
    check = structure_kept(instruction, original)
    assert check is not None
    # the other sections' headings dropped, their text kept: refused
    flat = f"{intro}\n\n## Usage\n\n{text}\n\nWhat goes wrong.\n\nBye.\n"
    assert not check(Generated(text=flat)).passed
    # the named section's heading alone folded into the text: what was asked about
    folded = f"{intro}\n\n{text}\n\n## Errors\n\nWhat goes wrong.\n\n## End\n\nBye.\n"
    assert check(Generated(text=folded)).passed
    assert check(Generated(text=original.replace("as it was", "step by step,"))).passed


async def test_a_whole_post_edit_naming_a_heading_keeps_the_other_headings(tmp_path: Path) -> None:
    """ "tidy up the Options heading" is a whole-post edit (no section of the post is named
    so); its answer without the post's other headings, their text kept, was saved."""
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    post = blog / "posts" / "tool.md"
    body = (
        "The tool reads files and prints a report.\n\n## Usage\n\nRun the tool on a folder.\n\n"
        "### Options\n\nPass --fast to go faster.\n\n## Wrap-up\n\nThat is all for the tool.\n"
    )
    post.write_text(f"---\ntitle: Tool\n---\n\n{body}", encoding="utf-8")
    before = post.read_bytes()
    flat = body.replace("## Usage\n\n", "").replace("## Wrap-up\n\n", "")
    llm = ScriptedModel([flat, flat])
    rt = writing_runtime(blog, llm)
    await rt.initialize()
    instruction = "tidy up the Options heading"
    msg = await rt.run_skill("EditContent", {"instruction": instruction, "path": "posts/tool.md"})
    await rt.close()
    assert msg.state == "ERROR" and "structure_kept" in msg.content, msg.content
    assert post.read_bytes() == before
