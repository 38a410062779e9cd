"""PostIndex: Chinese and English search, incremental refresh, broken posts, query safety."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import frontmatter
import pytest

from skillrt.blog.markdown import dump_post, split_post, word_count
from skillrt.blog.posts import MAX_QUERY_CHARS, PostIndex, query_terms
from skillrt.blog.wikilinks import parse_wikilinks, wikilink_targets
from skillrt.exceptions import InvalidFrontmatter
from tests.blog import POST_COUNT, copy_blog


@pytest.fixture
def blog(tmp_path: Path) -> Path:
    return copy_blog(tmp_path / "blog")


@pytest.fixture
def index(blog: Path, tmp_path: Path) -> Iterator[PostIndex]:
    ix = PostIndex(tmp_path / "state" / "posts.sqlite3", blog)
    ix.refresh()
    yield ix
    ix.close()


def test_fixture_blog_is_big_enough() -> None:
    assert POST_COUNT >= 12


def test_chinese_query_finds_the_chinese_post(index: PostIndex) -> None:
    hits = index.search("所有权", 5)
    assert hits[0].path == "posts/rust-borrowing.md"
    assert hits[0].title == "Rust 借用与引用"
    assert "所有权" in hits[0].snippet
    assert "所有权" in hits[0].tags


def test_chinese_question_with_function_words(index: PostIndex) -> None:
    hits = index.search("Rust 的借用规则是什么？", 3)
    assert hits[0].path == "posts/rust-borrowing.md"


def test_english_query_finds_the_english_post(index: PostIndex) -> None:
    hits = index.search("asyncio cancellation", 3)
    assert hits[0].path == "posts/python-asyncio.md"
    hits = index.search("goroutines channels", 3)
    assert hits[0].path == "posts/go-concurrency.md"


def test_short_terms_fall_back_to_like(index: PostIndex) -> None:
    # Two characters: too short for a trigram; still found, by title first.
    hits = index.search("索引", 3)
    assert hits[0].path == "posts/database-indexing.md"
    hits = index.search("Go", 3)
    assert hits[0].path == "posts/go-concurrency.md"
    # Whole words only for short Latin terms: "go" is not found inside "algorithm".
    assert all("go" in h.tags or h.path != "posts/git-workflow.md" for h in hits)


def test_no_match_is_an_empty_list(index: PostIndex) -> None:
    assert index.search("quantum chromodynamics", 5) == []
    assert index.search("量子色动力学", 5) == []
    assert index.search("", 5) == []
    assert index.search("的 了 是", 5) == []


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "rust OR python NOT go",
        "title:rust",
        "rust*",
        "NEAR(rust python)",
        "(((",
        "'; DROP TABLE posts; --",
        "100%_\\",
        "\x00\x1b[31m",
        "{rust}",
        "^rust",
    ],
)
def test_fts_syntax_in_queries_is_text(index: PostIndex, query: str) -> None:
    index.search(query, 5)  # never raises
    assert len(index) == POST_COUNT


def test_query_length_and_terms_are_bounded(index: PostIndex) -> None:
    long_query = "所有权" * 5000 + " rust" * 5000
    terms = query_terms(long_query)
    assert len(terms.all) <= 24
    assert index.search(long_query, 3)[0].path == "posts/rust-borrowing.md"
    assert len(query_terms("x" * (MAX_QUERY_CHARS * 3)).fts[0]) <= MAX_QUERY_CHARS


def test_refresh_of_an_unchanged_blog_does_no_work(blog: Path, tmp_path: Path) -> None:
    ix = PostIndex(tmp_path / "posts.sqlite3", blog)
    first = ix.refresh()
    assert len(first.added) == POST_COUNT and not first.errors
    second = ix.refresh()
    assert second.unchanged == POST_COUNT
    assert (second.added, second.updated, second.removed, second.errors) == ([], [], [], [])
    ix.close()
    # A new index object over the same database: still nothing to do.
    ix = PostIndex(tmp_path / "posts.sqlite3", blog)
    assert ix.refresh().unchanged == POST_COUNT
    ix.close()


def test_refresh_parses_only_what_changed(
    blog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ix = PostIndex(tmp_path / "posts.sqlite3", blog)
    ix.refresh()
    parsed: list[str] = []
    import skillrt.blog.posts as posts_module

    real = posts_module.split_post

    def counting(text: str, path: str = "") -> tuple[dict[str, object], str]:
        parsed.append(path)
        return real(text, path)

    monkeypatch.setattr(posts_module, "split_post", counting)
    assert ix.refresh().unchanged == POST_COUNT
    assert parsed == []

    post = blog / "posts" / "git-workflow.md"
    post.write_text(post.read_text(encoding="utf-8") + "\nRebasing keeps history linear.\n")
    (blog / "posts" / "docker-basics.md").unlink()
    (blog / "posts" / "new-post.md").write_text("---\ntitle: Brand New\n---\nHello trigram\n")
    report = ix.refresh()
    assert report.updated == ["posts/git-workflow.md"]
    assert report.removed == ["posts/docker-basics.md"]
    assert report.added == ["posts/new-post.md"]
    assert report.unchanged == POST_COUNT - 2
    assert sorted(parsed) == ["posts/git-workflow.md", "posts/new-post.md"]
    assert ix.search("linear history rebasing", 1)[0].path == "posts/git-workflow.md"
    assert all(h.path != "posts/docker-basics.md" for h in ix.search("Docker 容器", 5))
    ix.close()


def test_broken_frontmatter_is_reported_and_skipped(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog", broken=True)
    ix = PostIndex(tmp_path / "posts.sqlite3", blog)
    report = ix.refresh()
    assert len(report.added) == POST_COUNT
    assert [path for path, _ in report.errors] == ["posts/broken-frontmatter.md"]
    assert "YAML" in report.errors[0][1]
    assert ix.get("posts/broken-frontmatter.md") is None
    # Still reported on the next refresh, without counting as unchanged or added.
    again = ix.refresh()
    assert again.unchanged == POST_COUNT
    assert [path for path, _ in again.errors] == ["posts/broken-frontmatter.md"]
    # Fixed: indexed.
    (blog / "posts" / "broken-frontmatter.md").write_text(
        "---\ntitle: Fixed now\n---\nRepaired frontmatter\n", encoding="utf-8"
    )
    fixed = ix.refresh()
    assert fixed.added == ["posts/broken-frontmatter.md"] and fixed.errors == []
    ix.close()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("---\ntitle: [unclosed\n---\nbody\n", "YAML"),
        ("---\ntitle: never closed\nbody\n", "never closed"),
        ("---\n- a\n- list\n---\nbody\n", "mapping"),
    ],
)
def test_split_post_rejects_broken_frontmatter(text: str, reason: str) -> None:
    with pytest.raises(InvalidFrontmatter, match=reason):
        split_post(text, "posts/x.md")


def test_non_utf8_and_huge_posts_are_errors(blog: Path, tmp_path: Path) -> None:
    (blog / "posts" / "latin1.md").write_bytes("---\ntitle: caf\xe9\n---\n".encode("latin-1"))
    ix = PostIndex(tmp_path / "posts.sqlite3", blog)
    report = ix.refresh()
    assert ("posts/latin1.md", "not UTF-8 text") in report.errors
    ix.close()


def test_get_all_posts_and_fields(index: PostIndex) -> None:
    posts = index.all_posts()
    assert len(posts) == POST_COUNT
    weekly = index.get("posts/notes/weekly-review.md")
    assert weekly is not None
    assert weekly.tags == ("rust", "python")  # a comma-separated string in the file
    assert weekly.date == "2024-09-20"
    assert "Unwritten Ideas" in weekly.wikilinks
    assert "not a link" not in weekly.wikilinks  # inline code
    smart = index.get("posts/rust-smart-pointers.md")
    assert smart is not None and smart.aliases == ("Rust smart pointers",)
    borrowing = index.get("posts/rust-borrowing.md")
    assert borrowing is not None and "rust-lifetimes" in borrowing.wikilinks
    assert index.get("../outside.md") is None
    assert index.get("posts/missing.md") is None


def test_resolve_link_by_name_title_and_alias(index: PostIndex) -> None:
    assert index.resolve_link("rust-lifetimes") == "posts/rust-lifetimes.md"
    assert index.resolve_link("Rust 借用与引用") == "posts/rust-borrowing.md"
    assert index.resolve_link("rust smart pointers") == "posts/rust-smart-pointers.md"
    assert index.resolve_link("借用检查器") == "posts/rust-borrowing.md"
    assert index.resolve_link("notes/weekly-review") == "posts/notes/weekly-review.md"
    assert index.resolve_link("sqlite-fts5.md") == "posts/sqlite-fts5.md"
    assert index.resolve_link("Unwritten Ideas") is None


def test_build_context_gives_titles_paths_and_snippets(index: PostIndex) -> None:
    context = index.build_context("Rust 所有权", k=3)
    assert 1 <= len(context) <= 3
    assert context[0].path == "posts/rust-borrowing.md"
    assert all(hit.title and hit.snippet for hit in context)


def test_refresh_in_threads(index: PostIndex) -> None:
    errors: list[BaseException] = []

    def work() -> None:
        try:
            index.refresh()
            index.search("rust", 3)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_corrupt_database_is_rebuilt(blog: Path, tmp_path: Path) -> None:
    db = tmp_path / "posts.sqlite3"
    db.write_bytes(b"this is not a database" * 100)
    ix = PostIndex(db, blog)
    assert len(ix.refresh().added) == POST_COUNT
    ix.close()
    assert (tmp_path / "posts.sqlite3.corrupt").exists()


def test_wikilink_forms() -> None:
    text = (
        "[[Note]] [[Note|shown]] [[Other#Heading]] [[Third#Part|text]] ![[image.png]] "
        "[[#Local]] [[Block^abc]] | [[Table\\|cell]] |\n"
        "```\n[[in code]]\n```\n`[[inline]]`\n"
    )
    links = parse_wikilinks(text)
    assert [link.target for link in links] == [
        "Note",
        "Note",
        "Other",
        "Third",
        "image.png",
        "",
        "Block",
        "Table",
    ]
    assert links[1].alias == "shown" and links[2].heading == "Heading"
    assert links[3].heading == "Part" and links[3].alias == "text"
    assert links[4].embed and links[6].block == "abc" and links[7].alias == "cell"
    assert wikilink_targets(text) == ["Note", "Other", "Third", "image.png", "Block", "Table"]


def test_a_wikilink_in_a_list_items_fence_is_code() -> None:
    """A fence four spaces into a list item is the item's code block: its ``[[not-a-link]]``
    was a link of the note's."""
    text = (
        "See [[real]].\n\n1. Example:\n\n    ```markdown\n    [[not-a-link]]\n    ```\n\n"
        "[[after]]\n"
    )
    assert wikilink_targets(text) == ["real", "after"]


