"""CreateArticle (an empty post with frontmatter) and DeleteArticle (to the trash, confirmed)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from functools import partial
from typing import Annotated, Any

from pydantic import BaseModel, Field, field_validator

from skillrt import Replies, SkillContext, SkillResult, skill
from skillrt.blog.frontmatter import split_frontmatter
from skillrt.blog.posts import IndexReport
from skillrt.exceptions import BadParam, FileMissing
from skillrt.skill.params import Chars, PostPath

from . import pick
from .asking import DELETE_IT, confirms_or_answers, is_yes
from .common import (
    MAX_TITLE_CHARS,
    POST_SUFFIXES,
    Saved,
    keep_version,
    post_path,
    refuse,
    save_new_file,
    slug_for,
)
from .newpost import DRAFT_REPLIES, NewPost, compose_new_post, draft_note
from .pick import ask_for_post, named_post, no_post_chosen
from .tags import split_tags

__all__ = ["CreateParams", "DeleteParams", "create_article", "delete_article", "is_yes"]

MAX_TAGS = 20

REPLIES = (
    Replies(
        {
            "no_title": ("请告诉我文章的标题。", "Please give the post a title."),
            "ask_title": ("新文章的标题是什么？", "What is the new post's title?"),
            "title_too_long": (
                "标题太长了（{chars} 个字符，最多 {limit}）。",
                "That title is too long ({chars} characters; at most {limit}).",
            ),
            "creating": ("创建文件", "Creating the file"),
            "indexing": ("更新索引", "Updating the index"),
            "name_taken": ("（`{wanted}` 已存在）", " (`{wanted}` already existed)"),
            "created": (
                "已创建空白文章《{title}》：`{path}`{note}。",
                "Created “{title}” at `{path}`{note}.",
            ),
            "write_body": ("写正文", "Write the body"),
            "add_tags": ("添加标签", "Add tags"),
            "tags_not_written": (
                "\n\n博客的文章大多不带标签，新文章照此没有写入标签（{tags}）；"
                "要加上，请说“添加标签 {tags}”。",
                "\n\nMost of the blog's posts carry no tags, so the new post follows them and "
                "the tags ({tags}) were not written; to add them anyway, ask “add tags {tags}”.",
            ),
            "delete_action": ("删除", "delete"),
            "no_target": (
                "要删除哪篇文章？请给出路径（如 posts/x.md）或标题。",
                "Which post should I delete? Give its path (like posts/x.md) or its title.",
            ),
            "not_a_post": (
                "`{path}` 不是文章（只能删除 .md 文件）。",
                "`{path}` is not a post; only Markdown files (.md) can be deleted here.",
            ),
            "confirm_delete": (
                "确定要删除《{title}》（`{path}`）吗？文件会移到回收站，可以找回。"
                "请回答“是”或“否”。",
                "Delete “{title}” (`{path}`)? It will be moved to the trash, where you can get "
                "it back. Answer yes or no.",
            ),
            "kept": ("好的，没有删除 `{path}`。", "OK, `{path}` was not deleted."),
            "trashing": ("移到回收站", "Moving to the trash"),
            "reindexing": ("更新索引和知识图谱", "Updating the index and the graph"),
            "deleted": (
                "已将《{title}》（`{path}`）移到回收站。",
                "Moved “{title}” (`{path}`) to the trash.",
            ),
        }
    )
    | pick.REPLIES
    | DRAFT_REPLIES
)


Title = Annotated[str | None, Chars(MAX_TITLE_CHARS, empty="no_title", too_long="title_too_long")]


class CreateParams(BaseModel):
    # None: the skill asks for it ("create a new article", or a choice)
    title: Title = Field(default=None, description="The new post's title (asked when missing)")
    tags: list[str] | None = Field(default=None, description="Its tags (a list, or 'a, b')")
    path: PostPath = Field(
        default=None,
        description="Where to create it, relative to the blog folder (default: the posts"
        " folder, the file named from the title)",
    )

    @field_validator("tags", mode="before")
    @classmethod
    def _split_tags(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [t for t in re.split(r"[,，、\s]+", value) if t]
        return value


# A title that goes on with the post's tags: "X with tags a, b", "X tagged a", "X，标签：a、b".
_WITH_TAGS = re.compile(
    r"^(?P<title>.+?)[\s,，;；]+(?:(?:with|and)\s+(?:the\s+)?tags?|tagged(?:\s+(?:with|as))?"
    r"|(?:并)?(?:带|加上|添加)?标签(?:为|是)?)\s*[:：]?\s*(?P<tags>.+)$",
    re.I,
)


def titled_with_tags(title: str) -> tuple[str, list[str]] | None:
    """``title`` cut where it names the post's tags, and those tags (each one word); None when
    it names none, or what follows does not read as such tags: then it is all title."""
    found = _WITH_TAGS.match(title)
    if found is None:
        return None
    tags = split_tags(found.group("tags"), plural=False)  # words apart only by commas, "and"…
    if not tags or any(" " in tag for tag in tags):  # "… with tags considered harmful": a title
        return None
    return found.group("title").strip(" \"'“”《》"), list(tags)


class DeleteParams(BaseModel):
    path: PostPath = Field(default=None, description="The post to delete (it goes to the trash)")
    title: Annotated[str | None, Chars()] = Field(default=None, description="Or the post's title")


class Trashed(BaseModel):
    """Where the post went in the trash (None: it was gone already)."""

    trash: str | None


def _holds_tags(text: str, path: str) -> bool:
    """Whether a new post's frontmatter holds tags (``tags``, ``tag``, Zola's taxonomies): a
    new post takes the keys most of the blog's posts carry, and the Zola fixture's carry no
    tags, so "create a post called X with tags rust, async" wrote none, and said nothing."""
    fields = split_frontmatter(text, path).fields()
    table = fields.get("taxonomies")
    return "tags" in fields or "tag" in fields or (isinstance(table, Mapping) and "tags" in table)


@skill(
    name="CreateArticle",
    intents=["CREATE_ARTICLE"],
    params=CreateParams,
    description="Create an empty post with frontmatter (never overwrites)",
    replies=REPLIES,
)
async def create_article(ctx: SkillContext, params: CreateParams) -> SkillResult:
    title = params.title or " ".join((await ctx.ask(ctx.reply("ask_title"))).split())
    if not title:
        return SkillResult(success=False, message=ctx.reply("no_title"), data={"error": "no_title"})
    if len(title) > MAX_TITLE_CHARS:
        raise BadParam("title", "title_too_long", chars=len(title), limit=MAX_TITLE_CHARS)
    named = params.tags or []
    if not named and (split := titled_with_tags(title)) is not None:
        title, named = split  # "Shortcodes in depth with tags hugo, shortcodes"
    tags = [" ".join(t.split()).lstrip("#")[:40] for t in named]
    tags = list(dict.fromkeys(t for t in tags if t))[:MAX_TAGS]
    slug = await slug_for(title, f"post-{ctx.task_id[:8]}")
    post_path(ctx, params.path, slug)  # a path out of the blog is refused at once
    ctx.progress(1, 2, ctx.reply("creating"))
    compose = partial(
        compose_new_post, ctx, target=params.path, title=title, slug=slug, body="", tags=tags
    )
    post = await ctx.step("compose:post", compose, returns=NewPost)  # in the blog's style
    wanted = post.path
    save = partial(save_new_file, ctx, wanted, post.text)
    saved = await ctx.step("save", save, returns=Saved)
    ctx.progress(2, 2, ctx.reply("indexing"))
    await ctx.step("index", ctx.memory.refresh, returns=IndexReport)
    note = "" if saved.path == wanted else ctx.reply("name_taken", wanted=wanted)
    untagged = bool(tags) and not _holds_tags(post.text, saved.path)  # the blog's posts: none
    return SkillResult(
        message=ctx.reply("created", title=title, path=saved.path, note=note)
        + (ctx.reply("tags_not_written", tags=", ".join(tags)) if untagged else "")
        + draft_note(ctx, saved.path, post.text),
        data={
            "path": saved.path,
            "title": title,
            "tags": tags,
            "hash": saved.hash,
            "draft": post.draft,
        },
        # "Add tags" only for a post that has none (it was offered after "… with tags a, b").
        next_steps=[ctx.reply("write_body")]
        + ([ctx.reply("add_tags")] if not tags or untagged else []),
    )


def _find_target(ctx: SkillContext, params: DeleteParams) -> str | None:
    """The post named by path or title (or named without either, ``named_post``), else the open
    one (the index refreshed first)."""
    ctx.memory.posts.refresh()
    if params.path:
        return ctx.files.relative(params.path)
    if params.title:
        found = ctx.memory.resolve_link(params.title)
        if found is None:
            hits = ctx.memory.posts.search(params.title, 1)
            found = hits[0].path if hits and hits[0].title == params.title else None
        return found
    named = named_post(ctx)
    if named is not None:
        return named
    if ctx.input.current_file:
        return ctx.files.relative(ctx.input.current_file)
    return None


def _trash(ctx: SkillContext, path: str) -> Trashed:
    if not ctx.files.exists(path):  # moved before a crash cut the task off
        return Trashed(trash=None)
    keep_version(ctx, path, "delete", step="trash", after=None)  # for undo: back from the trash
    trash = ctx.files.move_to_trash(path)
    if ctx.versions is not None:
        ctx.versions.note_trash(f"{ctx.task_id}:trash", trash)
    return Trashed(trash=str(trash))


@skill(
    name="DeleteArticle",
    intents=["DELETE_ARTICLE"],
    params=DeleteParams,
    description="Delete a post: after confirmation it is moved to the trash, never erased",
    replies=REPLIES,
)
async def delete_article(ctx: SkillContext, params: DeleteParams) -> SkillResult:
    path = await asyncio.to_thread(_find_target, ctx, params)  # not a step: never journalled
    if path is None and not params.title:
        path = await ask_for_post(ctx, ctx.reply("delete_action"))
        if path is None:
            return no_post_chosen(ctx)
    if path is None:
        return refuse(ctx, "no_target")
    if not ctx.files.exists(path):
        raise FileMissing(path)
    if not path.lower().endswith(POST_SUFFIXES):
        return refuse(ctx, "not_a_post", path=path)
    post = ctx.memory.posts.get(path)
    title = post.title if post is not None else path
    # A request typed instead ("what is in the json post?") is run as one, and nothing is
    # deleted: it was read as "no".
    answer = await ctx.ask(
        ctx.reply("confirm_delete", title=title, path=path), accepts=confirms_or_answers
    )
    if not (is_yes(answer) or DELETE_IT.match(" ".join(answer.split()))):
        return SkillResult(
            message=ctx.reply("kept", path=path), data={"path": path, "deleted": False}
        )
    ctx.progress(1, 2, ctx.reply("trashing"))
    moved = await ctx.step("trash", partial(_trash, ctx, path), returns=Trashed)
    ctx.progress(2, 2, ctx.reply("reindexing"))
    await ctx.step("index", ctx.memory.refresh, returns=IndexReport)
    return SkillResult(
        message=ctx.reply("deleted", title=title, path=path),
        data={"path": path, "deleted": True, "trash": moved.trash},
    )
