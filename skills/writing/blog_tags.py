"""A tag change made in every post of the blog: "rename the tag rust to rustlang in every
post", "remove the tag draft from all posts", "add the tag blog everywhere", "把所有文章的标签
rust 改成 rustlang".

Before, such a request asked which post to edit and changed only the one picked. Now the posts
that carry the tag (to add one: every post that lacks it) are found in the index and listed,
and, when the request asks to confirm (the chat does, as for any edit), the user is asked once.
Then each post is changed as a one-post tag edit is (``tags.retagged``: every other byte
stays), in a durable step of its own, with its version kept for ``skillrt undo`` (which restores
one post at a time). Each post's hashes before and after are journalled before it is written,
so a task cut off after a write and resumed counts that post as changed and writes it no more.
A post that cannot be changed is left as it was and named in the reply
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
from skillrt.blog.frontmatter import Frontmatter, split_frontmatter, yaml_list_style
from skillrt.blog.markdown import inline_tags, renamed_inline_tag
from skillrt.blog.posts import IndexReport
from skillrt.exceptions import FileChanged, LockConflict, UserError

from .asking import confirms_or_answers, saves
from .checked import CHECKED
from .common import confirming, keep_version, refuse, text_hash, unified_diff
from .fields import only_field_set
from .newpost import blog_style
from .tags import TagChange, retagged

__all__ = [
    "REPLIES",
    "also_in_text",
    "in_text_only",
    "renamed_in_text",
    "retag_every_post",
    "tag_names",
    "zola_declares_tags",
]

LISTED = 30  # posts named in the question and the reply; the rest are counted
Left = Literal["", "unreadable", "changed", "busy", "not_there", "inline", "more_than_tags"]
_LEFT = ("unreadable", "changed", "busy", "not_there", "inline", "more_than_tags")  # (replies)
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
        "every_no_tags": (
            "要改哪个标签？请写出来，例如“给所有文章加上标签 rust”，没有改动任何文件。",
            "Which tag? Name it, as in “add the tag rust to every post”; no file was changed.",
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
            "\n\n每篇文章的正文和其他字段都保持不变。",
            "\n\nThe body and every other field of each post are unchanged.",
        ),
        "every_kept_in_text": (
            "\n\n正文里的行内标签 #{old} 也已改成 #{new}。",
            "\n\nThe inline tag #{old} in their text is #{new} now too.",
        ),
        "every_kept_else": (
            "除此之外，每篇文章的正文和其他字段都保持不变。",
            " Everything else in each post, text and fields, is unchanged.",
        ),
        "every_undo": ("`undo` 一次恢复一篇文章。", " `undo` restores one post at a time."),
        "every_undo_limit": (
            "`undo` 只保留最近 {keep} 个版本：先改的 {lost} 篇文章无法用它恢复。",
            " `undo` keeps the last {keep} versions: the first {lost} posts changed cannot be "
            "restored with it.",
        ),
        "every_zola_taxonomy": (
            "\n\n注意：Zola 只有在 `config.toml` 声明了 tags 分类时才会构建它们："
            '`taxonomies = [{{name = "tags"}}]`。',
            "\n\nNote: Zola builds the tags only when `config.toml` declares the taxonomy: "
            '`taxonomies = [{{name = "tags"}}]`.',
        ),
        "every_none_changed": ("没有改动任何文章。", "No post was changed."),
        "every_left": (
            "\n\n这些文章没有改动：\n\n{posts}",
            "\n\nThese posts were left as they were:\n\n{posts}",
        ),
        "every_more": ("- ……还有 {more} 篇", "- … and {more} more"),
        "left_unreadable": ("frontmatter 无法读取", "its frontmatter cannot be read"),
        "left_changed": ("列出之后它被改动过", "it changed after it was listed"),
        "left_busy": ("另一个任务正在改动它", "another task is changing it"),
        "left_not_there": ("标签不在 frontmatter 里", "the tag is not in its frontmatter"),
        "left_inline": (
            "标签写在正文里，是行内的 #标签；改标签只改 frontmatter",
            "the tag is written in its text, as an inline #tag; tag edits change the "
            "frontmatter only",
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
    in_text: bool = False  # an Obsidian note's inline #tag renamed in its text


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


class Planned(BaseModel):
    """One post's change worked out, as its first step journals it: the hashes of the post
    before and after (``left``: why it is not changed), never its text."""

    path: str
    before: str = ""
    after: str = ""
    left: Left = ""
    in_text: bool = False  # an Obsidian note's inline #tag renamed in its text


def _retagged_text(
    ctx: SkillContext, path: str, change: TagChange, lists: str
) -> tuple[str, str, str] | Left:
    """``(text, digest, new text)`` of ``path`` with ``change`` made, or why it cannot be."""
    try:
        text, digest = ctx.files.read(path)
        post = split_frontmatter(text, path)
        post.fields()
    except UserError:
        return "unreadable"
    own = yaml_list_style(post.inner) if post.format == "yaml" else None
    style = own or ("quoted" if lists == "quoted" else "flow" if lists == "flow" else "block")
    zola = ctx.config.layout.kind == "zola"
    yaml = post.format in (None, "yaml")
    jekyll = ctx.config.layout.kind == "jekyll"
    result = retagged(post, change, zola=zola, lists=style if yaml else None, jekyll=jekyll)
    if result.text != text and not only_field_set(
        post, result.text, path, result.field.split(".")[0]
    ):
        return "more_than_tags"
    new_text = renamed_in_text(ctx, change, result.text)  # an Obsidian note's #tag, too
    if new_text == text:
        return "inline" if in_text_only(ctx, post, change) else "not_there"
    return text, digest, new_text


def _plan_one(ctx: SkillContext, path: str, change: TagChange, lists: str) -> Planned:
    """The change to ``path``, worked out (blocking I/O: a sync step)."""
    made = _retagged_text(ctx, path, change, lists)
    if isinstance(made, str):
        return Planned(path=path, left=made)
    text, digest, new_text = made
    in_text = split_frontmatter(text, path).body != split_frontmatter(new_text, path).body
    return Planned(path=path, before=digest, after=text_hash(new_text), in_text=in_text)


def _retag_one(ctx: SkillContext, plan: Planned, change: TagChange, step: str, lists: str) -> Retag:
    """Make the planned change (blocking I/O: a sync step). The post found as the plan left
    it was written before the task was cut off: changed; found as neither: changed since."""
    path = plan.path
    current = ctx.files.hash_of(path)
    if current == plan.after:
        # (written before the task was cut off)
        return Retag(path=path, changed=True, in_text=plan.in_text)
    if current != plan.before:
        return Retag(path=path, changed=False, left="changed")
    made = _retagged_text(ctx, path, change, lists)
    if isinstance(made, str):
        return Retag(path=path, changed=False, left=made)
    text, digest, new_text = made
    if digest != plan.before or text_hash(new_text) != plan.after:
        return Retag(path=path, changed=False, left="changed")
    keep_version(ctx, path, "edit", step=step, after=plan.after)
    try:
        ctx.files.write(path, new_text, expected_hash=digest)
    except FileChanged:
        return Retag(path=path, changed=False, left="changed")
    except LockConflict:
        return Retag(path=path, changed=False, left="busy")
    diff = unified_diff(text, new_text, path)
    return Retag(path=path, changed=True, diff=diff, in_text=plan.in_text)


def zola_declares_tags(ctx: SkillContext) -> bool:
    """Whether the Zola site's ``config.toml`` declares a ``tags`` taxonomy (True when it
    cannot be read: nothing to warn about then)."""
    import tomllib

    try:
        config = tomllib.loads((ctx.config.root / "config.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True
    declared = config.get("taxonomies")
    if not isinstance(declared, list):
        for language in (config.get("languages") or {}).values():
            if isinstance(language, dict) and isinstance(language.get("taxonomies"), list):
                declared = language["taxonomies"]
                break
    return isinstance(declared, list) and any(
        isinstance(t, dict) and t.get("name") == "tags" for t in declared
    )


def _blog_lists(ctx: SkillContext) -> str:
    return blog_style(ctx).lists


def _listed(ctx: SkillContext, paths: list[str], why: dict[str, str] | None = None) -> str:
    lines = [f"- `{p}`" + (f" ({why[p]})" if why else "") for p in paths[:LISTED]]
    if len(paths) > LISTED:
        lines.append(ctx.reply("every_more", more=len(paths) - LISTED))
    return "\n".join(lines)


def tag_names(ctx: SkillContext, tags: tuple[str, ...]) -> str:
    """``tags`` as a reply names them: “a”, “b” (in Chinese: a、b)."""
    return "、".join(tags) if ctx.input.language == "zh" else ", ".join(f"“{t}”" for t in tags)


def in_text_only(ctx: SkillContext, post: Frontmatter, change: TagChange) -> list[str]:
    """The tags a removal or a rename names that an Obsidian note has only in its text, as
    inline ``#tags`` (tag edits change the frontmatter only)."""
    if change.action not in ("remove", "rename") or ctx.config.layout.kind != "obsidian":
        return []
    inline = {t.casefold() for t in inline_tags(post.body)}
    named = change.tags[:1] if change.action == "rename" else change.tags
    return [t for t in named if t.casefold() in inline]


