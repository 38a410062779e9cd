"""WriteArticle: related posts -> outline -> sections -> frontmatter -> save -> entities.

Every model call and the save are durable steps, each returning a model (``RelatedPost``,
``Outline``, ``Draft``, ``Saved``, ``GraphUpdate``): a task resumed after a crash does not pay
for its outline or finished sections again, and the save is idempotent (the composed text is
journalled before it is written; a file already holding exactly that text counts as saved).
The frontmatter is built with python-frontmatter (a title with a colon or quote stays valid
YAML), a taken file name gets a ``-2`` suffix (nothing is overwritten), and an abort raises
(through ``ctx.step`` and the model call) rather than returning half a result.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import PurePosixPath
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from skillrt import Replies, SkillContext, SkillResult, skill
from skillrt.blog.frontmatter import strip_frontmatter
from skillrt.blog.markdown import word_count
from skillrt.blog.posts import Post, query_terms
from skillrt.blog.wikilinks import strip_code
from skillrt.exceptions import StructuredOutputError
from skillrt.skill.params import POST_DESCRIPTION, Chars, PostPath

from .checked import CHECKED, Checked, checked, quality_report, refuse_unchecked
from .checked import REPLIES as CHECK_REPLIES
from .checks import (
    Check,
    Generated,
    Verdict,
    language,
    language_share,
    no_scaffolding,
    not_cut_short,
    not_degenerate,
    not_refusing,
    reported_as,
    web_addresses,
    web_links,
    wikilinks,
)
from .common import (
    MAX_TOPIC_CHARS,
    Saved,
    post_path,
    save_new_file,
    slug_for,
)
from .languages import (
    LANGUAGE_REPLIES,
    LANGUAGES,
    asked_language,
    known_language,
    strip_asked_language,
)
from .lengths import ArticleLength, parse_length, strip_length_words
from .newpost import DRAFT_REPLIES, compose_new_post, draft_note
from .notes import without_notes
from .on_topic import MIN_TOLD_WORDS, _han_pairs, _prose, _stems, _words
from .parts import code_lines
from .prompts import (
    SECTION_TAIL_CHARS,
    article_prompts,
    bullet_list,
    clip,
    language_name,
    messages,
    related_block,
    strip_fences,
)
from .repeats import no_repeated_paragraphs, not_repetitive, said_before
from .scaffold import Scaffold
from .sections import (
    completed,
    fences_closed,
    repaired_sections,
    section_of,
    without_name_lines,
)
from .update_graph import extract_entities

__all__ = [
    "Draft",
    "GraphUpdate",
    "Outline",
    "OutlineSection",
    "RelatedPost",
    "WriteParams",
    "write_article",
]

TOTAL_STEPS = 5
RELATED_SHARE = 0.3  # of the best hit's score: a related post scores at least this much
CONTEXT_POSTS = 4
MAX_SECTIONS = 8
MAX_TITLE_CHARS = 120
MAX_TAGS = 6
MAX_OUTLINE_CHARS = 4000
MAX_SECTION_CHARS = 20_000
# A section cut off at the length limit, or where the model began to loop, ends at its last
# whole sentence only when that keeps a section's worth of words: a short text cut off is
# refused, as ``not_degenerate`` says.
MIN_COMPLETED_WORDS = 100
TOPIC_SCRIPT_SHARE = 0.5  # of a section's words in the topic's script: it is judged
_PATHISH = re.compile(r"[/\\]|\.(?:md|markdown|mdx)\b|\[\[|\]\(", re.I)
_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)、])\s+(.+)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
# Words and marks a title never ends with (it was cut off after them, at the structured
# answer's length cap): "… A Beginner's Guide to", "Rust ownership and", "Tips on Git:". "to",
# "for" and "on" only after a guide's word ("what to look for" is a whole title).
_DANGLING = re.compile(
    r"\s+(?:and|or|of|a|an|the|with|vs\.?|your|its|our|my)$|\s*[:：,，;；\-–—&(（]$"
    r"|\s*(?:的|和|与|及)$|\b(guide|intro|introduction|handbook|tutorial|primer|tips)\s+(?:to|for|on)$",
    re.I,
)
_EMPTY_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s*\d+(?:\.\d+)*[.)、:]?)*\s*$")
_CHARACTER_COUNTED = ("zh", "ja")  # lengths in characters, not words

REPLIES = (
    Replies(
        {
            "no_topic": ("请告诉我文章的主题。", "Please tell me the article's topic."),
            "topic_too_long": (
                "主题太长了（{chars} 个字符，最多 {limit}）。请用一句话说明主题；"
                "长的资料可以先保存成文件，再让我总结或参考它。",
                "That topic is too long ({chars} characters; at most {limit}). Give the topic in "
                "a sentence; save long material to a file and ask me to summarise or use it.",
            ),
            "default_style": ("技术博客", "technical blog post"),
            "finding_related": ("查找相关文章", "Finding related posts"),
            "outlining": ("生成大纲", "Drafting the outline"),
            "writing_section": ("撰写第 {i}/{n} 节", "Writing section {i}/{n}"),
            "saving": ("保存文章", "Saving the article"),
            "updating_graph": ("更新知识图谱", "Updating the knowledge graph"),
            "wrote": (
                "已写好文章《{title}》，保存在 `{path}`（约 {words} 字）。",
                "Wrote “{title}” and saved it to `{path}` ({words} words).",
            ),
            "name_taken": (
                "`{wanted}` 已存在，所以换了一个文件名。",
                " `{wanted}` already existed.",
            ),
            "outline": ("\n\n**大纲**\n{headings}", "\n\n**Outline**\n{headings}"),
            "said_again": (
                "\n\n注意：这些小节只是把前面的内容一字不差地又说了一遍（模型的回答，原样保存），"
                "可以重写或删掉：{headings}。",
                "\n\nNote: these sections only say again, word for word, what an earlier one "
                "said (the model's answers, saved as written); rewrite or remove them: "
                "{headings}.",
            ),
            "stopped": (
                "\n\n这些小节在模型开始重复的地方结束，重复的部分没有保存：{headings}。",
                "\n\nThese sections end where the model began to repeat itself; the repetition "
                "was not saved: {headings}.",
            ),
            "outline_filled": (
                "\n\n模型大纲中有的章节标题什么也没说（占位符、数字、抄来的行或不是中文），"
                "这些标题是 skillrt 换上的：{headings}。",
                "\n\nSome of the model's section headings named nothing (a placeholder, digits, "
                "a copied line or another language); these headings are skillrt's: {headings}.",
            ),
            "linked": (
                "\n\n**关联的文章**（已写入 wikiLinks）\n{links}",
                "\n\n**Linked posts**\n{links}",
            ),
            "graph": (
                "\n\n知识图谱：新增实体 {entities_added} 个，新增链接 {links_added} 条。",
                "\n\nKnowledge graph: {entities_added} entities and {links_added} links added.",
            ),
            "polish": ("润色或扩写某一节", "Polish or expand a section"),
            "add_code": ("补充代码示例", "Add code examples"),
            "write_related": ("写一篇相关的文章", "Write a related article"),
        }
    )
    | CHECK_REPLIES
    | DRAFT_REPLIES
    | LANGUAGE_REPLIES
)

Topic = Annotated[
    str,
    Chars(MAX_TOPIC_CHARS, empty="no_topic", too_long="topic_too_long"),
    AfterValidator(strip_length_words),  # "a short post on X": the length is not the topic
    AfterValidator(strip_asked_language),  # "X, in Chinese": the language is not the topic
]


class WriteParams(BaseModel):
    topic: Topic = Field(description="What the article is about")
    outline: Annotated[str | None, Chars(squash=False)] = Field(
        default=None,
        description="Your own outline in Markdown (a # title, ## sections or list items)",
    )
    style: Annotated[str | None, Chars()] = Field(
        default=None, description="How it reads (default: a technical blog post)"
    )
    length: str | None = Field(  # short | medium | long, or a number of words
        default=None, description="short, medium, long, or a number of words"
    )
    target_path: PostPath = Field(
        default=None,
        description="Where to save it: " + POST_DESCRIPTION + " (default: named from its title)",
    )
    extract_entities: bool = Field(
        default=True, description="Add its people, projects and tools to the knowledge graph"
    )
    similar: str | None = Field(  # set: like the session's focus ("another one like it")
        default=None, description="Like the post the conversation is about, when set"
    )
    # The article's language as people name it (Chinese, 英文, ja); None: the one the request
    # asks for ("in Chinese", "用英文写"), else the request's own language.
    language: Annotated[str | None, Chars()] = Field(
        default=None, description="The article's language (default: the request's)"
    )


class RelatedPost(BaseModel):
    """A post of the blog the new one builds on and links to (``link``: its wikilink)."""

    path: str
    title: str
    snippet: str
    link: str


class OutlineSection(BaseModel):
    heading: str = Field(min_length=1)
    points: list[str] = Field(default_factory=list)


class Outline(BaseModel):
    """The structured answer of the outline call, and the outline the article follows."""

    title: str = Field(min_length=1)
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    sections: list[OutlineSection] = Field(min_length=1)
    # Headings skillrt put in place of section headings of the model's that named nothing
    # (``sections.repaired_sections``; not asked of the model: its JSON schema leaves it out).
    filled: SkipJsonSchema[list[str]] = Field(default_factory=list)


class Draft(BaseModel):
    """The composed post, journalled before it is saved (so the save is idempotent)."""

    path: str
    text: str
    word_count: int
    draft: bool = False


class GraphUpdate(BaseModel):
    """What the new post changed in the knowledge graph."""

    entities_added: int = 0
    entities_removed: int = 0
    links_added: int = 0
    links_removed: int = 0
    entities: list[str] = Field(default_factory=list)
    error: str | None = None


def article_language(params: WriteParams, request: str, request_language: str) -> str:
    """The code of the language the article is written in: the ``language`` parameter, else
    the one the request asks for, else the request's own. An unknown name is refused."""
    if params.language:
        return known_language(params.language)
    return asked_language(request) or request_language


