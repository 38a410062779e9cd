"""A post's tags, asked about: "what tags does it have?", "what are the tags of the docker
post?", "这篇文章有哪些标签？". They come from the post's frontmatter, as the index read it, with
its categories when it has them (Jekyll's); no model is asked. The embedded model, asked "what
tags does it have?" about the Jekyll liquid tips post, answered with three made-up tags, each
with a made-up web address.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from skillrt import Replies, SkillContext, SkillResult
from skillrt.blog.frontmatter import split_frontmatter
from skillrt.exceptions import InvalidFrontmatter, PathNotAllowed

from .listing import names_of

__all__ = [
    "ITS_TAGS",
    "REPLIES",
    "own_fields",
    "post_tags",
    "post_tags_asked",
    "refers_to_open",
    "tag_question_post",
]

REPLIES = Replies(
    {
        "post_tags": ("[{title}]({path}) 的标签：{tags}", "The tags of [{title}]({path}): {tags}"),
        "post_no_tags": ("[{title}]({path}) 没有标签。", "[{title}]({path}) has no tags."),
        "post_categories": ("\n\n分类：{categories}", "\n\nIts categories: {categories}"),
        "tags_action": ("查看哪篇文章的标签", "list the tags of"),
    }
)

_END = r"\s*[?？.。!！]*$"
ITS_TAGS = re.compile(  # (the same as its table rule in intents.toml)
    r"^(?:(?:please|can\s+you|could\s+you)\s+)?(?:what\s+(?:are|were)|list|show(?:\s+me)?|"
    r"give\s+me|tell\s+me)\s+(?P<post>its|the\s+post['’]s)\s+tags\s*[?？.。!！]*$",
    re.I,
)
_ASKS = [
    re.compile(
        r"^(?:what|which)\s+tags?\s+(?:does|do|did|has)\s+(?P<post>.+?)\s+(?:have|got|use|carry)"
        + _END,
        re.I,
    ),
    re.compile(
        r"^what\s+(?:are|were)\s+(?:the\s+)?tags\s+(?:of|on|for)\s+(?P<post>.+?)" + _END, re.I
    ),
    re.compile(
        r"^(?:how|what)\s+(?:is|was)\s+(?P<post>.+?)\s+tagged(?:\s+with|\s+as)?" + _END, re.I
    ),
    re.compile(
        r"^(?:list|show)(?:\s+me)?\s+(?:the\s+)?tags\s+(?:of|on|for)\s+(?P<post>.+?)" + _END, re.I
    ),
    # "what are its tags?", "show its tags": the open post's (the model answered the first,
    # from a search of the blog, and the classifier sent the second to an edit).
    re.compile(ITS_TAGS.pattern, re.I),
    re.compile(r"^(?P<post>.+?)\s*(?:有|用了|带|带了|打了)(?:哪些|什么|几个)标签" + _END),
    re.compile(r"^(?P<post>.+?)的标签(?:是什么|有哪些|是哪些)" + _END),
]
# The blog itself, not a post: "what tags does my blog have?" lists the blog's tags.
_THE_BLOG = re.compile(
    r"^(?:(?:my|the|our|this)\s+blog|i|we|you|(?:all\s+)?(?:my|the|our)\s+(?:posts|articles)|"
    r"博客|我|我的博客|博客里|所有文章|我的文章|博客的文章|这个博客)$",
    re.I,
)
# The post open or in focus: "it", "this post", "这篇文章".
_OPEN = re.compile(
    r"^(?:it|its|the\s+post['’]s|this(?:\s+(?:post|article|one|page|entry))?|"
    r"that(?:\s+(?:post|article|one))?|"
    r"the\s+(?:current|open)\s+(?:post|article)|这篇(?:文章|博文)?|它|这个)$",
    re.I,
)


def tag_question_post(question: str, patterns: Sequence[re.Pattern[str]]) -> str | None:
    """The words naming a post (a pattern's ``post`` group) in a question on tags the first of
    ``patterns`` that matches reads, or None (no pattern matches, or tags are not named)."""
    text = " ".join(question.split())
    if "tag" not in text.casefold() and "标签" not in text:
        return None
    for pattern in patterns:
        found = pattern.match(text)
        if found is not None:
            return found.group("post").strip()
    return None


def post_tags_asked(question: str) -> str | None:
    """The words naming the post whose tags ``question`` asks for ("it", "the docker post"),
    "" when it asks for the blog's ("what are the tags on this blog?", "what tags do my posts
    use?"), or None when it asks something else."""
    words = tag_question_post(question, _ASKS)
    if words is None:
        return None
    return "" if _THE_BLOG.match(words) else words  # "": the blog's tags


def refers_to_open(words: str) -> bool:
    """Whether the words name the post open (or in focus) rather than a post by its name."""
    return _OPEN.match(words.strip()) is not None


def _tags_of(ctx: SkillContext, path: str) -> list[str]:
    """The post's title, then a line of its tags and one of its categories (each may be
    empty). Blocking I/O: a sync step."""
    ctx.memory.refresh()
    meta = ctx.memory.posts.get(path)
    title = meta.title if meta is not None else path
    tags = list(meta.tags) if meta is not None else []
    fields = own_fields(ctx, path)
    categories = names_of(fields.get("categories", fields.get("category")))
    if meta is None:  # a file the index does not hold: its own fields
        table = fields.get("taxonomies")
        nested = table.get("tags") if isinstance(table, Mapping) else None
        tags = names_of(fields.get("tags", fields.get("tag", nested)))
    return [title, ", ".join(tags), ", ".join(categories)]


def own_fields(ctx: SkillContext, path: str) -> dict[str, Any]:
    """The post's frontmatter fields as its file holds them now; none when it cannot be read
    (gone, outside the blog, a block that is no mapping). Blocking I/O."""
    try:
        text, _ = ctx.files.read(path)
        return split_frontmatter(text, path).fields()
    except (OSError, ValueError, InvalidFrontmatter, PathNotAllowed):
        return {}


async def post_tags(ctx: SkillContext, path: str) -> SkillResult:
    """The reply listing the tags (and categories) of the post at ``path``."""
    path = ctx.files.relative(path)
    title, tags, categories = await ctx.step(
        "post_tags", partial(_tags_of, ctx, path), returns=list[str]
    )
    title = title.replace("[", "\\[").replace("]", "\\]")
    target = f"<{path}>" if " " in path else path
    message = (
        ctx.reply("post_tags", title=title, path=target, tags=tags)
        if tags
        else ctx.reply("post_no_tags", title=title, path=target)
    )
    if categories:
        message += ctx.reply("post_categories", categories=categories)
    return SkillResult(
        message=message,
        data={
            "found": True,
            "path": path,
            "tags": [t for t in tags.split(", ") if t],
            "categories": [c for c in categories.split(", ") if c],
            "citations": [path],
        },
    )
