"""The blog's own extremes, asked about: "which is my oldest post?", "what was my first post?",
"which post is the longest?", "what is my shortest post?", "what is my most popular tag?",
"我最早的文章是哪篇？", "我最长的文章是哪篇？", "我最常用的标签是什么？". They come from the index
(its dates, its tags, each post's words), no model. Before, the search found no post "on"
"my oldest post" and said so, and the embedded model answered "which post is the longest?"
and "what is my most popular tag?" with a general answer it made up (one with an address
that leads nowhere). The newest post has its own rule in ``answer.py`` (``_NEWEST_ASKED``).

The month or year the author posted most in: "which month did I post most in?", "which year
did I write the most?", "我哪个月写得最多？" (``busiest_asked``, ``busiest``), counted from the
index's dates. The search found nothing "on" them and the reply said so, with no answer.

The whole blog's words: "how many words is my blog in total?", "整个博客一共多少字",
"what's the average length of my posts?" (``words_asked``, ``blog_words``). No skill counted
them: the search found posts "on" the question and the model was asked, which wrote nothing
(or a number of its own).
"""

from __future__ import annotations

import calendar
import re
from collections import Counter
from functools import partial
from typing import Literal

from skillrt import Replies, SkillContext, SkillResult

from .listing import post_line, tag_counts
from .post_length import length_of

__all__ = [
    "REPLIES",
    "Extreme",
    "blog_extreme",
    "blog_words",
    "busiest",
    "busiest_asked",
    "extreme_asked",
    "extreme_followed_up",
    "words_asked",
]

Extreme = Literal["oldest", "longest", "shortest", "top_tag", "newest"]

REPLIES = Replies(
    {
        "oldest_post": ("你最早的文章：\n{line}", "Your oldest post:\n{line}"),
        "no_oldest_post": (
            "博客里没有带日期的已发布文章，无法判断哪篇最早。",
            "No published post on the blog has a date, so none can be called the oldest.",
        ),
        "longest_post": (
            "最长的文章（{words} 个词）：\n{line}",
            "Your longest post ({words} words):\n{line}",
        ),
        "shortest_post": (
            "最短的文章（{words} 个词）：\n{line}",
            "Your shortest post ({words} words):\n{line}",
        ),
        "no_posts_to_measure": (
            "博客里还没有已发布的文章。",
            "The blog has no published post yet.",
        ),
        "top_tag": (
            "最常用的标签：{tags}（各 {count} 篇文章）",
            "Your most used tag(s): {tags} ({count} post(s) each)",
        ),
        "no_tags_used": ("博客的文章还没有标签。", "No post on the blog has a tag yet."),
        "newest_listed": ("最新的：\n{line}", "The newest:\n{line}"),
        "blog_words": (
            "博客已发布的 {count} 篇文章正文一共 {words} 个字（中文按字计，代码块不算），"
            "平均每篇约 {average} 个。{drafts}",
            "Your {count} published post(s) hold {words} words of prose in all (code blocks "
            "left out, each Chinese character one word): about {average} a post.{drafts}",
        ),
        "blog_words_drafts": (
            "另有 {drafts} 篇草稿未计入。",
            " {drafts} draft(s) not counted.",
        ),
        "busiest_month": (
            "你发文最多的月份：{periods}（{count} 篇）。{undated}",
            "You posted most in {periods} ({count} post(s)).{undated}",
        ),
        "busiest_year": (
            "你发文最多的年份：{periods}（{count} 篇）。{undated}",
            "You posted most in {periods} ({count} post(s)).{undated}",
        ),
        "busiest_undated": (
            "另有 {undated} 篇没有日期，未计入。",
            " {undated} post(s) with no date not counted.",
        ),
        "no_dated_posts": (
            "博客里没有带日期的已发布文章，无法按时间统计。",
            "No published post on the blog has a date to count by.",
        ),
        # the extreme of the posts the last reply listed ("and the oldest one?" after a list)
        "of_listed": (
            "上面列出的文章中{what}：\n{line}",
            "Of the posts listed above, the {what}:\n{line}",
        ),
    }
)