def _language_label(code: str) -> str:
    """What the prompts call the article's language."""
    return language_name(code) if code in ("zh", "en") else LANGUAGES[code].prompt


def article_length(params: WriteParams, request: str) -> ArticleLength:
    """The length asked for: the ``length`` parameter, else read from the request itself."""
    return parse_length(params.length) or parse_length(request) or ArticleLength()


def choose_title(proposed: str, topic: str, related: Sequence[Mapping[str, str]]) -> str:
    """The article's title: the model's proposal only when it is built on the topic and is
    not a related post's title or path (a small model copies those); else the topic."""
    title = " ".join(str(proposed or "").split()).strip("#*\"'“”《》 ")
    while (cut := _DANGLING.sub(lambda m: m.group(1) or "", title)) != title:
        title = cut  # a title the grammar's length cap cut off: "… A Beginner's Guide to"
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


def outline_from_text(text: str, topic: str) -> Outline:
    """An outline from Markdown (headings or list items; nested items become points)."""
    title = ""
    sections: list[OutlineSection] = []
    top_indent: int | None = None
    for line in clip(text, MAX_OUTLINE_CHARS).splitlines():
        heading = _HEADING.match(line)
        item = _LIST_ITEM.match(line)
        if heading and len(heading.group(1)) == 1 and not title and not sections:
            title = heading.group(2)
        elif heading:
            sections.append(OutlineSection(heading=heading.group(2)))
        elif item and item.group(2).strip():
            indent = len(item.group(1).expandtabs(4))
            if top_indent is None:
                top_indent = indent
            if indent > top_indent and sections:
                sections[-1].points.append(item.group(2).strip())
            else:
                sections.append(OutlineSection(heading=item.group(2).strip()))
        elif line.strip() and sections:
            sections[-1].points.append(line.strip())
    if not sections:
        sections = [OutlineSection(heading=clip(topic, 120))]
    return Outline(title=title or topic, sections=sections)


