"""The part of a post an instruction names: "the first paragraph", "the second section", "the
title", "the conclusion", "第二段", "第三节", "标题", "结尾".

``named_part(instruction)`` reads the part from the words (a ``PartRef``, or None when the
instruction names none), and ``locate(body, ref)`` finds it in a post's body as a span, so an
edit sends only that part to the model and splices the answer back, everything else byte for
byte. Paragraphs are the body's blocks separated by blank lines, headings and fenced code not
counted. Sections start at a heading of the body's top level (``##`` in most posts; a lone
``#`` title above them does not count) and run to the next one. The conclusion is the last
section when its heading says so (Conclusion, Summary, 总结, 结论…), else the last paragraph;
"结尾" and "the ending" are the last paragraph. The title is not in the body: the skill edits
the frontmatter's ``title`` field (or a ``# Title`` line at the top of the body).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["PartRef", "Span", "code_lines", "locate", "named_part"]

Kind = Literal["paragraph", "section", "title", "conclusion"]

_EN_ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "last": -1,
    "final": -1,
    "opening": 1,
}
_ZH_DIGITS = {
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_ORDINAL = (
    r"(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|final|opening"
    r"|\d+(?:st|nd|rd|th))"
)
_EN_PART = re.compile(rf"\b{_ORDINAL}\s+(paragraph|section|part|heading)s?\b", re.I)
_EN_NUMBERED = re.compile(r"\b(paragraph|section)\s+(\d+)\b", re.I)
_TITLE_ADJ = (
    r"(?:(?:new|better|catchier|shorter|snappier|different|good|great|clearer|stronger|"
    r"punchier|more\s+\w+)\s+)*"
)
_THE_POST = (
    r"(?:the|my|this|that)\s+(?!(?:next|upcoming|future)\b)(?:[^\s,;:]+\s+){0,6}?"
    r"(?:post|article|entry|page)"
)
# "the title", "its headline", "the Rust 1.78.0 post's title", "the title of the post",
# "retitle it", "rename the rust post to …", "suggest a better title for the git post".
_EN_TITLE = re.compile(
    r"\b(?:the|its|this|that|my)\s+(?:(?:[^\s,;:]+\s+){0,6}?(?:post|article|entry|page)"
    r"(?:['’]s)?\s+)?(?:title|headline)\b|\bretitle\b|\brename\s+it\b"
    r"|\brename\s+(?:the|this|that|my)\s+(?:[^\s,;:]+\s+){0,6}?(?:post|article|entry|page)\b"
    # "suggest a better title for the git post", "give the go post a catchier title"; not
    # "add a title to the diagram", "give the table a title", "a title image"
    rf"|\b(?:a|an)\s+{_TITLE_ADJ}(?:title|headline)\s+(?:for|to)\s+(?:it|this|that|{_THE_POST})\b"
    # "suggest a better title", "give me a catchier title": the request's own post
    rf"|\b(?:suggest|propose|give\s+me|come\s+up\s+with|think\s+of|need|want)\s+(?:a|an)\s+"
    rf"{_TITLE_ADJ}(?:title|headline)\s*(?:please\s*)?[?.!]*$"
    rf"|\bgive\s+(?:it|this|that|{_THE_POST})\s+(?:a|an)\s+{_TITLE_ADJ}(?:title|headline)\b"
    r"(?!\s+(?:image|card|tag|section|page)s?\b)",
    re.I,
)
_EN_CONCLUSION = re.compile(r"\bthe\s+(conclusion|ending|closing paragraph)\b", re.I)
_EN_INTRO = re.compile(r"\bthe\s+(intro|introduction|opening)\b(?!\s+(?:paragraph|section))", re.I)
_ZH_PART = re.compile(r"第\s*([一二两三四五六七八九十\d]+)\s*(段|节|部分|小节|章)")
_ZH_LAST = re.compile(r"(最后一|末)(段|节|部分)")
_ZH_FIRST = re.compile(r"(首段|开头|第一段|引言)")
_ZH_TITLE = re.compile(r"标题|题目")
_ZH_CONCLUSION = re.compile(r"结尾|结论|结语|总结部分|小结")
_CONCLUDING = re.compile(
    r"\b(conclusions?|summary|wrap[- ]?up|final thoughts|takeaways|in closing|recap)\b|"
    r"总结|结论|结语|小结|写在最后",
    re.I,
)
_HEADING = re.compile(r"^(#{1,6})[ \t]+\S")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True, slots=True)
class PartRef:
    """A part named by an instruction: its kind and its number (1-based, -1 the last)."""

    kind: Kind
    index: int = 1

    def describe(self) -> str:
        if self.kind in ("title", "conclusion"):
            return f"the {self.kind}"
        nth = "last" if self.index == -1 else _ordinal_word(self.index)
        return f"the {nth} {self.kind}"


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int


def _ordinal_word(n: int) -> str:
    for word, value in _EN_ORDINALS.items():
        if value == n and word not in ("final", "opening"):
            return word
    return f"{n}th"


def _zh_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if text == "十":
        return 10
    if text.startswith("十"):
        return 10 + _ZH_DIGITS.get(text[1:], 0)
    if text.endswith("十"):
        return 10 * _ZH_DIGITS.get(text[:-1], 1)
    if "十" in text:
        tens, ones = text.split("十", 1)
        return 10 * _ZH_DIGITS.get(tens, 1) + _ZH_DIGITS.get(ones, 0)
    return _ZH_DIGITS.get(text, 0)


def _en_index(word: str) -> int:
    word = word.casefold()
    if word in _EN_ORDINALS:
        return _EN_ORDINALS[word]
    return int(re.sub(r"\D", "", word) or 0)


def named_part(instruction: str) -> PartRef | None:
    """The part of the post ``instruction`` names, or None (then it is about the whole body)."""
    if match := _ZH_PART.search(instruction):
        kind: Kind = "paragraph" if match.group(2) == "段" else "section"
        return PartRef(kind, _zh_number(match.group(1))) if _zh_number(match.group(1)) else None
    if match := _ZH_LAST.search(instruction):
        return PartRef("paragraph" if match.group(2) == "段" else "section", -1)
    if _ZH_FIRST.search(instruction):
        return PartRef("paragraph", 1)
    if _ZH_TITLE.search(instruction):
        return PartRef("title")
    if _ZH_CONCLUSION.search(instruction):
        return PartRef("conclusion")
    if match := _EN_PART.search(instruction):
        word = match.group(2).casefold()
        kind = "paragraph" if word == "paragraph" else "section"
        index = _en_index(match.group(1))
        return PartRef(kind, index) if index else None
    if match := _EN_NUMBERED.search(instruction):
        kind = "paragraph" if match.group(1).casefold() == "paragraph" else "section"
        return PartRef(kind, int(match.group(2))) if int(match.group(2)) else None
    if _EN_TITLE.search(instruction):
        return PartRef("title")
    if match := _EN_CONCLUSION.search(instruction):
        return (
            PartRef("conclusion")
            if "conclusion" in match.group(1).casefold()
            else PartRef("paragraph", -1)
        )
    if _EN_INTRO.search(instruction):
        return PartRef("paragraph", 1)
    return None


def code_lines(body: str) -> list[tuple[int, str, bool]]:
    """Each line of ``body``: its offset, its text (no line break) and whether it is in code."""
    out: list[tuple[int, str, bool]] = []
    fence: str | None = None
    offset = 0
    for raw in body.splitlines(keepends=True):
        text = raw.rstrip("\r\n")
        match = _FENCE.match(text)
        in_code = fence is not None or match is not None
        if fence is None and match:
            fence = match.group(1)
        elif (
            fence is not None
            and match
            and match.group(1)[0] == fence[0]
            and len(match.group(1)) >= len(fence)
            and not text.strip().strip(fence[0])
        ):
            fence = None
        out.append((offset, text, in_code))
        offset += len(raw)
    return out


def paragraphs(body: str) -> list[Span]:
    """The prose blocks of ``body`` (see the module docstring), as spans without line breaks."""
    spans: list[Span] = []
    start: int | None = None
    end = 0
    prose = False
    for offset, text, in_code in code_lines(body):
        blank = not text.strip()
        heading = not in_code and _HEADING.match(text) is not None
        if blank or heading or in_code:
            if start is not None and prose:
                spans.append(Span(start, end))
            start, prose = None, False
            continue
        if start is None:
            start = offset
        end, prose = offset + len(text), True
    if start is not None and prose:
        spans.append(Span(start, end))
    return spans


def sections(body: str) -> list[tuple[Span, str]]:
    """The sections of ``body`` at its top heading level, with their headings."""
    headings = [
        (offset, len(m.group(1)), text)
        for offset, text, in_code in code_lines(body)
        if not in_code and (m := _HEADING.match(text))
    ]
    if not headings:
        return []
    levels = [level for _, level, _ in headings]
    top = min(levels)
    if top == 1 and levels.count(1) == 1 and len(levels) > 1 and headings[0][1] == 1:
        top = min(level for level in levels[1:])  # a lone "# Title" above the sections
    starts = [(offset, text) for offset, level, text in headings if level == top]
    bounds = [offset for offset, level, _ in headings if level <= top]
    spans: list[tuple[Span, str]] = []
    for offset, text in starts:
        after = [b for b in bounds if b > offset]
        stop = after[0] if after else len(body)
        content = body[offset:stop].rstrip()
        spans.append((Span(offset, offset + len(content)), text.lstrip("# ").strip()))
    return spans


def _nth(items: list[Span], index: int) -> Span | None:
    if index == -1:
        return items[-1] if items else None
    return items[index - 1] if 0 < index <= len(items) else None


def locate(body: str, ref: PartRef) -> Span | None:
    """Where the part is in ``body``; None when the body has no such part (or for the title,
    which is not in the body)."""
    if ref.kind == "paragraph":
        return _nth(paragraphs(body), ref.index)
    if ref.kind == "section":
        return _nth([span for span, _ in sections(body)], ref.index)
    if ref.kind == "conclusion":
        found = sections(body)
        if found and _CONCLUDING.search(found[-1][1]):
            return found[-1][0]
        return _nth(paragraphs(body), -1)
    return None
