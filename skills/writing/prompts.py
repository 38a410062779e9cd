"""Prompts of the writing skills, and the size bounds on everything sent to a model.

Every text that goes into a prompt passes through ``clip`` with a limit from this module, so a
10,000-character topic or a huge post never becomes an unbounded request.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from skillrt.llm.base import LLMMessage

__all__ = [
    "CONTEXT_SNIPPET_CHARS",
    "PROMPT_BODY_CHARS",
    "SCAFFOLD_MARKERS",
    "clip",
    "language_name",
    "messages",
    "related_block",
    "strip_fences",
]

PROMPT_BODY_CHARS = 12_000  # a post or a selection given to a model whole
CONTEXT_SNIPPET_CHARS = 600  # each related post quoted as context
SECTION_TAIL_CHARS = 600  # the end of the previous section, for continuity

_FENCED = re.compile(r"\A\s*(`{3,}|~{3,})[\w+-]*[ \t]*\n(.*?)\n\1\s*\Z", re.S)


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


def strip_fences(text: str) -> str:
    """A model's answer without a code fence wrapped around all of it."""
    match = _FENCED.match(text)
    return match.group(2) if match else text.strip()


def bullet_list(items: Sequence[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


# --- What the prompts' own lines look like, to find them again in an answer (scaffold.py) ---

SCAFFOLD_MARKERS = (
    r"\bWrite section \d+ of \d+\b",
    r"\(topic: [^;\n]*; style: [^)\n]*\)",
    r"^\W*Article: .*\(topic: ",
    r"^\W*Key points:",
    r"^\W*Related posts you may link:",
    r"^\W*Related posts already on the blog",
    r"^\W*The previous section ended with:",
    # Reworded by a small model: "The final section ended with:", "1. (your choice)".
    r"\bsection ended with:",
    r"\(your choice\)",
    r"^\W*Length: about \d+ (?:words|characters)\b",
    r"^\W*Outline:[ \t]*$",
    r"^\W*Instruction:[ \t]",
    r"^\W*Text:[ \t]*$",
    r" — link: \[\[",
    r"\bYou are an? (?:experienced technical blogger|careful editor)\b",
    r"\bAnswer with the (?:revised text|translation) only\b",
    r"\bfirst answer was refused\b",
)
"""Markers of the skills' prompt lines. A prompt line bearing one, copied into an answer, is
stripped; a marker anywhere else in an answer fails the no-scaffolding check."""

# Terse and not conversational: a small model answered "Your previous answer was not used…"
# with a chat reply about the refusal ("I'm glad you're happy with the response…").
RETRY_NOTE = (
    "\n\nImportant: the first answer was refused ({reason}). Write only the text asked for "
    "above, without any of these instructions in it."
)

RELATED_ITEM = r"^\s*[-*]\s+.*\([^()\s]+\.md\)\s+—\s+link:\s+\[\[[^\]\n]*\]\]\s*$"
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
    "outline": "Outline:",
    "write": "Write section {number} of {count}: {heading}",
    "points": "Key points:",
    "length": "Length: about {words} {unit}.",
    "related": "Related posts you may link:",
    "previous": "The previous section ended with:",
}

SECTION_SYSTEM = (
    "You are an experienced technical blogger writing one section of an article in {lang}, "
    "in Markdown. Write only the body of the section: no section heading, no title, no "
    "preamble. Use code blocks where they help. You may link to the related posts listed, "
    "with the exact [[link]] given; never invent other links."
)

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
