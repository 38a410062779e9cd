"""A post shown as it is written, not asked of a model.

"show it", "show me the post", "display the git workflow post", "open the docker post",
"给我看看这篇文章": the post's text as it is on disk, frontmatter and all. "show the
frontmatter", "显示它的元数据": its frontmatter block. "list the sections", "show me the outline",
"列出这篇文章的小节": its headings. The router sent "display the post" to DeleteArticle (the
classifier, at 0.92), "show it" after a new article and "list the sections" (0.96) to an edit
of it, which replaced the body, and "print it" to CodeExplain; table rules (the same regexes
as here, held equal by a test) now send them to AnswerQuestion, which shows what was asked.
"""

from __future__ import annotations

import asyncio
import re
from typing import Literal

from skillrt import Replies, SkillContext, SkillResult
from skillrt.blog.frontmatter import split_frontmatter
from skillrt.exceptions import InvalidFrontmatter

from .parts import code_lines
from .prompts import code_block

__all__ = [
    "FRONTMATTER_EN",
    "MAX_SHOWN_CHARS",
    "OUTLINE_EN",
    "PART_ZH",
    "PATTERNS",
    "REPLIES",
    "SHOW_EN",
    "SHOW_ZH",
    "Shown",
    "asks_to_show",
    "means_the_open_one",
    "show_post",
    "shown_part",
    "shows_newest",
]

# A word of a post's name, "1.77" too (a dot between word characters; a sentence's stop never).
NAME_WORD = r"(?:[^\s?.!,]|\.(?=\w))+"
MAX_SHOWN_CHARS = 12_000  # of a post shown in the reply; the rest is counted