def test_dump_post_keeps_fields_and_order() -> None:
    metadata = {"title": "标题: with colon", "date": "2024-01-01", "custom": {"a": [1, 2]}}
    text = dump_post(metadata, "# Body\n\ntext")
    assert text.index("title") < text.index("date") < text.index("custom")
    parsed = frontmatter.loads(text)
    assert parsed.metadata == metadata
    assert split_post(text)[1] == "# Body\n\ntext"


def test_word_count_counts_chinese_characters() -> None:
    assert word_count("Rust 的所有权") == 1 + 4
    assert word_count("Hello, world! It's fine.") == 4


def test_an_index_built_for_another_blog_is_emptied(tmp_path: Path) -> None:
    """Two blogs on one state folder: the second found the first one's titles in the index
    until its next refresh (a request named a post of the other blog)."""
    from tests.blog import copy_fixture

    db = tmp_path / "state" / "posts.sqlite3"
    blog = copy_blog(tmp_path / "a" / "blog")
    first = PostIndex(db, blog)
    first.refresh()
    assert len(first) == POST_COUNT
    first.close()
    hugo = copy_fixture("hugo", tmp_path / "b" / "hugo")
    other = PostIndex(db, hugo, "content")
    assert len(other) == 0  # nothing of the other blog's
    other.refresh()
    assert {m.path for m in other.all_posts()} >= {"content/posts/first-post.md"}
    other.close()
    again = PostIndex(db, hugo, "content")  # the same blog: kept
    assert len(again) == len({m.path for m in again.all_posts()}) > 0
    again.close()


