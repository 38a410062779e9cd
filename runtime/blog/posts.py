"""``PostIndex``: full-text search over the blog's Markdown posts (SQLite FTS5, trigram).

The trigram tokenizer indexes every three-character window, so Chinese text (which has no
spaces) matches as well as English. A query is never passed to FTS5 as syntax: it is split
into terms, each quoted. Terms shorter than three characters cannot use a trigram index;
those (``闭包``, ``Go``) are matched with ``LIKE`` and scored in Python. Chinese runs are cut
at common function words (的, 是, 什么, 如何, ...) and long runs are searched as their
overlapping trigrams, so ``Rust 的所有权是什么`` finds a post about ``所有权``.

``refresh()`` is incremental: a post whose size, modification and change times and inode are
those of the last refresh is not read again (unless it changed within ``RACY_NS`` of that
refresh, as git's index does: two writes in one timestamp tick look alike); the others are
hashed (sha256), and only new or changed posts are parsed. A post whose frontmatter cannot be
read is reported in ``IndexReport.errors`` and skipped; it stays reported (without being
parsed again) until it changes. A posts folder that is not there removes nothing.

The database is a cache of the blog: if it is unreadable it is moved aside and rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from skillrt.blog.conventions import is_section_page, post_stem
from skillrt.blog.dates import DateRange
from skillrt.blog.files import MAX_READ_BYTES
from skillrt.blog.markdown import post_fields, split_post
from skillrt.blog.sqlite import SQLiteCache, rebuilt_when_damaged
from skillrt.blog.wikilinks import normalize_target
from skillrt.exceptions import InvalidFrontmatter, PathNotAllowed

__all__ = [
    "IndexReport",
    "Post",
    "PostHit",
    "PostIndex",
    "PostMeta",
    "make_snippet",
    "newest_first",
    "query_terms",
]

SCHEMA_VERSION = 4  # 2: draft column; dates as YYYY-MM-DD; section pages left out; 3: inline
# tags read where a rename finds them (none after inline code, in a fence in a list item);
# 4: each file's stat when it was last read (files)
MAX_QUERY_CHARS = 500
MAX_TERMS = 24
MAX_POST_BYTES = 5_000_000
POST_SUFFIXES = (".md", ".markdown")
# A file changed this close to the refresh that read it may change again in the same
# timestamp tick, at the same size (coarse clocks, FAT's 2 s): read again until it is older.
RACY_NS = 2_000_000_000

# Column weights for bm25: path, title, aliases, tags, description, body.
_WEIGHTS = (2.0, 10.0, 6.0, 5.0, 3.0, 1.0)
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_HAN}]+|[^\W_]+(?:[+#]+|(?:[.\-'][^\W_]+)+)?")
_IS_HAN = re.compile(rf"[{_HAN}]")
_HEADING_LINE = re.compile(r"^#{1,6}[ \t]+", re.MULTILINE)
# Function words that separate the content words of a Chinese question or request.
# The words that say what kind of question it is ("我写过里斯本吗", "我提到过 tmux 吗") come
# first: 写 alone was a stop word, so "我写过里斯本吗" searched for "过里斯".
_ZH_STOP = re.compile(
    "(?:提到|提及|谈到|讲到|说到|聊到|写到)过?|(?:提|写|讲|聊|谈|说)过|"
    "什么|怎么|怎样|如何|为什么|哪些|哪个|关于|一篇|一下|文章|博客|请问|介绍|"
    "可以|能否|是否|我们|你们|他们|这个|那个|这些|那些|以及|还有|"
    "[的了是在和与及或吗呢吧啊呀请写把被对从让给就也都还又很]"
)
_EN_STOP_WORDS = (
    "the and for with what how why when where which who about into from that this these those "
    "are was were is be been does did can could should would will write article post blog "
    "please tell explain describe you your our their there here its it's an of on in to "
    "have has had anything anywhere"
)
_EN_STOP = frozenset(_EN_STOP_WORDS.split())
# The words that say what kind of question it is, not what it is about: "did I ever mention
# Lisbon on the blog?" searched for "ever" and "mention" too, and the posts that happen to say
# "ever" were given to the model with the one on Lisbon. Dropped before the words are split.
_QUESTION_KIND = re.compile(
    r"\b(?:ever|mention(?:s|ed|ing)?|cover(?:s|ed|ing)?"
    r"|(?:talk(?:s|ed|ing)?|writ(?:e|es|ing|ten)|wrote|blog(?:s|ged|ging)?|post(?:s|ed|ing)?)"
    r"\s+(?:about|on)|(?:touch(?:es|ed|ing)?)\s+on)\b"
)

_TABLES = ("posts", "posts_fts", "names", "broken", "root", "files")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS posts (
    id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, hash TEXT NOT NULL,
    title TEXT NOT NULL, date TEXT, tags TEXT NOT NULL, description TEXT NOT NULL,
    aliases TEXT NOT NULL, wikilinks TEXT NOT NULL, draft INTEGER NOT NULL DEFAULT 0);
CREATE VIRTUAL TABLE IF NOT EXISTS posts_fts USING fts5(
    path, title, aliases, tags, description, body, tokenize='trigram');
CREATE TABLE IF NOT EXISTS names (
    key TEXT NOT NULL, path TEXT NOT NULL, rank INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS names_key ON names(key);
CREATE TABLE IF NOT EXISTS broken (
    path TEXT PRIMARY KEY, hash TEXT NOT NULL, reason TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS root (path TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, stat TEXT NOT NULL, read_ns INTEGER NOT NULL);
"""

