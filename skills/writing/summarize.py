"""Summarize: a post, the selected text, or pasted text; long inputs in parts (map-reduce).

The text is split at paragraph boundaries into parts that fit the model's context budget
(half of ``llm.n_ctx`` tokens, at most 3,000); each part is summarised in its own durable
step, then the part summaries are combined (in rounds, when they do not fit in one call).
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from skillrt import SkillContext, SkillResult, skill
from skillrt.exceptions import InvalidFrontmatter
from skillrt.llm.base import estimate_tokens
from skillrt.storage.markdown import split_post

from .common import failure, friendly_errors
from .pick import ask_for_post, no_post_chosen
from .prompts import (
    SUMMARY_COMBINE_SYSTEM,
    SUMMARY_PART_SYSTEM,
    SUMMARY_SYSTEM,
    language_name,
    messages,
)

__all__ = ["SummarizeParams", "split_parts", "summarize", "summary_tokens"]

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


class SummarizeParams(BaseModel):
    path: str | None = None
    text: str | None = None
    title: str | None = None
    url: str | None = None


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
    """``(what, text)`` to summarise, or None when nothing was given."""
    if params.text and params.text.strip():
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
        target = _path_in(ctx.input.text) or ctx.input.current_file
    if not target:
        return None
    return _read_post(ctx, target)


def _read_post(ctx: SkillContext, target: str) -> tuple[str, str]:
    path = ctx.files.relative(target)
    text, _ = ctx.files.read(path)
    try:
        _, body = split_post(text, path)
    except InvalidFrontmatter:
        body = text  # still worth summarising
    return path, body


@skill(
    name="Summarize",
    intents=["SUMMARIZE"],
    params=SummarizeParams,
    description="Summarise a post, the selected text or pasted text (long texts in parts)",
)
@friendly_errors
async def summarize(ctx: SkillContext, params: SummarizeParams) -> SkillResult:
    say = ctx.say
    source = await asyncio.to_thread(_source, ctx, params)  # reads a file: off the loop
    if (source is None or not source[1].strip()) and params.url:
        return failure(
            ctx,
            "总结网页需要先读取它：请让我“研究”这个网址，或把网页内容粘贴过来。",
            "To summarise a web page I need to read it first: ask me to research the URL, or "
            "paste the page's text.",
            error="url_not_supported",
        )
    if source is None:
        target = await ask_for_post(ctx, "总结", "summarise")
        if target is None:
            return no_post_chosen(ctx)
        source = await asyncio.to_thread(_read_post, ctx, target)
    if not source[1].strip():
        return failure(
            ctx,
            "要总结什么？请选中文字、打开一篇文章、给出路径，或直接粘贴文字。",
            "What should I summarise? Select text, open a post, give a path, or paste the text.",
            error="no_source",
        )
    what, text = source
    lang = language_name(ctx.input.language)
    budget = max(400, min(3000, ctx.config.llm.n_ctx // 2 - 300))
    parts = split_parts(text, budget)
    if len(parts) > MAX_PARTS:
        return failure(
            ctx,
            f"文本太长了（约 {estimate_tokens(text)} 个 token，需要分成 {len(parts)} 部分，"
            f"最多 {MAX_PARTS} 部分）。请选择其中一段再总结。",
            f"The text is too long (about {estimate_tokens(text)} tokens, {len(parts)} parts; "
            f"at most {MAX_PARTS}). Select a part of it and try again.",
            error="too_long",
        )
    total = len(parts) + 1

    async def ask(system: str, content: str) -> str:
        final = system is not SUMMARY_PART_SYSTEM
        result = await ctx.llm.chat(
            messages(system.format(lang=lang), content),
            max_tokens=summary_tokens(content, final=final),
        )
        return result.content.strip()

    if len(parts) == 1:
        ctx.progress(1, 2, say("总结中", "Summarising"))
        summary: str = await ctx.step("summary", lambda: ask(SUMMARY_SYSTEM, parts[0]))
        ctx.progress(2, 2, say("完成", "Done"))
    else:
        summaries: list[str] = []
        for i, part in enumerate(parts, 1):
            ctx.progress(
                i, total, say(f"总结第 {i}/{len(parts)} 部分", f"Summarising part {i}/{len(parts)}")
            )
            summaries.append(
                await ctx.step(
                    f"part:{i}",
                    functools.partial(
                        ask, SUMMARY_PART_SYSTEM, f"Part {i} of {len(parts)}:\n\n{part}"
                    ),
                )
            )
        ctx.progress(total, total, say("合并各部分的总结", "Combining the summaries"))
        summary = await _combine(ctx, summaries, budget, ask)
    label: dict[str, Any] = {"source": what, "parts": len(parts)}
    header = (
        say(f"`{what}` 的总结：", f"Summary of `{what}`:")
        if what not in ("text", "selection")
        else say("总结：", "Summary:")
    )
    return SkillResult(message=f"{header}\n\n{summary}", data={**label, "summary": summary})


def summary_tokens(content: str, *, final: bool) -> int:
    """``max_tokens`` for a summary: about a third of what it summarises, within bounds (a
    part's summary is a short list; the final one a gist and its points)."""
    cap = FINAL_SUMMARY_TOKENS if final else PART_SUMMARY_TOKENS
    return max(MIN_SUMMARY_TOKENS, min(cap, estimate_tokens(content) // 3))


async def _combine(
    ctx: SkillContext,
    summaries: list[str],
    budget: int,
    ask: Callable[[str, str], Awaitable[str]],
) -> str:
    """Combine part summaries, in rounds of groups that fit the budget."""
    for level in range(1, MAX_ROUNDS + 1):
        groups = split_parts("\n\n".join(summaries), budget)
        if len(groups) == 1 or level == MAX_ROUNDS:
            joined = _hard_split("\n\n".join(groups), budget)[0]  # the last round must fit
            result: str = await ctx.step(
                f"combine:{level}", functools.partial(ask, SUMMARY_COMBINE_SYSTEM, joined)
            )
            return result
        summaries = [
            await ctx.step(
                f"combine:{level}:{j}", functools.partial(ask, SUMMARY_COMBINE_SYSTEM, group)
            )
            for j, group in enumerate(groups, 1)
        ]
    return "\n\n".join(summaries)
