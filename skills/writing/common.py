"""Helpers every writing skill shares: limits, failures, paths, slugs and frontmatter.

Slugs: ``python-slugify`` transliterates through ``text-unidecode``, so a Chinese title gets
an ASCII slug of toneless pinyin syllables (``Rust 所有权`` -> ``rust-suo-you-quan``). That is
readable enough, safe in every URL, file system and static-site generator, and needs no extra
dependency. A name that is taken gets ``-2``, ``-3``...; nothing is ever overwritten.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import difflib
import functools
import hashlib
import os
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import PurePosixPath
from typing import Any, TypeVar

from pydantic import BaseModel
from slugify import slugify

from skillrt import SkillContext, SkillResult
from skillrt.exceptions import (
    FileChanged,
    FileMissing,
    InvalidFrontmatter,
    LockConflict,
    PathNotAllowed,
    UserError,
)
from skillrt.storage.markdown import dump_post

__all__ = [
    "MAX_INSTRUCTION_CHARS",
    "MAX_TITLE_CHARS",
    "MAX_TOPIC_CHARS",
    "POST_SUFFIXES",
    "failure",
    "friendly_errors",
    "nearest_posts",
    "new_post_text",
    "post_path",
    "refresh_memory",
    "save_new_file",
    "slug_for",
    "split_frontmatter_block",
    "text_hash",
    "today",
]

MAX_TOPIC_CHARS = 500
MAX_TITLE_CHARS = 200
MAX_INSTRUCTION_CHARS = 2000
MAX_SLUG_CHARS = 60
MAX_NAME_TRIES = 200
MAX_SCANNED_POSTS = 20_000  # nearest_posts looks at no more files than this
_OUTSIDE = ("content root", "home-folder")  # PathNotAllowed reasons meaning "not in the blog"
POST_SUFFIXES = (".md", ".markdown")

P = TypeVar("P", bound=BaseModel)

_FM_BLOCK = re.compile(r"\A\ufeff?---[ \t]*\r?\n.*?^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M)


def failure(ctx: SkillContext, zh: str, en: str, **data: Any) -> SkillResult:
    """A clear refusal in the user's language (the task ends, nothing was changed)."""
    return SkillResult(success=False, message=ctx.say(zh, en), data=data)


def friendly_errors(
    fn: Callable[[SkillContext, P], Awaitable[SkillResult]],
) -> Callable[[SkillContext, P], Awaitable[SkillResult]]:
    """Turn the errors a user can fix (a bad path, broken frontmatter, a file changed or locked
    meanwhile) into a clear reply in their language instead of a failed task."""

    @functools.wraps(fn)
    async def run(ctx: SkillContext, params: P) -> SkillResult:
        try:
            return await fn(ctx, params)
        except PathNotAllowed as exc:
            if any(word in exc.reason for word in _OUTSIDE):
                return failure(
                    ctx,
                    f"`{exc.path}` 在博客目录之外，不允许访问：我只读写博客目录里的文件，"
                    "没有碰它。",
                    f"`{exc.path}` is outside the blog, so it is not allowed: I only read and "
                    "write files inside the blog folder, and did not touch it.",
                    error="path_not_allowed",
                    outside_blog=True,
                )
            return failure(
                ctx,
                f"路径不允许：`{exc.path}`（{exc.reason}）。请使用博客目录内的路径。",
                f"That path is not allowed: `{exc.path}` ({exc.reason}). "
                "Use a path inside the blog.",
                error="path_not_allowed",
            )
        except FileMissing as exc:
            near = nearest_posts(ctx, exc.path)
            listed = "、".join(f"`{p}`" for p in near)
            listed_en = ", ".join(f"`{p}`" for p in near)
            return failure(
                ctx,
                f"`{exc.path}` 不存在。" + (f"你是不是要找：{listed}？" if near else ""),
                f"`{exc.path}` does not exist." + (f" Did you mean {listed_en}?" if near else ""),
                error="not_found",
                suggestions=near,
            )
        except InvalidFrontmatter as exc:
            return failure(
                ctx,
                f"`{exc.path}` 的 frontmatter 无法解析：{exc.reason}。请先修正它。",
                f"The frontmatter of `{exc.path}` cannot be read: {exc.reason}. Fix it first.",
                error="invalid_frontmatter",
            )
        except FileChanged as exc:
            return failure(
                ctx,
                f"`{exc.path}` 在读取之后被修改过（可能在编辑器里），为避免覆盖你的改动，"
                "没有保存。请重新加载后再试。",
                f"`{exc.path}` changed on disk after it was read (perhaps in your editor); "
                "nothing was saved, so your changes are safe. Reload it and try again.",
                error="file_changed",
            )
        except LockConflict as exc:
            return failure(
                ctx,
                f"`{exc.path}` 正被另一个任务（{exc.holder}）写入，请稍后再试。",
                f"`{exc.path}` is being written by another task ({exc.holder}); try again later.",
                error="locked",
            )

    return run


