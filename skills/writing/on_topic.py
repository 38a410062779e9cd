"""``on_topic``: an edit of a whole long post gives back that post, edited, not another text.

The other checks judge what an answer keeps of the post's lines, code and headings; a text
written anew keeps none, so nothing said what it dropped. The embedded model answered
"replace 'cheap' with 'inexpensive' in the go post" with a page of invented Python, and "fix
the typo in the go post" with a new post on Go "in healthcare, finance and gaming"; both
passed every check. This one judges the answer against the post as a whole:

- **about the post**: at least a quarter of the post's key words (the words its prose uses
  most, short and common ones aside) are in the answer, a word's inflections alike (an
  answer under ``SHORT_WORDS`` words, as a summary asked for, fewer in proportion, one at
  least; one under ``MIN_TOLD_WORDS``, too short to tell, none);
- **not cut to a scrap**: unless the instruction may take text away (remove, shorten,
  summarise, rewrite…), the answer keeps at least a fifth of the post's words.

Only a post of ``MIN_POST_WORDS`` words of prose or more, in a Latin script, edited whole, is
judged: a short text says too little to tell, and the tests' scripted answers edit short
fixture posts with one sentence. An instruction to translate, or an answer in another
language, is the language check's.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from skillrt.blog.markdown import word_count

from .checks import (
    HAN,
    Check,
    Generated,
    Verdict,
    _latin_language,
    _lines_and_code,
    _may_drop,
    language_share,
)
from .languages import asked_language

__all__ = [
    "KEY_WORDS",
    "MIN_KEPT_SHARE",
    "MIN_POST_WORDS",
    "MIN_TOPIC_SHARE",
    "grounded",
    "on_topic",
    "share_from",
]

MIN_POST_WORDS = 250  # of prose: a shorter post is not judged
KEY_WORDS = 12  # the post's most used words, compared
MIN_TOPIC_SHARE = 0.25  # of them, in the answer
MIN_KEPT_SHARE = 0.2  # of the post's words, unless the instruction may take text away
SHORT_WORDS = 60  # an answer shorter than this needs fewer key words, in proportion
MIN_TOLD_WORDS = 20  # an answer shorter than this is not judged for its topic
_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ][A-Za-zÀ-ÖØ-öø-ÿ'’-]{3,}")
_STEM = 5  # letters a word is compared by ("goroutine", "goroutines")
_COMMON_WORDS = (
    "about above after again also always another anything because been before being below "
    "between both cannot could does doing done down during each even every first from further "
    "have having here however into itself just know like made make many more most much must "
    "need never next only other others over same should since some something still such than "
    "that their them then there these they thing things this those through under until upon "
    "used using very want well were what when where which while whose will with within without "
    "would your yours really often second last time times ways going "
)
_COMMON = frozenset(_COMMON_WORDS.split())
_TRANSLATES = re.compile(r"\btranslat\w*|翻译|译成|译为", re.I)


def _prose(text: str) -> str:
    """``text`` without its code (blocks and inline code)."""
    return "\n".join(
        "".join(ch for ch, in_code in zip(line, code, strict=False) if not in_code)
        for line, code in _lines_and_code(text)
    )


def _stems(text: str) -> Counter[str]:
    """How often each word's first letters (``_STEM``) stand in ``text``, common words aside."""
    return Counter(w[:_STEM] for w in _words(text))


def _words(text: str) -> list[str]:
    return [w for w in (m.casefold() for m in _WORD.findall(text)) if w not in _COMMON]


