"""Summarize: a post, the selected text, or pasted text; long inputs in parts (map-reduce).

The text is split at paragraph boundaries into parts that fit the model's context budget
(half of ``llm.n_ctx`` tokens, at most 3,000); each part is summarised in its own durable
step, then the part summaries are combined (in rounds, when they do not fit in one call).
"""

from __future__ import annotations

import asyncio
import re
from functools import partial
from typing import Annotated

from pydantic import BaseModel, Field

from skillrt import Replies, SkillContext, SkillResult, skill
from skillrt.blog.frontmatter import split_frontmatter
from skillrt.blog.markdown import split_post
from skillrt.exceptions import InvalidFrontmatter
from skillrt.llm.base import estimate_tokens
from skillrt.skill.params import POST_DESCRIPTION, Chars, PostPath

from . import pick
from .answer import unquoted
from .checked import REPLIES as CHECK_REPLIES
from .checked import Checked, checked, refuse_unchecked
from .checks import (
    Check,
    Generated,
    Verdict,
    code_from,
    language,
    not_cut_short,
    not_degenerate,
    not_refusing,
    prose_words,
    reported_as,
    template_from,
)
from .common import refuse
from .figures import figures_from
from .on_topic import grounded
from .pick import ask_for_post, named_post, no_post_chosen, open_post
from .prompts import (
    SUMMARY_COMBINE_SYSTEM,
    SUMMARY_PART_SYSTEM,
    SUMMARY_SYSTEM,
    language_name,
    messages,
)
from .scaffold import alike, without_retry_note

__all__ = [
    "SENTENCE_END",
    "SummarizeParams",
    "split_parts",
    "summarize",
    "summary_tokens",
    "whole_sentences",
]

MAX_PARTS = 24
MAX_ROUNDS = 3
MIN_SUMMARY_TOKENS = 160
PART_SUMMARY_TOKENS = 400
FINAL_SUMMARY_TOKENS = 700
MIN_PASTED_CHARS = 40
_PARAGRAPHS = re.compile(r"\n\s*\n")
_PATHLIKE = re.compile(
    r"(?<![\w/.~-])(?:~|\.{1,2})?/?[\w.~-]+(?:/[\w.~-]*)+|(?<![\w/])[\w.-]+\.(?:md|markdown|mdx|txt)\b"
)
_LEAD_IN = re.compile(r"^.{0,60}?[:：\n]\s*", re.S)

REPLIES = (
    Replies(
        {
            "text_too_long": (
                "要总结的文字太长了（{chars} 个字符，最多 {limit}）。请选择其中一段再总结。",
                "The text to summarise is too long ({chars} characters; at most {limit}). "
                "Select a part of it and try again.",
            ),
            "url_not_supported": (
                "总结网页需要先读取它：请让我“研究”这个网址，或把网页内容粘贴过来。",
                "To summarise a web page I need to read it first: ask me to research the URL, "
                "or paste the page's text.",
            ),
            "action": ("总结", "summarise"),
            "no_source": (
                "要总结什么？请选中文字、打开一篇文章、给出路径，或直接粘贴文字。",
                "What should I summarise? Select text, open a post, give a path, or paste the "
                "text.",
            ),
            "too_long": (
                "文本太长了（约 {tokens} 个 token，需要分成 {parts} 部分，最多 {limit} 部分）。"
                "请选择其中一段再总结。",
                "The text is too long (about {tokens} tokens, {parts} parts; at most {limit}). "
                "Select a part of it and try again.",
            ),
            "summarising": ("总结中", "Summarising"),
            "summarising_part": (
                "总结第 {part}/{parts} 部分",
                "Summarising part {part}/{parts}",
            ),
            "combining": ("合并各部分的总结", "Combining the summaries"),
            "done": ("完成", "Done"),
            "summary_of": ("`{what}` 的总结：", "Summary of `{what}`:"),
            "summary": ("总结：", "Summary:"),
        }
    )
    | pick.REPLIES
    | CHECK_REPLIES
)

PastedText = Annotated[str | None, Chars("max_input_chars", squash=False, too_long="text_too_long")]


