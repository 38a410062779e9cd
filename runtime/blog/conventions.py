"""What a post's path and fields say beyond its title: its date, whether it is a draft, whether
it is a section page, and the name it goes by (a page bundle goes by its folder).

The conventions are those of the generators skillrt meets:

- **Dates** come from a field (``date``, ``publishDate``, ``pubDate``, ``published``,
  ``created``), else from a ``path`` field holding ``YYYY/MM/DD`` (the Rust blog on Zola),
  else from the file or bundle name (``2024-03-21-slug.md``, Jekyll and Zola) or a
  ``YYYY/MM/DD`` folder in the post's path. A date is kept as ``YYYY-MM-DD``.
- **Drafts**: ``draft = true`` (Hugo, Zola), ``published: false`` (Jekyll), or a file under a
  ``_drafts/`` folder (Jekyll, Hexo).
- **Section and list pages** (``_index.md``, and a language's ``_index.zh.md``, Hugo and
  Zola) are not posts.
- **Page bundles**: ``slug/index.md`` (and ``slug/index.zh.md``) goes by ``slug``; the page's
  own title wins, as always.
- **Web addresses**: a generator makes a post's address from its slug, not its file name:
  ``2024-01-05-hello-zola.md`` (Zola, Jekyll's ``/:title/``), ``hello-zola.md`` and
  ``hello-zola/index.md`` all go by ``hello-zola`` (``address_key``).
- A title taken from the body is the first ``# heading`` outside fenced code blocks (a
  ``# comment`` in a shell block is not a heading).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

__all__ = [
    "CODED_NAME",
    "DATED_NAME",
    "DATE_FIELDS",
    "DRAFT_FOLDERS",
    "LANGUAGE_CODE",
    "SECTION_PAGES",
    "address_key",
    "draft_marks",
    "draft_name",
    "first_heading",
    "in_drafts_folder",
    "is_bundle_page",
    "is_draft",
    "is_section_page",
    "post_date",
    "post_stem",
]

DATE_FIELDS = ("date", "publishDate", "pubDate", "published", "created")
SECTION_PAGES = frozenset({"_index.md", "_index.markdown"})
BUNDLE_PAGES = frozenset({"index.md", "index.markdown"})
LANGUAGE_CODE = r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})?"
"""A language's code in a file name, as Hugo and Zola read one (``zh``, ``zh-cn``, ``pt_BR``):
one pattern for every reader of such names (the index, web addresses, free names,
``translation_path``). Two copies disagreed: ``x.zh_cn.md`` had a language to
``translation_path`` and none to ``address_key``."""
CODED_NAME = re.compile(rf"^(?P<stem>.+)\.(?P<code>{LANGUAGE_CODE})$")
"""A file name's stem with a language's code after its last dot (``hello.zh``)."""
_SECTION_PAGE = re.compile(rf"^_index(\.{LANGUAGE_CODE})?\.(?:md|markdown)$", re.IGNORECASE)
_BUNDLE_PAGE = re.compile(rf"^index(\.{LANGUAGE_CODE})?\.(?:md|markdown)$", re.IGNORECASE)
"""A section page and a bundle's page, in a language too (``_index.zh.md``, ``index.en.md``:
Hugo's and Zola's translations): ``_index.zh.md`` was indexed as a post titled "_index.zh",
and ``index.zh.md`` was taken for a post named "index.zh", which tipped a Zola blog of bundles
to a flat new post."""
DRAFT_FOLDERS = ("_drafts",)
_YMD = re.compile(r"(?<!\d)(\d{4})[/-](\d{1,2})[/-](\d{1,2})(?!\d)")
DATED_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}-")
"""A ``YYYY-MM-DD-`` prefix of a file name (Jekyll's posts need one, its drafts have none)."""
_NAME_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[-_]|$)")
_FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t#]*$")
_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


def _as_date(value: Any) -> str | None:
    """``YYYY-MM-DD`` of a date, a datetime or a string that starts with one."""
    if isinstance(value, dt.datetime | dt.date):
        return value.strftime("%Y-%m-%d")
    if isinstance(value, str):
        return _valid(_YMD.match(value.strip()))
    return None


def _valid(match: re.Match[str] | None) -> str | None:
    if match is None:
        return None
    try:
        return dt.date(int(match[1]), int(match[2]), int(match[3])).isoformat()
    except ValueError:
        return None