def _clean_outline(
    outline: Outline, topic: str, *, max_sections: int, related: list[RelatedPost]
) -> Outline:
    """The outline within bounds: tags unique and short, at most ``max_sections`` sections of
    at most eight points, the title checked by ``choose_title``."""
    tags: list[str] = []
    for tag in outline.tags:
        tag = " ".join(tag.split()).lstrip("#")[:30]
        if tag and tag.casefold() not in {t.casefold() for t in tags}:
            tags.append(tag)
    sections = [
        OutlineSection(
            heading=clip(s.heading.strip("# "), 120) or f"Part {i}",
            points=[clip(p, 200) for p in s.points][:8],
        )
        for i, s in enumerate(outline.sections[: min(max_sections, MAX_SECTIONS)], 1)
    ]
    return Outline(
        title=choose_title(outline.title, topic, [r.model_dump() for r in related]),
        description=clip(outline.description, 300),
        tags=tags[:MAX_TAGS],
        sections=sections,
    )


def outline_markdown(outline: Outline) -> str:
    lines = [f"# {outline.title}"]
    for section in outline.sections:
        lines.append(f"- {section.heading}")
        lines.extend(f"  - {point}" for point in section.points)
    return "\n".join(lines)


def _find_related(ctx: SkillContext, topic: str, like: str | None) -> list[RelatedPost]:
    """Posts to link and quote; ``like`` (a post the new one should resemble) comes first.
    Refreshes the index first: blocking I/O, a sync step."""
    ctx.memory.refresh()
    related: list[RelatedPost] = []
    model = ctx.memory.posts.get(like) if like else None
    if model is not None:
        stem = PurePosixPath(model.path).stem
        related.append(
            RelatedPost(
                path=model.path,
                title=model.title,
                snippet=model.description or model.body[:300],
                link=stem if ctx.memory.resolve_link(stem) == model.path else model.path,
            )
        )
    drafts = ctx.config.drafts.in_answers  # drafts are not built on or linked until published
    hits = ctx.memory.posts.build_context(topic, k=CONTEXT_POSTS, drafts=drafts)
    best = max((hit.score for hit in hits), default=0.0)
    terms = query_terms(topic).all
    for hit in hits:
        if model is not None and hit.path == model.path:
            continue
        if hit.score < RELATED_SHARE * best:
            continue  # a word in common, not the topic (a Git post for "SQLite for web apps")
        if not _says_in_prose(ctx.memory.posts.get(hit.path), terms):
            continue  # its code's words only (see ``_says_in_prose``)
        stem = PurePosixPath(hit.path).stem
        link = stem if ctx.memory.resolve_link(stem) == hit.path else hit.path.rsplit(".", 1)[0]
        related.append(RelatedPost(path=hit.path, title=hit.title, snippet=hit.snippet, link=link))
    return related


