"""How the blog's posts look, so that a new post looks the same: ``PostStyle``.

``post_style()`` reads the frontmatter of the blog's most recent posts (at most
``SAMPLE`` of them, drafts last) and finds:

- the **format** most of them use (YAML, TOML, JSON), unless ``new_post.format`` says;
- the **keys** most of them carry, in the order the most recent one has them (Zola's
  ``[taxonomies]`` included), and values every post that has a key shares (``layout: post``);
- the **file name**: a page bundle (``slug/index.md``) or a file, with a ``YYYY-MM-DD-`` prefix
  when most names have one (Jekyll needs it);
- the **folder** where the recent posts live (on a generator's site; elsewhere the posts
  folder itself);
- a ``path`` field's shape (``inside-rust/2024/03/21/slug``: the prefix before the date);
- how **drafts** are marked: a ``_drafts/`` folder (Jekyll, Hexo) or a ``draft`` field;
- how YAML **lists** are written: one ``- item`` a line, ``tags: [a, b]`` or
  ``tags: ["a", "b"]``, as most of the posts write theirs.

``new_post.template`` names a post whose frontmatter is taken instead: its format, its keys in
their order, and its values as defaults.

``PostStyle.compose()`` writes a new post: the keys it can fill (title, date, path, slug, tags,
description, wikiLinks, draft) are filled, keys it cannot fill (``authors``) are left out.
A blog that is not a generator's site (skillrt's own ``posts/``, an Obsidian vault) or that has
no posts yet gets skillrt's own keys: title, date, description, tags and wikiLinks.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from skillrt.blog.conventions import DATE_FIELDS, DATED_NAME, DRAFT_FOLDERS, post_stem
from skillrt.blog.frontmatter import (
    FORMATS,
    Format,
    Frontmatter,
    JsonStyle,
    ListStyle,
    json_style,
    render_frontmatter,
    split_frontmatter,
    yaml_list_style,
)
from skillrt.blog.posts import PostMeta, newest_first
from skillrt.exceptions import InvalidFrontmatter

__all__ = ["GENERATORS", "PostStyle", "post_style"]

SAMPLE = 60
RECENT = 7
HEAD_BYTES = 64_000
GENERATORS = frozenset({"zola", "hugo", "hexo", "jekyll", "vitepress", "mkdocs"})
OWN_KEYS = ("title", "date", "description", "tags", "wikiLinks")
_FILLED = frozenset(
    {*DATE_FIELDS, "title", "path", "slug", "tags", "taxonomies", "description", "summary"}
    | {"wikiLinks", "wikilinks", "draft"}
)
_PLACEHOLDER = re.compile(r"""(["']?)\{\{.*?\}\}\1""")
"""A Go template's placeholder in a Hugo archetype, quoted or not (``{{ .Date }}``, ``"{{
replace .File.ContentBaseName "-" " " | title }}"``): read as an empty value, to fill.
``new_post.template = "archetypes/default.md"``, as ``hugo new site`` writes it, was refused
("The frontmatter of `` cannot be read: invalid YAML"), and no post could be made."""
_YEAR_FOLDER = re.compile(r"^(?P<base>.+/)?(?:19|20)\d{2}(?:/(?P<month>0[1-9]|1[0-2]))?$")
_PATH_DATE = re.compile(r"^(.*?)(\d{4})/(\d{2})/(\d{2})/")
_DATE_TEXT = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}(?!\d)")


