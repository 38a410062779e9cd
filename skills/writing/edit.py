"""EditContent: rewrite the selection or the whole body of a post, keeping its frontmatter.

The file is read (text and hash) in a durable step before the model is asked; the save passes
that hash to ``FileStore.write``, which refuses (``FileChanged``) if the file changed on disk
meanwhile, e.g. in the user's editor. The frontmatter block (YAML ``---``, TOML ``+++`` or
JSON, ``skillrt.blog.frontmatter``) is cut off before the model is asked and written back byte
for byte: every field the user has (and its formatting and comments) survives, and a
frontmatter block at the top of the model's reply is dropped, never written as the post's.
The reply carries a unified diff.
"""

from __future__ import annotations

import difflib
import re
from functools import partial
from typing import Annotated, Any

from pydantic import BaseModel, model_validator

from skillrt import Replies, SkillContext, SkillResult, skill
from skillrt.blog.frontmatter import split_frontmatter, strip_frontmatter
from skillrt.blog.posts import IndexReport
from skillrt.blog.wikilinks import wikilink_targets
from skillrt.skill.context import detect_language
from skillrt.skill.params import Chars, PostPath

from . import checked as checked_replies
from . import pick
from .checked import checked, quality_report, refuse_unchecked
from .checks import (
    MIN_SHARE,
    Check,
    Generated,
    frontmatter_kept,
    instruction_kind,
    kind_of,
    language,
    language_share,
    no_scaffolding,
    not_degenerate,
    scope,
    wikilinks,
    without_none,
)
from .common import MAX_INSTRUCTION_CHARS, refuse, text_hash
from .pick import ask_for_post, no_post_chosen
from .prompts import EDIT_SYSTEM, PROMPT_BODY_CHARS, clip, edit_prompt, messages, strip_fences
from .scaffold import Scaffold
from .translate import language_code

__all__ = ["EditParams", "Revision", "edit_content", "unified_diff"]

MAX_DIFF_IN_MESSAGE = 4000

REPLIES = (
    Replies(
        {
            "no_instruction": ("请说明要怎么修改。", "Please say how the text should change."),
            "instruction_too_long": (
                "修改说明太长了（最多 {limit} 个字符）。",
                "The instruction is too long (at most {limit} characters).",
            ),
            "action": ("修改", "edit"),
            "reading": ("读取文件", "Reading the file"),
            "selection_not_found": (
                "在文件正文里找不到选中的文字（文件可能已被修改），请重新选择。",
                "The selected text is not in the file's body (it may have changed); "
                "select it again.",
            ),
            "too_long": (
                "要修改的内容太长（{chars} 个字符，最多 {limit}）。请选中一部分再修改。",
                "The text to edit is too long ({chars} characters; at most {limit}). "
                "Select a part of it and try again.",
            ),
            "editing": ("修改中", "Editing"),
            "unchanged": (
                "内容没有变化，文件未改动。",
                "Nothing changed; the file is untouched.",
            ),
            "saving": ("保存", "Saving"),
            "the_selection": ("选中的文字", "the selection"),
            "the_body": ("正文", "the body"),
            "edited": (
                "已修改 `{path}` 的{what}，frontmatter 保持不变。\n\n```diff\n{diff}```",
                "Edited {what} of `{path}`; the frontmatter is unchanged.\n\n```diff\n{diff}```",
            ),
        }
    )
    | pick.REPLIES
    | checked_replies.REPLIES
)

Instruction = Annotated[
    str,
    Chars(
        MAX_INSTRUCTION_CHARS,
        squash=False,
        empty="no_instruction",
        too_long="instruction_too_long",
    ),
]


class EditParams(BaseModel):
    instruction: Instruction
    path: PostPath = None
    selected_text: str | None = None  # kept as given: it must match the file byte for byte


class Revision(BaseModel):
    """The model's edit, and whether it fell into a loop and was cut short."""

    text: str
    looped: bool = False

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        return {"text": value} if isinstance(value, str) else value  # journals of old: text


class Written(BaseModel):
    """The sha256 of the saved post."""

    hash: str


_ASKED_LANGUAGE = re.compile(
    r"\b(?:into|in|to)\s+([A-Za-z]+)\b|(?:翻译成|译成|改成|换成|改写成|用)\s*([\u4e00-\u9fff]{2,4}?)(?:写|表达|$|[，。,.])",
    re.I,
)


def asked_language(instruction: str) -> str | None:
    """The language an instruction asks the text to be in ("into English", "翻译成英文")."""
    for match in _ASKED_LANGUAGE.finditer(instruction):
        code = language_code(match.group(1) or match.group(2) or "")
        if code is not None:
            return code
    return None


