"""A small model's article answers, taken apart: an outline without its empty headings, and
one section out of a whole article.

SmolLM2-135M (the embedded model), asked for an outline, answers with placeholder headings
(``git_rebase_description``), headings of digits ("2.1.0.4.6"), a related post's line copied
from the prompt, or points that repeat their heading ("1. What is a decorator?", "2. What is
a decorator?"...): such a heading is replaced in its place, such points are dropped. Asked
for one section, it writes the whole article again from its title: every heading, every
body. Before, the title's line and the other sections' text went into the section (or the
section was refused, the article with it); now the section is the text under its own
heading. Nothing of the text is invented: it is the model's, only cut. Asked for a Chinese
outline, it often answers in English ("Reflections on Rust 101"), and a section asked for
under an English heading comes back in English: for a Chinese article, a heading or point
of two or more Latin words and no Chinese is replaced or dropped too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from skillrt.blog.markdown import word_count

from .checks import HAN, _lines_and_code

if TYPE_CHECKING:
    from .write import Outline, OutlineSection

__all__ = [
    "FILLER_HEADINGS",
    "completed",
    "fences_closed",
    "repaired_sections",
    "section_of",
    "without_name_line",
    "without_name_lines",
]

# Headings put in place of a section of the model's outline whose heading names nothing (none
# of them names the topic: the section prompt does).
FILLER_HEADINGS = {
    "en": ("Overview", "How it works", "A worked example", "Pitfalls and tips"),
    "zh": ("概述", "工作原理", "示例", "注意事项"),
}

_MARKDOWN_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_BOLD_LINE = re.compile(r"^\s*(?:\*\*|__)(.+?)(?:\*\*|__)\s*:?\s*$")
_NUMBERING = re.compile(r"^\s*(?:\d+(?:\.\d+)*[.)、:]?|[-*+])\s+")
_LABEL = re.compile(
    r"^(?:(?:section|part|chapter|step)\s*\d+\s*[:.)\-–—]?\s+|title\s*[:：]\s*|"
    r"第\s*[\d一二三四五六七八九十]+\s*[节章部分]+\s*[:：、.]?\s*)",
    re.I,
)
# A heading copied from the prompt's list of related posts: "Rust 借用与引用 (posts/x.md)".
# A path (also cut short, "Hello, Jekyll (posts/2023-04-05-hello-jk": a related post's line
# copied as a heading), a wikilink or a Markdown link.
_PATH = re.compile(
    r"[/\\]\S*\.(?:md|markdown|mdx)\b|\[\[|\]\(|\((?:_?posts|_drafts|content|source)/", re.I
)
_PLACEHOLDER = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)+$", re.I)  # git_rebase_description
# A point that is a web address alone: the embedded model's outline of "tmux for remote work"
# gave "tmux.com", "tmux.io", "tmux.com/remote" (none of them real) as its points.
_ADDRESS = re.compile(
    r"^(?:https?://\S+|(?:www\.)?[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|co|ai|app|info|"
    r"blog|me)(?:\.[a-z]{2})?(?:/\S*)?)$",
    re.I,
)
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_MAX_HEADING_CHARS = 150
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
# A sentence's end: a full stop (and a closing quote or bracket) before a space or the end of
# the line; a Chinese one wherever it is (Chinese puts no space after it).
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)）」』*_`]*(?=\s|$)|[。！？][\"'”’)）」』*_`]*")


def _key(text: str) -> str:
    """``text`` compared loosely: case, punctuation, numbering, a label ("Section 2:",
    "Title:", "第二节") and spacing left out."""
    text = _LABEL.sub("", _NUMBERING.sub("", text.strip()))
    return " ".join(re.sub(r"[\W_]+", " ", text.casefold()).split())


def _web_address(point: str) -> bool:
    """Whether an outline point is a web address alone: one with a scheme, ``www.`` or a path,
    or a lowercase domain ("tmux.io"); "Fly.io" and "Render.com" name products."""
    text = _NUMBERING.sub("", point.strip())
    if not _ADDRESS.match(text):
        return False
    return "://" in text or "/" in text or text.lower().startswith("www.") or text == text.lower()


def _worded(key: str) -> bool:
    """Whether a heading or point has a word in it ("1.1.1.1.1." has none)."""
    return any(ch.isalpha() for ch in key)


def _foreign(text: str, lang: str) -> bool:
    """Whether a heading or point is in another language than the article's: of a Chinese
    article, two Latin words or more, and no Chinese ("Box 与 Rc" and "RefCell" are Chinese
    headings); of an article in a language written in Latin letters, more Chinese than Latin
    words, two characters counting one ("Python 中的各种编程实现方式" headed a section of an
    English article on tmux; "Saying 你好" is English)."""
    if lang == "zh":
        return not HAN.search(text) and len(_LATIN_WORD.findall(text)) >= 2
    if lang == "ja":
        return False
    han = len(HAN.findall(text))
    return han >= 4 and han / 2 > len(_LATIN_WORD.findall(text))


def repaired_sections(
    sections: Sequence[OutlineSection], lang: str, copied: Sequence[str] = ()
) -> tuple[list[OutlineSection], list[str]]:
    """A model's outline sections, each in its place: one that names something, with its
    distinct points that are not its heading again nor a web address alone; one that does
    not (a placeholder, no word, one named before, a related post's line with its path or
    its title (in ``copied``), one in another language than a Chinese article's:
    ``_foreign``) replaced by a heading of ``FILLER_HEADINGS``, or left as it was in a
    language without them. As many sections as the model gave, so as many calls. And the
    headings put in. (A section named like the article is kept: "Write section 1 of 1: Rust
    ownership" is a prompt the embedded model answers; "Overview" in its place, one it
    answered with the prompt's lines.)"""
    from .write import OutlineSection

    fillers = list(FILLER_HEADINGS.get(lang, ()))
    taken = {_key(s.heading) for s in sections}
    seen: set[str] = {_key(title) for title in copied}
    out: list[OutlineSection] = []
    added: list[str] = []
    for section in sections:
        heading = section.heading.strip()
        key = _key(heading)
        named = (
            _worded(key)
            and not _PLACEHOLDER.match(heading)
            and not _PATH.search(heading)
            and not _foreign(heading, lang)
        )
        if not named or key in seen:
            filler = next((h for h in fillers if _key(h) not in taken), None)
            if filler is None:
                out.append(section)
                continue
            taken.add(_key(filler))
            added.append(filler)
            out.append(OutlineSection(heading=filler))
            continue
        seen.add(key)
        points: list[str] = []
        said = {key}
        for point in section.points:
            point_key = _key(point)
            if (
                _worded(point_key)
                and point_key not in said
                and not _PLACEHOLDER.match(point)
                and not _web_address(point)
                and not _foreign(point, lang)
            ):
                said.add(point_key)
                points.append(point)
        out.append(OutlineSection(heading=heading, points=points))
    return out, added


def section_of(text: str, outline: Outline, index: int) -> tuple[str, bool]:
    """Section ``index``'s own text in ``text``, when the model wrote more than that section:
    the lines under its heading, up to the next heading at its level or above or the heading
    of another section or of the article; with no such heading, what comes before the first
    other section's heading, the article's title line left out. ``text`` as it is when it
    names no other part of the article. And whether that text runs to the answer's end (else
    a loop or the length limit the answer ran into came after it, in another section)."""
    own = _key(outline.sections[index].heading)
    others = {_key(s.heading) for i, s in enumerate(outline.sections) if i != index} - {own}
    title = _key(outline.title)
    lines = text.splitlines()
    marks = [(i, *mark) for i, line in enumerate(lines) if (mark := _heading_of(line))]
    if not any(key in (own, title) or key in others for _, _, key in marks):
        return text, True
    found = [m for m in marks if m[2] == own] or [
        m for m in marks if m[1] < 7 and m[2] not in others and _loosely(m[2], own)
    ][:1]  # "### Example" for "A worked example", when the model named it its own way
    # Under its heading (the first one with text under it: a section named like the article
    # shares its heading with the title's lines), else before the first other heading.
    starts = [(i + 1, level, key) for i, level, key in found] or [
        (_after_title(lines, title), 7, own)
    ]
    for start, level, key in starts:
        cut, end = _under(lines, marks, start, level, key, others, title)
        if cut:
            return cut, end == len(lines)
    return text, True


def _under(
    lines: list[str],
    marks: list[tuple[int, int, str]],
    start: int,
    level: int,
    own: str,
    others: set[str],
    title: str,
) -> tuple[str, int]:
    """The text from line ``start`` up to the next heading at ``level`` or above or of
    another section or of the article, the title's or the section's heading again left out
    at its top; and the line it ends before."""
    end = len(lines)
    for i, mark_level, key in marks:
        if i < start:
            continue
        if key in others or key == title or (key != own and mark_level <= level < 7):
            end = i
            break
    body = lines[start:end]
    while body and (not body[0].strip() or _key(body[0]) in (own, title)):
        body.pop(0)  # the title's line, or the section's heading again
    return "\n".join(body).strip(), end


def without_name_line(text: str, names: Sequence[str]) -> str:
    """``text`` without a first line that only says one of ``names`` (the section's heading,
    the article's title), when more follows: a small model's answer opens with "Rust 所有权",
    not as a heading, which ``section_of`` and the heading rules do not see."""
    first, _, rest = text.lstrip().partition("\n")
    return rest if rest.strip() and _key(first) in {_key(n) for n in names} else text


_ECHO_MARK = re.compile(r"^\s{0,3}(?:[-*+]\s+|#{1,6}\s+|\d+[.)]\s+|\*\*|__)")
_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d+[.)])\s+\S")


