"""A tag change made in every post of the blog: "rename the tag rust to rustlang in every
post", "remove the tag draft from all posts", "add the tag blog everywhere", "把所有文章的标签
rust 改成 rustlang".

Before, such a request asked which post to edit and changed only the one picked. Now the posts
that carry the tag (to add one: every post that lacks it) are found in the index and listed,
and, when the request asks to confirm (the chat does, as for any edit), the user is asked once.
Then each post is changed as a one-post tag edit is (``tags.retagged``: every other byte
stays), in a durable step of its own, with its version kept for ``skillrt undo`` (which restores
one post at a time). A post that cannot be changed is left as it was and named in the reply
with the reason: its frontmatter cannot be read, it changed since it was listed, or its tag is
only in its text (an Obsidian ``#tag``). The other posts are still changed.

Setting every post's whole tag list at once is refused, because it would wipe each post's own
tags.
"""

from __future__ import annotations

from functools import partial
from typing import Literal

from pydantic import BaseModel

from skillrt import Replies, SkillContext, SkillResult
from skillrt.blog.frontmatter import split_frontmatter, yaml_list_style
from skillrt.blog.posts import IndexReport
from skillrt.exceptions import FileChanged, LockConflict, UserError

from .asking import confirms_or_answers, saves
from .checked import CHECKED
from .common import confirming, keep_version, refuse, text_hash, unified_diff
from .fields import only_field_set
from .newpost import blog_style
from .tags import TagChange, retagged

__all__ = ["REPLIES", "retag_every_post"]

LISTED = 30  # posts named in the question and the reply; the rest are counted
Left = Literal["", "unreadable", "changed", "busy", "not_there", "more_than_tags"]
_LEFT = ("unreadable", "changed", "busy", "not_there", "more_than_tags")  # (its replies' order)
_FORMS = ("rename", "remove", "add")  # (the replies' order)

REPLIES = Replies(
    {
        "every_finding": ("查找带这个标签的文章", "Finding the posts"),
        "every_retagging": ("修改标签", "Changing the tags"),
        "every_none_rename": (
            "没有文章带标签“{tag}”，没有改动任何文件。",
            "No post has the tag “{tag}”; no file was changed.",
        ),
        "every_none_remove": (
            "没有文章带这些标签：{tags}，没有改动任何文件。",
            "No post has the tag(s) {tags}; no file was changed.",
        ),
        "every_none_add": (
            "每篇文章都已经有这些标签：{tags}，没有改动任何文件。",
            "Every post already has the tag(s) {tags}; no file was changed.",
        ),
        "every_set_refused": (
            "一次把所有文章的标签都设成同样的会抹掉每篇文章自己的标签，所以没有这样做。"
            "可以一次添加、删除或重命名一个标签，或者只改一篇文章的标签。",
            "Setting every post's tags to the same list would wipe each post's own tags, so "
            "nothing was changed. Add, remove or rename a tag in every post instead, or set "
            "the tags of one post.",
        ),
        "every_confirm_rename": (
            "要在这 {count} 篇文章里把标签“{old}”改成“{new}”吗？\n\n{posts}\n\n请回答“是”或“否”。",
            "Rename the tag “{old}” to “{new}” in these {count} posts?\n\n{posts}\n\n"
            "Answer yes or no.",
        ),
        "every_confirm_remove": (
            "要从这 {count} 篇文章里删除标签 {tags} 吗？\n\n{posts}\n\n请回答“是”或“否”。",
            "Remove the tag(s) {tags} from these {count} posts?\n\n{posts}\n\nAnswer yes or no.",
        ),
        "every_confirm_add": (
            "要给这 {count} 篇文章加上标签 {tags} 吗？\n\n{posts}\n\n请回答“是”或“否”。",
            "Add the tag(s) {tags} to these {count} posts?\n\n{posts}\n\nAnswer yes or no.",
        ),
        "every_not_done": ("好的，没有改动任何文章。", "OK, no post was changed."),
        "every_done_rename": (
            "已在 {count} 篇文章里把标签“{old}”改成“{new}”：\n\n{posts}",
            "Renamed the tag “{old}” to “{new}” in {count} post(s):\n\n{posts}",
        ),
        "every_done_remove": (
            "已从 {count} 篇文章里删除标签 {tags}：\n\n{posts}",
            "Removed the tag(s) {tags} from {count} post(s):\n\n{posts}",
        ),
        "every_done_add": (
            "已给 {count} 篇文章加上标签 {tags}：\n\n{posts}",
            "Added the tag(s) {tags} to {count} post(s):\n\n{posts}",
        ),
        "every_kept": (
            "\n\n每篇文章的正文和其他字段都保持不变。`undo` 一次恢复一篇文章。",
            "\n\nThe body and every other field of each post are unchanged. `undo` restores "
            "one post at a time.",
        ),
        "every_left": (
            "\n\n这些文章没有改动：\n\n{posts}",
            "\n\nThese posts were left as they were:\n\n{posts}",
        ),
        "every_more": ("- ……还有 {more} 篇", "- … and {more} more"),
        "left_unreadable": ("frontmatter 无法读取", "its frontmatter cannot be read"),
        "left_changed": ("列出之后它被改动过", "it changed after it was listed"),
        "left_busy": ("另一个任务正在改动它", "another task is changing it"),
        "left_not_there": (
            "标签不在 frontmatter 里（可能写在正文中）",
            "the tag is not in its frontmatter (it may be in its text)",
        ),
        "left_more_than_tags": (
            "改标签会连带改动其他内容",
            "changing its tags would change more than its tags",
        ),
    }
)


class Retag(BaseModel):
    """One post's part of the change, as its step journals it."""

    path: str
    changed: bool
    left: Left = ""
    diff: str = ""