def test_a_posts_folder_that_is_not_there_removes_nothing(blog: Path, tmp_path: Path) -> None:
    """``skillrt index --posts-dir nope`` (a typo) in a blog of 14 posts reported "14
    removed": every session until the next index answered from an empty index. Another
    folder that is there is the posts folder asked for: the index follows it, and back."""
    db = tmp_path / "state" / "posts.sqlite3"
    PostIndex(db, blog).refresh()
    for missing in ("nope", "posts/nope", "../outside"):
        typo = PostIndex(db, blog, missing)
        report = typo.refresh()
        assert (report.added, report.updated, report.removed) == ([], [], [])
        assert len(typo) == POST_COUNT
        assert typo.search("所有权", 1)[0].path == "posts/rust-borrowing.md"
        typo.close()
    (blog / "notes").mkdir()
    (blog / "notes" / "only.md").write_text("---\ntitle: Only note\n---\nA note.\n")
    other = PostIndex(db, blog, "notes")
    report = other.refresh()
    assert report.added == ["notes/only.md"] and len(report.removed) == POST_COUNT
    assert [m.path for m in other.all_posts()] == ["notes/only.md"]
    other.close()
    back = PostIndex(db, blog)
    report = back.refresh()
    assert len(report.added) == POST_COUNT and report.removed == ["notes/only.md"]
    back.close()