_END = r"\s*[?？.。!！]*$"
_POST_EN = r"(?:blog\s+)?(?:post|article|entry)"
_ASKS: list[tuple[Extreme, re.Pattern[str]]] = [
    (
        "oldest",
        re.compile(
            r"^(?:(?:what|which)(?:['’]s|\s+is|\s+was)\s+(?:my|the)\s+(?:very\s+)?(?:oldest|"
            rf"earliest|first)\s+{_POST_EN}(?:\s+on\s+(?:my|the|this)\s+blog)?|which\s+{_POST_EN}"
            r"\s+(?:is|was)\s+(?:the\s+)?(?:oldest|earliest|first)|which\s+(?:post|article)\s+did\s+I"
            r"\s+(?:write|publish)\s+first|what\s+did\s+I\s+(?:write|publish|post)\s+first"
            # "whats the oldest thing I published" (h59: the chat answered it)
            r"|(?:what|which)(?:['’]?s|\s+is|\s+was)\s+(?:the\s+|my\s+)?(?:oldest|earliest|"
            r"first)\s+(?:thing|post|article|entry|piece)\s+(?:(?:that\s+)?i(?:['’]ve|\s+have)?"
            r"\s+)?(?:published|written|wrote|posted))"
            + _END
            + r"|^我?(?:最早|第一篇)的?(?:一篇)?(?:文章|博文)?是(?:哪一?篇|什么)"
            + _END,
            re.I,
        ),
    ),
    (
        "longest",
        re.compile(
            rf"^(?:(?:what|which)(?:['’]s|\s+is|\s+was)\s+(?:my|the)\s+longest\s+{_POST_EN}|"
            rf"which\s+{_POST_EN}\s+is\s+(?:the\s+)?longest)"
            + _END
            + r"|^我?最长的(?:一篇)?(?:文章|博文)是(?:哪一?篇|什么)"
            + _END,
            re.I,
        ),
    ),
    (
        "shortest",
        re.compile(
            rf"^(?:(?:what|which)(?:['’]s|\s+is|\s+was)\s+(?:my|the)\s+shortest\s+{_POST_EN}|"
            rf"which\s+{_POST_EN}\s+is\s+(?:the\s+)?shortest)"
            + _END
            + r"|^我?最短的(?:一篇)?(?:文章|博文)是(?:哪一?篇|什么)"
            + _END,
            re.I,
        ),
    ),
    (
        "top_tag",
        re.compile(
            r"^(?:(?:what|which)(?:['’]s|\s+is|\s+are)\s+(?:my|the)\s+(?:most\s+(?:popular|used|"
            r"common|frequent)|top|favou?rite)\s+tags?(?:\s+on\s+(?:my|the|this)\s+blog)?|"
            r"(?:which|what)\s+tags?\s+(?:do\s+I\s+use|is\s+used|are\s+used)\s+(?:the\s+)?"
            r"most(?:\s+often)?)"
            + _END
            + r"|^我?(?:最常用|用得最多|最多)的标签是(?:什么|哪个|哪些)"
            + _END,
            re.I,
        ),
    ),
]


def extreme_asked(question: str) -> Extreme | None:
    """Which of the blog's extremes ``question`` asks for, or None."""
    text = " ".join(question.split())
    return next((which for which, pattern in _ASKS if pattern.match(text)), None)


