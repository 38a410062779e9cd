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
from dataclasses import dataclass

from .parts import code_lines

__all__ = ["Replacement", "literal_replacement", "replace_in_prose"]

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
