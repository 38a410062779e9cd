"""UpdateGraph: the entity graph for one post or the whole blog, with LLM extraction.

Wikilinks and tags are read from the index on every refresh; this skill adds what only a
model can find: the entities a post talks about (structured output, ``Extraction``). One
durable step per batch of posts (``BATCH_POSTS`` posts or ``BATCH_SECONDS`` of extraction,
whichever comes first), so an interrupted run resumes after the last batch done and extracts
again at most one batch. Posts whose content and extraction are unchanged since the last run
are skipped unless ``force``.
"""

from __future__ import annotations

import time
from functools import partial

from pydantic import BaseModel, Field

from skillrt import Replies, SkillContext, SkillResult, skill
from skillrt.blog.graph import ExtractedEntity, Extraction, GraphDelta, entity_key, entity_name
from skillrt.exceptions import StructuredOutputError
from skillrt.skill.params import PostPath

from .common import refuse
from .prompts import EXTRACT_SYSTEM, PROMPT_BODY_CHARS, clip, messages

__all__ = [
    "Batch",
    "PostGraph",
    "Scan",
    "UpdateGraphParams",
    "extract_entities",
    "update_graph",
]

MAX_ENTITIES = 15
BATCH_POSTS = 16  # posts extracted in one durable step, at most
BATCH_SECONDS = 0.5  # a batch takes no new post after this much time
MAX_LISTED = 20
_QUOTE_MARKS = " \t\n\"'“”‘’「」.…"

REPLIES = Replies(
    {
        "scanning": ("扫描文章", "Scanning the posts"),
        "not_found": (
            "博客索引里没有 `{path}` 这篇文章。",
            "There is no post `{path}` in the blog's index.",
        ),
        "extracting": ("提取实体 {i}/{n}", "Extracting entities {i}/{n}"),
        "done": ("完成", "Done"),
        "summary": (
            "处理了 {done} 篇文章（{skipped} 篇未变化，已跳过）：新增实体 {entities_added} 个，"
            "移除实体 {entities_removed} 个；新增链接 {links_added} 条，"
            "移除链接 {links_removed} 条。",
            "Processed {done} posts ({skipped} unchanged, skipped): {entities_added} entities "
            "added, {entities_removed} removed; {links_added} links added, {links_removed} "
            "removed.",
        ),
        "new_entities": ("\n\n新实体：{names}", "\n\nNew entities: {names}"),
        "skipped_posts": (
            "\n\n以下文章未能处理：\n{lines}",
            "\n\nThese posts were skipped:\n{lines}",
        ),
    }
)


class UpdateGraphParams(BaseModel):
    path: PostPath = Field(default=None, description="One post to read again (default: all)")
    force: bool = Field(default=False, description="Read posts that did not change too")


class Scan(BaseModel):
    """What the scan found: the posts to extract, those skipped, the structural changes."""

    todo: list[str]
    skipped: int
    structural: dict[str, int]  # GraphDelta.counts() of the wikilinks and tags
    errors: list[tuple[str, str]]  # posts the index could not read: (path, reason)
    found: bool


class PostGraph(BaseModel):
    """One post's extraction: the entities found and what the graph gained or lost."""

    path: str
    removed: bool = False  # the post is gone: its part of the graph was dropped
    error: str | None = None
    entities: list[str] = []
    added: list[str] = []
    removed_entities: list[str] = []
    entities_added: int = 0
    entities_removed: int = 0
    links_added: int = 0
    links_removed: int = 0


class Batch(BaseModel):
    """One durable step's posts, in the order of ``Scan.todo``."""

    posts: list[PostGraph] = Field(min_length=1)  # else the run would wait on it forever


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
        key = entity_key(entity_name(entity.name))  # the graph's key: "Rust  Lang" is "rust lang"
        if key and key not in seen:
            seen.add(key)
            unique.append(_quoted(entity, f"{title}\n{body}"))
    return unique[:MAX_ENTITIES]


def _quoted(entity: ExtractedEntity, text: str) -> ExtractedEntity:
    """``entity`` with only the mentions the post has (whitespace, case and the quote marks
    around them aside: a Chinese quote cut by a line break has no space in the post): they
    are kept as the graph's evidence, and a model's quotes of another post, or of none, were
    kept as this one's."""
    said = "".join(text.split()).casefold()
    kept = [
        mention
        for mention in entity.mentions
        if (quote := "".join(mention.strip(_QUOTE_MARKS).split()).casefold()) and quote in said
    ]
    return entity.model_copy(update={"mentions": kept})


async def _extract(ctx: SkillContext, path: str) -> list[ExtractedEntity] | PostGraph | None:
    """A post's entities; None when the post is gone, its error when the model's answer never
    fit the schema."""
    post = ctx.memory.posts.get(path)
    if post is None:
        return None
    try:
        return await extract_entities(ctx, post.title, post.body)
    except StructuredOutputError as exc:
        error = f"the model's answer did not fit the schema ({exc})"[:300]
        return PostGraph(path=path, error=error)


def _apply(
    ctx: SkillContext, path: str, found: list[ExtractedEntity] | PostGraph | None
) -> PostGraph:
    """Write what ``_extract`` found into the graph (a post gone is dropped from it)."""
    if isinstance(found, PostGraph):
        return found
    if found is None:
        return _applied(path, ctx.memory.update_post_graph(path), removed=True)
    delta = ctx.memory.update_post_graph(path, found)
    return _applied(path, delta, entities=[e.name for e in found])


