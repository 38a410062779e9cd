"""Publishing a draft from the chat: "publish it", "publish the post Shortcodes in depth",
"publish posts/x.md", "发布这篇文章", "把 posts/x.md 发布"; and the way back, a post made a
draft again: "unpublish it", "move it back to drafts", "把它改回草稿" (``is_unpublish``,
``unpublish``: ``skillrt.blog.publish.unpublish_post``).

EditContent hands such a request here (``is_publish``): the draft mark comes off the blog's way
(``skillrt.blog.publish``: the field removed, every other byte kept; a post in a drafts folder
moved to the posts folder), with no model, and the post before is kept for ``skillrt undo``,
as ``AgentRuntime.publish`` (``skillrt publish``, ``/publish``) does.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from skillrt import SkillContext
from skillrt.blog.publish import publish_kept, unpublish_kept
from skillrt.blog.siteconfig import site_today

__all__ = [
    "UNPUBLISH_EN",
    "UNPUBLISH_ZH",
    "PublishedPost",
    "is_publish",
    "is_unpublish",
    "publish",
    "unpublish",
]

_PUBLISH = re.compile(
    r"^(?:(?:please|pls|can\s+you|could\s+you|now)\s+)*publish\b(?!ing|ed|er)"
    r"|^(?:请|帮我|现在)?\s*发布\s*(?:一下)?\s*(?:这篇|这个|该|那篇|草稿|它|[\w./-]+\.md|$)"
    r"|^(?:请|帮我)?\s*(?:把|将)\s*\S.{0,80}?\s*(?:给)?发布(?:出去|了|一下)?\s*[。！!]?$"
    # "发布 git rebase 笔记 那篇", "发布《Git rebase 笔记》": the draft named after the verb
    r"|^(?:请|帮我|现在)?\s*发布\s*(?:一下)?\s*(?:《[^》]{1,80}》|\S[^。！!？?]{0,80}?\s*"
    r"(?:那篇|这篇)(?:文章|草稿|博文)?)\s*[。！!]?$",
    re.I,
)


# Making a published post a draft again: "unpublish it", "move it back to drafts", "mark the
# docker post as a draft", "把它改回草稿", "撤回发布这篇文章".
# (each the same as its table rule in intents.toml: a test holds them equal)
# The post and nothing more: "it", "this post", "the docker post", "posts/x.md" ("the
# conclusion of this post" is a part of it, not the post).
_THE_POST = (
    r"(?:it|this|that|(?:the|my|this)\s+(?:(?!(?:of|in|on|from|about|with)\s)[^\s?]+\s+){0,5}?"
    r"(?:post|article|note)|[\w./-]+\.md)"
)
_LEAD = r"^(?:(?:please|pls|can\s+you|could\s+you|now)\s+)*"
_END = r"(?:\s+(?:again|please|now))?\s*[.!]?$"
UNPUBLISH_EN = (
    _LEAD
    + r"(?:unpublish|un-publish)(?:\s+"
    + _THE_POST
    + r")?"
    + _END
    + r"|"
    + _LEAD
    + r"(?:move|put|send)\s+"
    + _THE_POST
    + r"\s+(?:back\s+)?(?:in)?to\s+(?:the\s+|my\s+)?drafts?(?:\s+folder)?"
    + _END
    + r"|"
    + _LEAD
    + r"(?:turn|make|mark)\s+"
    + _THE_POST
    + r"\s+(?:back\s+)?(?:(?:as|into)\s+)?(?:a\s+)?draft"
    + _END
)
UNPUBLISH_ZH = (
    r"^(?:请|帮我)?\s*(?:把|将)\s*(?:它|这篇(?:文章|博文)?|那篇(?:文章|博文)?|"
    r"[^，。？?]{1,40}?(?:那篇|这篇)(?:文章|博文)?|[\w./-]+\.md)\s*"
    r"(?:改回|转回|变回|转为|改为|改成|设为|放回)(?:到)?草稿(?:吧)?\s*[。！!]?$"
    r"|^(?:请|帮我)?\s*(?:撤回|取消)发布\s*(?:它|这篇(?:文章|博文)?|那篇(?:文章|博文)?)?(?:吧)?"
    r"\s*[。！!]?$"
)
_UNPUBLISH = re.compile(f"{UNPUBLISH_EN}|{UNPUBLISH_ZH}", re.I)


def is_unpublish(instruction: str) -> bool:
    """Whether the instruction asks to make the post a draft again ("unpublish it")."""
    return _UNPUBLISH.search(" ".join(instruction.split())) is not None


def is_publish(instruction: str) -> bool:
    """Whether the instruction asks to publish the post (it starts with "publish", "发布")."""
    return _PUBLISH.search(" ".join(instruction.split())) is not None


class PublishedPost(BaseModel):
    """What publishing did (``skillrt.blog.publish.Published``), journalled."""

    path: str
    changed: bool
    moved_from: str | None = None
    removed: list[str] = []
    added: list[str] = []  # (unpublishing: the draft field set)
    scheduled: str | None = None  # the day the generator builds it from (``held_back``)
    expired: str | None = None  # the day the generator stopped building it


def publish(ctx: SkillContext, path: str) -> PublishedPost:
    """Publish the draft at ``path``, keeping the post before for undo, as ``skillrt publish``
    does (``publish_kept``). Blocking I/O: run it as a sync step (run again after a crash,
    ``publish_post`` finishes a move)."""
    day = site_today(ctx.config.root, ctx.config.layout.kind)
    done = publish_kept(
        ctx.files,
        path,
        posts_dir=ctx.config.posts_dir,
        day=day,
        versions=ctx.versions,
        key=f"{ctx.task_id}:publish",
        kind=ctx.config.layout.kind,
    )
    return PublishedPost(
        path=done.path,
        changed=done.changed,
        moved_from=done.moved_from,
        removed=list(done.removed),
        scheduled=done.scheduled,
        expired=done.expired,
    )


def unpublish(ctx: SkillContext, path: str) -> PublishedPost:
    """Make the post at ``path`` a draft again, keeping the post before for undo
    (``unpublish_kept``: into the drafts folder, else the ``draft`` field set). Blocking I/O:
    run it as a sync step (run again after a crash, it finishes a move)."""
    done = unpublish_kept(
        ctx.files,
        path,
        drafts_dir=ctx.config.layout.drafts_dir,
        versions=ctx.versions,
        key=f"{ctx.task_id}:unpublish",
    )
    return PublishedPost(
        path=done.path, changed=done.changed, moved_from=done.moved_from, added=list(done.added)
    )