# Words that do not name a post in "the … post" ("the posts related to the docker post", "the
# changes to the post"), and a .md path with no host before it. "notes" does, just before the
# "post" ("show the weekly notes post" matched no rule, and was offered as a new post).
_NOT_A_NAME = (
    r"(?:of|in|on|from|with|for|to|by|about|related|similar|linked|linking|that|which|who|"
    r"posts|articles|drafts|changes?)\s|notes\s(?!(?:post|article|draft)\b)"
)
_LOCAL_MD = r"(?![\w-]+\.[A-Za-z]{2,}/)[\w./-]+\.md"
# A path in the English rule, after "the post" or not, in quotes with its spaces or Chinese
# characters ("show me the post \"posts/my notes/first day.md\"" was offered a delete, an edit
# or a summary).
_OPENS, _CLOSES = "\"'“‘`「", "\"'”’`」"  # (quotes around a path)
_SHOWN_MD = (
    r"(?:(?:the\s+)?(?:post|article|draft|file)\s+)?(?:[" + _OPENS + "][^" + _OPENS + "”’」"
    r"\n]{0,200}?\.md[" + _CLOSES + "]|" + _LOCAL_MD + ")"
)
SHOW_EN = re.compile(  # (the same as its table rule in intents.toml)
    r"^(?:(?:please|pls|can\s+you|could\s+you|would\s+you|now|ok(?:ay)?|so|and)[\s,]+)*"
    r"(?:show|display|view|print|pull\s+up|bring\s+up|let\s+me\s+see|read\s+me|open(?=\s+(?:the|my)\s))"
    r"(?:\s+me)?\s+(?:it|this|that|the\s+(?:whole\s+|full\s+)?(?:post|article|draft|note|text)|"
    r"(?:the|my)\s+(?:(?!" + _NOT_A_NAME + r")" + NAME_WORD + r"\s+){1,6}?(?:post|article|draft|"
    r"note)|" + _SHOWN_MD + ")"
    r"(?:\s+(?:again|in\s+full|please))?\s*[.!?]*$",
    re.I,
)
SHOW_ZH = re.compile(  # (the same as its table rule in intents.toml)
    r"^(?:请|帮我|麻烦|你)?\s*(?:显示|展示|给我看看|给我看一下|给我看|让我看看|让我看一下|读一下|打开(?!\s*它))"
    r"\s*(?:一下)?\s*(?:它|这篇|那篇|这篇文章|那篇文章|这篇草稿|全文|[^，。？?]{1,30}?(?:那篇|这篇)"
    r"(?:文章|草稿|笔记)?|"
    + _LOCAL_MD
    + r")\s*(?:的?(?:全文|内容|原文))?\s*(?:吧|呗)?\s*[。.!！?？]*$",
    re.I,
)
# A post's frontmatter, or its sections: "show the frontmatter", "what's in its metadata?",
# "list the sections", "show me the outline of the go post", "列出这篇文章的小节".
_OF_POST = (
    r"(?:\s+(?:of|in|for|from)\s+(?:it|this|that|(?:the|my)\s+(?:(?!"
    + _NOT_A_NAME
    + r")"
    + NAME_WORD
    + r"\s+){0,6}?(?:post|article|draft|note)|"
    + _LOCAL_MD
    + "))?"
)
_LEAD_EN = r"^(?:(?:please|pls|can\s+you|could\s+you|would\s+you|now|ok(?:ay)?|so|and)[\s,]+)*"
FRONTMATTER_EN = re.compile(  # (the same as its table rule in intents.toml)
    _LEAD_EN + r"(?:show|display|print|view|list|give|what(?:['’]s|\s+is|\s+are)\s+in)(?:\s+me)?"
    r"\s+(?:the\s+|its\s+|my\s+)?(?:front\s*-?\s*matter|metadata|meta\s+data)"
    + _OF_POST
    + r"\s*[.!?]*$",
    re.I,
)
OUTLINE_EN = re.compile(  # (the same as its table rule in intents.toml)
    _LEAD_EN + r"(?:(?:show|display|print|list|give)(?:\s+me)?\s+|what\s+are\s+)(?:the\s+|its\s+|"
    r"all\s+(?:the\s+)?)?(?:sections|headings|headers|outline|structure|table\s+of\s+contents|"
    r"toc)" + _OF_POST + r"\s*[.!?]*$",
    re.I,
)
PART_ZH = re.compile(  # (the same as its table rule in intents.toml)
    r"^(?:请|帮我|麻烦)?\s*(?:列出|列一下|显示|展示|看看|给我看看|看一下)\s*(?:一下)?\s*(?:(?:它|这篇(?:文章)?|"
    r"那篇(?:文章)?|[^，。？?]{1,30}?(?:那篇|这篇)(?:文章)?)\s*的?\s*(?:所有)?\s*(?:小节|章节|目录|大纲|结构|"
    r"frontmatter|元数据|元信息)|(?:所有)?\s*(?:小节|章节|大纲|frontmatter|元数据|元信息))\s*"
    r"(?:有哪些|是什么)?\s*[。.!！?？]*$",
    re.I,
)
_OUTLINE_ZH = re.compile("小节|章节|目录|大纲|结构")
PATTERNS = (SHOW_EN, SHOW_ZH, FRONTMATTER_EN, OUTLINE_EN, PART_ZH)
"""The regexes of the table's rules that send these requests to AnswerQuestion."""

Shown = Literal["post", "frontmatter", "outline"]

REPLIES = Replies(
    {
        "shown": ("`{path}` 的全文：\n\n{text}", "`{path}`, as it is written:\n\n{text}"),
        "shown_cut": (
            "\n\n（只显示了前 {shown} 个字符，共 {chars} 个；全文在 `{path}`。）",
            "\n\n(The first {shown} of its {chars} characters; the whole post is `{path}`.)",
        ),
        "show_action": ("显示", "show"),
        "shown_frontmatter": (
            "`{path}` 的 frontmatter：\n\n{block}",
            "The frontmatter of `{path}`, as it is written:\n\n{block}",
        ),
        "no_frontmatter": ("`{path}` 没有 frontmatter。", "`{path}` has no frontmatter."),
        "shown_outline": (
            "`{path}` 有 {count} 个标题：\n\n{headings}",
            "`{path}` has {count} heading(s):\n\n{headings}",
        ),
        "no_headings": ("`{path}` 没有标题。", "`{path}` has no headings."),
    }
)


def shown_part(question: str) -> Shown | None:
    """What of a post ``question`` asks to see as written: the whole ``post``, its
    ``frontmatter`` or its ``outline`` (its headings); None when it asks something else."""
    text = " ".join(question.split())
    if SHOW_EN.match(text) or SHOW_ZH.match(text):
        return "post"
    if FRONTMATTER_EN.match(text):
        return "frontmatter"
    if OUTLINE_EN.match(text):
        return "outline"
    if PART_ZH.match(text):
        return "outline" if _OUTLINE_ZH.search(text) else "frontmatter"
    return None


