"""An undo asked of EditContent in words: "undo the change to the sqlite post", "revert my last
edit", "撤销对这篇文章的修改". The post's newest kept version is restored as ``skillrt undo
PATH`` restores it (``skillrt.blog.versions``), with no model: before, the request was an
edit's instruction, sent to the model with the post, and its rewrite saved; the kept version
was never restored. The reply shows the diff of what came back.

Undo is of one post's last write (the post the request names, or the open one), in the order
the versions were kept, whichever process kept them: the versions are files in the state
folder, which a REPL, ``skillrt undo`` in another terminal and ``skillrt serve`` on one blog
share (with the shared PostgreSQL store each worker has its own folder).
"""

from __future__ import annotations

import re
from functools import partial

from pydantic import BaseModel

from skillrt import Replies, SkillContext, SkillResult
from skillrt.blog.posts import IndexReport
from skillrt.blog.versions import NothingToUndo
from skillrt.exceptions import FileChanged, LockConflict, UserError

from .common import unified_diff

__all__ = ["REPLIES", "is_undo", "undo_post"]

REPLIES = Replies(
    {
        "undo_action": ("撤销修改", "undo the last change to"),
        "undone_post": (
            "已撤销对 `{path}` 的上一次修改：它已恢复成修改前的样子，一字不差。"
            "\n\n```diff\n{diff}```",
            "Undid the last change to `{path}`: it is back as it was before it, byte for "
            "byte.\n\n```diff\n{diff}```",
        ),
        "undone_created": (
            "`{path}` 是新建的，撤销后已移到回收站（`{trash}`）。",
            "`{path}` was a new post: undoing it moved it to the trash (`{trash}`).",
        ),
        "undone_moved": (
            "已撤销 `{path}` 的移动：它回到了原处，`{moved}` 已移到回收站。",
            "Undid the move of `{path}`: it is back where it was, and `{moved}` went to the trash.",
        ),
        "undone_before": (
            "`{path}` 的上一次修改在中断之前已经撤销了。",
            "The last change to `{path}` was undone before the interruption.",
        ),
        "nothing_to_undo_here": (
            "`{path}` 没有可以撤销的修改（没有保存修改前的版本），文件未改动。",
            "There is no change of `{path}` to undo (no version before one is kept); the file "
            "is unchanged.",
        ),
        "undo_changed_since": (
            "`{path}` 在那次修改之后又被改过，所以没有撤销（撤销会丢掉后来的改动），文件未改动。",
            "`{path}` changed after that write, so it was not undone (that would lose the "
            "later change); the file is unchanged.",
        ),
        "undo_not_done": (
            "无法撤销 `{path}` 的修改：{error}",
            "Cannot undo the change to `{path}`: {error}",
        ),
    }
)

# "undo", "undo the change to the sqlite post", "revert my last edit", "roll back the go post
# to its previous version"; not "undo the bold in the intro", "revert the title to …" (edits).
_EN_UNDO = re.compile(
    r"^\s*(?:please\s+)?(?:undo|revert|roll\s*back|reverse)(?P<rest>(?:\s.*)?)$", re.I | re.S
)
_EN_UNDONE = re.compile(
    r"(?:(?:the|my|your|that|this|its|last|latest|previous|recent|most|one|same)\s+)*"
    r"(?:(?:[^\s,;:]+\s+){0,3}?(?:changes?|edits?|modifications?|rewrites?|revisions?|updates?|it|that|this)\b"
    r"(?:\s+(?:you\s+made\s+|i\s+made\s+|made\s+)?(?:to|of|on|in|from)\s+\S.*)?"
    r"|(?:the|my|this|that)\s+(?:\S+\s+){0,6}?(?:post|article|entry|page|note|file)\b"
    r"(?:\s+to\s+(?:its|the)\s+(?:previous|last|old|older|earlier|original)\s+version)?)?",
    re.I | re.S,
)
_POLITE_END = re.compile(r"\s*(?:,?\s*please)?\s*[.!。！]*\s*$", re.I)
# "撤销", "撤销上一次修改", "撤销对 sqlite 文章的修改"; not "撤回发布这篇文章" (unpublish)
_ZH_UNDO = re.compile(
    r"^\s*请?\s*(?:帮我)?\s*(?:撤销|撤回|回滚|还原)(?!.*发布)"
    r"(?:一下|掉)?\s*(?:对)?(?P<rest>.*?)(?:的)?(?:上一次|上次|最后一次|刚才)?"
    r"(?:的)?(?:修改|改动|编辑|更改)?\s*[。！!.]*\s*$",
    re.S,
)
_ZH_UNDONE = re.compile(r"|.*(?:文章|这篇|那篇|帖子|笔记|\.md)|它|这个|上一次|上次|刚才", re.S)
# "把它恢复原样", "把 sqlite 那篇改回去", "将这篇文章还原"
_ZH_RESTORE = re.compile(
    r"^\s*请?\s*(?:帮我)?\s*(?:把|将)\s*(?P<rest>.*?)\s*"
    r"(?:恢复原样|恢复成原来的样子|恢复到修改前|还原|改回原样|改回原来的样子|改回去)\s*(?:吧)?\s*[。！!.]*\s*$",
    re.S,
)