def post_date(metadata: Mapping[str, Any], rel: str) -> str | None:
    """The post's date as ``YYYY-MM-DD`` (see the module docstring for where it comes from)."""
    for key in DATE_FIELDS:
        value = metadata.get(key)
        if value is not None and not isinstance(value, bool):
            found = _as_date(value)
            if found:
                return found
    path_field = metadata.get("path")
    if isinstance(path_field, str):
        found = _valid(_YMD.search(path_field))
        if found:
            return found
    name = post_stem(rel)
    found = _valid(_NAME_DATE.match(name))
    if found:
        return found
    return _valid(_YMD.search(str(PurePosixPath(rel).parent)))


def _truthy(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().casefold() in _TRUE | _FALSE:
        return value.strip().casefold() in _TRUE
    return None


def draft_marks(metadata: Mapping[str, Any]) -> tuple[str, ...]:
    """The fields that make the post a draft: ``draft`` when true, ``published`` when false
    (``yes``/``no``, ``on``/``off``, ``1``/``0`` as text too); what publishing removes."""
    marks: tuple[str, ...] = ("draft",) if _truthy(metadata.get("draft")) else ()
    if _truthy(metadata.get("published")) is False:
        marks += ("published",)
    return marks


def is_draft(metadata: Mapping[str, Any], rel: str) -> bool:
    """Whether the post is a draft: ``draft`` true, ``published`` false, or under ``_drafts/``."""
    return bool(draft_marks(metadata)) or in_drafts_folder(rel)


def in_drafts_folder(rel: str) -> bool:
    """Whether the post at ``rel`` sits under a drafts folder (``_drafts/``)."""
    return any(part in DRAFT_FOLDERS for part in PurePosixPath(rel).parts[:-1])


def is_section_page(rel: str) -> bool:
    """Whether a file is a section or list page (``_index.md``, ``_index.zh.md``), not a post."""
    return _SECTION_PAGE.match(PurePosixPath(rel).name) is not None


def is_bundle_page(rel: str) -> bool:
    """Whether a file is a page bundle's page (``slug/index.md``, ``slug/index.zh.md``)."""
    path = PurePosixPath(rel)
    return _BUNDLE_PAGE.match(path.name) is not None and bool(path.parent.name)


def post_stem(rel: str) -> str:
    """The name a post goes by: its file name without the suffix, or for a page bundle
    (``slug/index.md``, ``slug/index.zh.md``) the bundle's folder."""
    path = PurePosixPath(rel)
    if is_bundle_page(rel):
        return path.parent.name
    return path.stem


def draft_name(rel: str) -> str:
    """The name the post ``rel`` gets in a drafts folder: its file name without a
    ``YYYY-MM-DD-`` prefix (Jekyll's drafts have none), and a page bundle's page in its
    bundle's folder (``hooks-zh/index.md``). A bundle translated on a blog with ``_drafts/``
    was saved as ``_drafts/index.md``, its images loose in ``_drafts/`` beside the others'."""
    path = PurePosixPath(rel)
    if is_bundle_page(rel):
        return f"{DATED_NAME.sub('', path.parent.name) or path.parent.name}/{path.name}"
    return DATED_NAME.sub("", path.name)


def address_key(rel: str) -> tuple[str, str, str]:
    """What a generator makes the post's web address from: ``(folder, slug, language)``. The
    folder holds the post (a bundle: its folder's parent), the slug is the name without a
    ``YYYY-MM-DD-`` prefix, and the language a ``.zh`` before the suffix. Zola's
    ``2024-01-05-hello-zola.md`` and a new ``2026-11-30-hello-zola.md`` both went to
    ``/blog/hello-zola/`` ("Found path collisions"), as did Hugo's ``goroutines.md`` and a
    new ``goroutines/index.md``; two posts with one key are at one address."""
    path = PurePosixPath(rel)
    bundle = _BUNDLE_PAGE.match(path.name) if path.parent.name else None
    if bundle is not None:
        folder, stem, language = path.parent.parent, path.parent.name, bundle.group(1) or ""
    else:
        folder, stem, language = path.parent, path.stem, ""
        found = CODED_NAME.match(stem)
        if found is not None:
            stem, language = found["stem"], "." + found["code"]
    slug = DATED_NAME.sub("", stem) or stem
    return folder.as_posix(), slug.casefold(), language.casefold()


def _closes(marker: str, fence: str, line: str) -> bool:
    """Whether ``line`` (opening with ``marker``) closes the code block ``fence`` opened."""
    return marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip(" " + fence[0])


def first_heading(body: str) -> str | None:
    """The text of the first ``# heading`` outside fenced code blocks, or None."""
    fence: str | None = None
    for line in body.splitlines():
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and _closes(opened.group(1), fence, line):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        heading = _HEADING.match(line)
        if heading:
            return heading.group(1).strip()
    return None
