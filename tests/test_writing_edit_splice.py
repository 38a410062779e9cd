"""What an edit's answer is spliced back as: a code fence that belongs to the text is kept, the
blank space around the text edited is put back (line breaks, indents, hard breaks, blank
lines), a section keeps its heading when the answer leaves it out, and a post of frontmatter
only gets its new body on a line of its own. Every byte the model did not change stays."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillrt.blog.frontmatter import split_frontmatter
from skillrt.llm.base import LLMMessage
from skillrt.messages import ChatMessage
from skillrt.testing import Answer, FunctionModel, ModelOptions
from skills.writing.prompts import strip_fences
from tests.writing_support import run_writing_skill


def sent_text(messages: list[LLMMessage]) -> str:
    """The text an edit's prompt gave the model (after "Text:", without a retry's note)."""
    user = messages[-1]["content"]
    text = user[user.index("\nText:\n") + len("\nText:\n") :]
    return text.split("\n\nImportant: the first answer was refused")[0]


async def edit(
    tmp_path: Path,
    post: str,
    instruction: str,
    answer: Callable[[str], str],
    *,
    selected: str | None = None,
) -> tuple[ChatMessage, bytes, list[str]]:
    """EditContent run on a blog holding only ``post`` (bytes as given), the model answering
    ``answer(text sent)``: the reply, the post's bytes after, and the texts sent."""
    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    target = blog / "posts" / "p.md"
    target.write_bytes(post.encode("utf-8"))
    sent: list[str] = []

    def model(messages: list[LLMMessage], options: ModelOptions) -> Answer:
        sent.append(sent_text(messages))
        return answer(sent[-1])

    params: dict[str, Any] = {"instruction": instruction, "path": "posts/p.md"}
    if selected is not None:
        params["selected_text"] = selected
    msg = await run_writing_skill(blog, FunctionModel(model), "EditContent", params)
    return msg, target.read_bytes(), sent


# --- a code fence that is the text's own -------------------------------------------------

CODE_POST = (
    "---\ntitle: Snippets\n---\n\n"
    "Some prose before the code, long enough to be a real paragraph here.\n\n"
    "```bash\nls -la\nrm -rf build\n```\n\n"
    "More prose after the code block, to close the post nicely for readers.\n"
)
CODE = "```bash\nls -la\nrm -rf build\n```"
SNIPPETS = (
    "---\ntitle: S\n---\n\n```bash\nmake all\n```\n\n"
    "Then run the quick test suite to see that everything passes.\n\n```bash\nmake test\n```\n"
)


async def test_a_selected_code_block_keeps_its_fences(tmp_path: Path) -> None:
    msg, after, _ = await edit(
        tmp_path,
        CODE_POST,
        "make this command safer",
        lambda text: text.replace("rm -rf", "rm -r"),
        selected=CODE,
    )
    assert msg.state == "COMPLETED", msg.content
    assert after.decode() == CODE_POST.replace("rm -rf", "rm -r")  # still a code block


async def test_comments_added_to_a_selected_code_block_are_saved(tmp_path: Path) -> None:
    commented = "```bash\nls -la        # list files\nrm -rf build  # clean\n```"
    msg, after, _ = await edit(
        tmp_path,
        CODE_POST,
        "add a comment to each line of this code",
        lambda text: commented,
        selected=CODE,
    )
    assert msg.state == "COMPLETED", msg.content  # not "asked to add, but nothing was added"
    assert after.decode() == CODE_POST.replace(CODE, commented)


async def test_a_code_block_wrapped_in_a_fence_of_its_own_is_unwrapped(tmp_path: Path) -> None:
    msg, after, _ = await edit(
        tmp_path,
        CODE_POST,
        "make this command safer",
        lambda text: "````markdown\n" + text.replace("rm -rf", "rm -r") + "\n````",
        selected=CODE,
    )
    assert msg.state == "COMPLETED", msg.content
    assert after.decode() == CODE_POST.replace("rm -rf", "rm -r")