_HAN_RUN = re.compile(f"(?:{HAN.pattern}){{2,}}")  # (a run of checks.HAN's characters)
# Pairs any answer about a post says (这篇文章主要介绍了…): not the post's, nor made up
_COMMON_PAIRS_ZH = (
    "这篇 篇文 文章 章中 章里 作者 介绍 绍了 主要 内容 一个 可以 我们 "
    "什么 如何 因为 所以 但是 以及 通过 进行 提到 到了 说明 认为 讲述 "
    "描述 总结 其中 就是 这个 那个 没有 问题 回答 根据 来源 以下 如下 "
    "的是 了一 是一 中的 里的 也是 还是 还有 这些 那些 它们 他们 如果 "
    "需要 使用 用来 时候 之间 的一 一些 非常 而且 并且 不是 也就 就会 "
    "会让 可能 应该 建议 说了 讲了 写了 参考 参见 "
)
_COMMON_PAIRS = frozenset(_COMMON_PAIRS_ZH.split())


def _unsaid(text: str, theirs: set[str]) -> list[str]:
    """The stretches of ``text``'s Chinese that no pair of ``theirs`` covers, as written (3
    characters or more, clipped to 8), in order: what a reason quotes of a Chinese answer."""
    found: list[str] = []
    for run in _HAN_RUN.findall(text):
        start = None
        for i in range(len(run)):
            unsaid = i + 1 < len(run) and run[i : i + 2] not in theirs
            if unsaid and start is None:
                start = i
            elif not unsaid and start is not None:
                if i + 1 - start >= 3:
                    found.append(run[start : i + 1][:8])
                start = None
    return found


def _han_pairs(text: str) -> set[str]:
    """The pairs of Chinese characters next to each other in ``text`` (``这篇文章`` holds 这篇,
    篇文, 文章), the ones any answer says (``_COMMON_PAIRS``) aside: what a Chinese text is
    compared by, having no spaces between its words."""
    found = {run[i : i + 2] for run in _HAN_RUN.findall(text) for i in range(len(run) - 1)}
    return found - _COMMON_PAIRS


def share_from(text: str, source: str) -> float:
    """The share of ``text``'s words (their stems; in Chinese, pairs of characters), common
    ones aside, that ``source`` has: 0.0 for a text with none to compare."""
    stems, pairs = _stems(_prose(text)), _han_pairs(_prose(text))
    total = sum(stems.values()) + len(pairs)
    if not total:
        return 0.0
    theirs, their_pairs = _stems(_prose(source)), _han_pairs(_prose(source))
    found = sum(n for stem, n in stems.items() if stem in theirs) + len(pairs & their_pairs)
    return found / total


def on_topic(instruction: str, original: str) -> Check | None:
    """The check (see the module docstring), or None when the post is too short to judge,
    not in a Latin script, or the instruction asks for a translation."""
    prose = _prose(original)
    words = word_count(prose)
    if words < MIN_POST_WORDS or _TRANSLATES.search(instruction):
        return None
    if asked_language(instruction) is not None or language_share(prose, "en") < 0.5:
        return None  # (a post in Chinese, or an answer asked for in another language)
    found = _words(prose)  # (once: the key words and their spellings)
    keys = [stem for stem, _ in Counter(w[:_STEM] for w in found).most_common(KEY_WORDS)]
    spelled: dict[str, str] = {}
    for word, _ in Counter(found).most_common():
        spelled.setdefault(word[:_STEM], word)  # a stem shown as its most used word
    may_drop = _may_drop(instruction)

    def check(generated: Generated) -> Verdict:
        answer = _prose(generated.text)
        if language_share(answer, "en") < 0.5:
            return Verdict("on_topic", True, "in another language: the language check's")
        kept = word_count(answer)
        if not may_drop and kept < MIN_KEPT_SHARE * words:
            return Verdict(
                "on_topic",
                False,
                f"it has {kept} of the post's {words} words, and the instruction did not ask "
                "to cut it",
                zh=f"原文有 {words} 个词，它只剩 {kept} 个，而修改说明并没有要求删减",
            )
        found = set(_stems(answer))
        shared = [k for k in keys if k in found]
        # (a short answer, as a summary asked for, names fewer of them: at least one; one too
        # short to tell, as a line asked for, none)
        needed = math.ceil(MIN_TOPIC_SHARE * len(keys) * min(1.0, kept / SHORT_WORDS))
        if kept >= MIN_TOLD_WORDS and len(shared) < max(1, needed):
            shown = ", ".join(spelled[k] for k in keys[:6])
            return Verdict(
                "on_topic",
                False,
                f"it is about something else: {len(shared)} of the post's {len(keys)} key "
                f"words ({shown}…) are in it",
                zh=f"它写的是别的内容：原文的 {len(keys)} 个关键词（{shown}…）只有 "
                f"{len(shared)} 个出现在其中",
            )
        return Verdict("on_topic", True, f"{len(shared)} of {len(keys)} key words")

    return check


