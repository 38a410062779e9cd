"""A literal replacement, made without a model: "replace 'cheap' with 'inexpensive' in the
go post", "change "cheap" to "lightweight"", "把“便宜”改成“轻量”".

The embedded model, asked to replace one word, gave the go post back as a page of invented
Python in place of its prose and its Go code, and every check let it through (a text written
anew is not judged for what it dropped). Both words are written out in quotes, so the edit
needs no model: each place the first stands in the prose is given the second, code blocks
and inline code are left as they are, and every other byte of the post stays.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .checks import Generated, Verdict
from .parts import code_lines

__all__ = [
    "Replacement",
    "fix_word",
    "literal_replacement",
    "named_typo",
    "paragraph_with",
    "replace_in_prose",
    "spelled",
    "typo_gone",
]

_OPEN = "'\"“‘「『"
_CLOSE = "'\"”’」』"
_QUOTED = rf"[{_OPEN}](?P<{{name}}>[^{_OPEN}{_CLOSE}\n]{{{{1,200}}}})[{_CLOSE}]"
_OLD, _NEW = _QUOTED.format(name="old"), _QUOTED.format(name="new")
_PATTERNS = (
    re.compile(rf"\b(?:replace|substitute|swap)\s+(?:every\s+|all\s+|each\s+)?{_OLD}\s+"
               rf"(?:with|by|for)\s+{_NEW}", re.I),
    re.compile(rf"\b(?:change|rename|turn|correct|fix)\s+(?:every\s+|all\s+|each\s+)?{_OLD}\s+"
               rf"(?:to|into)\s+{_NEW}", re.I),
    re.compile(rf"(?:把|将)\s*(?:所有的?|全部的?)?\s*{_OLD}\s*(?:都)?\s*"
               rf"(?:改成|换成|替换成|替换为|改为|换为)\s*{_NEW}"),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Replacement:
    old: str
    new: str


def literal_replacement(instruction: str) -> Replacement | None:
    """The text to replace and its replacement, when the instruction writes both out in
    quotes; None otherwise (the model edits)."""
    for pattern in _PATTERNS:
        found = pattern.search(instruction)
        if found is not None and found.group("old") != found.group("new"):
            return Replacement(found.group("old"), found.group("new"))
    return None


_INLINE_CODE = re.compile(r"(`+)[^`\n]*?\1")


def replace_in_prose(body: str, swap: Replacement) -> tuple[str, int, int]:
    """``body`` with ``swap.old`` replaced by ``swap.new`` wherever it stands in the prose;
    how many were replaced, and how many were left in code (blocks and inline code)."""
    out: list[str] = []
    done = left = 0
    lines = code_lines(body)
    for i, (start, _line, in_code) in enumerate(lines):
        end = lines[i + 1][0] if i + 1 < len(lines) else len(body)
        raw = body[start:end]  # the line with its line break
        if in_code:
            left += raw.count(swap.old)
            out.append(raw)
            continue
        pieces: list[str] = []
        at = 0
        for code in _INLINE_CODE.finditer(raw):
            prose = raw[at : code.start()]
            done += prose.count(swap.old)
            pieces += [prose.replace(swap.old, swap.new), code.group()]
            left += code.group().count(swap.old)
            at = code.end()
        done += raw[at:].count(swap.old)
        pieces.append(raw[at:].replace(swap.old, swap.new))
        out.append("".join(pieces))
    return "".join(out), done, left


# A typo named in quotes, without its correction: "fix the typo 'recieve' in the go post",
# "'teh' is misspelled", "改正错别字“因该”". The model is sent only the paragraph holding it.
_TYPO = _QUOTED.format(name="typo")
_TYPO_PATTERNS = (
    re.compile(rf"\b(?:fix|correct|repair)\s+(?:the\s+|a\s+|that\s+)?(?:typos?|misspellings?|"
               rf"spelling(?:\s+(?:mistake|error)s?)?)(?:\s+(?:of|in))?\s+{_TYPO}", re.I),
    re.compile(rf"\b(?:fix|correct)\s+(?:the\s+)?spelling\s+of\s+{_TYPO}", re.I),
    re.compile(rf"{_TYPO}\s+is\s+(?:a\s+typo|misspell?(?:ed|t)|spel(?:t|led)\s+wrong)", re.I),
    re.compile(rf"(?:改正|改掉|修正|纠正|修改)\s*(?:错别字|拼写错误|笔误)\s*{_TYPO}"),
    re.compile(rf"(?:把|将)?\s*(?:错别字)\s*{_TYPO}\s*(?:改正|改掉|修正|纠正|改一下)"),
)  # fmt: skip


def named_typo(instruction: str) -> str | None:
    """The misspelt text an instruction names in quotes without its correction, or None."""
    for pattern in _TYPO_PATTERNS:
        found = pattern.search(instruction)
        if found is not None:
            return found.group("typo")
    return None


def paragraph_with(body: str, text: str) -> tuple[str | None, int]:
    """The first paragraph of ``body``'s prose (its lines between blank lines, code left out)
    that holds ``text``, as it stands in ``body`` (its line breaks, CRLF or not, as they
    are), and how many times ``text`` stands in code; None when no prose holds it (then the
    count tells whether code does)."""
    in_code = 0
    start: int | None = None
    end = 0
    found = False
    for offset, line, code in code_lines(body):
        if code:
            in_code += line.count(text)
        if code or not line.strip():
            if found:
                return body[start:end], in_code
            start = None
            continue
        if start is None:
            start = offset
        end = offset + len(line)
        found = found or text in _INLINE_CODE.sub("", line)
        in_code += sum(m.group().count(text) for m in _INLINE_CODE.finditer(line))
    return (body[start:end] if found and start is not None else None), in_code


def typo_gone(typo: str) -> Callable[[Generated], Verdict]:
    """The check that a typo asked to be fixed is no longer in the text (its code aside)."""

    def check(generated: Generated) -> Verdict:
        if typo in _INLINE_CODE.sub("", generated.text):
            return Verdict(
                "typo_fixed",
                False,
                f"“{typo}” is still there",
                zh=f"“{typo}”还在",
            )
        return Verdict("typo_fixed", True, f"“{typo}” fixed")

    return check


_LETTERS = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def _one_edit(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with one letter changed, added, dropped, or two side by side
    swapped ("recieve" / "receive", "thousnads" / "thousands", "teh" / "the")."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )  # fmt: skip
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k, (x, y) in enumerate(zip(short, long, strict=False)) if x != y), len(short))
    return short[i:] == long[i + 1 :]


def spelled(typo: str, texts: Iterable[str]) -> str | None:
    """The word ``texts`` (the blog's posts) use that ``typo`` misspells: one edit from it
    (``_one_edit``, case aside), the one they use most, when no other is used as often, in
    the spelling they use most; None when there is none, when ``typo`` is not one word, or
    when two or more of the texts use ``typo`` itself (a word of the blog's: "then" is one
    edit from "the", and every "then" would have become "the"; the model is asked then)."""
    word = typo.strip()
    if not _LETTERS.fullmatch(word) or len(word) < 3:
        return None
    counts: Counter[str] = Counter()
    forms: Counter[str] = Counter()
    folded = word.casefold()
    using = 0
    for text in texts:
        found = _LETTERS.findall(text)
        forms.update(found)
        words = [w.casefold() for w in found]
        counts.update(words)
        using += folded in words
    if using >= 2:
        return None
    near = sorted(((n, w) for w, n in counts.items() if _one_edit(folded, w)), reverse=True)
    if not near or (len(near) > 1 and near[1][0] == near[0][0]):
        return None
    right = max((f for f in forms if f.casefold() == near[0][1]), key=lambda f: forms[f])
    if word.isupper():
        return right.upper()
    if word[0].isupper() and right[0].islower():
        return right[0].upper() + right[1:]
    if word.islower() and not right.islower() and right[1:] == right[1:].lower():
        return right.lower()  # "Docker" at a sentence's start, "docker" in the middle
    return right


def fix_word(body: str, typo: str, right: str) -> tuple[str, int]:
    """``body`` with the word ``typo`` (whole, as written) made ``right`` in its prose; code
    blocks and inline code as they were. How many were fixed."""
    word = re.compile(rf"(?<![\w'’-]){re.escape(typo)}(?![\w'’-])")
    out: list[str] = []
    done = 0
    lines = code_lines(body)
    for i, (start, _line, in_code) in enumerate(lines):
        end = lines[i + 1][0] if i + 1 < len(lines) else len(body)
        raw = body[start:end]
        if in_code:
            out.append(raw)
            continue
        at = 0
        for code in [*_INLINE_CODE.finditer(raw), None]:
            stop = code.start() if code is not None else len(raw)
            fixed, n = word.subn(right, raw[at:stop])
            done += n
            out.append(fixed + (code.group() if code is not None else ""))
            at = code.end() if code is not None else stop
    return "".join(out), done