async def test_a_body_between_two_code_blocks_is_not_taken_as_one(tmp_path: Path) -> None:
    msg, after, _ = await edit(
        tmp_path, SNIPPETS, "improve the wording", lambda text: text.replace("quick", "fast")
    )
    assert msg.state == "COMPLETED", msg.content  # not "1 code block(s) changed"
    assert after.decode() == SNIPPETS.replace("quick", "fast")
    msg, after, _ = await edit(
        tmp_path / "2", SNIPPETS, "fix the typos in the code examples", lambda text: text
    )
    assert msg.state == "COMPLETED" and msg.data["changed"] is False, msg.content
    assert after.decode() == SNIPPETS


def test_strip_fences_takes_off_only_one_fence_around_everything() -> None:
    two = "```bash\nmake all\n```\n\nProse.\n\n```bash\nmake test\n```"
    assert strip_fences("\n" + two + "\n") == two  # first and last fence: two blocks
    bare = "```\nfoo\n```\n\nProse.\n\n```\nbar\n```"
    assert strip_fences(bare) == bare
    assert strip_fences("```markdown\n# T\n\nText.\n```") == "# T\n\nText."
    # A small model's ```markdown fence around code blocks of the text's own, each closed.
    inner = "Text.\n\n```bash\nls\n```\n\nMore."
    assert strip_fences(f"```markdown\n{inner}\n```") == inner
    # The text sent was a code block: the answer's fence is its own; a fence around it is not.
    assert strip_fences("```bash\nls -l\n```", "```bash\nls\n```") == "```bash\nls -l\n```"
    wrapped = "```markdown\n```bash\nls -l\n```\n```"
    assert strip_fences(wrapped, "```bash\nls\n```") == "```bash\nls -l\n```"
    assert strip_fences("```\nplain\n```", "plain") == "plain"


# --- the blank space around a selection -------------------------------------------------

LINES = (
    "---\ntitle: L\n---\n\nFirst line of the paragraph is here.\n"
    "Second line that the user selected whole.\nThird line stays as it was.\n"
)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
async def test_a_whole_line_selection_keeps_its_line_break(tmp_path: Path, newline: str) -> None:
    post = LINES.replace("\n", newline)
    selected = "Second line that the user selected whole." + newline
    msg, after, sent = await edit(
        tmp_path,
        post,
        "make this sentence clearer",
        lambda text: text.replace("selected whole", "picked in full").strip(),
        selected=selected,
    )
    assert msg.state == "COMPLETED", msg.content
    assert sent == [selected]
    # The next line was glued on: "…picked in full.Third line stays as it was."
    assert after.decode() == post.replace("selected whole", "picked in full")


async def test_a_selection_keeps_its_indent_and_its_hard_break(tmp_path: Path) -> None:
    post = (
        "---\ntitle: N\n---\n\n- Top item of the list here\n    - nested item with a quick word\n"
        "- Another top item\n\nLine with hard break  \nnext line.\n"
    )
    msg, after, _ = await edit(
        tmp_path,
        post,
        "make this clearer",
        lambda text: text.replace("quick", "fast").strip(),
        selected="    - nested item with a quick word",
    )
    assert msg.state == "COMPLETED", msg.content
    assert after.decode() == post.replace("quick", "fast")  # still nested
    msg, after, _ = await edit(
        tmp_path / "2",
        post,
        "make this clearer",
        lambda text: text.replace("hard", "firm").strip(),
        selected="Line with hard break  \n",
    )
    assert msg.state == "COMPLETED", msg.content
    assert after.decode() == post.replace("hard break", "firm break")  # break and newline kept


# --- a whole body: every byte the model did not change ------------------------------------

PROSE = "The quick brown fox jumps over the lazy dog near the river bank today."
BODIES = {
    "crlf": "---\r\ntitle: C\r\n---\r\n\r\n" + PROSE + "\r\n\r\n## Two\r\n\r\nMore text here.\r\n",
    "no final newline": "---\ntitle: N\n---\n\n" + PROSE + "\n\nLast line without newline.",
    "trailing spaces": "---\ntitle: T\n---\n\n" + PROSE + "  \nhard break above.\t\n\nEnd.   \n",
    "two blank lines after the frontmatter": "---\ntitle: B\n---\n\n\n" + PROSE + "\n",
    "no blank line after the frontmatter": "---\ntitle: B\n---\n" + PROSE + "\n",
    "indented code first": "---\ntitle: I\n---\n\n    $ make install\n    $ make test\n\n"
    + PROSE
    + "\n",
    "trailing blank lines": "---\ntitle: T\n---\n\n" + PROSE + "\n\n\n\n",
    "nested list first": "---\ntitle: L\n---\n\n  - " + PROSE + "\n  - second item\n",
    "no frontmatter": PROSE + "\n",
}


