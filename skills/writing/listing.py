"""Lists by tag and by link, from the index and the knowledge graph, with no model.

"which posts are tagged rust?", "posts with the tag docker", "标签为 rust 的文章", "带 docker
标签的文章有哪些": the posts whose frontmatter has that tag. "what tags do I use?", "list my
tags", "列出所有标签": the blog's tags, each with its number of posts. The embedded model,
asked "posts tagged rust", listed titles of its own ("Unwritten Ideas in Python 3.x") and
paths with the wrong titles; the tags are the posts' own, and the index has them.

A tag is compared without case, ``-``, ``_`` and spaces alike, and a plural's ``s`` aside
("databases" finds "database"). A tag no post has is answered with the tags close to it.

"which posts link to the rust borrowing post?", "哪些文章链接到了 …": the posts whose wikilinks
point at it; "what does the docker post link to?": those its own wikilinks point at
(``links_asked``, ``list_links``). "what links to Unwritten Ideas?", a note linked to that no
post has written yet: the posts linking to it (``list_note_links``).

"what is related to rust?", "和 rust 相关的有哪些": the knowledge graph's neighbours of a tag,
an entity or a post (``related_asked``, ``list_related``). It went to the search and the
model, which answered from whatever posts held the word.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial

from pydantic import BaseModel

from skillrt import Replies, SkillContext, SkillResult
from skillrt.blog.frontmatter import split_frontmatter
from skillrt.blog.posts import PostMeta
from skillrt.exceptions import InvalidFrontmatter, PathNotAllowed

from .prompts import clip

__all__ = [
    "LISTED",
    "REPLIES",
    "TagAsk",
    "links_asked",
    "list_by_tag",
    "list_links",
    "list_note_links",
    "list_related",
    "names_of",
    "post_line",
    "related_asked",
    "tag_ask",
    "tag_counts",
    "without_links_words",
]

LISTED = 20  # posts shown; the rest are counted
TAGS_LISTED = 60  # tags shown, the most used first
CLOSE_TAGS = 5

REPLIES = Replies(
    {
        "listed_tagged": (
            "标签为“{tag}”的文章有 {count} 篇{drafts}：\n\n{lines}",
            "Posts tagged “{tag}”: {count}{drafts}\n\n{lines}",
        ),
        "listed_category": (
            "没有文章带“{tag}”标签；分类为“{tag}”的文章有 {count} 篇{drafts}：\n\n{lines}",
            "No post has the tag “{tag}”; posts in the category “{tag}”: {count}{drafts}\n\n"
            "{lines}",
        ),
        "listed_none_tagged": (
            "没有文章的标签是“{tag}”。{close}",
            "No post is tagged “{tag}”.{close}",
        ),
        "untagged_listed": (
            "没有标签的文章有 {count} 篇{drafts}：\n\n{lines}",
            "Posts without tags: {count}{drafts}\n\n{lines}",
        ),
        "untagged_none": ("每篇文章都有标签{drafts}。", "Every post has tags{drafts}."),
        "close_tags": ("相近的标签：{tags}。", " Tags close to it: {tags}."),
        "tags_listed": (
            "博客的文章用了 {count} 个标签：\n\n{lines}",
            "Tags on the blog: {count}\n\n{lines}",
        ),
        "tags_more": ("\n\n……还有 {more} 个。", "\n\n… and {more} more."),
        "no_tags": ("博客的文章还没有标签。", "No post on the blog has a tag yet."),
        "linked_from": (
            "链接到 `{path}`（“{title}”）的文章有 {count} 篇{drafts}：\n\n{lines}",
            "Posts that link to `{path}` (“{title}”): {count}{drafts}\n\n{lines}",
        ),
        # (wikilinks only: "[docker](docker-basics.md)" is not counted, and the reply said "No
        # post links to" the docker post, which one did)
        "linked_from_none": (
            "没有文章用 wikilink（[[…]]）链接到 `{path}`（“{title}”）{drafts}。",
            "No post's wikilinks ([[…]]) point to `{path}` (“{title}”){drafts}.",
        ),
        "links_out": (
            "`{path}`（“{title}”）链接了 {count} 篇文章{drafts}：\n\n{lines}",
            "`{path}` (“{title}”) links to {count} post(s){drafts}:\n\n{lines}",
        ),
        # "what links to Unwritten Ideas?": a note linked to that no post has written yet (it
        # said "I found no post on the blog that is “Unwritten Ideas”", the graph knowing who
        # links to it)
        "note_linked_from": (
            "“{name}”还不是一篇文章（有文章链接到它，但还没有写）。链接到它的文章有 {count} 篇"
            "{drafts}：\n\n{lines}",
            "“{name}” is no post yet (posts link to it, but nobody has written it). Posts that "
            "link to it: {count}{drafts}\n\n{lines}",
        ),
        "related_to": (
            "知识图谱里与“{name}”相关的文章有 {count} 篇{drafts}：\n\n{lines}{others}",
            "Posts related to “{name}” in the knowledge graph: {count}{drafts}\n\n{lines}{others}",
        ),
        "related_entities": ("\n\n相关的主题：{names}", "\n\nRelated topics: {names}"),
        "related_none": (
            "知识图谱里没有与“{name}”相关的文章{drafts}。{others}",
            "Nothing in the knowledge graph relates a post to “{name}”{drafts}.{others}",
        ),
        "links_out_none": (
            "`{path}`（“{title}”）没有用 wikilink（[[…]]）链接到别的文章{drafts}。",
            "`{path}` (“{title}”) has no wikilink ([[…]]) to another post{drafts}.",
        ),
    }
)

# ("everything tagged python": "show me everything tagged python" was asked about)
# ("文章" in an English question: "how many 文章 have tag python" was searched, and the model
# asked)
_POSTS = r"(?:blog\s+)?(?:posts?|articles?|entries|notes|drafts?|everything|anything|文章|博文)"
_LEAD = (
    r"^(?:please\s+|can\s+you\s+|could\s+you\s+)?"
    r"(?:(?:what|which|how\s+many)\s+(?:of\s+(?:my|the|your|our)\s+)?|(?:show(?:\s+me)?|list|find|"
    r"give\s+me|get)\s+(?:all\s+)?(?:of\s+)?(?:the\s+|my\s+|our\s+)?)?"
)
_END = r"\s*[?.!]*$"
_TAG = r"[\"'“‘「#]?(?P<tag>[^\s\"'”’」?？]+(?:\s[^\s\"'”’」?？]+){0,4}?)[\"'”’」]?"
_TAG_ZH = r"[\"'“‘「#]?(?P<tag>[^\s\"'”’」?？的]{1,40}?)[\"'”’」]?"
_ZH_POSTS = r"(?:文章|博文|帖子|草稿)"
_ZH_LIST = r"^(?:请)?(?:列出|列一下|显示|看看|给我看看|找出)?\s*(?:所有|全部)?\s*"
_ZH_END = r"\s*(?:有)?(?:哪些|哪几篇|几篇)?\s*[?？。!！]*$"

# The posts with a tag.
_TAGGED = [
    re.compile(
        rf"{_LEAD}{_POSTS}\s+(?:(?:that|which)\s+)?(?:(?:are|is|were|was|have\s+been|i\s+)\s*)?"
        rf"tagged(?:\s+(?:with|as))?\s+(?:the\s+tag\s+)?{_TAG}{_END}",
        re.I,
    ),
    re.compile(
        rf"{_LEAD}{_POSTS}\s+(?:(?:(?:that|which)\s+)?(?:have|has|carry|carries)|with|having|under|"
        rf"in)\s+(?:the\s+|a\s+)?tag\s+{_TAG}{_END}",
        re.I,
    ),
    re.compile(rf"^(?:what(?:'s|\s+is)|what\s+(?:have|did)\s+i)\s+tagged\s+{_TAG}{_END}", re.I),
    re.compile(
        rf"{_ZH_LIST}(?:标签|tag)\s*(?:为|是|有|包含|含)\s*{_TAG_ZH}\s*的\s*{_ZH_POSTS}{_ZH_END}",
        re.I,
    ),
    re.compile(
        rf"{_ZH_LIST}(?:带|带有|有|打了|标了|标着)\s*{_TAG_ZH}\s*(?:标签|tag)\s*的\s*{_ZH_POSTS}"
        rf"{_ZH_END}",
        re.I,
    ),
    re.compile(
        rf"{_ZH_LIST}{_TAG_ZH}\s*(?:标签|tag)\s*(?:下|里)\s*的?\s*{_ZH_POSTS}{_ZH_END}", re.I
    ),
]
# The blog's tags.
_TAGS = [
    re.compile(
        r"^(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:list|show(?:\s+me)?|give\s+me|"
        r"what\s+are(?=\s+(?:all\s+)?(?:of\s+)?(?:my|the|your|our)\b))"  # ("what are tags?")
        r"\s+(?:all\s+)?(?:of\s+)?(?:my|the|your|our)?\s*(?:blog's\s+)?"
        rf"(?:blog\s+)?tags(?:\s+(?:i\s+use|on\s+(?:my|the)\s+blog|i\s+have))?{_END}",
        re.I,
    ),
    re.compile(
        r"^(?:what|which)\s+tags\s+(?:do|did|have)\s+(?:i|we)\s+(?:use|used|have)"
        rf"(?:\s+on\s+(?:my|the|our)\s+blog)?{_END}",
        re.I,
    ),
    re.compile(
        r"^(?:which|what)\s+tags\s+(?:are\s+there|are\s+used|does\s+(?:my|the)\s+blog\s+"
        rf"(?:use|have)){_END}",
        re.I,
    ),
    re.compile(
        r"^how\s+many\s+tags\s+(?:do|did|have)\s+(?:i|we)\s+(?:use|used|have)"
        rf"(?:\s+on\s+(?:my|the|our)\s+blog)?{_END}",
        re.I,
    ),
    re.compile(
        r"^(?:请)?(?:列出|列一下|显示|看看|给我看看)?\s*(?:我的|博客的|博客里的|博客里)?\s*"
        r"(?:所有|全部)?(?:的)?\s*标签\s*(?:列表|清单)?\s*[?？。!！]*$"
    ),
    re.compile(
        r"^(?:我|博客里?|博客)?\s*(?:的文章)?\s*(?:用了|用过|有|一共有)\s*(?:哪些|什么|多少个?|几个)\s*"
        r"标签\s*[?？。!！]*$"
    ),
]


# The posts with no tag: "which posts have no tags?", "list untagged posts", "没有标签的文章".
# The embedded model, sent it as a question, answered that the docker post "isn't a post about
# do" four times over.
_UNTAGGED_EN = re.compile(  # (the same as its table rule in intents.toml)
    r"^(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:(?:list|show(?:\s+me)?|find|give\s+me|get)"
    r"\s+(?:the\s+|my\s+|all\s+)*)?(?:(?:which|what)\s+(?:of\s+(?:my|the)\s+)?)?(?:untagged\s+"
    r"(?:posts?|articles?|notes?|entries)|(?:posts?|articles?|notes?|entries)\s+(?:(?:that|whi"
    r"ch)\s+)?(?:(?:are|is)\s+untagged|(?:without|with\s+no|missing|lacking)\s+(?:any\s+|a\s+)"
    r"?tags?|(?:have|has)\s+no\s+tags?|(?:don'?t|do\s+not|doesn'?t|does\s+not)\s+have\s+(?:any"
    r"\s+|a\s+)?tags?|(?:are\s+missing|are\s+without|lack)\s+(?:any\s+|a\s+)?tags?))\s*[?.!]*$",
    re.I,
)
_UNTAGGED_ZH = re.compile(
    r"^(?:请)?(?:列出|显示|看看|找出)?\s*(?:哪些)?\s*(?:文章|博文|笔记)?\s*(?:没有|没打|没加|缺少)"
    r"\s*(?:任何)?标签\s*(?:的)?\s*(?:文章|博文|笔记)?\s*(?:有哪些|是哪些|有哪几篇)?\s*[?？。!！]*$"
)
_POST_NOUN_ZH = re.compile("文章|博文|笔记")


@dataclass(frozen=True, slots=True)
class TagAsk:
    """A request for the posts with ``tag``, or (``tag`` empty) for the blog's tags. "tagged
    rust and async" asks for the posts with both, "tagged rust or go" for those with either
    (a tag that is itself "rock and roll" is found as such first). ``untagged``: for the
    posts with no tag."""

    tag: str
    untagged: bool = False

    def alternatives(self) -> tuple[tuple[str, ...], bool]:
        """The tags asked for, and whether a post must have every one of them."""
        parts = [p for p in _SPLIT.split(self.tag) if p and p.strip()]
        both = bool(_BOTH.search(self.tag))
        return tuple(p.strip(" #\"'“”") for p in parts if not _JOINER.fullmatch(p.strip())), both


_SPLIT = re.compile(r"\s+(and|or)\s+|\s*[,，、]\s*|\s*(和|或|或者)\s*", re.I)
_JOINER = re.compile(r"and|or|和|或|或者", re.I)
_BOTH = re.compile(r"\s+and\s+|和", re.I)


def tag_ask(question: str) -> TagAsk | None:
    """What a request for a list by tag asks, or None when it asks something else."""
    text = " ".join(question.split())
    if "tag" not in text.casefold() and "标签" not in text:
        return None
    if _UNTAGGED_EN.match(text) or (_UNTAGGED_ZH.match(text) and _POST_NOUN_ZH.search(text)):
        return TagAsk("", untagged=True)
    for pattern in _TAGS:
        if pattern.match(text):
            return TagAsk("")
    for pattern in _TAGGED:
        found = pattern.match(text)
        if found is not None and (tag := found.group("tag").strip(" .#")):
            return TagAsk(tag)
    return None


def _key(tag: str) -> str:
    """A tag as compared: without case, ``#``, and with ``-``, ``_`` and spaces alike."""
    return re.sub(r"[\s_-]+", "-", tag.casefold().strip(" #"))


