"""WriteArticle: related posts -> outline -> sections -> frontmatter -> save -> entities.

Every model call and the save are durable steps: a task resumed after a crash does not pay
for its outline or finished sections again, and the save is idempotent (the composed text is
journalled before it is written; a file already holding exactly that text counts as saved).
Fixes over the seed: the frontmatter is built with python-frontmatter (a title with a colon or
quote stays valid YAML), a taken file name gets a ``-2`` suffix instead of being overwritten,
an abort raises (through ``ctx.step`` and the model call) instead of returning half a result.
"""

from __future__ import annotations

import asyncio
import functools
import re
from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel, Field

from skillrt import SkillContext, SkillResult, skill
from skillrt.exceptions import StructuredOutputError
from skillrt.storage.markdown import word_count

from .common import (
    MAX_TOPIC_CHARS,
    failure,
    friendly_errors,
    new_post_text,
    post_path,
    refresh_memory,
    save_new_file,
    slug_for,
    today,
)
from .lengths import ArticleLength, parse_length, strip_length_words
from .prompts import (
    OUTLINE_SYSTEM,
    SECTION_SYSTEM,
    SECTION_TAIL_CHARS,
    bullet_list,
    clip,
    language_name,
    messages,
    related_block,
    strip_fences,
)
from .update_graph import extract_entities

__all__ = ["Outline", "OutlineSection", "WriteParams", "write_article"]

TOTAL_STEPS = 5
CONTEXT_POSTS = 4
MAX_SECTIONS = 8
MAX_TITLE_CHARS = 120
MAX_TAGS = 6
MAX_OUTLINE_CHARS = 4000
MAX_SECTION_CHARS = 20_000
_PATHISH = re.compile(r"[/\\]|\.(?:md|markdown|mdx)\b|\[\[|\]\(", re.I)
_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)、])\s+(.+)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_EMPTY_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*$")


class WriteParams(BaseModel):
    topic: str
    outline: str | None = None
    style: str | None = None
    length: str | None = None  # short | medium | long, or a number of words
    target_path: str | None = None
    extract_entities: bool = True
    similar: str | None = None  # set: like the session's focus ("another one like it")


class OutlineSection(BaseModel):
    heading: str = Field(min_length=1)
    points: list[str] = Field(default_factory=list)


class Outline(BaseModel):
    """The structured answer of the outline call."""

    title: str = Field(min_length=1)
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    sections: list[OutlineSection] = Field(min_length=1)


def article_length(params: WriteParams, request: str) -> ArticleLength:
    """The length asked for: the ``length`` parameter, else read from the request itself."""
    return parse_length(params.length) or parse_length(request) or ArticleLength()


def choose_title(proposed: str, topic: str, related: list[dict[str, str]]) -> str:
    """The article's title: the model's proposal only when it is built on the topic and is
    not a related post's title or path (a small model copies those); else the topic."""
    title = " ".join(str(proposed or "").split()).strip("#*\"'“”《》 ")
    folded = title.casefold()
    taken = {" ".join(r.get("title", "").split()).casefold() for r in related}
    taken |= {r.get("path", "").casefold() for r in related}
    if (
        title
        and len(title) <= MAX_TITLE_CHARS
        and " ".join(topic.split()).casefold() in folded
        and folded not in taken
        and not any(t and t in folded for t in taken if len(t) > len(topic))
        and not _PATHISH.search(title)
    ):
        return title
    return clip(topic[:1].upper() + topic[1:], MAX_TITLE_CHARS)


def outline_from_text(text: str, topic: str) -> dict[str, Any]:
    """An outline from Markdown (headings or list items; nested items become points)."""
    title = ""
    sections: list[dict[str, Any]] = []
    top_indent: int | None = None
    for line in clip(text, MAX_OUTLINE_CHARS).splitlines():
        heading = _HEADING.match(line)
        item = _LIST_ITEM.match(line)
        if heading and len(heading.group(1)) == 1 and not title and not sections:
            title = heading.group(2)
        elif heading:
            sections.append({"heading": heading.group(2), "points": []})
        elif item:
            indent = len(item.group(1).expandtabs(4))
            if top_indent is None:
                top_indent = indent
            if indent > top_indent and sections:
                sections[-1]["points"].append(item.group(2).strip())
            else:
                sections.append({"heading": item.group(2).strip(), "points": []})
        elif line.strip() and sections:
            sections[-1]["points"].append(line.strip())
    if not sections:
        sections = [{"heading": clip(topic, 120), "points": []}]
    return {"title": title or topic, "description": "", "tags": [], "sections": sections}