def test_a_refresh_reads_only_the_files_whose_stat_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each refresh read and hashed every post: on a vault of 3,000 notes that was most of
    a session's steady state. A file whose size, times and inode are those it was read with
    is not read again; one changed within ``RACY_NS`` of that reading is (two writes in one
    timestamp tick at the same size look alike), and no rewrite is missed."""
    import hashlib
    import os
    import time
    from types import SimpleNamespace

    import skillrt.blog.posts as posts_module

    monkeypatch.setattr(posts_module, "RACY_NS", 300_000_000)
    hashed: list[bytes] = []

    def sha256(data: bytes) -> object:
        hashed.append(data)
        return hashlib.sha256(data)

    monkeypatch.setattr(posts_module, "hashlib", SimpleNamespace(sha256=sha256))
    blog = copy_blog(tmp_path / "blog", broken=True)
    ix = PostIndex(tmp_path / "posts.sqlite3", blog)
    assert len(ix.refresh().added) == POST_COUNT
    time.sleep(0.4)
    ix.refresh()  # read again: they were written just before the first reading
    hashed.clear()
    again = ix.refresh()
    assert hashed == [] and again.unchanged == POST_COUNT
    assert [path for path, _ in again.errors] == ["posts/broken-frontmatter.md"]
    # Rewritten at the same size, its modification time put back: its ctime says so.
    post = blog / "posts" / "git-workflow.md"
    before = post.stat()
    text = post.read_text(encoding="utf-8")
    post.write_text(text.replace("Git", "Hgg", 1), encoding="utf-8")
    os.utime(post, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert post.stat().st_size == before.st_size
    report = ix.refresh()
    assert report.updated == ["posts/git-workflow.md"] and len(hashed) == 1
    assert ix.search("Hgg", 1)[0].path == "posts/git-workflow.md"
    # Written again right after that reading (within RACY_NS): read again, and caught.
    post.write_text(text.replace("Git", "Hhh", 1), encoding="utf-8")
    assert ix.refresh().updated == ["posts/git-workflow.md"]
    ix.close()


def test_symlinks_out_of_the_blog_stay_out_of_the_index(blog: Path, tmp_path: Path) -> None:
    """The walk resolves only symlinks: a file or folder linked from outside the blog is not
    indexed, nor hidden folders, node_modules or section pages; a symlink to a post of the
    blog is."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("---\ntitle: Secret\n---\nzqxvsecret\n")
    posts = blog / "posts"
    (posts / "out.md").symlink_to(outside / "secret.md")
    (posts / "outdir").symlink_to(outside, target_is_directory=True)
    (posts / "dangling.md").symlink_to(outside / "not-yet.md")
    (posts / "loop.md").symlink_to(posts / "loop.md")
    (posts / "inside.md").symlink_to(posts / "git-workflow.md")
    for hidden in (".obsidian/a.md", "node_modules/pkg/b.md", "sub/_index.md"):
        (posts / hidden).parent.mkdir(parents=True, exist_ok=True)
        (posts / hidden).write_text("---\ntitle: Not a post\n---\nzqxvsecret\n")
    ix = PostIndex(tmp_path / "posts.sqlite3", blog)
    report = ix.refresh()
    assert len(report.added) == POST_COUNT + 1 and "posts/inside.md" in report.added
    assert ix.search("zqxvsecret", 5) == []
    ix.close()


def test_the_words_that_say_what_kind_of_question_are_no_search_terms() -> None:
    # "did I ever mention Lisbon on the blog?" searched for "ever" and "mention" too, and the
    # posts that happen to say "ever" were given to the model with the one on Lisbon.
    assert query_terms("did I ever mention Lisbon on the blog?").all == ("lisbon",)
    assert query_terms("have I talked about tmux anywhere?").all == ("tmux",)
    assert query_terms("have I ever written about rust macros?").all == ("rust", "macro")
    assert query_terms("which posts cover docker").all == ("docker",)
    assert query_terms("我写过里斯本吗").all == ("里斯本",)
    assert query_terms("我提到过 tmux 吗").all == ("tmux",)
    # A word that merely begins like one of them stays: "coverage", "evergreen".
    assert query_terms("test coverage of evergreen posts").all == ("test", "coverage", "evergreen")
