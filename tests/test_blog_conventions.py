"""A blog's own conventions, read from the fixture trees (Zola, Hugo, Jekyll): the layout,
section pages left out, page bundles, titles and dates in the index, drafts; and the index as
``skillrt index --json`` lists it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from skillrt import load_config
from skillrt._io.layout import detect_layout
from skillrt.blog.conventions import first_heading, is_draft, post_date, post_stem
from skillrt.blog.dates import find_dates
from skillrt.blog.memory import BlogMemory
from tests.blog import copy_fixture
from tests.cli_support import cli_env, skillrt, write_script

ZOLA = {
    "content/Rust-1.77.0.md": ("Announcing Rust 1.77.0", "2024-03-21", False),
    "content/Rust-1.78.0.md": ("Announcing Rust 1.78.0", "2024-05-02", False),
    "content/async-closures/index.md": (
        "Async closures MVP: call for testing",
        "2024-08-09",
        False,
    ),
    "content/inside-rust/2023-11-20-this-week.md": (
        "This week in the compiler",
        "2023-11-20",
        False,
    ),
    "content/inside-rust/2024-09-10-compiler-team.md": (
        "Compiler team planning, September",
        "2024-09-10",
        False,
    ),
}
HUGO = {
    "content/posts/first-post.md": ("My first post", "2023-06-01", False),
    "content/posts/json-post.md": ("Front matter in JSON", "2024-02-10", False),
    "content/posts/notes-on-shells.md": ("Notes on shells", "2022-12-24", False),
    "content/posts/photo-walk/index.md": ("A photo walk", "2024-10-01", False),
    "content/posts/toml-post.md": ("Shortcodes in TOML land", "2024-07-04", True),
}
JEKYLL = {
    "_drafts/unfinished-idea.md": ("An unfinished idea about Liquid", None, True),
    "_posts/2023-04-05-hello-jekyll.md": ("Hello, Jekyll", "2023-04-05", False),
    "_posts/2024-01-15-liquid-tips.md": ("Liquid tips", "2024-01-15", False),
}


@pytest.mark.parametrize(
    ("name", "kind", "posts_dir", "drafts_dir"),
    [
        ("zola", "zola", "content", None),
        ("hugo", "hugo", "content/posts", None),
        ("jekyll", "jekyll", "_posts", "_drafts"),
    ],
)
def test_layout_is_told_apart(
    tmp_path: Path, name: str, kind: str, posts_dir: str, drafts_dir: str | None
) -> None:
    found = detect_layout(copy_fixture(name, tmp_path / name))
    assert (found.kind, found.posts_dir, found.drafts_dir) == (kind, posts_dir, drafts_dir)


def test_a_hugo_config_toml_is_not_zola(tmp_path: Path) -> None:
    root = copy_fixture("hugo", tmp_path / "site")
    (root / "hugo.toml").rename(root / "config.toml")  # baseURL, not base_url
    assert detect_layout(root).kind == "hugo"


@pytest.mark.parametrize(("name", "expected"), [("zola", ZOLA), ("hugo", HUGO), ("jekyll", JEKYLL)])
def test_titles_dates_and_drafts_in_the_index(
    tmp_path: Path, name: str, expected: dict[str, tuple[str, str | None, bool]]
) -> None:
    root = copy_fixture(name, tmp_path / name)
    config = load_config(content_root=root, state_dir=tmp_path / "state")
    memory = BlogMemory(
        root, tmp_path / "state", config.posts_dir, drafts_dir=config.layout.drafts_dir
    )
    report = memory.refresh()
    assert report.errors == []
    got = {p.path: (p.title, p.date, p.draft) for p in memory.posts.all_posts()}
    assert got == expected  # no _index.md section page, no "index" title, every date read
    memory.close()


def test_the_zola_bundle_and_its_taxonomies(tmp_path: Path) -> None:
    root = copy_fixture("zola", tmp_path / "zola")
    memory = BlogMemory(root, tmp_path / "state", "content")
    memory.refresh()
    assert memory.resolve_link("async-closures") == "content/async-closures/index.md"
    team = memory.posts.get("content/inside-rust/2024-09-10-compiler-team.md")
    assert team is not None and team.tags == ("compiler", "planning")
    memory.close()


def test_index_json_lists_every_post(tmp_path: Path) -> None:
    root = copy_fixture("zola", tmp_path / "zola")
    env = cli_env(root, write_script(tmp_path / "s.json", []))
    done = skillrt("index", "--json", env=env, cwd=root)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["posts"] == len(ZOLA) == len(data["items"])
    items = {item["path"]: item for item in data["items"]}
    assert items["content/async-closures/index.md"] == {
        "path": "content/async-closures/index.md",
        "title": "Async closures MVP: call for testing",
        "date": "2024-08-09",
        "draft": False,
    }
    assert "content/_index.md" not in items and "content/inside-rust/_index.md" not in items


@pytest.mark.parametrize(
    ("fields", "rel", "date"),
    [
        ({"date": dt.datetime(2024, 1, 2, 23, 0)}, "x.md", "2024-01-02"),
        ({"pubDate": "2021-05-06T10:00:00Z"}, "x.md", "2021-05-06"),
        ({"path": "inside-rust/2020/02/29/leap"}, "x.md", "2020-02-29"),
        ({}, "_posts/2019-07-08-name.md", "2019-07-08"),
        ({}, "content/2018-01-31-bundle/index.md", "2018-01-31"),
        ({}, "posts/2017/03/04/x.md", "2017-03-04"),
        ({"date": "someday"}, "posts/2019-13-40-bad.md", None),
    ],
)
def test_where_dates_come_from(fields: dict[str, object], rel: str, date: str | None) -> None:
    assert post_date(fields, rel) == date


def test_drafts_stems_and_headings() -> None:
    assert is_draft({"draft": True}, "a.md") and is_draft({"draft": "yes"}, "a.md")
    assert is_draft({"published": False}, "a.md") and is_draft({}, "_drafts/a.md")
    assert not is_draft({"draft": False}, "a.md")
    assert post_stem("content/slug/index.md") == "slug" and post_stem("a/b.md") == "b"
    body = "```sh\n# comment\n```\n~~~\n# tilde\n~~~\n# Real\n"
    assert first_heading(body) == "Real"
    assert first_heading("````\n```\n# inside\n```\n````\n") is None


@pytest.mark.parametrize(
    ("head", "removed"),
    [
        ('draft: "yes"\npublished: "False"\n', ("draft", "published")),
        ("published: 'off'\n", ("published",)),
        ('draft: "off"\n', ()),  # not a draft to the index: publishing leaves it alone
    ],
)
def test_publish_removes_exactly_what_the_index_calls_a_draft(
    tmp_path: Path, head: str, removed: tuple[str, ...]
) -> None:
    from skillrt.blog.files import FileStore
    from skillrt.blog.markdown import split_post
    from skillrt.blog.publish import publish_post

    text = f"---\ntitle: T\n{head}---\n\nBody.\n"
    (tmp_path / "posts").mkdir()
    (tmp_path / "posts" / "p.md").write_text(text, encoding="utf-8")
    fields, _ = split_post(text)
    assert is_draft(fields, "posts/p.md") is bool(removed)
    done = publish_post(FileStore(tmp_path), "posts/p.md", posts_dir="posts", day=dt.date.today())
    assert done.removed == removed and done.changed is bool(removed)
    after = (tmp_path / "posts" / "p.md").read_text(encoding="utf-8")
    assert not is_draft(split_post(after)[0], "posts/p.md")
    assert after.startswith("---\ntitle: T\n") and after.endswith("---\n\nBody.\n")


@pytest.mark.parametrize(
    ("question", "start", "end", "rest"),
    [
        ("2024年写了哪些 Rust 文章", "2024-01-01", "2024-12-31", "写了哪些 Rust 文章"),
        ("2024年3月的文章", "2024-03-01", "2024-03-31", "的文章"),
        ("what did I write about Rust last year?", "2025-01-01", "2025-12-31", None),
        ("posts about async in 2023", "2023-01-01", "2023-12-31", "posts about async"),
        ("去年的文章", "2025-01-01", "2025-12-31", "的文章"),
        ("Rust posts from March 2024", "2024-03-01", "2024-03-31", "Rust posts from"),
        ("posts since 2024", "2024-01-01", "9999-12-31", "posts"),
    ],
)
def test_dates_in_questions(question: str, start: str, end: str, rest: str | None) -> None:
    found, left = find_dates(question, dt.date(2026, 6, 1))
    assert found is not None and (found.start, found.end) == (start, end)
    if rest is not None:
        assert left == rest


@pytest.mark.parametrize("question", ["how does the 2048 game work", "what is Rust 1.77"])
def test_no_date_in_questions(question: str) -> None:
    assert find_dates(question, dt.date(2026, 6, 1)) == (None, question)