async def _extract_batch(ctx: SkillContext, todo: list[str], start: int) -> Batch:
    """Extract ``todo[start:]`` until ``BATCH_POSTS`` posts or ``BATCH_SECONDS`` are done (or
    the task is aborted), reporting progress post by post, then write the batch into the graph
    in one transaction. A step per post waited for the journal's fsync each time: 3 ms a post,
    most of a 3,000-note vault's 17 to 23 s when the model answers at once. The journal keeps
    the batch whole or not at all, so a crash extracts again at most one batch (the graph's
    writes are idempotent) and a resumed run takes the batches as they were journalled."""
    found: dict[str, list[ExtractedEntity] | PostGraph | None] = {}
    began = time.monotonic()
    for path in todo[start : start + BATCH_POSTS]:
        if found and (ctx.signal.aborted or time.monotonic() - began >= BATCH_SECONDS):
            break
        i = start + len(found) + 1
        ctx.progress(2, 3, ctx.reply("extracting", i=i, n=len(todo)), path)
        found[path] = await _extract(ctx, path)
    with ctx.memory.graph.batch():  # one commit for the batch's posts, not one a post
        posts = [_apply(ctx, path, entities) for path, entities in found.items()]
    return Batch(posts=posts)


def _applied(
    path: str, delta: GraphDelta, *, removed: bool = False, entities: list[str] | None = None
) -> PostGraph:
    return PostGraph(
        path=path,
        removed=removed,
        entities=entities or [],
        added=delta.entities_added,
        removed_entities=delta.entities_removed,
        entities_added=len(delta.entities_added),
        entities_removed=len(delta.entities_removed),
        links_added=len(delta.links_added),
        links_removed=len(delta.links_removed),
    )


def _named(ctx: SkillContext, only: str, paths: set[str]) -> str:
    """The post ``only`` names: its path, else what a ``[[only]]`` would link to (its file
    name, title or alias): "add rust-borrowing to the graph", as a vault names its notes, was
    "There is no post `rust-borrowing` in the blog's index"."""
    if only in paths:
        return only
    return ctx.memory.resolve_link(only) or only


def _scan(ctx: SkillContext, only: str | None, force: bool) -> Scan:
    """Re-index, bring wikilinks and tags up to date, and list the posts to extract (blocking
    I/O: a sync step)."""
    report, structural = ctx.memory.refresh_graph()
    posts = ctx.memory.posts.all_posts()
    if only is not None:
        only = _named(ctx, only, {p.path for p in posts})
        posts = [p for p in posts if p.path == only]
    states = ctx.memory.graph.post_states()  # one query, not one a post
    todo = [post.path for post in posts if force or states.get(post.path) != (post.hash, True)]
    return Scan(
        todo=todo,
        skipped=len(posts) - len(todo),
        structural=structural.counts(),
        errors=report.errors,
        found=bool(posts),
    )


def _message(
    ctx: SkillContext, totals: dict[str, int], results: list[PostGraph], scan: Scan
) -> str:
    message = ctx.reply("summary", done=len(results), skipped=scan.skipped, **totals)
    added = sorted({name for r in results for name in r.added})
    if added:
        names = ("、" if ctx.input.language == "zh" else ", ").join(added[:MAX_LISTED])
        message += ctx.reply("new_entities", names=names)
    errors = _errors(results, scan)
    if errors:
        lines = "\n".join(f"- `{e['path']}`: {e['error']}" for e in errors[:MAX_LISTED])
        message += ctx.reply("skipped_posts", lines=lines)
    return message


def _errors(results: list[PostGraph], scan: Scan) -> list[dict[str, str]]:
    failed = [{"path": r.path, "error": r.error} for r in results if r.error is not None]
    return failed + [{"path": path, "error": reason} for path, reason in scan.errors]


@skill(
    name="UpdateGraph",
    intents=["UPDATE_GRAPH"],
    params=UpdateGraphParams,
    description="Update the knowledge graph (entities and links) of one post or the whole blog",
    replies=REPLIES,
)
async def update_graph(ctx: SkillContext, params: UpdateGraphParams) -> SkillResult:
    ctx.progress(1, 3, ctx.reply("scanning"))
    only = ctx.files.relative(params.path) if params.path else None
    scan = await ctx.step("scan", partial(_scan, ctx, only, params.force), returns=Scan)
    if only is not None and not scan.found:
        return refuse(ctx, "not_found", path=only)
    totals = dict(scan.structural)
    results: list[PostGraph] = []
    while len(results) < len(scan.todo):
        start = len(results)
        extract = partial(_extract_batch, ctx, scan.todo, start)
        # named by its first post: a resumed run finds the batches where the first run cut them
        batch = await ctx.step(f"extract-batch:{scan.todo[start]}", extract, returns=Batch)
        results.extend(batch.posts)
    for result in results:
        for key in totals:
            totals[key] += getattr(result, key)
    ctx.progress(3, 3, ctx.reply("done"))
    return SkillResult(
        message=_message(ctx, totals, results, scan),
        data={
            **totals,
            "posts": [r.model_dump() for r in results],
            "skipped": scan.skipped,
            "errors": _errors(results, scan),
        },
    )
