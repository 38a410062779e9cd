"""UpdateGraph driven as an author would: posts renamed and deleted between updates, and
extractions a small model gets wrong (names spelt two ways, with markup, a post's path)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from skillrt._state.embedded.checkpoints import CheckpointStore
from skillrt.blog.graph import EntityGraph
from skillrt.skills.writing import update_graph as update_graph_module
from skillrt.testing import FunctionModel
from tests.blog import copy_blog
from tests.writing_support import EXTRACTION, writing_runtime


async def test_a_deleted_post_is_counted_in_the_links_removed(tmp_path: Path) -> None:
    """Deleting git-workflow.md on disk and updating the graph said "0 links removed": the
    refresh inside the scan had dropped its links and its tags, and the second sync found
    nothing left to count."""
    blog = copy_blog(tmp_path / "blog")
    rt = writing_runtime(blog, FunctionModel(lambda m, o: EXTRACTION))
    await rt.initialize()
    try:
        await rt.run_skill("UpdateGraph", {})
        graph = rt.memory.graph
        outgoing = [
            link
            for link in graph.export_json()["links"]
            if link["source"] == "posts/git-workflow.md"
        ]
        assert outgoing
        (blog / "posts" / "git-workflow.md").unlink()
        msg = await rt.run_skill("UpdateGraph", {})
        assert "posts/git-workflow.md" not in graph.posts()
        assert msg.data["links_removed"] >= len(outgoing), msg.content
        assert f"links added, {msg.data['links_removed']} removed" in msg.content
        # The posts linking to it now link to a note not written yet, and that is said too.
        assert graph.entity("git-workflow") == {
            "name": "git-workflow",
            "type": "note",
            "description": "",
        }
        assert msg.data["links_added"] >= 2 and msg.data["entities_added"] >= 1
        again = await rt.run_skill("UpdateGraph", {})
        assert again.data["links_removed"] == 0 and again.data["links_added"] == 0
    finally:
        await rt.close()


def _extraction(entities: list[dict[str, object]]) -> FunctionModel:
    return FunctionModel(lambda m, o: {"entities": entities})


async def test_an_entity_named_by_a_post_path_does_not_hide_the_post(tmp_path: Path) -> None:
    """A model named "posts/rust-borrowing.md" as an entity of every post: related() on that
    post then listed the fourteen posts "mentioning" it, not the posts linked to it."""
    blog = copy_blog(tmp_path / "blog")
    model = _extraction([{"name": "posts/rust-borrowing.md", "type": "file"}])
    rt = writing_runtime(blog, model)
    await rt.initialize()
    try:
        await rt.run_skill("UpdateGraph", {})
        related = rt.memory.graph.related("posts/rust-borrowing.md")
        posts = {r.name: r.kinds for r in related if r.node == "post"}
        assert posts["posts/rust-lifetimes.md"] == ("wikilink",)
        assert "posts/docker-basics.md" not in posts
        assert "rust" in {r.name for r in related if r.node == "entity"}
    finally:
        await rt.close()


async def test_names_with_markup_or_two_spellings_are_one_entity(tmp_path: Path) -> None:
    """ "[[SQLite]]", "**SQLite**" and "`SQLite`" were three nodes beside "SQLite"; "Rust  Lang"
    and "rust lang" passed the extraction's de-duplication, the second overwriting the first."""
    blog = copy_blog(tmp_path / "blog")
    model = _extraction(
        [
            {"name": "[[SQLite|the database]]", "type": "database", "mentions": ["a"]},
            {"name": "**SQLite**", "type": "database"},
            {"name": "`tokio`", "type": "library"},
            {"name": "Rust  Lang", "type": "language", "mentions": ["可变引用"]},
            {"name": "rust lang", "type": "language", "mentions": ["不可变引用"]},
            {"name": "《所有权》", "type": "概念"},
        ]
    )
    rt = writing_runtime(blog, model)
    await rt.initialize()
    try:
        msg = await rt.run_skill("UpdateGraph", {"path": "posts/rust-borrowing.md"})
        assert msg.data["posts"][0]["entities"] == [
            "[[SQLite|the database]]",
            "`tokio`",
            "Rust  Lang",
            "《所有权》",
        ]
        graph = rt.memory.graph
        names = {e["name"] for e in graph.entities()}
        assert {"SQLite", "tokio", "Rust Lang"} <= names
        assert not any("[" in n or "*" in n or "`" in n or "《" in n for n in names)
        mentions = {
            link["target"]: link["evidence"]
            for link in graph.export_json()["links"]
            if link["source"] == "posts/rust-borrowing.md" and link["kind"] == "mention"
        }
        assert mentions["rust lang"] == ["可变引用"]
        # 所有权 is the post's tag too: one node, a tag and a mention.
        assert {"tag", "mention"} <= set(
            next(r.kinds for r in graph.related("posts/rust-borrowing.md") if r.name == "所有权")
        )
    finally:
        await rt.close()


