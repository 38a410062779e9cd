"""Stop 40's cheaper regex path gives the answers of the plain computation.

- ``language_of`` (``_io/language.py``) tells ``detect_language``'s answer with one search for
  a Chinese character and one for an English word before counting either;
- ``normalize_text`` gives printable text with single spaces back without splitting it;
- ``is_small_talk`` turns down text other than ASCII holding a character no small talk
  consumes, without its fullmatch.
"""

from __future__ import annotations

import random
import re
import sys
import unicodedata
from pathlib import Path

from benchmarks.bench_intents import read_rows
from benchmarks.bench_routing import load_eval
from skillrt._io.language import HAN, detect_language, language_of
from skillrt._routing import clarify
from skillrt._routing import router as R
from skillrt._routing.router import normalize_text

_DATA = Path(__file__).resolve().parent.parent / "data" / "routing"


def _raw_requests() -> list[str]:
    texts = [t for *_, t in load_eval()]
    texts += [t for path in sorted(_DATA.glob("*.tsv")) for *_, t in read_rows(path)]
    return texts


def _mixes(n: int, seed: int) -> list[str]:
    """Chinese, English, paths, spaces of every kind, junk and small talk mixed at random."""
    rng = random.Random(seed)
    parts = ["写", "文章", "的", "好的", "谢谢", "嗯", "你好", "Rust", "ok", "thanks", "a", "hi",
             " ", "  ", "\t", "\n", "\u3000", "\xa0", "\u200b", "\x07", "\ufeff", "！", "，", "?",
             "posts/x.md", "http://a.b/c", "ab", "ǅ", "ﬁ", "Ⅻ", "ｗｒｉｔｅ", "é", "e\u0301",
             "İ", "ß", "~", "。", "k", "lol", "好", "行", "收到", "改得不错",
             "nice edit"]  # fmt: skip
    return ["".join(rng.choice(parts) for _ in range(rng.randint(0, 9))) for _ in range(n)]


def test_language_of_is_detect_language() -> None:
    texts = [normalize_text(t)[:500] for t in _raw_requests()] + _mixes(20_000, 40)
    ways = {"ascii": 0, "no chinese": 0, "no english": 0, "counted": 0}
    for text in texts:
        assert language_of(text) == detect_language(text), text
        if text.isascii():
            ways["ascii"] += 1
        elif not HAN.search(text):
            ways["no chinese"] += 1
        elif not re.search("[A-Za-z]{2}", text):
            ways["no english"] += 1
        else:
            ways["counted"] += 1
    assert min(ways.values()) > 100, ways  # every way was taken


def test_language_of_is_detect_language_with_quotes_and_frame_words() -> None:
    """``language_of`` counts before asking only where nothing is quoted."""
    rng = random.Random(43)
    parts = ["“", "”", '"', "《", "》", "「", "」", "`", "把", "改成", "请", "吗", "的", "文章",
             "Docker", "Podman", "a", "post", " ", "posts/x.md", "。"]  # fmt: skip
    texts = ["".join(rng.choice(parts) for _ in range(rng.randint(1, 12))) for _ in range(20_000)]
    for text in texts:
        assert language_of(text) == detect_language(text), text


def _plain_normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    return " ".join(R._JUNK.sub("", text).split())


def test_normalize_text_is_the_plain_computation() -> None:
    texts = _raw_requests() + _mixes(20_000, 41)
    kept = 0
    for text in texts:
        got = normalize_text(text)
        assert got == _plain_normalize(text), repr(text)
        kept += got == text
    assert kept > 1_000  # the short way was taken


def test_the_only_printable_whitespace_is_the_space() -> None:
    # What normalize_text's short way stands on: str.split() splits at isspace() characters.
    found = [i for i in range(sys.maxunicode + 1) if chr(i).isspace() and chr(i).isprintable()]
    assert found == [0x20]


def test_small_talk_is_the_plain_fullmatch() -> None:
    assert clarify._TALK_CHARACTERS is not None  # the check is made
    spaces = {chr(i) for i in range(sys.maxunicode + 1) if chr(i).isspace()}
    assert spaces <= clarify._TALK_CHARACTERS
    texts = [normalize_text(t) for t in _raw_requests()] + _mixes(20_000, 42)
    talk = turned_down = 0
    for text in texts:
        plain = clarify._SMALL_TALK.fullmatch(text.casefold()) is not None
        assert clarify.is_small_talk(text) == plain, text
        talk += plain
        folded = text.casefold()
        turned_down += not folded.isascii() and not clarify._TALK_CHARACTERS.issuperset(folded)
    assert talk > 500 and turned_down > 1_000, (talk, turned_down)
