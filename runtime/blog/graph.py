"""``EntityGraph``: what the blog's posts link to and talk about, in SQLite.

Nodes are posts (named by their path) and entities (a name, a type, a description). Edges go
from a post to a post or an entity, with a kind:

- ``wikilink``: ``[[Note]]`` in the body or the ``wikiLinks`` field; to a post when the link
  resolves (the caller resolves it), else to an entity of type ``note`` (a note not written
  yet, as Obsidian shows it), or ``attachment`` for a file (``![[diagram.png]]``, a PDF);
- ``tag``: a frontmatter tag, to an entity of type ``tag``;
- ``mention``: an entity an LLM extraction found in the post (its quotes kept as evidence).

Entities are keyed by their folded name, so the tag ``rust`` and the language ``Rust`` are one
node. An entity no post links to any more is removed. Updates are incremental per post:
``update_post`` computes the difference between the post's old and new links and writes only
that, and skips a post whose content hash and extraction are unchanged. Values are JSON.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from skillrt.blog.sqlite import SQLiteCache, rebuilt_when_damaged

__all__ = [
    "EntityGraph",
    "ExtractedEntity",
    "Extraction",
    "GraphDelta",
    "GraphLink",
    "Related",
    "entity_key",
    "entity_name",
]

SCHEMA_VERSION = 1
MAX_NAME_CHARS = 120
MAX_DESCRIPTION_CHARS = 500
MAX_MENTIONS = 5

_TABLES = ("entities", "posts", "links")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS entities (
    key TEXT PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS posts (
    path TEXT PRIMARY KEY, hash TEXT NOT NULL, extracted INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS links (
    source TEXT NOT NULL, target TEXT NOT NULL, target_type TEXT NOT NULL,
    kind TEXT NOT NULL, evidence TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (source, target, target_type, kind));
CREATE INDEX IF NOT EXISTS links_target ON links(target, target_type);
"""

LinkKind = Literal["wikilink", "tag", "mention"]
TargetType = Literal["post", "entity"]


class ExtractedEntity(BaseModel):
    """One entity an LLM found in a post (also the structured-output schema for it).

    No length limits in the schema: a grammar-constrained local model expands every bound
    into its grammar (which llama.cpp refuses past a size); the graph clips names (120
    characters), types (40), descriptions (500) and mentions (5 of 200) when storing them.
    """

    name: str = Field(min_length=1)
    type: str = "concept"
    description: str = ""
    mentions: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _defaults_for_nulls(cls, data: Any) -> Any:
        """A ``null`` type, description or mentions is the default: ``"type": null`` on one
        entity refused the whole extraction."""
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if value is not None}
        return data


class Extraction(BaseModel):
    """The structured answer of an entity-extraction call."""

    entities: list[ExtractedEntity] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _without_nameless(cls, data: Any) -> Any:
        """Entities with no name left out, the others kept: one ``{"name": ""}`` among fifteen
        good entities failed the schema, and UpdateGraph skipped the post."""
        if isinstance(data, dict) and isinstance(data.get("entities"), list):
            named = [item for item in data["entities"] if not _nameless(item)]
            return {**data, "entities": named}
        return data


def _nameless(item: object) -> bool:
    """An entity (a JSON object) whose name is missing, null or blank."""
    if not isinstance(item, dict):
        return False  # not an entity at all: the schema refuses it
    name = item.get("name")
    return name is None or (isinstance(name, str) and not name.strip())


@dataclass(frozen=True, slots=True)
class GraphLink:
    source: str
    target: str
    target_type: TargetType
    kind: LinkKind

    def to_dict(self) -> dict[str, str]:
        return {
            "source": self.source,
            "target": self.target,
            "target_type": self.target_type,
            "kind": self.kind,
        }


@dataclass(slots=True)
class GraphDelta:
    """What an update changed: entity names and links added and removed."""

    entities_added: list[str] = field(default_factory=list)
    entities_removed: list[str] = field(default_factory=list)
    links_added: list[GraphLink] = field(default_factory=list)
    links_removed: list[GraphLink] = field(default_factory=list)

    def __iadd__(self, other: GraphDelta) -> GraphDelta:
        self.entities_added += other.entities_added
        self.entities_removed += other.entities_removed
        self.links_added += other.links_added
        self.links_removed += other.links_removed
        return self

    @property
    def empty(self) -> bool:
        return not (
            self.entities_added or self.entities_removed or self.links_added or self.links_removed
        )

    def counts(self) -> dict[str, int]:
        return {
            "entities_added": len(self.entities_added),
            "entities_removed": len(self.entities_removed),
            "links_added": len(self.links_added),
            "links_removed": len(self.links_removed),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "entities_added": list(self.entities_added),
            "entities_removed": list(self.entities_removed),
            "links_added": [link.to_dict() for link in self.links_added],
            "links_removed": [link.to_dict() for link in self.links_removed],
        }