def _singular(key: str) -> str:
    return key[:-1] if len(key) > 3 and key.endswith("s") and not key.endswith("ss") else key


def post_line(number: int, meta: PostMeta) -> str:
    """A post in a numbered list: its title linked to its path, its date and tags, and its
    description on the line below."""
    extra = " · ".join(x for x in (meta.date or "", ", ".join(meta.tags)) if x)
    title = meta.title.replace("[", "\\[").replace("]", "\\]")  # (a link's text)
    target = f"<{meta.path}>" if " " in meta.path else meta.path
    line = f"{number}. [{title}]({target})" + (f" — {extra}" if extra else "")
    return line + (f"\n   {clip(meta.description, 160)}" if meta.description else "")


class Tagged(BaseModel):
    """What a list by tag found: the lines shown, the paths listed, how many there are, the
    drafts left out, and the tags close to one no post has (or, for the blog's tags, none)."""

    lines: list[str]
    paths: list[str]
    count: int
    drafts_left_out: int
    close: list[str]
    category: bool = False  # the posts are in that category: none has the tag


def tag_counts(metas: Iterable[PostMeta]) -> Counter[str]:
    """Each tag's number of posts, as the blog's tag list counts them (``_counts``)."""
    return _counts(metas)


def _counts(metas: Iterable[PostMeta]) -> Counter[str]:
    """Each tag's number of posts, under the spelling its first post gives it."""
    spelled: dict[str, str] = {}
    counts: Counter[str] = Counter()
    for meta in metas:
        for tag in {_key(t): t for t in meta.tags}.values():
            counts[spelled.setdefault(_key(tag), tag)] += 1
    return counts