@pytest.mark.parametrize("name", list(BODIES))
async def test_a_body_sent_back_as_it_was_is_nothing_changed(tmp_path: Path, name: str) -> None:
    post = BODIES[name]
    msg, after, _ = await edit(tmp_path, post, "improve the wording of the post", lambda t: t)
    assert msg.state == "COMPLETED", msg.content
    assert msg.data["changed"] is False and after == post.encode()  # not "Edited the body"


@pytest.mark.parametrize("name", list(BODIES))
async def test_a_body_edit_changes_only_what_the_model_changed(tmp_path: Path, name: str) -> None:
    post = BODIES[name]
    msg, after, _ = await edit(
        tmp_path, post, "improve the wording of the post", lambda t: t.replace("quick", "rapid")
    )
    assert msg.state == "COMPLETED", msg.content
    assert after == post.replace("quick", "rapid").encode()


async def test_an_indented_block_made_a_fenced_one_is_not_indented(tmp_path: Path) -> None:
    post = BODIES["indented code first"]
    fenced = "```\n$ make install\n$ make test\n```\n\n" + PROSE
    msg, after, _ = await edit(
        tmp_path, post, "write the commands as a fenced code block", lambda t: fenced
    )
    assert msg.state == "COMPLETED", msg.content
    assert after.decode() == "---\ntitle: I\n---\n\n" + fenced + "\n"  # not "    ```"


# --- a post of frontmatter only, without a final newline ----------------------------------

INTRO = "Docker packs an application and its dependencies into one image that runs the same."


@pytest.mark.parametrize(
    "post", ["---\ntitle: Docker notes\ntags: [docker]\n---", '+++\ntitle = "Docker notes"\n+++']
)
async def test_a_body_added_after_frontmatter_without_newline_starts_a_line(
    tmp_path: Path, post: str
) -> None:
    msg, after, _ = await edit(tmp_path, post, "add an introduction about docker", lambda t: INTRO)
    assert msg.state == "COMPLETED", msg.content  # not "The frontmatter of `` cannot be read"
    assert after.decode() == post + "\n" + INTRO + "\n"
    read = split_frontmatter(after.decode())
    assert read.fields()["title"] == "Docker notes" and read.body == INTRO + "\n"


# --- a section's heading -----------------------------------------------------------------

SECTIONS = (
    "---\ntitle: Three sections\n---\n\n"
    "An opening paragraph that introduces the post with some words of prose.\n\n"
    "## Setup\n\nInstall the tool with the package manager and check the version it reports.\n\n"
    "## Usage\n\nRun the tool on a folder and read the report it prints at the end of its run.\n\n"
    "## Conclusion\n\nThat is all there is to it, and the tool is easy to adopt in a small team.\n"
)
USAGE = "Run the tool on a folder and read the report it prints at the end of its run."
BETTER = USAGE + " It also writes a log file."


@pytest.mark.parametrize(
    ("instruction", "selected"),
    [
        ("fix the grammar in the second section", None),
        ("第二节写得更清楚一些", None),
        ("make this clearer", "## Usage\n\n" + USAGE),
    ],
)
async def test_a_section_keeps_the_heading_its_answer_left_out(
    tmp_path: Path, instruction: str, selected: str | None
) -> None:
    msg, after, sent = await edit(
        tmp_path, SECTIONS, instruction, lambda text: BETTER, selected=selected
    )
    assert msg.state == "COMPLETED", msg.content
    assert sent[0].startswith("## Usage\n\n")
    # The heading was gone, its text run on in the section before.
    assert after.decode() == SECTIONS.replace(USAGE, BETTER)