@dataclass(frozen=True, slots=True)
class PostStyle:
    """What new posts copy from the blog (see the module docstring)."""

    format: Format = "yaml"
    keys: tuple[str, ...] = OWN_KEYS
    shared: Mapping[str, Any] = field(default_factory=dict)  # values every post has
    folder: str = "posts"
    bundle: bool = False
    date_prefix: bool = False
    path_prefix: str | None = None  # a ``path`` field: what comes before the date
    path_dated: bool = True
    drafts_dir: str | None = None
    taxonomies: tuple[str, ...] = ()  # Zola: which taxonomies posts carry
    lists: ListStyle = "block"  # how most posts write their YAML lists
    undated: frozenset[str] = frozenset()  # date-named keys whose values are no dates
    json_as: JsonStyle = "braced"  # JSON: in braces (Hugo) or Hexo's members and ";;;"
    offset: dt.timedelta | None = None  # dates carry a time and this offset
    newline: str = "\n"  # "\r\n" on a blog whose posts are mostly CRLF

    def file_path(self, slug: str, day: dt.date, *, draft: bool) -> str:
        """Where a new post goes: the recent posts' folder (or the drafts folder), named as
        the blog names its posts."""
        folder = self.drafts_dir if draft and self.drafts_dir else _dated_folder(self.folder, day)
        name = slug
        if self.date_prefix and not (draft and self.drafts_dir):  # Jekyll drafts have no date
            name = f"{day.isoformat()}-{slug}"
        rel = f"{folder}/{name}/index.md" if self.bundle else f"{folder}/{name}.md"
        return rel.removeprefix("./")

    def compose(
        self,
        *,
        title: str,
        slug: str,
        day: dt.date,
        body: str,
        draft: bool,
        tags: Sequence[str] = (),
        description: str = "",
        links: Sequence[str] = (),
        extra: Mapping[str, Any] | None = None,
    ) -> str:
        """A new post's text: the frontmatter in the blog's format and keys, then ``body``."""
        known: dict[str, Any] = {
            "title": title,
            "slug": slug,
            "path": self._path_field(slug, day),
            "tags": list(tags) or None,
            "taxonomies": {"tags": list(tags)} if tags and "tags" in self.taxonomies else None,
            "description": description or None,
            "summary": description or None,
            "wikiLinks": list(links) or None,
            "wikilinks": list(links) or None,
        }
        stamp = self._stamp(day)
        for key in DATE_FIELDS:
            known[key] = stamp
        fields: dict[str, Any] = {}
        for key in self.keys:
            if key == "draft":
                continue
            filled = key in _FILLED and key not in self.undated
            value = known.get(key) if filled else self.shared.get(key)
            if value is not None:
                fields[key] = value
        fields.update({k: v for k, v in (extra or {}).items() if v is not None})
        if draft and not self.drafts_dir:
            fields["draft"] = True
        block = render_frontmatter(fields, self.format, lists=self.lists, json_as=self.json_as)
        text = block + "\n" + body.strip("\n") + "\n" if body.strip() else block
        if self.newline != "\n":  # (a CRLF blog: its new posts are CRLF too)
            text = text.replace("\r\n", "\n").replace("\n", self.newline)
        return text

    def _stamp(self, day: dt.date) -> dt.date | dt.datetime:
        """A new post's date: ``day``, or, when the blog's dates carry a time and an offset,
        now at that offset. A bare date is midnight UTC to Hugo, which skips future posts:
        made at 07:00 in UTC+8 beside posts dated ``2024-03-01T10:00:00+08:00``, a post was
        hidden until 08:00."""
        if self.offset is None:
            return day
        return dt.datetime.now(dt.timezone(self.offset)).replace(microsecond=0)

    def _path_field(self, slug: str, day: dt.date) -> str | None:
        if self.path_prefix is None:
            return None
        if self.path_dated:
            return f"{self.path_prefix}{day:%Y/%m/%d}/{slug}"
        return f"{self.path_prefix}{slug}"


def _dated_folder(folder: str, day: dt.date) -> str:
    """``folder`` with the year (and month) it ends with made ``day``'s: the recent posts are
    kept by year (``content/posts/2024/``, ``_posts/2024/03/``), and a post made in 2026 went
    to ``content/posts/2024/``, at ``/posts/2024/hello-there/``."""
    found = _YEAR_FOLDER.match(folder)
    if found is None:
        return folder
    month = f"/{day:%m}" if found["month"] else ""
    return f"{found['base'] or ''}{day:%Y}{month}"


def _read_head(path: Path) -> Frontmatter | None:
    try:
        with path.open("rb") as fh:
            head = fh.read(HEAD_BYTES).decode("utf-8", errors="replace")
        found = split_frontmatter(head, path.as_posix())  # (a Hexo post: by its path)
        found.fields()
    except (OSError, InvalidFrontmatter):
        return None
    return found if found.format is not None else None


def _majority(count: int, total: int) -> bool:
    return total > 0 and count * 2 > total


def _folder_of(rel: str) -> str:
    path = PurePosixPath(rel)
    if post_stem(rel) != path.stem:  # a bundle: the folder holding it
        path = path.parent
    return path.parent.as_posix()


def _recent_folder(recent: list[PostMeta], default: str) -> str:
    if not recent:
        return default
    folders = Counter(_folder_of(meta.path) for meta in recent[:RECENT])
    top = max(folders.values())
    for meta in recent:  # on a tie, the folder of the most recent post
        if folders[_folder_of(meta.path)] == top:
            return _folder_of(meta.path)
    return default


