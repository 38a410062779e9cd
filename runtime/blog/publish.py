"""Publishing a draft: the blog's own draft mark taken off, nothing else touched.

- A ``draft = true`` / ``draft: true`` / ``"draft": true`` field (or Jekyll's
  ``published: false``) is removed from the frontmatter; every other byte stays.
- A post in a drafts folder (Jekyll's ``_drafts/``, Hexo's ``source/_drafts/``) moves to the
  posts folder; in Jekyll's ``_posts/`` (``<collections_dir>/_posts/`` too) it gets the
  ``YYYY-MM-DD-`` prefix Jekyll needs; in Hexo's ``source/_posts/`` it is named as
  ``new_post_name`` in ``_config.yml`` says (``:year/:month/:title.md``, by the post's own
  date when it has one), and with the
  default ``:title.md`` gets the prefix only when most posts there have one
  (``_dated_names``). The new
  file is created first (never over another), then the draft goes to the trash. A name whose
  web address another post there has (``address_taken``: ``2024-01-15-liquid-tips.md``
  beside a new ``2026-11-30-liquid-tips.md``) or that is taken gets ``-2``, ``-3``...

The write passes the hash read to ``FileStore.write``, so a post edited meanwhile is refused,
not overwritten. Publishing again after a crash finishes the move; publishing a post that is
not a draft changes nothing and says so.

A post the generator will not build yet, or any more, is published all the same, its dates
as the author wrote them, and ``Published`` says so (``held_back``): ``scheduled`` (Hugo's
``publishDate`` or ``date`` after today, where the site is, unless ``buildFuture``; Jekyll's
date after today unless ``future: true``; Hexo's with ``future: false``) or ``expired`` (Hugo's
``expiryDate`` passed, unless ``buildExpired``). Before, a draft dated 2027-05-01 was
"Published … nothing else changed", and ``hugo list future`` held it back.

Unpublishing (``unpublish_post``: "unpublish it", "move it back to drafts", "改回草稿") is
the way back, in the blog's way too: on a blog with a drafts folder the post moves there, its
name as it is (a Jekyll post's ``YYYY-MM-DD-`` prefix may be its only date, and publishing
keeps a dated name: a post at the top of the posts folder comes back where it was; one in
a subfolder comes back to the top), else it gets the ``draft`` field
(``draft: true``, ``draft = true``, ``"draft": true``), every other byte kept. A post that
is a draft already changes nothing and says so.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from skillrt.blog.conventions import (
    CODED_NAME,
    DATED_NAME,
    address_key,
    draft_marks,
    in_drafts_folder,
    is_bundle_page,
    is_section_page,
    post_date,
)
from skillrt.blog.files import FileStore
from skillrt.blog.frontmatter import split_frontmatter
from skillrt.blog.siteconfig import hugo_config, yaml_site_config
from skillrt.blog.versions import VersionStore
from skillrt.exceptions import UserError

__all__ = [
    "Published",
    "address_taken",
    "folder_posts",
    "free_names",
    "held_back",
    "hexo_post_name",
    "publish_kept",
    "publish_post",
    "unpublish_kept",
    "unpublish_post",
]

MAX_NAME_TRIES = 200
_PAGE_SUFFIXES = (".md", ".markdown")
_HEXO_PART = re.compile(r":([a-z_]+)")


@dataclass(frozen=True, slots=True)
class Published:
    """What publishing did: the post's path now, where it was (``moved_from``), and whether
    anything changed (False: it was no draft)."""

    path: str
    changed: bool
    moved_from: str | None = None
    removed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()  # (unpublishing: the draft field set)
    trashed: str | None = None  # a move: where the trash holds the post's old file
    scheduled: str | None = None  # the day the generator builds it from (``held_back``)
    expired: str | None = None  # the day the generator stopped building it (``held_back``)


def _unflagged(text: str, path: str) -> tuple[str, tuple[str, ...]]:
    """``text`` without its draft mark (the fields the index reads as one removed)."""
    found = split_frontmatter(text, path)
    gone = draft_marks(found.fields())
    if not gone:
        return text, ()
    return found.with_fields({}, remove=gone).text, gone


def _published_path(
    files: FileStore, path: str, posts_dir: str, day: dt.date, fields: dict[str, Any]
) -> str:
    name = PurePosixPath(path).name
    folder = posts_dir.strip("/") or "."
    config = yaml_site_config(files.root)
    # (Hexo names a post by its own date when it has one, as ``hexo publish`` does: a post
    # made a draft again comes back to source/_posts/2024/03/, not to this month's folder)
    dated = post_date(fields, path)
    named = _hexo_named(config, folder, name, dt.date.fromisoformat(dated) if dated else day)
    if named is not None:
        return f"{folder}/{named}".removeprefix("./")
    if not DATED_NAME.match(name) and _dated_names(files, folder, config):
        name = f"{day.isoformat()}-{name}"
    return f"{folder}/{name}".removeprefix("./")


def hexo_post_name(root: Path, folder: str, name: str, day: dt.date) -> str | None:
    """A post ``name`` (``slug.md``) as the Hexo site at ``root`` names one in its posts
    ``folder`` by its ``new_post_name`` (``2026/11/slug.md``), or None where that is no
    Hexo posts folder or the setting is the default ``:title.md`` (``_hexo_named``)."""
    return _hexo_named(yaml_site_config(root), folder, name, day)


def _hexo_named(config: dict[str, Any], folder: str, name: str, day: dt.date) -> str | None:
    """The draft ``name`` as Hexo's ``new_post_name`` names a post in its ``source/_posts``
    (``:year/:month/:title.md`` → ``2026/11/git-rebase.md``), as ``hexo publish`` does; None
    when the folder is no Hexo posts folder, or the setting is the default ``:title.md`` (the
    majority rule, ``_dated_names``, then holds) or holds a part it cannot fill. Before, a
    draft on a blog set to ``:year/:month/:title.md`` was published flat, as
    ``source/_posts/git-rebase.md`` beside ``source/_posts/2024/03/npm.md``."""
    pattern = config.get("new_post_name")
    source = str(config.get("source_dir") or "source").strip("/")
    if folder != f"{source}/_posts" or not isinstance(pattern, str) or ":title" not in pattern:
        return None
    filled = {
        "year": f"{day:%Y}",
        "month": f"{day:%m}",
        "i_month": str(day.month),
        "day": f"{day:%d}",
        "i_day": str(day.day),
        "title": PurePosixPath(name).stem,
    }
    named = _HEXO_PART.sub(lambda m: filled.get(m[1], m[0]), pattern.strip().lstrip("/"))
    parts = PurePosixPath(named).parts
    if named == f"{filled['title']}.md" or ":" in named or ".." in parts or not parts:
        return None
    return named if named.endswith(_PAGE_SUFFIXES) else named + PurePosixPath(name).suffix


def free_names(rel: str) -> list[str]:
    """``rel``, then ``-2``, ``-3``... (a page bundle: another folder, ``slug-2/index.md``),
    before a language's code (``x-2.zh.md``): a translation saved while another task saved
    its own ``x.zh.md`` was named ``x.zh-2.md``, a language ``zh-2`` that Zola refuses."""
    path = PurePosixPath(rel)
    if is_bundle_page(rel):
        folder = path.parent
        names = [rel] + [
            (folder.parent / f"{folder.name}-{n}" / path.name).as_posix()
            for n in range(2, MAX_NAME_TRIES)
        ]
    else:
        coded = CODED_NAME.match(path.stem)
        stem, code = (coded["stem"], f".{coded['code']}") if coded else (path.stem, "")
        names = [rel] + [
            (path.parent / f"{stem}-{n}{code}{path.suffix}").as_posix()
            for n in range(2, MAX_NAME_TRIES)
        ]
    return [name.removeprefix("./") for name in names]


def folder_posts(files: FileStore, folder: str) -> list[str]:
    """The posts in ``folder`` (relative): its Markdown files and its bundles' pages."""
    try:
        base = files.resolve(folder or ".")
        entries = list(os.scandir(base))
    except (OSError, UserError):
        return []
    prefix = "" if folder in ("", ".") else folder + "/"
    found: list[str] = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.name.lower().endswith(_PAGE_SUFFIXES) and not is_section_page(entry.name):
            found.append(prefix + entry.name)
        elif entry.is_dir(follow_symlinks=False):
            found += [
                f"{prefix}{entry.name}/{page}"
                for page in ("index.md", "index.markdown")
                if os.path.isfile(os.path.join(entry.path, page))
            ]
    return found


