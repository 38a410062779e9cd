"""EditContent: rewrite the selection or the whole body of a post, keeping its frontmatter.

The file is read (text and hash) in a durable step before the model is asked; the save passes
that hash to ``FileStore.write``, which refuses (``FileChanged``) if the file changed on disk
meanwhile, e.g. in the user's editor. The frontmatter block is kept byte for byte: every field
the user has (and its formatting and comments) survives. The reply carries a unified diff.
"""

from __future__ import annotations

import asyncio
import difflib
from typing import Any

from pydantic import BaseModel

from skillrt import SkillContext, SkillResult, skill
from skillrt.storage.markdown import split_post

from .common import (
    MAX_INSTRUCTION_CHARS,
    failure,
    friendly_errors,
    refresh_memory,
    split_frontmatter_block,
    text_hash,
)
from .pick import ask_for_post, no_post_chosen
from .prompts import EDIT_SYSTEM, PROMPT_BODY_CHARS, clip, messages, strip_fences

__all__ = ["EditParams", "edit_content", "unified_diff"]

MAX_DIFF_IN_MESSAGE = 4000


class EditParams(BaseModel):
    instruction: str
    path: str | None = None
    selected_text: str | None = None


def unified_diff(old: str, new: str, path: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@skill(
    name="EditContent",
    intents=["EDIT_CONTENT"],
    params=EditParams,
    description="Edit the selected text or the whole body of a post as instructed",
)
@friendly_errors
async def edit_content(ctx: SkillContext, params: EditParams) -> SkillResult:
    say = ctx.say
    instruction = params.instruction.strip()
    if not instruction:
        return failure(ctx, "请说明要怎么修改。", "Please say how the text should change.")
    if len(instruction) > MAX_INSTRUCTION_CHARS:
        return failure(
            ctx,
            f"修改说明太长了（最多 {MAX_INSTRUCTION_CHARS} 个字符）。",
            f"The instruction is too long (at most {MAX_INSTRUCTION_CHARS} characters).",
            error="instruction_too_long",
        )
    target = params.path or ctx.input.current_file
    if not target:
        target = await ask_for_post(ctx, "修改", "edit")
        if target is None:
            return no_post_chosen(ctx)
    path = ctx.files.relative(target)
    selection = params.selected_text or ctx.input.selected_text or ""

    ctx.progress(1, 3, say("读取文件", "Reading the file"), path)
    text, digest = await ctx.read("read", path)
    split_post(text, path)  # refuses a post whose frontmatter cannot be read
    block, body = split_frontmatter_block(text)
    if selection.strip():
        where = body.find(selection)
        if where < 0:
            return failure(
                ctx,
                "在文件正文里找不到选中的文字（文件可能已被修改），请重新选择。",
                "The selected text is not in the file's body (it may have changed); "
                "select it again.",
                error="selection_not_found",
            )
        original = selection
    else:
        where, original = 0, body
    if len(original) > PROMPT_BODY_CHARS:
        return failure(
            ctx,
            f"要修改的内容太长（{len(original)} 个字符，最多 {PROMPT_BODY_CHARS}）。"
            "请选中一部分再修改。",
            f"The text to edit is too long ({len(original)} characters; at most "
            f"{PROMPT_BODY_CHARS}). Select a part of it and try again.",
            error="too_long",
        )

    ctx.progress(2, 3, say("修改中", "Editing"))

    async def revise() -> dict[str, Any]:
        prompt = f"Instruction: {instruction}\n\nText:\n{original}"
        result = await ctx.llm.chat(
            messages(EDIT_SYSTEM, prompt), max_tokens=max(512, len(original))
        )
        return {"text": strip_fences(result.content), "looped": result.truncated_repetition}

    edited: dict[str, Any] | str = await ctx.step("edit", revise)
    revised = edited if isinstance(edited, str) else str(edited["text"])  # older journals: str
    if isinstance(edited, dict) and edited.get("looped"):
        return failure(  # a cut-short edit would lose the rest of the text
            ctx,
            "模型开始不断重复，修改被截断了；为了不丢失内容，文件未改动。请再试一次或换个说法。",
            "The model started repeating itself and its edit was cut short; to keep your text "
            "whole, the file is unchanged. Try again or rephrase the instruction.",
            error="repetition",
        )
    if not revised.strip():
        return failure(
            ctx,
            "模型没有返回修改后的文字，文件未改动。",
            "The model returned no text; the file is unchanged.",
        )
    if selection.strip():
        new_body = body[:where] + revised + body[where + len(original) :]
    else:
        new_body = revised if revised.endswith("\n") else revised + "\n"
        if block and not new_body.startswith("\n") and body.startswith("\n"):
            new_body = "\n" + new_body
    new_text = block + new_body
    diff = unified_diff(body, new_body, path)
    if new_text == text:
        return SkillResult(
            message=say("内容没有变化，文件未改动。", "Nothing changed; the file is untouched."),
            data={"path": path, "diff": "", "changed": False},
        )

    ctx.progress(3, 3, say("保存", "Saving"), path)

    def save() -> dict[str, str]:
        if ctx.files.hash_of(path) == text_hash(new_text):
            return {"hash": text_hash(new_text)}  # saved before a crash cut the task off
        _, written = ctx.files.write(path, new_text, expected_hash=digest)
        return {"hash": written}

    saved = await ctx.step("save", lambda: asyncio.to_thread(save))  # blocking I/O: a thread
    await ctx.step("index", lambda: refresh_memory(ctx))
    shown = diff if len(diff) <= MAX_DIFF_IN_MESSAGE else clip(diff, MAX_DIFF_IN_MESSAGE) + "\n"
    what = say("选中的文字", "the selection") if selection.strip() else say("正文", "the body")
    message = say(
        f"已修改 `{path}` 的{what}，frontmatter 保持不变。\n\n```diff\n{shown}```",
        f"Edited {what} of `{path}`; the frontmatter is unchanged.\n\n```diff\n{shown}```",
    )
    return SkillResult(
        message=message,
        data={"path": path, "diff": diff, "changed": True, "hash": saved["hash"]},
    )
