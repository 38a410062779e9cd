"""Tags suggested for a post from the blog's own tags, counted, not asked of a model.

"suggest tags for it", "what tags should I use for the docker post?", "给它推荐几个标签": the
chat answered with tags the embedded model made up, none of them the blog's. The blog's tags
that the post's prose says (its title counting three times; code aside), and that it does not
have yet,
are suggested (said twice at least, or in the title: "go" once in a Python post is a word, not
the language), the ones it says most first; the reply names its tags and how to add them.
Nothing is written: adding is the tag change's ("add the tags rust, async").
"""

from __future__ import annotations

import re
from collections import Counter
from functools import partial

from pydantic import BaseModel

from skillrt import Replies, SkillContext, SkillResult
from skillrt.blog.markdown import split_post

from .checks import without_code
from .listing import tag_counts
from .post_tags import tag_question_post

__all__ = ["REPLIES", "Suggested", "suggest_tags", "tags_suggestion_asked"]

MAX_SUGGESTED = 5
TITLE_WEIGHT = 3
MIN_SAID = 2  # times a tag is said (in the title: three), so "go" in "let it go" is not one

REPLIES = Replies(
    {
        "suggest_action": ("为哪篇文章推荐标签", "suggest tags for"),
        "tags_suggested": (
            "博客已有的标签里，这些适合 `{path}`（“{title}”）：{listed}。{has}"
            "要加上，可以说：“给它加标签 {tags}”。",
            "Of the blog's tags, these fit `{path}` (“{title}”): {listed}. {has}"
            "To add them, say “add the tags {tags}”.",
        ),
        "tags_suggested_line": (
            "{tag}（{posts} 篇文章用了它；文中出现 {said} 次）",
            "{tag} (on {posts} post(s); said {said} time(s) in it)",
        ),
        "tags_it_has": ("它现在的标签：{tags}。", "Its tags now: {tags}. "),
        "tags_it_has_none": ("它现在没有标签。", "It has no tags yet. "),
        "no_tag_fits": (
            "博客的其他 {count} 个标签没有一个在 `{path}`（“{title}”）里出现两次以上，"
            "也没有出现在标题里。{has}可以用“给它加标签 …”加上你选的标签。",
            "None of the blog's {count} other tag(s) is said twice in `{path}` "
            "(“{title}”) or in its title. {has}To tag it, say “add the tags …” with tags of "
            "your choosing.",
        ),
        "no_other_tags": (
            "博客里除了它自己的标签，没有别的标签可推荐。{has}可以用“给它加标签 …”加上你选的标签。",
            "The blog has no tags but its own to suggest from. {has}To tag it, say “add the tags "
            "…” with tags of your choosing.",
        ),
        "blog_has_no_tags": (
            "博客里还没有任何标签，无从推荐。{has}可以用“给它加标签 …”加上你选的标签。",
            "The blog has no tags yet to suggest from. {has}To tag it, say “add the tags …” "
            "with tags of your choosing.",
        ),
    }
)

_END = r"\s*[?.!？。！]*$"
_ASKS = [
    re.compile(
        r"^(?:(?:please|pls|can\s+you|could\s+you|would\s+you)\s+)?"
        r"(?:suggest|recommend|propose|pick|choose|come\s+up\s+with|give\s+me)\s+"
        r"(?:(?:some|a\s+few|a\s+couple\s+of|good|better|more|the\s+right|(?:\d+|two|three|"
        r"four|five))\s+)*tags\s+(?:for|to|on)\s+(?P<post>.+?)" + _END,
        re.I,
    ),
    re.compile(
        r"^(?:what|which)\s+tags\s+(?:should|would|could|can|do\s+you\s+suggest)\s*"
        r"(?:i|we)?\s*(?:use|add|give|put|pick|choose)?\s*(?:for|to|on)\s+(?P<post>.+?)" + _END,
        re.I,
    ),
    re.compile(r"^(?:what|which)\s+tags\s+(?:fit|suit|match)\s+(?P<post>.+?)" + _END, re.I),
    re.compile(
        r"^(?:请)?(?:给|为|帮)(?P<post>.+?)(?:推荐|建议|挑|选)(?:几个|一些|一下|些)?"
        r"(?:合适的|适合的)?标签" + _END
    ),
    re.compile(r"^(?P<post>.+?)(?:应该|适合|可以)(?:加|用|打|添加)(?:什么|哪些|哪几个)标签" + _END),
]


