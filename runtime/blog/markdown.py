"""Markdown posts: read their frontmatter (YAML, TOML or JSON), normalise its fields, and write
new YAML posts with python-frontmatter.

The fields understood follow Hugo, Zola, Jekyll, VitePress and Obsidian: ``title``, ``date``
(and where a blog keeps dates instead, ``skillrt.blog.conventions``), ``tags`` (a list, one
comma-separated string, or Zola's ``[taxonomies]``), ``draft``, ``description`` (or ``summary``),
``aliases`` and ``wikiLinks`` (the notes a post links to). Every other field is kept as it is
when a post is written back: ``dump_post`` never sorts or drops keys.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skillrt.blog.conventions import first_heading, is_draft, post_date
from skillrt.blog.frontmatter import split_frontmatter
from skillrt.blog.wikilinks import normalize_target, wikilink_targets

__all__ = [
    "PostFields",
    "dump_post",
    "inline_tags",
    "post_fields",
    "renamed_inline_tag",
    "split_post",
    "word_count",
]

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


def split_post(text: str, path: str = "") -> tuple[dict[str, Any], str]:
    """``(frontmatter, body)`` of a post, its frontmatter in YAML, TOML or JSON (see
    ``skillrt.blog.frontmatter``). A post without frontmatter has ``{}``.

    Raises ``InvalidFrontmatter`` when the block is not closed, is not valid in its format, or
    is not a mapping (python-frontmatter alone would silently treat those as body text).
    """
    found = split_frontmatter(text, path)
    if found.format is None:
        return {}, text.removeprefix("\ufeff").strip("\n")
    return found.fields(), found.body.lstrip("\r\n").rstrip()


def dump_post(metadata: Mapping[str, Any], body: str) -> str:
    """A post as text: YAML frontmatter (key order kept, Unicode as is) then the body."""
    import frontmatter  # python-frontmatter (and PyYAML): only when a post is written

    post = frontmatter.Post(body.strip("\n"))
    post.metadata = dict(metadata)
    text: str = frontmatter.dumps(post, sort_keys=False)
    return text.rstrip("\n") + "\n"


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return " ".join(str(value).split())


def _as_list(value: Any) -> list[str]:
    """A tag-like field: a list, or a string separated by commas (or spaces when no comma)."""
    if value is None:
        return []
    if isinstance(value, str):
        parts = value.split(",") if "," in value else value.split()
    elif isinstance(value, list | tuple | set):
        parts = [_as_text(v) for v in value if v is not None and not isinstance(v, dict | list)]
    else:
        parts = [_as_text(value)]
    out: list[str] = []
    for part in parts:
        item = part.strip().lstrip("#").strip()
        if item and item not in out:
            out.append(item)
    return out


def _link_name(value: str) -> str:
    value = value.strip()
    if value.startswith("[[") and value.endswith("]]"):
        value = value[2:-2]
    return value.split("|", 1)[0].split("#", 1)[0].strip()


@dataclass(frozen=True, slots=True)
class PostFields:
    """The fields of a post the index and graph use, normalised."""

    title: str
    date: str | None
    tags: tuple[str, ...]
    description: str
    aliases: tuple[str, ...]
    wikilinks: tuple[str, ...]
    draft: bool = False


def _tags(metadata: Mapping[str, Any]) -> list[str]:
    """``tags`` (or ``tag``), and Zola's ``[taxonomies]`` tags and categories."""
    tags = _as_list(metadata.get("tags", metadata.get("tag")))
    taxonomies = metadata.get("taxonomies")
    if isinstance(taxonomies, Mapping):
        for key in ("tags", "categories"):
            tags += [t for t in _as_list(taxonomies.get(key)) if t not in tags]
    return tags


# An inline tag (Obsidian's "#shell", "#project/alpha", "#读书"): after a space or a line's
# start (not a link to a heading, "[[#Intro]]", "(#usage)"), never all digits ("#42" is an
# issue), never in code or a comment ("%%…%%", "<!-- … -->").
_INLINE_TAG = re.compile(r"(?<!\S)#((?:[^\W\d]|\d+[^\W\d])[\w/-]*)")