def _tagged(ctx: SkillContext, tag: str) -> Tagged:
    """The posts tagged ``tag`` (newest first), or every tag with its count. Blocking I/O:
    run it as a sync step."""
    ctx.memory.refresh()
    posts = ctx.memory.posts.all_posts()
    in_answers = ctx.config.drafts.in_answers
    shown = [m for m in posts if in_answers or not m.draft]
    if not tag:
        counts = sorted(_counts(shown).items(), key=lambda kv: (-kv[1], kv[0].casefold()))
        lines = [f"- {name} ({count})" for name, count in counts[:TAGS_LISTED]]
        return Tagged(lines=lines, paths=[], count=len(counts), drafts_left_out=0, close=[])
    wanted = _key(tag)
    ask, every = TagAsk(tag).alternatives()
    if len(ask) < 2 or any(_singular(_key(t)) == _singular(wanted) for m in shown for t in m.tags):
        ask, every = (tag,), True  # one tag ("rock and roll", when a post has it)

    def has_one(meta: PostMeta, one: str) -> bool:
        return any(_singular(_key(t)) == _singular(_key(one)) for t in meta.tags)

    def has(meta: PostMeta) -> bool:
        return (all if every else any)(has_one(meta, one) for one in ask)

    metas = _newest_first(m for m in shown if has(m))
    left_out = sum(1 for m in posts if has(m)) - len(metas)
    close: list[str] = []
    category = False
    if not metas:  # Jekyll's and Hugo's categories, which the index does not count as tags
        keys = {_singular(_key(one)) for one in ask}
        named = {m.path: _categories(ctx, m.path) for m in shown}  # (each post read once)
        fits = [m for m in shown if (keys <= named[m.path] if every else keys & named[m.path])]
        metas = _newest_first(fits)
        category = bool(metas)
    if not metas:
        names = {_key(t): t for t in _counts(shown)}
        near = difflib.get_close_matches(wanted, list(names), n=CLOSE_TAGS, cutoff=0.6)
        near += [k for k in names if wanted in k and k not in near][: CLOSE_TAGS - len(near)]
        close = [names[k] for k in near]
    return _listing(metas, drafts_left_out=left_out, close=close, category=category)