@dataclass(frozen=True, slots=True)
class Related:
    """A neighbour in the graph: a post or an entity, how it is linked, and how strongly."""

    name: str
    node: TargetType
    type: str
    kinds: tuple[str, ...]
    weight: int


def entity_key(name: str) -> str:
    return " ".join(name.split()).casefold()


# Marks a model wraps a name in, as the post's Markdown had it: the extraction "[[SQLite]]",
# "**Rust**" or "`tokio`" made a node apart from "SQLite", "Rust" and "tokio".
_WRAPPERS: tuple[tuple[str, str], ...] = (
    ("[[", "]]"),
    ("**", "**"),
    ("__", "__"),
    ("`", "`"),
    ("*", "*"),
    ('"', '"'),
    ("“", "”"),
    ("《", "》"),
    ("「", "」"),
)


def entity_name(name: str) -> str:
    """An extracted name as the entity it names: single spaces, without the Markdown marks
    wrapped around it (a ``[[note|alias]]`` is its note), and clipped."""
    name = " ".join(name.split())
    unwrapped = True
    while unwrapped:
        unwrapped = False
        for start, end in _WRAPPERS:
            if name.startswith(start) and name.endswith(end) and len(name) > len(start + end):
                name = name[len(start) : -len(end)].strip()
                if start == "[[":
                    name = name.replace("\\|", "|").partition("|")[0].partition("#")[0].strip()
                unwrapped = True
    return _untagged(name)[:MAX_NAME_CHARS]


def _untagged(name: str) -> str:
    """``#rust`` as the tag it writes, ``rust``: an extraction from a vault's note, which
    has its ``#tags`` in the text, made "#rust" a concept beside the tag ``rust``. Only a
    tag's form: one word, not a number (``#1`` is no tag); ``C#`` is not touched."""
    word = name[1:]
    tag = word and not word.startswith("#") and not word.isdigit()
    if name.startswith("#") and tag and not any(char.isspace() for char in word):
        return word
    return name


# The graph's own types: a post's tag, a note not written yet, a file a note links to.
_OWN_TYPES = ("tag", "note", "attachment")
# The files an Obsidian vault links to that are not notes (its "accepted file formats").
_ATTACHMENT_SUFFIXES = frozenset(
    (
        *(".png", ".jpg", ".jpeg", ".gif", ".bmp", ".svg", ".webp", ".avif", ".heic", ".tif"),
        *(".tiff", ".mp3", ".webm", ".wav", ".m4a", ".ogg", ".3gp", ".flac", ".mp4", ".ogv"),
        *(".mov", ".mkv", ".pdf", ".canvas", ".base", ".excalidraw", ".zip", ".csv"),
    )
)


def _linked_type(target: str) -> str:
    """What an unresolved wikilink names: an ``attachment`` (``![[diagram.png]]``, a PDF, a
    canvas), else a ``note`` not written yet. The hundred images a vault embeds were listed
    as notes not written yet."""
    return (
        "attachment" if PurePosixPath(target).suffix.casefold() in _ATTACHMENT_SUFFIXES else "note"
    )


def _clean(text: str, limit: int) -> str:
    return " ".join(text.split())[:limit]


def _extracted_type(type_: str) -> str:
    """The type of an extracted entity: ``tag``, ``note`` and ``attachment`` are the graph's
    own (a tag of a post, a note not written yet, a file), so a model's are ``concept``: an
    extraction typed "note" made an entity the export showed as an unwritten note, and kept
    it one."""
    type_ = _clean(type_, 40)
    return "concept" if not type_ or type_.casefold() in _OWN_TYPES else type_


@dataclass(frozen=True, slots=True)
class _Entity:
    key: str
    name: str
    type: str
    description: str


def _unmentioned(db: sqlite3.Connection, key: str) -> None:
    """An entity no post mentions any more is again what its links make it, a ``note`` (a
    wikilink to it) or a ``tag``, with no description: the extraction that typed the
    unwritten note "Tokio" a library was gone, and the note stayed a library."""
    kinds = {
        str(row[0])
        for row in db.execute(
            "SELECT DISTINCT kind FROM links WHERE target = ? AND target_type = 'entity'", (key,)
        )
    }
    if kinds and "mention" not in kinds:
        type_ = _linked_type(key) if "wikilink" in kinds else "tag"
        db.execute("UPDATE entities SET type = ?, description = '' WHERE key = ?", (type_, key))


