"""A post's title: one written out in the request, and the checks on one the model writes.

"change the title to "Rust, faster"", "rename the post to Rust 1.78 is out", "把标题改成《…》"
(``given_title``) are set as written; a described one ("to something catchier") is the
model's, and its answer is taken apart (``title_shape``: a label, the title said twice, a
final stop, talk after it) and checked (``title_changed``, ``title_length``). EditContent
(``edit.py``) sets it in the frontmatter, every other byte kept.
"""

from __future__ import annotations

import re

from .checks import Check, Generated, Verdict, kind_of
from .common import MAX_TITLE_CHARS

__all__ = ["H1", "given_title", "title_changed", "title_length", "title_shape"]

# A post's title as the ``# Title`` line at the top of its body (after a byte-order mark and
# blank lines): indented three spaces at most, its closing ``#``s (after a space: "# C#" is
# titled "C#") and the line break left out. It took a CRLF post's "\r" as the title's own, and
# the new title was written "# New title\n" in a CRLF file; and it took "    # install the
# deps as root", the comment of an indented code block, for an untitled post's title.
H1 = re.compile(r"\A(\ufeff?(?:[ \t]*\r?\n)*) {0,3}#[ \t]+([^\r\n]+?)(?:[ \t]+#+)?[ \t]*\r?$", re.M)
# A new title written out in the request: "change the title to "X"", "rename the post to Rust
# 1.78 is out", "retitle it as X", "把标题改成《X》". Unquoted, only a capital or a digit
# starts one ("the title to something catchier" describes a title: the model writes it).
_GIVEN_TITLE = re.compile(
    r"(?:\b(?:title|headline)(?:\s+of\s+.+?)?|\bretitle\b(?:\s+(?:it|this|the\s+post))?"
    r"|\brename\b.*?)\s+"
    r"(?:to|as|into)\b\s*[:：]?\s*(?P<title>.+?)\s*$"  # (not "as" of "async")
    r"|(?:标题|题目)\s*(?:改成|改为|换成|设为|设置为|改作)\s*[:：]?\s*(?P<zh>.+?)\s*$",
    re.I,
)
_QUOTES = "\"'“”‘’《》「」『』`"
_DESCRIBES = re.compile(
    r"^(?:something|a|an|one|more|less|be|make|sound|reflect|mention|include|better)\b", re.I
)


# A word of courtesy after a quoted title: "rename the title to “Go: the good parts”, please"
# was no title given, and the model was asked for one.
_PLEASE_AFTER = re.compile(
    rf"(?<=[{_QUOTES}])\s*[,，]?\s*(?:please|thanks|thank\s+you|谢谢|谢了)[.!。！]*$", re.I
)


def given_title(instruction: str) -> str | None:
    """The new title the instruction writes out (see ``_GIVEN_TITLE``), or None."""
    found = _GIVEN_TITLE.search(" ".join(instruction.split()))
    if found is None:
        return None
    raw = (found.group("title") or found.group("zh") or "").rstrip("。.!！")
    raw = _PLEASE_AFTER.sub("", raw)
    quoted = len(raw) >= 2 and raw[0] in _QUOTES and raw[-1] in _QUOTES
    text = raw[1:-1].strip() if quoted else raw
    if not text or len(text) > MAX_TITLE_CHARS or "\n" in text:
        return None
    if not quoted and (not (text[0].isupper() or text[0].isdigit()) or _DESCRIBES.match(text)):
        return None
    return text


# A line that only labels what follows ("Text:", "New title:", "标题："): the prompt's own
# "Text:" came back between two copies of the title.
_LABEL_LINE = re.compile(r"^\s*[\w ]{1,30}[:：]\s*$")


_TITLE_LABEL = re.compile(
    r"^(?:(?:new|revised|improved)\s+)?title\s*[:：]\s*|^新?标题\s*[:：]\s*", re.I
)


def _title_lines(text: str) -> list[str]:
    """The lines of a title answer, labels left out and a line said again counted once. A
    first paragraph of one line that does not end a sentence, followed by sentences (talk
    about it: "The Git Workflow: A Practical Guide\n\nA practical guide that is not a
    title."), is the title alone."""
    stripped = text.strip()
    head, _, rest = stripped.partition("\n\n")
    if (
        rest.strip()
        and "\n" not in head.strip()
        and not _LABEL_LINE.match(head)
        and not head.rstrip().endswith((".", "。", ":", "：", "!", "?"))
        and rest.rstrip().endswith((".", "。", "!", "！", ")", "）"))
    ):
        stripped = head
    lines: dict[str, str] = {}
    for line in stripped.splitlines():
        if line.strip() and not _LABEL_LINE.match(line):
            lines.setdefault(line.strip().strip("\"'“”《》#*.。 ").casefold(), line)
    return list(lines.values())


def title_shape(generated: Generated) -> Verdict:
    lines = _title_lines(generated.text)
    if len(lines) != 1 or len(lines[0]) > MAX_TITLE_CHARS:
        return Verdict(
            "title",
            False,
            "a title is one line of at most 200 characters",
            zh="标题应是一行，最多 200 个字符",
        )
    title = _TITLE_LABEL.sub("", lines[0].strip())
    if title.endswith((".", "。")) and not title.endswith(".."):
        title = title[:-1]  # a title is not a sentence: "Async closures are here."
    title = title.strip("\"'“”《》#* ")
    return Verdict("title", True, text=title or lines[0].strip())


def title_changed(original: str) -> Check:
    """A new title asked of the model is not the old one: "suggest a better title for the git
    workflow post" came back as the same title, and the reply said nothing had changed."""

    def check(generated: Generated) -> Verdict:
        title = title_shape(generated).text or generated.text.strip()
        if " ".join(title.casefold().split()) == " ".join(original.casefold().split()):
            return Verdict(
                "title_changed", False, "it is the title the post has", zh="它就是原来的标题"
            )
        return Verdict("title_changed", True)

    return check


def title_length(instruction: str, original: str) -> Check | None:
    """A title asked to be shorter is shorter, one asked to be longer is longer (in
    characters): the embedded model made "Compiler team planning, September" "The compiler
    team is planning, September" when asked for a shorter one, and it was saved. None when
    the instruction asks neither."""
    kind = kind_of(instruction)
    if kind not in ("shorten", "add"):
        return None

    def check(generated: Generated) -> Verdict:
        title = title_shape(generated).text or generated.text.strip()
        old, new = len(original.strip()), len(title)
        if (new < old) if kind == "shorten" else (new > old):
            return Verdict("title_length", True, f"{old} → {new} characters")
        asked, asked_zh = ("shorter", "更短") if kind == "shorten" else ("longer", "更长")
        return Verdict(
            "title_length",
            False,
            f"asked for a {asked} title, but it went from {old} to {new} characters",
            zh=f"要求标题{asked_zh}，但它从 {old} 个字符变成了 {new} 个",
        )

    return check