# A follow-up that asks for one post by an extreme, with no post named: "and the oldest one?",
# "what about the longest?", "which one is the newest?", "最早的那篇呢？" (the classifier sent
# "and the oldest one?" to the chat, after a list of posts). Of the posts the last reply
# listed, when it listed some; else of the blog.
_FOLLOW_UP = re.compile(
    r"^(?:(?:and|so|ok(?:ay)?|well|then|what\s+about|how\s+about)[\s,]+)*(?:(?:what|which)"
    r"(?:['’]s|\s+is|\s+was)\s+)?(?:the\s+)?(?P<en>oldest|earliest|newest|latest|most\s+recent|"
    r"longest|shortest)(?:\s+(?:one|post|article|entry))?(?:\s+of\s+(?:them|those|these|all))?"
    r"|^which\s+(?:one|of\s+(?:them|those|these))\s+(?:is|was)\s+(?:the\s+)?(?P<en2>oldest|"
    r"earliest|newest|latest|most\s+recent|longest|shortest)(?:\s+(?:one|post|article))?"
    r"|^(?:那|那么)?(?:其中)?(?P<zh>最早|最老|最新|最近|最长|最短)(?:的(?:那|一)?(?:篇|个)?|"
    r"(?:那|一)?(?:篇|个))(?:呢|是哪一?篇|是哪个)?"
)
_FOLLOW_UP_END = re.compile(r"\s*[?？.。!！]*$")
_EXTREME_WORDS: dict[str, Extreme] = {
    "oldest": "oldest", "earliest": "oldest", "newest": "newest", "latest": "newest",
    "most recent": "newest", "longest": "longest", "shortest": "shortest", "最早": "oldest",
    "最老": "oldest", "最新": "newest", "最近": "newest", "最长": "longest", "最短": "shortest",
}  # fmt: skip


_LISTED_WORDS: dict[Extreme, tuple[str, str]] = {
    "oldest": ("最早的", "oldest"), "newest": ("最新的", "newest"),
    "longest": ("最长的", "longest"), "shortest": ("最短的", "shortest"),
    "top_tag": ("", ""),
}  # fmt: skip


def extreme_followed_up(question: str) -> Extreme | None:
    """Which extreme a follow-up with no post named asks for ("and the oldest one?"), or
    None."""
    text = " ".join(question.split())
    found = _FOLLOW_UP.match(text)
    if found is None or _FOLLOW_UP_END.fullmatch(text, found.end()) is None:
        return None
    word = " ".join((found.group("en") or found.group("en2") or found.group("zh")).split())
    return _EXTREME_WORDS[word.casefold()]


def _extreme(ctx: SkillContext, which: Extreme, among: tuple[str, ...] = ()) -> list[str]:
    """``[line, path, count]`` for the post (or ``[tags, "", count]`` for the top tag); empty
    when there is none. Published posts only (of ``among`` when given). Blocking I/O: a sync
    step."""
    ctx.memory.refresh()
    posts = [meta for meta in ctx.memory.posts.all_posts() if not meta.draft]
    if among:
        posts = [meta for meta in posts if meta.path in among]
    if which == "top_tag":  # (counted as the blog's tag list counts them)
        counts = tag_counts(posts)
        if not counts:
            return []
        most = max(counts.values())
        top = sorted(tag for tag, count in counts.items() if count == most)
        return [", ".join(top), "", str(most)]
    if which in ("oldest", "newest"):
        dated = [meta for meta in posts if meta.date]
        if not dated:
            return []
        pick_by = min if which == "oldest" else max
        meta = pick_by(dated, key=lambda m: (m.date or "", m.path))
        return [post_line(1, meta).removeprefix("1. "), meta.path, ""]
    sizes = []
    for meta in posts:
        post = ctx.memory.posts.get(meta.path)
        if post is not None:
            sizes.append((length_of(post.body).words, meta.path, meta))  # (its prose)
    if not sizes:
        return []
    pick = max if which == "longest" else min
    words, _, meta = pick(sizes, key=lambda size: (size[0], size[1]))
    return [post_line(1, meta).removeprefix("1. "), meta.path, str(words)]


async def blog_extreme(
    ctx: SkillContext, which: Extreme, among: tuple[str, ...] = ()
) -> SkillResult:
    """The reply naming the blog's oldest, newest, longest or shortest post (of ``among``,
    the posts the last reply listed, when given), or its most used tag."""
    extreme = partial(_extreme, ctx, which, among)
    found = await ctx.step(f"blog_{which}", extreme, returns=list[str])
    if not found:
        if which in ("oldest", "newest"):
            message = ctx.reply("no_oldest_post")
        elif which == "top_tag":
            message = ctx.reply("no_tags_used")
        else:
            message = ctx.reply("no_posts_to_measure")
        return SkillResult(message=message, data={"found": False, "citations": []})
    line, path, count = found
    if which == "top_tag":
        message = ctx.reply("top_tag", tags=line, count=count)
        return SkillResult(message=message, data={"found": True, "tags": line.split(", ")})
    if among:
        zh, en = _LISTED_WORDS[which]
        if ctx.input.language == "zh":
            what = zh + (f"（{count} 个词）" if count else "")
        else:
            what = en + (f" ({count} words)" if count else "")
        message = ctx.reply("of_listed", what=what, line=line)
    elif which == "oldest":
        message = ctx.reply("oldest_post", line=line)
    elif which == "newest":
        message = ctx.reply("newest_listed", line=line)
    elif which == "longest":
        message = ctx.reply("longest_post", line=line, words=count)
    else:
        message = ctx.reply("shortest_post", line=line, words=count)
    return SkillResult(
        message=message, data={"found": True, "listed": 1, "citations": [path], "path": path}
    )