def _newest_first(metas: Iterable[PostMeta]) -> list[PostMeta]:
    return sorted(metas, key=lambda m: (m.date or "", m.path))[::-1]


def _listing(
    metas: list[PostMeta], *, drafts_left_out: int, close: list[str], category: bool = False
) -> Tagged:
    """``metas`` (newest first) as a list shows them: the first ``LISTED``, and how many."""
    shown = metas[:LISTED]
    return Tagged(
        lines=[post_line(i, meta) for i, meta in enumerate(shown, 1)],
        paths=[m.path for m in shown],
        count=len(metas),
        drafts_left_out=drafts_left_out,
        close=close,
        category=category,
    )


def _categories(ctx: SkillContext, path: str) -> set[str]:
    """The categories a post's frontmatter gives (``categories`` or ``category``: a list, or
    a string of names apart by spaces or commas, as Jekyll takes them), as tags are compared.
    Reads the post: blocking I/O."""
    try:
        text, _ = ctx.files.read(path)
        fields = split_frontmatter(text, path).fields()
    except (OSError, ValueError, InvalidFrontmatter, PathNotAllowed):
        return set()
    return {_singular(_key(n)) for n in names_of(fields.get("categories", fields.get("category")))}


def names_of(value: object) -> list[str]:
    """The names a frontmatter field lists: a list, or a string of names apart by spaces or
    commas (as Jekyll takes categories); none for anything else."""
    names = re.split(r"[\s,]+", value) if isinstance(value, str) else value
    return [str(n).strip() for n in names if str(n).strip()] if isinstance(names, list) else []