def tags_suggestion_asked(question: str) -> str | None:
    """The words naming the post ``question`` asks tags to be suggested for ("it", "the
    docker post", "它"), or None when it asks something else."""
    return tag_question_post(question, _ASKS)


class Suggested(BaseModel):
    """The post's title and tags, the blog's tag count, and each tag suggested with the
    number of its posts and of the times the post says it."""

    title: str
    tags: list[str]
    blog_tags: int
    others: int  # the blog's tags the post does not have
    suggested: list[tuple[str, int, int]]


def _said(tag: str, title: str, body: str) -> int:
    """How often the post says ``tag`` (its title ``TITLE_WEIGHT`` times): as a word or words
    (``-`` and ``_`` read as spaces, a plural's ``s`` as none), in any case; a Chinese tag
    anywhere."""
    words = re.split(r"[\s_-]+", tag.casefold().removeprefix("#"))  # (not c#'s own)
    words = [w for w in words if w]
    if not words:
        return 0
    if any(re.search("[\u3400-\u9fff]", w) for w in words):
        pattern = re.compile(re.escape("".join(words)))
    else:
        joined = r"[\s_-]+".join(re.escape(w) for w in words)
        pattern = re.compile(rf"(?<![\w-]){joined}(?:e?s)?(?![\w-])")
    return TITLE_WEIGHT * len(pattern.findall(title.casefold())) + len(
        pattern.findall(body.casefold())
    )


def _suggested(ctx: SkillContext, path: str) -> Suggested:
    """Blocking I/O (the index, the post): a sync step."""
    ctx.memory.refresh()
    meta = ctx.memory.posts.get(path)
    text, _ = ctx.files.read(path)
    _, body = split_post(text, path)
    # (prose only: "FROM python:3.12" made the docker post python's)
    body = without_code(body)
    title = meta.title if meta is not None else path
    own = list(meta.tags) if meta is not None else []
    has = {t.casefold() for t in own}
    counts = tag_counts(ctx.memory.posts.all_posts())
    scored: Counter[str] = Counter()
    for tag in counts:
        if tag.casefold() not in has and (said := _said(tag, title, body)) >= MIN_SAID:
            scored[tag] = said
    best = sorted(scored, key=lambda t: (-scored[t], -counts[t], t.casefold()))
    picked = [(tag, counts[tag], scored[tag]) for tag in best[:MAX_SUGGESTED]]
    others = sum(tag.casefold() not in has for tag in counts)
    return Suggested(title=title, tags=own, blog_tags=len(counts), others=others, suggested=picked)


async def suggest_tags(ctx: SkillContext, path: str) -> SkillResult:
    """The reply suggesting the blog's tags that fit the post at ``path``."""
    path = ctx.files.relative(path)
    found = await ctx.step("suggest_tags", partial(_suggested, ctx, path), returns=Suggested)
    sep = "、" if ctx.input.language == "zh" else ", "
    has = (
        ctx.reply("tags_it_has", tags=sep.join(found.tags))
        if found.tags
        else ctx.reply("tags_it_has_none")
    )
    names = [tag for tag, _, _ in found.suggested]
    data = {"path": path, "tags": found.tags, "suggested": names, "citations": [path]}
    if not found.blog_tags:
        return SkillResult(message=ctx.reply("blog_has_no_tags", has=has), data=data)
    if not found.others:
        return SkillResult(message=ctx.reply("no_other_tags", has=has), data=data)
    if not names:
        message = ctx.reply(
            "no_tag_fits", count=found.others, path=path, title=found.title, has=has
        )
        return SkillResult(message=message, data=data)
    listed = sep.join(
        ctx.reply("tags_suggested_line", tag=tag, posts=posts, said=said)
        for tag, posts, said in found.suggested
    )
    message = ctx.reply(
        "tags_suggested",
        path=path,
        title=found.title,
        listed=listed,
        has=has,
        tags=", ".join(names),
    )
    return SkillResult(message=message, data=data)