def unified_diff(old: str, new: str, path: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _span(body: str, selection: str) -> tuple[int, str] | None:
    """Where the text to edit starts in ``body``, and the text: the selection, else the whole
    body; None when the selection is not in the body."""
    if not selection.strip():
        return 0, body
    where = body.find(selection)
    return (where, selection) if where >= 0 else None


def _splice(block: str, body: str, where: int, original: str, revised: str, whole: bool) -> str:
    """The new body: ``revised`` in place of ``original`` (or of the whole body)."""
    if not whole:
        return body[:where] + revised + body[where + len(original) :]
    new_body = revised if revised.endswith("\n") else revised + "\n"
    if block and not new_body.startswith("\n") and body.startswith("\n"):
        new_body = "\n" + new_body  # keep the blank line after the frontmatter
    return new_body


def _without_frontmatter(revised: str, original: str) -> str:
    """The model's text without a frontmatter block it put in front (it echoed the post's, or
    made one up): a reply is never written as the post's frontmatter. Kept when the text sent
    began with such a block itself."""
    if strip_frontmatter(original)[1]:
        return revised
    return strip_frontmatter(revised)[0]


async def _revise(ctx: SkillContext, instruction: str, original: str, note: str) -> Generated:
    prompt = edit_prompt(instruction, original) + note
    limit = max(512, len(original))
    result = await ctx.llm.chat(messages(EDIT_SYSTEM, prompt), max_tokens=limit)
    return Generated(
        text=_without_frontmatter(strip_fences(result.content), original),
        looped=result.truncated_repetition,
        cut=result.usage.completion_tokens >= limit,
    )


def edit_checks(
    ctx: SkillContext,
    instruction: str,
    *,
    block: str,
    body: str,
    where: int,
    original: str,
    whole: bool,
) -> list[Check]:
    """What an edit's answer must pass before it is saved (see ``checks.py``)."""
    rest = body[:where] + "\n" + body[where + len(original) :]
    kind = instruction_kind(instruction, original)
    target = asked_language(instruction)
    if target is None and language_share(original, detect_language(original)) >= MIN_SHARE:
        target = detect_language(original)  # an edit keeps the text's language

    def compose(text: str) -> str:
        return block + _splice(block, body, where, original, text, whole=whole)

    return without_none(
        [
            no_scaffolding(
                Scaffold([EDIT_SYSTEM, edit_prompt(instruction, "")], content=[original])
            ),
            not_degenerate,
            kind,
            None if whole else scope(original, rest, growing=kind_of(instruction) == "add"),
            language(target) if target and len(original.split()) >= 3 else None,
            wikilinks(
                lambda name: ctx.memory.resolve_link(name) is not None,
                known=wikilink_targets(body),
            ),
            frontmatter_kept(block, compose),
        ]
    )


def _save(ctx: SkillContext, path: str, new_text: str, digest: str) -> Written:
    """Write ``new_text`` over the post read as ``digest`` (refused if it changed since)."""
    if ctx.files.hash_of(path) == text_hash(new_text):
        return Written(hash=text_hash(new_text))  # saved before a crash cut the task off
    _, written = ctx.files.write(path, new_text, expected_hash=digest)
    return Written(hash=written)


async def _post_to_edit(ctx: SkillContext, params: EditParams) -> str | None:
    """The post to edit: the one named, the open one, else the one the user picks."""
    target = params.path or ctx.input.current_file
    if not target:
        target = await ask_for_post(ctx, ctx.reply("action"))
    return ctx.files.relative(target) if target else None


@skill(
    name="EditContent",
    intents=["EDIT_CONTENT"],
    params=EditParams,
    description="Edit the selected text or the whole body of a post as instructed",
    replies=REPLIES,
)
async def edit_content(ctx: SkillContext, params: EditParams) -> SkillResult:
    path = await _post_to_edit(ctx, params)
    if path is None:
        return no_post_chosen(ctx)
    selection = params.selected_text or ctx.input.selected_text or ""

    ctx.progress(1, 3, ctx.reply("reading"), path)
    text, digest = await ctx.read("read", path)
    post = split_frontmatter(text, path)  # YAML, TOML or JSON; the model never sees it
    post.fields()  # refuses a post whose frontmatter cannot be read
    block, body = post.block, post.body
    span = _span(body, selection)
    if span is None:
        return refuse(ctx, "selection_not_found")
    where, original = span
    if len(original) > PROMPT_BODY_CHARS:
        return refuse(ctx, "too_long", chars=len(original), limit=PROMPT_BODY_CHARS)

    ctx.progress(2, 3, ctx.reply("editing"))
    whole = not selection.strip()
    checks = edit_checks(
        ctx, params.instruction, block=block, body=body, where=where, original=original, whole=whole
    )
    revision = await checked(
        ctx, "edit", partial(_revise, ctx, params.instruction, original), checks
    )
    if not revision.passed:  # nothing is saved: the reply shows the model's text and why
        return refuse_unchecked(ctx, revision, path=path)
    report = quality_report([revision])
    new_body = _splice(block, body, where, original, revision.text, whole=whole)
    if block + new_body == text:
        return SkillResult(
            message=ctx.reply("unchanged"),
            data={"path": path, "diff": "", "changed": False, "checks": report},
        )

    ctx.progress(3, 3, ctx.reply("saving"), path)
    saved = await ctx.step(
        "save", partial(_save, ctx, path, block + new_body, digest), returns=Written
    )
    await ctx.step("index", ctx.memory.refresh, returns=IndexReport)
    diff = unified_diff(body, new_body, path)
    shown = diff if len(diff) <= MAX_DIFF_IN_MESSAGE else clip(diff, MAX_DIFF_IN_MESSAGE) + "\n"
    what = ctx.reply("the_selection" if selection.strip() else "the_body")
    return SkillResult(
        message=ctx.reply("edited", path=path, what=what, diff=shown),
        data={
            "path": path,
            "diff": diff,
            "changed": True,
            "hash": saved.hash,
            "checks": report,
        },
    )