async def list_by_tag(ctx: SkillContext, ask: TagAsk, drafts_note: str) -> SkillResult:
    """The reply to ``ask``. ``drafts_note``: the reply key saying how many drafts were left
    out (AnswerQuestion's, shared with its other lists)."""
    if ask.untagged:
        return await _list_untagged(ctx, drafts_note)
    found = await ctx.step("tagged", partial(_tagged, ctx, ask.tag), returns=Tagged)
    drafts = ctx.reply(drafts_note, drafts=found.drafts_left_out) if found.drafts_left_out else ""
    lines = "\n".join(found.lines)
    if not ask.tag:
        if not found.count:
            return SkillResult(message=ctx.reply("no_tags"), data={"found": False, "tags": 0})
        message = ctx.reply("tags_listed", count=found.count, lines=lines)
        if found.count > len(found.lines):
            message += ctx.reply("tags_more", more=found.count - len(found.lines))
        return SkillResult(message=message, data={"found": True, "tags": found.count})
    tag = clip(ask.tag, 60)
    data = {
        "found": bool(found.count),
        "tag": ask.tag,
        "listed": found.count,
        "category": found.category,
    }
    if not found.count:
        close = (
            ctx.reply("close_tags", tags=", ".join(f"“{t}”" for t in found.close))
            if found.close
            else ""
        )
        message = ctx.reply("listed_none_tagged", tag=tag, close=close) + drafts
        return SkillResult(message=message, data={**data, "citations": [], "close": found.close})
    message = (
        ctx.reply("listed_category", tag=tag, count=found.count, drafts=drafts, lines=lines)
        if found.category
        else ctx.reply("listed_tagged", tag=tag, count=found.count, drafts=drafts, lines=lines)
    )
    if found.count > len(found.lines):
        message += ctx.reply("listed_more", more=found.count - len(found.lines))
    return SkillResult(message=message, data={**data, "citations": found.paths})