def _posts_for(ctx: SkillContext, change: TagChange) -> list[str]:
    """The posts the change is for, by path: those with the tag (with any of the tags, to
    remove them), or, to add tags, those without one of them. Blocking I/O: a sync step."""
    ctx.memory.refresh()
    wanted = {t.casefold() for t in (change.tags[:1] if change.action == "rename" else change.tags)}
    found = []
    for meta in ctx.memory.posts.all_posts():
        has = {t.casefold() for t in meta.tags}
        if (not wanted <= has) if change.action == "add" else bool(wanted & has):
            found.append(meta.path)
    return sorted(found)


def _retag_one(ctx: SkillContext, path: str, change: TagChange, step: str, lists: str) -> Retag:
    """Change the tags of ``path`` (blocking I/O: a sync step). A resumed task whose write of
    it was made before the crash finds it so, by the version it kept."""
    files = ctx.files
    try:
        text, digest = files.read(path)
        post = split_frontmatter(text, path)
        post.fields()
    except UserError:
        return Retag(path=path, changed=False, left="unreadable")
    if ctx.versions is not None and any(
        v.key == f"{ctx.task_id}:{step}" and v.after == digest for v in ctx.versions.versions(path)
    ):
        return Retag(path=path, changed=True)  # (written before the task was cut off)
    own = yaml_list_style(post.inner) if post.format == "yaml" else None
    style = own or ("quoted" if lists == "quoted" else "flow" if lists == "flow" else "block")
    zola = ctx.config.layout.kind == "zola"
    result = retagged(
        post, change, zola=zola, lists=style if post.format in (None, "yaml") else None
    )
    if result.text == text:
        return Retag(path=path, changed=False, left="not_there")
    if not only_field_set(post, result.text, path, result.field.split(".")[0]):
        return Retag(path=path, changed=False, left="more_than_tags")
    keep_version(ctx, path, "edit", step=step, after=text_hash(result.text))
    try:
        files.write(path, result.text, expected_hash=digest)
    except FileChanged:
        return Retag(path=path, changed=False, left="changed")
    except LockConflict:
        return Retag(path=path, changed=False, left="busy")
    return Retag(path=path, changed=True, diff=unified_diff(text, result.text, path))


def _blog_lists(ctx: SkillContext) -> str:
    return blog_style(ctx).lists


def _listed(ctx: SkillContext, paths: list[str], why: dict[str, str] | None = None) -> str:
    lines = [f"- `{p}`" + (f" ({why[p]})" if why else "") for p in paths[:LISTED]]
    if len(paths) > LISTED:
        lines.append(ctx.reply("every_more", more=len(paths) - LISTED))
    return "\n".join(lines)


def _tags(ctx: SkillContext, tags: tuple[str, ...]) -> str:
    return "、".join(tags) if ctx.input.language == "zh" else ", ".join(f"“{t}”" for t in tags)


async def retag_every_post(ctx: SkillContext, change: TagChange) -> SkillResult:
    """Make ``change`` in every post it is for (see the module docstring)."""
    if change.action == "set" or not change.tags:
        return refuse(ctx, "every_set_refused")
    form = _FORMS.index(change.action)
    old, new = (*change.tags, "")[:2]
    values = {"tags": _tags(ctx, change.tags), "tag": old, "old": old, "new": new}
    about = {"action": change.action, "tags": list(change.tags)}
    ctx.progress(1, 3, ctx.reply("every_finding"))
    paths = await ctx.step("tagged_posts", partial(_posts_for, ctx, change), returns=list[str])
    if not paths:
        return SkillResult(
            message=ctx.reply(
                ("every_none_rename", "every_none_remove", "every_none_add")[form], **values
            ),
            data={"paths": [], "changed": False, **about},
        )
    if confirming(ctx):
        question = ctx.reply(
            ("every_confirm_rename", "every_confirm_remove", "every_confirm_add")[form],
            count=len(paths),
            posts=_listed(ctx, paths),
            **values,
        )
        if not saves(await ctx.ask(question, accepts=confirms_or_answers)):
            return SkillResult(
                message=ctx.reply("every_not_done"),
                data={"paths": [], "changed": False, "written": False, **about},
            )
    lists = "block"
    if change.action == "add":  # a post without lists of its own writes them as the blog does
        lists = await ctx.step("list_style", partial(_blog_lists, ctx), returns=str)
    done: list[Retag] = []
    for i, path in enumerate(paths, 1):
        ctx.progress(2, 3, ctx.reply("every_retagging"), f"{i}/{len(paths)} {path}")
        step = f"retag:{i}"
        one = partial(_retag_one, ctx, path, change, step, lists)
        done.append(await ctx.step(step, one, returns=Retag))
    await ctx.step("index", ctx.memory.refresh, returns=IndexReport)
    changed = [r.path for r in done if r.changed]
    left = {r.path: r.left for r in done if not r.changed}
    why = {
        path: ctx.reply(
            (
                "left_unreadable",
                "left_changed",
                "left_busy",
                "left_not_there",
                "left_more_than_tags",
            )[_LEFT.index(reason)]
        )
        for path, reason in left.items()
    }
    message = ctx.reply(
        ("every_done_rename", "every_done_remove", "every_done_add")[form],
        count=len(changed),
        posts=_listed(ctx, changed) or "-",
        **values,
    )
    if changed:
        message += ctx.reply("every_kept")
    if left:
        message += ctx.reply("every_left", posts=_listed(ctx, list(left), why))
    return SkillResult(
        success=bool(changed) or not left,
        message=message,
        data={
            "paths": changed,
            "left": left,
            "changed": bool(changed),
            **about,
            "diff": "".join(r.diff for r in done),
            **CHECKED,
        },
    )