def _says_in_prose(post: Post | None, terms: Sequence[str]) -> bool:
    """Whether a post found for a topic has one of its terms outside code: in its title, tags,
    description or prose. "tmux sessions" found the Chinese asyncio post, for its code's
    ``session`` alone; the embedded model, given it as related, titled the tmux article's
    first section "Python 中的各种编程实现方式", and the article linked it."""
    if post is None or not terms:
        return True
    said = " ".join((post.title, *post.tags, post.description, strip_code(post.body))).casefold()
    return any(term in said for term in terms)


def _outline_prompt(
    topic: str, params: WriteParams, related: list[RelatedPost], lang: str = "en"
) -> str:
    said = article_prompts(lang)
    prompt = said.topic.format(topic=topic, style=clip(params.style or "technical blog post", 100))
    if params.similar and related:
        prompt += (
            f"Model the structure and tone on the post {clip(related[0].title, 200)!r} "
            "(the first related post below), on the new topic.\n"
        )
    if related:
        prompt += f"\n{said.lines['outline_related']}\n" + related_block(
            [r.model_dump() for r in related], with_links=False
        )
    return prompt


async def _make_outline(
    ctx: SkillContext,
    topic: str,
    params: WriteParams,
    related: list[RelatedPost],
    length: ArticleLength,
    lang: str,
) -> Outline:
    if params.outline:  # the user's own: no model call, and their title
        given = outline_from_text(params.outline, topic)
        cleaned = _clean_outline(given, topic, max_sections=MAX_SECTIONS, related=related)
        return cleaned.model_copy(update={"title": clip(given.title, MAX_TITLE_CHARS)})
    most = length.max_sections()
    said = article_prompts(lang)
    system = said.outline.format(
        lang=_language_label(lang), sections=said.sections.format(length.min_sections(), most)
    )
    try:
        result = await ctx.llm.chat(  # a title, tags and a few lines per section
            messages(system, _outline_prompt(topic, params, related, lang)),
            response_model=Outline,
            max_tokens=200 + 100 * most,
        )
        outline = result.parsed_as(Outline)
    except StructuredOutputError as exc:
        outline = outline_from_text(exc.raw, topic)  # a Markdown outline is still an outline
    cleaned = _clean_outline(outline, topic, max_sections=most, related=related)
    sections, added = repaired_sections(cleaned.sections, lang, [r.title for r in related])
    return cleaned.model_copy(update={"sections": sections, "filled": added})


