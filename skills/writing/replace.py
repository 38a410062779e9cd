"""A literal replacement, made without a model: "replace 'cheap' with 'inexpensive' in the
go post", "change "cheap" to "lightweight"", "把“便宜”改成“轻量”".

The embedded model, asked to replace one word, gave the go post back as a page of invented
Python in place of its prose and its Go code, and every check let it through (a text written
anew is not judged for what it dropped). Both words are written out in quotes, so the edit
needs no model: each place the first stands whole in the prose is given the second, code
(blocks, indented code, inline code) and markup (link addresses, wikilink targets,
shortcodes, HTML tags: ``_MARKUP``) are left as they are, and every other byte of the post
stays.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .checks import Generated, Verdict
from .parts import code_lines, indent_width

__all__ = [
    "Replaced",
    "Replacement",
    "fix_word",
    "literal_replacement",
    "named_typo",
    "paragraph_with",
    "prose_replacement",
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

# Where a word of the prose is not, though its letters may be: the addresses and names the
# markup points at. "replace 'docker' with 'podman'" made the link https://docs.docker.com
# docs.podman.com, /img/docker.png podman.png, the wikilink [[docker-basics]] (a post that
# exists) [[podman-basics]], and rewrote a shortcode's id and an <img src>. A link's text, an
# image's alt text and a wikilink's alias (after "|") are prose, and are replaced.
_MARKUP = re.compile(
    # a link's or an image's destination: [text](dest "title")
    r"\]\([ \t]*(?P<dest><[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)"
    # a reference definition's label and address: [label]: https://...
    r"|^[ ]{0,3}\[(?P<deflabel>[^\]\n]+)\]:[ \t]*(?P<defdest><[^<>\n]*>|\S+)"
    # a full reference's label: [text][label]
    r"|\]\[(?P<reflabel>[^\]\n]+)\]"
    # a wikilink's target and heading (an embed's too): [[post#Heading|alias]]
    r"|\[\[(?P<wiki>[^\[\]|\n]*)"
    r"|\[\^[^\]\n]+\]"  # a footnote's label
    # a shortcode or a template tag, Hugo's, Zola's, Jekyll's, Hexo's (not across a blank line)
    r"|\{\{(?:(?!\n[ \t]*\n).)*?\}\}|\{%(?:(?!\n[ \t]*\n).)*?%\}"
    r"|\{[#.:][^{}\n]*\}"  # an attribute list: {#custom-id}, {: .note}
    r"|<!--.*?-->|</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>"  # an HTML comment, an HTML tag
    r"|<[A-Za-z][\w+.-]{1,31}:[^\s<>]*>|<[^\s<>@]+@[^\s<>]+>"  # an autolink
    r"|\b(?:https?|ftp)://[^\s<>()\[\]{}\"'`]+|\bwww\.[\w-]+\.[^\s<>()\[\]{}\"'`]+"  # an address
    r"|(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+",  # an e-mail address
    re.M | re.S,
)
# A link whose text is its label ("[docker]" with "[docker]: https://..." below): its words are
# the label's, and the link would be lost with them.
_SHORTCUT = re.compile(r"(?<![\]\\])\[(?P<label>[^\[\]\n]+)\](?![(\[:])")
_DEFINED = re.compile(r"^[ ]{0,3}\[([^\]\n]+)\]:", re.M)
_LIST_ITEM = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>[-*+]|\d{1,9}[.)])(?P<gap>[ \t]+|$)")
_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
# Scripts written without spaces between words: a word in them has no edges to match on
# ("把容器改成..." holds "容器" between two other characters).
_UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"


def _indented_code(lines: list[tuple[int, str, bool]]) -> set[int]:
    """The lines (by index in ``code_lines``) of indented code blocks: indented four columns
    past the list item they are in (or the margin), after no open paragraph (a line indented
    under a paragraph continues it). An indented ``    docker run --rm hello-world`` under
    "Run it like this:" and a blank line was made ``podman run``."""
    code: set[int] = set()
    paragraph = False  # a paragraph is open: an indented line continues it
    item: int | None = None  # the column a list item's content starts at
    for n, (_start, text, fenced) in enumerate(lines):
        if fenced or not text.strip():
            paragraph = False
            continue
        indent = indent_width(text[: len(text) - len(text.lstrip(" \t"))])
        base = item or 0
        listed = _LIST_ITEM.match(text)
        if listed is not None and indent < base + 4:
            gap = indent_width(listed.group("gap")) if listed.group("gap") else 1
            item = indent + len(listed.group("marker")) + (gap if gap <= 4 else 1)
            paragraph = True
            continue
        if item is not None and not paragraph and indent < item:
            item, base = None, 0  # a line at the margin after a blank one: the list is over
        if indent >= base + 4 and not paragraph:
            code.add(n)
            continue
        paragraph = _ATX.match(text) is None
    return code


def _kept(body: str) -> tuple[bytearray, bytearray]:
    """Which characters of ``body`` are code (fenced, indented, inline) and which are markup
    (``_MARKUP``, a shortcut link's label): a mask of each, 1 where it is."""
    code, markup = bytearray(len(body)), bytearray(len(body))
    lines = code_lines(body)
    indented = _indented_code(lines)
    for n, (start, text, fenced) in enumerate(lines):
        if fenced or n in indented:
            code[start : start + len(text)] = b"\x01" * len(text)
            continue
        for found in _INLINE_CODE.finditer(text):
            code[start + found.start() : start + found.end()] = b"\x01" * len(found.group())
    labels = {label.strip().casefold() for label in _DEFINED.findall(body)}
    for found in _MARKUP.finditer(body):
        name = next((g for g in found.groupdict() if found.group(g) is not None), None)
        spans = (
            [found.span("deflabel"), found.span("defdest")]
            if name == "deflabel"
            else [found.span(name) if name else found.span()]
        )
        for start, end in spans:
            markup[start:end] = b"\x01" * (end - start)
    for found in _SHORTCUT.finditer(body):
        if found.group("label").strip().casefold() in labels:
            markup[found.start() : found.end()] = b"\x01" * len(found.group())
    return code, markup


@dataclass(frozen=True, slots=True)
class Replaced:
    """A replacement made: the text, how many were replaced, and how many were left as they
    were in code (blocks, indented code, inline code) and in markup (link addresses, wikilink
    targets, shortcodes, HTML tags, addresses written out)."""

    text: str
    replaced: int
    in_code: int
    in_links: int


def _replaced(body: str, pattern: re.Pattern[str], new: str | Callable[[str], str]) -> Replaced:
    """``body`` with each match of ``pattern`` that is all prose made ``new`` (or what
    ``new`` makes of the match; one it leaves as it is, "Go" when "go" is made "Go", is not
    counted); one that touches code, or markup it does not hold whole (``_holds``), counted
    there, and left."""
    code, markup = _kept(body)
    out: list[str] = []
    last = done = in_code = in_links = 0
    for found in pattern.finditer(body):
        start, end = found.span()
        if any(code[start:end]):
            in_code += 1
        elif any(markup[start:end]) and not _holds(markup, start, end):
            in_links += 1
        elif (made := new if isinstance(new, str) else new(found.group())) != found.group():
            out += [body[last:start], made]
            last, done = end, done + 1
    return Replaced("".join(out) + body[last:], done, in_code, in_links)


def _holds(markup: bytearray, start: int, end: int) -> bool:
    """Whether the text from ``start`` to ``end`` holds the markup it touches whole, as the
    words quoted wrote it: "replace 'Vec<String>' with 'Vec<&str>'" found ``<String>`` (an
    HTML tag to CommonMark) and said the words were only in markup. A word in an address
    ("docs.docker.com") has markup on either side, and is left; so is one that is all markup
    (a link's label, a wikilink's target)."""
    return (
        not all(markup[start:end])  # (a link's label, a wikilink's target: markup alone)
        and (start == 0 or not markup[start - 1])
        and (end == len(markup) or not markup[end])
    )


def _as_words(text: str) -> re.Pattern[str]:
    """``text`` as a pattern that matches it whole where it starts or ends with a letter or
    a digit of a spaced script: "go" is not the one of "going", "good" or "![logo]" (they
    became "Going", "Good", "![loGo]"); "容器" is one in "把容器改成" (no spaces to match on).
    Written in small letters, it matches in any case ("docker" is "Docker" at a sentence's
    start, and was left); with a capital, as written ("Go" is not the verb "go")."""
    before = rf"(?<![^\W{_UNSPACED}])" if re.match(rf"[^\W{_UNSPACED}]", text) else ""
    after = rf"(?![^\W{_UNSPACED}])" if re.search(rf"[^\W{_UNSPACED}]\Z", text) else ""
    flags = re.I if text == text.lower() != text.upper() else 0
    return re.compile(before + re.escape(text) + after, flags)


def _in_case(old: str, new: str) -> Callable[[str], str]:
    """What ``new`` is where ``old`` stands in another case: in capitals for "DOCKER", with
    a capital for "Docker" ("Podman"), as written for "docker"."""

    def cased(found: str) -> str:
        if found == old:
            return new
        if len(found) > 1 and found.isupper():
            return new.upper()
        if found[:1].isupper():
            return new[:1].upper() + new[1:]
        return new

    return cased


def prose_replacement(body: str, swap: Replacement) -> Replaced:
    """``body`` with ``swap.old`` made ``swap.new`` wherever it stands whole (``_as_words``)
    in the prose, in the case it stands in (``_in_case``); what was left in code and in
    markup counted (``Replaced``)."""
    return _replaced(body, _as_words(swap.old), _in_case(swap.old, swap.new))


def replace_in_prose(body: str, swap: Replacement) -> tuple[str, int, int]:
    """``body`` with ``swap.old`` replaced by ``swap.new`` wherever it stands in the prose
    (``prose_replacement``); how many were replaced, and how many were left in code (blocks,
    indented code and inline code; those in link addresses and markup are
    ``prose_replacement``'s ``in_links``)."""
    made = prose_replacement(body, swap)
    return made.text, made.replaced, made.in_code


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
    (blocks, indented code, inline code) and markup (a link's address, a wikilink's target:
    ``_MARKUP``) as they were. How many were fixed."""
    word = re.compile(rf"(?<![\w'’-]){re.escape(typo)}(?![\w'’-])")
    made = _replaced(body, word, right)
    return made.text, made.replaced