def address_taken(files: FileStore, rel: str, pages: list[str] | None = None) -> str | None:
    """The post other than ``rel`` in its folder that has its web address (``address_key``:
    the slug without a date prefix or ``/index.md``, or the ``slug`` its frontmatter gives it:
    ``_address``), or None. ``pages``: that folder's posts (``folder_posts``), when already
    listed."""
    key = address_key(rel)
    listed = folder_posts(files, key[0]) if pages is None else pages
    return next((page for page in listed if page != rel and _address(files, page) == key), None)


def _address(files: FileStore, page: str) -> tuple[str, str, str]:
    """``address_key`` of the post ``page``, with the ``slug`` field of its frontmatter in
    place of its name: Hugo, Zola and Jekyll make the address from that. A new
    ``content/posts/rust-ownership.md`` was saved beside ``old-name.md`` holding
    ``slug: rust-ownership``: ``hugo list all`` gave both ``/posts/rust-ownership/``, and the
    site showed one of the two."""
    key = address_key(page)
    try:
        slug = split_frontmatter(files.read(page)[0], page).fields().get("slug")
    except UserError:  # (unreadable, or frontmatter that is none: its name is its address)
        return key
    if not isinstance(slug, str) or not slug.strip(" /"):
        return key
    return key[0], slug.strip(" /").casefold(), key[2]


