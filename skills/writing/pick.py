"""Which post? When a request gives no path and the session has no focus, find the one post
the request names, else ask.

A request names a post without its path when it holds

- its title, written out (``summarize Async Rust in practice``), or its file name
  (``translate rust-async``; a Hugo bundle's folder name);
- words that only that post's title or file name has, after "the post about", "my … article",
  "关于…的文章" (``the post about async rust``, ``edit the async rust post: …``).

Only one post may fit: two posts that fit are asked about, as is a description no title
carries (the title's words are matched whole, a plural ``s`` aside). An edit is stricter
(``named_post``'s ``strict``): its instruction names other things ("add a paragraph about
<a title>"): a title or file name counts right after the edit's verb, or at the request's
end after "in", "of", "from", "to" or "for" ("fix the typos in my first post"). The question
lists the
likeliest posts: those named in the conversation, then those matching the request, then the
newest. The answer may be a number, a path, a file name or a title.
"""

from __future__ import annotations

import functools
import re
from pathlib import PurePosixPath
from typing import Any

from skillrt import Replies, SkillContext, SkillResult
from skillrt.blog.posts import PostMeta
from skillrt.exceptions import PathNotAllowed, SkillrtError

from .asking import is_no, new_request

__all__ = [
    "REPLIES",
    "ask_for_post",
    "described_posts",
    "likely_posts",
    "listed_post",
    "listed_posts",
    "match_choice",
    "named_post",
    "newest_post",
    "no_post_chosen",
    "open_post",
    "post_named",
    "request_lead",
]

