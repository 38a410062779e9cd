"""UpdateGraph: the entity graph for one post or the whole blog, with LLM extraction.

Wikilinks and tags are read from the index on every refresh; this skill adds what only a
model can find: the entities a post talks about (structured output, ``Extraction``). One
durable step per post, so an interrupted run resumes after the last post done. Posts whose
content and extraction are unchanged since the last run are skipped unless ``force``.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel

from skillrt import SkillContext, SkillResult, skill
from skillrt.exceptions import StructuredOutputError
from skillrt.storage.graph import ExtractedEntity, Extraction

from .common import failure, friendly_errors, refresh_memory
from .prompts import EXTRACT_SYSTEM, PROMPT_BODY_CHARS, clip, messages

__all__ = ["UpdateGraphParams", "extract_entities", "update_graph"]

MAX_ENTITIES = 15


class UpdateGraphParams(BaseModel):
    path: str | None = None
    force: bool = False


async def extract_entities(ctx: SkillContext, title: str, body: str) -> list[ExtractedEntity]:
    """Ask the model for a post's entities; an answer that never fits the schema raises."""
    prompt = f"Title: {clip(title, 200)}\n\n{clip(body, PROMPT_BODY_CHARS)}"
    result = await ctx.llm.chat(
        messages(EXTRACT_SYSTEM, prompt), response_model=Extraction, max_tokens=800
    )
    entities = result.parsed_as(Extraction).entities
    seen: set[str] = set()
    unique: list[ExtractedEntity] = []
    for entity in entities:
        key = entity.name.strip().casefold()
        if key and key not in seen:
            seen.add(key)
            unique.append(entity)
    return unique[:MAX_ENTITIES]


async def _extract_and_apply(ctx: SkillContext, path: str) -> dict[str, Any]:
    post = ctx.memory.posts.get(path)
    if post is None:
        delta = ctx.memory.update_post_graph(path)
        return {"path": path, "removed": True, **delta.counts()}
    try:
        extracted = await extract_entities(ctx, post.title, post.body)
    except StructuredOutputError as exc:
        return {"path": path, "error": f"the model's answer did not fit the schema ({exc})"[:300]}
    delta = ctx.memory.update_post_graph(path, extracted)
    return {
        "path": path,
        "entities": [e.name for e in extracted],
        "added": delta.entities_added,
        "removed_entities": delta.entities_removed,
        **delta.counts(),
    }


def _summary_lines(ctx: SkillContext, totals: dict[str, int], done: int, skipped: int) -> str:
    return ctx.say(
        f"处理了 {done} 篇文章（{skipped} 篇未变化，已跳过）："
        f"新增实体 {totals['entities_added']} 个，"
        f"移除实体 {totals['entities_removed']} 个；新增链接 {totals['links_added']} 条，"
        f"移除链接 {totals['links_removed']} 条。",
        f"Processed {done} posts ({skipped} unchanged, skipped): "
        f"{totals['entities_added']} entities added, {totals['entities_removed']} removed; "
        f"{totals['links_added']} links added, {totals['links_removed']} removed.",
    )


@skill(
    name="UpdateGraph",
    intents=["UPDATE_GRAPH"],
    params=UpdateGraphParams,
    description="Update the knowledge graph (entities and links) of one post or the whole blog",
)
@friendly_errors
async def update_graph(ctx: SkillContext, params: UpdateGraphParams) -> SkillResult:
    ctx.progress(1, 3, ctx.say("扫描文章", "Scanning the posts"))
    only = ctx.files.relative(params.path) if params.path else None

    async def scan() -> dict[str, Any]:
        report = await refresh_memory(ctx)
        structural = ctx.memory.sync_graph()
        posts = ctx.memory.posts.all_posts()
        if only is not None:
            posts = [p for p in posts if p.path == only]
        todo: list[str] = []
        for post in posts:
            state = ctx.memory.graph.post_state(post.path)
            if params.force or state is None or state != (post.hash, True):
                todo.append(post.path)
        return {
            "todo": todo,
            "skipped": len(posts) - len(todo),
            "structural": structural.counts(),
            "errors": report["errors"],
            "found": bool(posts),
        }

    scanned = await ctx.step("scan", scan)
    if only is not None and not scanned["found"]:
        return failure(
            ctx,
            f"博客索引里没有 `{only}` 这篇文章。",
            f"There is no post `{only}` in the blog's index.",
            error="not_found",
        )
    totals = dict(scanned["structural"])
    todo: list[str] = scanned["todo"]
    results: list[dict[str, Any]] = []
    for i, path in enumerate(todo, 1):
        ctx.progress(
            2, 3, ctx.say(f"提取实体 {i}/{len(todo)}", f"Extracting entities {i}/{len(todo)}"), path
        )
        result = await ctx.step(f"extract:{path}", functools.partial(_extract_and_apply, ctx, path))
        results.append(result)
        for key in totals:
            totals[key] += int(result.get(key, 0))
    ctx.progress(3, 3, ctx.say("完成", "Done"))
    errors = [r for r in results if "error" in r] + [
        {"path": p, "error": reason} for p, reason in scanned["errors"]
    ]
    message = _summary_lines(ctx, totals, len(results), scanned["skipped"])
    added = sorted({name for r in results for name in r.get("added", [])})
    if added:
        shown = "、".join(added[:20]) if ctx.input.language == "zh" else ", ".join(added[:20])
        message += ctx.say(f"\n\n新实体：{shown}", f"\n\nNew entities: {shown}")
    if errors:
        lines = "\n".join(f"- `{e['path']}`: {e['error']}" for e in errors[:20])
        message += ctx.say(
            f"\n\n以下文章未能处理：\n{lines}", f"\n\nThese posts were skipped:\n{lines}"
        )
    return SkillResult(
        message=message,
        data={**totals, "posts": results, "skipped": scanned["skipped"], "errors": errors},
    )