def _dated_names(files: FileStore, folder: str, config: dict[str, Any]) -> bool:
    """Whether a post moved into ``folder`` gets a ``YYYY-MM-DD-`` prefix: Jekyll's ``_posts``
    always (Jekyll reads a post's date from it), ``<collections_dir>/_posts`` too; another
    ``_posts`` (Hexo's ``source/_posts``, whose ``new_post_name`` is ``:title.md`` by
    default) when most of its posts have one. Before, a Hexo draft was published as
    ``2026-11-29-git-rebase.md`` beside ``docker-compose-tips.md``; and a draft of a Jekyll
    site with ``collections_dir: my_collections`` and no post yet as
    ``my_collections/_posts/liquid-tips.md``, a post Jekyll skips for want of a date."""
    if PurePosixPath(folder).name != "_posts":
        return False
    collections = config.get("collections_dir")
    jekyll = f"{collections.strip('/')}/_posts" if isinstance(collections, str) else "_posts"
    if folder in ("_posts", jekyll):
        return True
    names = [PurePosixPath(rel).name for rel in files.list(f"{folder}/*.md")]
    return sum(1 for n in names if DATED_NAME.match(n)) * 2 > len(names)


def publish_post(
    files: FileStore, path: str, *, posts_dir: str, day: dt.date, kind: str = ""
) -> Published:
    """Publish the draft at ``path`` (relative to the blog): see the module docstring.
    ``day``: today where the site is (``site_today``); ``kind``: the blog's generator, whose
    rules say whether the post is ``held_back``."""
    rel = files.relative(path)
    if not files.exists(rel):
        raise UserError(f"{rel} does not exist; nothing to publish")
    text, digest = files.read(rel)
    new_text, removed = _unflagged(text, rel)
    fields = split_frontmatter(new_text, rel).fields()
    if not in_drafts_folder(rel):
        if not removed:
            done = Published(path=rel, changed=False)
        else:
            files.write(rel, new_text, expected_hash=digest)
            done = Published(path=rel, changed=True, removed=removed)
    else:
        target = _free_target(files, _published_path(files, rel, posts_dir, day, fields), new_text)
        trashed = _moved(files, rel, target, new_text)
        done = Published(
            path=target, changed=True, moved_from=rel, removed=removed, trashed=str(trashed)
        )
    held = held_back(files.root, kind, fields, done.path, day)
    if held is None:
        return done
    if held[0] == "scheduled":
        return replace(done, scheduled=held[1])
    return replace(done, expired=held[1])