MAX_CHOICES = 5
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
# What follows "the post about" (or comes between "the" and "post") up to where the request
# goes on: "… to Chinese", "…: add a section", "…, please". "This post about X" is the open one.
# A stop or a colon inside a word does not end it: "the post about Rust 1.78.0", "node:test".
_ABOUT_EN = re.compile(
    r"(?<!this )(?<!current )(?<!open )(?<!opened )"
    r"\b(?:post|article|entry|note|piece|essay|draft)s?\s+"
    r"(?:about|on|regarding|covering|titled|called|named|entitled)\s+(?P<words>.+?)\s*"
    r"(?=$|[,;!?()\[\]]|[:.](?!\w)|\s(?:to|into|in|for|so|and|please|then|with)\s)",
    re.I,
)
# ("the sqlite one": "which posts link to the sqlite one?" was told no post is "the sqlite
# one")
_BEFORE_EN = re.compile(
    r"\b(?:the|my|that|this|our)\s+"
    r"(?P<words>(?:(?!(?:the|my|that|this|our)\s)[^\W_][\w'’.+#-]*\s+){1,6}?)"
    r"(?:blog\s+)?(?:post|article|entry|note|piece|essay|draft|one)\b",
    re.I,
)
_ABOUT_ZH = re.compile(
    r"(?:关于|有关|讲|写)(?P<words>[^，。,.!！?？:：]{1,40}?)(?:的|那|这)\s*(?:那|这)?\s*(?:篇|个)?\s*"
    r"(?:文章|帖子|博文|博客|笔记)"
)
# "把 docker 那篇文章…", "rust 生命周期那篇", "翻译机器学习那篇文章": the words just before
# "那篇"/"这篇" name the post. Latin words are matched as words (as "the docker post"); a run
# of Chinese characters as a phrase, from its end (``_fits_phrase``: the verb before it is
# not part of the name).
_BEFORE_ZH = re.compile(
    r"(?:(?<![\w.+#-])(?P<latin>[^\W_\u3400-\u9fff][\w.+#-]*(?: [^\W_\u3400-\u9fff][\w.+#-]*){0,3})"
    r"|(?P<han>[\u3400-\u9fff]{2,16}?))\s*(?:那|这)\s*(?:篇|个\s*(?=文章|帖子|博文|博客|笔记))"
)
# Where an edit's request goes on from the post to the instruction, and words that name a
# post as something else than the one to edit (``request_lead``).
_LEAD_END = re.compile(r"[:：;；,，(（]|\s(?:to|into|with|so|from|than|as|then)\s", re.I)
_REFERS = re.compile(
    r"\b(?:link\w*|mention\w*|cit(?:e|es|ing)|quot\w*|referenc\w*|compar\w*|similar\w*)\b"
    r"|\b(?:more|just|look|looks|read|reads|sound|sounds|feel|feels)\s+like\b|\bstyle\s+of\b"
    r"|链接|引用|提到|参考|像|对比|比较",
    re.I,
)
# An edit's request that starts with its verb, before the post it names ("edit <title>: …").
_EDIT_VERB = re.compile(
    r"^(?:(?:please|pls|can you|could you|would you)\s+)?(?:"
    r"edit|rewrite|re-write|revise|update|shorten|lengthen|expand|polish|proofread|improve|"
    r"fix(?:\s+up)?|tidy(?:\s+up)?|clean\s+up|tighten|simplify|condense|rework|modify|trim|redo"
    r")\s+"
    r"|^(?:请|帮我)?\s*(?:修改|编辑|改写|重写|精简|润色|扩写|缩短|改进|更新)(?:一下)?\s*",
    re.I,
)
# Words a description holds that say nothing of which post: not matched against titles.
_FILLER = frozenset({
    "a", "an", "the", "my", "our", "your", "this", "that", "blog", "new", "old", "recent",
    "latest", "last", "first", "one", "long", "short", "of", "and", "in", "on", "for", "to",
    "with", "about",
})  # fmt: skip
_CJK = re.compile("[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_DATED = re.compile(r"^\d{4}-\d{2}-\d{2}[-_]")
_NUMBER = re.compile(r"^\s*(?:#|第|no\.?\s*)?\s*(\d{1,2})\s*(?:个|篇|号)?\s*[.。)）]?\s*$", re.I)

# Joined to the replies of every skill that asks (``REPLIES = Replies({...}) | pick.REPLIES``).
REPLIES = Replies(
    {
        "which_post": (
            "要{action}哪篇文章？\n\n{lines}\n\n请回复编号或文章名。",
            "Which post should I {action}?\n\n{lines}\n\nAnswer with a number or a name.",
        ),
        # An action that names the post itself ("查看哪篇文章的标签"): "要查看标签哪篇文章？" read
        # wrong.
        "which_post_named": (
            "要{action}？\n\n{lines}\n\n请回复编号或文章名。",
            "Which post should I {action}?\n\n{lines}\n\nAnswer with a number or a name.",
        ),
        # (before "which post?" when "it" means a post deleted in the session)
        "post_gone": (
            "`{path}` 已经不在博客里了（删除或移走了）。\n\n",
            "`{path}` is no longer on the blog (deleted or moved).\n\n",
        ),
        "no_post_chosen": (
            "没有找到你说的那篇文章，所以什么都没做。可以给出路径（如 posts/x.md）再试一次。",
            "I could not tell which post you meant, so nothing was done. Give its path "
            "(like posts/x.md) and try again.",
        ),
    }
)


def likely_posts(ctx: SkillContext, k: int = MAX_CHOICES) -> list[tuple[str, str]]:
    """``(path, title)`` of the posts the request most likely means, best first (the index
    refreshed first: blocking I/O, run it as a sync step)."""
    posts = ctx.memory.posts
    posts.refresh()
    found: dict[str, str] = {}

    def add(path: str) -> None:
        if len(found) < k and path not in found:
            try:
                post = posts.get(path)
            except PathNotAllowed:  # "../x.md" in a turn: not a post of this blog
                return
            if post is not None:
                found[path] = post.title

    request = " ".join(ctx.input.text.casefold().split())
    for path in described_posts(ctx, request):  # "the rust post": the rust posts first
        add(path)
    for path in ctx.conversation.mentioned:
        add(path)
    for hit in posts.search(ctx.input.text, k):
        add(hit.path)
    newest = sorted(posts.all_posts(), key=lambda p: (p.date or "", p.path), reverse=True)
    for meta in newest:
        add(meta.path)
    return list(found.items())


def match_choice(ctx: SkillContext, answer: str, choices: list[tuple[str, str]]) -> str | None:
    """The post an answer picks: a number of the list, a path, a file name or a title."""
    text = answer.strip().strip("`'\"“”《》「」")
    if not text or is_no(text):
        return None
    number = _NUMBER.match(text)
    if number is not None:
        index = int(number.group(1)) - 1
        return choices[index][0] if 0 <= index < len(choices) else None
    folded = text.casefold()
    for path, title in choices:
        stem = PurePosixPath(path).stem.casefold()
        if folded in (path.casefold(), stem, title.casefold()):
            return path
    for path, title in choices:
        if folded in title.casefold() or folded in path.casefold():
            return path
    resolved = ctx.memory.resolve_link(text)
    if resolved is not None:
        return resolved
    # A search hit, only when it is named: "make it shorter", typed as a new request where a
    # post was asked for, picked a post that was not even listed.
    words = [w for w in _words(text) if w not in _FILLER and w not in _ANSWER_FILLER]
    if _CJK.search(text):
        return _fits_phrase(_ZH_FILLER.sub("", text).casefold(), ctx.memory.posts.all_posts())
    for hit in ctx.memory.posts.search(text, MAX_CHOICES) if words else ():
        if set(words) <= set(_words(f"{hit.title} {_file_name(hit.path)}")):
            return hit.path
    return None


_ANSWER_FILLER = frozenset({"post", "article", "entry", "note", "piece", "essay", "draft", "it"})
_ZH_FILLER = re.compile(r"那篇|这篇|那个|这个|文章|博文|的|吧|啊|呀|[\s，。,.!！?？]")

# "summarize the second one" after a listing: the post of that number in the last reply's
# numbered list ("1. [Title](posts/x.md) — …").
_ORDINAL_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
                  "ninth", "tenth")  # fmt: skip