async def test_a_section_answered_with_its_heading_is_saved_as_answered(tmp_path: Path) -> None:
    msg, after, _ = await edit(
        tmp_path,
        SECTIONS,
        "make the second section clearer",
        lambda text: "## How to use it\n\n" + BETTER,
    )
    assert msg.state == "COMPLETED", msg.content
    assert after.decode() == SECTIONS.replace(
        "## Usage\n\n" + USAGE, "## How to use it\n\n" + BETTER
    )


SETEXT_SECTIONS = SECTIONS.replace("## Setup", "Setup\n-----").replace("## Usage", "Usage\n-----")


@pytest.mark.parametrize(
    ("post", "answer"),
    [
        (SETEXT_SECTIONS, BETTER),  # its setext heading left out
        (SETEXT_SECTIONS, "## Usage\n\n" + BETTER),  # made an ATX one
        (SETEXT_SECTIONS.replace("\n", "\r\n"), "Usage\n=====\n\n" + BETTER),  # made a level 1
        (SECTIONS, "# Usage\n\n" + BETTER),  # a level up
        (SECTIONS, "### Usage\n\n" + BETTER),  # a level down
    ],
)
async def test_a_section_keeps_its_heading_as_the_post_wrote_it(
    tmp_path: Path, post: str, answer: str
) -> None:
    """ "make the Usage section clearer" of a post of setext headings, answered with the
    paragraph alone, lost "Usage" over "-----": its text ran on in the section before (no
    heading was seen in the section sent). An answer that gives the heading in its words but
    another form ("## Usage", "# Usage") had it saved so: it is saved as the post wrote it."""
    msg, after, _ = await edit(tmp_path, post, "make the Usage section clearer", lambda t: answer)
    assert msg.state == "COMPLETED", msg.content
    assert after.decode() == post.replace(USAGE, BETTER)


ENDED = SECTIONS.replace(
    "easy to adopt in a small team.\n",
    "easy to adopt in a [small team][1].[^1]\n\n[1]: https://example.com/teams\n"
    "[^1]: Five people or fewer.\n\n{{< comments >}}\n",
)
ERRORS = "## Error handling\n\nCheck the report for errors, and run the tool again on them."


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
async def test_a_section_added_after_the_definitions_goes_before_them(
    tmp_path: Path, newline: str
) -> None:
    """ "add a section about error handling" came back with the section after the post's
    reference and footnote definitions and its ``{{< comments >}}``, and was saved there."""
    post = ENDED.replace("\n", newline)
    msg, after, _ = await edit(
        tmp_path,
        post,
        "add a section about error handling",
        lambda text: text.replace("\r\n", "\n").rstrip() + "\n\n" + ERRORS + "\n",
    )
    assert msg.state == "COMPLETED", msg.content
    end = "\n\n[1]: https://example.com/teams"
    assert after.decode() == post.replace(
        end.replace("\n", newline), (f"\n\n{ERRORS}" + end).replace("\n", newline)
    )


DEFINED = (
    "---\ntitle: Links\n---\n\nThe tool has [docs][2] and a [home page][1].[^1]\n\n"
    "## Usage\n\nRun it on a folder, as [the guide][guide] says.\n\n"
    "[1]: https://example.com\n[2]: https://example.com/docs\n[Guide]: /guide\n"
    "[^1]: Both are\n    kept up to date.\n"
)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
async def test_a_definition_the_answer_dropped_and_still_uses_is_put_back(
    tmp_path: Path, newline: str
) -> None:
    """ "make it clearer" came back without the post's "[2]: https://example.com/docs" line
    (and its footnote), its "[docs][2]" kept: saved, the link was broken. A definition the
    answer no longer uses ("[home page][1]" taken out) stays out."""
    post = DEFINED.replace("\n", newline)

    def answer(text: str) -> str:
        text = text.replace("\r\n", "\n").replace(" and a [home page][1]", "")
        text = text.replace("[2]: https://example.com/docs\n", "").replace("Run it", "Just run it")
        return text.split("[^1]:")[0].replace("[1]: https://example.com\n", "")

    msg, after, _ = await edit(tmp_path, post, "make it clearer", answer)
    assert msg.state == "COMPLETED", msg.content
    assert after.decode() == post.replace(" and a [home page][1]", "").replace(
        "Run it", "Just run it"
    ).replace("[1]: https://example.com" + newline, "")


