"""How long a post is, counted, not asked of a model.

"how many words is the shells post?", "how long is the go post?", "what's the word count of
my first post?", "docker 那篇文章有多少字？": the words of the post's prose (its code blocks and
frontmatter left out, each Chinese character one word, as Chinese writers count), its code
blocks, and the minutes a reader takes. The embedded model answered "The shell post is 12
words." of a post it was not shown whole.
"""

from __future__ import annotations

import math
import re
from functools import partial

from pydantic import BaseModel

from skillrt import Replies, SkillContext, SkillResult
from skillrt.blog.markdown import split_post, word_count

from .parts import code_lines
from .prompts import clip
from .show_post import NAME_WORD

__all__ = ["COUNT_WORDS", "REPLIES", "Length", "asks_length", "length_of", "post_length"]

WORDS_A_MINUTE = 230  # English prose, read
CHARACTERS_A_MINUTE = 400  # Chinese

REPLIES = Replies(
    {
        "post_length": (
            "`{path}`（“{title}”）正文有 {words} 个字（中文按字计）{code}，"
            "读完大约 {minutes} 分钟。",
            "`{path}` (“{title}”) has {words} words of prose{code}: about {minutes} minute(s) "
            "to read.",
        ),
        "length_action": ("计算哪篇文章的字数", "count the words of"),
        "post_length_code": (
            "，另有 {blocks} 个代码块（{lines} 行）",
            ", and {blocks} code block(s) of {lines} line(s)",
        ),
    }
)

# "count the words" (the open post's): the classifier sent it to an edit of the open post at
# 0.92. The table's rule is the same regex (a test holds them equal).
COUNT_WORDS_LEAD = r"(?:(?:please|pls|can\s+you|could\s+you|ok(?:ay)?|just|now|so)[\s,]+)*"
COUNT_WORDS = re.compile(
    rf"^{COUNT_WORDS_LEAD}count\s+(?:the\s+|its\s+)?words(?:\s+(?:in|of)\s+(?:it|this(?:\s+post)?|"
    r"(?:the|my)\s+(?:(?!(?:of|in|on|from)\s)"
    + NAME_WORD
    + r"\s+){0,6}?(?:post|article|draft|entry)|"
    r"[\w./-]+\.md))?\s*[.!?]*$",
    re.I,
)
_POST_NAMED = (
    r"(?:(?:the|my|this|that)\s+(?!(?:next|typical|average|ideal)\b)(?:[^\s]+\s+){0,6}?"
    r"(?:post|article|entry|draft)|it|this|[\w./-]+\.md)\b"
)
# Words that make it a question on posts in general, before the post is named: "how long
# should a blog post be?", "the length of a typical blog post" (not "… the post I wrote
# about the average salary").
_GENERAL = r"(?:(?!\b(?:should|typical|usually|ideal|average)\b).)*?"
_ASKS = [
    re.compile(
        r"^(?:so\s+|and\s+)?(?:how\s+(?:many\s+words|long)\s+(?:is|are|has|does|will|would|in)\b|"
        r"what(?:'s|\s+is)\s+the\s+(?:word\s+count|length|reading\s+time)\s+of\b)"
        r"(?!.*\btak(?:e|es|en|ing)\s+to\s+(?!read\b))"  # ("how long does it take to get indexed")
        rf"{_GENERAL}\b{_POST_NAMED}",
        re.I,
    ),
    re.compile(
        rf"^(?:(?:give\s+me|show(?:\s+me)?)\s+)?(?:the\s+)?word\s+count\s+(?:of|for)\s+{_POST_NAMED}",
        re.I,
    ),
    COUNT_WORDS,
    re.compile(
        r"^(?!.*(?:应该|一般|通常|平均))[^？?]*(?:那篇|这篇|文章|它)[^？?]{0,10}?"
        r"(?:(?:有|共|一共)?多少(?:个)?字|字数(?:是)?多少|多长时间(?:能)?读完|阅读时间)"
    ),
]


def asks_length(question: str) -> bool:
    """Whether the question asks how long a post is."""
    text = " ".join(question.split())
    return any(pattern.search(text) for pattern in _ASKS)


class Length(BaseModel):
    """A post's length: the words of its prose (``han`` of them Chinese characters), its code
    blocks and their lines."""

    words: int
    han: int
    blocks: int
    code_lines: int

    @property
    def minutes(self) -> int:
        """Minutes to read the prose (at least 1)."""
        latin = self.words - self.han
        return max(1, math.ceil(latin / WORDS_A_MINUTE + self.han / CHARACTERS_A_MINUTE))


_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HAN = re.compile(r"[\u3400-\u9fff]")


def length_of(body: str) -> Length:
    """The length of a post's body (no frontmatter): its prose, and its code blocks (a block
    opens at a code line after prose or after a block's closing fence; its fences are not
    its lines)."""
    prose: list[str] = []
    blocks = lines = 0
    fence: str | None = None  # the open block's fence
    for _, line, code in code_lines(body):
        if not code:
            prose.append(line)
            fence = None
            continue
        found = _FENCE.match(line)
        if fence is None:
            blocks += 1
            fence = found.group(1) if found else "```"
            continue
        closing = line.strip()
        if found and set(closing) == {fence[0]} and len(closing) >= len(fence):
            fence = None  # its closing fence: the next code line opens another block
            continue
        lines += 1
    text = "\n".join(prose)
    return Length(
        words=word_count(text), han=len(_HAN.findall(text)), blocks=blocks, code_lines=lines
    )


class _Counted(BaseModel):
    path: str
    title: str
    length: Length


def _count(ctx: SkillContext, target: str) -> _Counted:
    """The post at ``target`` counted (``post_length``). Reads it: a sync step."""
    path = ctx.files.relative(target)
    text, _ = ctx.files.read(path)
    fields, body = split_post(text, path)
    indexed = ctx.memory.posts.get(path)
    title = indexed.title if indexed is not None else str(fields.get("title") or path)
    return _Counted(path=path, title=title, length=length_of(body))


async def post_length(ctx: SkillContext, target: str) -> SkillResult:
    """How long the post at ``target`` is, counted (``post_length``)."""
    counted = await ctx.step("counted", partial(_count, ctx, target), returns=_Counted)
    length = counted.length
    code = (
        ctx.reply("post_length_code", blocks=length.blocks, lines=length.code_lines)
        if length.blocks
        else ""
    )
    message = ctx.reply(
        "post_length",
        path=counted.path,
        title=clip(counted.title, 80),
        words=length.words,
        code=code,
        minutes=length.minutes,
    )
    return SkillResult(
        message=message,
        data={
            "found": True,
            "path": counted.path,
            "citations": [counted.path],
            "words": length.words,
            "code_blocks": length.blocks,
            "minutes": length.minutes,
        },
    )
