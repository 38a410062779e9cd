"""Publishing a draft: the blog's own draft mark taken off, nothing else touched.

- A ``draft = true`` / ``draft: true`` / ``"draft": true`` field (or Jekyll's
  ``published: false``) is removed from the frontmatter; every other byte stays.
- A post in a drafts folder (Jekyll's ``_drafts/``, Hexo's ``source/_drafts/``) moves to the
  posts folder; in Jekyll's ``_posts/`` it gets the ``YYYY-MM-DD-`` prefix Jekyll needs, in
  Hexo's ``source/_posts/`` only when most posts there have one (``_dated_names``). The new
  file is created first (never over another), then the draft goes to the trash.

The write passes the hash read to ``FileStore.write``, so a post edited meanwhile is refused,
not overwritten. Publishing again after a crash finishes the move; publishing a post that is
not a draft changes nothing and says so.

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
from dataclasses import dataclass
from pathlib import PurePosixPath

from skillrt.blog.conventions import DATED_NAME, draft_marks, in_drafts_folder
from skillrt.blog.files import FileStore
from skillrt.blog.frontmatter import split_frontmatter
from skillrt.blog.versions import VersionStore
from skillrt.exceptions import UserError

__all__ = ["Published", "publish_kept", "publish_post", "unpublish_kept", "unpublish_post"]


@dataclass(frozen=True, slots=True)
class Published:
    """What publishing did: the post's path now, where it was (``moved_from``), and whether
    anything changed (False: it was no draft)."""

    path: str
    changed: bool
    moved_from: str | None = None
    removed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()  # (unpublishing: the draft field set)


def _unflagged(text: str, path: str) -> tuple[str, tuple[str, ...]]:
    """``text`` without its draft mark (the fields the index reads as one removed)."""
    found = split_frontmatter(text, path)
    gone = draft_marks(found.fields())
    if not gone:
        return text, ()
    return found.with_fields({}, remove=gone).text, gone


def _published_path(files: FileStore, path: str, posts_dir: str, day: dt.date) -> str:
    name = PurePosixPath(path).name
    folder = posts_dir.strip("/") or "."
    if not DATED_NAME.match(name) and _dated_names(files, folder):
        name = f"{day.isoformat()}-{name}"
    return f"{folder}/{name}".removeprefix("./")


def _dated_names(files: FileStore, folder: str) -> bool:
    """Whether a post moved into ``folder`` gets a ``YYYY-MM-DD-`` prefix: Jekyll's ``_posts``
    always (Jekyll reads a post's date from it); another ``_posts`` (Hexo's
    ``source/_posts``, whose ``new_post_name`` is ``:title.md`` by default) when most of its
    posts have one. Before, a Hexo draft was published as ``2026-11-29-git-rebase.md``
    beside ``docker-compose-tips.md``."""
    if PurePosixPath(folder).name != "_posts":
        return False
    if folder == "_posts":
        return True
    names = [PurePosixPath(rel).name for rel in files.list(f"{folder}/*.md")]
    return sum(1 for n in names if DATED_NAME.match(n)) * 2 > len(names)


def publish_post(files: FileStore, path: str, *, posts_dir: str, day: dt.date) -> Published:
    """Publish the draft at ``path`` (relative to the blog): see the module docstring."""
    rel = files.relative(path)
    if not files.exists(rel):
        raise UserError(f"{rel} does not exist; nothing to publish")
    text, digest = files.read(rel)
    new_text, removed = _unflagged(text, rel)
    if not in_drafts_folder(rel):
        if not removed:
            return Published(path=rel, changed=False)
        files.write(rel, new_text, expected_hash=digest)
        return Published(path=rel, changed=True, removed=removed)
    target = _published_path(files, rel, posts_dir, day)
    _moved(files, rel, target, new_text)
    return Published(path=target, changed=True, moved_from=rel, removed=removed)


def _moved(files: FileStore, rel: str, target: str, text: str) -> None:
    """``text`` written at ``target`` (created, never over another post; found there from a
    run cut short, kept), then ``rel`` to the trash."""
    existing = files.hash_of(target)
    if existing is None:
        files.write(target, text, create_only=True)
    elif files.read(target)[0] != text:  # not ours from a run cut short
        raise UserError(f"{target} already exists; move {rel} by hand or rename it first")
    files.move_to_trash(rel)


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
    _moved(files, rel, target, text)
    return Published(path=target, changed=True, moved_from=rel)


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
    and create (undone in two steps)."""
    if not done.changed or versions is None:
        return
    rel = done.moved_from or done.path
    after = files.hash_of(done.path)
    if done.moved_from is None:
        versions.record(rel, "edit", before, key=key, after=after)
    else:
        versions.record(rel, "delete", before, key=f"{key}:from", after=None)
        versions.record(done.path, "create", None, key=f"{key}:to", after=after)


def publish_kept(
    files: FileStore,
    path: str,
    *,
    posts_dir: str,
    day: dt.date,
    versions: VersionStore | None,
    key: str,
) -> Published:
    """``publish_post``, the post before kept in ``versions`` (named ``key``) for undo: an
    edit, or a moved draft's delete and create (undone in two steps). Blocking I/O."""
    rel = files.relative(path)
    before = VersionStore.bytes_of(files, rel)
    done = publish_post(files, rel, posts_dir=posts_dir, day=day)
    _kept(files, versions, before, done, key)
    return done
