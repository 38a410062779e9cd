"""What an edit's answer is spliced back as: a code fence that belongs to the text is kept, the
blank space around the text edited is put back (line breaks, indents, hard breaks, blank
lines), a section keeps its heading when the answer leaves it out, and a post of frontmatter
only gets its new body on a line of its own. Every byte the model did not change stays."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

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