def inline_tags(body: str) -> list[str]:
    """The tags written in ``body`` as ``#tag`` (Obsidian's), outside code and comments
    (``_NOT_TAGS``), in order."""
    found: list[str] = []
    seen: set[str] = set()  # (Obsidian's tags are one whatever their case: "#Tag", "#tag")
    for tag in _INLINE_TAG.findall(_without_code(body)):
        tag = tag.rstrip("/-")
        if tag and tag.casefold() not in seen:
            seen.add(tag.casefold())
            found.append(tag)
    return found


# Where no inline tag is, read or renamed: a fence (at any indent, in a list item; closed by
# one as long or longer, or never, when it runs to the end, as CommonMark has it), an indented
# line that is no list item (an indented code block's), inline code, comments. A tag right
# after one ("`x`#git") is none either: the text hidden is no space.
_NOT_TAGS = re.compile(
    # a fence (no backtick in a backtick fence's info), to one as long or longer, or the end
    r"^[ \t]*(?P<b>`{3,})(?![^\n]*`)[^\n]*\n.*?(?:^[ \t]*(?P=b)`*[ \t]*$|\Z)"
    r"|^[ \t]*(?P<t>~{3,})[^\n]*\n.*?(?:^[ \t]*(?P=t)~*[ \t]*$|\Z)"
    # an indented line that is no list item (an indented code block's)
    r"|^(?: {4}|\t)(?![ \t]*(?:[-*+]|\d+[.)])[ \t])[^\n]*$"
    r"|`[^`\n]*`|%%.*?%%|<!--.*?-->",
    re.S | re.M,
)


def _without_code(body: str) -> str:
    """``body`` with its code and comments (``_NOT_TAGS``) hidden under a character that is
    no space, at the same places."""
    return _NOT_TAGS.sub(lambda found: "\x00" * len(found.group()), body)


def renamed_inline_tag(body: str, old: str, new: str) -> str:
    """``body`` with each inline ``#old`` written ``#new``, ``old`` whatever its case (a tag
    under it, ``#old/child``, is another tag, as in the frontmatter, and stays); never in
    code, an indented line or a comment, nor right after one ("`x`#old" is no tag); every
    other byte as it was. ``body`` unchanged when ``new`` cannot be an inline tag (a space
    in it, all digits)."""
    if not _INLINE_TAG.fullmatch("#" + new) or new != new.rstrip("/-"):
        return body
    hidden = _without_code(body)
    folded = old.casefold()
    out: list[str] = []
    last = 0
    for found in _INLINE_TAG.finditer(hidden):
        tag = found.group(1)
        name = tag.rstrip("/-")
        if name.casefold() != folded:
            continue
        out += [body[last : found.start(1)], new]
        last = found.start(1) + len(name)
    return "".join(out) + body[last:] if out else body


def post_fields(
    metadata: Mapping[str, Any],
    body: str,
    stem: str,
    rel: str = "",
    *,
    with_inline_tags: bool = False,
) -> PostFields:
    """Normalise frontmatter: the title falls back to the first ``# heading`` outside code
    blocks, then ``stem`` (a page bundle's folder); the date and the draft flag follow the
    blog's conventions (``skillrt.blog.conventions``), ``rel`` being the post's path.
    ``with_inline_tags`` (an Obsidian vault): the body's ``#tags`` are tags too."""
    title = _as_text(metadata.get("title"))
    if not title:
        title = first_heading(body) or stem
    date = post_date(metadata, rel or stem)
    description = _as_text(metadata.get("description") or metadata.get("summary"))
    tags = _tags(metadata)
    if with_inline_tags:  # "Shell tips … #shell" had "no tags"
        known = {t.casefold() for t in tags}
        tags += [t for t in inline_tags(body) if t.casefold() not in known]
    aliases = _as_list(metadata.get("aliases", metadata.get("alias")))
    links = wikilink_targets(body)
    seen = {normalize_target(t) for t in links}
    for raw in _as_list(metadata.get("wikiLinks", metadata.get("wikilinks"))):
        name = _link_name(raw)
        if name and normalize_target(name) not in seen:
            seen.add(normalize_target(name))
            links.append(name)
    return PostFields(
        title,
        date,
        tuple(tags),
        description,
        tuple(aliases),
        tuple(links),
        is_draft(metadata, rel or stem),
    )


def word_count(text: str) -> int:
    """Words of a text, counting each Chinese character as one (as Chinese writers count)."""
    han = len(_HAN.findall(text))
    words = len(_WORD.findall(_HAN.sub(" ", text)))
    return han + words