def renamed_in_text(ctx: SkillContext, change: TagChange, text: str) -> str:
    """``text`` (a note, its frontmatter's tags changed or not) with an Obsidian note's inline
    ``#tags`` renamed as ``change`` renames its tag, as Obsidian's own rename does (the tag
    itself, not the ones under it: as in the frontmatter); as it was
    for any other change or blog, or a new name no inline tag can have (a space in it)."""
    if change.action != "rename" or len(change.tags) != 2 or ctx.config.layout.kind != "obsidian":
        return text
    note = split_frontmatter(text)
    body = renamed_inline_tag(note.body, *change.tags)
    return text if body == note.body else note.with_body(body).text


def also_in_text(ctx: SkillContext, post: Frontmatter, listed: tuple[str, ...]) -> list[str]:
    """An Obsidian note's inline ``#tags`` that its frontmatter's list, ``listed``, leaves
    out: its tags as well, which a reply saying what its tags are now must name."""
    if ctx.config.layout.kind != "obsidian":
        return []
    kept = {tag.casefold() for tag in listed}
    return [tag for tag in inline_tags(post.body) if tag.casefold() not in kept]


async def retag_every_post(ctx: SkillContext, change: TagChange) -> SkillResult:
    """Make ``change`` in every post it is for (see the module docstring)."""
    if change.action == "set":
        return refuse(ctx, "every_set_refused")
    if not change.tags:
        return refuse(ctx, "every_no_tags")
    form = _FORMS.index(change.action)
    old, new = (*change.tags, "")[:2]
    values = {"tags": tag_names(ctx, change.tags), "tag": old, "old": old, "new": new}
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
        # Two steps: the hashes before and after are journalled before the write, so a task
        # cut off after it finds the post as planned and counts it (with or without undo).
        plan = await ctx.step(
            f"plan:{i}", partial(_plan_one, ctx, path, change, lists), returns=Planned
        )
        if plan.left:
            done.append(Retag(path=path, changed=False, left=plan.left))
            continue
        step = f"retag:{i}"
        one = partial(_retag_one, ctx, plan, change, step, lists)
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
                "left_inline",
                "left_more_than_tags",
            )[_LEFT.index(reason)]
        )
        for path, reason in left.items()
    }
    message = (
        ctx.reply(
            ("every_done_rename", "every_done_remove", "every_done_add")[form],
            count=len(changed),
            posts=_listed(ctx, changed),
            **values,
        )
        if changed
        else ctx.reply("every_none_changed")
    )
    if changed:
        in_text = [r.path for r in done if r.changed and r.in_text]
        message += ctx.reply("every_kept_in_text", old=old, new=new) if in_text else ""
        message += ctx.reply("every_kept" if not in_text else "every_kept_else")
        keep = ctx.config.undo.keep  # (0: no versions kept, so nothing said of undo)
        if keep > 0:
            message += ctx.reply("every_undo")
        if 0 < keep < len(changed):  # (the oldest versions are dropped past ``undo.keep``)
            message += ctx.reply("every_undo_limit", keep=keep, lost=len(changed) - keep)
    if left:
        message += ctx.reply("every_left", posts=_listed(ctx, list(left), why))
    if (
        changed
        and change.action != "remove"
        and ctx.config.layout.kind == "zola"
        and not await ctx.step("zola_tags", partial(zola_declares_tags, ctx), returns=bool)
    ):
        message += ctx.reply("every_zola_taxonomy")  # (as a one-post tag edit says)
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