# The whole blog's words: "how many words is my blog (in total)?", "total word count across the
# whole blog?", "how many words have I written in total?", "what's the average length of my
# posts?", "整个博客一共多少字", "我一共写了多少字".
_BLOG = r"(?:my|the|this)\s+(?:whole\s+|entire\s+)?blog"
_WORDS_ASKED = re.compile(
    rf"^(?:(?:and|so)[\s,]+)?(?:how\s+many\s+words\s+(?:is|are|does|has|in|on)\s+{_BLOG}"
    r"(?:\s+(?:have|hold|got))?(?:\s+(?:in\s+total|altogether|overall|all\s+together))?"
    r"|how\s+many\s+words\s+(?:have\s+I|did\s+I)\s+(?:written|write|published)\s+"
    rf"(?:in\s+total|altogether|so\s+far|on\s+{_BLOG})"
    rf"|(?:what(?:['’]s|\s+is)\s+(?:the\s+)?)?(?:total\s+)?word\s+count\s+(?:of|for|across|on)\s+{_BLOG}"
    rf"|(?:the\s+)?total\s+word\s+count\s+(?:of|for|across|on)\s+(?:{_BLOG}|(?:all\s+)?my\s+posts)"
    r"|(?:what(?:['’]s|\s+is)\s+)?(?:the\s+)?average\s+(?:length|word\s+count|number\s+of\s+"
    r"words)\s+(?:of|in)\s+(?:my|the\s+blog['’]s)\s+(?:blog\s+)?(?:posts|articles))"
    + _END
    + r"|^(?:我的?|整个|全部)?\s*博客(?:里|上)?(?:的文章)?\s*(?:一共|总共|加起来|总计)?(?:有)?"
    r"(?:多少(?:个)?字|几个字)|^(?:博客|全站)?的?总字数(?:是)?(?:多少)?|^我(?:一共|总共)写了多少(?:个)?字"
    r"|^(?:我的?)?(?:文章|博客文章)平均(?:每篇)?(?:有)?多(?:少字|长)" + _END,
    re.I,
)


def words_asked(question: str) -> bool:
    """Whether ``question`` asks for the whole blog's words (or its posts' average length)."""
    return _WORDS_ASKED.match(" ".join(question.split())) is not None


def _blog_words(ctx: SkillContext) -> list[int]:
    """``[posts, words, drafts left out]``: the published posts, the words of their prose (as
    a post's length counts them), and the drafts not counted. Blocking I/O: a sync step."""
    ctx.memory.refresh()
    every = ctx.memory.posts.all_posts()
    published = [meta for meta in every if not meta.draft]
    words = 0
    for meta in published:
        post = ctx.memory.posts.get(meta.path)
        if post is not None:
            words += length_of(post.body).words
    return [len(published), words, len(every) - len(published)]


async def blog_words(ctx: SkillContext) -> SkillResult:
    """The reply giving the whole blog's words and a post's average, counted, no model."""
    count, words, drafts = await ctx.step(
        "blog_words", partial(_blog_words, ctx), returns=list[int]
    )
    if not count:
        return SkillResult(
            message=ctx.reply("no_posts_to_measure"), data={"found": False, "citations": []}
        )
    left_out = ctx.reply("blog_words_drafts", drafts=drafts) if drafts else ""
    average = round(words / count)
    message = ctx.reply("blog_words", count=count, words=words, average=average, drafts=left_out)
    return SkillResult(
        message=message,
        data={"found": True, "posts": count, "words": words, "average": average, "citations": []},
    )