def _clean_outline(
    outline: dict[str, Any],
    topic: str,
    *,
    max_sections: int = MAX_SECTIONS,
    related: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    tags: list[str] = []
    for tag in outline.get("tags", []):
        tag = " ".join(str(tag).split()).lstrip("#")[:30]
        if tag and tag.casefold() not in {t.casefold() for t in tags}:
            tags.append(tag)
    sections = [
        {
            "heading": clip(str(s["heading"]).strip("# "), 120) or f"Part {i}",
            "points": [clip(str(p), 200) for p in s.get("points", [])][:8],
        }
        for i, s in enumerate(outline["sections"][: min(max_sections, MAX_SECTIONS)], 1)
    ]
    return {
        "title": choose_title(str(outline.get("title") or ""), topic, related or []),
        "description": clip(str(outline.get("description") or ""), 300),
        "tags": tags[:MAX_TAGS],
        "sections": sections,
    }


def outline_markdown(outline: dict[str, Any]) -> str:
    lines = [f"# {outline['title']}"]
    for section in outline["sections"]:
        lines.append(f"- {section['heading']}")
        lines.extend(f"  - {point}" for point in section["points"])
    return "\n".join(lines)


async def _find_related(
    ctx: SkillContext, topic: str, like: str | None = None
) -> list[dict[str, str]]:
    """Posts to link and quote; ``like`` (a post the new one should resemble) comes first."""
    await refresh_memory(ctx)
    related: list[dict[str, str]] = []
    model = ctx.memory.posts.get(like) if like else None
    if model is not None:
        stem = PurePosixPath(model.path).stem
        related.append(
            {
                "path": model.path,
                "title": model.title,
                "snippet": model.description or model.body[:300],
                "link": stem if ctx.memory.resolve_link(stem) == model.path else model.path,
            }
        )
    for hit in ctx.memory.posts.build_context(topic, k=CONTEXT_POSTS):
        if model is not None and hit.path == model.path:
            continue
        stem = PurePosixPath(hit.path).stem
        link = stem if ctx.memory.resolve_link(stem) == hit.path else hit.path.rsplit(".", 1)[0]
        related.append({"path": hit.path, "title": hit.title, "snippet": hit.snippet, "link": link})
    return related


async def _make_outline(
    ctx: SkillContext,
    topic: str,
    params: WriteParams,
    related: list[dict[str, str]],
    lang: str,
    length: ArticleLength,
) -> dict[str, Any]:
    most = length.max_sections()
    if params.outline and params.outline.strip():
        given = outline_from_text(params.outline, topic)
        cleaned = _clean_outline(given, topic, max_sections=MAX_SECTIONS, related=related)
        return {**cleaned, "title": clip(given["title"], MAX_TITLE_CHARS)}  # the user's own
    prompt = f"Topic: {topic}\nStyle: {clip(params.style or 'technical blog post', 100)}\n"
    if params.similar and related:
        prompt += (
            f"Model the structure and tone on the post {clip(related[0]['title'], 200)!r} "
            "(the first related post below), on the new topic.\n"
        )
    if related:
        prompt += (
            "\nRelated posts already on the blog (build on them, do not repeat them):\n"
            + related_block(related, with_links=False)
        )
    system = OUTLINE_SYSTEM.format(
        lang=language_name(lang), sections=f"{length.min_sections()} to {most}"
    )
    try:
        result = await ctx.llm.chat(  # a title, tags and a few lines per section
            messages(system, prompt), response_model=Outline, max_tokens=200 + 100 * most
        )
        outline = result.parsed_as(Outline).model_dump()
    except StructuredOutputError as exc:
        outline = outline_from_text(exc.raw, topic)  # a Markdown outline is still an outline
    return _clean_outline(outline, topic, max_sections=most, related=related)


def _clean_section(text: str, heading: str) -> str:
    text = strip_fences(text)
    lines = [line for line in text.strip().splitlines() if not _EMPTY_HEADING.match(line)]
    while lines and (not lines[0].strip() or _HEADING.match(lines[0])):
        lines.pop(0)  # the model repeated the title or the heading
    return clip("\n".join(lines), MAX_SECTION_CHARS) or heading


async def _write_section(
    ctx: SkillContext,
    *,
    topic: str,
    outline: dict[str, Any],
    index: int,
    previous: str,
    related: list[dict[str, str]],
    style: str,
    words: int,
    lang: str,
) -> str:
    section = outline["sections"][index]
    prompt = (
        f"Article: {outline['title']} (topic: {topic}; style: {style})\n\n"
        f"Outline:\n{outline_markdown(outline)}\n\n"
        f"Write section {index + 1} of {len(outline['sections'])}: {section['heading']}\n"
        f"Key points:\n{bullet_list(section['points']) or '- (your choice)'}\n"
        f"Length: about {words} {'characters' if lang == 'zh' else 'words'}.\n"
    )
    if related:
        prompt += "\nRelated posts you may link:\n" + related_block(related)
    if previous:
        prompt += f"\n\nThe previous section ended with:\n{previous[-SECTION_TAIL_CHARS:]}"
    system = SECTION_SYSTEM.format(lang=language_name(lang))
    unit = 3 if lang == "zh" else 2
    result = await ctx.llm.chat(messages(system, prompt), max_tokens=max(256, words * unit))
    return _clean_section(result.content, section["heading"])


def _compose(
    ctx: SkillContext,
    outline: dict[str, Any],
    bodies: list[str],
    related: list[dict[str, str]],
    path: str,
) -> dict[str, Any]:
    body = "\n\n".join(
        f"## {section['heading']}\n\n{text}"
        for section, text in zip(outline["sections"], bodies, strict=True)
    )
    metadata: dict[str, Any] = {"title": outline["title"], "date": today()}
    if outline["description"]:
        metadata["description"] = outline["description"]
    metadata["tags"] = outline["tags"]
    metadata["wikiLinks"] = [post["link"] for post in related]
    return {
        "path": path,
        "text": new_post_text(metadata, body),
        "word_count": word_count(body),
    }


async def _update_entities(
    ctx: SkillContext, path: str, outline: dict[str, Any], body: str, extract: bool
) -> dict[str, Any]:
    report = await asyncio.to_thread(ctx.memory.posts.refresh)
    extracted = None
    error = None
    if extract:
        try:
            extracted = await extract_entities(ctx, outline["title"], body)
        except StructuredOutputError as exc:
            error = f"entity extraction failed: {exc}"[:300]
    delta = ctx.memory.update_post_graph(path, extracted)  # the new post: links and mentions
    delta += ctx.memory.sync_graph(relink=bool(report.added or report.removed))  # links to it
    return {
        **delta.counts(),
        "entities": [e.name for e in extracted or []],
        "error": error,
    }


def _reply(
    ctx: SkillContext,
    *,
    title: str,
    path: str,
    wanted: str,
    words: int,
    outline: dict[str, Any],
    related: list[dict[str, str]],
    graph: dict[str, Any],
) -> str:
    say = ctx.say
    text = say(
        f"已写好文章《{title}》，保存在 `{path}`（约 {words} 字）。",
        f"Wrote “{title}” and saved it to `{path}` ({words} words).",
    )
    if path != wanted:
        text += say(f"`{wanted}` 已存在，所以换了一个文件名。", f" `{wanted}` already existed.")
    headings = "\n".join(f"- {s['heading']}" for s in outline["sections"])
    text += say(f"\n\n**大纲**\n{headings}", f"\n\n**Outline**\n{headings}")
    if related:
        links = "\n".join(f"- [{r['title']}]({r['path']})" for r in related)
        text += say(
            f"\n\n**关联的文章**（已写入 wikiLinks）\n{links}", f"\n\n**Linked posts**\n{links}"
        )
    text += say(
        f"\n\n知识图谱：新增实体 {graph['entities_added']} 个，"
        f"新增链接 {graph['links_added']} 条。",
        f"\n\nKnowledge graph: {graph['entities_added']} entities and "
        f"{graph['links_added']} links added.",
    )
    return text


@skill(
    name="WriteArticle",
    intents=["WRITE_ARTICLE"],
    params=WriteParams,
    description="Write a new article on a topic, linked to related posts",
)
@friendly_errors
async def write_article(ctx: SkillContext, params: WriteParams) -> SkillResult:
    say = ctx.say
    topic = strip_length_words(" ".join(params.topic.split()))
    if not topic:
        return failure(ctx, "请告诉我文章的主题。", "Please tell me the article's topic.")
    if len(topic) > MAX_TOPIC_CHARS:
        return failure(
            ctx,
            f"主题太长了（{len(topic)} 个字符，最多 {MAX_TOPIC_CHARS}）。请用一句话说明主题；"
            "长的资料可以先保存成文件，再让我总结或参考它。",
            f"That topic is too long ({len(topic)} characters; at most {MAX_TOPIC_CHARS}). "
            "Give the topic in a sentence; save long material to a file and ask me to "
            "summarise or use it.",
            error="topic_too_long",
        )
    lang = ctx.input.language
    length = article_length(params, ctx.input.text)
    style = clip(params.style or say("技术博客", "technical blog post"), 100)
    wanted = post_path(ctx, params.target_path, slug_for(topic, f"post-{ctx.task_id[:8]}"))

    ctx.progress(1, TOTAL_STEPS, say("查找相关文章", "Finding related posts"))
    like = ctx.conversation.focus if params.similar else None
    related: list[dict[str, str]] = await ctx.step(
        "context", lambda: _find_related(ctx, topic, like)
    )

    ctx.progress(2, TOTAL_STEPS, say("生成大纲", "Drafting the outline"))
    outline: dict[str, Any] = await ctx.step(
        "outline", lambda: _make_outline(ctx, topic, params, related, lang, length)
    )
    sections = outline["sections"]
    words = length.words_per_section(lang, len(sections))

    bodies: list[str] = []
    for i, section in enumerate(sections):
        ctx.progress(
            3,
            TOTAL_STEPS,
            say(f"撰写第 {i + 1}/{len(sections)} 节", f"Writing section {i + 1}/{len(sections)}"),
            section["heading"],
        )
        previous = bodies[-1] if bodies else ""
        body: str = await ctx.step(
            f"section:{i + 1}",
            functools.partial(
                _write_section,
                ctx,
                topic=topic,
                outline=outline,
                index=i,
                previous=previous,
                related=related,
                style=style,
                words=words,
                lang=lang,
            ),
        )
        bodies.append(body)

    ctx.progress(4, TOTAL_STEPS, say("保存文章", "Saving the article"))
    doc: dict[str, Any] = await ctx.step(
        "compose", lambda: _compose(ctx, outline, bodies, related, wanted)
    )
    saved: dict[str, str] = await ctx.step(
        "save", lambda: asyncio.to_thread(save_new_file, ctx, doc["path"], doc["text"])
    )
    ctx.logger.info("agent.file.saved", path=saved["path"], hash=saved["hash"])

    ctx.progress(5, TOTAL_STEPS, say("更新知识图谱", "Updating the knowledge graph"))
    graph: dict[str, Any] = await ctx.step(
        "entities",
        lambda: _update_entities(
            ctx, saved["path"], outline, "\n\n".join(bodies), params.extract_entities
        ),
    )
    next_steps = [
        say("润色或扩写某一节", "Polish or expand a section"),
        say("补充代码示例", "Add code examples"),
        say("写一篇相关的文章", "Write a related article"),
    ]
    return SkillResult(
        message=_reply(
            ctx,
            title=outline["title"],
            path=saved["path"],
            wanted=wanted,
            words=doc["word_count"],
            outline=outline,
            related=related,
            graph=graph,
        ),
        data={
            "path": saved["path"],
            "hash": saved["hash"],
            "title": outline["title"],
            "outline": outline_markdown(outline),
            "sections": [s["heading"] for s in sections],
            "tags": outline["tags"],
            "word_count": doc["word_count"],
            "length": length.describe(),
            "related": [r["path"] for r in related],
            "wiki_links": [r["link"] for r in related],
            "graph": graph,
        },
        next_steps=next_steps,
    )