_SHORT_TERM_SQL = (
    "SELECT f.rowid, f.title, p.tags, f.body FROM posts_fts f JOIN posts p ON p.id = f.rowid"
    " WHERE f.title LIKE ?1 ESCAPE '\\' OR f.tags LIKE ?1 ESCAPE '\\'"
    " OR f.body LIKE ?1 ESCAPE '\\' LIMIT 500"
)


@dataclass(frozen=True, slots=True)
class PostMeta:
    """A post as indexed. ``path`` is relative to the content root, with ``/``."""

    path: str
    title: str
    date: str | None
    tags: tuple[str, ...]
    description: str
    aliases: tuple[str, ...]
    wikilinks: tuple[str, ...]
    hash: str
    draft: bool

    def to_item(self) -> dict[str, Any]:
        """What ``skillrt index --json`` lists for the post."""
        return {"path": self.path, "title": self.title, "date": self.date, "draft": self.draft}


@dataclass(frozen=True, slots=True)
class Post(PostMeta):
    """A post with its body (the Markdown after the frontmatter)."""

    body: str


@dataclass(frozen=True, slots=True)
class PostHit:
    """A search result; ``score`` is higher for better matches."""

    path: str
    title: str
    snippet: str
    score: float
    tags: tuple[str, ...] = ()
    date: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "title": self.title,
            "snippet": self.snippet,
            "score": self.score,
            "tags": list(self.tags),
            "date": self.date,
        }


def _as_before(report: IndexReport, rel: str, broken: dict[str, tuple[str, str]]) -> None:
    """A post not read again: unchanged, or (in ``broken``) still reported as it was."""
    if rel in broken:
        report.errors.append((rel, broken[rel][1]))
    else:
        report.unchanged += 1


def _too_big(size: int, limit: int) -> str:
    return f"{size / 1e6:.1f} MB, more than the {limit / 1e6:.1f} MB a post may have; not indexed"