NESTED = (
    "---\ntitle: Tool\n---\n\nThe tool reads files and prints a report.\n\n## Usage\n\n"
    "Run the tool on a folder.\n\n### Options\n\nPass --fast to go faster.\n\n### Output\n\n"
    "The report lists every file.\n\n## Wrap-up\n\nThat is all.\n"
)
NESTED_ANSWER = (
    "## Usage\n\nRun the tool on one folder.\n\n### Options\n\nPass --fast to go faster."
)


@pytest.mark.parametrize(
    ("instruction", "saved"),
    [
        ("make the Usage section clearer", False),  # its name is no leave to drop a part
        ("make the second section clearer", False),
        ("make the Usage section shorter", True),  # asked to take away
    ],
)
async def test_a_section_answered_without_a_sub_section_is_refused_unless_asked(
    tmp_path: Path, instruction: str, saved: bool
) -> None:
    """ "make the Usage section clearer" came back without its "### Output" sub-section, the
    rest kept word for word, and was saved so: the section named let its headings go."""
    msg, after, _ = await edit(tmp_path, NESTED, instruction, lambda t: NESTED_ANSWER)
    if saved:
        assert msg.state == "COMPLETED", msg.content
        assert "### Output" not in after.decode()
    else:
        assert msg.data["outcome"] == "refused", msg.content
        assert after.decode() == NESTED


BLOCKS = (
    "---\ntitle: Math\n---\n\nThe post opens with a short paragraph of prose.\n\n## Usage\n\n"
    'The formula for the energy is below.\n\n$$\nE = mc^2\n$$\n\n<div class="note">\n'
    "A note block.\n</div>\n\nAfter the note comes the last line.\n\n## End\n\nBye.\n"
)


@pytest.mark.parametrize(
    ("instruction", "gone", "saved"),
    [
        ("make the Usage section clearer", "$$\nE = mc^2\n$$\n\n", False),
        ("fix the grammar", '<div class="note">\nA note block.\n</div>\n\n', False),
        ("make it shorter", "$$\nE = mc^2\n$$\n\n", True),  # asked to take away
        ("remove the formula from the Usage section", "$$\nE = mc^2\n$$\n\n", True),
        ("fix the typos", "A note block.", True),  # the prose in an HTML block, edited
    ],
)
async def test_a_math_or_html_block_dropped_unasked_is_refused(
    tmp_path: Path, instruction: str, gone: str, saved: bool
) -> None:
    """ "make the Usage section clearer" came back without its ``$$`` block, "fix the
    grammar" without a ``<div class="note">``, and both were saved: only fenced code was
    judged."""

    def answer(text: str) -> str:
        fixed = "A note, in a block." if gone == "A note block." else ""
        return text.replace(gone, fixed).replace("energy is below", "energy is shown below")

    msg, after, _ = await edit(tmp_path, BLOCKS, instruction, answer)
    if saved:
        assert msg.state == "COMPLETED", msg.content
        assert gone not in after.decode()
    else:
        assert msg.data["outcome"] == "refused", msg.content
        assert after.decode() == BLOCKS


async def test_a_heading_asked_away_stays_away(tmp_path: Path) -> None:
    msg, after, _ = await edit(
        tmp_path, SECTIONS, "remove the heading of the second section", lambda text: USAGE
    )
    assert msg.state == "COMPLETED", msg.content
    assert after.decode() == SECTIONS.replace("## Usage\n\n", "")


async def test_a_section_answered_from_its_sub_heading_keeps_its_heading(tmp_path: Path) -> None:
    post = SECTIONS.replace("## Usage\n\n", "## Usage\n\n### On a folder\n\n")
    answer = "### On one folder\n\n" + BETTER
    msg, after, _ = await edit(tmp_path, post, "make the second section clearer", lambda t: answer)
    assert msg.state == "COMPLETED", msg.content
    assert after.decode() == post.replace("### On a folder\n\n" + USAGE, answer)


