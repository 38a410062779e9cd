"""A post's author, date or categories, asked about: "who wrote it?", "when was the ssh post
written?", "what category is the vim post in?", "这篇文章是谁写的？". They come from the post's
frontmatter (its date, when it has none there, as the index read it: from the file's name or
a `path`); no model is asked. The embedded model answered "who is the author of the vim
post?" with "The vim post is written by <NAME> on [2018-04-30T15:57:56ZJarad_Babe]", and
"when was it written?", the ssh post open, from a search that found the vim post, with a date
and an address it made up; both were shown as done.

The words naming the post must name one ("it", "this post", "the vim post", a path): "when
did I write about rust?" asks the blog, and is left to the search.

Whether a post is a draft ("is it still a draft?", "is the rust post published?", "这篇还是草稿
吗？") comes from the index, which knows a draft by its frontmatter or its folder: the search
answered "is it still a draft?" with three posts it found and the model's words.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from functools import partial
from typing import Any, Literal

from skillrt import Replies, SkillContext, SkillResult

from .field_set import POST_NAMED, TABLES
from .post_tags import own_fields, refers_to_open

__all__ = ["REPLIES", "Fact", "fact_asked", "post_fact"]

Fact = Literal["author", "date", "categories", "draft"]

REPLIES = Replies(
    {
        "fact_author": ("[{title}]({path}) 的作者：{value}", "[{title}]({path}) is by {value}."),
        "fact_no_author": (
            "[{title}]({path}) 没有写明作者（它的 frontmatter 里没有 `author`）。",
            "[{title}]({path}) names no author (its frontmatter has no `author` field).",
        ),
        "fact_date": (
            "[{title}]({path}) 的日期：{value}{updated}",
            "[{title}]({path}) is dated {value}{updated}.",
        ),
        "fact_updated": ("（更新于 {updated}）", " (updated {updated})"),
        "fact_no_date": (
            "[{title}]({path}) 没有日期（frontmatter 和文件名里都没有）。",
            "[{title}]({path}) has no date (none in its frontmatter nor its file name).",
        ),
        "fact_categories": (
            "[{title}]({path}) 的分类：{value}",
            "[{title}]({path}) is filed under: {value}",
        ),
        "fact_no_categories": (
            "[{title}]({path}) 没有分类。",
            "[{title}]({path}) has no categories.",
        ),
        "fact_draft": (
            "[{title}]({path}) 是草稿，还没有发布。",
            "[{title}]({path}) is a draft: it is not published.",
        ),
        "fact_published": (
            "[{title}]({path}) 已经发布，不是草稿。",
            "[{title}]({path}) is published, not a draft.",
        ),
        "fact_action": ("查看哪篇文章", "look up"),
    }
)

_END = r"\s*[?？.。!！]*$"
_ASKS: list[tuple[Fact, re.Pattern[str]]] = [
    (
        "author",
        re.compile(
            r"^who\s+(?:wrote|authored|is\s+behind|(?:is|was|are|were)\s+the\s+authors?\s+of)"
            r"\s+(?P<post>.+?)" + _END,
            re.I,
        ),
    ),
    (
        "author",
        re.compile(
            r"^(?:what|who)\s+(?:is|are|was)\s+(?:(?P<post>its|the\s+post['’]s)\s+authors?|"
            r"the\s+authors?\s+(?:of|on|for)\s+(?P<post2>.+?))" + _END,
            re.I,
        ),
    ),
    (
        "date",
        re.compile(
            r"^when\s+(?:was|were|is)\s+(?P<post>.+?)\s+(?:written|published|posted|created|"
            r"dated|made)"
            + _END
            + r"|^when\s+did\s+(?:i|we|you)\s+(?:write|publish|post|create)\s+(?P<post2>.+?)"
            + _END,
            re.I,
        ),
    ),
    (
        "date",
        re.compile(
            r"^what\s+(?:is|was)\s+(?:(?P<post>its|the\s+post['’]s)\s+date|the\s+date\s+"
            r"(?:of|on)\s+(?P<post2>.+?))"
            + _END
            # "what date is the git workflow post from?" (asked which of three actions)
            + r"|^what\s+(?:date|day|year|month)\s+(?:is|was)\s+(?P<post3>.+?)\s+from"
            + _END,
            re.I,
        ),
    ),
    (
        "categories",
        re.compile(
            r"^(?:what|which)\s+categor(?:y|ies)\s+(?:is|are|was)\s+(?P<post>.+?)\s+"
            r"(?:in|under|filed\s+(?:in|under))"
            + _END
            + r"|^what\s+(?:is|are)\s+(?:(?P<post2>its|the\s+post['’]s)\s+categor(?:y|ies)|"
            r"the\s+categor(?:y|ies)\s+(?:of|for)\s+(?P<post3>.+?))" + _END,
            re.I,
        ),
    ),
    (
        "draft",
        re.compile(
            r"^(?:(?:and|so)[\s,]+)?(?:is|was)\s+(?P<post>.+?)\s+(?:still\s+)?(?:a\s+)?"
            r"(?:draft|published|public|live|out)(?:\s+(?:yet|already))?" + _END,
            re.I,
        ),
    ),
    (
        "draft",
        re.compile(
            r"^(?P<post>.+?)(?:还是草稿|是草稿|是不是草稿|还是不是草稿|发布了|发了|发出去了)"
            r"(?:吗|么|没有|没|嘛)?" + _END
        ),
    ),
    ("author", re.compile(r"^(?P<post>.+?)(?:是谁写的|的作者是谁|的作者是)" + _END)),
    ("author", re.compile(r"^谁写了(?P<post>.+?)" + _END)),
    (
        "date",
        re.compile(
            r"^(?P<post>.+?)(?:是什么时候|是哪天|是哪一天|是何时)(?:写|发布|发表|发)的"
            + _END
            + r"|^(?P<post2>.+?)的日期是(?:什么|哪天)?"
            + _END
        ),
    ),
    (
        "categories",
        re.compile(
            r"^(?P<post>.+?)(?:属于什么分类|属于哪个分类|的分类是什么|在哪个分类(?:里|下)?)" + _END
        ),
    ),
]
# Words that name a post and nothing more ("the vim post", "posts/x.md": ``POST_NAMED``;
# "《…》", "这篇文章"): not "the paper cited in this article", "这篇文章里提到的那本书".
_NAMES_POST_ZH = re.compile(
    r"(?:这篇|那篇)(?:文章|博文|笔记)?|[^，。？?里中的]{1,30}?(?:那篇|这篇)(?:文章|博文|笔记)?"
    r"|《[^》]{1,80}》|[\w./-]+\.md"
    # "关于 docker 的文章是哪天发的？" (searched, and the model asked)
    r"|(?:关于|讲)[^，。？?里中]{1,30}?的(?:那篇|这篇)?(?:文章|博文|笔记)"
)


def fact_asked(question: str) -> tuple[Fact, str] | None:
    """What ``question`` asks of one post (its author, date or categories) and the words
    naming that post ("it", "the vim post"); None when it asks something else, or names no
    post ("when did I write about rust?")."""
    text = " ".join(question.split())
    for fact, pattern in _ASKS:
        found = pattern.match(text)
        if found is None:
            continue
        words = next((w for w in found.groups() if w), "").strip()
        if words and (
            refers_to_open(words) or POST_NAMED.fullmatch(words) or _NAMES_POST_ZH.fullmatch(words)
        ):
            return fact, words
        return None
    return None


def _facts_of(ctx: SkillContext, path: str, fact: Fact) -> list[str]:
    """The post's title, the fact (empty when the post has none) and, for a date, the date
    it was last updated (or empty). Blocking I/O: a sync step."""
    ctx.memory.refresh()
    meta = ctx.memory.posts.get(path)
    title = meta.title if meta is not None else path
    fields = own_fields(ctx, path)
    if fact == "author":
        return [title, ", ".join(_names(_found(fields, "author", "authors"))), ""]
    if fact == "categories":
        return [title, ", ".join(_names(_found(fields, "categories", "category"))), ""]
    if fact == "draft":
        return [title, "draft" if meta is not None and meta.draft else "published", ""]
    date = _shown(fields.get("date")) or (str(meta.date or "") if meta is not None else "")
    updated = next(
        (_shown(fields[k]) for k in ("lastmod", "updated", "last_modified_at") if k in fields), ""
    )
    return [title, date, updated if updated != date else ""]


def _found(fields: Mapping[str, Any], *keys: str) -> Any:
    """The first of ``keys`` the post has, at the top level or in the table a generator keeps
    such fields in (Zola's ``[taxonomies]`` and ``[extra]``, Hugo's ``[params]``)."""
    for table in (fields, *(fields.get(t) for t in TABLES)):
        if isinstance(table, Mapping):
            for key in keys:
                if table.get(key) not in (None, "", []):
                    return table[key]
    return None


def _names(value: Any) -> list[str]:
    """The names a field holds: a string (split at commas, never at spaces: "Jane Doe"), a
    list of them, or a table with a ``name`` (Jekyll's ``author: {name: …}``)."""
    if isinstance(value, str):
        return [name.strip() for name in value.split(",") if name.strip()]
    if isinstance(value, Mapping):
        return _names(value.get("name") or value.get("title") or "")
    if isinstance(value, list | tuple):
        return [name for item in value for name in _names(item)]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [str(value)]
    return []


def _shown(value: Any) -> str:
    """A date as a reader reads it: ``2024-05-10``, or ``2024-05-10 09:30`` with a time."""
    if isinstance(value, dt.datetime):
        return (
            value.strftime("%Y-%m-%d %H:%M") if value.time() != dt.time() else f"{value:%Y-%m-%d}"
        )
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value).strip() if isinstance(value, str | int) else ""


async def post_fact(ctx: SkillContext, path: str, fact: Fact) -> SkillResult:
    """The reply saying the post's ``fact``, from its frontmatter, no model."""
    path = ctx.files.relative(path)
    title, value, updated = await ctx.step(
        f"post_{fact}", partial(_facts_of, ctx, path, fact), returns=list[str]
    )
    title = title.replace("[", "\\[").replace("]", "\\]")
    target = f"<{path}>" if " " in path else path
    said = {"title": title, "path": target, "value": value}
    if fact == "author":
        message = ctx.reply("fact_author" if value else "fact_no_author", **said)
    elif fact == "date" and value:
        later = ctx.reply("fact_updated", updated=updated) if updated else ""
        message = ctx.reply("fact_date", updated=later, **said)
    elif fact == "date":
        message = ctx.reply("fact_no_date", **said)
    elif fact == "draft" and value == "draft":
        message = ctx.reply("fact_draft", **said)
    elif fact == "draft":
        message = ctx.reply("fact_published", **said)
    else:
        message = ctx.reply("fact_categories" if value else "fact_no_categories", **said)
    return SkillResult(
        message=message,
        data={"found": True, "path": path, "fact": fact, "value": value, "citations": [path]},
    )