_ORDINAL_EN = re.compile(
    rf"\b(?:({'|'.join(_ORDINAL_WORDS)}|last)|(\d{{1,2}})(?:st|nd|rd|th))\s+"
    r"(?:one|post|article|entry|item)\b|(?:\bnumber\s+|#)(\d{1,2})\b",
    re.I,
)
_ORDINAL_ZH = re.compile(
    r"第\s*([一二三四五六七八九十]|\d{1,2})\s*(?:篇|个|条|项)|(最后一)(?:篇|个|条)"
)
_LISTED_POST = re.compile(r"^[ \t]*(\d{1,3})\.[ \t]+\[.*?\]\(<?([^)>\n]+?)>?\)", re.M)


def _ordinal(request: str) -> int | None:
    """The place a request names ("the second one", "#3", "第二篇"; -1 for the last)."""
    found = _ORDINAL_EN.search(request)
    if found is not None:
        word, digits, number = found.groups()
        if word:
            return -1 if word.casefold() == "last" else _ORDINAL_WORDS.index(word.casefold()) + 1
        return int(digits or number)
    found = _ORDINAL_ZH.search(request)
    if found is None:
        return None
    if found.group(2):
        return -1
    value = found.group(1)
    return int(value) if value.isdigit() else "一二三四五六七八九十".index(value) + 1


def listed_post(ctx: SkillContext) -> str | None:
    """The post a request picks by its number in the last reply's list of posts ("summarize
    the second one" after "list posts about python"), or None."""
    place = _ordinal(ctx.input.text)
    listed = _numbered(ctx) if place is not None else {}
    if not listed or place is None:
        return None
    return listed.get(max(listed) if place == -1 else place)


def listed_posts(ctx: SkillContext) -> list[str]:
    """The paths of the last reply's numbered list of posts, in its order (empty: the last
    reply listed none)."""
    listed = _numbered(ctx)
    return [listed[n] for n in sorted(listed)]


