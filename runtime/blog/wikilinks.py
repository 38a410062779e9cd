"""``[[wikilinks]]`` as Obsidian writes them, shared by the post index and the entity graph.

Understood forms: ``[[Note]]``, ``[[Note|shown text]]``, ``[[Note#Heading]]``,
``[[Note#Heading|text]]``, ``[[Note^block]]``, embeds ``![[Note]]`` and the escaped pipe
``[[Note\\|text]]`` used inside Markdown tables. Links inside fenced code blocks (at any
indent: a fence four spaces into a list item is its code block, and its ``[[x]]`` was a link
of the note's) and inline code are not links. ``[[#Heading]]`` points into the same note and
has no target.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["WikiLink", "normalize_target", "parse_wikilinks", "strip_code", "wikilink_targets"]

_LINK = re.compile(r"(!?)\[\[([^\[\]\n]{1,300})\]\]")
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[^\n]*$", re.MULTILINE)
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)


@dataclass(frozen=True, slots=True)
class WikiLink:
    """One link: ``target`` is the note name (may be empty for ``[[#Heading]]``)."""

    target: str
    heading: str | None = None
    block: str | None = None
    alias: str | None = None
    embed: bool = False

    @property
    def text(self) -> str:
        """What a reader sees: the alias, else the target (with the heading if any)."""
        if self.alias:
            return self.alias
        return f"{self.target}#{self.heading}" if self.heading else self.target


def strip_code(text: str) -> str:
    """``text`` with fenced code blocks and inline code blanked out (lines kept in place)."""
    out: list[str] = []
    lines = text.split("\n")
    fence: str | None = None
    for line in lines:
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group("fence")
                out.append("")
                continue
            out.append(_INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line))
        else:
            closing = match.group("fence") if match else ""
            if closing == line.strip() and closing[:1] == fence[0] and len(closing) >= len(fence):
                fence = None
            out.append("")
    return "\n".join(out)


def _parse_inner(inner: str, embed: bool) -> WikiLink:
    inner = inner.replace("\\|", "|")
    target, sep, alias = inner.partition("|")
    alias_text = alias.strip() if sep else None
    target, sep, heading = target.partition("#")
    heading_text = heading.strip() if sep else None
    block: str | None = None
    if "^" in target:
        target, _, block = target.partition("^")
        block = block.strip() or None
    if heading_text and heading_text.startswith("^"):
        block, heading_text = heading_text[1:].strip() or None, None
    return WikiLink(
        target=target.strip(),
        heading=heading_text or None,
        block=block,
        alias=alias_text or None,
        embed=embed,
    )


def parse_wikilinks(text: str) -> list[WikiLink]:
    """Every wikilink in a Markdown body, in order, outside code."""
    return [_parse_inner(m.group(2), bool(m.group(1))) for m in _LINK.finditer(strip_code(text))]


def normalize_target(target: str) -> str:
    """A link target as a comparable key: no ``.md`` suffix, folded case, single spaces."""
    target = target.strip()
    if target.lower().endswith(".md"):
        target = target[:-3]
    return " ".join(target.split()).casefold()


def wikilink_targets(text: str) -> list[str]:
    """The distinct link targets of a body (first spelling kept), without empty ones."""
    seen: set[str] = set()
    targets: list[str] = []
    for link in parse_wikilinks(text):
        key = normalize_target(link.target)
        if key and key not in seen:
            seen.add(key)
            targets.append(link.target)
    return targets
