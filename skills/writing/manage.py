"""CreateArticle (an empty post with frontmatter) and DeleteArticle (to the trash, confirmed)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from pydantic import BaseModel, field_validator

from skillrt import SkillContext, SkillResult, skill

from .common import (
    MAX_TITLE_CHARS,
    POST_SUFFIXES,
    failure,
    friendly_errors,
    new_post_text,
    post_path,
    refresh_memory,
    save_new_file,
    slug_for,
    today,
)
from .pick import ask_for_post, no_post_chosen

__all__ = ["CreateParams", "DeleteParams", "create_article", "delete_article", "is_yes"]

MAX_TAGS = 20
_YES = frozenset(
    {"y", "yes", "是", "是的", "确认", "确定", "好", "好的", "删除", "ok", "okay", "sure"}
)
_PUNCT = re.compile(r"[\s!！.。,，~～]+")


def is_yes(answer: str) -> bool:
    """Whether an answer to a confirmation means yes (yes/y/是/确认..., nothing else)."""
    return _PUNCT.sub("", answer).casefold() in _YES


class CreateParams(BaseModel):
    title: str
    tags: list[str] | None = None
    path: str | None = None

    @field_validator("tags", mode="before")
    @classmethod
    def _split_tags(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [t for t in re.split(r"[,，、\s]+", value) if t]
        return value


class DeleteParams(BaseModel):
    path: str | None = None
    title: str | None = None


@skill(
    name="CreateArticle",
    intents=["CREATE_ARTICLE"],
    params=CreateParams,
    description="Create an empty post with frontmatter (never overwrites)",
)
@friendly_errors
async def create_article(ctx: SkillContext, params: CreateParams) -> SkillResult:
    title = " ".join(params.title.split())
    if not title:
        return failure(ctx, "请告诉我文章的标题。", "Please give the post a title.")
    if len(title) > MAX_TITLE_CHARS:
        return failure(
            ctx,
            f"标题太长了（{len(title)} 个字符，最多 {MAX_TITLE_CHARS}）。",
            f"That title is too long ({len(title)} characters; at most {MAX_TITLE_CHARS}).",
            error="title_too_long",
        )
    tags = [" ".join(t.split()).lstrip("#")[:40] for t in params.tags or []]
    tags = list(dict.fromkeys(t for t in tags if t))[:MAX_TAGS]
    wanted = post_path(ctx, params.path, slug_for(title, f"post-{ctx.task_id[:8]}"))
    ctx.progress(1, 2, ctx.say("创建文件", "Creating the file"))
    text: str = await ctx.step(
        "compose", lambda: new_post_text({"title": title, "date": today(), "tags": tags}, "")
    )
    saved: dict[str, str] = await ctx.step(
        "save", lambda: asyncio.to_thread(save_new_file, ctx, wanted, text)
    )
    ctx.progress(2, 2, ctx.say("更新索引", "Updating the index"))
    await ctx.step("index", lambda: refresh_memory(ctx))
    path = saved["path"]
    note = (
        ""
        if path == wanted
        else ctx.say(f"（`{wanted}` 已存在）", f" (`{wanted}` already existed)")
    )
    return SkillResult(
        message=ctx.say(
            f"已创建空白文章《{title}》：`{path}`{note}。", f"Created “{title}” at `{path}`{note}."
        ),
        data={"path": path, "title": title, "tags": tags, "hash": saved["hash"]},
        next_steps=[ctx.say("写正文", "Write the body"), ctx.say("添加标签", "Add tags")],
    )


def _find_target(ctx: SkillContext, params: DeleteParams) -> str | None:
    if params.path and params.path.strip():
        return ctx.files.relative(params.path.strip())
    if params.title and params.title.strip():
        found = ctx.memory.resolve_link(params.title)
        if found is None:
            hits = ctx.memory.posts.search(params.title, 1)
            found = hits[0].path if hits and hits[0].title == params.title.strip() else None
        return found
    if ctx.input.current_file:
        return ctx.files.relative(ctx.input.current_file)
    return None


@skill(
    name="DeleteArticle",
    intents=["DELETE_ARTICLE"],
    params=DeleteParams,
    description="Delete a post: after confirmation it is moved to the trash, never erased",
)
@friendly_errors
async def delete_article(ctx: SkillContext, params: DeleteParams) -> SkillResult:
    await asyncio.to_thread(ctx.memory.posts.refresh)
    path = _find_target(ctx, params)
    if path is None and not (params.title and params.title.strip()):
        path = await ask_for_post(ctx, "删除", "delete")
        if path is None:
            return no_post_chosen(ctx)
    if path is None:
        return failure(
            ctx,
            "要删除哪篇文章？请给出路径（如 posts/x.md）或标题。",
            "Which post should I delete? Give its path (like posts/x.md) or its title.",
            error="no_target",
        )
    if not ctx.files.exists(path):
        return failure(ctx, f"`{path}` 不存在。", f"`{path}` does not exist.", error="not_found")
    if not path.lower().endswith(POST_SUFFIXES):
        return failure(
            ctx,
            f"`{path}` 不是文章（只能删除 .md 文件）。",
            f"`{path}` is not a post; only Markdown files (.md) can be deleted here.",
            error="not_a_post",
        )
    post = ctx.memory.posts.get(path)
    title = post.title if post is not None else path
    answer = await ctx.ask(
        ctx.say(
            f"确定要删除《{title}》（`{path}`）吗？文件会移到回收站，可以找回。请回答“是”或“否”。",
            f"Delete “{title}” (`{path}`)? It will be moved to the trash, where you can get "
            "it back. Answer yes or no.",
        )
    )
    if not is_yes(answer):
        return SkillResult(
            message=ctx.say(f"好的，没有删除 `{path}`。", f"OK, `{path}` was not deleted."),
            data={"path": path, "deleted": False},
        )
    ctx.progress(1, 2, ctx.say("移到回收站", "Moving to the trash"))

    def trash() -> dict[str, Any]:
        if not ctx.files.exists(path):  # moved before a crash cut the task off
            return {"trash": None}
        return {"trash": str(ctx.files.move_to_trash(path))}

    moved = await ctx.step("trash", lambda: asyncio.to_thread(trash))
    ctx.progress(2, 2, ctx.say("更新索引和知识图谱", "Updating the index and the graph"))
    await ctx.step("index", lambda: refresh_memory(ctx))
    return SkillResult(
        message=ctx.say(
            f"已将《{title}》（`{path}`）移到回收站。", f"Moved “{title}” (`{path}`) to the trash."
        ),
        data={"path": path, "deleted": True, "trash": moved["trash"]},
    )