def without_name_lines(text: str, names: Sequence[str], points: Sequence[str] = ()) -> str:
    """``without_name_line``, and every later line outside code that is a list item, a
    heading or a bold line saying only one of ``names`` (the section's heading, the title),
    or a list item standing alone (no item above or below it) saying only one of ``points``
    (the section's key points in the prompt): the embedded model put "- ssh Agent Fetching"
    between its paragraphs, and it was saved in the article. A plain line ("Example:" may
    open a code block) and a list of the points are left."""
    text = without_name_line(text, names)
    keys = {_key(n) for n in names if _key(n)}
    point_keys = {_key(p) for p in points if _key(p)}
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    for at, (line, code) in enumerate(_lines_and_code(text)):  # (a fence's lines are code)
        if not (code and code[0]) and _ECHO_MARK.match(line):
            key = _key(line)
            if key in keys or (key in point_keys and _alone(lines, at)):
                continue
        kept.append(line)
    return "".join(kept) if any(k.strip() for k in kept) else text


def _alone(lines: Sequence[str], at: int) -> bool:
    """Whether line ``at``, a list item, has no list item right above or below it (blank
    lines aside)."""
    if not _ITEM.match(lines[at]):
        return False
    above = next((line for line in reversed(lines[:at]) if line.strip()), "")
    below = next((line for line in lines[at + 1 :] if line.strip()), "")
    return not _ITEM.match(above) and not _ITEM.match(below)