def _numbered(ctx: SkillContext) -> dict[int, str]:
    last = ctx.conversation.last_answer
    return {int(m.group(1)): m.group(2) for m in _LISTED_POST.finditer(last)} if last else {}


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _words(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.casefold())]


def _file_name(path: str) -> str:
    """The name a post's file goes by: its stem, or a bundle's folder (``x/index.md``), without
    the date Jekyll and Zola put before it (``2024-01-15-liquid-tips``: ``liquid-tips``)."""
    parts = path.rsplit("/", 2)  # (string operations: a PurePosixPath costs 10,000 posts 50 ms)
    stem = parts[-1].rsplit(".", 1)[0]
    name = parts[-2] if stem in ("index", "_index") and len(parts) > 1 else stem
    return _DATED.sub("", name) or name


_PUNCTUATION = re.compile(r"[^\w\s]+|_")


@functools.lru_cache(maxsize=1 << 16)
def _loose(text: str) -> str:
    """``text`` casefolded, its punctuation as spaces (and its spaces single). Cached: every
    title is made loose for each request (17 ms for 10,000 titles uncached)."""
    return " ".join(_PUNCTUATION.sub(" ", text.casefold()).split())


def _written_out(request: str, name: str, *, at_start: bool = False) -> bool:
    """Whether ``name`` (a title or a file name) stands in ``request`` (casefolded, its
    whitespace single spaces) whole, as words (``at_start``: at its start), and not as a thing
    of its own kind ("add a hello world example": not the post "Hello World")."""
    folded = " ".join(name.casefold().split())
    if folded not in request:  # (most titles: no pattern made for them)
        return False
    if _CJK.search(folded):  # no spaces between words: the title, four characters or more
        return len(folded) >= 4 and (not at_start or request.startswith(folded))
    if len(folded) < 6 or (" " not in folded and not re.search(r"[-_.\d]", folded)):
        return False  # "Go", "Notes", "intro": words a request uses for other things
    if at_start:
        return request.startswith(folded) and not re.match(r"[\w-]", request[len(folded) :])
    pattern = rf"(?<![\w-])(?<!\ban )(?<!\ba ){re.escape(folded)}(?![\w-])"
    return re.search(pattern, request) is not None


# What comes before a post named at the end of an edit's request: "… in", "… of the post".
_TARGET_END = re.compile(r"\s(?:in|of|from|to|for)\s+(?:(?:the\s+)?(?:post|article)\s+)?$")


def _ends_with(request: str, name: str) -> bool:
    """Whether the edit's ``request`` ends with ``name`` (a title, a file name or path, as
    ``_written_out`` takes them) after "in", "of", "from", "to" or "for" ("on" is a topic
    there: "add a paragraph on <a title>"), and nothing
    before makes it a post to link, cite or compare with ("… in my first post")."""
    text = request.rstrip(" .!?。！？")
    folded = " ".join(name.casefold().split()).rstrip(" .!?。！？")  # ("What is Rust?")
    if not text.endswith(folded) or not _written_out(folded, folded):
        return False
    before = text[: len(text) - len(folded)]
    return bool(_TARGET_END.search(before)) and not _REFERS.search(before)


# A part of a post named just before its title: "make the first paragraph of my first post
# friendlier" (the edit asked which post: the title was neither right after the verb nor at
# the end).
_PART_OF = re.compile(
    r"\b(?:paragraph|section|intro|introduction|conclusion|title|ending|end|heading|"
    r"opening|outro|line|sentence)\s+(?:of|in)\s+"
    r"(?:(?:the\s+)?(?:post|article)\s+)?$"
)


def _after_part(request: str, name: str) -> bool:
    """Whether the edit's ``request`` names ``name`` (a title or file name, as
    ``_written_out`` takes them) right after a part of a post and "of" or "in"."""
    folded = " ".join(name.casefold().split()).rstrip(" .!?。！？")
    if not _written_out(folded, folded):
        return False
    pattern = rf"(?<![\w-]){re.escape(folded)}(?![\w-])"
    return any(
        _PART_OF.search(request[: found.start()]) and not _REFERS.search(request[: found.start()])
        for found in re.finditer(pattern, request)
    )


