"""New posts that follow the blog: its frontmatter format and keys, its file names, its folder,
and its way of marking drafts (``skillrt.blog.style``); and the reply's word on the draft.

``drafts.mark`` (on by default) makes every post skillrt writes a draft, marked the blog's way:
in the drafts folder where the generator has one (Jekyll's ``_drafts/``), else a ``draft``
field (``draft = true`` / ``draft: true`` / ``"draft": true``). Drafts are left out of answers
until published (``skillrt publish PATH``, ``/publish``, or removing the flag by hand).
VitePress and MkDocs have no draft flag: the field is kept for skillrt's answers, and the reply
says the site still builds the page.

An Obsidian vault's new note is made as Obsidian makes one (``_vault_note``): in the folder
``.obsidian/app.json`` names for new notes, with the vault's ``created`` date.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath

from pydantic import BaseModel

from skillrt import Replies, SkillContext
from skillrt.blog.conventions import DRAFT_FOLDERS, address_key, in_drafts_folder
from skillrt.blog.frontmatter import split_frontmatter
from skillrt.blog.posts import newest_first
from skillrt.blog.publish import address_taken, folder_posts, free_names, hexo_post_name
from skillrt.blog.siteconfig import site_today
from skillrt.blog.style import PostStyle, post_style
from skillrt.exceptions import InvalidFrontmatter, UserError

from .checks import HAN
from .common import post_path
from .translation_path import site_languages, translation_path

__all__ = [
    "DRAFT_REPLIES",
    "IGNORED_DRAFTS",
    "NewPost",
    "blog_style",
    "compose_new_post",
    "draft_note",
]

DRAFT_REPLIES = Replies(
    {
        "draft_field": (
            "\n\n这是一篇草稿（{mark}）：发布之前，回答问题时不会引用它。"
            "发布：`skillrt publish {path}` 或 `/publish`。",
            "\n\nIt is a draft ({mark}): answers leave it out until it is published with "
            "`skillrt publish {path}` or `/publish`.",
        ),
        "draft_folder": (
            "\n\n这是一篇草稿（在 `{folder}/` 里）：发布之前，回答问题时不会引用它。"
            "发布：`skillrt publish {path}` 或 `/publish`。",
            "\n\nIt is a draft (in `{folder}/`): answers leave it out until it is published "
            "with `skillrt publish {path}` or `/publish`.",
        ),
        "draft_field_ignored": (
            "\n\n它标了草稿（{mark}），回答问题时不会引用它；但 {generator} 没有草稿标记，"
            "构建网站时照样会发布它。要不发布，请把它移出 `{folder}/`。",
            "\n\nIt is marked a draft ({mark}), so answers leave it out; but {generator} has "
            "no draft flag and still builds and publishes it: move it out of `{folder}/` to "
            "keep it off the site.",
        ),
    }
)
IGNORED_DRAFTS = {"vitepress": "VitePress", "mkdocs": "MkDocs"}
"""Generators that have no draft flag: a page marked ``draft: true`` is built and goes live
(the reply said answers leave it out until published, as if the site did too)."""
RECENT_NOTES = 20
_MARKS = {"toml": "`draft = true`", "json": '`"draft": true`', "yaml": "`draft: true`"}


class NewPost(BaseModel):
    """A new post as composed (journalled before it is saved): where, what, and whether it
    is a draft."""

    path: str
    text: str
    draft: bool = False
    readdressed: list[str] = []  # a translation's fields set to an address of its own


def blog_style(ctx: SkillContext) -> PostStyle:
    """The blog's post style (``new_post.format``, ``new_post.template`` applied). Refreshes
    the index and reads some posts: blocking I/O, for a sync step."""
    config = ctx.config
    template = None
    if config.new_post.template:
        template, _ = ctx.files.read(config.new_post.template)
    layout = config.layout
    ctx.memory.posts.refresh()  # the posts as they are now (only changed files are read)
    return post_style(
        config.root,
        ctx.memory.posts.all_posts(),
        posts_dir=config.posts_dir,
        kind=layout.kind,
        drafts_dir=layout.drafts_dir,
        fmt=config.new_post.format,
        template=template,
    )


def compose_new_post(
    ctx: SkillContext,
    *,
    target: str | None,
    title: str,
    slug: str,
    body: str,
    tags: Sequence[str] = (),
    description: str = "",
    links: Sequence[str] = (),
    language: str | None = None,
) -> NewPost:
    """A new post in the blog's style at ``target`` (checked) or where the blog keeps new
    posts (in ``language``'s place on a site that declares it: ``_in_language``); a draft
    when ``drafts.mark``. Blocking I/O: run it as a sync step."""
    style = blog_style(ctx)
    draft = ctx.config.drafts.mark
    day = site_today(ctx.config.root, ctx.config.layout.kind)
    marked = draft
    if target:  # the folder is the user's: a draft there is marked by its field
        path = post_path(ctx, target, slug)
        in_drafts = in_drafts_folder(path)
        style = replace(style, drafts_dir=None)
        draft = draft and not in_drafts
        marked = draft or in_drafts
    elif ctx.config.layout.kind == "hexo" and not (draft and style.drafts_dir):
        path = _hexo_path(ctx, style, slug, day, draft=draft)
    elif ctx.config.layout.kind == "obsidian":
        style = _vault_note(ctx, style)
        path = ctx.files.relative(style.file_path(slug, day, draft=draft))
    else:
        path = ctx.files.relative(style.file_path(slug, day, draft=draft))
    if not target:
        path = _in_language(ctx, path, language or _title_language(title))
    if {"slug", "path"} & set(style.keys):
        slug = _saved_slug(ctx, path, slug)
    text = style.compose(
        title=title,
        slug=slug,
        day=day,
        body=body,
        draft=draft,
        tags=tags,
        description=description,
        links=links,
    )
    return NewPost(path=path, text=text, draft=marked)


def _title_language(title: str) -> str:
    """The language of a post made with no word on it (CreateArticle): Chinese for a title
    with a Chinese character, else English. On a Hugo site of ``content/en`` and
    ``content/zh`` whose newest post was Chinese, "Hello there" was made in
    ``content/zh/posts/``, the newest post's folder: a Chinese page."""
    return "zh" if HAN.search(title) else "en"


def _in_language(ctx: SkillContext, path: str, language: str) -> str:
    """Where a new post in ``language`` goes on a site whose config declares that language:
    its place as the site's translations have it (``translation_path``: ``content/zh/…``
    for a ``contentDir`` each, ``x.zh.md`` by name), else ``path``. A Chinese article on a
    Hugo site of ``content/en`` and ``content/zh`` was saved in ``content/en/posts/``, and
    Hugo listed it as an English page."""
    root, kind = ctx.config.root, ctx.config.layout.kind
    site = site_languages(root, kind)
    if site is None or language not in site.codes:
        return path
    placed, sites_own = translation_path(root, kind, path, language, lambda _: False)
    return ctx.files.relative(placed) if sites_own else path


def _saved_slug(ctx: SkillContext, path: str, slug: str) -> str:
    """The slug of the name ``save_new_file`` gives the post at ``path``: ``-2``, ``-3``...
    where that file, or a post at its web address, is there (``address_taken``). On a Hugo
    blog whose posts carry a ``slug`` field, a new post saved as ``hello-there-2.md`` beside
    ``hello-there.md`` kept ``slug: hello-there``: ``hugo list all`` gave both
    ``/posts/hello-there/``, and the site showed one of the two."""
    pages: list[str] | None = None
    for name in free_names(path):
        if ctx.files.exists(name):
            continue
        if pages is None:
            pages = folder_posts(ctx.files, address_key(name)[0])
        if address_taken(ctx.files, name, pages) is None:
            return slug if name == path else address_key(name)[1]
    return slug


def _hexo_path(ctx: SkillContext, style: PostStyle, slug: str, day: dt.date, *, draft: bool) -> str:
    """A Hexo post out of the drafts folder (``drafts.mark`` off) named as ``new_post_name``
    says (``:year/:month/:title.md`` → ``source/_posts/2026/11/slug.md``), as ``hexo new``
    names it; else in the recent posts' folder. It went to the folder of the most recent
    post, ``source/_posts/2024/03/``, dated 2026-11."""
    folder = ctx.config.posts_dir.strip("/")
    named = hexo_post_name(ctx.config.root, folder, f"{slug}.md", day)
    if named is None:
        return ctx.files.relative(style.file_path(slug, day, draft=draft))
    return f"{folder}/{named}"


def _vault_note(ctx: SkillContext, style: PostStyle) -> PostStyle:
    """A new note of an Obsidian vault where Obsidian makes one: in the folder its settings
    name for new notes (``.obsidian/app.json``: ``"newFileLocation": "folder"``,
    ``"newFileFolderPath": "Inbox"``), with the vault's ``created`` alone when its notes carry
    that and no ``date``. A note was made at the vault's top, with ``date`` beside the
    ``created`` of every other note. (Named by its slug, as every new post is.)"""
    keys = style.keys
    if "created" in keys and not _notes_carry(ctx, "date"):
        keys = tuple(k for k in keys if k != "date")
    folder = _new_note_folder(ctx.config.root)
    return replace(style, keys=keys, folder=folder or style.folder)


def _notes_carry(ctx: SkillContext, key: str) -> bool:
    """Whether most of the vault's recent notes (``RECENT_NOTES``) carry ``key``: the style's
    keys have skillrt's own ``date`` whether they do or not."""
    recent = sorted(ctx.memory.posts.all_posts(), key=lambda m: newest_first(m.date))
    carry = total = 0
    for meta in recent[:RECENT_NOTES]:
        try:
            fields = split_frontmatter(ctx.files.read(meta.path)[0], meta.path).fields()
        except (UserError, InvalidFrontmatter):
            continue
        total += 1
        carry += key in fields
    return carry * 2 > total


def _new_note_folder(root: Path) -> str | None:
    """The folder Obsidian puts new notes in (``newFileFolderPath`` when ``newFileLocation``
    is ``folder``), when it is inside the vault and there; else None (the vault's top)."""
    try:
        settings = json.loads((root / ".obsidian" / "app.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(settings, dict) or settings.get("newFileLocation") != "folder":
        return None
    folder = settings.get("newFileFolderPath")
    if not isinstance(folder, str) or not folder.strip("/ "):
        return None
    rel = PurePosixPath(folder.strip("/ "))
    if ".." in rel.parts or rel.parts[0].startswith(".") or not (root / rel).is_dir():
        return None
    return rel.as_posix()


def draft_note(ctx: SkillContext, path: str, text: str) -> str:
    """The reply's line on a draft: how it is marked and how to publish it ("" if no draft)."""
    parts = PurePosixPath(path).parts[:-1]
    for i, part in enumerate(parts):
        if part in DRAFT_FOLDERS:
            return ctx.reply("draft_folder", folder="/".join(parts[: i + 1]), path=path)
    found = split_frontmatter(text, path)
    if found.format is None or found.fields().get("draft") is not True:
        return ""
    generator = IGNORED_DRAFTS.get(ctx.config.layout.kind)
    if generator is not None:
        folder = ctx.config.posts_dir.strip("/") or "."
        return ctx.reply(
            "draft_field_ignored", mark=_MARKS[found.format], generator=generator, folder=folder
        )
    return ctx.reply("draft_field", mark=_MARKS[found.format], path=path)