def held_back(
    root: Path, kind: str, fields: dict[str, Any], rel: str, day: dt.date
) -> tuple[str, str] | None:
    """Why the generator of the ``kind`` of blog at ``root`` will not build the published
    post at ``rel`` (its frontmatter ``fields``) on ``day`` (today where the site is):
    ``("scheduled", "2027-05-01")``, the day it builds it from, or ``("expired",
    "2024-01-01")``, Hugo's ``expiryDate`` passed; None when it builds it. Each generator as
    its documentation says: Hugo's ``publishDate`` (``pubDate``, ``published``) else ``date``
    and ``expiryDate`` (``unpublishdate``), unless ``buildFuture`` / ``buildExpired``;
    Jekyll's date (field or file name) unless ``future: true``; Hexo's ``date`` only with
    ``future: false`` (it shows future posts by default). Blocking I/O (the site's config)."""
    if kind == "hugo":
        # (Hugo's settings are read whatever their case: ``buildfuture`` is ``buildFuture``)
        config = {str(key).casefold(): value for key, value in hugo_config(root)[0].items()}
        return _hugo_held(config, fields, day)
    if kind not in ("jekyll", "hexo"):
        return None
    config = yaml_site_config(root)
    if config.get("future", kind == "hexo") is True:
        return None
    dated = post_date(fields, rel) if kind == "jekyll" else _day_of(fields.get("date"))
    return ("scheduled", dated) if dated is not None and dated > day.isoformat() else None


def _hugo_held(
    config: dict[str, Any], fields: dict[str, Any], day: dt.date
) -> tuple[str, str] | None:
    """``held_back`` for Hugo: its front matter's date fields in its default order. A day is
    compared with ``day`` (Hugo reads a bare date as midnight where the site is); a time with
    its zone, with now."""
    lowered = {str(key).casefold(): value for key, value in fields.items()}
    if config.get("buildfuture") is not True:
        for key in ("publishdate", "pubdate", "published", "date"):
            if (when := _day_of(lowered.get(key))) is not None:
                if _after(lowered[key], when, day):
                    return "scheduled", when
                break
    if config.get("buildexpired") is not True:
        for key in ("expirydate", "unpublishdate"):
            if (when := _day_of(lowered.get(key))) is not None:
                return None if _after(lowered[key], when, day) else ("expired", when)
    return None


def _day_of(value: Any) -> str | None:
    """``YYYY-MM-DD`` of a frontmatter date (None: none, or no date: ``published: true``)."""
    return None if value is None or isinstance(value, bool) else post_date({"date": value}, "")


def _after(value: Any, when: str, day: dt.date) -> bool:
    """Whether the date ``value`` (``when`` its day) is still to come: a time with its zone
    against now, else its day after ``day``."""
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value > dt.datetime.now(dt.UTC)
    return when > day.isoformat()


