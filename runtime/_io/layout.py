"""Where a blog keeps its posts: detected from the folder's layout when ``posts_dir`` is unset.

In order (the first that fits wins):

=============  =======================================================  ==================
kind           recognised by                                            posts folder
=============  =======================================================  ==================
posts          ``posts/`` holding Markdown (skillrt's own default)      ``posts``
obsidian       ``.obsidian/`` (an Obsidian vault)                       ``.`` (the vault)
zola           ``zola.toml``/``config.toml`` with ``base_url`` and       ``content``
               ``content/``
hugo           ``hugo.toml``/``config.toml``/``config.json``/...,       ``content/posts``
               or ``config/_default/hugo.toml``..., and ``content/``    or ``content``
               (or the config's top-level ``contentDir``)               (in ``contentDir``)
hexo           ``source/_posts/``                                       ``source/_posts``
jekyll         ``_posts/`` (in ``_config.yml``'s ``collections_dir``)   ``_posts``
vitepress      ``docs/.vitepress/``                                     ``docs``
mkdocs         ``mkdocs.yml`` and ``docs/``                             ``docs``
posts          an empty ``posts/``                                      ``posts``
content, docs  ``content/`` or ``docs/`` holding Markdown               that folder
default        nothing of the above                                     ``posts``
=============  =======================================================  ==================

Jekyll keeps drafts in ``_drafts/`` and Hexo in ``source/_drafts/``, beside the posts:
``drafts_dir`` names that folder (indexed too, every post in it a draft).

Only reads the folder (``is_dir``, a bounded walk counting Markdown files); writes nothing.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

__all__ = ["BlogLayout", "configured_layout", "count_markdown", "detect_layout"]

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
MAX_COUNT = 100_000  # stop counting here: a huge tree is still "many"
_HUGO_CONFIGS = (
    "hugo.toml",
    "hugo.yaml",
    "hugo.yml",
    "hugo.json",
    "config.toml",
    "config.yaml",
    "config.yml",
    "config.json",
    *(
        f"config/_default/{name}.{ext}"
        for name in ("hugo", "config")
        for ext in ("toml", "yaml", "yml", "json")
    ),
)
"""Hugo's configuration: a file at the top, or a config directory (Hugo's documented
``config/_default/hugo.toml``, as many themes ship). A site with a config directory was taken
for a plain ``content/`` folder, and a new post went to ``content/post-d.md``, not
``content/posts/``."""
_ZOLA_CONFIGS = ("zola.toml", "config.toml")  # (``zola init`` writes zola.toml since 0.22)
_CONTENT_DIR = re.compile(r"""^["']?contentDir["']?[ \t]*[:=][ \t]*["']?([^"'\s,#]+)""", re.M)
_COLLECTIONS_DIR = re.compile(r"""^collections_dir[ \t]*:[ \t]*["']?([^"'\s#]+)""", re.M)


@dataclass(frozen=True, slots=True)
class BlogLayout:
    """The posts folder (relative to the content root, ``.`` for the root), what kind of blog
    that is, why, and how many Markdown files it holds (None when it does not exist)."""

    posts_dir: str
    kind: str
    reason: str
    markdown_files: int | None
    drafts_dir: str | None = None

    def hint(self) -> str | None:
        """What to do when the posts folder is missing or empty (None when it has posts)."""
        where = f"{self.posts_dir}/" if self.posts_dir != "." else "the blog folder"
        fix = "set posts_dir in skillrt.toml or pass --posts-dir to point at your Markdown"
        if self.markdown_files is None:
            return f"{where} does not exist yet (created on the first write); {fix}"
        if self.markdown_files == 0:
            return f"{where} holds no Markdown files yet; {fix}"
        return None

    def describe(self) -> str:
        """One line: ``docs/ (VitePress: docs/.vitepress/ found) · 418 Markdown files``."""
        where = f"{self.posts_dir}/" if self.posts_dir != "." else "./"
        count = (
            "missing" if self.markdown_files is None else f"{self.markdown_files} Markdown files"
        )
        return f"{where} ({self.reason}) · {count}"


def count_markdown(folder: Path, limit: int = MAX_COUNT) -> int | None:
    """Markdown files under ``folder`` (hidden folders and node_modules skipped, as the index
    does), or None when it is not a folder."""
    if not folder.is_dir():
        return None
    found = 0
    for _dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "node_modules"]
        found += sum(1 for f in filenames if f.lower().endswith(MARKDOWN_SUFFIXES))
        if found >= limit:
            break
    return found