# A line of quote marks alone, outside code: SmolLM2-135M ended sections with `"` and `"""`,
# and wrote a section of nothing else.
_QUOTES_ALONE = re.compile(r"^\s*[\"'“”‘’「」『』]+\s*$")
# A list item with nothing in it: SmolLM2-135M ended a Chinese section with "4." and stopped.
_EMPTY_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)、])\s*$")


def _clean_section(text: str) -> str:
    """The section's text without empty or numbering-only headings ("### 7."), without lines
    of quote marks alone or list items with nothing in them ("4.") outside code, without a
    title or heading before it, and without the model's words about it
    (``notes.without_notes``); empty (for ``not_degenerate`` to refuse) when no line but a
    heading is left. Before, an empty section became its own heading, which passed."""
    lines = [
        line
        for _, line, code in code_lines(text.strip())
        if code
        or not (_EMPTY_HEADING.match(line) or _QUOTES_ALONE.match(line) or _EMPTY_ITEM.match(line))
    ]
    while lines and (not lines[0].strip() or _HEADING.match(lines[0])):
        lines.pop(0)  # the model repeated the title or the heading
    if all(not line.strip() or _HEADING.match(line) for line in lines):
        return ""
    lines = without_notes("\n".join(fences_closed(lines))).split("\n")
    return clip("\n".join(_without_dangling_lead(lines)), MAX_SECTION_CHARS)


# The last sentence of a text when it leads in to something that never came ("Here is an
# example:", "步骤如下："): the sentence before it ends at a stop, or the line starts it.
_DANGLING_LEAD = re.compile(r"(?:(?<=[.!?。！？])\s*|^)[^.!?。！？\n]*[:：]\s*$")


def _without_dangling_lead(lines: list[str]) -> list[str]:
    """``lines`` without a last sentence that announces what does not follow (the model
    stopped after "Here is a new one:"), when the section has other text to keep; a lead-in
    that is all the section says is left for the checks."""
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    if not lines or lines[-1].lstrip().startswith(("```", "~~~", "#", "|")):
        return lines
    found = _DANGLING_LEAD.search(lines[-1])
    if found is None:
        return lines
    kept = lines[:-1] + ([cut] if (cut := lines[-1][: found.start()].rstrip()) else [])
    while kept and not kept[-1].strip():
        kept = kept[:-1]
    prose = [line for line in kept if line.strip() and not _HEADING.match(line)]
    return kept if prose else lines


def _unit(lang: str) -> str:
    """What a section's length is counted in, for its prompt."""
    return "characters" if lang in _CHARACTER_COUNTED else "words"


def section_prompt(
    *,
    topic: str,
    outline: Outline,
    index: int,
    previous: str,
    related: list[RelatedPost],
    style: str,
    words: int,
    lang: str,
) -> str:
    section, line = outline.sections[index], article_prompts(lang).lines
    prompt = (
        line["article"].format(title=outline.title, topic=topic, style=style)
        + f"\n\n{line['outline']}\n{outline_markdown(outline)}\n\n"
        + line["write"].format(
            number=index + 1, count=len(outline.sections), heading=section.heading
        )
        + f"\n{line['points']}\n{bullet_list(section.points) or line['choice']}\n"
        + line["length"].format(words=words, unit=_unit(lang))
        + "\n"
    )
    if related:
        prompt += f"\n{line['related']}\n" + related_block([r.model_dump() for r in related])
    if previous:
        prompt += f"\n\n{line['previous']}\n{previous[-SECTION_TAIL_CHARS:]}"
    return prompt


def retry_prompt(
    *, topic: str, outline: Outline, index: int, style: str, words: int, lang: str
) -> str:
    """Section ``index`` asked for again, alone: the article's line, the section's heading and
    its length, without the outline, points, related posts and previous text that a small
    model copied into its first answer (the retry note with the reasons follows)."""
    line = article_prompts(lang).lines
    return (
        line["article"].format(title=outline.title, topic=topic, style=style)
        + "\n\n"
        + line["alone"].format(heading=outline.sections[index].heading)
        + "\n"
        + line["length"].format(words=words, unit=_unit(lang))
        + "\n"
    )


