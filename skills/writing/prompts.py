"""Prompts of the writing skills, and the size bounds on everything sent to a model.

Every text that goes into a prompt passes through ``clip`` with a limit from this module, so a
10,000-character topic or a huge post never becomes an unbounded request.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from skillrt.llm.base import LLMMessage

__all__ = [
    "CONTEXT_SNIPPET_CHARS",
    "PROMPT_BODY_CHARS",
    "SCAFFOLD_MARKERS",
    "ArticlePrompts",
    "article_prompts",
    "clip",
    "code_block",
    "language_name",
    "messages",
    "related_block",
    "strip_fences",
]

PROMPT_BODY_CHARS = 12_000  # a post or a selection given to a model whole
CONTEXT_SNIPPET_CHARS = 600  # each related post quoted as context
SECTION_TAIL_CHARS = 600  # the end of the previous section, for continuity

_FENCED = re.compile(r"\A\s*(`{3,}|~{3,})([\w+-]*)[ \t]*\r?\n(.*?)\r?\n[ \t]*\1[ \t]*\s*\Z", re.S)
_FENCE_LINE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)[^`\n]*$")
_MARKDOWN_INFO = frozenset({"markdown", "md", "mdx"})


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters (at a line or word end when one is close)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    for sep in ("\n", "。", ". ", " "):
        at = cut.rfind(sep)
        if at >= limit * 0.8:
            cut = cut[: at + len(sep)]
            break
    return cut.rstrip() + " …"


def language_name(language: str) -> str:
    return "简体中文" if language == "zh" else "English"


def messages(system: str, user: str) -> list[LLMMessage]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def related_block(posts: Iterable[dict[str, str]], *, with_links: bool = True) -> str:
    """Related posts as a prompt block: title, the link name to use, a snippet."""
    lines: list[str] = []
    for post in posts:
        link = f" — link: [[{post['link']}]]" if with_links and post.get("link") else ""
        lines.append(f"- {clip(post['title'], 200)} ({post['path']}){link}")
        if post.get("snippet"):
            lines.append(f"  > {clip(post['snippet'], CONTEXT_SNIPPET_CHARS)}")
    return "\n".join(lines)


def code_block(text: str, info: str = "") -> str:
    """``text`` in a Markdown code block (``info`` after its opening fence) whose fence is
    longer than any run of backticks inside it, so that nothing in ``text`` closes it."""
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _fence_lines(text: str) -> list[tuple[str, str]]:
    """The fence lines of ``text``, in order: each one's fence (```` ``` ````, ``~~~~``) and
    info string (``bash``; "" on a bare fence, which may close a block)."""
    return [
        (m.group(1), m.group(2)) for line in text.splitlines() if (m := _FENCE_LINE.match(line))
    ]


def _closes(line: tuple[str, str], fence: str) -> bool:
    """Whether the fence line ``line`` closes a block opened with ``fence``."""
    mark, info = line
    return not info and mark[0] == fence[0] and len(mark) >= len(fence)


def _balanced(text: str) -> bool:
    """Whether every code block ``text`` opens, it closes too."""
    fence: str | None = None
    for line in _fence_lines(text):
        if fence is None:
            fence = line[0]
        elif _closes(line, fence):
            fence = None
    return fence is None


def _unwrapped(text: str) -> str | None:
    """What is inside the one code fence wrapped around all of ``text``, or None when there
    is none. The first fence and the last one are one pair only when nothing between them
    closes the first: a post that begins and ends with a code block (```` ```bash ````,
    prose, ```` ```bash ````) was taken as one block around it all, its prose as code. A
    ```` ```markdown ```` fence is a wrapper too around code blocks of its own (a small model
    does not lengthen its fence), as long as they are each closed."""
    match = _FENCED.match(text)
    if match is None:
        return None
    fence, info, inner = match.group(1), match.group(2).casefold(), match.group(3)
    closed = any(_closes(line, fence) for line in _fence_lines(inner))
    if closed and not (info in _MARKDOWN_INFO and _balanced(inner)):
        return None
    return inner


def _fenced_at_both_ends(text: str) -> bool:
    lines = text.strip().splitlines()
    return len(lines) >= 2 and all(_FENCE_LINE.match(line) for line in (lines[0], lines[-1]))


def strip_fences(text: str, sent: str = "") -> str:
    """A model's answer without a code fence wrapped around all of it, and without the blank
    space around it. ``sent``, the text the model was given: when that begins and ends with a
    fence itself (the user selected a code block), a fence around the answer is its own, and
    stays, unless the answer inside it begins and ends with one too (a fence around the code
    block). Stripped, a selected ```` ```bash ```` block was saved as prose, its fences gone."""
    inner = _unwrapped(text)
    if inner is None:
        return text.strip()
    if sent and _fenced_at_both_ends(sent) and not _fenced_at_both_ends(inner):
        return text.strip()
    return inner


def bullet_list(items: Sequence[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


# --- What the prompts' own lines look like, to find them again in an answer (scaffold.py) ---

SCAFFOLD_MARKERS = (
    r"\bWrite section \d+ of \d+\b",
    r"^\W*Write this section:",
    r"\(topic: [^;\n]*; style: [^)\n]*\)",
    r"^\W*Article: .*\(topic: ",
    # Its labels reworded or cut by a small model: "**Git 钩子；风格：技术博家…**", "文章：" alone.
    r"; style: ",
    r"^\W*Article:[ \t]*$",
    r"^\W*Key points:",
    r"^\W*Related posts you may link:",
    r"^\W*Related posts already on the blog",
    r"^\W*The previous section ended with:",
    # Reworded by a small model: "The final section ended with:", "1. (your choice)".
    r"\bsection ended with:",
    r"\(your choice\)",
    # "(topic: tea; style: technical blog post)" told as prose: "The article is about tea, …
    # The style of the article is technical and …" (the embedded model's article on tea)
    r"\bthe (?:style|tone) of (?:the|this) (?:article|post|blog post) is\b",
    r"^\W*Length: about \d+ (?:words|characters)\b",
    r"^\W*Outline:[ \t]*$",
    r"^\W*Instruction:[ \t]",
    r"^\W*Text:[ \t]*$",
    # A related post's line ("- Title (path) — link: [[name]]"), also cut short ("— link: [link]").
    r"\s[—–-]{1,2}\s*link:\s*\[",
    r"\bYou are an? (?:experienced technical blogger|careful editor)\b",
    r"\bAnswer with the (?:revised text|translation) only\b",
    r"\bfirst answer was refused\b",
    # The Chinese prompt lines (ARTICLE_ZH): an article asked for in Chinese.
    r"第\s*\d+\s*节（共\s*\d+\s*节）",
    r"^\W*请写这一节：",
    r"（主题：[^；\n]*；风格：[^）\n]*）",
    r"^\W*文章：.*（主题：",
    r"[;；]\s*风格[:：]",
    r"^\W*文章[:：][ \t]*$",
    r"^\W*要点：",
    r"^\W*可以链接的相关文章：",
    r"^\W*博客上已有的相关文章",
    r"^\W*上一节的结尾：",
    r"（自拟）",
    r"(?:这篇)?文章的风格是",
    r"^\W*篇幅：约\s*\d+\s*字",
    r"^\W*提纲：[ \t]*$",
    r"你是一位经验丰富的技术博主",
    r"第一次的回答没有被采用",
)
"""Markers of the skills' prompt lines. A prompt line bearing one, copied into an answer, is
stripped; a marker anywhere else in an answer fails the no-scaffolding check."""

# Terse and not conversational: a small model answered "Your previous answer was not used…"
# with a chat reply about the refusal ("I'm glad you're happy with the response…").
RETRY_NOTE = (
    "\n\nImportant: the first answer was refused ({reason}). Write only the text asked for "
    "above, without any of these instructions in it."
)

RELATED_ITEM = (  # also as a heading, its link cut short: "# Title (path.md) — link: [link]"
    r"^\s*(?:[-*]|#{1,6})\s+.*\([^()\s]+\.md\)\s+[—–-]{1,2}\s+link:\s+\[{1,2}[^\]\n]*\]{1,2}\s*$"
)
"""The shape of a ``related_block`` item: such a line in an answer, whatever its title or link,
is the prompt's list copied (an article never writes a post's path followed by "— link:")."""

# --- WriteArticle ----------------------------------------------------------------------------

OUTLINE_SYSTEM = (
    "You are an experienced technical blogger. Plan an article: a title, {sections} sections "
    "(a heading and a few key points each) and up to 5 short tags. The title names the topic "
    "in your own words; never reuse a related post's title. Write everything in {lang}. "
    'Answer with JSON only: {{"title": "...", "description": "one sentence", '
    '"tags": ["..."], "sections": [{{"heading": "...", "points": ["..."]}}]}}'
)

# The lines of a section's prompt (write.section_prompt). Each bears one of SCAFFOLD_MARKERS
# (tests/test_writing_checks.py checks it), so an echo of it is found in the answer.
SECTION_LINES = {
    "article": "Article: {title} (topic: {topic}; style: {style})",
    "fragment": "(topic: {topic}; style: {style})",
    "outline": "Outline:",
    "write": "Write section {number} of {count}: {heading}",
    "alone": "Write this section: {heading}",
    "points": "Key points:",
    "choice": "- (your choice)",
    "length": "Length: about {words} {unit}.",
    "related": "Related posts you may link:",
    "outline_related": "Related posts already on the blog (build on them, do not repeat them):",
    "previous": "The previous section ended with:",
}

SECTION_SYSTEM = (
    "You are an experienced technical blogger writing one section of an article in {lang}, "
    "in Markdown. Write only the body of the section: no section heading, no title, no "
    "preamble. Use code blocks where they help. You may link to the related posts listed, "
    "with the exact [[link]] given; never invent other links."
)


@dataclass(frozen=True, slots=True)
class ArticlePrompts:
    """The prompts of an article in one language: ``outline`` and ``section`` (systems, with
    ``{lang}`` and ``{sections}``), ``lines`` (as ``SECTION_LINES``), ``retry`` (as
    ``RETRY_NOTE``), ``sections`` (how "2 to 4" sections reads) and ``topic`` (the outline
    prompt's first lines)."""

    outline: str
    section: str
    lines: Mapping[str, str]
    retry: str
    sections: str
    topic: str


ARTICLE_EN = ArticlePrompts(
    OUTLINE_SYSTEM,
    SECTION_SYSTEM,
    SECTION_LINES,
    RETRY_NOTE,
    sections="{} to {}",
    topic="Topic: {topic}\nStyle: {style}\n",
)

# An article asked for in Chinese is asked for in Chinese. SmolLM2-135M, the embedded model,
# given the English prompts above with "in 简体中文", wrote English or echoed the prompt and the
# related posts in a loop, every time (stop 46, "写一篇关于 Rust 所有权的短文"); given
# Chinese ones, it writes Chinese. Each line bears one of SCAFFOLD_MARKERS too.
ARTICLE_ZH = ArticlePrompts(
    outline=(
        "你是一位经验丰富的技术博主。请为一篇文章列出提纲：一个标题、{sections} 个小节"
        "（每节一个小标题和几个要点）和最多 5 个简短的标签。标题用你自己的话点明主题，"
        "不要照搬相关文章的标题。全部用简体中文写。"
        '只用 JSON 回答：{{"title": "...", "description": "一句话简介", '
        '"tags": ["..."], "sections": [{{"heading": "...", "points": ["..."]}}]}}'
    ),
    section=(
        "你是一位经验丰富的技术博主，正在用简体中文写一篇文章中的一节，格式为 Markdown。"
        "只写这一节的正文：不要小节标题，不要文章标题，不要开场白。需要时使用代码块。"
        "可以用给出的 [[链接]] 链接到列出的相关文章；不要编造其他链接。"
    ),
    lines={
        "article": "文章：{title}（主题：{topic}；风格：{style}）",
        "fragment": "（主题：{topic}；风格：{style}）",
        "outline": "提纲：",
        "write": "请写第 {number} 节（共 {count} 节）：{heading}",
        "alone": "请写这一节：{heading}",
        "points": "要点：",
        "choice": "- （自拟）",
        "length": "篇幅：约 {words} 字。",
        "related": "可以链接的相关文章：",
        "outline_related": "博客上已有的相关文章（在它们的基础上写，不要重复）：",
        "previous": "上一节的结尾：",
    },
    retry="\n\n注意：第一次的回答没有被采用（{reason}）。只写上面要求的正文，不要包含这些说明。",
    sections="{} 到 {}",
    topic="主题：{topic}\n风格：{style}\n",
)


def article_prompts(lang: str) -> ArticlePrompts:
    """The prompts of an article in ``lang``: Chinese ones for Chinese, else the English ones
    (which name the language)."""
    return ARTICLE_ZH if lang == "zh" else ARTICLE_EN


# --- EditContent -----------------------------------------------------------------------------

EDIT_SYSTEM = (
    "You are a careful editor of Markdown blog posts. Apply the instruction to the text you "
    "are given and answer with the revised text only: no explanation, no code fence around "
    "it. Keep the Markdown structure, code blocks and [[wikilinks]] unless the instruction "
    "says otherwise. Keep the text's language unless asked to translate."
)


def edit_prompt(instruction: str, text: str) -> str:
    return f"Instruction: {instruction}\n\nText:\n{text}"


# --- Summarize -------------------------------------------------------------------------------

SUMMARY_PART_SYSTEM = (
    "Summarise this part of a longer text in {lang}: the main points as a short list, "
    "keeping names, numbers and conclusions. Answer with the summary only."
)
SUMMARY_COMBINE_SYSTEM = (
    "These are summaries of consecutive parts of one text. Combine them into one summary in "
    "{lang}: a one-sentence gist, then the key points as a list. No repetition, no preamble."
)
SUMMARY_SYSTEM = (
    "Summarise the text in {lang}: a one-sentence gist, then the key points as a short list. "
    "Answer with the summary only."
)

# --- AnswerQuestion --------------------------------------------------------------------------

NO_ANSWER = "NO_ANSWER"
ANSWER_SYSTEM = (
    "You answer questions about a blog using only the numbered sources, which are excerpts of "
    "its posts. Answer in {lang}. Cite every source you use with its Markdown link exactly as "
    "given, e.g. [Title](posts/x.md). Do not cite anything else and do not invent links. "
    f"If the sources do not contain the answer, reply with {NO_ANSWER} and nothing else."
)

GENERAL_SYSTEM = (
    "The author's blog has nothing on this question. Answer it briefly in {lang} from general "
    "knowledge, without citing or inventing any post or link. If you do not know, say so."
)

# --- CodeExplain -----------------------------------------------------------------------------

EXPLAIN_SYSTEM = (
    "You explain code to a blog's readers in {lang}: what it does, how, step by step, and any "
    "pitfalls. Use Markdown; quote short pieces of the code when you refer to them."
)

# --- UpdateGraph -----------------------------------------------------------------------------

EXTRACT_SYSTEM = (
    "Extract the important entities of a blog post: technologies, languages, tools, concepts, "
    "people, organisations. For each give its name as written in the post, a type (language, "
    "tool, concept, person, organization, library, other), a one-sentence description, and up "
    "to 3 short quotes from the post that mention it. At most 15 entities. Answer with JSON "
    'only: {"entities": [{"name": "...", "type": "...", "description": "...", '
    '"mentions": ["..."]}]}'
)