class SummarizeParams(BaseModel):
    path: PostPath = Field(default=None, description="The post to summarise: " + POST_DESCRIPTION)
    text: PastedText = Field(default=None, description="Or a text to summarise, pasted")
    title: Annotated[str | None, Chars()] = Field(default=None, description="Or a post's title")
    url: Annotated[str | None, Chars()] = Field(
        default=None, description="Or a web page's address (http or https)"
    )


def _hard_split(text: str, budget: int) -> list[str]:
    pieces: list[str] = []
    while text:
        size = len(text)
        while estimate_tokens(text[:size]) > budget and size > 1:
            size = size * 3 // 4
        pieces.append(text[:size])
        text = text[size:]
    return pieces


def split_parts(text: str, budget_tokens: int) -> list[str]:
    """``text`` in consecutive parts of at most ``budget_tokens`` (estimated), by paragraph."""
    parts: list[str] = []
    current = ""
    for paragraph in _PARAGRAPHS.split(text.strip()):
        pieces = (
            _hard_split(paragraph, budget_tokens)
            if estimate_tokens(paragraph) > budget_tokens
            else [paragraph]
        )
        for piece in pieces:
            joined = f"{current}\n\n{piece}" if current else piece
            if current and estimate_tokens(joined) > budget_tokens:
                parts.append(current)
                current = piece
            else:
                current = joined
    if current:
        parts.append(current)
    return parts


def _path_in(request: str) -> str | None:
    """A path the request names that the router left alone (``总结 docs/../../etc/passwd``),
    so that it is checked and refused by name instead of asking for a path."""
    if "://" in request:
        return None
    match = _PATHLIKE.search(request)
    return match.group(0) if match else None


def _source(ctx: SkillContext, params: SummarizeParams) -> tuple[str, str] | None:
    """``(what, text)`` to summarise, or None when nothing was given (reads a post: blocking)."""
    if params.text:
        return "text", params.text
    if ctx.input.selected_text and ctx.input.selected_text.strip():
        return "selection", ctx.input.selected_text
    target = params.path
    if not target and params.title:
        target = ctx.memory.resolve_link(params.title)
    if not target:
        pasted = _LEAD_IN.sub("", ctx.input.text.strip(), count=1)
        if len(pasted) >= MIN_PASTED_CHARS and pasted != ctx.input.text.strip():
            return "text", pasted
        if params.url:  # a web page, not the open post (nor the session's focus)
            return None
        target = _path_in(ctx.input.text)
        if not target and _SEVERAL_POSTS.search(ctx.input.text):
            return None  # asked which, one post at a time (not the one the words fit first)
        target = target or named_post(ctx) or open_post(ctx)
    if not target:
        return None
    return _read_post(ctx, target)


# A request about several posts ("summarize my posts about docker", "总结一下我所有关于 rust 的
# 文章"): the first post whose name has "docker" was summarised, and the reply did not say the
# four others were left. A summary is of one post: which is asked, the posts on it listed.
_SEVERAL_POSTS = re.compile(
    r"\b(?:all\s+(?:of\s+)?)?(?:my|the|these|those)\s+(?:[\w.+#-]+\s+){0,3}?(?:posts|articles)\b"
    r"|\ball\s+(?:[\w.+#-]+\s+){0,3}?(?:posts|articles)\b"
    r"|所有[^，,。]{0,20}?(?:文章|博文|帖子)|(?:这|那)些(?:文章|博文)|(?:几|多)篇",
    re.I,
)


def _read_post(ctx: SkillContext, target: str) -> tuple[str, str]:
    path = ctx.files.relative(target)
    text, _ = ctx.files.read(path)
    try:
        _, body = split_post(text, path)
    except InvalidFrontmatter:  # still worth summarising, without its frontmatter block
        try:
            body = split_frontmatter(text, path).body
        except InvalidFrontmatter:
            body = text  # a block never closed: nothing tells it from the body
    return path, body