async def test_a_selection_whose_answer_drops_its_shortcode_is_refused(tmp_path: Path) -> None:
    """A selection's answer keeps no line as it was, and was not judged for the template code
    it dropped (code_kept and template_kept judge a selection as a part)."""
    post = '---\ntitle: S\n---\n\nIntro with a {{< ref "other.md" >}} link in it.\n\nEnd.\n'
    selected = 'Intro with a {{< ref "other.md" >}} link in it.'
    msg, after, _ = await edit(
        tmp_path,
        post,
        "make this clearer",
        lambda text: "Intro with a link to the other post in it.",
        selected=selected,
    )
    assert msg.state == "ERROR" and msg.data["check"] == "template_kept", msg.content
    assert after.decode() == post


async def test_a_section_named_in_chinese_is_named_in_the_reply(tmp_path: Path) -> None:
    post = (
        "---\ntitle: U\n---\n\n介绍这个工具。\n\n## 用法\n\n运行命令就可以了，很简单。\n\n"
        "## 测试\n\n运行测试。\n"
    )
    msg, after, sent = await edit(
        tmp_path,
        post,
        "把用法一节写得更清楚",
        lambda text: text.replace("很简单", "非常简单"),
    )
    assert msg.state == "COMPLETED", msg.content
    assert sent and "介绍这个工具" not in sent[0] and "运行测试" not in sent[0]
    assert after.decode() == post.replace("很简单", "非常简单")
    assert "“用法”一节" in msg.content and "第 0 节" not in msg.content, msg.content


PARTS = (
    "---\ntitle: U\n---\n\nThis tool does one thing well.\n\n"
    "## Usage\n\nRun it, and it is simple.\n\n## Tests\n\nRun the tests.\n"
)


@pytest.mark.parametrize(
    ("instruction", "sent_whole"),
    [
        ("make the usage part clearer", False),  # (the whole body was sent, and replaced)
        ("rewrite the part about usage", False),
        ("make the hard part clearer", True),  # no heading of that name: the whole body
    ],
)
async def test_a_part_named_by_its_heading_is_that_section(
    tmp_path: Path, instruction: str, sent_whole: bool
) -> None:
    msg, after, sent = await edit(
        tmp_path, PARTS, instruction, lambda text: text.replace("simple", "very simple")
    )
    assert msg.state == "COMPLETED", msg.content
    assert ("This tool does" in sent[0]) is sent_whole and "Run it" in sent[0]
    assert after.decode() == PARTS.replace("simple", "very simple")


async def test_a_chinese_section_named_after_its_post_is_that_section(tmp_path: Path) -> None:
    """ "给它加一节关于错误处理的内容" named a section "它加" (refused: no such section); "把它的
    用法一节改清楚" named "它的用法" (the whole body)."""
    post = (
        "---\ntitle: U\n---\n\n介绍。\n\n## 用法\n\n运行命令，很简单。\n\n## 测试\n\n运行测试。\n"
    )
    msg, after, sent = await edit(
        tmp_path, post, "把它的用法一节改清楚", lambda text: text.replace("很简单", "非常简单")
    )
    assert msg.state == "COMPLETED" and "介绍" not in sent[0], msg.content
    assert after.decode() == post.replace("很简单", "非常简单")
    from skills.writing.parts import named_part

    assert named_part("给它加一节关于错误处理的内容") is None  # a section added: the body's


# --- an answer that stops mid-sentence ---------------------------------------------------

ERRORS_POST = (
    "---\ntitle: Tool notes\n---\n\nIntro of the post.\n\n## Errors\n\n"
    "It may fail when the disk is full, so check free space first and retry.\n"
)


@pytest.mark.parametrize(
    "cut",
    [
        "It may fail when the disk is full or when the state folder is read-only, and then "
        "the tool stops at once, so ch",
        "It may fail when the disk is full, so check the",  # (short, on a word no end has)
    ],
    ids=["long", "short-on-the"],
)
async def test_an_answer_that_stops_mid_sentence_is_not_saved(tmp_path: Path, cut: str) -> None:
    """ "Make the Errors section clearer" came back cut at "…so ch", short of the token
    limit, and it was saved in place of the section's last sentence."""
    msg, after, sent = await edit(
        tmp_path, ERRORS_POST, "make the Errors section clearer", lambda text: f"## Errors\n\n{cut}"
    )
    assert msg.state == "ERROR" and len(sent) == 2  # asked again once, then refused
    assert "mid-sentence" in msg.content and after.decode() == ERRORS_POST