async def _write_section(
    ctx: SkillContext,
    prompts: tuple[str, str],
    outline: Outline,
    index: int,
    words: int,
    lang: str,
    note: str,
) -> Generated:
    """Section ``index``, written by the model: asked with the first of ``prompts``, and
    again (``note`` given) with the second, shorter one. Its own text is taken out of an
    answer that holds more (``section_of``: a small model writes the whole article again),
    and a loop or the length limit met after it, in another section, does not count against
    it. One cut off at the limit, or where the model began to loop, ends at its last whole
    sentence (``completed``) when that keeps most of it and ``MIN_COMPLETED_WORDS``: the
    guard already left the loop out, and the reply says the section stopped there."""
    system = article_prompts(lang).section.format(lang=_language_label(lang))
    unit = 3 if lang in _CHARACTER_COUNTED else 2
    limit = max(256, words * unit)
    prompt = prompts[1] if note else prompts[0]
    result = await ctx.llm.chat(messages(system, prompt + note), max_tokens=limit)
    # (a frontmatter block in front of it, "---\ntitle: …\n---", was saved in the body)
    answer, _ = strip_frontmatter(strip_fences(result.content))
    text, to_the_end = section_of(answer, outline, index)
    section = outline.sections[index]
    text = without_name_lines(text, [outline.title, section.heading], section.points)
    looped = result.truncated_repetition and to_the_end
    cut = result.usage.completion_tokens >= limit and to_the_end
    if (cut or looped) and (whole := completed(text, MIN_COMPLETED_WORDS)) is not None:
        return Generated(text=_clean_section(whole), stopped=looped)
    return Generated(text=_clean_section(text), looped=looped, cut=cut)


def about_the_topic(topic: str, *names: str) -> Check:
    """A section is about the article: of ``MIN_TOLD_WORDS`` words or more, it names a word of
    ``topic`` or ``names`` (the title, its heading and points; a word's inflections alike, in
    Chinese a pair of characters, as ``on_topic`` compares them). Asked for "Rust ownership",
    a model wrote both sections on cooking pasta, and every check passed: the article was
    saved and reported written. A section in a script the topic has no words in (a Chinese
    article on "caching") is not judged. Reported as ``not_degenerate`` (a text that says
    nothing on what it was asked), as Translate's ``has_words`` is: a report's checks are the
    ones they were."""
    said = "\n".join((topic, *names))
    stems, pairs = set(_stems(said)), _han_pairs(said)
    shown = ", ".join(dict.fromkeys(_words(said))) or said
    latin_topic, chinese_topic = bool(_stems(topic)), bool(_han_pairs(topic))

    def check(generated: Generated) -> Verdict:
        prose = _prose(generated.text)
        if word_count(prose) < MIN_TOLD_WORDS or stems & set(_stems(prose)):
            return Verdict("not_degenerate", True)
        if pairs & _han_pairs(prose):
            return Verdict("not_degenerate", True)
        latin = latin_topic and language_share(prose, "en") >= TOPIC_SCRIPT_SHARE
        chinese = chinese_topic and language_share(prose, "zh") >= TOPIC_SCRIPT_SHARE
        if not (latin or chinese):  # (in another script than the topic: not judged)
            return Verdict("not_degenerate", True)
        return Verdict(
            "not_degenerate",
            False,
            f"it is about something else: no word of the topic, the title or the heading "
            f"({clip(shown, 80)}) is in it",
            zh=f"它写的是别的内容：主题、标题和小标题里的词（{clip(shown, 80)}）一个也没有出现",
        )

    return check


def section_checks(
    ctx: SkillContext,
    prompts: Sequence[str],
    fragment: str,
    previous: str,
    lang: str,
    earlier: Sequence[str] = (),
    about: Sequence[str] = (),
) -> list[Check]:
    """What each section's text must pass (see ``checks.py``), written in ``lang``. The end of
    the previous section is in the prompt but is the article's own text, not scaffolding: a
    line of it may recur; a whole paragraph of it, or of any section in ``earlier``, may not
    (``repeats.py``). ``prompts``: the section's (the first and the retry's); ``about``: what
    it is to be about (``about_the_topic``)."""
    system = article_prompts(lang).section.format(lang=_language_label(lang))
    return [
        no_scaffolding(Scaffold([system, *prompts], content=[previous], fragments=[fragment])),
        no_repeated_paragraphs(earlier),
        not_degenerate,
        not_repetitive,
        language(lang),  # a Chinese article asked for is not done in English
        about_the_topic(*about),
        # (a section "As an AI language model, I cannot write a full article…", and one that
        # stopped at "…the value is dropped, which", were saved and the article reported
        # written; under not_degenerate's name, as about_the_topic, for the report's sake)
        reported_as("not_degenerate", not_refusing(*prompts, ctx.input.text)),
        reported_as("not_degenerate", not_cut_short),
        wikilinks(lambda name: ctx.memory.resolve_link(name) is not None),
        web_links(web_addresses(*prompts, ctx.input.text)),  # no reference the model made up
    ]