def is_undo(instruction: str) -> bool:
    """Whether an edit's instruction asks to undo the post's last change (see the module
    docstring)."""
    text = _POLITE_END.sub("", instruction)
    if (found := _EN_UNDO.match(text)) is not None:
        return _EN_UNDONE.fullmatch(found.group("rest").strip()) is not None
    for pattern in (_ZH_UNDO, _ZH_RESTORE):
        if (zh := pattern.match(text)) is not None:
            return _ZH_UNDONE.fullmatch(zh.group("rest").strip()) is not None
    return False


class Undid(BaseModel):
    """What the undo did (journalled: a resumed task does not undo twice)."""

    # "edit", "create", "delete", "move"; "before": done before a crash; "" refused (``error``)
    action: str = ""
    before: str = ""  # the post's text before the undo, and after it (for the diff)
    after: str = ""
    trash: str | None = None
    moved_to: str | None = None
    error: str = ""
    reason: str = ""


def _newest_version(ctx: SkillContext, path: str) -> str:
    """The id of the newest version kept of ``path`` ("" none): the one the undo restores."""
    found = ctx.versions.versions(ctx.files.relative(path)) if ctx.versions is not None else []
    return found[0].id if found else ""


def _undo(ctx: SkillContext, path: str, version: str) -> Undid:
    """The newest kept version of ``path`` restored; a refusal (``error``) when none is kept,
    the post changed since or another task holds it. Once ``version`` (journalled before) is
    gone from the store, the undo was done before a crash cut the task off: it is not done
    again, on the version before."""
    if ctx.versions is None or not version:
        return Undid(error="nothing")
    rel = ctx.files.relative(path)
    if all(kept.id != version for kept in ctx.versions.versions(rel)):
        return Undid(action="before")
    before = ctx.files.read(rel)[0] if ctx.files.exists(rel) else ""
    try:
        done = ctx.versions.undo(ctx.files, rel)
    except NothingToUndo:
        return Undid(error="nothing")
    except FileChanged:
        return Undid(error="changed")
    except (UserError, LockConflict, OSError) as exc:  # (busy, a file in the way, the disk)
        return Undid(error="refused", reason=str(exc))
    if done.moved_to is not None:
        return Undid(action="move", moved_to=done.moved_to)
    after = ctx.files.read(rel)[0] if ctx.files.exists(rel) else ""
    return Undid(action=done.action, before=before, after=after, trash=done.trash)


def _refused(ctx: SkillContext, path: str, undid: Undid) -> SkillResult:
    if undid.error == "nothing":
        key, message = "nothing_to_undo_here", ctx.reply("nothing_to_undo_here", path=path)
    elif undid.error == "changed":
        key, message = "undo_changed_since", ctx.reply("undo_changed_since", path=path)
    else:
        key = "undo_not_done"
        message = ctx.reply("undo_not_done", path=path, error=undid.reason)
    return SkillResult(success=False, message=message, data={"error": key, "path": path})


async def undo_post(ctx: SkillContext, path: str) -> SkillResult:
    """Undo the last write of ``path`` kept for undo (an edit's old bytes back, a new post to
    the trash, a publish's move back), no model; the reply shows what came back."""
    version = await ctx.step("undo_of", partial(_newest_version, ctx, path), returns=str)
    undid = await ctx.step("undo", partial(_undo, ctx, path, version), returns=Undid)
    if undid.error:
        return _refused(ctx, path, undid)
    await ctx.step("index", ctx.memory.refresh, returns=IndexReport)
    data = {"path": path, "undone": True, "action": undid.action}
    if undid.action == "before":
        message = ctx.reply("undone_before", path=path)
    elif undid.action == "move":
        message = ctx.reply("undone_moved", path=path, moved=undid.moved_to)
    elif undid.action == "create":
        message = ctx.reply("undone_created", path=path, trash=undid.trash)
    else:
        diff = unified_diff(undid.before, undid.after, path)
        message = ctx.reply("undone_post", path=path, diff=diff)
        data["diff"] = diff
    return SkillResult(message=message, data=data)