def _untagged(ctx: SkillContext) -> Tagged:
    """The posts with no tag, newest first (drafts left out unless ``drafts.in_answers``).
    Blocking I/O: run it as a sync step."""
    ctx.memory.refresh()
    posts = ctx.memory.posts.all_posts()
    in_answers = ctx.config.drafts.in_answers
    bare = [m for m in posts if not m.tags]
    metas = _newest_first(m for m in bare if in_answers or not m.draft)
    return _listing(metas, drafts_left_out=len(bare) - len(metas), close=[])


async def _list_untagged(ctx: SkillContext, drafts_note: str) -> SkillResult:
    found = await ctx.step("untagged", partial(_untagged, ctx), returns=Tagged)
    drafts = ctx.reply(drafts_note, drafts=found.drafts_left_out) if found.drafts_left_out else ""
    data = {"found": bool(found.count), "untagged": True, "listed": found.count}
    if not found.count:
        return SkillResult(message=ctx.reply("untagged_none", drafts=drafts), data=data)
    message = ctx.reply(
        "untagged_listed", count=found.count, drafts=drafts, lines="\n".join(found.lines)
    )
    if found.count > len(found.lines):
        message += ctx.reply("listed_more", more=found.count - len(found.lines))
    return SkillResult(message=message, data={**data, "citations": found.paths})


# "which posts link to the rust lifetimes post?", "what links to X?", "backlinks of X",
# "哪些文章链接到了 X": the posts whose wikilinks point at it (``to``). "what does the docker post
# link to?", "X 链接了哪些文章": the posts its own wikilinks point at (``from``). The knowledge
# graph has both; the embedded model listed a title it made up three times.
_LINKS_TO = re.compile(
    r"\b(?:which|what)\s+(?:other\s+)?(?:posts?|articles?|notes?|pages?)\s+(?:link|links|linked|"
    r"point|points|refer|refers)\s+(?:to|at|back\s+to|here)\b|\bwhat\s+links\s+(?:to|here)\b"
    r"|\bbacklinks?\b"
    r"|\b(?:posts?|articles?)\s+(?:that\s+)?(?:link|links|linking)\s+to\b|\bwho\s+links\s+to\b"
    r"|哪些(?:文章|博文|笔记)\S{0,4}?(?:链接|引用|指向)(?:到|了)|反向链接",
    re.I,
)
_LINKS_FROM = re.compile(
    r"\bwhat\s+(?:posts?\s+|articles?\s+)?does\s+(?P<post>.{1,80}?)\s+link\s+to\b"
    r"|\bwhich\s+(?:posts?|articles?)\s+does\s+(?P<post2>.{1,80}?)\s+link\s+to\b"
    r"|\b(?:the\s+)?links\s+(?:in|from)\s+(?P<post3>(?:the|my)\s+.{1,60}?\b(?:post|article))\b"
    r"|(?:链接|引用)了哪些(?:文章|博文|笔记)|链接到(?:了)?哪些(?:文章|博文|笔记)",
    re.I,
)


def without_links_words(question: str) -> str:
    """``question`` without the words that ask for links ("which posts link to"): what is
    left names the post (a "link" before it would make it a post to link, ``pick``)."""

    def post(found: re.Match[str]) -> str:
        return f" {found.group('post') or found.group('post2') or found.group('post3') or ''} "

    return _LINKS_TO.sub(" ", _LINKS_FROM.sub(post, " ".join(question.split())))


def links_asked(question: str) -> str | None:
    """``"to"`` when ``question`` asks which posts link to a post, ``"from"`` when it asks
    which posts a post links to, else None."""
    text = " ".join(question.split())
    if _LINKS_FROM.search(text):
        return "from"
    if _LINKS_TO.search(text):
        return "to"
    return None


class Linked(BaseModel):
    """A post's links: its path and title, the lines listing the posts linked, and the drafts
    left out of them."""

    path: str
    title: str
    lines: list[str]
    paths: list[str]
    drafts_left_out: int = 0