async def test_a_nameless_entity_does_not_lose_the_others(tmp_path: Path) -> None:
    """{"name": ""} or "type": null on one entity failed the whole extraction: the post was
    skipped "did not fit the schema" and Rust, found beside it, was lost."""
    blog = copy_blog(tmp_path / "blog")
    model = _extraction(
        [
            {"name": "", "type": "x"},
            {"name": "   "},
            {"name": None},
            {"name": "Rust", "type": None, "description": None, "mentions": None},
            {"name": "Tokio", "type": "library"},
        ]
    )
    rt = writing_runtime(blog, model)
    await rt.initialize()
    try:
        msg = await rt.run_skill("UpdateGraph", {"path": "posts/rust-borrowing.md"})
        assert msg.data["errors"] == [], msg.content
        assert msg.data["posts"][0]["entities"] == ["Rust", "Tokio"]
        assert rt.memory.graph.entity("Tokio") == {
            "name": "Tokio",
            "type": "library",
            "description": "",
        }
        assert rt.memory.graph.post_state("posts/rust-borrowing.md") is not None
        again = await rt.run_skill("UpdateGraph", {"path": "posts/rust-borrowing.md"})
        assert again.data["skipped"] == 1  # extracted: not asked again
    finally:
        await rt.close()


async def test_an_answer_that_is_no_extraction_is_still_refused(tmp_path: Path) -> None:
    blog = copy_blog(tmp_path / "blog")
    rt = writing_runtime(blog, FunctionModel(lambda m, o: {"entities": ["Rust", 3]}))
    await rt.initialize()
    try:
        msg = await rt.run_skill("UpdateGraph", {"path": "posts/rust-borrowing.md"})
        assert msg.data["errors"] and "schema" in msg.data["errors"][0]["error"]
        again = await rt.run_skill("UpdateGraph", {"path": "posts/rust-borrowing.md"})
        assert again.data["skipped"] == 0  # not extracted: asked again next time
    finally:
        await rt.close()


@pytest.mark.parametrize(
    "named", ["rust-borrowing", "posts/rust-borrowing", "Rust 借用与引用", "rust-borrowing.md"]
)
async def test_a_post_named_as_a_wikilink_names_it(tmp_path: Path, named: str) -> None:
    """ "rust-borrowing" (a vault's note name) or the post's title was "There is no post
    `rust-borrowing` in the blog's index"; a name that is no post still is."""
    blog = copy_blog(tmp_path / "blog")
    rt = writing_runtime(blog, FunctionModel(lambda m, o: EXTRACTION))
    await rt.initialize()
    try:
        msg = await rt.run_skill("UpdateGraph", {"path": named})
        assert msg.state == "COMPLETED", msg.content
        assert [p["path"] for p in msg.data["posts"]] == ["posts/rust-borrowing.md"]
        missing = await rt.run_skill("UpdateGraph", {"path": "Unwritten Ideas"})
        assert missing.data.get("error") == "not_found"
    finally:
        await rt.close()


async def test_only_quotes_the_post_has_are_kept_as_evidence(tmp_path: Path) -> None:
    """An extraction quoting another post ("docker run -d" for the Rust borrowing post) kept
    the quote as this post's evidence: a mention the post does not have is left out."""
    blog = copy_blog(tmp_path / "blog")
    quotes = ["“同一时间，要么只有一个可变引用”", "docker run -d", "  要么有任意多个\n不可变引用…"]
    model = _extraction([{"name": "Rust", "type": "language", "mentions": quotes}])
    rt = writing_runtime(blog, model)
    await rt.initialize()
    try:
        await rt.run_skill("UpdateGraph", {"path": "posts/rust-borrowing.md"})
        evidence = [
            link["evidence"]
            for link in rt.memory.graph.export_json()["links"]
            if link["source"] == "posts/rust-borrowing.md" and link["kind"] == "mention"
        ]
        assert evidence == [[quotes[0], "要么有任意多个 不可变引用…"]]
    finally:
        await rt.close()


async def test_an_extraction_cannot_make_a_tag_or_an_unwritten_note(tmp_path: Path) -> None:
    """A model typing an entity "note" made it look like a note not written yet (and, the
    graph's own type, it was never updated by a later extraction)."""
    blog = copy_blog(tmp_path / "blog")
    model = _extraction([{"name": "Borrow checker", "type": "Note"}, {"name": "x", "type": "tag"}])
    rt = writing_runtime(blog, model)
    await rt.initialize()
    try:
        await rt.run_skill("UpdateGraph", {"path": "posts/rust-borrowing.md"})
        graph = rt.memory.graph
        assert graph.entity("Borrow checker") == {
            "name": "Borrow checker",
            "type": "concept",
            "description": "",
        }
        assert {e["name"] for e in graph.entities() if e["type"] == "note"} == {"Unwritten Ideas"}
        assert graph.entity("x") == {"name": "x", "type": "concept", "description": ""}
    finally:
        await rt.close()


