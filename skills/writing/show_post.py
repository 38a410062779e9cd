"""A post shown as it is written, not asked of a model.

"show it", "show me the post", "display the git workflow post", "open posts/x.md", "给我看看这篇
文章": the post's text as it is on disk, frontmatter and all. The router sent "display the
post" to DeleteArticle (the classifier, at 0.92), "show it" after a new article to an edit of
it, "open it" to the browser and "print it" to CodeExplain; a table rule (the same regexes as
here, held equal by a test) now sends them to AnswerQuestion, which answers with the post.
"""

from __future__ import annotations

import asyncio
import re

from skillrt import Replies, SkillContext, SkillResult

__all__ = ["MAX_SHOWN_CHARS", "REPLIES", "SHOW_EN", "SHOW_ZH", "asks_to_show", "show_post"]

MAX_SHOWN_CHARS = 12_000  # of a post shown in the reply; the rest is counted

SHOW_EN = re.compile(  # (the same as its table rule in intents.toml)
    r"^(?:(?:please|pls|can\s+you|could\s+you|would\s+you|now|ok(?:ay)?|so|and)[\s,]+)*"
    r"(?:show|display|view|print|pull\s+up|bring\s+up|let\s+me\s+see|read\s+me|open(?=\s+(?:the|my)\s))"
    r"(?:\s+me)?\s+(?:it|this|that|the\s+(?:whole\s+|full\s+)?(?:post|article|draft|note|text)|"
    r"(?:the|my)\s+(?:(?!(?:of|in|on|from|with|for)\s)[^\s?.!,]+\s+){1,6}?(?:post|article|draft|"
    r"note)|[\w./-]+\.md)"
    r"(?:\s+(?:again|in\s+full|please))?\s*[.!?]*$",
    re.I,
)
SHOW_ZH = re.compile(  # (the same as its table rule in intents.toml)
    r"^(?:请|帮我|麻烦|你)?\s*(?:显示|展示|给我看看|给我看一下|给我看|让我看看|让我看一下|读一下|打开(?!\s*它))"
    r"\s*(?:一下)?\s*(?:它|这篇|那篇|这篇文章|那篇文章|这篇草稿|全文|[^，。？?]{1,30}?(?:那篇|这篇)"
    r"(?:文章|草稿|笔记)?|[\w./-]+\.md)\s*(?:的?(?:全文|内容|原文))?\s*(?:吧|呗)?\s*[。.!！?？]*$"
)

REPLIES = Replies(
    {
        "shown": ("`{path}` 的全文：\n\n{text}", "`{path}`, as it is written:\n\n{text}"),
        "shown_cut": (
            "\n\n（只显示了前 {shown} 个字符，共 {chars} 个；全文在 `{path}`。）",
            "\n\n(The first {shown} of its {chars} characters; the whole post is `{path}`.)",
        ),
        "show_action": ("显示", "show"),
    }
)


def asks_to_show(question: str) -> bool:
    """Whether ``question`` asks to see a post as it is written."""
    text = " ".join(question.split())
    return SHOW_EN.match(text) is not None or SHOW_ZH.match(text) is not None


def _fenced(text: str) -> str:
    """``text`` in a Markdown code block whose fence is longer than any inside it."""
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}markdown\n{text.rstrip(chr(10))}\n{fence}"


async def show_post(ctx: SkillContext, path: str) -> SkillResult:
    """The reply showing the post at ``path`` as it is written (at most
    ``MAX_SHOWN_CHARS`` of it), which becomes the session's focus."""
    path = ctx.files.relative(path)
    text, _ = await asyncio.to_thread(ctx.files.read, path)
    shown = text[:MAX_SHOWN_CHARS]
    message = ctx.reply("shown", path=path, text=_fenced(shown))
    if len(shown) < len(text):
        message += ctx.reply("shown_cut", shown=len(shown), chars=len(text), path=path)
    return SkillResult(
        message=message,
        data={
            "found": True,
            "path": path,
            "shown": True,
            "chars": len(text),
            "cut": len(shown) < len(text),
            "citations": [path],
            "focus": path,
        },
    )