@dataclass(slots=True)
class IndexReport:
    """What a ``refresh()`` did. Paths are relative to the content root."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": list(self.added),
            "updated": list(self.updated),
            "removed": list(self.removed),
            "unchanged": self.unchanged,
            "errors": [list(e) for e in self.errors],
        }


@dataclass(frozen=True, slots=True)
class _Terms:
    fts: tuple[str, ...]  # three characters or more: FTS5 phrases
    short: tuple[str, ...]  # one or two characters of Chinese, two of anything else: LIKE

    @property
    def all(self) -> tuple[str, ...]:
        return self.fts + self.short


def _trigrams(run: str) -> list[str]:
    return [run[i : i + 3] for i in range(len(run) - 2)]


def query_terms(query: str) -> _Terms:
    """Split a user query into search terms (bounded in length and number)."""
    query = "".join(ch if ch.isprintable() else " " for ch in query[:MAX_QUERY_CHARS])
    fts: list[str] = []
    short: list[str] = []

    def add(bucket: list[str], term: str) -> None:
        if term not in fts and term not in short and len(fts) + len(short) < MAX_TERMS:
            bucket.append(term)

    for token in _TOKEN.findall(_QUESTION_KIND.sub(" ", query.casefold())):
        if _IS_HAN.match(token):
            for piece in _ZH_STOP.split(token):
                if len(piece) == 3:
                    add(fts, piece)
                elif len(piece) > 3:
                    for gram in _trigrams(piece):
                        add(fts, gram)
                elif len(piece) == 2:
                    add(short, piece)
            continue
        if token in _EN_STOP:
            continue
        if len(token) > 4 and token.endswith("s") and not token.endswith("ss"):
            token = token[:-1]
            if token in _EN_STOP:  # "which posts cover docker" searched for "post"
                continue
        if len(token) >= 3:
            add(fts, token)
        elif len(token) == 2:
            add(short, token)
    return _Terms(tuple(fts), tuple(short))


def _fts_phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _short_term_score(term: str, title: str, tags: tuple[str, ...], body: str) -> float:
    pattern = re.compile(
        re.escape(term) if _IS_HAN.search(term) else rf"(?<![^\W_]){re.escape(term)}(?![^\W_])",
        re.IGNORECASE,
    )
    score = 3.0 if pattern.search(title) else 0.0
    score += 2.0 if any(tag.casefold() == term for tag in tags) else 0.0
    score += 0.2 * min(len(pattern.findall(body)), 5)
    return score


def newest_first(date: str | None) -> tuple[int, str]:
    """A sort key putting recent dates first and undated posts last."""
    if not date:
        return (1, "")
    return (0, "".join(chr(0x10FFFF - ord(c)) for c in date))


def make_snippet(body: str, terms: tuple[str, ...], width: int = 160) -> str:
    """About ``width`` characters of ``body`` around the first matching term, on one line."""
    text = " ".join(_HEADING_LINE.sub(" ", body).split())
    folded = text.casefold()
    positions = [p for p in (folded.find(t) for t in terms if t) if p >= 0]
    if not positions:
        return text[:width] + ("…" if len(text) > width else "")
    start = max(0, min(positions) - width // 3)
    end = min(len(text), start + width)
    start = max(0, end - width)
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def _skipped(name: str) -> bool:
    """A hidden file or folder (``.obsidian``, ``.git``), or ``node_modules``: never posts."""
    return name.startswith(".") or name == "node_modules"


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _stat_key(info: os.stat_result) -> str:
    """What says a file was not rewritten since it was read: a write changes its size or
    times, and an editor's save-by-rename its inode; ``ctime`` cannot be set back by hand
    (``touch -d`` or a restored backup's mtime)."""
    return f"{info.st_size} {info.st_mtime_ns} {info.st_ctime_ns} {info.st_ino} {info.st_dev}"


def _not_read_again(seen: tuple[str, int] | None, info: os.stat_result) -> bool:
    """Whether a file stat as ``info`` is as it was read (``seen``: its stat then, and when it
    was read). A file changed within ``RACY_NS`` of that reading is read again (and hashed):
    written twice in one timestamp tick at the same size, it looks unchanged."""
    if seen is None or seen[0] != _stat_key(info):
        return False
    return max(info.st_mtime_ns, info.st_ctime_ns) < seen[1] - RACY_NS


def vault_templates(vault: Path) -> list[str]:
    """The folders of an Obsidian vault's templates, as its settings name them (the core
    plugin's ``.obsidian/templates.json``, Templater's ``templates_folder``): notes with
    ``{{title}}`` in them, not posts. A template was listed among the posts, and its tag
    counted. Settings that cannot be read name none."""
    found: list[str] = []
    settings = (
        (".obsidian/templates.json", "folder"),
        (".obsidian/plugins/templater-obsidian/data.json", "templates_folder"),
    )
    for name, key in settings:
        try:
            folder = json.loads((vault / name).read_text(encoding="utf-8")).get(key)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(folder, str) and (folder := folder.strip().strip("/")):
            found.append(PurePosixPath(folder).as_posix())
    return found


class PostIndex(SQLiteCache):
    """Full-text index of the posts under ``content_root / posts_dir`` in ``db_path``.

    Thread-safe (one connection behind a lock), so callers may run ``refresh()`` in a worker
    thread. Posts are named by their path relative to ``content_root``. Found damaged, it is
    moved aside and built again from the posts (see ``blog/sqlite.py``).
    """

    what = "post index"

    def __init__(
        self,
        db_path: Path,
        content_root: Path,
        posts_dir: str = "posts",
        *,
        max_bytes: int = MAX_READ_BYTES,
        drafts_dir: str | None = None,
        inline_tags: bool = False,
    ) -> None:
        self.max_bytes = max_bytes  # a bigger post is reported, never read
        self.inline_tags = inline_tags  # an Obsidian vault's "#tag"s in the body are tags
        self.content_root = Path(content_root).expanduser().resolve()
        self.posts_dir = posts_dir.strip("/") or "."
        # A drafts folder beside the posts (Jekyll's _drafts/): its posts are indexed as drafts.
        self.drafts_dir = drafts_dir.strip("/") if drafts_dir else None
        super().__init__(db_path, version=SCHEMA_VERSION, tables=_TABLES, schema=_SCHEMA)
        try:
            self._own_root()
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            if not self._damaged(exc):
                raise
            self._renew(exc)

    def _refill(self) -> None:
        """After damage: the new, empty index made this blog's and filled from the posts."""
        self._own_root()
        self._refresh()

    def _own_root(self) -> None:
        """Empty the index when it was built for another content root (a state folder
        shared by two blogs): before, its titles named the other blog's posts until the next
        refresh, and a request could pick one of them. Older indexes record no root: theirs
        is taken to be this one."""
        # (read with inline tags or not: an index built the other way is built again)
        root = str(self.content_root) + ("\x00inline-tags" if self.inline_tags else "")
        with self._tx() as db:
            stored = db.execute("SELECT path FROM root").fetchone()
            if stored is not None and stored[0] == root:
                return
            if stored is not None:
                db.execute("DELETE FROM posts")
                db.execute("DELETE FROM posts_fts")
                db.execute("DELETE FROM names")
                db.execute("DELETE FROM broken")
                db.execute("DELETE FROM files")
            db.execute("DELETE FROM root")
            db.execute("INSERT INTO root (path) VALUES (?)", (root,))

    # --- files ---------------------------------------------------------------------------

    def _scan(self) -> dict[str, str]:
        """The posts on disk: each one's path as the index names it, and its file."""
        found: dict[str, str] = {}
        for folder in (self.posts_dir, self.drafts_dir):
            if folder is not None:
                self._scan_folder(folder, found)
        if self.inline_tags:  # (an Obsidian vault)
            for folder in vault_templates(self.content_root):
                found = {rel: p for rel, p in found.items() if not rel.startswith(folder + "/")}
        return found

    def _folder(self, folder: str) -> Path | None:
        """``folder`` (of the content root) resolved, or None when it is not a folder in the
        blog."""
        base = (self.content_root / folder).resolve()
        if not base.is_dir() or not base.is_relative_to(self.content_root):
            return None
        return base

    def _scan_folder(self, folder: str, found: dict[str, str]) -> None:
        """The posts under ``folder``, hidden folders and ``node_modules`` left out. Folders
        that are symlinks are not followed (nor were they by ``rglob``), and only a file that
        is a symlink is resolved (kept when it leads to a file in the blog): ``resolve()`` of
        each of 3,000 notes took 0.7 s of a refresh that found nothing changed."""
        base = self._folder(folder)
        if base is None:
            return
        top = base.relative_to(self.content_root).as_posix()
        if any(_skipped(part) for part in PurePosixPath(top).parts):
            return
        stack = [(str(base), "" if top == "." else top + "/")]
        while stack:
            where, prefix = stack.pop()
            try:
                with os.scandir(where) as entries:
                    listed = list(entries)
            except OSError:
                continue  # (gone, or not readable, since it was listed)
            for entry in listed:
                if _skipped(entry.name):
                    continue
                if _is_folder(entry):
                    stack.append((entry.path, f"{prefix}{entry.name}/"))
                elif self._is_post_file(entry):
                    found[prefix + entry.name] = entry.path

    def _is_post_file(self, entry: os.DirEntry[str]) -> bool:
        """A Markdown file, not a section page (``_index.md``), nor a symlink out of the blog."""
        name = entry.name
        if not name.lower().endswith(POST_SUFFIXES) or is_section_page(name):
            return False
        try:
            if not entry.is_symlink():
                return entry.is_file(follow_symlinks=False)
            target = Path(entry.path).resolve()
            return target.is_relative_to(self.content_root) and target.is_file()
        except (OSError, RuntimeError):  # (a symlink loop)
            return False

    def relpath(self, path: str | Path) -> str:
        """A post path as the index names it (relative, ``/``); refuses paths out of the blog."""
        raw = Path(path)
        full = Path(os.path.normpath(raw if raw.is_absolute() else self.content_root / raw))
        if full == self.content_root or not full.is_relative_to(self.content_root):
            raise PathNotAllowed(str(path), "outside the content root")
        return full.relative_to(self.content_root).as_posix()

    # --- indexing ------------------------------------------------------------------------

    @rebuilt_when_damaged
    def refresh(self) -> IndexReport:
        """Bring the index up to date with the files; only new or changed posts are parsed."""
        return self._refresh()

    def _refresh(self) -> IndexReport:
        report = IndexReport()
        files = self._scan()
        with self._tx() as db:
            known = dict(db.execute("SELECT path, hash FROM posts").fetchall())
            broken = {row[0]: (row[1], row[2]) for row in db.execute("SELECT * FROM broken")}
            seen = {row[0]: (row[1], row[2]) for row in db.execute("SELECT * FROM files")}
            now = time.time_ns()
            for rel in sorted(files):
                try:
                    info = os.stat(files[rel])
                    if info.st_size > self.max_bytes:
                        report.errors.append((rel, _too_big(info.st_size, self.max_bytes)))
                        continue
                    if (rel in known or rel in broken) and _not_read_again(seen.get(rel), info):
                        _as_before(report, rel, broken)
                        continue
                    with open(files[rel], "rb") as file:
                        data = file.read()
                except OSError as exc:
                    report.errors.append((rel, f"unreadable: {exc.strerror or exc}"))
                    continue
                db.execute(
                    "INSERT OR REPLACE INTO files VALUES (?, ?, ?)", (rel, _stat_key(info), now)
                )
                digest = hashlib.sha256(data).hexdigest()
                if known.get(rel) == digest:
                    report.unchanged += 1
                    continue
                if rel in broken and broken[rel][0] == digest:
                    report.errors.append((rel, broken[rel][1]))
                    continue
                reason = self._index_one(db, rel, data, digest)
                if reason is not None:
                    db.execute(
                        "INSERT OR REPLACE INTO broken VALUES (?, ?, ?)", (rel, digest, reason)
                    )
                    report.errors.append((rel, reason))
                    if rel in known:
                        self._delete(db, rel)
                        report.removed.append(rel)
                    continue
                db.execute("DELETE FROM broken WHERE path = ?", (rel,))
                (report.updated if rel in known else report.added).append(rel)
            if self._folder(self.posts_dir) is not None:
                self._drop_missing(db, report, set(known) - set(files), set(broken) - set(files))
        return report

    def _drop_missing(
        self, db: sqlite3.Connection, report: IndexReport, gone: set[str], broken: set[str]
    ) -> None:
        """Take the posts no longer on disk out of the index. Not when the posts folder itself
        is missing (called only when it is there): ``skillrt index --posts-dir nope`` (a typo)
        in a blog of 14 posts reported "14 removed", and every session until the next index
        answered from an empty index and graph."""
        for rel in sorted(gone):
            self._delete(db, rel)
            report.removed.append(rel)
        for rel in broken:
            db.execute("DELETE FROM broken WHERE path = ?", (rel,))
        db.executemany("DELETE FROM files WHERE path = ?", [(rel,) for rel in gone | broken])

    def _index_one(self, db: sqlite3.Connection, rel: str, data: bytes, digest: str) -> str | None:
        """Parse and store one post; returns why it was skipped, or None."""
        if len(data) > MAX_POST_BYTES:
            return f"too large ({len(data)} bytes; the limit is {MAX_POST_BYTES})"
        try:
            text = data.decode("utf-8")
            metadata, body = split_post(text, rel)
        except UnicodeDecodeError:
            return "not UTF-8 text"
        except InvalidFrontmatter as exc:
            return exc.reason
        stem = post_stem(rel)
        fields = post_fields(metadata, body, stem, rel, with_inline_tags=self.inline_tags)
        self._delete(db, rel)
        cur = db.execute(
            "INSERT INTO posts (path, hash, title, date, tags, description, aliases, wikilinks,"
            " draft) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                rel,
                digest,
                fields.title,
                fields.date,
                json.dumps(fields.tags, ensure_ascii=False),
                fields.description,
                json.dumps(fields.aliases, ensure_ascii=False),
                json.dumps(fields.wikilinks, ensure_ascii=False),
                int(fields.draft),
            ),
        )
        db.execute(
            "INSERT INTO posts_fts (rowid, path, title, aliases, tags, description, body)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                cur.lastrowid,
                rel,
                fields.title,
                " ".join(fields.aliases),
                " ".join(fields.tags),
                fields.description,
                body,
            ),
        )
        without_ext = rel.rsplit(".", 1)[0]
        names = [(without_ext, 0), (stem, 1), (fields.title, 2)]
        names += [(alias, 3) for alias in fields.aliases]
        if self.posts_dir != "." and without_ext.startswith(self.posts_dir + "/"):
            names.append((without_ext[len(self.posts_dir) + 1 :], 0))
        db.executemany(
            "INSERT INTO names (key, path, rank) VALUES (?, ?, ?)",
            [(normalize_target(name), rel, rank) for name, rank in names if name],
        )
        return None

    def _delete(self, db: sqlite3.Connection, rel: str) -> None:
        row = db.execute("SELECT id FROM posts WHERE path = ?", (rel,)).fetchone()
        if row is None:
            return
        db.execute("DELETE FROM posts_fts WHERE rowid = ?", (row[0],))
        db.execute("DELETE FROM posts WHERE id = ?", (row[0],))
        db.execute("DELETE FROM names WHERE path = ?", (rel,))

    # --- queries -------------------------------------------------------------------------

    @rebuilt_when_damaged
    def search(
        self,
        query: str,
        k: int = 10,
        *,
        snippet_chars: int = 160,
        drafts: bool = True,
        dates: DateRange | None = None,
    ) -> list[PostHit]:
        """The ``k`` posts that match ``query`` best (title and tags weigh most); among equal
        scores the more recent post comes first. ``drafts=False`` leaves drafts out; ``dates``
        keeps only posts dated in that range (a query of no words then lists the range's posts,
        most recent first)."""
        terms = query_terms(query)
        k = max(1, min(k, 100))
        if not terms.all and dates is None:
            return []
        with self._lock:
            scores = self._scores(terms) if terms.all else self._dated(dates)
            kept = self._filter(scores, drafts=drafts, dates=dates)
            best = sorted(
                kept.items(),
                key=lambda item: (-round(item[1][0], 4), newest_first(item[1][1]), item[0]),
            )[:k]
            hits: list[PostHit] = []
            for rowid, (score, date) in best:
                row = self._db.execute(
                    "SELECT p.path, p.title, p.tags, f.body FROM posts p"
                    " JOIN posts_fts f ON f.rowid = p.id WHERE p.id = ?",
                    (rowid,),
                ).fetchone()
                if row is None:
                    continue
                path, title, tags, body = row
                hits.append(
                    PostHit(
                        path=path,
                        title=title,
                        snippet=make_snippet(body, terms.all, snippet_chars),
                        score=round(score, 4),
                        tags=tuple(json.loads(tags)),
                        date=date,
                    )
                )
        return hits

    def _scores(self, terms: _Terms) -> dict[int, float]:
        scores: dict[int, float] = {}
        if terms.fts:
            expr = " OR ".join(_fts_phrase(t) for t in terms.fts)
            rows = self._db.execute(
                "SELECT rowid, bm25(posts_fts, ?, ?, ?, ?, ?, ?) FROM posts_fts"
                " WHERE posts_fts MATCH ? ORDER BY 2 LIMIT 200",
                (*_WEIGHTS, expr),
            ).fetchall()
            for rowid, rank in rows:
                scores[rowid] = -float(rank)
        for term in terms.short:
            rows = self._db.execute(_SHORT_TERM_SQL, (_like_pattern(term),)).fetchall()
            for rowid, title, tags, body in rows:
                bonus = _short_term_score(term, title, tuple(json.loads(tags)), body)
                if bonus > 0:
                    scores[rowid] = scores.get(rowid, 0.0) + bonus
        return scores

    def _dated(self, dates: DateRange | None) -> dict[int, float]:
        """Every post dated in ``dates``, all scored 0 (ordered by date)."""
        if dates is None:
            return {}
        rows = self._db.execute(
            "SELECT id FROM posts WHERE date >= ? AND date <= ?", (dates.start, dates.end)
        ).fetchall()
        return {row[0]: 0.0 for row in rows}

    def _filter(
        self, scores: dict[int, float], *, drafts: bool, dates: DateRange | None
    ) -> dict[int, tuple[float, str | None]]:
        """``scores`` with each post's date, without drafts (unless ``drafts``) and posts out
        of ``dates``."""
        kept: dict[int, tuple[float, str | None]] = {}
        ids = list(scores)
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT id, date, draft FROM posts WHERE id IN ({marks})",  # noqa: S608
                chunk,
            ).fetchall()
            for rowid, date, draft in rows:
                if draft and not drafts:
                    continue
                if dates is not None and not dates.holds(date):
                    continue
                kept[rowid] = (scores[rowid], date)
        return kept

    @rebuilt_when_damaged
    def dates(self, *, drafts: bool = True) -> list[str]:
        """The dates posts carry (``YYYY-MM-DD``), most recent first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT DISTINCT date FROM posts WHERE date IS NOT NULL AND (? OR draft = 0)"
                " ORDER BY date DESC",
                (int(drafts),),
            ).fetchall()
        return [row[0] for row in rows]

    def build_context(
        self, topic: str, k: int = 5, *, snippet_chars: int = 300, drafts: bool = True
    ) -> list[PostHit]:
        """The posts most related to ``topic``, with a longer snippet for a prompt."""
        return self.search(topic, k, snippet_chars=snippet_chars, drafts=drafts)

    @rebuilt_when_damaged
    def get(self, path: str | Path) -> Post | None:
        """One indexed post with its body, or None."""
        try:
            rel = self.relpath(path)
        except PathNotAllowed:
            return None
        with self._lock:
            row = self._db.execute(
                "SELECT p.path, p.title, p.date, p.tags, p.description, p.aliases, p.wikilinks,"
                " p.hash, p.draft, f.body FROM posts p JOIN posts_fts f ON f.rowid = p.id"
                " WHERE p.path = ?",
                (rel,),
            ).fetchone()
        if row is None:
            return None
        return Post(**self._meta_fields(row[:9]), body=row[9])

    @rebuilt_when_damaged
    def all_posts(self) -> list[PostMeta]:
        """Every indexed post (without bodies), by path."""
        with self._lock:
            rows = self._db.execute(
                "SELECT path, title, date, tags, description, aliases, wikilinks, hash, draft"
                " FROM posts ORDER BY path"
            ).fetchall()
        return [PostMeta(**self._meta_fields(row)) for row in rows]

    @rebuilt_when_damaged
    def resolve_link(self, target: str) -> str | None:
        """The post a ``[[target]]`` names (by path, file name, title, then alias), or None."""
        key = normalize_target(target)
        if not key:
            return None
        with self._lock:
            row = self._db.execute(
                "SELECT path FROM names WHERE key = ? ORDER BY rank, path LIMIT 1", (key,)
            ).fetchone()
        return None if row is None else str(row[0])

    @rebuilt_when_damaged
    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM posts").fetchone()[0])

    @staticmethod
    def _meta_fields(row: tuple[Any, ...]) -> dict[str, Any]:
        path, title, date, tags, description, aliases, wikilinks, digest, draft = row
        return {
            "path": path,
            "title": title,
            "date": date,
            "tags": tuple(json.loads(tags)),
            "description": description,
            "aliases": tuple(json.loads(aliases)),
            "wikilinks": tuple(json.loads(wikilinks)),
            "hash": digest,
            "draft": bool(draft),
        }
