"""The language of a request: Chinese when Chinese carries the sentence, else English.

``detect_language`` is the runtime's answer (a task's language, the REPL's, the router's);
``language_of`` is the same answer, told with fewer searches where they cannot change it (the
router asks it of every request it routes).
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["HAN", "LATIN_WORD", "Language", "detect_language", "language_of"]

Language = Literal["zh", "en"]

_NOT_WORDS = re.compile(r"\S*[/.\\:@]\S*")  # paths, URLs, file names, addresses
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
HAN = re.compile("[\u4e00-\u9fff\u3400-\u4dbf]")


def detect_language(text: str) -> Language:
    """``zh`` when Chinese carries the sentence, else ``en``.

    English technical terms inside Chinese sentences are common ("写一篇关于 Rust 所有权的文章"),
    and paths or URLs say nothing about the language ("把 posts/old-draft.md 删掉"), so: drop
    paths and URLs, then Chinese wins when its characters outnumber twice the English words.
    """
    han = len(HAN.findall(text))
    if not han:
        return "en"
    words = len(LATIN_WORD.findall(_NOT_WORDS.sub(" ", text)))
    return "zh" if han >= 2 * words else "en"


def language_of(text: str) -> Language:
    """``detect_language(text)``, told with fewer searches when they cannot change it.

    - ASCII text holds no Chinese: ``en``.
    - With no Chinese character (one search that stops at the first), ``en``.
    - With no English word at all (one search that stops at the first), the Chinese, at least
      one character, outnumbers twice none: ``zh``.
    - The search for paths and URLs (``\\S*[/.\\\\:@]\\S*``, tried at every place, each run of
      text without a space walked to its end and back) removes whole runs, so it can only
      leave fewer English words than the text holds: Chinese that outnumbers twice the text's
      English words outnumbers twice what is left of them.

    Otherwise ``detect_language`` is asked (tests/test_routing_regex_path.py compares the two).
    """
    if text.isascii() or HAN.search(text) is None:
        return "en"
    if LATIN_WORD.search(text) is None:
        return "zh"
    if len(HAN.findall(text)) >= 2 * len(LATIN_WORD.findall(text)):
        return "zh"
    return detect_language(text)
