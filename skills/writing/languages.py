"""The languages the writing skills name: one table for the translation's prompt, the names
people ask for a language by, and the names a check's reason gives it (in English and in
Chinese)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillrt import Replies
from skillrt.exceptions import BadParam

from .prompts import clip

__all__ = [
    "LANGUAGES",
    "LANGUAGE_REPLIES",
    "LanguageNames",
    "asked_language",
    "known_language",
    "language_code",
    "strip_asked_language",
    "target_language",
]


@dataclass(frozen=True, slots=True)
class LanguageNames:
    """``name`` and ``name_zh``: what a reason calls the language; ``prompt``: what the model
    is asked to write in; ``aliases``: what people call it (lowercase), the code first."""

    name: str
    name_zh: str
    prompt: str
    aliases: tuple[str, ...]


LANGUAGES: dict[str, LanguageNames] = {
    "en": LanguageNames("English", "英文", "English", ("en", "english", "英文", "英语")),
    "zh": LanguageNames(
        "Chinese",
        "中文",
        "Simplified Chinese",
        ("zh", "chinese", "mandarin", "中文", "汉语", "简体中文"),
    ),
    "ja": LanguageNames("Japanese", "日文", "Japanese", ("ja", "japanese", "日文", "日语")),
    "fr": LanguageNames("French", "法文", "French", ("fr", "french", "法文", "法语")),
    "de": LanguageNames("German", "德文", "German", ("de", "german", "德文", "德语")),
    "es": LanguageNames(
        "Spanish", "西班牙文", "Spanish", ("es", "spanish", "西班牙文", "西班牙语")
    ),
    "ko": LanguageNames("Korean", "韩文", "Korean", ("ko", "korean", "韩文", "韩语")),
}


def language_code(name: str) -> str | None:
    """``en``, ``zh``... for a language as people name it (English, 英文, zh...)."""
    folded = name.strip().casefold()
    for code, names in LANGUAGES.items():
        if folded in names.aliases:
            return code
    return None


LANGUAGE_REPLIES = Replies(
    {
        "unknown_language": (
            "不认识这种语言：{language}（可选：{known}）。",
            "I do not know the language {language!r} (known: {known}).",
        ),
    }
)
"""The reply of ``known_language``'s refusal, for the skills that call it."""


def known_language(name: str) -> str:
    """The code of the language ``name`` names (``language_code``); a ``language`` parameter
    naming none is refused (``unknown_language``, with the languages known)."""
    code = language_code(name)
    if code is None:
        known = ", ".join(names.prompt for names in LANGUAGES.values())
        raise BadParam("language", "unknown_language", language=clip(name, 40), known=known)
    return code


# The language a request asks a new text to be written in, where it says so: "in Chinese",
# "an English post", "用英文写", "写一篇英文博客", "中文写". A language word that describes the
# topic is no such request: "tea in Chinese culture", "a post about Japanese post-war
# architecture", "学英语的心得".
_EN_NAMES = "|".join(
    sorted(
        {a for names in LANGUAGES.values() for a in names.aliases if a.isascii() and len(a) > 2},
        key=len,
        reverse=True,
    )
)
_ZH_NAMES = "|".join(
    sorted(
        {a for names in LANGUAGES.values() for a in names.aliases if not a.isascii()},
        key=len,
        reverse=True,
    )
)
# After "in <language>" only the end, punctuation or a word that starts a new part may follow.
_THEN = r"(?!\s+(?!(?:please|pls|for|about|on|so|too|as|and|with|to|that|thanks?|this|it)\b)[a-z])"
_ASKED = (
    re.compile(rf"\b(?:in|into)\s+(?:simplified\s+)?({_EN_NAMES})\b{_THEN}", re.I),
    re.compile(
        rf"\b({_EN_NAMES})[- ](?:language\s+)?(?:blog\s+)?"
        r"(?:post|article|essay|piece|entry|version|draft)s?(?![-\w])",
        re.I,
    ),
    re.compile(rf"(?:用|以|拿)\s*({_ZH_NAMES})\s*(?:来)?\s*(?:写|撰写|书写|写作)"),
    re.compile(rf"({_ZH_NAMES})\s*(?:来)?写(?=$|[，。,.!！?？;；\s]|一?篇|吧|成)"),
    re.compile(
        rf"篇\s*({_ZH_NAMES})\s*的?\s*(?:文章|博客|博文|随笔|教程|帖子|短文|散文|post|blog)",
        re.I,
    ),
)


def asked_language(text: str) -> str | None:
    """The code of the language ``text`` asks the new text to be written in, or None when it
    names none: the first such phrase in the text wins."""
    found: list[tuple[int, str]] = []
    for pattern in _ASKED:
        match = pattern.search(text)
        if match is not None and (code := language_code(match.group(1))) is not None:
            found.append((match.start(), code))
    return min(found)[1] if found else None


# The language a translation is asked into: "… to English", "… into Chinese", "…翻译成英文".
_TARGET = (
    re.compile(rf"\b(?:in)?to\s+(?:simplified\s+)?({_EN_NAMES})\b{_THEN}", re.I),
    re.compile(rf"(?:翻译|译|翻)[^，。,.!?！？]*?(?:成|为|到)\s*({_ZH_NAMES})"),
)


def target_language(text: str) -> str | None:
    """The code of the language a translation request names as its target, or None: the last
    "(in)to <language>" or "成<语言>" in ``text`` ("translate the post on Chinese tea to
    English": English)."""
    found = [
        (match.start(), code)
        for pattern in _TARGET
        for match in pattern.finditer(text)
        if (code := language_code(match.group(1))) is not None
    ]
    return max(found)[1] if found else None


# The language asked for at the end of a topic: "tea, in Chinese please", "缓存，用英文写".
_TOPIC_TAIL = re.compile(
    rf"[\s,，、;；:：(（-]*(?:(?:written\s+)?(?:in|into)\s+(?:simplified\s+)?(?:{_EN_NAMES})"
    rf"(?:\s*,?\s*(?:please|pls|thanks?))?|(?:请|要)?(?:用|以)?\s*(?:{_ZH_NAMES})\s*(?:来)?写(?:吧)?)"
    r"[\s.。!！)）]*$",
    re.I,
)


def strip_asked_language(topic: str) -> str:
    """``topic`` without the language asked for at its end ("tea in Chinese" -> "tea"); the
    topic as it is when that would leave nothing."""
    stripped = _TOPIC_TAIL.sub("", topic).strip()
    return stripped or topic
