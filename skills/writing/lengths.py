"""How long an article should be, read from the request, and the topic without those words.

``写一篇关于躺平的短文`` is a short article about 躺平 (the router's topic is ``躺平的短``:
``短文`` is not one of its article nouns); ``write a 500-word post about X`` is a word target.
Lengths: ``short`` (at most 3 sections), ``medium`` (the default), ``long``, or a number of
words (Chinese: characters). The topic loses its length words before the slug and the title
are made from it, so the file is ``tang-ping.md``, not ``tang-ping-de-duan.md``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["ArticleLength", "parse_length", "strip_length_words"]

MIN_WORDS = 80
MAX_WORDS = 20_000
_MAX_SECTIONS = {"short": 3, "medium": 6, "long": 8}
_WORDS_PER_SECTION = {  # (English words, Chinese characters)
    "short": (150, 250),
    "medium": (300, 500),
    "long": (600, 900),
}

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5}
_CN_DIGITS |= {"六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10_000}
_CN_NUMBER = "[零〇一二两三四五六七八九十百千万]+"

_ZH_TARGET = re.compile(rf"(\d{{2,6}}|{_CN_NUMBER})\s*(?:个)?\s*字")
_EN_TARGET = re.compile(r"\b(\d{2,6})[\s-]*(?:words?|word-long)\b", re.I)
_SHORT = re.compile(
    r"短文|短篇|简短|小短文|短一点|短些|\b(?:short|brief)\b|keep\s+it\s+short", re.I
)
_LONG = re.compile(
    r"长文|长篇|深入|深度|长一点|\b(?:long|lengthy|in[\s-]depth|long[\s-]form)\b", re.I
)
# An English ``long``/``short`` counts only next to an article noun or as "keep it short":
# ``write about long COVID`` is a topic, not a length.
_EN_NOUN = r"(?:blog\s*post|post|article|essay|piece|write-?up|entry|tutorial|guide|one)"
_EN_LENGTH = re.compile(
    rf"\b(short|brief|long|lengthy|in[\s-]depth|long[\s-]form)\s+(?:\w+\s+)?{_EN_NOUN}s?\b"
    r"|\bkeep\s+it\s+(short|brief)\b|\b(?:make\s+it|,)\s*(short|brief|long|in[\s-]depth)\s*[.!]?$",
    re.I,
)

# What comes off the ends of a topic (repeatedly, so "800字的简短" goes in two passes).
_TOPIC_TAIL = re.compile(
    r"\s*[,，、]?\s*(?:的)?\s*(?:"
    r"(?:\d{2,6}|" + _CN_NUMBER + r")\s*(?:个)?\s*字(?:左右|以内|以下)?"
    r"|小短文|短文|短篇|长文|长篇|简短|深入|深度"
    r"|(?:in|of|with|at|under|around|about)?\s*~?\s*\d{2,6}[\s-]*words?(?:\s+long)?"
    r")\s*(?:的)?\s*$"
    r"|\s*[,，]\s*(?:keep\s+it\s+|make\s+it\s+)?"
    r"(?:short|brief|long|in[\s-]depth|long[\s-]form)(?:\s+please)?\s*$",
    re.I,
)
_TOPIC_HEAD = re.compile(
    r"^\s*(?:(?:\d{2,6}|" + _CN_NUMBER + r")\s*(?:个)?\s*字(?:左右|以内)?\s*的?"
    r"|(?:简短|深入浅出|深入|深度|短篇|长篇)\s*(?:的|地)"
    r"|(?:简短|深入浅出|深入|深度)\s*(?:地|的)?\s*(?:介绍|讲解|讲讲|探讨|分析|解析|剖析)"
    r"|关于|有关)\s*",
    re.I,
)
# A bare 短/长 at the end is a length only after 的 (成长 keeps its 长).
_BARE_TAIL = re.compile(r"的\s*[短长]\s*$")


@dataclass(frozen=True, slots=True)
class ArticleLength:
    """``kind`` is short, medium or long; ``words`` a target for the whole article, if any."""

    kind: str = "medium"
    words: int | None = None

    def max_sections(self) -> int:
        if self.words is not None:
            per = 250 if self.words < 1500 else 400
            return max(1, min(_MAX_SECTIONS["long"], math.ceil(self.words / per)))
        return _MAX_SECTIONS.get(self.kind, _MAX_SECTIONS["medium"])

    def min_sections(self) -> int:
        return min(2, self.max_sections())

    def words_per_section(self, language: str, sections: int) -> int:
        if self.words is not None:
            return max(MIN_WORDS, min(self.words // max(sections, 1), 2000))
        en, zh = _WORDS_PER_SECTION.get(self.kind, _WORDS_PER_SECTION["medium"])
        return zh if language == "zh" else en

    def describe(self) -> str:
        """The length as the ``length`` parameter writes it (``short``, ``800``...)."""
        return str(self.words) if self.words is not None else self.kind


def _cn_number(text: str) -> int | None:
    """A Chinese numeral up to the ten thousands (八百, 一千五百, 两千, 1500)."""
    if text.isdigit():
        return int(text)
    total = section = digit = 0
    for ch in text:
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            unit = _CN_UNITS[ch]
            if unit == 10_000:
                total += (section + digit) * unit
                section = 0
            else:
                section += (digit or 1) * unit
            digit = 0
        else:
            return None
    value = total + section + digit
    return value or None


def _clamp(words: int) -> int:
    return max(MIN_WORDS, min(words, MAX_WORDS))


def parse_length(text: str | None) -> ArticleLength | None:
    """The length a request asks for, or None when it names none.

    ``param`` values (``short``, ``long``, ``800``) and whole requests
    (``写一篇 800 字的短文``, ``a brief post on X``) are both understood.
    """
    if not text or not text.strip():
        return None
    value = text.strip().lower()
    if value in _MAX_SECTIONS:
        return ArticleLength(value)
    if value.isdigit():
        return ArticleLength("medium", _clamp(int(value)))
    if value in {"短", "简短", "short", "brief"}:
        return ArticleLength("short")
    if value in {"长", "long", "in-depth", "深入"}:
        return ArticleLength("long")
    if match := _EN_TARGET.search(text):
        return ArticleLength("medium", _clamp(int(match.group(1))))
    for match in _ZH_TARGET.finditer(text):
        number = _cn_number(match.group(1))
        if number is not None and number >= 20:
            return ArticleLength("medium", _clamp(number))
    has_han = any("\u4e00" <= ch <= "\u9fff" for ch in text)
    if has_han:
        if _SHORT.search(text) and not re.search(r"\b(?:short|brief)\b", text, re.I):
            return ArticleLength("short")
        if _LONG.search(text) and not re.search(r"\blong\b", text, re.I):
            return ArticleLength("long")
    if match := _EN_LENGTH.search(text):
        word = next(g for g in match.groups() if g).lower()
        return ArticleLength("short" if word in {"short", "brief"} else "long")
    return None


def strip_length_words(topic: str) -> str:
    """``topic`` without the length words the router left at its ends."""
    text = " ".join(topic.split())
    for _ in range(4):
        before = text
        text = _TOPIC_HEAD.sub("", text)
        text = _BARE_TAIL.sub("", text)
        text = _TOPIC_TAIL.sub("", text)
        text = re.sub(r"\s*的$", "", text).strip(" ,，、:：;；-—")
        if text == before:
            break
    return text or " ".join(topic.split())