@skill(
    name="Summarize",
    intents=["SUMMARIZE"],
    params=SummarizeParams,
    description="Summarise a post, the selected text or pasted text (long texts in parts)",
    replies=REPLIES,
)
async def summarize(ctx: SkillContext, params: SummarizeParams) -> SkillResult:
    source = await asyncio.to_thread(_source, ctx, params)  # not a step: never journalled
    if (source is None or not source[1].strip()) and params.url:
        return refuse(ctx, "url_not_supported")
    if source is None:
        target = await ask_for_post(ctx, ctx.reply("action"))
        if target is None:
            return no_post_chosen(ctx)
        source = await asyncio.to_thread(_read_post, ctx, target)
    what, text = source
    if not text.strip():
        return refuse(ctx, "no_source")
    budget = max(400, min(3000, ctx.config.llm.n_ctx // 2 - 300))
    parts = split_parts(text, budget)
    if len(parts) > MAX_PARTS:
        tokens = estimate_tokens(text)
        return refuse(ctx, "too_long", tokens=tokens, parts=len(parts), limit=MAX_PARTS)
    try:
        summary = await _summarise(ctx, parts, budget)
    except Unchecked as refused:  # nothing to show as the summary: the reply says why
        return refuse_unchecked(ctx, refused.result, source=what)
    header = (
        ctx.reply("summary_of", what=what)
        if what not in ("text", "selection")
        else ctx.reply("summary")
    )
    return SkillResult(
        message=f"{header}\n\n{summary}",
        data={"source": what, "parts": len(parts), "summary": summary},
    )


async def _ask(ctx: SkillContext, system: str, content: str, note: str = "") -> Generated:
    """One summary call: ``system`` (in the user's language) over ``content`` (``note``: the
    reason a first answer was refused, when asked again)."""
    lang = language_name(ctx.input.language)
    max_tokens = summary_tokens(content, final=system is not SUMMARY_PART_SYSTEM)
    result = await ctx.llm.chat(
        messages(system.format(lang=lang), content + note), max_tokens=max_tokens
    )
    # A summary the repetition guard cut keeps what came before, with the runtime's note, as
    # before: only a text that is nothing, or a loop too short for the guard, is refused.
    text = _EMPTY_ITEM_END.sub("", without_retry_note(result.content).strip()).strip()
    if (label := _SUMMARY_LABEL.match(text)) is not None and text[label.end() :].strip():
        text = text[label.end() :].strip()  # "A one-sentence summary:" then the summary
    if result.usage.completion_tokens >= max_tokens and not result.truncated_repetition:
        text = whole_sentences(text)
    return Generated(text=_loose_ends(_without_copied_start(text, content)))


# What a summary ends with and does not finish: a code block never closed (the embedded model
# ended the docker post's summary "```python:3.12-slim\nWORKDIR /app\nCOPY requirements.txt
# ."), and headings with nothing under them (the rust post's ended "## 按照异常处理方式进行操作
# \n\n### 1."). Cut, when prose is left before them.
_HEADINGS_END = re.compile(r"(?:\n[ \t]{0,3}#{1,6}(?:[ \t][^\n]*)?\s*)+$")


def _without_copied_start(text: str, content: str) -> str:
    """``text`` without what it opens with that is no summary: a bare fence never closed (the
    embedded model's summary of the rust borrowing post was "```", the post's title as a
    heading and its first paragraph, shown as done), and headings of the text summarised (its
    summary of the ML post began "# 从线性回归开始", of the post "# 机器学习入门：从线性回归开始").
    Kept as it is when nothing but code and headings would be left."""
    kept = text
    fences = list(_OPEN_FENCE.finditer(kept))
    if len(fences) == 1 and fences[0].start() == 0 and _BARE_FENCE.match(kept):
        kept = kept.partition("\n")[2]  # a fence with nothing before it, and no end
    theirs = [_heading_text(h) for h in _HEADING_LINES.findall(content)]
    lines = kept.strip("\n").splitlines()
    while lines and (
        not lines[0].strip()
        or (_HEADING_LINES.match(lines[0]) and _one_of(_heading_text(lines[0]), theirs))
    ):
        lines.pop(0)
    kept = "\n".join(lines).strip()
    return kept if kept != text.strip() and _words_outside(kept) else text


_BARE_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})[ \t]*(?:\n|$)")


def _heading_text(line: str) -> str:
    return " ".join(line.strip().lstrip("#").split()).casefold()