def _described(request: str, *, strict: bool = False) -> tuple[list[str], str] | None:
    """The words a request describes its post by (``the post about async rust``:
    ``["async", "rust"]``), with the Chinese phrase as written; None without a description.
    ``strict`` (an edit): none named after a word that makes it something to link, cite or
    compare with ("add a link to the rust post")."""
    patterns = (_ABOUT_EN, _BEFORE_EN, _ABOUT_ZH, _BEFORE_ZH)
    matches = [(m, p) for p in patterns for m in p.finditer(request)]
    # The first description in the request ("… to the rust post about cancellation": the rust
    # post, not one about cancellation). An edit's post to link comes before the post to edit
    # right after "in": "add a link to the docker post in the git workflow post" (it asked
    # which post, for the link's).
    referred = -1  # where the description of a post to link ends
    for found, pattern in sorted(matches, key=lambda pair: pair[0].start()):
        if found.start() < referred:
            continue  # (inside the one before)
        if strict and referred >= 0:
            if not _EDITED_AFTER.fullmatch(request[referred : found.start()]):
                return None
        elif strict and _REFERS.search(request[: found.start()]):
            referred = found.end()
            continue
        if pattern is _ABOUT_ZH or (pattern is _BEFORE_ZH and found.group("han")):
            phrase = found.group("words" if pattern is _ABOUT_ZH else "han")
            phrase = phrase.strip().strip("《》「」“”\"'")
            if phrase:
                return [], phrase.casefold()
            continue
        said = found.group("latin" if pattern is _BEFORE_ZH else "words")
        words = [w for w in _words(said) if w not in _FILLER]
        if words:
            return words, ""
    return None


# (Not "to": "comparing the rust post to the go post" compares them, and edits the open one.)
_EDITED_AFTER = re.compile(r"\s+(?:in|into|inside)\s+|\s*(?:在)\s*")


def named_post(
    ctx: SkillContext, *, strict: bool = False, text: str | None = None, lead: bool = True
) -> str | None:
    """The one post the request names without a path (see the module docstring), or None.
    With a post open (or in focus), only the request's lead can name another
    (``request_lead``); with text selected, none can.

    ``strict`` (an edit, whose instruction names other things: "add a paragraph about <a
    title>"): a title or file name counts only right after the edit's verb ("edit <title>: …",
    "shorten rust-async") or at the request's end (``_ends_with``), and a description only if
    nothing before it makes the post something to link, cite or compare with; the whole
    request is read, open post or not. ``text``: what is read in place of the request (a
    skill that took its own words out of it). ``lead=False``: ``text`` is all about the post,
    read whole with a post open ("the linking post": its "link" cut the lead to nothing, and
    the question was answered for the open post).

    Looked up in the index as it stands (built first if it never was): a refresh reads every
    post, too much for each request. A post added outside skillrt since is found when asked.
    Blocking I/O: run it as a sync step (``post_named``)."""
    if ctx.input.selected_text:
        return None
    listed = listed_post(ctx)
    if listed is not None:
        return listed
    request = " ".join((ctx.input.text if text is None else text).casefold().split())
    if ctx.input.current_file and not strict and lead:
        request = request_lead(request)
    if not request:
        return None
    posts = ctx.memory.posts
    if not len(posts):
        posts.refresh()
    every = posts.all_posts()
    if strict:  # a name right after the edit's verb only
        verb = _EDIT_VERB.match(request)
        names_in = request[verb.end() :] if verb is not None else ""
    else:
        names_in = request
    loose = _loose(names_in)
    written = [
        meta
        for meta in every
        if (
            names_in
            and (
                _written_out(names_in, meta.title, at_start=strict)
                or _written_out(names_in, _file_name(meta.path), at_start=strict)
                # its punctuation aside: "hello jekyll" names "Hello, Jekyll"
                or (
                    (name := _loose(meta.title)) in loose
                    and _written_out(loose, name, at_start=strict)
                )
            )
        )
        # an edit's post named at its end: "fix the typo 'recieve' in my first post"
        or (
            strict
            and any(
                _ends_with(request, name) or _after_part(request, name)
                for name in (meta.title, _file_name(meta.path))
            )
        )
    ]
    if written:  # "Rust" and "Async Rust in practice" both in it: the longer title
        longest = max(len(meta.title) for meta in written)
        best = [meta.path for meta in written if len(meta.title) == longest]
        return best[0] if len(best) == 1 else None
    newest = _newest_named(request, names_in, strict)
    if newest is not None:
        if newest:  # "my latest post about docker": the newest of those
            fit = _fits_words(newest, every)
            every = [meta for meta in every if meta.path in fit]
        found = newest_post(every)
        return found.path if found is not None else None
    described = _described(request, strict=strict)
    if described is None:
        return None
    words, phrase = described
    if phrase:
        return _fits_phrase(phrase, every)
    fits = _fits_words(words, every)
    return fits[0] if len(fits) == 1 else None


