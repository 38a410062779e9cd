"""The languages the writing skills name: one table for the translation's prompt, the names
people ask for a language by, and the names a check's reason gives it (in English and in
Chinese)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LANGUAGES", "LanguageNames", "language_code"]


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
