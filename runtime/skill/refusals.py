"""The errors a user can fix, answered in their language instead of failing the task.

``Skill.run`` turns them into ``SkillResult(success=False, message=..., data={"error": ...})``:
a parameter the skill refuses (``BadParam``), a path outside the blog or otherwise not
allowed, a missing file (with the nearest posts), unreadable frontmatter, a file changed on
disk since it was read, a file another task is writing. Nothing was changed in any of these
cases. Any other error fails the task, and the runtime's reply says why.
"""

from __future__ import annotations

import difflib
import os
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, NamedTuple

from skillrt.blog.conventions import is_section_page, post_stem
from skillrt.exceptions import (
    BadParam,
    FileChanged,
    FileMissing,
    FrontmatterNotKept,
    InvalidFrontmatter,
    LockConflict,
    PathNotAllowed,
)
from skillrt.skill.replies import Replies

if TYPE_CHECKING:
    from skillrt.skill.context import SkillContext

__all__ = ["REFUSALS", "REFUSED", "Refusal", "Refused", "nearest_posts", "refusal"]

REFUSED = (BadParam, PathNotAllowed, FileMissing, InvalidFrontmatter, FileChanged, LockConflict)
Refused = BadParam | PathNotAllowed | FileMissing | InvalidFrontmatter | FileChanged | LockConflict
POST_SUFFIXES = (".md", ".markdown")
MAX_SCANNED_POSTS = 20_000  # nearest_posts looks at no more files than this
_OUTSIDE = ("content root", "home-folder")  # PathNotAllowed reasons meaning "not in the blog"

REFUSALS = Replies(
    {
        "param_empty": ("请提供 {field}。", "Please give the {field}."),
        "param_too_long": (
            "{field} 太长了（{chars} 个字符，最多 {limit}）。",
            "The {field} is too long ({chars} characters; at most {limit}).",
        ),
        "outside_blog": (
            "`{path}` 在博客目录之外，不允许访问：我只读写博客目录里的文件，没有碰它。",
            "`{path}` is outside the blog, so it is not allowed: I only read and write files "
            "inside the blog folder, and did not touch it.",
        ),
        "path_not_allowed": (
            # (not "use a path inside the blog": a section page, a hidden folder and a name too
            # long are inside it, and refused)
            "路径不允许：`{path}`（{reason}），没有读写任何内容。",
            "That path is not allowed: `{path}` ({reason}); nothing was read or written.",
        ),
        "not_found": ("`{path}` 不存在。", "`{path}` does not exist."),
        "not_found_near": (
            "`{path}` 不存在。你是不是要找：{near}？",
            "`{path}` does not exist. Did you mean {near}?",
        ),
        "invalid_frontmatter": (
            "`{path}` 的 frontmatter 无法解析：{reason}。请先修正它。",
            "The frontmatter of `{path}` cannot be read: {reason}. Fix it first.",
        ),
        "frontmatter_not_kept": (
            "`{path}` 的 frontmatter 没有改动：{reason}。没有写入任何内容。",
            "The frontmatter of `{path}` was not changed: {reason}. Nothing was written.",
        ),
        "file_changed": (
            "`{path}` 在读取之后被修改过（可能在编辑器里），为避免覆盖你的改动，"
            "没有保存。请重新加载后再试。",
            "`{path}` changed on disk after it was read (perhaps in your editor); nothing was "
            "saved, so your changes are safe. Reload it and try again.",
        ),
        "locked": (
            "`{path}` 正被另一个任务（{holder}）写入，请稍后再试。",
            "`{path}` is being written by another task ({holder}); try again later.",
        ),
    }
)


class Refusal(NamedTuple):
    """A reply that refuses, in the user's language, and the result's data (``error``...)."""

    message: str
    data: dict[str, object]


def refusal(ctx: SkillContext, exc: Refused) -> Refusal:
    """The reply for an error the user can fix (one of ``REFUSED``)."""
    lang = ctx.input.language
    if isinstance(exc, BadParam):
        table = ctx.replies if exc.reply in ctx.replies else REFUSALS
        message = table.text(exc.reply, lang, field=exc.field, **exc.values)
        return Refusal(message, {"error": exc.reply, "field": exc.field})
    if isinstance(exc, PathNotAllowed):
        if any(word in exc.reason for word in _OUTSIDE):
            message = REFUSALS.text("outside_blog", lang, path=exc.path)
            return Refusal(message, {"error": "path_not_allowed", "outside_blog": True})
        message = REFUSALS.text("path_not_allowed", lang, path=exc.path, reason=exc.reason)
        return Refusal(message, {"error": "path_not_allowed"})
    if isinstance(exc, FileMissing):
        near = nearest_posts(ctx, exc.path)
        listed = ("、" if lang == "zh" else ", ").join(f"`{p}`" for p in near)
        key = "not_found_near" if near else "not_found"
        message = REFUSALS.text(key, lang, path=exc.path, near=listed)
        return Refusal(message, {"error": "not_found", "suggestions": near})
    if isinstance(exc, FrontmatterNotKept):  # (readable: a change it cannot take as written)
        message = REFUSALS.text("frontmatter_not_kept", lang, path=exc.path, reason=exc.reason)
        return Refusal(message, {"error": "frontmatter_not_kept"})
    if isinstance(exc, InvalidFrontmatter):
        message = REFUSALS.text("invalid_frontmatter", lang, path=exc.path, reason=exc.reason)
        return Refusal(message, {"error": "invalid_frontmatter"})
    if isinstance(exc, FileChanged):
        message = REFUSALS.text("file_changed", lang, path=exc.path)
        return Refusal(message, {"error": "file_changed"})
    message = REFUSALS.text("locked", lang, path=exc.path, holder=exc.holder)  # LockConflict
    return Refusal(message, {"error": "locked"})


def _markdown_under(root: str, folder: str) -> list[str]:
    base = os.path.join(root, folder) if folder != "." else root
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "node_modules")
        for name in filenames:
            if name.lower().endswith(POST_SUFFIXES) and not is_section_page(name):
                found.append(
                    os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                )
        if len(found) >= MAX_SCANNED_POSTS:
            break
    return found


def _below(path: str, folder: str) -> str:
    return path[len(folder) + 1 :] if folder != "." and path.startswith(folder + "/") else path


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
    # Compared below the posts folder: its name, shared by every post, made "content/posts/
    # nope.md" close to "content/posts/toml-post.md".
    below = {_below(p, posts_dir): p for p in known}
    near = [below[p] for p in difflib.get_close_matches(_below(path, posts_dir), below, n, 0.6)]
    by_name: dict[str, str] = {}
    for post in known:
        by_name.setdefault(post_stem(post).casefold(), post)  # a bundle: its folder's name
    stem = post_stem(path).casefold()
    for name in difflib.get_close_matches(stem, list(by_name), n=n, cutoff=0.6):
        if by_name[name] not in near:
            near.append(by_name[name])
    return near[:n]
