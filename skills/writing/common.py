"""Helpers every writing skill shares: limits, refusals, paths, slugs, saves and frontmatter.

Slugs: ``python-slugify`` transliterates through ``text-unidecode``, so a Chinese title gets
an ASCII slug of toneless pinyin syllables (``Rust 所有权`` -> ``rust-suo-you-quan``). That is
readable enough, safe in every URL, file system and static-site generator, and needs no extra
dependency. A name that is taken gets ``-2``, ``-3``...; nothing is ever overwritten.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import hashlib
import time
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel

from skillrt import SkillContext, SkillResult
from skillrt._io.lazy import import_off_loop
from skillrt.blog.conventions import address_key, is_section_page
from skillrt.blog.frontmatter import split_frontmatter
from skillrt.blog.markdown import dump_post
from skillrt.blog.publish import MAX_NAME_TRIES, address_taken, folder_posts, free_names
from skillrt.blog.versions import Action
from skillrt.exceptions import PathNotAllowed, UserError

__all__ = [
    "MAX_INSTRUCTION_CHARS",
    "MAX_TITLE_CHARS",
    "MAX_TOPIC_CHARS",
    "POST_SUFFIXES",
    "Saved",
    "confirming",
    "keep_version",
    "new_post_text",
    "post_path",
    "refuse",
    "save_new_file",
    "slug_for",
    "split_frontmatter_block",
    "text_hash",
    "today",
    "unified_diff",
]

MAX_TOPIC_CHARS = 500
MAX_TITLE_CHARS = 200
MAX_INSTRUCTION_CHARS = 2000
MAX_SLUG_CHARS = 60
POST_SUFFIXES = (".md", ".markdown")
SECTION_PAGE_REASON = (
    "a section page, the generator's list of posts and not a post: no skill writes it"
)


class Saved(BaseModel):
    """A post written by ``save_new_file``: where, and the sha256 of what was written."""

    path: str
    hash: str


def refuse(ctx: SkillContext, key: str, **values: Any) -> SkillResult:
    """A clear refusal in the user's language (the task ends, nothing was changed): the skill's
    reply ``key``, which is also the result's ``data["error"]``."""
    return SkillResult(success=False, message=ctx.reply(key, **values), data={"error": key})


def text_hash(text: str) -> str:
    """The sha256 ``FileStore`` reports for ``text`` written as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def today() -> str:
    return dt.date.fromtimestamp(time.time()).isoformat()


async def slug_for(text: str, fallback: str) -> str:
    """A file-name slug: lowercase ASCII words joined by ``-`` (Chinese becomes pinyin).
    python-slugify is imported at the first slug, in a thread (~7 ms on the event loop)."""
    await import_off_loop(("slugify",))
    from slugify import slugify

    slug = slugify(text, max_length=MAX_SLUG_CHARS, word_boundary=True, save_order=True)
    return slug or slugify(fallback, max_length=MAX_SLUG_CHARS) or "post"


def post_path(ctx: SkillContext, target: str | None, slug: str) -> str:
    """The relative path to save a new post at: ``target`` (checked) or ``<posts>/<slug>.md``.
    A ``target`` ending in ``/`` or naming a folder is where ``<slug>.md`` goes (``posts/`` was
    saved as ``posts.md``)."""
    if target:
        rel = ctx.files.relative(target)
        if target.rstrip().endswith("/") or ctx.files.resolve(rel).is_dir():
            return ctx.files.writable(f"{rel}/{slug}.md")
        if not rel.lower().endswith(POST_SUFFIXES):
            rel += ".md"
            ctx.files.relative(rel)
        if any(part.startswith(".") for part in PurePosixPath(rel).parts):
            raise PathNotAllowed(target, "inside a hidden folder (posts there are not indexed)")
        return ctx.files.writable(rel)
    posts_dir = ctx.config.posts_dir.strip("/") or "."
    return ctx.files.relative(f"{posts_dir}/{slug}.md")


def save_new_file(ctx: SkillContext, rel: str, text: str) -> Saved:
    """Create ``rel`` (or ``-2``, ``-3``... when taken) holding ``text``; never overwrites.

    A name is taken when the file exists or when another post in its folder has its web
    address (``address_taken``): Zola's ``2024-01-05-hello-zola.md`` and a new
    ``2026-11-30-hello-zola.md`` are both ``/blog/hello-zola/`` ("Found path collisions"),
    Hugo's ``goroutines.md`` and a new ``goroutines/index.md`` both ``/posts/goroutines/``.

    Idempotent: a candidate that already holds exactly ``text`` (our own earlier write, before
    a crash cut the task off) is taken as saved. Blocking file I/O: run it as a sync step.
    """
    digest = text_hash(text)
    pages: list[str] | None = None
    for name in free_names(rel):
        existing = ctx.files.hash_of(name)
        if existing == digest:
            return Saved(path=name, hash=digest)
        if existing is not None or ctx.files.exists(name):
            continue
        if pages is None:
            pages = folder_posts(ctx.files, address_key(name)[0])
        if address_taken(ctx.files, name, pages) is not None:
            continue
        keep_version(ctx, name, "create", step=f"save:{name}", after=digest)
        try:
            _, written = ctx.files.write(name, text, create_only=True)
        except UserError:
            if ctx.files.exists(name):  # created by someone else a moment ago
                continue
            raise
        return Saved(path=name, hash=written)
    raise UserError(f"no free file name near {rel} after {MAX_NAME_TRIES} tries")


def confirming(ctx: SkillContext) -> bool:
    """Whether to show a change and ask before writing it: the request's ``confirm`` (the chat
    sends true, ``--yes`` and ``confirm=false`` false), else ``edit.confirm``, else no."""
    asked = ctx.input.extra.get("confirm")
    return asked if isinstance(asked, bool) else ctx.config.edit.confirm is True


def keep_version(
    ctx: SkillContext, path: str, action: Action, *, step: str, after: str | None
) -> None:
    """Keep the post as it is before the write ``step`` of this task (for ``skillrt undo``).
    Blocking file I/O: call it from a sync step, before the write.

    Refuses a section page (``_index.md``, ``_index.zh.md``): every skill's write passes here
    first, and no skill writes one. EditContent "add tags rust" on Zola's
    ``content/blog/_index.md`` wrote a ``[taxonomies]`` table there, and Zola's section front
    matter takes no unknown field: ``zola build`` failed."""
    if is_section_page(path):
        raise PathNotAllowed(path, SECTION_PAGE_REASON)
    if ctx.versions is not None:
        ctx.versions.keep(ctx.files, path, action, key=f"{ctx.task_id}:{step}", after=after)


def new_post_text(metadata: Mapping[str, Any], body: str) -> str:
    """A post's text. ``date`` given as ``YYYY-MM-DD`` is written as a YAML date."""
    fields = dict(metadata)
    date = fields.get("date")
    if isinstance(date, str):
        with contextlib.suppress(ValueError):  # not a plain date: written as given
            fields["date"] = dt.date.fromisoformat(date)
    return dump_post(fields, body)


def split_frontmatter_block(text: str, path: str = "") -> tuple[str, str]:
    """``(frontmatter block as written, rest)`` for YAML, TOML and JSON frontmatter: editing
    the rest keeps the block byte for byte (``skillrt.blog.frontmatter``)."""
    found = split_frontmatter(text, path)
    return found.block, found.body


def unified_diff(old: str, new: str, path: str) -> str:
    """The unified diff of ``path`` from ``old`` to ``new``, every line ending in a newline."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