async def test_an_extracted_hash_tag_is_the_tag(tmp_path: Path) -> None:
    """A vault's notes have their ``#tags`` in the text, and a model named one: "#所有权"
    was a concept beside the post's tag 所有权. "C#" and "#1" are no tags."""
    blog = copy_blog(tmp_path / "blog")
    model = _extraction(
        [
            {"name": "#所有权", "type": "tag"},
            {"name": "C#", "type": "language"},
            {"name": "#1", "type": "rank"},
        ]
    )
    rt = writing_runtime(blog, model)
    await rt.initialize()
    try:
        await rt.run_skill("UpdateGraph", {"path": "posts/rust-borrowing.md"})
        graph = rt.memory.graph
        names = {e["name"] for e in graph.entities()}
        assert "#所有权" not in names and {"C#", "#1"} <= names
        kinds = next(
            r.kinds for r in graph.related("posts/rust-borrowing.md") if r.name == "所有权"
        )
        assert {"tag", "mention"} <= set(kinds)
    finally:
        await rt.close()


@pytest.mark.parametrize(
    ("posts", "seconds", "expected"),
    [
        (16, 60.0, lambda n: [k // 16 for k in range(n)]),  # no step journalled within a batch
        (4, 60.0, lambda n: [k // 4 for k in range(n)]),  # bounded by count
        (16, 0.0, lambda n: list(range(n))),  # bounded by time: each post after the first
    ],
)
async def test_posts_are_extracted_in_batches_journalled_whole(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    posts: int,
    seconds: float,
    expected: Callable[[int], list[int]],
) -> None:
    """A durable step per post waited for the journal's fsync at every post: 3 ms a post, most
    of a 3,000-note vault's 17 to 23 s when the model answers at once. Now the posts go in
    batches of ``BATCH_POSTS`` posts or ``BATCH_SECONDS``: the journal holds a batch whole,
    and the progress still moves post by post."""
    monkeypatch.setattr(update_graph_module, "BATCH_POSTS", posts)
    monkeypatch.setattr(update_graph_module, "BATCH_SECONDS", seconds)
    blog = copy_blog(tmp_path / "blog")
    store = CheckpointStore(tmp_path / "state" / "checkpoints")
    journalled: list[int] = []  # the extraction steps journalled at each model call

    def extract(messages: object, options: object) -> object:
        task_id = rt.current_task_id
        assert task_id is not None
        record = store.get(task_id)
        steps = record.steps if record is not None else {}
        journalled.append(sum(name.startswith("extract") for name in steps))
        return EXTRACTION

    rt = writing_runtime(blog, FunctionModel(extract), checkpoints=True)
    progress: list[str | None] = []
    rt.on("task:progress", lambda e: progress.append(e.data.get("detail")))
    await rt.initialize()
    commits: list[str] = []  # the graph's writes: one transaction a batch too
    rt.memory.graph._db.set_trace_callback(
        lambda sql: commits.append(sql) if sql.strip().upper() == "COMMIT" else None
    )
    try:
        msg = await rt.run_skill("UpdateGraph", {})
    finally:
        await rt.close()
        store.close()
    done = [p["path"] for p in msg.data["posts"]]
    assert msg.state == "COMPLETED" and len(done) == len(journalled) > 8, msg.content
    assert journalled == expected(len(done))
    assert len(commits) <= 2 + journalled[-1], commits  # the scan's sync, then each batch
    assert [detail for detail in progress if detail in done] == done
    graph = EntityGraph(tmp_path / "state" / "index" / "graph.sqlite3")
    try:
        assert all(p["extracted"] for p in graph.export_json()["posts"])
    finally:
        graph.close()


async def test_an_update_with_nothing_changed_reads_the_graph_in_one_query(
    tmp_path: Path,
) -> None:
    """The scan asked for each post's state apart (and the sync before it too): 3,000 single
    queries twice on a 3,000-note vault where nothing changed."""
    blog = copy_blog(tmp_path / "blog")
    rt = writing_runtime(blog, FunctionModel(lambda m, o: EXTRACTION))
    await rt.initialize()
    try:
        await rt.run_skill("UpdateGraph", {})
        statements: list[str] = []
        rt.memory.graph._db.set_trace_callback(statements.append)
        again = await rt.run_skill("UpdateGraph", {})
        rt.memory.graph._db.set_trace_callback(None)
    finally:
        await rt.close()
    assert again.data["posts"] == [] and again.data["skipped"] > 2, again.content
    assert [sql for sql in statements if "FROM posts WHERE path" in sql] == []