# The month or year posted most in: "which month did I post most in?", "which year did I write
# the most?", "what was my busiest month?", "which month had the most posts?", "我哪个月写得最
# 多？", "哪一年发的文章最多". The search found no post "on" them ("nothing on it").
_UNIT_EN = r"(?P<en>month|year)"
_BUSIEST_ASKED = re.compile(
    r"^(?:(?:and|so)[\s,]+)?(?:(?:in\s+)?(?:which|what)\s+" + _UNIT_EN + r"\s+(?:did|have)\s+I\s+"
    r"(?:post(?:ed)?|write|written|publish(?:ed)?|blog(?:ged)?)\s+(?:the\s+)?most(?:\s+posts)?"
    r"(?:\s+in)?|(?:what|which)(?:['’]s|\s+is|\s+was)\s+my\s+(?:busiest|most\s+productive)\s+"
    + _UNIT_EN.replace("en>", "en2>")
    + r"|(?:which|what)\s+"
    + _UNIT_EN.replace("en>", "en3>")
    + r"\s+(?:had|has|saw)\s+(?:the\s+)?"
    r"most\s+(?:posts|articles|entries))"
    + _END
    + r"|^我?(?:在)?(?:哪个|哪一个|哪一|哪)(?P<zh>月|年)(?:份)?(?:里)?"
    r"(?:写|发|发布|更新|发表)(?:得|的|了)?(?:文章|博文)?最多"
    r"|^(?:哪个|哪一个|哪一|哪)(?P<zh2>月|年)(?:份)?(?:的)?(?:文章|博文)最多" + _END,
    re.I,
)


def busiest_asked(question: str) -> Literal["month", "year"] | None:
    """Whether ``question`` asks which month or year the author posted most in, and which."""
    found = _BUSIEST_ASKED.match(" ".join(question.split()))
    if found is None:
        return None
    unit = next(v for v in found.groupdict().values() if v)
    return "month" if unit.lower() in ("month", "月") else "year"


def _busiest(ctx: SkillContext, unit: Literal["month", "year"]) -> list[str]:
    """``[periods, count, undated]``: the months ("2024-03") or years with the most published
    posts (each, when tied), how many, and the published posts with no date. Blocking I/O: a
    sync step."""
    ctx.memory.refresh()
    published = [meta for meta in ctx.memory.posts.all_posts() if not meta.draft]
    width = 7 if unit == "month" else 4
    dated = [m.date[:width] for m in published if m.date and re.match(r"\d{4}-\d{2}", m.date)]
    if not dated:
        return []
    counts = Counter(dated)
    most = max(counts.values())
    periods = sorted(period for period, count in counts.items() if count == most)
    return [" ".join(periods), str(most), str(len(published) - len(dated))]


def _period_name(period: str, language: str) -> str:
    """ "2024-03" as "March 2024" (or "2024 年 3 月"); a year as it is."""
    if len(period) == 4:
        return period
    year, month = period.split("-")
    if language == "zh":
        return f"{year} 年 {int(month)} 月"
    return f"{calendar.month_name[int(month)]} {year}"


async def busiest(ctx: SkillContext, unit: Literal["month", "year"]) -> SkillResult:
    """The reply naming the month or year the author posted most in, counted, no model."""
    found = await ctx.step(f"busiest_{unit}", partial(_busiest, ctx, unit), returns=list[str])
    if not found:
        return SkillResult(
            message=ctx.reply("no_dated_posts"), data={"found": False, "citations": []}
        )
    periods, count, undated = found
    language = ctx.input.language
    sep = "、" if language == "zh" else ", "
    named = sep.join(_period_name(p, language) for p in periods.split())
    left_out = ctx.reply("busiest_undated", undated=undated) if undated != "0" else ""
    if unit == "month":
        message = ctx.reply("busiest_month", periods=named, count=count, undated=left_out)
    else:
        message = ctx.reply("busiest_year", periods=named, count=count, undated=left_out)
    return SkillResult(
        message=message,
        data={"found": True, unit: periods.split(), "count": int(count), "citations": []},
    )