def _free_target(files: FileStore, target: str, text: str) -> str:
    """``target``, or the first of ``-2``, ``-3``... that is free and whose web address no
    other post in its folder has; one that holds ``text`` already (a run cut short) is ours.
    A Jekyll draft ``liquid-tips.md`` was published as ``_posts/2026-11-30-liquid-tips.md``
    beside ``2024-01-15-liquid-tips.md``: one address (``permalink: /:title/``) for both."""
    pages = folder_posts(files, address_key(target)[0])
    for name in free_names(target):
        if files.exists(name):
            if files.read(name)[0] == text:
                return name
            continue
        if address_taken(files, name, pages) is None:
            return name
    raise UserError(f"no free file name near {target} after {MAX_NAME_TRIES} tries")


def _moved(files: FileStore, rel: str, target: str, text: str) -> Path:
    """``text`` written at ``target`` (created, never over another post; found there from a
    run cut short, kept), then ``rel`` to the trash (where it went is returned)."""
    existing = files.hash_of(target)
    if existing is None:
        files.write(target, text, create_only=True)
    elif files.read(target)[0] != text:  # not ours from a run cut short
        raise UserError(f"{target} already exists; move {rel} by hand or rename it first")
    return files.move_to_trash(rel)


def unpublish_post(files: FileStore, path: str, *, drafts_dir: str | None) -> Published:
    """Make the post at ``path`` a draft again: see the module docstring."""
    rel = files.relative(path)
    if not files.exists(rel):
        raise UserError(f"{rel} does not exist; nothing to unpublish")
    text, digest = files.read(rel)
    found = split_frontmatter(text, rel)
    if in_drafts_folder(rel) or draft_marks(found.fields()):
        return Published(path=rel, changed=False)
    if not drafts_dir:
        files.write(rel, found.with_fields({"draft": True}).text, expected_hash=digest)
        return Published(path=rel, changed=True, added=("draft",))
    # (its name as it is: a Jekyll post's date prefix is its only date when its frontmatter
    # has none, and publishing it again keeps a dated name, so it comes back as it was)
    target = f"{drafts_dir.strip('/')}/{PurePosixPath(rel).name}"
    trashed = _moved(files, rel, target, text)
    return Published(path=target, changed=True, moved_from=rel, trashed=str(trashed))


def unpublish_kept(
    files: FileStore, path: str, *, drafts_dir: str | None, versions: VersionStore | None, key: str
) -> Published:
    """``unpublish_post``, the post before kept in ``versions`` for undo, as ``publish_kept``
    keeps it. Blocking I/O."""
    rel = files.relative(path)
    before = VersionStore.bytes_of(files, rel)
    done = unpublish_post(files, rel, drafts_dir=drafts_dir)
    _kept(files, versions, before, done, key)
    return done


def _kept(
    files: FileStore, versions: VersionStore | None, before: bytes | None, done: Published, key: str
) -> None:
    """The post before ``done``'s change kept in ``versions``: an edit, or a move's delete
    and create (``:from`` and ``:to``, undone together: one undo of the create alone put the
    published post in the trash and left the draft there too, the post in neither place)."""
    if not done.changed or versions is None:
        return
    rel = done.moved_from or done.path
    after = files.hash_of(done.path)
    if done.moved_from is None:
        versions.record(rel, "edit", before, key=key, after=after)
    else:
        versions.record(rel, "delete", before, key=f"{key}:from", after=None)
        if done.trashed is not None:
            versions.note_trash(f"{key}:from", Path(done.trashed))
        versions.record(done.path, "create", None, key=f"{key}:to", after=after)


def publish_kept(
    files: FileStore,
    path: str,
    *,
    posts_dir: str,
    day: dt.date,
    versions: VersionStore | None,
    key: str,
    kind: str = "",
) -> Published:
    """``publish_post``, the post before kept in ``versions`` (named ``key``) for undo: an
    edit, or a moved draft's delete and create (undone together). Blocking I/O."""
    rel = files.relative(path)
    before = VersionStore.bytes_of(files, rel)
    done = publish_post(files, rel, posts_dir=posts_dir, day=day, kind=kind)
    _kept(files, versions, before, done, key)
    return done
