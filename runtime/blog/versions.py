"""``VersionStore``: the version of a post before each write, kept so the write can be undone.

Every write of a post by a skill is preceded by ``keep``: the post's bytes as they were (none
for a post being created) go to ``<state>/versions/`` with a small JSON record (the path, what
the write did, the sha256 the write leaves). The record is fsynced before the write happens,
and is keyed by the writing task and step: a task resumed after a crash that runs its save again
finds its record already there and keeps the first one, the true original. At most ``keep``
records are kept (``undo.keep``), the oldest dropped first.

``undo(files, path=None)`` restores the newest record (of ``path``, or of any post): an edited
post gets its old bytes back, a created post (a new article, a translation) goes to the trash
(with the files copied for it, ``note_resource``: a translated page bundle's images), a
deleted post comes back from the trash (its kept bytes restored, the trash's copy removed).
It refuses, changing nothing, when the post changed since the write (its hash is no longer the
one the write left) or, for a deleted post, when a file has taken its place. The record is
dropped once the post is restored. A record of a write that never happened (the post still
holds the kept bytes) is dropped and the one before it undone.

The records are files, so they outlive a restart; with the shared PostgreSQL store each worker
keeps its own (the state folder is per worker).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from skillrt.blog.files import FileStore, fsync_dir
from skillrt.exceptions import FileChanged, FileMissing, UserError

__all__ = ["Action", "NothingToUndo", "Undone", "Version", "VersionStore"]

Action = Literal["edit", "create", "delete"]
DEFAULT_KEEP = 50


class NothingToUndo(UserError):
    """No kept version (of that post) to restore."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        super().__init__(f"nothing to undo{f' for {path}' if path else ''}")


@dataclass(frozen=True, slots=True)
class Version:
    """One kept version: the write it came before."""

    id: str
    key: str
    path: str
    action: Action
    after: str | None  # the sha256 the write left (None: the post was deleted)
    task_id: str
    created_at: float
    had_before: bool  # False: the post did not exist before the write
    trash: str | None = None  # a deleted post: where the trash holds it
    resources: dict[str, str] | None = None  # a created post's copied files: path -> sha256


@dataclass(frozen=True, slots=True)
class Undone:
    """What ``undo`` did: the post, the action undone, and where a created post went."""

    path: str
    action: Action
    task_id: str
    trash: str | None = None
    moved_to: str | None = None  # a move undone (publish): where the post was, now gone