def _one_of(heading: str, theirs: list[str]) -> bool:
    """Whether ``heading`` is one of ``theirs``: the same, a part of one (four characters or
    more), or alike (one character changed: "Rust 生命周期详细" for "Rust 生命周期详解")."""
    return len(heading) >= 4 and any(
        heading in their or alike(heading, their, 0.85) for their in theirs
    )


def _loose_ends(text: str) -> str:
    fences = list(_OPEN_FENCE.finditer(text))
    if len(fences) % 2 and prose_words(text[: fences[-1].start()]):
        text = text[: fences[-1].start()].rstrip()
    kept = _HEADINGS_END.sub("", "\n" + text).strip()
    return kept if prose_words(kept) else text


def has_prose(content: str) -> Check:
    """A summary of a text with prose holds some outside its code and headings: one was the
    post's title as a heading, a code block copied from it and a heading, and was shown as
    done. Reported as ``not_degenerate`` (nothing to read), the check names kept."""
    worded = _words_outside(content) > 0

    def check(generated: Generated) -> Verdict:
        if worded and _words_outside(generated.text) < MIN_PROSE_WORDS:
            return Verdict(
                "not_degenerate",
                False,
                "the summary has no sentences outside code and headings",
                zh="总结在代码和标题之外没有句子",
            )
        return Verdict("not_degenerate", True)

    return check


def _words_outside(text: str) -> int:
    """The words of ``text`` outside its code blocks and headings, in any script (a Russian
    summary has words too: ``prose_words`` counts the scripts the languages checks know)."""
    return len(_ANY_WORD.findall(_CODE_BLOCK.sub(" ", _HEADING_LINES.sub("", text))))


_ANY_WORD = re.compile(r"[^\W\d_]{2,}|[\u3400-\u9fff]")
_CODE_BLOCK = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,}).*?^[ \t]{0,3}\1[ \t]*$", re.S | re.M)
MIN_PROSE_WORDS = 1  # any: a scripted summary of one word ("Short.") is one
_HEADING_LINES = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t][^\n]*)?$", re.M)


# A first line that only announces the summary: the embedded model's summary of the weekly
# review post began "A one-sentence summary:", and that was shown as part of it.
_SUMMARY_LABEL = re.compile(
    r"\A\W*(?:(?:here(?:['’]s| is)|this is|below is)\s+)?(?:(?:a|an|the|my)\s+)?"
    r"(?:(?:one|two|three|short|brief|quick|concise|final|overall|one-sentence|two-sentence|"
    r"one-paragraph)\s+)*"
    r"(?:summary|summarization|tl;?dr)(?:\s+of\b[^\n:：]{0,80})?\s*[:：]\s*\n"
    r"|\A\W*(?:以下是|下面是)?[^\n]{0,12}?(?:总结|摘要|概括)\s*[:：]\s*\n",
    re.I,
)


# A list's last item begun and never written ("…\n3." at the token limit): not the summary's.
_EMPTY_ITEM_END = re.compile(
    r"(?:\n[ \t]*(?:\*{1,2}|_{1,2})?(?:\d{1,3}[.)]|[-*+])[ \t]*(?:\*{1,2}|_{1,2})?[ \t]*)+$"
)  # (and "**3." at the end: the embedded model's summary of the ML post)


SENTENCE_END = re.compile(r"[.!?。！？…][\"'”’)）\]]*(?=\s|$)|[。！？]")
_OPEN_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})", re.M)


def whole_sentences(text: str) -> str:
    """``text`` cut at the token limit, without the sentence it stops in: it ended "… was
    created by Dennis McIlwraith in 1987. It's". A code block left open is dropped with it.
    Kept as it is when that would leave less than a third of it."""
    if re.search(r"[.!?。！？…\"'”’)）\]`]\s*$", text):
        return text
    kept = text
    fences = [m for m in _OPEN_FENCE.finditer(text)]
    if len(fences) % 2:  # a block opened and never closed: cut before it
        kept = text[: fences[-1].start()].rstrip()
    ends = list(SENTENCE_END.finditer(kept))
    if ends:
        kept = kept[: ends[-1].end()]
    elif kept == text:
        return text
    # A list item's number ends no sentence: "…\n3. **Third" kept up to "3." is cut there.
    kept = _EMPTY_ITEM_END.sub("", kept.rstrip()).rstrip()
    return kept if len(kept) * 3 >= len(text) else text