async def _write_sections(
    ctx: SkillContext,
    topic: str,
    outline: Outline,
    related: list[RelatedPost],
    *,
    style: str,
    words: int,
    lang: str,
) -> list[Checked]:
    """Each section in its own durable step, each given the end of the one before, each
    checked (and asked again once) before the next; stops at a section that fails twice."""
    results: list[Checked] = []
    count = len(outline.sections)
    for i, section in enumerate(outline.sections):
        ctx.progress(
            3, TOTAL_STEPS, ctx.reply("writing_section", i=i + 1, n=count), section.heading
        )
        previous = results[-1].text if results else ""
        prompt = section_prompt(
            topic=topic,
            outline=outline,
            index=i,
            previous=previous,
            related=related,
            style=style,
            words=words,
            lang=lang,
        )
        again = retry_prompt(
            topic=topic, outline=outline, index=i, style=style, words=words, lang=lang
        )
        fragment = article_prompts(lang).lines["fragment"].format(topic=topic, style=style)
        earlier = [r.text for r in results]
        about = (topic, outline.title, section.heading, *section.points)
        checks = section_checks(ctx, (prompt, again), fragment, previous, lang, earlier, about)
        write = partial(_write_section, ctx, (prompt, again), outline, i, words, lang)
        retry = article_prompts(lang).retry
        result = await checked(ctx, f"section:{i + 1}", write, checks, retry=retry)
        results.append(result)
        if not result.passed:
            break
    return results


def _compose(
    ctx: SkillContext,
    target: str | None,
    slug: str,
    outline: Outline,
    bodies: list[str],
    related: list[RelatedPost],
    lang: str | None = None,
) -> Draft:
    """The post in the blog's style (format, keys, file name, folder; a draft when
    ``drafts.mark``), in ``lang``'s place on a site that declares it: blocking I/O, a sync
    step."""
    body = "\n\n".join(
        f"## {section.heading}\n\n{text}"
        for section, text in zip(outline.sections, bodies, strict=True)
    )
    post = compose_new_post(
        ctx,
        target=target,
        title=outline.title,
        slug=slug,
        body=body,
        tags=outline.tags,
        description=outline.description,
        links=[post.link for post in related],
        language=lang,
    )
    return Draft(path=post.path, text=post.text, word_count=word_count(body), draft=post.draft)


async def _update_entities(
    ctx: SkillContext, path: str, title: str, body: str, extract: bool
) -> GraphUpdate:
    """Index the new post and add it to the graph: its links, and (``extract``) the entities
    the model finds in it."""
    report = await asyncio.to_thread(ctx.memory.posts.refresh)  # inside an async step
    extracted = None
    error = None
    if extract:
        try:
            extracted = await extract_entities(ctx, title, body)
        except StructuredOutputError as exc:
            error = f"entity extraction failed: {exc}"[:300]
    delta = ctx.memory.update_post_graph(path, extracted)  # the new post: links and mentions
    delta += ctx.memory.sync_graph(changed=report.updated)  # posts added or removed by hand
    return GraphUpdate(**delta.counts(), entities=[e.name for e in extracted or []], error=error)


def _sections_said_again(outline: Outline, sections: Sequence[Checked]) -> list[str]:
    """The headings of the sections that say again, whole, what an earlier one said
    (``said_before``): the reply names them. (They are saved as written: a section's text is
    the model's answer for it.)"""
    return [
        heading.heading
        for i, (heading, section) in enumerate(zip(outline.sections, sections, strict=True))
        if i and said_before(section.text, [s.text for s in sections[:i]])
    ]


def _stopped(outline: Outline, sections: Sequence[Checked]) -> list[str]:
    """The headings of the sections that end where the model began to loop."""
    return [s.heading for s, done in zip(outline.sections, sections, strict=True) if done.stopped]


