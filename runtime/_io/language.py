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


# Quoted words (a title, a word to swap) are the user's material, not the sentence around them.
_QUOTED = re.compile(r"“[^”]*”|\"[^\"\n]*\"|「[^」]*」|『[^』]*』|《[^》]*》|‘[^’]*’|`[^`\n]*`")
_QUOTE_MARK = re.compile('[“"「『《‘`]')
# Words only a Chinese sentence is built with, whatever its nouns: "把“Docker”改成“Podman”" and
# "把 Docker 改成 Podman" were answered in English. (Not 的: titles hold it.)
_CHINESE_FRAME = re.compile("把|改成|改为|换成|一下|帮我|给我|请|吗|呢|吧")


def detect_language(text: str) -> Language:
    """``zh`` when Chinese carries the sentence, else ``en``.

    English technical terms inside Chinese sentences are common ("写一篇关于 Rust 所有权的文章"),
    and paths or URLs say nothing about the language ("把 posts/old-draft.md 删掉"), so: leave
    out what is quoted (an English request quoting a Chinese title is English, a Chinese one
    quoting English words Chinese); then a Chinese frame word (把, 改成, 一下, 请, 吗…) makes
    it Chinese; else drop paths and URLs, and Chinese wins when its characters outnumber twice
    the English words (those of the whole text when nothing is left outside the quotes).
    """
    if HAN.search(text) is None:
        return "en"
    said = _QUOTED.sub(" ", text)
    if _CHINESE_FRAME.search(said):
        return "zh"
    han, words = _counts(said)
    if not han and not words:  # all of it quoted
        han, words = _counts(text)
    return "zh" if han >= 2 * words else "en"


def _counts(text: str) -> tuple[int, int]:
    """``text``'s Chinese characters and its English words, paths and URLs left out."""
    return len(HAN.findall(text)), len(LATIN_WORD.findall(_NOT_WORDS.sub(" ", text)))


def language_of(text: str) -> Language:
    """``detect_language(text)``, told with fewer searches when they cannot change it.

    - ASCII text holds no Chinese: ``en``.
    - With no Chinese character (one search that stops at the first), ``en``.
    - With no English word at all (one search that stops at the first), the Chinese, at least
      one character, outnumbers twice none: ``zh``.
    - With no quote mark, nothing is left out as quoted, and a Chinese frame word only makes
      more of it Chinese.
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
    if _QUOTE_MARK.search(text) is None and len(HAN.findall(text)) >= 2 * len(
        LATIN_WORD.findall(text)
    ):
        return "zh"
    return detect_language(text)