def _linked(ctx: SkillContext, target: str, direction: str) -> Linked:
    """The posts linking to ``target`` (``to``), or those it links to (``from``), from the
    graph brought up to date first. Blocking I/O: a sync step."""
    ctx.memory.refresh()
    posts = ctx.memory.posts
    path = ctx.files.relative(target)
    meta = posts.get(path)
    title = meta.title if meta is not None else path
    if direction == "to":
        found = [p for p in ctx.memory.graph.backlinks(path) if p != path]
    else:
        seen: dict[str, None] = {}
        for link in meta.wikilinks if meta is not None else ():
            resolved = ctx.memory.resolve_link(link)
            if resolved is not None and resolved != path:
                seen.setdefault(resolved)
        found = list(seen)
    by_path = {m.path: m for m in posts.all_posts()}
    every = [by_path[p] for p in found if p in by_path]
    # Drafts left out and counted, as the other lists do (a draft was listed among the posts
    # linking to go-generics, with no note).
    metas = [m for m in every if ctx.config.drafts.in_answers or not m.draft]
    lines = [post_line(i, m) for i, m in enumerate(metas[:LISTED], 1)]
    return Linked(
        path=path,
        title=title,
        lines=lines,
        paths=[m.path for m in metas],
        drafts_left_out=len(every) - len(metas),
    )


async def list_links(
    ctx: SkillContext, target: str, direction: str, drafts_note: str = "drafts_left_out"
) -> SkillResult:
    """The reply to a question on a post's links (``links_asked``). ``drafts_note``: the reply
    key saying how many drafts were left out (AnswerQuestion's, shared with its other lists)."""
    found = await ctx.step("linked", partial(_linked, ctx, target, direction), returns=Linked)
    title = clip(found.title, 80)
    count = len(found.paths)
    left_out = found.drafts_left_out
    drafts = ctx.reply(drafts_note, drafts=left_out) if left_out else ""
    said = {
        "path": found.path,
        "title": title,
        "count": count,
        "lines": "\n".join(found.lines),
        "drafts": drafts,
    }
    if direction == "to":
        message = (
            ctx.reply("linked_from", **said) if count else ctx.reply("linked_from_none", **said)
        )
    else:
        message = ctx.reply("links_out", **said) if count else ctx.reply("links_out_none", **said)
    if count > len(found.lines):
        message += ctx.reply("listed_more", more=count - len(found.lines))
    return SkillResult(
        message=message,
        data={
            "found": bool(count),
            "path": found.path,
            "links": direction,
            "listed": count,
            "citations": found.paths[:LISTED],
        },
    )


def _note_linked(ctx: SkillContext, name: str) -> list[Linked]:
    """The posts whose wikilinks point at ``name``, a note the graph knows that no post has
    written (Obsidian's unwritten notes), as a list of one (empty: the graph has no such
    note). The graph brought up to date first. Blocking I/O: a sync step."""
    ctx.memory.refresh()
    graph = ctx.memory.graph
    entity = graph.entity(name)
    if entity is None or entity["type"] != "note":
        return []
    related = graph.related(entity["name"], limit=1000)
    linking = [r.name for r in related if r.node == "post" and "wikilink" in r.kinds]
    return [_as_linked(ctx, entity["name"], entity["name"], sorted(linking))]


def _as_linked(ctx: SkillContext, path: str, title: str, found: list[str]) -> Linked:
    """``found`` (paths) as a ``Linked``: drafts left out and counted, as the other lists do."""
    by_path = {m.path: m for m in ctx.memory.posts.all_posts()}
    every = [by_path[p] for p in found if p in by_path]
    metas = [m for m in every if ctx.config.drafts.in_answers or not m.draft]
    return Linked(
        path=path,
        title=title,
        lines=[post_line(i, m) for i, m in enumerate(metas[:LISTED], 1)],
        paths=[m.path for m in metas],
        drafts_left_out=len(every) - len(metas),
    )


async def list_note_links(
    ctx: SkillContext, name: str, drafts_note: str = "drafts_left_out"
) -> SkillResult | None:
    """The reply to "what links to <a note no post has written>?", or None when ``name`` is
    no such note of the graph."""
    notes = await ctx.step("note_linked", partial(_note_linked, ctx, name), returns=list[Linked])
    if not notes:
        return None
    found = notes[0]
    count = len(found.paths)
    left_out = found.drafts_left_out
    drafts = ctx.reply(drafts_note, drafts=left_out) if left_out else ""
    message = ctx.reply(
        "note_linked_from",
        name=clip(found.title, 80),
        count=count,
        drafts=drafts,
        lines="\n".join(found.lines),
    )
    if count > len(found.lines):
        message += ctx.reply("listed_more", more=count - len(found.lines))
    return SkillResult(
        message=message,
        data={
            "found": bool(count),
            "note": found.title,
            "links": "to",
            "listed": count,
            "citations": found.paths[:LISTED],
        },
    )