def _message(
    ctx: SkillContext,
    outline: Outline,
    draft: Draft,
    saved: Saved,
    related: list[RelatedPost],
    graph: GraphUpdate,
    stopped: Sequence[str] = (),
    said_again: Sequence[str] = (),
) -> str:
    """The reply: where the article went, its outline, the posts it links, the graph."""
    text = ctx.reply("wrote", title=outline.title, path=saved.path, words=draft.word_count)
    if saved.path != draft.path:
        text += ctx.reply("name_taken", wanted=draft.path)
    text += ctx.reply("outline", headings="\n".join(f"- {s.heading}" for s in outline.sections))
    if outline.filled:
        text += ctx.reply("outline_filled", headings=", ".join(outline.filled))
    if stopped:
        text += ctx.reply("stopped", headings=", ".join(stopped))
    if said_again:
        text += ctx.reply("said_again", headings=", ".join(said_again))
    if related:
        text += ctx.reply("linked", links="\n".join(f"- [{r.title}]({r.path})" for r in related))
    return text + ctx.reply("graph", **graph.model_dump()) + draft_note(ctx, saved.path, draft.text)


@skill(
    name="WriteArticle",
    intents=["WRITE_ARTICLE"],
    params=WriteParams,
    description="Write a new article on a topic, linked to related posts",
    replies=REPLIES,
)
async def write_article(ctx: SkillContext, params: WriteParams) -> SkillResult:
    topic = params.topic
    lang = article_language(params, ctx.input.text, ctx.input.language)
    length = article_length(params, ctx.input.text)
    slug = await slug_for(topic, f"post-{ctx.task_id[:8]}")
    post_path(ctx, params.target_path, slug)  # a path out of the blog is refused at once

    ctx.progress(1, TOTAL_STEPS, ctx.reply("finding_related"))
    like = ctx.conversation.focus if params.similar else None
    find = partial(_find_related, ctx, topic, like)
    related = await ctx.step("context", find, returns=list[RelatedPost])

    ctx.progress(2, TOTAL_STEPS, ctx.reply("outlining"))
    draft_outline = partial(_make_outline, ctx, topic, params, related, length, lang)
    outline = await ctx.step("outline", draft_outline, returns=Outline)
    sections = await _write_sections(
        ctx,
        topic,
        outline,
        related,
        style=clip(params.style or ctx.reply("default_style"), 100),
        words=length.words_per_section(lang, len(outline.sections)),
        lang=lang,
    )
    if not sections[-1].passed:  # nothing is saved: the reply shows the model's text and why
        return refuse_unchecked(ctx, sections[-1], title=outline.title)
    said_again = _sections_said_again(outline, sections)
    bodies = [s.text for s in sections]

    ctx.progress(4, TOTAL_STEPS, ctx.reply("saving"))
    compose = partial(_compose, ctx, params.target_path, slug, outline, bodies, related, lang)
    draft = await ctx.step("compose", compose, returns=Draft)
    save = partial(save_new_file, ctx, draft.path, draft.text)
    saved = await ctx.step("save", save, returns=Saved)  # ctx.files logs agent.file.saved

    ctx.progress(5, TOTAL_STEPS, ctx.reply("updating_graph"))
    body = "\n\n".join(bodies)
    update = partial(
        _update_entities, ctx, saved.path, outline.title, body, params.extract_entities
    )
    graph = await ctx.step("entities", update, returns=GraphUpdate)
    return SkillResult(
        message=_message(
            ctx, outline, draft, saved, related, graph, _stopped(outline, sections), said_again
        ),
        data={
            "path": saved.path,
            "hash": saved.hash,
            "title": outline.title,
            "outline": outline_markdown(outline),
            "sections": [s.heading for s in outline.sections],
            "filled_sections": outline.filled,
            "stopped_sections": _stopped(outline, sections),
            "said_again_sections": said_again,
            "tags": outline.tags,
            "word_count": draft.word_count,
            "language": lang,
            "draft": draft.draft,
            "length": length.describe(),
            "related": [r.path for r in related],
            "wiki_links": [r.link for r in related],
            "graph": graph.model_dump(),
            "checks": quality_report(sections),
            **CHECKED,
        },
        next_steps=[ctx.reply("polish"), ctx.reply("add_code"), ctx.reply("write_related")],
    )
