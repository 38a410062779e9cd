"""``code_kept``: an edit whose instruction is not about code leaves the code blocks as they
were. Found on the Hugo fixture: "make the notes on shells post more concise" came back with a
block's fences gone, its ``# comment`` line now the post's first heading, and was saved."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.skills.writing.checks import Generated, code_kept, fenced_blocks
from skillrt.testing import ScriptedModel
from tests.blog import copy_fixture
from tests.writing_support import writing_runtime

POST = "content/posts/notes-on-shells.md"
BODY = (
    "\n```bash\n# not a title: a comment in a code block\necho hello\n```\n\n"
    "# Notes on shells\n\nBash and zsh differ in small ways, and the differences matter.\n"
)
MANGLED = '\n# not a title: a comment in a code block\necho "Hello, World!"\n'


def verdict(instruction: str, answer: str, original: str = BODY) -> bool | None:
    check = code_kept(instruction, original)
    return None if check is None else check(Generated(text=answer)).passed


def test_the_blocks_of_a_text_from_fence_to_fence() -> None:
    text = "a\n```py\nx = 1   \n```\nb\n~~~~\n```\ninner\n```\n~~~~\n```sh\nopen"
    assert fenced_blocks(text) == [
        "```py\nx = 1\n```",
        "~~~~\n```\ninner\n```\n~~~~",
        "```sh\nopen",
    ]


def test_code_taken_out_of_its_block_fails() -> None:
    assert verdict("make it more concise", MANGLED) is False


def test_a_changed_block_fails_and_a_kept_one_passes() -> None:
    assert verdict("fix the typos", BODY.replace("echo hello", "echo helo")) is False
    assert verdict("make it more concise", BODY.replace(", and the differences matter", ""))


def test_a_dropped_block_fails_unless_the_instruction_may_remove() -> None:
    without = BODY.split("```\n", 2)[-1]
    assert verdict("make the tone friendlier", without) is False
    assert verdict("make it more concise", without) is True
    assert verdict("remove the intro", without) is True
    # A text written anew (no line of the prose kept) is not judged for what it dropped.
    assert verdict("make the tone friendlier", "Something else entirely.") is True


def test_instructions_about_code_and_texts_without_code_are_not_judged() -> None:
    assert verdict("fix the code example", MANGLED) is None
    assert verdict("把示例代码改成 zsh", MANGLED) is None
    assert verdict("make it more concise", MANGLED, original="Just prose here.") is None


@pytest.mark.parametrize(
    ("answer", "saved"),
    [
        (MANGLED, False),
        (BODY.replace(", and the differences matter", ""), True),
    ],
)
async def test_an_edit_that_mangles_code_is_refused_and_nothing_is_saved(
    tmp_path: Path, answer: str, saved: bool
) -> None:
    blog = copy_fixture("hugo", tmp_path / "blog")
    post = blog / POST
    text = post.read_text(encoding="utf-8")
    block, body = text.split("---\n", 2)[1], text.split("---\n", 2)[2]
    post.write_text(f"---\n{block}---\n{BODY}", encoding="utf-8")
    before = post.read_bytes()
    assert body.startswith("\n```bash")
    llm = ScriptedModel([answer, answer])
    rt = writing_runtime(blog, llm)
    msg = await rt.run_skill("EditContent", {"instruction": "make it more concise", "path": POST})
    await rt.close()
    if saved:
        assert msg.state == "COMPLETED", msg.content
        assert post.read_text(encoding="utf-8").endswith("Bash and zsh differ in small ways.\n")
    else:
        assert msg.state == "ERROR" and msg.data["check"] == "code_kept", msg.content
        assert "code taken out of its block" in msg.data["reason"]
        assert post.read_bytes() == before
        assert llm.call_count == 2  # asked again once with the reason


def test_an_edit_of_one_part_may_not_drop_its_code_block() -> None:
    """A part's answer, written anew, was not judged for a block it dropped."""
    part = "## Usage\n\nRun it:\n\n```sh\nmake build\n```"
    anew = "## Usage\n\nRun the build with make."
    assert verdict("make the Usage section clearer", anew, part) is False
    assert verdict("make it clearer", anew, part) is True  # the whole body, anew
    check = code_kept("make it clearer", part, scoped=True)  # a selection
    assert check is not None and not check(Generated(text=anew)).passed
