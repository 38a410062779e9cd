"""The fixture blog: copies of ``tests/fixtures/blog`` (and the broken post) for one test."""

from __future__ import annotations

import shutil
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
BLOG = FIXTURES / "blog"
BROKEN_POST = FIXTURES / "broken" / "posts" / "broken-frontmatter.md"
POST_COUNT = len(list((BLOG / "posts").rglob("*.md")))


def copy_blog(dest: Path, *, broken: bool = False) -> Path:
    """A fresh copy of the fixture blog at ``dest`` (with the broken post when asked)."""
    shutil.copytree(BLOG, dest)
    if broken:
        shutil.copy(BROKEN_POST, dest / "posts" / BROKEN_POST.name)
    return dest


def copy_fixture(name: str, dest: Path) -> Path:
    """A fresh copy of the fixture tree ``tests/fixtures/<name>`` (``zola``, ``hugo``,
    ``jekyll``, ``formats``) at ``dest``."""
    shutil.copytree(FIXTURES / name, dest)
    return dest