def _template_style(template: Frontmatter, base: PostStyle) -> PostStyle:
    """The style a template post gives: its format, keys and values. An empty value (a Hugo
    archetype's ``{{ .Date }}``, ``_PLACEHOLDER``) is one to fill: an empty ``date`` is no
    field of another kind (``_undated``)."""
    fields = template.fields()
    keys = tuple(fields)
    undated = _undated([{k: v for k, v in fields.items() if v != ""}])
    shared = {
        k: v
        for k, v in fields.items()
        if (k not in _FILLED or k in undated) and v not in ("", None)
    }
    taxonomies = fields.get("taxonomies")
    return PostStyle(
        format=template.format or base.format,
        keys=keys,
        shared=shared,
        folder=base.folder,
        bundle=base.bundle,
        date_prefix=base.date_prefix,
        path_prefix=base.path_prefix if "path" in keys else None,
        path_dated=base.path_dated,
        drafts_dir=base.drafts_dir,
        taxonomies=tuple(taxonomies) if isinstance(taxonomies, Mapping) else (),
        lists=(template.format == "yaml" and yaml_list_style(template.inner)) or "block",
        undated=undated,
        json_as=json_style(template) or "braced",
    )


def post_style(
    root: Path,
    posts: Sequence[PostMeta],
    *,
    posts_dir: str,
    kind: str,
    drafts_dir: str | None = None,
    fmt: str = "auto",
    template: str | None = None,
) -> PostStyle:
    """The style of the blog at ``root`` from its indexed ``posts`` (see the module
    docstring). ``template``: the text of a template post (``new_post.template``)."""
    folder = posts_dir.strip("/") or "."
    drafts = drafts_dir if drafts_dir and kind in ("jekyll", "hexo", "configured") else None
    if drafts is not None and PurePosixPath(drafts).name not in DRAFT_FOLDERS:
        drafts = None
    dated = sorted(posts, key=lambda m: (m.draft, newest_first(m.date), m.path))
    sample = dated[:SAMPLE]
    heads: list[tuple[PostMeta, Frontmatter]] = []
    for meta in sample:
        head = _read_head(root / meta.path)
        if head is not None:
            heads.append((meta, head))
    published = [meta for meta in dated if not meta.draft]  # a _drafts/ post is a draft
    bundles = sum(post_stem(m.path) != PurePosixPath(m.path).stem for m in published)
    prefixed = sum(bool(DATED_NAME.match(post_stem(m.path))) for m in published)
    base = PostStyle(
        # A generator's site: where its recent posts live (the Rust blog's content/, not
        # content/inside-rust/). skillrt's own posts/ or a vault: the posts folder itself
        # (an Obsidian vault's recent notes are its daily notes).
        folder=_recent_folder(published, folder) if kind in GENERATORS else folder,
        bundle=_majority(bundles, len(published)),
        date_prefix=_majority(prefixed, len(published)),
        drafts_dir=drafts,
    )
    if template is not None:
        found = split_frontmatter(_PLACEHOLDER.sub('""', template), "new_post.template")
        return _with_format(_template_style(found, base), fmt)
    if not heads:
        return _with_format(base, fmt)
    formats = Counter(head.format for _, head in heads)
    fields = [(meta, head.fields()) for meta, head in heads]
    counts = Counter(key for _, f in fields for key in f)
    common = {k for k in counts if _majority(counts[k], len(fields))}
    # The order of the most recent post that carries the most of them, then the others'.
    reference = max(fields, key=lambda item: len(common & set(item[1])))[1]
    keys = [k for k in reference if k in common]
    for _, f in fields:
        keys += [k for k in f if k in common and k not in keys]
    generator = kind in GENERATORS
    if not generator:
        keys = list(OWN_KEYS) + [k for k in keys if k not in OWN_KEYS]
    elif any("wikiLinks" in f or "wikilinks" in f for _, f in fields) and "wikiLinks" not in keys:
        keys.append("wikiLinks")
    undated = _undated([f for _, f in fields])
    crlf = sum("\r\n" in head.block for _, head in heads)
    shared = _shared_values(fields, keys, undated)
    path_prefix, path_dated = _path_shape(fields, base.folder) if "path" in keys else (None, True)
    tables = [f["taxonomies"] for _, f in fields if isinstance(f.get("taxonomies"), Mapping)]
    taxonomies = Counter(name for table in tables for name in table)
    best_format = formats.most_common(1)[0][0] or "yaml"
    styles = Counter(
        seen
        for _, head in heads
        if head.format == "yaml" and (seen := yaml_list_style(head.inner)) is not None
    )
    lists: ListStyle = max(styles, key=lambda s: (styles[s], s == "block")) if styles else "block"
    # (Hexo's JSON is members up to ";;;", mostly after one: written as the posts write it)
    objects = Counter(shape for _, head in heads if (shape := json_style(head)) is not None)
    json_as: JsonStyle = max(objects, key=lambda s: (objects[s], s)) if objects else "braced"
    style = PostStyle(
        format=best_format,
        keys=tuple(keys),
        shared=shared,
        folder=base.folder,
        bundle=base.bundle,
        date_prefix=base.date_prefix,
        path_prefix=path_prefix,
        path_dated=path_dated,
        drafts_dir=drafts,
        taxonomies=tuple(taxonomies),
        lists=lists,
        undated=undated,
        json_as=json_as,
        offset=_offset([f for _, f in fields], undated),
        newline="\r\n" if _majority(crlf, len(heads)) else "\n",
    )
    return _with_format(style, fmt)