# The newest post, named by nothing else: "show me my latest post", "给我看看最新的那篇" (not
# "my latest rust post", "posts/latest-news.md", "最近写的 docker 那篇").
_NEWEST = re.compile(
    r"\b(?:the|my)\s+(?:very\s+)?(?:latest|newest|most\s+recent)\s+(?:blog\s+)?(?:post|article)"
    r"(?:\s+(?:again|in\s+full|please))?\s*[.!?]*$|(?:最新|最近)的?(?:一篇|那篇|文章|那篇文章)"
    r"\s*(?:吧|呗)?\s*[。.!！?？]*$",
    re.I,
)
# A post named by a description or a path: "the first post", "the git workflow post",
# "docker 那篇", "posts/x.md". When no post matches it, the open post is not the one meant.
_NAMED_ELSE = re.compile(
    r"\bthe\s+(?:(?!whole\b|full\b)" + NAME_WORD + r"\s+){1,6}?(?:post|article|draft|note)\b|那篇|"
    r"[\w./-]+\.md\b",
    re.I,
)


def shows_newest(question: str) -> bool:
    """Whether a request to see a post (``shown_part``) means the newest one, named by nothing
    else ("show me my latest post", "给我看看最新的那篇")."""
    return _NEWEST.search(" ".join(question.split())) is not None


def means_the_open_one(question: str) -> bool:
    """Whether a request to see a post means the open one ("show it", "show me the post",
    "list the sections"), not one it names that no post matched ("the first post")."""
    return _NAMED_ELSE.search(" ".join(question.split())) is None


def asks_to_show(question: str) -> bool:
    """Whether ``question`` asks to see a post, or a part of one, as it is written."""
    return shown_part(question) is not None


_HEADING = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")


def _headings(body: str) -> list[tuple[int, str]]:
    """The Markdown headings of ``body`` outside its code blocks: (level, text)."""
    found = []
    for _, line, code in code_lines(body):
        heading = None if code else _HEADING.match(line)
        if heading is not None:
            found.append((len(heading.group(1)), heading.group(2)))
    return found


async def show_post(ctx: SkillContext, path: str, part: Shown = "post") -> SkillResult:
    """The reply showing the post at ``path`` as it is written (at most ``MAX_SHOWN_CHARS``
    of it), or its ``frontmatter`` block, or its ``outline``; the post becomes the focus."""
    path = ctx.files.relative(path)
    text, _ = await asyncio.to_thread(ctx.files.read, path)
    if part != "post":
        return _show_part(ctx, path, text, part)
    shown = text[:MAX_SHOWN_CHARS]
    message = ctx.reply("shown", path=path, text=code_block(shown.rstrip("\n"), "markdown"))
    if len(shown) < len(text):
        message += ctx.reply("shown_cut", shown=len(shown), chars=len(text), path=path)
    return SkillResult(
        message=message,
        data={
            "found": True,
            "path": path,
            "shown": "post",
            "chars": len(text),
            "cut": len(shown) < len(text),
            "citations": [path],
            "focus": path,
        },
    )


def _show_part(ctx: SkillContext, path: str, text: str, part: Shown) -> SkillResult:
    try:
        post = split_frontmatter(text, path)
        block, body = post.block, post.body
    except InvalidFrontmatter:  # a block never closed: shown whole, as the frontmatter
        block, body = text, ""
    data = {"found": True, "path": path, "shown": part, "citations": [path], "focus": path}
    if part == "frontmatter":
        if not block.strip():
            return SkillResult(message=ctx.reply("no_frontmatter", path=path), data=data)
        message = ctx.reply(
            "shown_frontmatter", path=path, block=code_block(block.rstrip("\n"), "markdown")
        )
        return SkillResult(message=message, data={**data, "frontmatter": block})
    headings = _headings(body)
    if not headings:
        return SkillResult(message=ctx.reply("no_headings", path=path), data=data)
    top = min(level for level, _ in headings)
    listed = "\n".join(f"{'  ' * (level - top)}- {title}" for level, title in headings)
    message = ctx.reply("shown_outline", path=path, count=len(headings), headings=listed)
    return SkillResult(message=message, data={**data, "headings": [t for _, t in headings]})