def _fits_words(words: list[str] | str, every: list[PostMeta]) -> list[str]:
    """The posts whose title or file name holds every one of ``words`` as a word, or (a
    string: a Chinese phrase) the phrase."""
    if isinstance(words, str):
        return [
            meta.path
            for meta in every
            if words in meta.title.casefold() or words in _file_name(meta.path).casefold()
        ]
    fits = []
    for meta in every:
        named = f"{meta.title} {_file_name(meta.path)}"
        folded = named.casefold()
        if all(word in folded for word in words) and set(words) <= set(_words(named)):
            fits.append(meta.path)
    return fits


# "my latest post", "the most recent article", "my newest blog post", "我最新的文章", "最近一篇
# 文章": the newest published post. ("The last one" of a list the conversation showed is that
# list's: ``listed_post`` comes first.)
_NEWEST_EN = (
    r"\b(?:my|the|our)\s+(?:very\s+)?(?:latest|newest|last|most\s+recent|most\s+recently\s+"
    r"(?:written|published))\s+(?:blog\s+)?(?:post|article|entry|piece)\b"
)
# ("把最新那篇概括成一句话" summarised the post in focus)
_NEWEST_ZH = (
    r"(?:最新|最近)的?[一那]篇(?:博客)?(?:文章|博文|帖子)?|最新的?(?:博客)?(?:文章|博文|帖子)"
)
_NEWEST = re.compile(f"{_NEWEST_EN}|{_NEWEST_ZH}", re.I)
_NEWEST_AT_END = re.compile(f"(?:{_NEWEST_EN}|{_NEWEST_ZH})\\W*$", re.I)
# What follows it when it is the newest of some posts only: "… about docker", "关于 Go 的文章".
_NEWEST_OF = re.compile(
    r"\s+(?:about|on|regarding|covering)\s+(?P<en>.+?)\s*(?=$|[,;:!?.]|\s(?:to|into|in|for|and|"
    r"please|then|with)\s)|\s*关于\s*(?P<zh>.+?)\s*的(?:文章|博文|帖子)?",
    re.I,
)


def _newest_named(request: str, names_in: str, strict: bool) -> list[str] | str | None:
    """None when the request does not name its newest post; else what the post must fit: []
    for the newest of all ("my latest post"), the words or the Chinese phrase of "my latest
    post about …" / "我最近一篇关于 … 的文章". An edit (``strict``) names it right after its
    verb, or at its end after "in", "of", "to"… with nothing before that makes it a post to
    link, mention or compare with ("add a link to my latest post" edits the open one)."""
    if strict:
        after_verb = _NEWEST.match(names_in) if names_in else None
        at_end = _NEWEST_AT_END.search(request)
        if after_verb is not None:
            end = len(request) - len(names_in) + after_verb.end()
        elif (
            at_end is not None
            and _TARGET_END.search(" " + request[: at_end.start()]) is not None
            and not _REFERS.search(request[: at_end.start()])
        ):
            end = len(request)  # (nothing after it)
        else:
            return None
    else:
        found = _NEWEST.search(request)
        if found is None or _REFERS.search(request[: found.start()]):
            return None
        end = found.end()
    rest = _NEWEST_OF.match(request[end:])
    if rest is None:
        return []
    said = rest.group("zh") or rest.group("en")
    if rest.group("zh") and _CJK.search(said):
        return said.strip().casefold()  # a Chinese phrase, as in titles
    words = [w for w in _words(said) if w.casefold() not in _FILLER]
    return [w.casefold() for w in words] or []