def _with_format(style: PostStyle, fmt: str) -> PostStyle:
    formats: dict[str, Format] = {name: name for name in FORMATS}
    chosen = formats.get(fmt)  # "auto": the blog's own
    return style if chosen is None else replace(style, format=chosen)


def _is_date(value: Any) -> bool:
    """Whether a field's value is a date: a date, a datetime, or text starting ``YYYY-MM-DD``."""
    if isinstance(value, dt.date):  # (a datetime too)
        return True
    return isinstance(value, str) and _DATE_TEXT.match(value.strip()) is not None


def _undated(fields: Sequence[Mapping[str, Any]]) -> frozenset[str]:
    """The date-named keys (``DATE_FIELDS``) whose values in the blog are mostly no dates:
    Jekyll's ``published: true`` is a boolean. Every date field was filled with the new post's
    date, so a Jekyll blog whose posts all say ``published: true`` got ``published:
    2026-11-30``; such a key takes the blog's shared value instead (``_shared_values``)."""
    undated: set[str] = set()
    for key in DATE_FIELDS:
        values = [f[key] for f in fields if f.get(key) is not None]
        if values and not _majority(sum(map(_is_date, values)), len(values)):
            undated.add(key)
    return frozenset(undated)


def _offset(fields: Sequence[Mapping[str, Any]], undated: frozenset[str]) -> dt.timedelta | None:
    """The offset most of the blog's dates carry, when most carry a time and an offset
    (``2024-03-01T10:00:00+08:00``, also as JSON text); None when most are bare dates."""
    offsets: Counter[dt.timedelta | None] = Counter()
    for f in fields:
        for key in DATE_FIELDS:
            if key not in undated and _is_date(value := f.get(key)):
                offsets[_offset_of(value)] += 1
    aware = [(n, off) for off, n in offsets.items() if off is not None]
    if not _majority(sum(n for n, _ in aware), sum(offsets.values())):
        return None
    return max(aware, key=lambda item: item[0])[1]


def _offset_of(value: Any) -> dt.timedelta | None:
    """The UTC offset of a datetime (or its ISO text), None for a date or a naive time."""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    return value.utcoffset() if isinstance(value, dt.datetime) else None


def _shared_values(
    fields: list[tuple[PostMeta, dict[str, Any]]], keys: list[str], undated: frozenset[str]
) -> dict[str, Any]:
    """Values that every post carrying the key has (``layout: post``, ``published: true``),
    for keys skillrt cannot fill; scalars only, and only when two posts or more agree."""
    shared: dict[str, Any] = {}
    for key in keys:
        if key in _FILLED and key not in undated:
            continue
        values = [f[key] for _, f in fields if key in f]
        first = values[0] if values else None
        if (
            len(values) >= 2
            and isinstance(first, str | bool | int | float)
            and all(v == first for v in values)
        ):
            shared[key] = first
    return shared


def _path_shape(fields: list[tuple[PostMeta, dict[str, Any]]], folder: str) -> tuple[str, bool]:
    """The ``path`` field's prefix before its ``YYYY/MM/DD/`` (from the most recent post in
    ``folder``, else the most recent), and whether it carries a date at all."""
    ordered = [f for meta, f in fields if _folder_of(meta.path) == folder] + [f for _, f in fields]
    for f in ordered:
        value = f.get("path")
        if isinstance(value, str):
            match = _PATH_DATE.match(value)
            if match:
                return match.group(1), True
            parent = PurePosixPath(value).parent.as_posix()
            return ("" if parent == "." else parent + "/"), False
    return "", True
