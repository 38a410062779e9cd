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
import re
import time
from dataclasses import dataclass
from functools import partial
from typing import Annotated

from pydantic import BaseModel

from skillrt import Replies, SkillContext, SkillResult, skill
from skillrt.blog.dates import find_dates
from skillrt.blog.markdown import split_post
from skillrt.blog.posts import make_snippet, query_terms
from skillrt.exceptions import BudgetExceeded, PathNotAllowed, TaskCancelled
from skillrt.llm.base import LLMMessage
from skillrt.skill.params import Chars, PostPath

from .common import refuse
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
from .scaffold import without_echo

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

REPLIES = Replies(
    {
        "no_question": ("请告诉我你的问题。", "What is your question?"),
        "question_too_long": (
            "问题太长了（{chars} 个字符，最多 {limit}）。请简短地提问。",
            "That question is too long ({chars} characters; at most {limit}). Ask it briefly.",
        ),
        "searching": ("在博客中查找", "Searching the blog"),
        "answering": ("组织回答", "Writing the answer"),
        "sources": ("\n\n参考文章：\n{links}", "\n\nSources:\n{links}"),
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
        "write_about_it": ("写一篇关于它的文章", "Write an article about it"),
        "no_code": (
            "{where}没有找到要解释的代码。请选中代码，或打开一篇含代码块的文章。",
            "I found no code to explain {where}. Select some code or open a post with a "
            "code block.",
        ),
        "explaining": ("解释代码", "Explaining the code"),
        "code_cut": (
            "\n\n（代码较长，只解释了前 {limit} 个字符。）",
            "\n\n(The code is long; only its first {limit} characters were explained.)",
        ),
    }
)

Question = Annotated[
    str, Chars(MAX_QUESTION_CHARS, empty="no_question", too_long="question_too_long")
]


class AnswerParams(BaseModel):
    question: Question


class ExplainParams(BaseModel):
    question: Annotated[str | None, Chars()] = None
    code: str | None = None  # kept as given: indentation matters
    path: PostPath = None


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


def _find_sources(ctx: SkillContext, question: str) -> Found:
    """The posts that best match ``question`` (the index refreshed first: blocking I/O):
    published posts only (unless ``drafts.in_answers``), in the dates it names if any."""
    ctx.memory.refresh()
    dates, rest = find_dates(question, dt.date.fromtimestamp(time.time()))
    drafts = ctx.config.drafts.in_answers
    query = rest if dates is not None else question
    hits = ctx.memory.posts.search(query, SOURCES, drafts=drafts, dates=dates)
    missed = dates is not None and not hits
    if missed:
        hits = ctx.memory.posts.search(query, SOURCES, drafts=drafts)
    sources: list[Source] = []
    terms = query_terms(query).all
    for hit in hits:
        post = ctx.memory.posts.get(hit.path)
        excerpt = make_snippet(post.body, terms, SOURCE_CHARS) if post else hit.snippet
        sources.append(Source(path=hit.path, title=hit.title, excerpt=excerpt))
    return Found(sources=sources, dates=dates.label if dates else None, missed=missed)


async def _nothing_found(ctx: SkillContext, question: str) -> SkillResult:
    """The blog has nothing on it: say so, then (``answer.general_fallback``) a general
    answer from the model, marked as not from the blog."""
    shown = clip(question, 80)
    next_steps = [ctx.reply("write_about_it")]
    if ctx.config.answer.general_fallback:
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


async def _answer(ctx: SkillContext, question: str, sources: list[Source]) -> str:
    numbered = "\n\n".join(
        f"[{i}] [{s.title}]({s.path})\n{s.excerpt}" for i, s in enumerate(sources, 1)
    )
    system = ANSWER_SYSTEM.format(lang=language_name(ctx.input.language))
    prompt = f"Sources:\n\n{numbered}\n\nQuestion: {question}"
    result = await ctx.llm.chat(messages(system, prompt), max_tokens=1024)
    return without_echo(result.content, [system])  # (all echo: no answer, as NO_ANSWER)


@skill(
    name="AnswerQuestion",
    intents=["ANSWER_QUESTION"],
    params=AnswerParams,
    description="Answer a question from the blog's posts, citing them",
    replies=REPLIES,
)
async def answer_question(ctx: SkillContext, params: AnswerParams) -> SkillResult:
    question = params.question
    ctx.progress(1, 2, ctx.reply("searching"))
    found = await ctx.step("found", partial(_find_sources, ctx, question), returns=Found)
    sources = found.sources
    note = ctx.reply("no_such_date", dates=found.dates) if found.missed else ""
    if not sources:
        result = await _nothing_found(ctx, question)
        return result.model_copy(update={"message": note + result.message}) if note else result
    ctx.progress(2, 2, ctx.reply("answering"))
    raw: str = await ctx.step("answer", partial(_answer, ctx, question, sources))
    if not raw or raw.strip(" .。").upper().startswith(NO_ANSWER):
        return await _nothing_found(ctx, question)
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
        },
    )


async def _general_answer(ctx: SkillContext, question: str) -> str:
    """What the model knows, with the conversation; empty when it fails or says nothing."""
    system = GENERAL_SYSTEM.format(lang=language_name(ctx.input.language))
    turns = ctx.conversation.messages(exclude_last=True)
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
    return "" if text.upper().startswith(NO_ANSWER) else text


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


def _code_to_explain(ctx: SkillContext, params: ExplainParams) -> Snippet | None:
    """The code given, selected, or in the post (by the question's pick); reads: blocking."""
    if params.code and params.code.strip():
        return Snippet(params.code, "", "code")
    if ctx.input.selected_text and ctx.input.selected_text.strip():
        return Snippet(ctx.input.selected_text, "", "selection")
    target = params.path or ctx.input.current_file
    if not target:
        return None
    path = ctx.files.relative(target)
    text, _ = ctx.files.read(path)
    blocks = code_blocks(split_post(text, path)[1])
    if not blocks:
        return Snippet("", "", path)
    block = _pick_block(blocks, params.question or ctx.input.text)
    return Snippet(block["code"], block["language"], path)


async def _explain(ctx: SkillContext, snippet: Snippet, question: str) -> str:
    system = EXPLAIN_SYSTEM.format(lang=language_name(ctx.input.language))
    code = clip(snippet.code, PROMPT_BODY_CHARS)
    prompt = f"Question: {question}\n\n```{snippet.language}\n{code}\n```"
    result = await ctx.llm.chat(messages(system, prompt), max_tokens=1200)
    return result.content.strip()


@skill(
    name="CodeExplain",
    intents=["CODE_EXPLAIN"],
    params=ExplainParams,
    description="Explain the selected code or a code block of the current post",
    replies=REPLIES,
)
async def explain_code(ctx: SkillContext, params: ExplainParams) -> SkillResult:
    found = await asyncio.to_thread(_code_to_explain, ctx, params)  # not a step: not journalled
    if found is None or not found.code.strip():
        where = f"`{found.source}` " if found else ""
        return refuse(ctx, "no_code", where=where)
    ctx.progress(1, 1, ctx.reply("explaining"))
    question = clip(params.question or ctx.input.text, 500)
    text: str = await ctx.step("explain", partial(_explain, ctx, found, question))
    truncated = len(found.code) > PROMPT_BODY_CHARS
    if truncated:
        text += ctx.reply("code_cut", limit=PROMPT_BODY_CHARS)
    return SkillResult(
        message=text,
        data={"source": found.source, "language": found.language, "truncated": truncated},
    )