def newest_post(every: list[PostMeta]) -> PostMeta | None:
    """The published post with the latest date (the last by path among those of that day), or
    None when no published post has a date."""
    dated = [meta for meta in every if meta.date and not meta.draft]
    return max(dated, key=lambda meta: (meta.date or "", meta.path)) if dated else None


def _fits_phrase(phrase: str, every: list[PostMeta]) -> str | None:
    """The one post whose title or file name holds ``phrase`` (casefolded). When none does
    and the phrase starts with Chinese characters, they are dropped one by one from its start,
    down to two characters: "翻译机器学习" (the verb run into the name) finds "机器学习入门"."""
    while True:
        fits = [
            meta.path
            for meta in every
            if phrase in meta.title.casefold() or phrase in _file_name(meta.path).casefold()
        ]
        if fits or len(phrase) <= 2 or not _CJK.match(phrase):
            return fits[0] if len(fits) == 1 else None
        phrase = phrase[1:]


_THIS_POST = re.compile(
    r"\b(?:this|the\s+(?:open|opened|current))\s+(?:blog\s+)?(?:post|article|entry|note|page|"
    r"draft)\b|这一?篇|本文|当前(?:的)?文章|这个文章"
)


def described_posts(ctx: SkillContext, request: str, *, strict: bool = False) -> list[str]:
    """The posts that fit the description ``request`` (casefolded) gives ("the rust post":
    each post with "rust" in its title or file name), in the index's order; [] without one."""
    described = _described(request, strict=strict) if request else None
    if described is None:
        return []
    words, phrase = described
    every = ctx.memory.posts.all_posts()
    return _fits_words(phrase or words, every)  # (a phrase: in a title or a file name)


def open_post(ctx: SkillContext, *, strict: bool = False, text: str | None = None) -> str | None:
    """The open post (or the session's focus), the post a request means when it names none
    (``named_post`` found no one post); None when the request describes posts and the open one
    is not of them: "summarize the rust post", the docker post in focus and the blog holding
    three rust posts, summarised the docker post; the skill asks which rust post now. A
    description that fits no post ("translate the whole post") leaves the open post meant.
    "this post", "这篇" are the open one. ``text``: what is read in place of the request.
    Blocking (the index): call it where ``named_post`` is called, or in a thread."""
    current = ctx.input.current_file
    if not current or ctx.input.selected_text:
        return current
    request = " ".join((ctx.input.text if text is None else text).casefold().split())
    if _THIS_POST.search(request):  # "总结这篇文章": 总结 is the verb, not a title's word
        return current
    if not strict:
        request = request_lead(request)
    fits = described_posts(ctx, request, strict=strict)
    try:
        open_path = ctx.files.relative(current)
    except SkillrtError:  # a file outside the blog: no post of it to describe
        return current
    return current if not fits or open_path in fits else None


async def post_named(
    ctx: SkillContext,
    *,
    strict: bool = False,
    text: str | None = None,
    step: str = "named_post",
    lead: bool = True,
) -> str | None:
    """``named_post``, as a step: a resumed task works on the post it found the first time.
    A skill asks for it before the open post (or the session's focus): a post the request
    names is the one it means. ``step``: the step's name (one per look-up in a task)."""
    found: str | None = await ctx.step(
        step, lambda: named_post(ctx, strict=strict, text=text, lead=lead)
    )
    return found