def _write_durably(target: Path, data: bytes) -> None:
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _tag(key: str) -> str:
    """The part of a record's file name that names its write (``key``)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


class VersionStore:
    """The kept versions in ``folder`` (see the module docstring)."""

    def __init__(self, folder: Path, *, keep: int = DEFAULT_KEEP) -> None:
        self.folder = Path(folder)
        self.keep_at_most = keep

    # --- keeping ---------------------------------------------------------------------------------

    def keep(
        self, files: FileStore, path: str, action: Action, *, key: str, after: str | None
    ) -> None:
        """Keep ``path`` as it is now, before a write that leaves the hash ``after``.

        ``key`` names the write (its task and step): a second call with the same key keeps
        nothing (the task was resumed after a crash; the first record holds the original).
        Blocking I/O: run it off the event loop (a skill's save step is).
        """
        if self.keep_at_most <= 0:
            return
        rel = files.relative(path)
        if self._has(key):
            return
        before = self.bytes_of(files, rel) if action != "create" else None
        self.record(rel, action, before, key=key, after=after)

    def note_trash(self, key: str, trash: Path) -> None:
        """Note where the delete named ``key`` put the post in the trash (undo takes it out)."""
        for record in self._records_of(key):
            data = json.loads(record.read_text(encoding="utf-8"))
            data["trash"] = str(trash)
            _write_durably(record, json.dumps(data).encode("utf-8"))

    def note_resource(self, key: str, path: str, after: str) -> None:
        """Note that the create named ``key`` comes with the file ``path`` (holding ``after``),
        copied for it (a translated page bundle's image): undone with it. Noted before the
        copy, as ``keep`` is before a write: a copy never made is skipped by undo."""
        for record in self._records_of(key):
            data = json.loads(record.read_text(encoding="utf-8"))
            data["resources"] = {**(data.get("resources") or {}), path: after}
            _write_durably(record, json.dumps(data).encode("utf-8"))

    def _records_of(self, key: str) -> list[Path]:
        return sorted(self.folder.glob(f"*-{_tag(key)}.json")) if self.folder.is_dir() else []

    def _has(self, key: str) -> bool:
        return bool(self._records_of(key))

    def record(
        self, rel: str, action: Action, before: bytes | None, *, key: str, after: str | None
    ) -> None:
        """Keep ``before`` (the bytes of ``rel`` before a write; None: it did not exist) for a
        write already made or about to be; ``keep`` reads them itself. Once per ``key``."""
        if self.keep_at_most <= 0 or self._has(key):
            return
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        stem = f"{time.time_ns():020d}-{_tag(key)}"
        if before is not None:
            _write_durably(self.folder / f"{stem}.blob", before)
        record = Version(
            id=stem,
            key=key,
            path=rel,
            action=action,
            after=after,
            task_id=key.split(":", 1)[0],
            created_at=time.time(),
            had_before=before is not None,
        )
        _write_durably(self.folder / f"{stem}.json", json.dumps(asdict(record)).encode("utf-8"))
        fsync_dir(self.folder)
        self._prune()

    @staticmethod
    def bytes_of(files: FileStore, rel: str) -> bytes | None:
        """The bytes of ``rel`` now (None: no such file), read as ``FileStore.read`` reads a
        post: a regular file only (a FIFO is refused, never waited on), no symlink followed,
        and a post over ``max_post_bytes`` or not UTF-8 refused with a clear error rather
        than kept cut short (an undo would have restored the cut copy)."""
        try:
            text, _ = files.read(rel)
        except FileMissing:
            return None
        return text.encode("utf-8")

    def _prune(self) -> None:
        records = sorted(self.folder.glob("*.json"))
        cut = max(0, len(records) - self.keep_at_most)
        if 0 < cut < len(records) and self._pair_at(records[cut - 1], records[cut]):
            cut -= 1  # a move's two halves are kept together (the create alone undoes badly)
        for old in records[:cut]:
            self._drop(old.stem)

    def _pair_at(self, older: Path, newer: Path) -> bool:
        """Whether ``older`` is the ``:from`` half of the move whose ``:to`` half is ``newer``
        (with undo.keep = 1 the delete half of a publish was dropped at once)."""
        version = self._load(newer)
        if version is None or not version.key.endswith(":to"):
            return False
        return older.stem.endswith(_tag(version.key.removesuffix(":to") + ":from"))

    @staticmethod
    def _load(record: Path) -> Version | None:
        try:
            return Version(**json.loads(record.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None  # a damaged record is skipped, never fatal

    def _drop(self, stem: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.folder / f"{stem}.json").unlink()
        with contextlib.suppress(FileNotFoundError):
            (self.folder / f"{stem}.blob").unlink()

    # --- reading ---------------------------------------------------------------------------------

    def versions(self, path: str | None = None) -> list[Version]:
        """The kept versions, newest first (of ``path`` only when given)."""
        found: list[Version] = []
        if not self.folder.is_dir():
            return found
        for record in sorted(self.folder.glob("*.json"), reverse=True):
            version = self._load(record)
            if version is None:
                continue
            if path is None or version.path == path:
                found.append(version)
        return found

    # --- undoing ---------------------------------------------------------------------------------

    def undo(self, files: FileStore, path: str | None = None) -> Undone:
        """Restore the newest kept version (of ``path``); see the module docstring.

        ``files`` should be a task's view (``for_task``) so the post's lock is taken.
        """
        rel = files.relative(path) if path else None
        while True:
            versions = self.versions(rel)
            if not versions:
                raise NothingToUndo(rel)
            version = versions[0]
            current = files.hash_of(version.path)
            if not self._never_written(version, current):
                break
            self._drop(version.id)  # a write that never happened: the one before is undone
        moved = self._move_of(version)
        if moved is not None:
            return self._undo_move(files, *moved)
        trash: str | None = None
        if version.action == "delete":
            if current is not None:
                raise UserError(
                    f"{version.path} exists again; not restoring the deleted version over it"
                )
            before = self._before_text(version)
            files.write(version.path, before, create_only=True)
            self._take_out_of_trash(version, before)
        elif current != version.after:
            raise FileChanged(version.path, version.after or "", current)
        elif version.action == "create":
            copied = self._copied(files, version)
            trash = str(files.move_to_trash(version.path))
            for resource in copied:
                files.move_to_trash(resource, resource=True)
        else:
            files.write(version.path, self._before_text(version), expected_hash=version.after)
        self._drop(version.id)
        return Undone(
            path=version.path, action=version.action, task_id=version.task_id, trash=trash
        )

    @staticmethod
    def _copied(files: FileStore, version: Version) -> list[str]:
        """The files copied with the created post ``version`` that are there, as copied; a
        ``FileChanged`` (nothing undone) when one was changed since, as for the post."""
        there: list[str] = []
        for path, after in (version.resources or {}).items():
            current = files.hash_of(path)
            if current is not None and current != after:
                raise FileChanged(path, after, current)
            if current is not None:
                there.append(path)
        return there

    def _move_of(self, version: Version) -> tuple[Version, Version] | None:
        """The ``:from`` (delete) and ``:to`` (create) halves of the move ``version`` is half
        of (a draft published into the posts folder, a post unpublished into the drafts
        folder), or None. A ``:to`` half whose ``:from`` is gone is refused and dropped:
        undone alone it would leave the post in neither place."""
        if version.key.endswith(":from"):
            base = version.key.removesuffix(":from")
            to = next(filter(None, map(self._load, self._records_of(f"{base}:to"))), None)
            return None if to is None else (version, to)
        if not version.key.endswith(":to"):
            return None
        base = version.key.removesuffix(":to")
        source = next(filter(None, map(self._load, self._records_of(f"{base}:from"))), None)
        if source is None:
            self._drop(version.id)
            raise UserError(f"the version of {version.path} before it was moved is not kept")
        return source, version

    def _undo_move(self, files: FileStore, source: Version, moved: Version) -> Undone:
        """Undo a move in one step: the old file back (its trash copy removed), the moved one
        to the trash. Refused, changing nothing, when the moved file changed since or a file
        took the old one's place. The first undo of a publish used to put the published post
        in the trash and leave the draft there too: the post was in neither place."""
        current = files.hash_of(moved.path)
        if current != moved.after:
            raise FileChanged(moved.path, moved.after or "", current)
        if files.hash_of(source.path) is not None:
            raise UserError(f"{source.path} exists again; not restoring the moved post over it")
        before = self._before_text(source)
        files.write(source.path, before, create_only=True)
        self._take_out_of_trash(source, before)
        trash = str(files.move_to_trash(moved.path))
        self._drop(moved.id)
        self._drop(source.id)
        return Undone(
            path=source.path,
            action="delete",
            task_id=source.task_id,
            trash=trash,
            moved_to=moved.path,
        )

    @staticmethod
    def _take_out_of_trash(version: Version, restored: str) -> None:
        """The trash's copy of a post brought back is removed (the post is back in place)."""
        if version.trash is None:
            return
        copy = Path(version.trash)
        try:
            if copy.read_bytes() == restored.encode("utf-8"):
                copy.unlink()
        except OSError:
            pass  # gone already, or unreadable: the post is back either way

    def _never_written(self, version: Version, current: str | None) -> bool:
        """Whether the write ``version`` was kept for never happened: the post still holds the
        kept bytes (none, for a post to be created). A tag rename that found the post locked,
        a save refused as FileChanged, a kill -9 between the record and the write all left a
        record, and undo then said "changed after that write" of a post nothing had changed,
        and the true edit before it could no longer be undone."""
        if current == version.after and version.action != "delete":
            return False  # the write is there (an edit that changed nothing included)
        if not version.had_before:
            return current is None
        if current is None:
            return False
        try:
            kept = (self.folder / f"{version.id}.blob").read_bytes()
        except OSError:
            return False  # undo says the kept version is missing
        return hashlib.sha256(kept).hexdigest() == current

    def _before_text(self, version: Version) -> str:
        try:
            data = (self.folder / f"{version.id}.blob").read_bytes()
        except FileNotFoundError:
            # It raised raw (the CLI said "the state folder cannot be used") and the record
            # stayed, so every later undo hit it: the record goes, the reply says why.
            self._drop(version.id)
            raise UserError(f"the kept version of {version.path} is missing") from None
        try:  # posts are UTF-8 text (kept as ``FileStore.read`` read them): strict, lossless
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError(f"the kept version of {version.path} is not UTF-8 text") from None