def completed(text: str, min_words: int = 0) -> str | None:
    """``text``, cut off at the length limit, back to its last whole paragraph or sentence
    outside a code block; None when that would drop half of it or more, or keep fewer than
    ``min_words`` words (a Chinese character counting one, as ``word_count`` counts: before,
    a Chinese text of 300 characters had a handful of "words", and was always refused)."""
    fence = 0
    best = -1
    i = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            fence ^= 1
            if not fence:
                best = i + len(line.rstrip())  # a closed code block is whole
        elif not fence:
            for match in _SENTENCE_END.finditer(line.rstrip("\n")):
                best = i + match.end()
        i += len(line)
    if best < len(text) / 2 or word_count(text[:best]) < min_words:
        return None
    return text[:best].rstrip()


def fences_closed(lines: list[str]) -> list[str]:
    """``lines`` with a code block the model left open closed (an empty one it opened last,
    dropped): else the rest of the article would render as code."""
    opener: str | None = None
    at = 0
    for i, line in enumerate(lines):
        fence = _FENCE.match(line)
        if fence is None:
            continue
        marks = fence.group(1)
        if opener is None:
            opener, at = marks, i
        elif (
            marks[0] == opener[0] and len(marks) >= len(opener) and not line[fence.end() :].strip()
        ):
            opener = None
    if opener is None:
        return lines
    if not any(line.strip() for line in lines[at + 1 :]):
        return lines[:at]
    return [*lines, opener[0] * len(opener)]


def _after_title(lines: list[str], title: str) -> int:
    """The first line after the blank lines and the article's title lines that open ``lines``
    (the title alone, or the prompt's "Title (topic: …; style: …)" line echoed)."""
    start = 0
    while start < len(lines):
        mark = _heading_of(lines[start])
        if lines[start].strip() and (mark is None or not _key_opens(mark[1], title)):
            break
        start += 1
    return start


def _key_opens(key: str, title: str) -> bool:
    return bool(title) and (key == title or key.startswith(title + " "))


_STOP = frozenset({"a", "an", "the", "of", "to", "and", "in", "on", "for", "with", "how", "it"})


def _loosely(key: str, own: str) -> bool:
    """Whether the heading ``key`` names the section ``own`` in other words: one's words are
    a run of the other's, with a word that is not a stop word ("example" for "a worked
    example", "how it works in python" for "how it works")."""
    if not key or not own:
        return False
    short, long = sorted((key.split(), own.split()), key=len)
    if not any(word not in _STOP for word in short):
        return False
    size = len(short)
    return any(long[i : i + size] == short for i in range(len(long) - size + 1))


def _heading_of(line: str) -> tuple[int, str] | None:
    """``(level, key)`` of a line that may be a heading: Markdown's (its level), or a short
    line in bold or alone (level 7: below every Markdown heading)."""
    if len(line) > _MAX_HEADING_CHARS or not line.strip():
        return None
    if match := _MARKDOWN_HEADING.match(line):
        return len(match.group(1)), _key(match.group(2))
    if match := _BOLD_LINE.match(line):
        return 7, _key(match.group(1))
    return 7, _key(line.rstrip(":："))