def request_lead(request: str) -> str:
    """The part of a request that says which post, when a post is open (or in focus): up to
    its instruction ("edit the rust post: add …", "translate the rust post to Chinese"), and
    nothing when it names a post as something to link, cite or compare with ("mention <title>
    in the intro", "make it more like the rust post"): a post named there is not the one meant."""
    lead = _LEAD_END.split(request, maxsplit=1)[0]
    return "" if _REFERS.search(lead) else lead


# The path the replies give as an example ("Give its path (like posts/x.md)", the chat's "what
# can you do?": "summarize posts/x.md"): no post the session spoke of. "summarize it" after
# "what can you do?" began "`posts/x.md` is no longer on the blog (deleted or moved)."
EXAMPLE_PATHS = frozenset({"posts/x.md"})

# "it", "this post", "这篇": the post the session spoke of last (``gone_post``).
_IT = re.compile(r"\b(?:it|this|that)\b|它|这篇|那篇", re.I)


def gone_post(ctx: SkillContext) -> list[str]:
    """The post the request means that the session named and the blog no longer holds (it
    was deleted, or moved), as ``[path, how]``: ``named``, a word of its file name that names
    no post still there ("the docker post" after posts/docker-basics.md went to the trash),
    or ``it``, "it" or "this post" with none open when the post named last is gone. Empty
    when there is none. After a delete, "what tags does the docker post have?" asked which
    post, listing others, as if the one deleted had never been. Blocking I/O: a sync step."""
    if ctx.input.current_file or ctx.input.selected_text:
        return []
    posts = ctx.memory.posts
    named = [path for path in ctx.conversation.mentioned if path not in EXAMPLE_PATHS]
    gone = [path for path in named if _not_held(posts, path)]
    if not gone:
        return []
    said = {w for w in _words(ctx.input.text) if len(w) > 2} - _FILLER - _ANSWER_FILLER
    if said:
        held = set(_words(" ".join(f"{m.title} {_file_name(m.path)}" for m in posts.all_posts())))
        for path in gone:
            if said & set(_words(_file_name(path).replace("-", " "))) - held:
                return [path, "named"]
    if named[0] == gone[0] and _IT.search(ctx.input.text):
        return [gone[0], "it"]
    return []


def _not_held(posts: Any, path: str) -> bool:
    """Whether the blog holds no post at ``path`` (a path outside it is none of its posts)."""
    try:
        return posts.get(path) is None
    except PathNotAllowed:
        return False


async def ask_for_post(ctx: SkillContext, action: str) -> str | None:
    """Ask which post to ``action`` (a verb in the user's language; WAITING_INPUT); the chosen
    path, or None if none matched (or the blog has no posts). A post the request names that
    the blog no longer holds (``gone_post``) is not asked about: its path is returned, and the
    skill says it is not there; "it", meaning a post gone, is asked about, the question
    saying first that it is gone."""
    gone = await ctx.step("gone_post", lambda: gone_post(ctx), returns=list[str])
    if gone and gone[1] == "named":
        return gone[0]
    note = ctx.reply("post_gone", path=gone[0]) if gone else ""
    choices = await ctx.step("choices", lambda: likely_posts(ctx), returns=list[tuple[str, str]])
    if not choices:
        return None
    lines = "\n".join(f"{i}. {title} (`{path}`)" for i, (path, title) in enumerate(choices, 1))
    named = "哪篇文章" in action
    question = note + ctx.reply(
        "which_post_named" if named else "which_post", action=action, lines=lines
    )

    def accepts(text: str) -> bool:  # a request typed instead ends this task and is routed
        return not new_request(text) or match_choice(ctx, text, choices) is not None

    answer = await ctx.ask(question, accepts=accepts)
    return match_choice(ctx, answer, choices)


def no_post_chosen(ctx: SkillContext) -> SkillResult:
    """The reply when the answer named no post: nothing was done (not an error)."""
    return SkillResult(message=ctx.reply("no_post_chosen"), data={"error": "no_post_chosen"})