def _markdown_under(root: str, folder: str) -> list[str]:
    base = os.path.join(root, folder) if folder != "." else root
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "node_modules")
        for name in filenames:
            if name.lower().endswith(POST_SUFFIXES):
                found.append(
                    os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                )
        if len(found) >= MAX_SCANNED_POSTS:
            break
    return found


def nearest_posts(ctx: SkillContext, path: str, n: int = 3) -> list[str]:
    """The blog's posts whose path or file name is closest to ``path`` (difflib), best first.

    Looks in the posts folder and, when ``path`` names another folder of the blog, in that
    folder too."""
    root = str(ctx.files.root)
    posts_dir = ctx.config.posts_dir.strip("/") or "."
    known = _markdown_under(root, posts_dir)
    folder = PurePosixPath(path).parent.as_posix()
    inside = posts_dir == "." or folder == posts_dir or folder.startswith(posts_dir + "/")
    if not inside and os.path.isdir(os.path.join(root, folder)):
        seen = set(known)
        known += [p for p in _markdown_under(root, folder) if p not in seen]
    near = difflib.get_close_matches(path, known, n=n, cutoff=0.6)
    by_name: dict[str, str] = {}
    for post in known:
        by_name.setdefault(PurePosixPath(post).stem.casefold(), post)
    stem = PurePosixPath(path).stem.casefold()
    for name in difflib.get_close_matches(stem, list(by_name), n=n, cutoff=0.6):
        if by_name[name] not in near:
            near.append(by_name[name])
    return near[:n]


def text_hash(text: str) -> str:
    """The sha256 ``FileStore`` reports for ``text`` written as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def today() -> str:
    return dt.date.fromtimestamp(time.time()).isoformat()


def slug_for(text: str, fallback: str) -> str:
    """A file-name slug: lowercase ASCII words joined by ``-`` (Chinese becomes pinyin)."""
    slug = slugify(text, max_length=MAX_SLUG_CHARS, word_boundary=True, save_order=True)
    return slug or slugify(fallback, max_length=MAX_SLUG_CHARS) or "post"


def post_path(ctx: SkillContext, target: str | None, slug: str) -> str:
    """The relative path to save a new post at: ``target`` (checked) or ``<posts>/<slug>.md``."""
    if target and target.strip():
        rel = ctx.files.relative(target.strip())
        if not rel.lower().endswith(POST_SUFFIXES):
            rel += ".md"
            ctx.files.relative(rel)
        if any(part.startswith(".") for part in PurePosixPath(rel).parts):
            raise PathNotAllowed(target, "inside a hidden folder (posts there are not indexed)")
        return rel
    posts_dir = ctx.config.posts_dir.strip("/") or "."
    return ctx.files.relative(f"{posts_dir}/{slug}.md")


def _candidates(rel: str) -> list[str]:
    path = PurePosixPath(rel)
    stem, suffix = path.stem, path.suffix
    names = [rel] + [
        (path.parent / f"{stem}-{n}{suffix}").as_posix() for n in range(2, MAX_NAME_TRIES)
    ]
    return [name.removeprefix("./") for name in names]


def save_new_file(ctx: SkillContext, rel: str, text: str) -> dict[str, str]:
    """Create ``rel`` (or ``-2``, ``-3``... when taken) holding ``text``; never overwrites.

    Idempotent: a candidate that already holds exactly ``text`` (our own earlier write, before
    a crash cut the task off) is taken as saved.
    """
    digest = text_hash(text)
    for name in _candidates(rel):
        existing = ctx.files.hash_of(name)
        if existing == digest:
            return {"path": name, "hash": digest}
        if existing is not None or ctx.files.exists(name):
            continue
        try:
            _, written = ctx.files.write(name, text, create_only=True)
        except UserError:
            if ctx.files.exists(name):  # created by someone else a moment ago
                continue
            raise
        return {"path": name, "hash": written}
    raise UserError(f"no free file name near {rel} after {MAX_NAME_TRIES} tries")


def new_post_text(metadata: Mapping[str, Any], body: str) -> str:
    """A post's text. ``date`` given as ``YYYY-MM-DD`` is written as a YAML date."""
    fields = dict(metadata)
    date = fields.get("date")
    if isinstance(date, str):
        with contextlib.suppress(ValueError):  # not a plain date: written as given
            fields["date"] = dt.date.fromisoformat(date)
    return dump_post(fields, body)


def split_frontmatter_block(text: str) -> tuple[str, str]:
    """``(frontmatter block as written, rest)``: editing the rest keeps the block byte for byte."""
    match = _FM_BLOCK.match(text)
    if match is None:
        return "", text
    return match.group(0), text[match.end() :]


async def refresh_memory(ctx: SkillContext) -> dict[str, Any]:
    """Re-index changed posts (off the event loop); returns the index report as JSON."""
    report = await asyncio.to_thread(ctx.memory.refresh)
    return report.to_dict()