class Unchecked(Exception):
    """A summary that failed its check twice (``checked``): the skill refuses."""

    def __init__(self, result: Checked) -> None:
        self.result = result


async def _summary(ctx: SkillContext, name: str, system: str, content: str) -> str:
    """The step ``name``: a summary, checked (``not_degenerate``, its code and template
    code from ``content``, its words mostly ``content``'s) and asked again once."""
    checks = [
        not_degenerate,
        # (the model saying it cannot, and a summary stopping mid-sentence, were shown as done;
        # under not_degenerate's name, so the report's checks are the ones they were)
        reported_as("not_degenerate", not_refusing(content)),
        reported_as("not_degenerate", not_cut_short),
        has_prose(content),
        code_from(content, verbatim=True, inline=True),
        template_from(content),
        grounded(content),
        figures_from(content),
        *_in_the_users_language(ctx),
    ]
    result = await checked(ctx, name, partial(_ask, ctx, system, content), checks)
    if not result.passed:
        raise Unchecked(result)
    return result.text


def _in_the_users_language(ctx: SkillContext) -> list[Check]:
    """A summary asked for in English (a request typed, the prompt's ``{lang}``) is in English,
    judged on what it says, not what it quotes (``answer.unquoted``): the sqlite post's
    summary, asked for in English, was "trigram 分词器可以匹配任意三个字符以上的子串", shown as
    done. Reported as ``not_degenerate`` (the report's checks are the ones they were). Not
    judged with no request typed (``run_skill``: the language is no one's), nor for one in
    Chinese (tests' stand-in models, and a reader of Chinese, take an English summary)."""
    if ctx.input.language != "en" or not ctx.input.text.strip():
        return []
    return [reported_as("not_degenerate", unquoted(language("en")))]


async def _summarise(ctx: SkillContext, parts: list[str], budget: int) -> str:
    """The summary of ``parts``: one call for one part, else one per part, then combined."""
    if len(parts) == 1:
        ctx.progress(1, 2, ctx.reply("summarising"))
        summary = await _summary(ctx, "summary", SUMMARY_SYSTEM, parts[0])
        ctx.progress(2, 2, ctx.reply("done"))
        return summary
    total = len(parts) + 1
    summaries: list[str] = []
    for i, part in enumerate(parts, 1):
        ctx.progress(i, total, ctx.reply("summarising_part", part=i, parts=len(parts)))
        content = f"Part {i} of {len(parts)}:\n\n{part}"
        summaries.append(await _summary(ctx, f"part:{i}", SUMMARY_PART_SYSTEM, content))
    ctx.progress(total, total, ctx.reply("combining"))
    return await _combine(ctx, summaries, budget)


def summary_tokens(content: str, *, final: bool) -> int:
    """``max_tokens`` for a summary: about a third of what it summarises, within bounds (a
    part's summary is a short list; the final one a gist and its points)."""
    cap = FINAL_SUMMARY_TOKENS if final else PART_SUMMARY_TOKENS
    return max(MIN_SUMMARY_TOKENS, min(cap, estimate_tokens(content) // 3))


async def _combine(ctx: SkillContext, summaries: list[str], budget: int) -> str:
    """Combine part summaries, in rounds of groups that fit the budget."""
    for level in range(1, MAX_ROUNDS + 1):
        groups = split_parts("\n\n".join(summaries), budget)
        if len(groups) == 1 or level == MAX_ROUNDS:
            joined = _hard_split("\n\n".join(groups), budget)[0]  # the last round must fit
            return await _summary(ctx, f"combine:{level}", SUMMARY_COMBINE_SYSTEM, joined)
        summaries = [
            await _summary(ctx, f"combine:{level}:{j}", SUMMARY_COMBINE_SYSTEM, group)
            for j, group in enumerate(groups, 1)
        ]
    return "\n\n".join(summaries)