class EntityGraph(SQLiteCache):
    """The graph in ``db_path``. Thread-safe behind one lock. Found damaged, it is moved aside
    and made again (see ``blog/sqlite.py``), filled by ``refill`` (the posts' links and tags);
    the model's extractions come back with the next UpdateGraph."""

    what = "entity graph"

    def __init__(self, db_path: Path, refill: Callable[[], object] | None = None) -> None:
        self._refill_from = refill
        self._refilling = False
        super().__init__(db_path, version=SCHEMA_VERSION, tables=_TABLES, schema=_SCHEMA)

    def _refill(self) -> None:
        """After damage: the posts' links and tags again, by ``refill`` (``BlogMemory`` syncs
        the graph with its index). The graph was left empty: a damaged graph.sqlite3 made
        ``related("rust")`` answer nothing, though 300 notes were tagged rust. The model's
        extractions are not in the index: the next UpdateGraph extracts every post again.
        (Once at a time: a graph damaged again while refilled is left to the call that finds
        it.)"""
        if self._refill_from is None or self._refilling:
            return
        self._refilling = True
        try:
            self._refill_from()
        finally:
            self._refilling = False

    # --- updates -------------------------------------------------------------------------

    @rebuilt_when_damaged
    def post_state(self, path: str) -> tuple[str, bool] | None:
        """``(content_hash, extracted)`` as last recorded for a post, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT hash, extracted FROM posts WHERE path = ?", (path,)
            ).fetchone()
        return None if row is None else (str(row[0]), bool(row[1]))

    @rebuilt_when_damaged
    def post_states(self) -> dict[str, tuple[str, bool]]:
        """Every post's ``post_state``, in one query: a refresh of a 3,000-note vault with
        nothing changed asked for them one post at a time, 0.1 s of its 0.134 s."""
        with self._lock:
            rows = self._db.execute("SELECT path, hash, extracted FROM posts").fetchall()
        return {str(path): (str(hash_), bool(extracted)) for path, hash_, extracted in rows}

    @rebuilt_when_damaged
    def update_post(
        self,
        path: str,
        content_hash: str,
        wikilinks: Iterable[str],
        tags: Iterable[str],
        extracted: Sequence[ExtractedEntity] | None = None,
        *,
        posts: Iterable[str] = (),
    ) -> GraphDelta:
        """Replace one post's links by these, writing only the difference.

        ``wikilinks`` are link targets: a target that is in ``posts`` (post paths, as the
        caller resolved them) links to that post, any other to a ``note`` entity.
        ``extracted`` is an LLM extraction of this version of the post; ``None`` keeps the
        previous extraction if the hash is unchanged and drops it if the post changed.
        """
        post_paths = set(posts)
        wanted: dict[tuple[str, TargetType, LinkKind], list[str]] = {}
        entities: dict[str, _Entity] = {}

        def want_entity(name: str, type_: str, description: str = "") -> str | None:
            name = _clean(name, MAX_NAME_CHARS)
            key = entity_key(name)
            if not key:
                return None
            known = entities.get(key)
            if known is None or (known.type in _OWN_TYPES and type_ not in _OWN_TYPES):
                entities[key] = _Entity(key, name, type_, _clean(description, 500))
            return key

        for target in wikilinks:
            target = target.strip()
            if target in post_paths:
                wanted[(target, "post", "wikilink")] = []
            elif (key := want_entity(target, _linked_type(target))) is not None:
                wanted[(key, "entity", "wikilink")] = []
        for tag in tags:
            if (key := want_entity(tag, "tag")) is not None:
                wanted[(key, "entity", "tag")] = []

        with self._tx() as db:
            state = db.execute(
                "SELECT hash, extracted FROM posts WHERE path = ?", (path,)
            ).fetchone()
            keep_mentions = extracted is None and state is not None and state[0] == content_hash
            if keep_mentions:
                for target, evidence in db.execute(
                    "SELECT target, evidence FROM links WHERE source = ? AND kind = 'mention'",
                    (path,),
                ):
                    wanted[(target, "entity", "mention")] = json.loads(evidence)
            for item in extracted or ():
                description = _clean(item.description, MAX_DESCRIPTION_CHARS)
                key = want_entity(entity_name(item.name), _extracted_type(item.type), description)
                if key is not None:
                    quotes = [_clean(m, 200) for m in item.mentions if m.strip()]
                    wanted[(key, "entity", "mention")] = quotes[:MAX_MENTIONS]
            extracted_flag = bool(state[1]) if keep_mentions and state else extracted is not None
            db.execute(
                "INSERT INTO posts (path, hash, extracted) VALUES (?, ?, ?)"
                " ON CONFLICT(path) DO UPDATE SET hash = excluded.hash,"
                " extracted = excluded.extracted",
                (path, content_hash, int(extracted_flag)),
            )
            return self._apply(db, path, wanted, entities)

    @rebuilt_when_damaged
    def remove_post(self, path: str) -> GraphDelta:
        """Drop a post's outgoing links (links to it from other posts stay: they exist)."""
        with self._tx() as db:
            db.execute("DELETE FROM posts WHERE path = ?", (path,))
            return self._apply(db, path, {}, {})

    def _apply(
        self,
        db: sqlite3.Connection,
        source: str,
        wanted: dict[tuple[str, TargetType, LinkKind], list[str]],
        entities: dict[str, _Entity],
    ) -> GraphDelta:
        delta = GraphDelta()
        current = {
            (row[0], row[1], row[2]): row[3]
            for row in db.execute(
                "SELECT target, target_type, kind, evidence FROM links WHERE source = ?",
                (source,),
            )
        }
        for key, entity in entities.items():
            row = db.execute("SELECT type, description FROM entities WHERE key = ?", (key,))
            found = row.fetchone()
            if found is None:
                db.execute(
                    "INSERT INTO entities (key, name, type, description) VALUES (?, ?, ?, ?)",
                    (key, entity.name, entity.type, entity.description),
                )
                delta.entities_added.append(entity.name)
            elif entity.type not in _OWN_TYPES:
                db.execute(
                    "UPDATE entities SET name = ?, type = ?, description = ? WHERE key = ?",
                    (entity.name, entity.type, entity.description or found[1], key),
                )
        for link in sorted(set(current) - set(wanted)):
            db.execute(
                "DELETE FROM links WHERE source = ? AND target = ? AND target_type = ?"
                " AND kind = ?",
                (source, *link),
            )
            delta.links_removed.append(GraphLink(source, *link))
        for link, evidence in sorted(wanted.items()):
            text = json.dumps(evidence, ensure_ascii=False)
            if link not in current:
                delta.links_added.append(GraphLink(source, *link))
            elif current[link] == text:
                continue
            db.execute(
                "INSERT OR REPLACE INTO links (source, target, target_type, kind, evidence)"
                " VALUES (?, ?, ?, ?, ?)",
                (source, *link, text),
            )
        mentioned = {link[0] for link in wanted if link[2] == "mention"}
        for target, _type, _kind in {link for link in current if link[2] == "mention"}:
            if target not in mentioned:
                _unmentioned(db, target)
        for target, _type, _kind in {link for link in current if link[1] == "entity"}:
            still = db.execute(
                "SELECT 1 FROM links WHERE target = ? AND target_type = 'entity' LIMIT 1",
                (target,),
            ).fetchone()
            if still is None:
                row = db.execute("SELECT name FROM entities WHERE key = ?", (target,)).fetchone()
                if row is not None:
                    db.execute("DELETE FROM entities WHERE key = ?", (target,))
                    delta.entities_removed.append(str(row[0]))
        return delta

    # --- queries -------------------------------------------------------------------------

    @rebuilt_when_damaged
    def entity(self, name: str) -> dict[str, str] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT name, type, description FROM entities WHERE key = ?", (entity_key(name),)
            ).fetchone()
        return None if row is None else {"name": row[0], "type": row[1], "description": row[2]}

    @rebuilt_when_damaged
    def entities(self) -> list[dict[str, str]]:
        """Every entity: ``key`` (what links target), name, type and description."""
        with self._lock:
            rows = self._db.execute(
                "SELECT key, name, type, description FROM entities ORDER BY key"
            ).fetchall()
        return [{"key": r[0], "name": r[1], "type": r[2], "description": r[3]} for r in rows]

    @rebuilt_when_damaged
    def related(self, entity: str, limit: int = 20) -> list[Related]:
        """The neighbours of an entity (by name) or a post (by path).

        For an entity: the posts linking to it, then the entities those posts also link to,
        ranked by the number of posts shared. For a post: the posts linking to it and those it
        links to, then its entities. Posts come first; within a group, the strongest first.
        """
        key = entity_key(entity)
        found: dict[tuple[TargetType, str], tuple[set[str], int]] = {}

        def add(node: TargetType, name: str, kind: str) -> None:
            kinds, weight = found.get((node, name), (set(), 0))
            kinds.add(kind)
            found[(node, name)] = (kinds, weight + 1)

        with self._lock:
            db = self._db
            # A post's path names the post, even when a model's extraction made an entity of
            # that name: related("posts/rust-borrowing.md") listed every post "mentioning" it.
            is_post = db.execute("SELECT 1 FROM posts WHERE path = ?", (entity,)).fetchone()
            is_entity = (
                not is_post
                and db.execute("SELECT 1 FROM entities WHERE key = ?", (key,)).fetchone()
            )
            target, target_type = (key, "entity") if is_entity else (entity, "post")
            incoming = db.execute(
                "SELECT source, kind FROM links WHERE target = ? AND target_type = ?",
                (target, target_type),
            ).fetchall()
            for source, kind in incoming:
                add("post", source, kind)
            sources = {src for src, _ in incoming} if is_entity else {entity}
            for source in sorted(sources):
                for other, other_type, kind in db.execute(
                    "SELECT target, target_type, kind FROM links WHERE source = ?", (source,)
                ):
                    same = (other, other_type) == (target, target_type)
                    if not same and (other_type == "entity" or not is_entity):
                        add(other_type, other, kind)
            types = dict(db.execute("SELECT key, type FROM entities").fetchall())
            names = dict(db.execute("SELECT key, name FROM entities").fetchall())
        out = [
            Related(
                names.get(name, name) if node == "entity" else name,
                node,
                types.get(name, "entity") if node == "entity" else "post",
                tuple(sorted(kinds)),
                weight,
            )
            for (node, name), (kinds, weight) in found.items()
            if node == "post" or name in names
        ]
        out.sort(key=lambda r: (r.node != "post", -r.weight, r.name))
        return out[:limit]

    @rebuilt_when_damaged
    def backlinks(self, post: str) -> list[str]:
        """The posts whose wikilinks point at ``post`` (a path), sorted."""
        with self._lock:
            rows = self._db.execute(
                "SELECT DISTINCT source FROM links WHERE target = ? AND target_type = 'post'"
                " AND kind = 'wikilink' ORDER BY source",
                (post,),
            ).fetchall()
        return [str(r[0]) for r in rows]

    @rebuilt_when_damaged
    def relinked_by(
        self, changed: Iterable[str], written: Callable[[str], bool] = lambda _note: True
    ) -> set[str]:
        """The posts whose wikilinks may resolve otherwise once the posts ``changed`` were
        edited (a new title or alias): those linking to one of them, and those linking to a
        note not written yet that ``written`` (given the note's key) says now names a post.
        A post retitled "Beta Note" had no backlinks, though a post linked ``[[Beta Note]]``;
        the old title's links still counted as backlinks. Without ``written``, every post
        linking to an unwritten note was read again: on a vault of 3,000 notes, each linking
        to one, an edit of one note re-resolved all 3,000 (0.85 s)."""
        targets = sorted(set(changed))
        if not targets:
            return set()
        with self._lock:
            notes: dict[str, set[str]] = {}
            for source, note in self._db.execute(
                "SELECT source, target FROM links WHERE kind = 'wikilink'"
                " AND target_type = 'entity'"
            ):
                notes.setdefault(str(note), set()).add(str(source))
            found = {
                source
                for note, sources in notes.items()
                # (a name clipped to its 120 characters may name a post by its whole text)
                if len(note) >= MAX_NAME_CHARS or written(note)
                for source in sources
            }
            for target in targets:
                found.update(
                    str(row[0])
                    for row in self._db.execute(
                        "SELECT DISTINCT source FROM links WHERE kind = 'wikilink'"
                        " AND target_type = 'post' AND target = ?",
                        (target,),
                    )
                )
        return found

    @rebuilt_when_damaged
    def posts(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT path FROM posts ORDER BY path")]

    @rebuilt_when_damaged
    def export_json(self) -> dict[str, Any]:
        """The whole graph as JSON-ready data: posts, entities and links."""
        with self._lock:
            posts = [
                {"path": r[0], "hash": r[1], "extracted": bool(r[2])}
                for r in self._db.execute("SELECT path, hash, extracted FROM posts ORDER BY path")
            ]
            links = [
                {
                    "source": r[0],
                    "target": r[1],
                    "target_type": r[2],
                    "kind": r[3],
                    "evidence": json.loads(r[4]),
                }
                for r in self._db.execute(
                    "SELECT source, target, target_type, kind, evidence FROM links"
                    " ORDER BY source, kind, target"
                )
            ]
        return {"posts": posts, "entities": self.entities(), "links": links}
