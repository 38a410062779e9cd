"""``BlogMemory``: the blog's post index and entity graph, opened on first use.

The runtime builds one per content root (``BlogMemory(config.root, config.state_path,
config.posts_dir)``) and hands it to skills as ``ctx.memory``. Constructing it does no I/O;
the databases (``<state_dir>/index/posts.sqlite3`` and ``graph.sqlite3``) are opened by the
first use of ``.posts`` or ``.graph``.

``refresh()`` re-indexes changed posts and keeps the graph's structural links (wikilinks and
tags) in step with the index; LLM extraction is the ``UpdateGraph`` skill's job.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from skillrt.blog.conventions import post_stem
from skillrt.blog.files import MAX_READ_BYTES
from skillrt.blog.graph import EntityGraph, ExtractedEntity, GraphDelta
from skillrt.blog.posts import IndexReport, PostIndex, PostMeta
from skillrt.blog.wikilinks import normalize_target

__all__ = ["BlogMemory"]


def _names(meta: PostMeta, posts_dir: str) -> set[str]:
    """What a ``[[wikilink]]`` may name a post by, as keys (``normalize_target``): its path
    without the suffix (also from the posts folder), file name, title and aliases
    (``PostIndex.resolve_link`` ranks them)."""
    path = meta.path.rsplit(".", 1)[0]
    names = [path, path.removeprefix(posts_dir.strip("/") + "/"), post_stem(meta.path)]
    return {normalize_target(name) for name in (*names, meta.title, *meta.aliases)} - {""}


class BlogMemory:
    """The post index and the entity graph of one blog."""

    def __init__(
        self,
        content_root: Path,
        state_dir: Path,
        posts_dir: str = "posts",
        *,
        max_post_bytes: int = MAX_READ_BYTES,
        drafts_dir: str | None = None,
        inline_tags: bool = False,
    ) -> None:
        self.max_post_bytes = max_post_bytes
        self.inline_tags = inline_tags  # an Obsidian vault: "#tag" in a note is a tag
        self.drafts_dir = drafts_dir  # Jekyll's _drafts/: indexed, every post in it a draft
        self.content_root = Path(content_root)
        self.state_dir = Path(state_dir)
        self.posts_dir = posts_dir
        self._lock = threading.Lock()
        self._posts: PostIndex | None = None
        self._graph: EntityGraph | None = None

    @property
    def index_dir(self) -> Path:
        return self.state_dir / "index"

    @property
    def posts(self) -> PostIndex:
        with self._lock:
            if self._posts is None:
                self._posts = PostIndex(
                    self.index_dir / "posts.sqlite3",
                    self.content_root,
                    self.posts_dir,
                    max_bytes=self.max_post_bytes,
                    drafts_dir=self.drafts_dir,
                    inline_tags=self.inline_tags,
                )
            return self._posts

    @property
    def graph(self) -> EntityGraph:
        with self._lock:
            if self._graph is None:
                self._graph = EntityGraph(self.index_dir / "graph.sqlite3", self._refill_graph)
            return self._graph

    def _refill_graph(self) -> None:
        """A graph made again after damage, filled with the posts' links and tags as indexed
        (called by the graph, under its lock)."""
        if self._graph is not None:
            self.sync_graph()

    def refresh(self) -> IndexReport:
        """Re-index changed posts and bring the graph's wikilinks and tags up to date."""
        return self.refresh_graph()[0]

    def refresh_graph(self) -> tuple[IndexReport, GraphDelta]:
        """``refresh``, with what it changed in the graph: UpdateGraph refreshed and then synced
        again, so a post deleted or renamed on disk was reported as "0 links removed" (the
        refresh had dropped them, and said so to no one)."""
        report = self.posts.refresh()
        return report, self.sync_graph(changed=report.updated)

    def sync_graph(self, *, relink: bool = False, changed: Iterable[str] = ()) -> GraphDelta:
        """Update the graph for posts whose hash it has not seen, and drop removed posts.

        ``relink`` re-resolves every post's wikilinks; unchanged links are not rewritten.
        Else the posts added, removed or ``changed`` (edited: their title or aliases may be
        new; also found here, from what the graph holds, ``_unsynced``) re-resolve only the
        links that may name a post otherwise now (``_stale``): a note added to or deleted from
        a vault of 3,000 re-resolved the links of all 3,000 (1.5 to 3.4 s).
        """
        with self.graph.batch():
            return self._sync(relink, changed)

    def _sync(self, relink: bool, changed: Iterable[str]) -> GraphDelta:
        delta = GraphDelta()
        graph = self.graph
        indexed = {meta.path: meta for meta in self.posts.all_posts()}
        gone, added, edited = self._unsynced(indexed)
        stale = set() if relink else self._stale([*changed, *edited, *added, *gone], indexed)
        for path in sorted(gone):
            delta += graph.remove_post(path)
        resolved: dict[str, str | None] = {}
        for path, meta in indexed.items():
            if relink or path in stale or path in added or path in edited:
                delta += self._update(meta, None, resolved)
        return delta

    def _unsynced(self, indexed: dict[str, PostMeta]) -> tuple[set[str], set[str], set[str]]:
        """The posts the graph holds that the index has not, those the index has that the
        graph has not, and those whose hash the graph has not seen. The index's own report
        is not enough: a skill that refreshed the index first (picking the post a request
        names) took the report of a note deleted by hand, and the notes linking to it kept
        links to a post no longer there."""
        states = self.graph.post_states()  # one query, not one a post
        known = set(states)
        edited = {path for path in known & set(indexed) if states[path][0] != indexed[path].hash}
        return known - set(indexed), set(indexed) - known, edited

    def update_post_graph(
        self, path: str, extracted: Sequence[ExtractedEntity] | None = None
    ) -> GraphDelta:
        """Update one post's node: its wikilinks, tags and (when given) an LLM extraction."""
        meta = self.posts.get(path)
        if meta is None:
            return self.graph.remove_post(self.posts.relpath(path))
        state = self.graph.post_state(meta.path)
        delta = self._update(meta, extracted)
        if state is None or state[0] != meta.hash:
            indexed = {post.path: post for post in self.posts.all_posts()}
            delta += self._relink(self._stale([meta.path], indexed) - {meta.path})
        return delta

    def _stale(self, edited: Sequence[str], indexed: dict[str, PostMeta]) -> set[str]:
        """The posts whose wikilinks may resolve otherwise now that the posts ``edited`` were
        (``EntityGraph.relinked_by``), with those linking to a post that shares a name with
        one of them (a title, an alias, a file name): the link goes to the post it names first,
        and an edited post may now come first. A note retitled "待写的笔记", the title of
        another note, took the links naming it (by path, in a fresh build), and the notes
        linking to it still linked to the other one. A post added or removed counts as
        edited: the links naming it were unwritten notes, or named it."""
        if not edited:
            return set()
        names = {
            name
            for path in edited
            if path in indexed
            for name in _names(indexed[path], self.posts_dir)
        }
        namesakes = [
            path
            for path, meta in indexed.items()
            if path not in edited and not names.isdisjoint(_names(meta, self.posts_dir))
        ]
        return self.graph.relinked_by([*edited, *namesakes], self._written)

    def _written(self, note: str) -> bool:
        """Whether a note the graph holds as not written yet (its key) now names a post."""
        return self.posts.resolve_link(note) is not None

    def _relink(self, paths: Iterable[str]) -> GraphDelta:
        """Re-resolve the wikilinks of these posts. A post rewritten and re-indexed by the
        caller (WriteArticle over an existing post) is seen by no later refresh: under a new
        title it kept the links of its old one."""
        delta = GraphDelta()
        resolved: dict[str, str | None] = {}
        for path in sorted(paths):
            if (meta := self.posts.get(path)) is not None:
                delta += self._update(meta, None, resolved)
        return delta

    def _update(
        self,
        meta: PostMeta,
        extracted: Sequence[ExtractedEntity] | None,
        resolved_links: dict[str, str | None] | None = None,
    ) -> GraphDelta:
        """Write one post's links, tags and extraction. ``resolved_links``: the links already
        resolved in this sync (a vault's notes name the same notes: re-resolving all 3,000
        notes of a vault asked the index 18,000 times for 3,000 names)."""
        targets: list[str] = []
        post_paths: set[str] = set()
        known = {} if resolved_links is None else resolved_links
        for link in meta.wikilinks:
            if link not in known:
                known[link] = self.posts.resolve_link(link)
            resolved = known[link]
            if resolved is not None:
                post_paths.add(resolved)
            target = resolved or link
            if target != meta.path and target not in targets:
                targets.append(target)
        return self.graph.update_post(
            meta.path, meta.hash, targets, meta.tags, extracted, posts=post_paths
        )

    def resolve_link(self, target: str) -> str | None:
        """The path of the post a ``[[target]]`` names, or None."""
        return self.posts.resolve_link(target)

    def close(self) -> None:
        with self._lock:
            if self._posts is not None:
                self._posts.close()
                self._posts = None
            if self._graph is not None:
                self._graph.close()
                self._graph = None
