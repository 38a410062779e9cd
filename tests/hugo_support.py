"""The real ``hugo`` for the tests that build a site skillrt wrote to: what Hugo lists (each
page's language, draft mark, date and web address) and whether the site still builds. Without
``hugo`` on PATH these tests skip, or with ``SKILLRT_REQUIRE_HUGO=1`` (as in CI) fail."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

REQUIRE_HUGO = os.environ.get("SKILLRT_REQUIRE_HUGO") == "1"
"""Read at import: the shared conftest clears SKILLRT_* variables before each test."""
TIMEOUT = 60


@dataclass(frozen=True, slots=True)
class HugoPage:
    """A page as ``hugo list all`` lists it."""

    path: str
    title: str
    draft: bool
    permalink: str
    publish_date: str


def require_hugo() -> str:
    """The ``hugo`` executable; skip (or, with SKILLRT_REQUIRE_HUGO=1, fail) without one."""
    found = shutil.which("hugo")
    if found is None:
        reason = "no hugo executable (apt install --no-install-recommends hugo)"
        if REQUIRE_HUGO:
            pytest.fail(reason + " (SKILLRT_REQUIRE_HUGO=1)")
        pytest.skip(reason)
    return found


def _run(site: Path, *args: str, built: dict[str, str] | None = None) -> str:
    """``hugo args`` on a copy of ``site`` (Hugo leaves ``public/``, ``resources/`` and a lock
    in the site it reads: the blog stays as skillrt left it); its output, asserted a success.
    ``built``: filled with the text of each file Hugo wrote, by its path under ``public/``."""
    hugo = require_hugo()
    with tempfile.TemporaryDirectory(prefix="hugo-") as scratch:
        copy = Path(scratch) / "site"
        shutil.copytree(site, copy, ignore=shutil.ignore_patterns(".skillrt"))
        env = {**os.environ, "HUGO_CACHEDIR": str(Path(scratch) / "cache")}
        done = subprocess.run(
            [hugo, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=TIMEOUT
        )
        assert done.returncode == 0, f"hugo {' '.join(args)} failed:\n{done.stdout}{done.stderr}"
        if built is not None:
            public = copy / "public"
            built.update(
                (path.relative_to(public).as_posix(), path.read_text(encoding="utf-8"))
                for path in public.rglob("*.html")
            )
    return done.stdout


def hugo_build(site: Path) -> dict[str, str]:
    """``hugo`` builds ``site`` (asserted): the HTML pages it wrote, by their path."""
    built: dict[str, str] = {}
    _run(site, "--quiet", built=built)
    return built


def hugo_pages(site: Path) -> dict[str, HugoPage]:
    """The pages ``hugo list all`` finds in ``site``, by their path, asserted to be at one web
    address each (drafts too: a draft at a post's address takes it over once published)."""
    rows = list(csv.DictReader(_run(site, "list", "all").splitlines()))
    addresses = Counter(row["permalink"] for row in rows)
    shared = [row["path"] for row in rows if addresses[row["permalink"]] > 1]
    assert not shared, f"pages at one web address: {shared}"
    return {
        row["path"]: HugoPage(
            path=row["path"],
            title=row["title"],
            draft=row["draft"] == "true",
            permalink=row["permalink"],
            publish_date=row["publishDate"],
        )
        for row in rows
    }


def hugo_listed(site: Path, which: str) -> set[str]:
    """The paths of the pages ``hugo list <which>`` (``future``, ``expired``) lists in
    ``site``: the pages Hugo holds back. (Hugo 0.111 prints these lists without a header.)"""
    rows = csv.reader(_run(site, "list", which).splitlines())
    return {row[0] for row in rows if row and row[0] != "path"}