# "what is related to rust?", "what's connected to the docker post?", "which posts are related
# to go?", "show me everything related to sqlite", "和 rust 相关的有哪些", "跟 docker 有关的文章".
_RELATED = re.compile(
    r"^(?:(?:and|so|ok(?:ay)?)[\s,]+)?(?:what(?:['’]s|\s+is|\s+else\s+is)?|which\s+(?:other\s+)?"
    r"(?:posts?|articles?|notes?)\s+(?:are|is)|(?:show|list|find|give)(?:\s+me)?\s+(?:everything|"
    r"(?:all\s+)?(?:the\s+)?(?:posts?|articles?|notes?)))\s+(?:related|connected)\s+(?:to|with)\s+"
    r"(?P<what>.+?)\s*[?.!]*$"
    r"|^(?:和|与|跟)\s*(?P<zh>[^，,？?]{1,40}?)\s*(?:相关|有关|有关系|关联)的?(?:文章|博文|内容|东西)?"
    r"(?:有哪些|是什么|有什么|都有哪些|是哪些)?\s*[?？。!！]*$",
    re.I,
)


def related_asked(question: str) -> str | None:
    """What ``question`` asks the graph's neighbours of ("rust", "the docker post"), or
    None."""
    found = _RELATED.match(" ".join(question.split()))
    if found is None:
        return None
    what = (found.group("what") or found.group("zh") or "").strip(" \"'“”‘’「」《》")
    return what or None


class Neighbours(BaseModel):
    """The graph's neighbours of a name: the posts (as ``Linked``) and the entities' names."""

    posts: Linked
    entities: list[str]


ENTITIES_LISTED = 10


def _related(ctx: SkillContext, target: str, title: str) -> list[Neighbours]:
    """The graph's neighbours of ``target`` (a post's path, or an entity's name), as a list of one
    (empty: the graph knows neither). Blocking I/O: a sync step."""
    ctx.memory.refresh()
    graph = ctx.memory.graph
    if ctx.memory.posts.get(target) is None and graph.entity(target) is None:
        return []
    related = graph.related(target, limit=LISTED + ENTITIES_LISTED + 20)
    posts = [r.name for r in related if r.node == "post" and r.name != target]
    names = [
        r.name for r in related if r.node == "entity" and r.name.casefold() != title.casefold()
    ]
    return [
        Neighbours(posts=_as_linked(ctx, target, title, posts), entities=names[:ENTITIES_LISTED])
    ]


async def list_related(
    ctx: SkillContext, target: str, title: str, drafts_note: str = "drafts_left_out"
) -> SkillResult | None:
    """The reply listing the posts (and topics) the knowledge graph relates to ``target`` (a
    post's path or an entity's name, ``title`` the name said), or None when the graph knows
    no such post or entity (the question is then left to the search)."""
    found = await ctx.step(
        "related", partial(_related, ctx, target, title), returns=list[Neighbours]
    )
    if not found:
        return None
    neighbours = found[0]
    linked = neighbours.posts
    count = len(linked.paths)
    drafts = ctx.reply(drafts_note, drafts=linked.drafts_left_out) if linked.drafts_left_out else ""
    others = (
        ctx.reply("related_entities", names=", ".join(neighbours.entities))
        if neighbours.entities
        else ""
    )
    said = {"name": clip(title, 80), "count": count, "drafts": drafts, "others": others}
    if count:
        message = ctx.reply("related_to", lines="\n".join(linked.lines), **said)
    else:
        message = ctx.reply("related_none", **said)
    if count > len(linked.lines):
        message += ctx.reply("listed_more", more=count - len(linked.lines))
    return SkillResult(
        message=message,
        data={
            "found": bool(count),
            "related": title,
            "listed": count,
            "entities": neighbours.entities,
            "citations": linked.paths[:LISTED],
        },
    )
