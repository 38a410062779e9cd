"""A post's tags, changed without the model.

"add the tag release", "tag it with rust and async", "remove the tag draft from the rust
post", "set the tags to rust, cli", "rename the tag rust to rustlang", "添加标签 rust、异步",
"删除标签“草稿”", "把标签 rust 改成 rustlang": an edit that only changes tags is not sent to
the model (a small one rewrote the body instead, and its text
failed the checks). ``tag_change`` reads such an instruction; ``retagged`` makes the change
where the post keeps its tags:

- ``tags`` (or ``tag``), in the shape it has there: a list stays a list, a string of
  comma-separated tags stays a string;
- Zola's ``[taxonomies]`` table (``tags`` in it), also for a Zola post that has no tags yet:
  Zola reads tags nowhere else;
- else a new ``tags`` list (a post without frontmatter gets a YAML block).

Every other field, comment and byte of the post stays as it was (``Frontmatter.with_fields``).
Tags are compared without case, and one already there is not added twice. A renamed tag takes
its old one's place in the list. Before, "rename the tag rust to rustlang" was no tag change,
and the model was asked to edit the post's body for it; "把 rust 标签改成 rustlang" set the
post's whole list to "rustlang".

``every_post`` tells an instruction for all the blog's posts ("… in every post", "…
everywhere", "所有文章…"): ``blog_tags.py`` makes such a change post by post.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from skillrt.blog.frontmatter import Frontmatter, ListStyle

from .checks import HAN

__all__ = [
    "MAX_TAG_CHARS",
    "Retagged",
    "TagChange",
    "every_post",
    "retagged",
    "split_tags",
    "tag_change",
    "tag_change_everywhere",
]

MAX_TAG_CHARS = 40
MAX_TAG_WORDS = 3  # a longer "tag" is more likely an instruction read wrong
MAX_TAGS = 20

Action = Literal["add", "remove", "set", "rename"]

_POLITE = r"^(?:(?:please|pls|kindly|can\s+you|could\s+you|would\s+you)\s+)*"
# What names the post after the tags ("... to the rust post", "... from it"): not a tag.
# "… to the code blocks", "… from each heading": parts of a post take the request, and it is
# the body's ("add tags to the code blocks" means language tags on the fences), not a retag.
_IN_THE_BODY = (
    r"(?!(?:the\s+|each\s+|every\s+|all\s+(?:the\s+|of\s+the\s+)?|its\s+)?"
    r"(?:code|heading|header|section|paragraph|image|picture|link|table|list|snippet|block|"
    r"fence|figure|example|quote|line|sentence|title)s?\b)"
)
_TARGET = (
    rf"(?:\s*(?<!\S)(?:(?:to|onto|into|from|off)\s+{_IN_THE_BODY}\S.*|(?:on|in|for|of)\s+"
    r"(?:it|this|that|the|my|our|its|these|those|post|article|[\w./-]+\.(?:md|markdown))\b.*))?"
)
# "the tag line", "the tags section", "a tag cloud": parts of a post, not its tags.
_NOT_A_PART = r"(?!\s+(?:section|cloud|page|list|line|field)s?\b)(?!-)"
# Tags named before "tag(s)": one word each, "and" or commas between ("the rust and go tags").
_NAMED_TAGS = (
    r"(?P<tags>(?!(?:all|every|each|any|some|html|xml|markdown|code|image|link|inline|empty|"
    r"old|unused|duplicate|other|these|those|new|more|alt|canonical|noindex|anchor|closing|"
    r"opening|self-closing|language|lang|read-more|more-link|seo|open|social)\b)[^\s,<>]+(?:(?:\s*,\s*|\s+and\s+|,\s*and\s+)"
    r"[^\s,<>]+){0,4})"
)
# A tag named as renamed: "the tag rust", "the rust tag", "tag “rust”"; not "the tag line"
# (a tagline), not "the tag" ("change the tag to rust" sets the tags), nor an HTML element's
# ("change the h1 tag to h2", "the ul tag", "the og:image tag").
_HTML_ELEMENTS = (  # those no tag is likely to be named ("the video tag" may well be a tag)
    "a|b|i|p|ul|ol|li|div|span|img|br|hr|em|strong|meta|title|script|style|iframe|td|tr|th|"
    "tbody|thead|h[1-6]"
)
_NOT_OLD = rf"(?!(?:<\S*|\S*:\S*|(?:{_HTML_ELEMENTS}|the|a|an|its|my|this|that|these|those)\s))"
_OLD_TAG = (
    rf"(?:the\s+)?(?:tag{_NOT_A_PART}\s+(?P<old>.+?)|{_NOT_OLD}"
    r"(?P<old2>[^\s\"“”]+|[\"“][^\"”]+[\"”])\s+tag)"
)
_EN: list[tuple[Action, str]] = [
    # "rename the tag rust to rustlang", "change the rust tag to rustlang", "replace the tag
    # rust with rustlang" (before "set": "change the tags to …" is the whole list)
    (
        "rename",
        rf"{_POLITE}(?:rename|change|replace|switch)\s+{_OLD_TAG}\s+(?:to|with|into|as)\s+"
        r"(?P<tags>.+?)(?:\s+(?:on|in|for|of)\s+(?:it|this|that|the|my|its|post|article|"
        r"[\w./-]+\.(?:md|markdown))\b.*)?$",
    ),
    # "add the tags rust, cli (to the post)", "add a tag: release"
    (
        "add",
        rf"{_POLITE}(?:add|put|attach|append)\s+"
        r"(?:(?:the|a|an|new|some|more|these|two|three)\s+){0,2}"  # ("a new tag")
        rf"(?P<word>tags?)\b{_NOT_A_PART}"
        rf"(?:\s*[:：]|\s+(?:called|named|of))?\s*(?P<tags>.*?){_TARGET}$",
    ),
    # "add rust as a tag", "add rust to the tags (of the post)"
    (
        "add",
        rf"{_POLITE}(?:add|put)\s+(?P<tags>.+?)\s+"
        r"(?:as\s+(?:a\s+|an\s+|the\s+)?(?P<word>tags?)|to\s+(?:the\s+|its\s+)?(?P<word2>tags))"
        rf"{_TARGET}$",
    ),
    # "tag it with rust", "tag the rust post as release"
    ("add", rf"{_POLITE}tag\s+(?:.+?\s+)?(?:with|as)\s+(?P<tags>.+?)$"),
    # "remove the tag draft (from the post)", "delete tags a, b"
    (
        "remove",
        rf"{_POLITE}(?:remove|delete|drop|strip|take\s+off|take\s+out|get\s+rid\s+of)\s+"
        rf"(?:the\s+|a\s+|an\s+|these\s+)?(?P<word>tags?)\b{_NOT_A_PART}(?:\s*[:：])?\s*"
        rf"(?P<tags>.*?){_TARGET}$",
    ),
    # "add the rust tag (to the post)", "add the rust and cli tags", as removed below
    (
        "add",
        rf"{_POLITE}(?:add|put|attach)\s+(?:the\s+|a\s+|an\s+)?"
        rf"{_NOT_OLD}{_NAMED_TAGS}\s+(?P<word>tags?)\b{_NOT_A_PART}{_TARGET}"
        r"(?:[\s,]*please)?[\s.!]*$",
    ),
    # "remove the go tag (from the post)", "delete the rust and go tags": not an element's
    # ("remove the h1 tag", "the script tags") nor a kind of them ("all the HTML tags"); it
    # was no tag change, and the model was asked to edit the body for it
    (
        "remove",
        rf"{_POLITE}(?:remove|delete|drop|strip|get\s+rid\s+of)\s+(?:the\s+|its\s+)?"
        rf"{_NOT_OLD}{_NAMED_TAGS}\s+(?P<word>tags?)\b{_NOT_A_PART}{_TARGET}"
        r"(?:[\s,]*please)?[\s.!]*$",
    ),
    # "remove draft from the tags", "take draft off the tags"
    (
        "remove",
        rf"{_POLITE}(?:remove|delete|drop|take)\s+(?P<tags>.+?)\s+"
        r"(?:from|off|out\s+of)\s+(?:the\s+|its\s+)?(?:post's\s+)?(?P<word>tags?)"
        rf"{_TARGET}$",
    ),
    ("remove", rf"{_POLITE}untag\s+(?P<tags>.+?){_TARGET}$"),
    # "set the tags to rust, cli", "change its tags to ...", "replace the tags with ..."
    (
        "set",
        rf"{_POLITE}(?:set|change|replace|make)\s+(?:the\s+|its\s+|the\s+post's\s+)?"
        r"(?P<word>tags?)(?:\s+(?:of|on|for|in)\s+.+?)?\s+(?:to|as|with|into)\s*[:：]?\s*"
        r"(?P<tags>.+?)$",
    ),
]
_ADD_ZH = r"(?:添加|加上|增加|加入|打上|添上)"
_REMOVE_ZH = r"(?:删除|删掉|去掉|移除|去除|拿掉)"
# "标签云", "标签页": parts of a page, not the post's tags.
_TAG_ZH = r"标签(?!云|页|栏|列表|部分|那)"
_ZH: list[tuple[Action, str]] = [
    # "把标签 rust 改成 rustlang", "将 rust 标签改名为 rustlang" (before "set": "标签改成 …")
    (
        "rename",
        r"(?:把|将)?(?:这篇文章的|它的)?(?:标签\s*(?!(?:都|也|全部|全都|统一|一律|一并|一起|"
        r"直接|再|又|还|就|先)\s*(?:改|换|替|重))[“\"「]?(?P<old>[^”\"」\s，,]+?)[”\"」]?\s*|"
        r"(?<![A-Za-z0-9_])(?P<old2>[A-Za-z0-9_.+#-]+|[“\"「][^”\"」]+[”\"」])\s*标签\s*"
        r"(?:都|全都|全部|统一|一律)?\s*)"
        r"(?:改成|改为|改名为|重命名为|换成|替换为|替换成)[：:\s]*(?P<tags>[^，,。]+?)\s*[。.!！]*$",
    ),
    ("add", rf"(?:{_ADD_ZH}|加)(?:一个|一些|几个|两个|个)?{_TAG_ZH}[：:\s]*(?P<tags>.*?)$"),
    ("add", rf"{_ADD_ZH}\s*(?P<tags>[^，,。]+?)\s*(?:这个|这些|两个|几个)?{_TAG_ZH}"),
    ("remove", rf"(?:{_REMOVE_ZH}|删)(?:一个|这个|这些)?{_TAG_ZH}[：:\s]*(?P<tags>.*?)$"),
    ("remove", rf"{_REMOVE_ZH}\s*(?P<tags>[^，,。]+?)\s*(?:这个|这些)?{_TAG_ZH}"),
    (
        "set",
        r"标签(?:都|全都|全部|统一|一律)?(?:改成|改为|设为|设置为|换成|设成)[：:\s]*(?P<tags>.+?)$",
    ),
]
_PATTERNS: list[tuple[Action, re.Pattern[str]]] = [
    (action, re.compile(pattern, re.I)) for action, pattern in _EN + _ZH
]
# "a tags line", "the tags field": the frontmatter's tags ("the tag line" is a tagline).
_FIELD_WORDS = re.compile(r"\btags\s+(?:line|field|list)\b", re.I)
# The tags after the post they are for: "add tags to the go post: go, goroutines".
_AFTER_COLON = re.compile(r"[:：]\s*(?P<tags>[^:：]+)$")
# A tag command after the post it is for: "edit the rust post: add the tag release".
_LEAD = re.compile(r"^[^:：]{0,200}[:：]\s*")
_QUOTED = re.compile(r"[\"“”「『《`‘']([^\"“”」』》`’']{1,80})[\"“”」』》`’']")
_SEPARATORS = re.compile(r"\s*(?:[,，、;；/]|\band\b|和|与|以及|及)\s*", re.I)
_TRAILING = re.compile(r"(?:[\s。.!！?？吧呢]|\b(?:please|pls|thanks|thank\s+you)\b)+$", re.I)
# Words around a tag that are not part of it ("the tag called X", "X please").
_AROUND = re.compile(
    r"^(?:the|a|an|tag|tags|called|named)\s+|\s+(?:please|tags?|too|as\s+well)$", re.I
)


# Words that make a part of the list prose rather than a tag.
_PROSE = re.compile(r"the|a|an|this|that|these|my|its|our|your|to|into|from", re.I)


_PROSE_ZH = re.compile(r"然后|并且|同时|顺便|再把|再帮|接着|之后|都有|的$")  # ("所有文章都有的")


@dataclass(frozen=True, slots=True)
class TagChange:
    """What an instruction asks of the post's tags: ``tags`` added, removed, or set as the
    whole list (empty: the instruction named none; the skill asks); for ``rename``, the old
    tag and the new one."""

    action: Action
    tags: tuple[str, ...]


def split_tags(text: str, *, plural: bool = True) -> tuple[str, ...] | None:
    """The tags ``text`` names: its quoted words, else its parts between commas (``、``,
    "and", ``和``), else, for ``plural`` ("tags"), its words; None when one of them does not
    look like a tag (too long, too many words) or there are too many."""
    text = _TRAILING.sub("", text.strip())
    quoted = _QUOTED.findall(text)
    if quoted:
        parts = quoted
    else:
        parts = _SEPARATORS.split(text)
        if len(parts) == 1 and plural and " " in text.strip():
            parts = text.split()
            if any(_PROSE.fullmatch(word) for word in parts):
                return None  # "tags to the code blocks": words of a sentence, not tags
    tags: list[str] = []
    for index, part in enumerate(parts):
        words = (part if index else _AROUND.sub("", part.strip())).split()
        if not quoted and len(words) > 1 and any(_PROSE.fullmatch(word) for word in words):
            return None  # "rust and a conclusion", "rust and fix the typos": more than tags
        if not quoted and _PROSE_ZH.search(part):
            return None  # "rust，然后总结一下": the request goes on
        tag = part
        while (bare := _AROUND.sub("", tag.strip())) != tag:
            tag = bare
        tag = tag.strip().strip("\"'“”‘’「」『』《》`").lstrip("#").strip()
        if not tag:
            continue
        if len(tag) > MAX_TAG_CHARS or len(tag.split()) > MAX_TAG_WORDS:
            return None
        if tag.casefold() not in {t.casefold() for t in tags}:
            tags.append(tag)
    return tuple(tags) if len(tags) <= MAX_TAGS else None


def tag_change(instruction: str) -> TagChange | None:
    """The change to the post's tags ``instruction`` asks for, or None when it asks for
    something else (or for tags that do not look like tags: then the model is asked)."""
    text = _FIELD_WORDS.sub("tags", " ".join(instruction.split()))  # "a tags line": the field
    for candidate in (text, _LEAD.sub("", text, count=1)):
        for action, pattern in _PATTERNS:
            found = pattern.search(candidate) if _is_zh(pattern) else pattern.match(candidate)
            if found is None:
                continue
            groups = found.groupdict()
            if action == "rename":
                old_tag = split_tags(groups.get("old") or groups.get("old2") or "", plural=False)
                new_tag = split_tags(groups["tags"] or "", plural=False)
                if (
                    not old_tag
                    or not new_tag
                    or len(old_tag) + len(new_tag) != 2
                    or _PLACE_WORD.search(new_tag[0])  # "rustlang in rust-notes": a post too
                    or _MARKUP.search(old_tag[0])  # "`<b>`", "og:image": markup's
                ):
                    continue  # not one tag for another: another pattern's, or none
                return TagChange("rename", old_tag + new_tag)
            word = groups.get("word") or groups.get("word2") or "tags"
            said = groups["tags"] or ""
            if not said.strip() and (after := _AFTER_COLON.search(candidate)) is not None:
                said = after.group("tags")  # "add tags to the go post: go, goroutines"
            tags = split_tags(said, plural=word.casefold() != "tag")
            if tags is None:
                return None
            return TagChange(action, tags)
    return None


_PLACE_WORD = re.compile(r"\s(?:in|on|for|to|from|of|at)\s", re.I)
_MARKUP = re.compile(r"[<>:]")


def _is_zh(pattern: re.Pattern[str]) -> bool:
    return "标签" in pattern.pattern


_POSTS_EN = r"(?:posts?|articles?|notes?|pages?|entries)"
_EVERY_EN = re.compile(
    r"\s+(?:(?:in|on|from|to|for|across|throughout|of)\s+(?:"
    rf"(?:all|every|each)\s+(?:of\s+)?(?:my\s+|the\s+|our\s+|your\s+)?{_POSTS_EN}"
    r"(?:\s+(?:on|in)\s+(?:the|my|this)\s+blog)?|"
    r"(?:the\s+)?(?:whole|entire)\s+blog)|"
    r"everywhere|across\s+the\s+blog|throughout\s+the\s+blog|blog[\s-]wide)"
    r"\s*[.!]*$",
    re.I,
)
# "把所有文章的标签…", "从所有文章中删除标签…", "删除所有文章的标签…", "全站…": at the
# start, or after the verb, and before the tags; a noun after 所有, so that a tag such as 所有权
# is no scope ("添加标签 所有权、借用" is one post's), and nothing naming a post ("给 docker 那篇
# 文章加上标签 devops，跟所有文章一样" is one post's).
_EVERY_ZH = re.compile(
    r"^(?:请)?(?P<verb>删除|删掉|去掉|移除|去除|添加|加上)?(?:在|从|给|为|对|把|将)?\s*"
    r"(?:(?:所有|全部|每篇|每一篇|整个博客(?:的|里的|中的)?)(?:的)?(?:文章|博文|帖子|笔记)"
    r"(?:里|中|上)?(?:的)?|全站(?:的)?(?:文章)?(?:的)?)\s*"
    r"(?=(?:都|全都|统一|一律)?\s*(?:加|添|删|去|移|打|把|将|标签|的标签)|"
    # or a tag renamed right after it: "把所有文章的 rust 标签改成 rustlang"
    r"\s*[^\s，。、,]{1,30}\s*标签\s*(?:都|全都|统一|一律|全部)?\s*(?:改成|改为|换成|改名为|重命名为|"
    r"更名为))"
)
_ONE_POST_ZH = re.compile(r"这篇|这个|那篇|那个|(?<!其)它|《|\.md\b")
# Words after the tags that are not a place: "add rust as a tag to all posts", "remove the go
# tag from every post" (it was not every post's change, and removed go from one post).
_AFTER_TAGS = re.compile(
    r"(?:\s+(?:as\s+(?:a\s+|an\s+|the\s+)?tags?|too|as\s+well|"
    r"(?:to|from|of|in|off)\s+(?:the\s+|its\s+|their\s+)?tags|tags?))+\s*$",
    re.I,
)


def every_post(instruction: str) -> str | None:
    """``instruction`` without the words that make it one for every post of the blog ("…
    in every post", "… from all my posts", "… everywhere", "所有文章的…", "全站…"), or None
    when it has none. (Whether it is a tag change for every post: ``tag_change_everywhere``.)"""
    text = " ".join(instruction.split())
    cut = _EVERY_EN.sub("", text)
    if cut != text:
        return cut
    found = _EVERY_ZH.search(text)
    if found is not None and "标签" in text[found.end() :] and not _ONE_POST_ZH.search(text):
        return ((found.group("verb") or "") + text[found.end() :]).strip()
    return None


def tag_change_everywhere(instruction: str) -> TagChange | None:
    """The tag change ``instruction`` asks of every post of the blog, or None when it asks
    something else or names a post of its own: the tags must end an English instruction
    before its scope words ("remove the tag draft from all posts"; not "add the tag archive to
    the index page of all posts"), and a Chinese one must put them before its tags and name
    no post ("把所有文章的标签 rust 改成 rustlang"; not "给这篇文章加上标签 rust，跟所有文章
    一样")."""
    rest = every_post(instruction)
    if rest is None:
        return None
    change = tag_change(rest)
    if change is None or not change.tags:
        return change
    if not HAN.search(rest):
        last = change.tags[-1].casefold()
        said = _AFTER_TAGS.sub("", rest).rstrip(" .!\"'“”‘’「」『』`").casefold()
        if not said.endswith(last):
            return None  # the tags are for a place the instruction names
    return change


@dataclass(frozen=True, slots=True)
class Retagged:
    """The post with its tags changed (``text``; the same text when nothing changed), the
    tags before and after, those asked for that were already there (or, to remove, were not),
    and the field they are in (``"tags"``, ``"tag"``, ``"taxonomies.tags"``)."""

    text: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    ignored: tuple[str, ...]
    field: str


def _folded(tags: list[str]) -> set[str]:
    return {t.casefold() for t in tags}


def _as_tags(value: Any) -> list[str]:
    if isinstance(value, str):
        parts = value.split(",") if "," in value else value.split()
    elif isinstance(value, list | tuple):
        parts = [str(v) for v in value if isinstance(v, str | int | float)]
    else:
        parts = []
    return [p.strip() for p in parts if p.strip()]


def _as_written(value: Any, after: list[str], *, jekyll: bool = False) -> Any:
    """The tags ``after`` in the shape the field ``value`` had: a list; a string of
    comma-separated tags; tags separated by spaces (``tags: rust go``, and on a Jekyll blog a
    string of one tag: Jekyll splits it at spaces, and "rust, go, python" was read as "rust,"
    and "go,"), or a list when a tag has a space in it."""
    if not isinstance(value, str):
        return after
    if "," in value or (len(value.split()) < 2 and not jekyll):
        return ", ".join(after)
    return after if any(len(tag.split()) > 1 for tag in after) else " ".join(after)


def retagged(
    post: Frontmatter,
    change: TagChange,
    *,
    zola: bool,
    lists: ListStyle | None = None,
    jekyll: bool = False,
) -> Retagged:
    """``post`` with ``change`` made to its tags (see the module docstring); ``zola``: the
    blog is a Zola site (a post with no tags gets them in ``[taxonomies]``); ``lists``: how
    a new YAML tags list is written (None: as the post's other lists are)."""
    fields = post.fields()
    taxonomies = fields.get("taxonomies")
    if "tags" in fields or "tag" in fields:
        key = "tags" if "tags" in fields else "tag"
        value = fields[key]
        nested = False
    elif isinstance(taxonomies, Mapping) or (zola and post.format == "toml"):
        key, nested = "tags", True
        value = taxonomies.get("tags") if isinstance(taxonomies, Mapping) else None
    else:
        key, value, nested = "tags", None, False
    before = _as_tags(value)
    folded = {t.casefold() for t in before}
    asked = {t.casefold() for t in change.tags}
    if change.action == "add":
        ignored = [t for t in change.tags if t.casefold() in folded]
        after = before + [t for t in change.tags if t.casefold() not in folded]
    elif change.action == "remove":
        ignored = [t for t in change.tags if t.casefold() not in folded]
        after = [t for t in before if t.casefold() not in asked]
    elif change.action == "rename":
        old, new = change.tags
        ignored = [] if old.casefold() in folded else [old]
        renamed = [new if t.casefold() == old.casefold() else t for t in before]
        after = [t for i, t in enumerate(renamed) if t.casefold() not in _folded(renamed[:i])]
    else:
        ignored = []
        after = list(change.tags)
    field = f"taxonomies.{key}" if nested else key
    if after == before:
        return Retagged(post.text, tuple(before), tuple(after), tuple(ignored), field)
    new_value: Any = _as_written(value, after, jekyll=jekyll)
    if nested:
        table = dict(taxonomies) if isinstance(taxonomies, Mapping) else {}
        table[key] = new_value
        changed = post.with_fields({"taxonomies": table}, lists=lists)
    else:
        changed = post.with_fields({key: new_value}, lists=lists)
    return Retagged(changed.text, tuple(before), tuple(after), tuple(ignored), field)