async def test_a_short_answer_without_its_full_stop_is_saved(tmp_path: Path) -> None:
    """A short answer with no full stop ("(edit) answer", a test model's) is no answer cut off:
    it was refused as stopping mid-sentence."""
    msg, after, _ = await edit(
        tmp_path,
        ERRORS_POST,
        "make the Errors section clearer",
        lambda text: "## Errors\n\nCheck the disk",
    )
    assert msg.state == "COMPLETED", msg.content
    assert after.decode().endswith("## Errors\n\nCheck the disk\n")


async def test_an_answer_that_ends_its_sentence_is_saved(tmp_path: Path) -> None:
    new = "## Errors\n\nIt fails when the disk is full: free some space, then retry."
    msg, after, _ = await edit(
        tmp_path, ERRORS_POST, "make the Errors section clearer", lambda text: new
    )
    assert msg.state == "COMPLETED", msg.content
    assert after.decode() == ERRORS_POST.replace(
        "## Errors\n\nIt may fail when the disk is full, so check free space first and retry.", new
    )


SUBSECTIONED = (
    "---\ntitle: Tool notes\n---\n\nIntro of the post, long enough to be a paragraph.\n\n"
    "## Usage\n\nUse the tool with care when you run it on a server. It has many options.\n\n"
    "### Options\n\nPass --fast to speed it up, and pass --safe to be careful about things.\n"
)


async def test_a_selection_answered_without_its_heading_is_judged_with_it(
    tmp_path: Path,
) -> None:
    """A selection from "## Usage" answered without that line was refused by
    ``structure_kept`` ("the text had 2 heading(s) and now has 1"), though the splice puts
    the heading back: the answer is judged as it is saved."""
    selected = SUBSECTIONED.split("---\n\n", 1)[1].split("\n\n", 1)[1].rstrip("\n")
    msg, after, sent = await edit(
        tmp_path,
        SUBSECTIONED,
        "fix the grammar",
        lambda text: text.replace("## Usage\n\n", "").replace("It has many", "It has a lot of"),
        selected=selected,
    )
    assert msg.state == "COMPLETED", msg.content
    assert after.decode() == SUBSECTIONED.replace("It has many", "It has a lot of")
    assert len(sent) == 1


@pytest.mark.parametrize(
    ("lead_in", "saved"),
    [
        ("Sure! Here is the friendlier section:\n\n", ""),  # a lead-in: not the post's
        ("A new opening paragraph.\n\n", "A new opening paragraph.\n\n"),  # kept, said
    ],
)
async def test_a_section_answered_below_a_lead_in_keeps_its_heading_once(
    tmp_path: Path, lead_in: str, saved: str
) -> None:
    """ "Sure! Here is the friendlier section:", then the section with its own heading: the
    heading was put in front again, and the section saved with it twice and the model's
    words to the user between them."""
    post = SUBSECTIONED.split("\n\n### Options")[0] + "\n\n## Errors\n\nIt may fail.\n"
    msg, after, _ = await edit(
        tmp_path,
        post,
        "make the Usage section friendlier",
        lambda text: lead_in + text.replace("Use the tool", "Just use the tool"),
    )
    assert msg.state == "COMPLETED", msg.content
    assert after.decode() == post.replace("## Usage", saved + "## Usage").replace(
        "Use the tool", "Just use the tool"
    )


async def test_an_answer_that_ends_in_a_list_item_or_a_definition_is_saved(
    tmp_path: Path,
) -> None:
    """A list item or a reference definition may end without a full stop: "add a list of
    requirements" is not cut off mid-sentence."""
    added = "\n\nYou need:\n\n- Go 1.22\n- Docker\n\n[docs]: https://example.com/docs"
    msg, after, _ = await edit(
        tmp_path,
        ERRORS_POST,
        "add a list of requirements to the Errors section",
        lambda text: text.rstrip() + added,
    )
    assert msg.state == "COMPLETED", msg.content
    assert after.decode() == ERRORS_POST.rstrip("\n") + added + "\n"