GROUNDED_MIN_WORDS = 12  # an answer with fewer of its own words is not judged
GROUNDED_SHARE = 0.2  # of its words, in its sources
_LINK_PATH = re.compile(r"\]\([^)\n]*\)|\[\[([^\]|\n]*\|)?|\]\]|https?://\S+")


def grounded(*sources: str, pages: bool = False) -> Check:
    """An answer from ``sources`` (the posts found) says, in the main, what they say: at least
    ``GROUNDED_SHARE`` of its words (``_words``: common ones aside, a word's inflections
    alike) are theirs. The embedded model answered "what does the shells post say about zsh?"
    (the post: "Bash and zsh differ in small ways.") with the shell's "primary purpose … on
    top of the Linux kernel". An answer of fewer than ``GROUNDED_MIN_WORDS`` such words, or
    one whose language is not the sources' script (an English answer on a Chinese post), is
    not judged, nor one in another Latin-script language (an English summary of a German
    post). A Chinese answer on Chinese sources is compared by its pairs of characters next to
    each other (``_han_pairs``) and its Latin words: a made-up "泛型会让程序慢十倍…Go 团队计划
    删除泛型" about a one-line post on Go 1.18's generics was shown under 参考文章.
    ``pages``: the sources are web pages read (a reason names them so: it said "the
    posts found" of a research answer)."""
    said = "\n".join(sources)
    where_zh = "网页" if pages else "文章"
    theirs = set(_stems(said))
    latin = language_share(said, "en") >= 0.5
    chinese = not latin and language_share(said, "zh") >= 0.5
    theirs_in = _latin_language(said) or "en"
    if chinese:  # compared by their pairs of characters and their Latin words' stems both
        theirs |= _han_pairs(said)

    def check(generated: Generated) -> Verdict:
        answer = _LINK_PATH.sub(" ", _prose(generated.text))
        mine = set(_stems(answer))
        if chinese and language_share(answer, "zh") >= 0.5:
            mine |= _han_pairs(answer)
        elif len(mine) < GROUNDED_MIN_WORDS or not latin or language_share(answer, "en") < 0.5:
            return Verdict("grounded", True, "too short, or in another script, to tell")
        if len(mine) < GROUNDED_MIN_WORDS:
            return Verdict("grounded", True, "too short to tell")
        if not chinese and (_latin_language(answer) or "en") != theirs_in:  # (English of German)
            return Verdict("grounded", True, "in another language than its sources")
        found = mine & theirs
        if len(found) < GROUNDED_SHARE * len(mine):
            spelled = sorted(w for w in set(_words(answer)) if w[:_STEM] not in theirs)
            spelled = (_unsaid(answer, theirs) if chinese else []) + spelled
            spelled = spelled[:4]
            shown = ", ".join(spelled)
            return Verdict(
                "grounded",
                False,
                f"it says things the {'pages read' if pages else 'posts found'} do not "
                f"({shown}…): {len(found)} of its {len(mine)} words are theirs",
                zh=f"它说的内容{where_zh}里没有（{shown}…）：{len(mine)} 个词中只有 "
                f"{len(found)} 个来自{where_zh}",
            )
        return Verdict("grounded", True, f"{len(found)} of {len(mine)} words from the posts")

    return check
