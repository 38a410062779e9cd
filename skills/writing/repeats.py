"""Paragraphs an article says twice, and lines a section says again and again.

SmolLM2-135M, given the end of the previous section in its prompt, starts the next section
with it, word for word ("In the past, bread was made from flour and water…" opened all three
sections of one article), and says a paragraph of its own twice. Such a paragraph is
dropped when the section has a paragraph of its own besides; a section that is nothing but
a copy is left as it is (a model may well answer every section alike, and the section is
still its answer).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from skillrt.blog.markdown import word_count

from .checks import HAN, Check, Generated, Verdict
from .parts import code_lines
from .scaffold import alike

__all__ = [
    "ALIKE",
    "MIN_LINE_WORDS",
    "no_repeated_paragraphs",
    "not_circular",
    "not_questions",
    "not_repetitive",
    "not_said_over",
    "said_before",
]

MIN_LINE_WORDS = 4  # shorter lines ("Yes.", "See below:") may well recur
MIN_REPEATED_LINES = 3
MAX_REPEATED_SHARE = 0.3

_DIGITS = re.compile(r"\d+|[一二三四五六七八九十百千]+")  # a counter, in digits or in Chinese
ALIKE = 0.9  # of a line's characters in common with one before: the same line, reworded a bit
NEAR_LINES = 32  # lines before compared (the distinct ones)


def _paragraphs(text: str) -> list[tuple[str, bool]]:
    """``text``'s blocks (separated by blank lines; a code block whole), each with whether
    it is code (``parts.code_lines`` tells which lines are)."""
    blocks: list[tuple[str, bool]] = []
    lines: list[str] = []
    code = False
    for _, line, in_code in code_lines(text):
        if lines and (in_code != code or (not in_code and not line.strip())):
            blocks.append(("\n".join(lines), code))
            lines = []
        if in_code or line.strip():
            lines.append(line)
            code = in_code
    if lines:
        blocks.append(("\n".join(lines), code))
    return blocks


def _norm(text: str) -> str:
    return " ".join(text.casefold().split()).strip(" \"'“”")


_ITEM_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def _line_key(line: str) -> str:
    """A line as compared with the lines before it: its list mark, case and spaces aside;
    empty for a line too short to count (``MIN_LINE_WORDS``) or a table row."""
    text = _ITEM_MARK.sub("", line)
    if _words(text) < MIN_LINE_WORDS or line.lstrip().startswith(("|", "#")):
        return ""
    return _norm(text)


NEARLY_MIN_WORDS = 15  # a paragraph this long, nearly said before, is dropped too
NEARLY_ALIKE = 0.97  # of its characters in common with one said before (a word or two apart)


def _nearly_said(key: str, said: set[str]) -> bool:
    """Whether the paragraph ``key`` (``_norm``'s) of ``NEARLY_MIN_WORDS`` words or more says
    a paragraph of ``said`` again: the start of one, word for word, or one a few words apart
    (``NEARLY_ALIKE``). The embedded model's article on tea saved two paragraphs a few words
    apart, and one on coffee ended with the first two sentences of the paragraph before."""
    if len(key.split()) < NEARLY_MIN_WORDS:
        return False
    return any(
        before.startswith(key) or alike(key, before, NEARLY_ALIKE)
        for before in said
        if len(before.split()) >= NEARLY_MIN_WORDS
    )


def no_repeated_paragraphs(earlier: Sequence[str]) -> Check:
    """Paragraphs the article already holds (in ``earlier``: the sections before) or that
    the text says a second time are dropped, when a paragraph of its own is left; so are the
    lines (a list's items, sentences on lines of their own) said before, word for word, or
    right after it a character apart (``_reworded``), and paragraphs nearly said before
    (``_nearly_said``), when a line of its own is left
    (SmolLM2-135M listed "vim supports multiple programming languages…" twice in one list).
    Code blocks and headings are left alone. Never fails."""
    seen = {_norm(block) for text in earlier for block, code in _paragraphs(text) if not code}
    seen.discard("")
    lines_before = {
        _line_key(line)
        for text in earlier
        for block, code in _paragraphs(text)
        if not code
        for line in block.split("\n")
    } - {""}

    def check(generated: Generated) -> Verdict:
        blocks: list[tuple[str, bool]] = []
        dropped = 0
        here: set[str] = set()
        for block, code in _paragraphs(generated.text):
            key = _norm(block)
            if not code and (key in seen or key in here or _nearly_said(key, seen | here)):
                dropped += 1
                continue
            here.add(key)
            blocks.append((block, code))
        if dropped and not any(_norm(b) not in seen for b, _ in blocks if b.strip()):
            return Verdict("repeated_paragraphs", True)  # (nothing of its own: as it is)
        kept, again = _without_lines_said(blocks, set(lines_before))
        if not dropped and not again:
            return Verdict("repeated_paragraphs", True)
        what = [f"{dropped} paragraph(s) the article already holds"] if dropped else []
        what += [f"{again} line(s) said before"] if again else []
        return Verdict(
            "repeated_paragraphs", True, "dropped " + " and ".join(what), "\n\n".join(kept)
        )

    return check


SAID_AGAIN_MIN_WORDS = 40  # a section this long or longer, said again whole, is named


def said_before(text: str, earlier: Sequence[str]) -> bool:
    """Whether ``text`` (an article's section) says nothing but paragraphs of ``earlier``
    (the sections before it), word for word, case and spacing aside, in
    ``SAID_AGAIN_MIN_WORDS`` words or more. SmolLM2-135M wrote one paragraph three times as
    an article's three sections, and the reply said nothing of it."""
    blocks = _paragraphs(text)
    own = [_norm(block) for block, code in blocks if not code and _norm(block)]
    if word_count("\n\n".join(own)) < SAID_AGAIN_MIN_WORDS:
        return False  # (prose words, a Chinese character one)
    seen = {_norm(block) for t in earlier for block, _ in _paragraphs(t)}
    return all(_norm(block) in seen for block, _ in blocks if _norm(block))  # (its code too)


def _without_lines_said(blocks: list[tuple[str, bool]], said: set[str]) -> tuple[list[str], int]:
    """``blocks`` without the prose lines said before (in ``said``, or earlier in them), and
    how many were dropped; a block left with no line goes too. All of them as they were, and
    0, when no line of their own would be left or when so many are said again that the text
    loops: a loop is asked for again, not trimmed to one line."""
    kept: list[str] = []
    again = own = 0
    for block, code in blocks:
        if code:
            kept.append(block)
            continue
        lines = []
        previous = ""  # the block's line before: a twin a character or two apart goes too
        for line in block.split("\n"):
            key = _line_key(line)
            if not key:
                lines.append(line)
                continue
            repeat = key in said or bool(previous and _reworded(key, previous))
            said.add(key)
            previous = key
            if repeat:
                again += 1
            else:
                own += 1
                lines.append(line)
        if any(line.strip() for line in lines):
            kept.append("\n".join(lines))
    if (again and not own) or _loops(again, again + own):
        return [block for block, _ in blocks], 0  # (a loop is not_repetitive's to refuse)
    return kept, again


_FIGURES = re.compile(r"\d+(?:[.,]\d+)*|`[^`\n]*`")  # numbers and code: what sets lines apart
_NEGATION = re.compile(r"[不没無无非别別未勿否]|\b(?:not|no|never|none|nothing)\b|n't\b", re.I)
MAX_REWORDED_CHARS = 1


def _reworded(line: str, before: str) -> bool:
    """``line`` is the line ``before`` it said again, a character apart ("这种工作原理，
    …" / "这种工作原能，…": SmolLM2-135M's list said one item twice so): at most
    ``MAX_REWORDED_CHARS`` characters changed, none a negation ("可以" / "不可以"), and the
    same numbers and inline code ("Port 8080 …" / "Port 8081 …"). Words swapped ("git
    merge" / "git rebase", "私有" / "公共") say something else, and stay."""
    if _FIGURES.findall(line) != _FIGURES.findall(before) or not alike(line, before, ALIKE):
        return False
    if sorted(_NEGATION.findall(line)) != sorted(_NEGATION.findall(before)):
        return False  # "now safe" / "not safe": a letter apart, the opposite said
    import difflib

    changed = 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, line, before, autojunk=False
    ).get_opcodes():
        if op == "equal":
            continue
        changed += max(i2 - i1, j2 - j1)
        if changed > MAX_REWORDED_CHARS:
            return False
    return True


def _loops(again: int, lines: int) -> bool:
    """Whether ``again`` lines of ``lines`` said again make a loop (``not_repetitive``)."""
    return again >= MIN_REPEATED_LINES and again > MAX_REPEATED_SHARE * lines


def _words(line: str) -> float:
    """A line's words, two Chinese characters counting one (before, a Chinese line was one
    word, and a Chinese section said again and again passed)."""
    han = len(HAN.findall(line))
    return len(HAN.sub(" ", line).split()) + han / 2


def _alike(line: str, before: str) -> bool:
    """The same line, or one a token or two from it ("…多了一个回答" / "…多了一个回改")."""
    return line == before or alike(line, before, ALIKE)


def not_repetitive(generated: Generated) -> Verdict:
    """Fails a section in which at least ``MIN_REPEATED_LINES`` lines of ``MIN_LINE_WORDS``
    words or more (``_words``), and over ``MAX_REPEATED_SHARE`` of them, say again a line
    said before (or nearly: ``_alike``), its numbers aside ("# 3. (your choice)", "# 4.
    (your choice)"; "第一段说明" / "第二段说明"): a loop the streaming guard misses because a
    counter in it changes. Code and table rows are left out."""
    lines = [
        " ".join(_DIGITS.sub("#", line.casefold()).split()).strip(" -*#>.)")
        for block, code in _paragraphs(generated.text)
        if not code
        for line in block.split("\n")
        if _words(line) >= MIN_LINE_WORDS and not line.lstrip().startswith("|")
    ]
    seen: list[str] = []
    again: list[str] = []
    for line in lines:
        if any(_alike(line, before) for before in seen[-NEAR_LINES:]):
            again.append(line)
        else:
            seen.append(line)
    if _loops(len(again), len(lines)):
        return Verdict(
            "not_repetitive",
            False,
            f"{len(again)} of its {len(lines)} lines say again what it said ({again[0][:60]!r})",
            zh=f"{len(lines)} 行中有 {len(again)} 行在重复前面的内容（{again[0][:60]!r}）",
        )
    return Verdict("not_repetitive", True)


CIRCULAR_MAX_WORDS = 40  # a longer answer has room for something besides
CIRCULAR_MIN_RUN = 5  # words said twice in a row
CIRCULAR_SHARE = 0.6  # of the answer's words, in the two runs
_LINK_TARGET = re.compile(r"\]\([^)\n]*\)|\[\[[^\]\n]*\]\]")  # a citation's path: not words
_TOKEN = re.compile(r"[\u3400-\u9fff]|[^\W_]+", re.UNICODE)


def not_circular(generated: Generated) -> Verdict:
    """Fails a short answer that says the same run of words twice and little else: the
    embedded model answered "what is the photo walk post about?" with "The photo walk post
    about a walk along the river is about a walk along the river." A run of at least
    ``CIRCULAR_MIN_RUN`` words said twice, the two covering ``CIRCULAR_SHARE`` of an answer
    of at most ``CIRCULAR_MAX_WORDS`` words (code aside)."""
    prose = "\n".join(block for block, code in _paragraphs(generated.text) if not code)
    prose = _LINK_TARGET.sub("]", prose)
    words = [w.casefold() for w in _TOKEN.findall(prose)]
    if len(words) > CIRCULAR_MAX_WORDS:
        return Verdict("not_circular", True)
    run, start, _ = _runs_said_again(words)
    if run >= CIRCULAR_MIN_RUN and 2 * run >= CIRCULAR_SHARE * len(words):
        said = re.sub(
            r"(?<=[\u3400-\u9fff]) (?=[\u3400-\u9fff])", "", " ".join(words[start : start + run])
        )
        return Verdict(
            "not_circular",
            False,
            f"it says the same words twice (“{said}”) and little else",
            zh=f"它把同样的话说了两遍（“{said}”），别的几乎什么也没说",
        )
    return Verdict("not_circular", True)


SAID_OVER_MAX_WORDS = 120  # a research answer this long or shorter is judged


def not_said_over(generated: Generated) -> Verdict:
    """Fails an answer of at most ``SAID_OVER_MAX_WORDS`` words (code aside) most of which
    (``CIRCULAR_SHARE``) are in runs of at least ``CIRCULAR_MIN_RUN`` words it says more than
    once: the embedded model answered "how do I detach according to <a page on tmux>" with
    "… detach a session from a tmux session" three times in 45 words. (``not_circular``'s
    rule, for a longer answer, and for several runs: a research answer's.)"""
    prose = "\n".join(block for block, code in _paragraphs(generated.text) if not code)
    words = [w.casefold() for w in _TOKEN.findall(_LINK_TARGET.sub("]", prose))]
    if len(words) > SAID_OVER_MAX_WORDS:
        return Verdict("not_said_over", True)
    run, start, covered = _runs_said_again(words)
    if run >= CIRCULAR_MIN_RUN and len(covered) >= CIRCULAR_SHARE * len(words):
        longest = " ".join(words[start : start + run])
        return Verdict(
            "not_said_over",
            False,
            f"most of it says the same words again (“{longest}”)",
            zh=f"它大部分在重复同样的话（“{longest}”）",
        )
    return Verdict("not_said_over", True)


def _runs_said_again(words: list[str]) -> tuple[int, int, set[int]]:
    """The longest run of ``words`` said again later (its length and start), and the places
    of the words in every run of at least ``CIRCULAR_MIN_RUN`` said again."""
    best: tuple[int, int] = (0, 0)
    covered: set[int] = set()
    for i in range(len(words)):
        for j in range(i + 1, len(words)):
            n = 0
            while j + n < len(words) and i + n < j and words[i + n] == words[j + n]:
                n += 1
            if n >= CIRCULAR_MIN_RUN:
                covered.update(range(i, i + n), range(j, j + n))
            if n > best[0]:
                best = (n, i)
    return best[0], best[1], covered


_QUESTION_END = re.compile(r"[?？]\s*[*_)\]]*\s*$")


def not_questions(*sources: str) -> Check:
    """Fails an answer whose every line of prose is a question of the model's: the embedded
    model answered "what is my first post about?" with "1. What is my first post about?\n2.
    What is my first post on Hugo building this site from Markdown?". A question the
    sources hold (an FAQ post's questions, listed) is theirs, not the model's."""
    known = {" ".join(line.casefold().split()) for text in sources for line in text.splitlines()}
    said = " ".join(" ".join(sources).casefold().split())

    def theirs(line: str) -> bool:
        folded = " ".join(line.casefold().split())
        return folded in known or (len(folded) >= 12 and folded in said)

    def check(generated: Generated) -> Verdict:
        lines = [
            _ITEM_MARK.sub("", line).strip()
            for block, code in _paragraphs(generated.text)
            if not code
            for line in block.split("\n")
            if line.strip() and not line.lstrip().startswith(("#", "|", ">"))
        ]
        asked = [line for line in lines if _QUESTION_END.search(line) and not theirs(line)]
        if lines and len(asked) == len(lines):
            return Verdict(
                "not_questions",
                False,
                "it asks questions instead of answering",
                zh="它在提问，而不是回答",
            )
        return Verdict("not_questions", True)

    return check