def _head(path: Path) -> str:
    """The start of a config file, or "" when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:20_000]
    except OSError:
        return ""


def _is_zola(root: Path) -> str | None:
    """Zola's config file: ``zola.toml`` (Zola 0.22's name: such a site got new posts at
    ``content/fourth.md`` with a stray top-level ``tags``) or ``config.toml``, setting
    ``base_url`` (Hugo calls it ``baseURL``), and a ``content/`` folder (its ``_index.md``
    section page is optional: a small site has none). None when it is no Zola site."""
    if not (root / "content").is_dir():
        return None
    for name in _ZOLA_CONFIGS:
        config = root / name
        if config.is_file() and re.search(r"^\s*base_url\s*=", _head(config), re.M):
            return name
    return None


def _content_dir(root: Path, config: str) -> str:
    """Hugo's content folder: a top-level ``contentDir`` in its config when it names a folder
    that exists (a TOML table's, a language's, is not read), else ``content``."""
    text = _head(root / config)
    if config.endswith(".toml"):
        text = re.split(r"^\s*\[", text, maxsplit=1, flags=re.M)[0]  # before the first table
    found = _CONTENT_DIR.search(text)
    if found is None and config.endswith(".json"):
        found = re.search(r'^[ \t]{0,4}"contentDir"[ \t]*:[ \t]*"([^"]+)"', text, re.M)
    folder = found.group(1).strip("/") if found else ""
    if folder and ".." not in folder.split("/") and (root / folder).is_dir():
        return folder
    return "content"


def _jekyll_posts(root: Path) -> str | None:
    """Jekyll's posts folder: ``_posts``, or ``<collections_dir>/_posts`` when
    ``_config.yml`` sets ``collections_dir`` (Jekyll then reads posts and drafts there
    only); None when there is none."""
    for name in ("_config.yml", "_config.yaml"):
        found = _COLLECTIONS_DIR.search(_head(root / name))
        folder = found.group(1).strip("/") if found else ""
        if folder and ".." not in folder.split("/") and (root / folder / "_posts").is_dir():
            return f"{folder}/_posts"
    return "_posts" if (root / "_posts").is_dir() else None


def configured_layout(root: Path, posts_dir: str, source: str = "configured") -> BlogLayout:
    """The layout of a ``posts_dir`` given in the config, the environment or ``--posts-dir``."""
    rel = posts_dir.strip("/") or "."
    sibling = (Path(rel).parent / "_drafts").as_posix().removeprefix("./")
    drafts = sibling if rel != "." and (root / sibling).is_dir() else None
    count = count_markdown(root / rel)
    return BlogLayout(rel, "configured", f"posts_dir set ({source})", count, drafts)


def detect_layout(root: Path) -> BlogLayout:
    """The blog's posts folder, found from the layout of ``root`` (see the module docstring)."""

    def layout(rel: str, kind: str, reason: str) -> BlogLayout:
        return BlogLayout(rel, kind, reason, count_markdown(root / rel if rel != "." else root))

    posts = count_markdown(root / "posts")
    if posts:
        return BlogLayout("posts", "posts", "posts/ holds Markdown", posts)
    if (root / ".obsidian").is_dir():
        return layout(".", "obsidian", "Obsidian vault: .obsidian/ found")
    zola = _is_zola(root)
    if zola is not None:
        return layout("content", "zola", f"Zola site: {zola} with base_url and content/")
    hugo = next((name for name in _HUGO_CONFIGS if (root / name).is_file()), None)
    content = _content_dir(root, hugo) if hugo is not None else "content"
    if hugo is not None and (root / content).is_dir():
        sub = f"{content}/posts" if count_markdown(root / content / "posts") else content
        return layout(sub, "hugo", f"Hugo site: {hugo} and {content}/ found")
    if (root / "source" / "_posts").is_dir():
        found = layout("source/_posts", "hexo", "Hexo site: source/_posts/ found")
        return replace(found, drafts_dir="source/_drafts")
    jekyll = _jekyll_posts(root)
    if jekyll is not None:
        drafts = jekyll.removesuffix("_posts") + "_drafts"
        found = layout(jekyll, "jekyll", f"Jekyll site: {jekyll}/ found")
        return replace(found, drafts_dir=drafts)
    if (root / "docs" / ".vitepress").is_dir():
        return layout("docs", "vitepress", "VitePress site: docs/.vitepress/ found")
    mkdocs = next((n for n in ("mkdocs.yml", "mkdocs.yaml") if (root / n).is_file()), None)
    if mkdocs is not None and (root / "docs").is_dir():
        return layout("docs", "mkdocs", f"MkDocs site: {mkdocs} and docs/ found")
    if posts is not None:
        return BlogLayout("posts", "posts", "posts/ found", posts)
    counts = {name: count_markdown(root / name) or 0 for name in ("content", "docs")}
    best = max(counts, key=lambda name: counts[name])
    if counts[best]:
        return BlogLayout(best, best, f"{best}/ holds Markdown", counts[best])
    return BlogLayout("posts", "default", "no known blog layout found", None)
