"""``FileStore``: every read and write of the blog, under one content root.

Paths are checked before anything touches the disk: a path that leaves the root (``..``, an
absolute path elsewhere, a symlink out, ``~``), a NUL or control character, a backslash or a
Windows drive, an over-long name, or an empty path raises ``PathNotAllowed``. The runtime's
state folder (``.skillrt``, the trash and the lock folder) is refused for writes.

A write is atomic: the content goes to a temp file in the target's folder, is flushed and
fsynced, renamed over the target with ``os.replace``, and the folder is fsynced. A crash at any
moment leaves the old file or the new one, never a mix; a failed write removes its temp file.

``write(..., expected_hash=h)`` refuses (``FileChanged``, naming the file) to overwrite a file
whose bytes no longer hash to ``h``: someone edited it since it was read. ``create_only=True``
refuses to replace an existing file with a ``UserError`` naming it (creation is atomic: the
temp file is hard-linked into place, which fails if the name exists). ``copy`` makes a new
file so from another's bytes (a page bundle's image beside its translation): the one write
of a file that is no post, under ``posts_dir`` all the same.

With a ``FileLockManager`` and an owner (``for_task(task_id)``), a write first takes the lock
on the file for that task (fail fast with ``LockConflict``, or ``wait=`` seconds) and keeps it;
the runtime releases a task's locks when it ends. The hash check and the rename happen while
that lock, an OS lock too, is held, so two processes never interleave them.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import shutil
import stat
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from skillrt.blog.dirfd import DIR_FD, open_folder, same_folder
from skillrt.blog.locks import FileLockManager
from skillrt.exceptions import FileChanged, FileMissing, PathNotAllowed, UserError

if TYPE_CHECKING:
    from skillrt.abort import AbortSignal

__all__ = [
    "MAX_COPY_BYTES",
    "MAX_READ_BYTES",
    "POST_SUFFIXES",
    "STATE_FOLDER",
    "FileStore",
    "fsync_dir",
    "sha256_hex",
    "temp_name",
]

STATE_FOLDER = ".skillrt"
POST_SUFFIXES = (".md", ".markdown")
MAX_READ_BYTES = 2 * 1024 * 1024  # the default of max_post_bytes
MAX_COPY_BYTES = 64 * 1024 * 1024  # a page bundle's image or video copied (``copy``)
# Never blocks on a FIFO; O_NONBLOCK and O_CLOEXEC do not exist on Windows (nor FIFOs).
_READ_FLAGS: int = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
SavedHook = Callable[[Path, int, str], None]
"""Called after a write with the saved path, its size in bytes and its sha256."""

_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\.[^.]*)*$", re.IGNORECASE)
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_MAX_NAME_BYTES = 255
_MAX_PATH_BYTES = 4096
_DRIVE = re.compile(r"^[A-Za-z]:")


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISLNK(mode):
        return "symlink (swapped in since the path was checked)"
    return "special file"


def sha256_hex(data: bytes) -> str:
    """The hex sha256 of ``data``: the hash ``read`` and ``write`` return."""
    return hashlib.sha256(data).hexdigest()


def fsync_dir(path: Path) -> None:
    """Flush a folder's entries (a rename or a new name in it) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Glob over posix relative paths: ``**/`` any folders or none, ``*`` and ``?`` in one name."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            out.append("[^" + body[1:] + "]" if body.startswith("!") else "[" + body + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


class FileStore:
    """Checked, atomic, optionally locked file access under ``root`` (see the module docstring)."""

    def __init__(
        self,
        root: Path,
        *,
        locks: FileLockManager | None = None,
        owner: str | None = None,
        trash_dir: Path | None = None,
        max_read_bytes: int = MAX_READ_BYTES,
        posts_dir: str | None = None,
        state_dir: Path | None = None,
        drafts_dir: str | None = None,
    ) -> None:
        self.max_read_bytes = max_read_bytes
        self.posts_dir = None if posts_dir is None else (posts_dir.strip("/") or ".")
        # The blog's drafts folder beside the posts (Jekyll's _drafts/): posts are written
        # there too (new drafts) when ``posts_dir`` limits writes.
        self.drafts_dir = drafts_dir.strip("/") if drafts_dir and drafts_dir.strip("/") else None
        self._given_root = Path(os.path.abspath(Path(root).expanduser()))
        self.root = self._given_root.resolve()
        self.locks = locks
        self.owner = owner
        self.on_saved: SavedHook | None = None
        self.signal: AbortSignal | None = None
        self.trash_dir = (
            Path(trash_dir).expanduser().resolve()
            if trash_dir is not None
            else self.root / STATE_FOLDER / "trash"
        )
        self.state_dir = (
            Path(os.path.abspath(Path(state_dir).expanduser())).resolve()
            if state_dir is not None
            else self.root / STATE_FOLDER
        )

    def for_task(
        self,
        task_id: str,
        *,
        on_saved: SavedHook | None = None,
        signal: AbortSignal | None = None,
    ) -> FileStore:
        """The same store (its root and trash already resolved: resolving them again costs a
        syscall per path component), with writes locked for ``task_id``; ``on_saved(path, size,
        sha256)`` is called after every write.

        ``signal``: the task's abort signal. Once it fired, a write or a move to the trash raises
        ``TaskCancelled`` before it takes a lock or replaces a file: a sync step runs in a thread
        that cancelling cannot stop, and its save landed a second after the task was CANCELLED,
        taking a post lock for the dead task that refused the next writer for 5 minutes.
        """
        view = object.__new__(type(self))  # copy.copy's result, without its __reduce_ex__
        view.__dict__.update(self.__dict__)
        view.owner = task_id
        view.on_saved = on_saved
        view.signal = signal
        return view

    def _check_cancelled(self) -> None:
        """Raise ``TaskCancelled`` if this view's task was cancelled (see ``for_task``)."""
        if self.signal is not None:
            self.signal.raise_if_aborted()

    # --- paths --------------------------------------------------------------------------------

    def resolve(self, path: str | Path) -> Path:
        """The absolute path of ``path`` inside the root; ``PathNotAllowed`` if it is not."""
        text = os.fspath(path) if isinstance(path, os.PathLike) else path
        if not isinstance(text, str):
            raise PathNotAllowed(repr(path), "not a path string")
        if not text.strip():
            raise PathNotAllowed(text, "empty path")
        if "\x00" in text:
            raise PathNotAllowed(text, "contains a NUL byte")
        if any(ord(ch) < 32 or ch == "\x7f" for ch in text):
            raise PathNotAllowed(text, "contains a control character")
        if "\\" in text or _DRIVE.match(text):
            raise PathNotAllowed(text, "a Windows path (drive, UNC or backslash); use a/b.md")
        if len(text.encode("utf-8", "surrogatepass")) > _MAX_PATH_BYTES:
            raise PathNotAllowed(text[:80] + "...", f"longer than {_MAX_PATH_BYTES} bytes")
        if text.startswith("~"):
            raise PathNotAllowed(text, "a home-folder path; give a path inside the content root")
        if text.startswith("/"):
            text = self._inside_root(text)
        parts: list[str] = []
        for part in text.split("/"):
            if len(part.encode("utf-8", "surrogatepass")) > _MAX_NAME_BYTES:
                raise PathNotAllowed(text, f"a name longer than {_MAX_NAME_BYTES} bytes")
            if part in ("", "."):
                continue
            if part == "..":
                if not parts:
                    raise PathNotAllowed(text, "escapes the content root (..)")
                parts.pop()
            else:
                parts.append(part)
        if not parts:
            raise PathNotAllowed(text, "names the content root itself, not a file")
        try:
            resolved = self.root.joinpath(*parts).resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop
            raise PathNotAllowed(text, f"cannot be resolved ({exc})") from exc
        if resolved == self.root or not resolved.is_relative_to(self.root):
            raise PathNotAllowed(text, "a symlink leads outside the content root")
        return resolved

    def _inside_root(self, text: str) -> str:
        """An absolute path, as a path relative to the root; refused when outside it."""
        norm = Path(os.path.normpath(text))
        for base in (self.root, self._given_root):
            if norm.is_relative_to(base):
                return norm.relative_to(base).as_posix()
        raise PathNotAllowed(text, "an absolute path outside the content root")

    def writable(self, path: str | Path) -> str:
        """``path`` relative to the root if ``write`` may write it (``PathNotAllowed`` if not):
        a skill checks a target before it spends anything on its content."""
        return self._resolve_for_write(path)[1]

    def relative(self, path: str | Path) -> str:
        """``path`` relative to the root, posix style (``posts/a.md``)."""
        return self.resolve(path).relative_to(self.root).as_posix()

    def _resolve_private(self, path: str | Path) -> tuple[Path, str]:
        """``resolve``, refusing the runtime's state folder and hidden names (``.git``,
        ``.env``): no skill reads or writes there."""
        target = self.resolve(path)
        rel = target.relative_to(self.root).as_posix()
        protected = [self.root / STATE_FOLDER, self.state_dir, self.trash_dir]
        if self.locks is not None:
            protected.append(self.locks.lock_dir)
        if any(target.is_relative_to(p) for p in protected):
            raise PathNotAllowed(rel, "inside the runtime's state folder")
        if any(part.startswith(".") for part in PurePosixPath(rel).parts):
            raise PathNotAllowed(rel, "a hidden file or inside a hidden folder")
        return target, rel

    def _resolve_for_write(self, path: str | Path, *, resource: bool = False) -> tuple[Path, str]:
        """``_resolve_private``, no name Windows reserves or that reorders text (bidi
        controls: ``gpj.md`` shown as ``dm.jpg``); with ``posts_dir`` set, only a post:
        Markdown under it (``resource``: any file under it, a page bundle's image)."""
        target, rel = self._resolve_private(path)
        for part in PurePosixPath(rel).parts:
            if _RESERVED.match(part) or part.endswith((".", " ")):
                raise PathNotAllowed(rel, f"{part!r} is a name Windows reserves")
            if any(ch in _BIDI for ch in part):
                raise PathNotAllowed(rel, "a name with a bidirectional control character")
        if self.posts_dir is not None:
            if not resource and not rel.lower().endswith(POST_SUFFIXES):
                raise PathNotAllowed(rel, "not a post (only .md and .markdown files are written)")
            inside = [d for d in (self.posts_dir, self.drafts_dir) if d is not None]
            if self.posts_dir != "." and not any(
                PurePosixPath(rel).is_relative_to(folder) for folder in inside
            ):
                raise PathNotAllowed(rel, f"outside the posts folder {self.posts_dir}/")
        return target, rel

    # --- reading ------------------------------------------------------------------------------

    def read(self, path: str | Path) -> tuple[str, str]:
        """The file's UTF-8 text and the sha256 of its bytes (pass it to ``write`` later).

        Only a regular file is read: a FIFO, a device or a socket is refused (``PathNotAllowed``)
        before it is opened, and it is opened non-blocking, so nothing here can wait for a
        writer. A file over ``max_read_bytes`` is refused (``UserError``) before it is read.
        Blocking I/O: async callers run it in a thread (``asyncio.to_thread``).
        """
        target, _ = self._resolve_private(path)
        try:
            data = self._read_regular(target)
        except (FileNotFoundError, NotADirectoryError):
            raise FileMissing(self.relative(target)) from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(f"{self.relative(target)} is not UTF-8 text ({exc.reason})") from exc
        return text, sha256_hex(data)

    def hash_of(self, path: str | Path) -> str | None:
        """The sha256 of the file's bytes, or None when there is no such file."""
        return self._hash_resolved(self._resolve_private(path)[0])

    def _hash_resolved(self, target: Path) -> str | None:
        """The sha256 of a regular file's bytes; None when it is missing or not a regular file
        (never opened then: a FIFO would block). Read in chunks, whatever its size."""
        try:
            info = os.stat(target)
            if not stat.S_ISREG(info.st_mode):
                return None
            fd = os.open(target, _READ_FLAGS)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        digest = hashlib.sha256()
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None  # replaced by something else since the stat
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
        return digest.hexdigest()

    def _read_regular(self, target: Path, limit: int | None = None) -> bytes:
        """The bytes of ``target`` if it is a regular file within the size limit (see ``read``;
        ``limit``: another than ``max_read_bytes``, a resource's)."""
        rel = target.relative_to(self.root).as_posix()
        limit = self.max_read_bytes if limit is None else limit
        if DIR_FD:  # as a write: from the root's folder, no symlink followed (see ``dirfd``)
            parts = target.relative_to(self.root).parts
            folder = open_folder(self.root, parts[:-1], create=False, shown=rel)
            try:
                info = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
                self._check_regular(rel, info, limit)
                try:
                    fd = os.open(parts[-1], _READ_FLAGS | _NOFOLLOW, dir_fd=folder)
                except OSError as exc:
                    if exc.errno != errno.ELOOP:
                        raise
                    raise PathNotAllowed(rel, "replaced by a symlink while reading") from exc
            finally:
                os.close(folder)
        else:
            info = os.stat(target)  # before opening: opening a FIFO could block
            self._check_regular(rel, info, limit)
            fd = os.open(target, _READ_FLAGS)
        with os.fdopen(fd, "rb") as fh:
            opened = os.fstat(fh.fileno())
            if not stat.S_ISREG(opened.st_mode):  # swapped for something else since the stat
                raise PathNotAllowed(rel, f"a {_kind(opened.st_mode)}, not a regular file")
            data = fh.read(limit + 1)
        self._check_size(rel, len(data), limit)  # it grew since the stat
        return data

    def _check_regular(self, rel: str, info: os.stat_result, limit: int) -> None:
        """Refuse what is not a regular file (a FIFO could block the open) or is too big."""
        if stat.S_ISDIR(info.st_mode):
            raise PathNotAllowed(rel, "a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise PathNotAllowed(
                rel, f"a {_kind(info.st_mode)}, not a regular file; not reading it"
            )
        self._check_size(rel, info.st_size, limit)

    def _check_size(self, rel: str, size: int, limit: int) -> None:
        if size > limit:
            what = "a post may have (max_post_bytes)" if limit == self.max_read_bytes else "copied"
            raise UserError(
                f"{rel} is {size / 1e6:.1f} MB, more than the {limit / 1e6:.1f} MB "
                f"{what}; not reading it"
            )

    def exists(self, path: str | Path) -> bool:
        """Whether the path exists (file or folder)."""
        return self.resolve(path).exists()

    def list(self, pattern: str = "**/*.md") -> list[str]:
        """Files matching ``pattern`` (relative, posix, sorted); dot-folders and dot-files skipped.

        ``**/`` matches any folders or none; ``*`` and ``?`` stay within one name. Symlinked
        folders are not followed, and a symlinked file is listed only if it stays in the root.
        """
        if (
            not pattern
            or pattern.startswith(("/", "~"))
            or "\\" in pattern
            or "\x00" in pattern
            or ".." in pattern.split("/")
        ):
            raise PathNotAllowed(pattern, "a pattern must be relative to the content root")
        regex = _glob_regex(pattern)
        found: list[str] = []
        for folder, dirs, files in os.walk(self.root):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            base = Path(folder)
            for name in files:
                if name.startswith("."):
                    continue
                full = base / name
                rel = full.relative_to(self.root).as_posix()
                if not regex.fullmatch(rel):
                    continue
                if full.is_symlink() and not self._stays_inside(full):
                    continue
                if full.is_file():
                    found.append(rel)
        return sorted(found)

    def _stays_inside(self, link: Path) -> bool:
        try:
            return link.resolve().is_relative_to(self.root)
        except (OSError, RuntimeError):  # a symlink loop
            return False

    # --- writing ------------------------------------------------------------------------------

    def write(
        self,
        path: str | Path,
        content: str,
        *,
        expected_hash: str | None = None,
        create_only: bool = False,
        wait: float | None = None,
    ) -> tuple[Path, str]:
        """Write ``content`` (UTF-8) atomically; returns (absolute path, sha256 of the bytes).

        ``expected_hash``: the hash ``read`` returned; if the file changed or vanished since,
        raises ``FileChanged`` and leaves it alone. ``create_only``: raise ``UserError`` if the
        file exists. ``wait``: seconds to wait for another task's lock (default: fail fast).
        The file never keeps an execute, setuid or setgid bit.
        """
        if expected_hash is not None and create_only:
            raise UserError("write: expected_hash and create_only cannot be combined")
        target, rel = self._resolve_for_write(path)
        return self._write_bytes(
            target, rel, content.encode("utf-8"), expected_hash, create_only, wait
        )

    def copy(self, source: str | Path, dest: str | Path, *, wait: float | None = None) -> str:
        """Copy the regular file ``source`` to the new file ``dest`` byte for byte, as ``write``
        with ``create_only`` writes (checked paths, locked, atomic, never over a file); returns
        the sha256 of the bytes. Both may be any file under ``posts_dir``, not only a post: a
        Hugo page bundle translated into ``hooks-zh/index.md`` lost its ``cover.png`` (the
        image was broken in the translation). At most ``MAX_COPY_BYTES``."""
        src, _ = self._resolve_for_write(source, resource=True)
        try:
            data = self._read_regular(src, MAX_COPY_BYTES)
        except (FileNotFoundError, NotADirectoryError):
            raise FileMissing(self.relative(src)) from None
        target, rel = self._resolve_for_write(dest, resource=True)
        return self._write_bytes(target, rel, data, None, True, wait)[1]

    def _write_bytes(
        self,
        target: Path,
        rel: str,
        data: bytes,
        expected_hash: str | None,
        create_only: bool,
        wait: float | None,
    ) -> tuple[Path, str]:
        """``write``'s work once its path is checked: lock, write atomically, report."""
        digest = sha256_hex(data)
        self._lock(rel, wait)
        if DIR_FD:
            self._write_at(target, rel, data, expected_hash, create_only)
        else:
            self._write_by_path(target, rel, data, expected_hash, create_only)
        if self.on_saved is not None:
            self.on_saved(target, len(data), digest)
        return target, digest

    def _write_at(
        self, target: Path, rel: str, data: bytes, expected_hash: str | None, create_only: bool
    ) -> None:
        """The write through a folder descriptor (see ``dirfd``): nothing on the way followed."""
        parts = target.relative_to(self.root).parts
        folder = open_folder(self.root, parts[:-1], create=True, shown=rel)
        try:
            name = parts[-1]
            mode = _mode_at(folder, name, rel)
            tmp = _write_temp_at(folder, data, mode)
            try:
                if not same_folder(folder, self.root, parts[:-1]):
                    raise PathNotAllowed(rel, "a folder on the way was replaced while writing")
                self._check_cancelled()  # the temp file is written: the last moment to stop
                if create_only:
                    _create_at(folder, tmp, name, rel)
                else:
                    if expected_hash is not None:
                        actual = _hash_at(folder, name)
                        if actual != expected_hash:
                            raise FileChanged(rel, expected_hash, actual)
                    os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp, dir_fd=folder)
            os.fsync(folder)
        finally:
            os.close(folder)

    def _write_by_path(
        self, target: Path, rel: str, data: bytes, expected_hash: str | None, create_only: bool
    ) -> None:
        """The write where folders cannot be held by descriptor (Windows): checked paths."""
        if target.is_dir():
            raise UserError(f"{rel} is a folder, not a file")
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = None
        with contextlib.suppress(FileNotFoundError):
            mode = stat.S_IMODE(target.stat().st_mode) & _KEPT_MODE
        tmp = target.parent / temp_name()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        _fill(fd, data, mode, lambda: os.unlink(tmp))
        try:
            if self.resolve(rel) != target:  # re-check: a folder was swapped meanwhile
                raise PathNotAllowed(rel, "a folder on the way was replaced while writing")
            self._check_cancelled()
            if create_only:
                _create_by_path(tmp, target, rel)
            else:
                if expected_hash is not None:
                    actual = self._hash_resolved(target)
                    if actual != expected_hash:
                        raise FileChanged(rel, expected_hash, actual)
                os.replace(tmp, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        fsync_dir(target.parent)

    def _lock(self, rel: str, wait: float | None) -> None:
        """Take the task's lock on ``rel``; refused once the task was cancelled, and given back
        if the cancel came while taking it (the runtime may have released the task's locks
        already: one taken now would outlive the task until it expires)."""
        self._check_cancelled()
        if self.locks is not None and self.owner is not None:
            self.locks.acquire(rel, self.owner, wait=wait)
            if self.signal is not None and self.signal.aborted:
                self.locks.release(rel, self.owner)
                self.signal.raise_if_aborted()

    def move_to_trash(self, path: str | Path, *, resource: bool = False) -> Path:
        """Move the file into the trash folder as ``<name>.<time><suffix>``; never deletes.
        ``resource``: any file under ``posts_dir`` (a copied image undone), not only a post."""
        target, rel = self._resolve_for_write(path, resource=resource)
        if not target.is_file():
            raise UserError(f"{rel} is not a file; nothing to move to the trash")
        self._lock(rel, None)
        now = time.time()
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{now % 1:.6f}"[1:]
        dest_dir = self.trash_dir / Path(rel).parent
        dest = dest_dir / _trash_name(target, stamp)
        while dest.exists():
            dest = dest_dir / _trash_name(target, f"{stamp}-{secrets.token_hex(2)}")
        dest_dir.mkdir(parents=True, exist_ok=True)
        if DIR_FD:
            self._trash_at(target, rel, dest)
        else:
            self._trash_by_path(target, dest)
        fsync_dir(dest_dir)
        return dest

    def _trash_at(self, target: Path, rel: str, dest: Path) -> None:
        parts = target.relative_to(self.root).parts
        folder = open_folder(self.root, parts[:-1], create=False, shown=rel)
        try:
            info = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode):
                raise UserError(f"{rel} is not a file; nothing to move to the trash")
            trash = os.open(dest.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:
                os.replace(parts[-1], dest.name, src_dir_fd=folder, dst_dir_fd=trash)
            except OSError as exc:
                if exc.errno != errno.EXDEV:
                    raise
                _copy_out(folder, parts[-1], dest)
            finally:
                os.close(trash)
            os.fsync(folder)
        finally:
            os.close(folder)

    @staticmethod
    def _trash_by_path(target: Path, dest: Path) -> None:
        try:
            os.replace(target, dest)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            shutil.move(target, dest)  # another filesystem: copy, then remove the original
        fsync_dir(target.parent)


_NAME_MAX = 255  # bytes in one file name (ext4, APFS, NTFS alike)


def _trash_name(target: Path, stamp: str) -> str:
    """``<name>.<stamp><suffix>`` within ``_NAME_MAX`` bytes, the name cut at a character
    boundary where needed: a post named with 80 "长" (240 bytes) got a trash name over 255
    bytes, and its delete failed with a raw "[Errno 36] File name too long"."""
    tail = f".{stamp}{target.suffix}"
    room = _NAME_MAX - len(tail.encode("utf-8"))
    stem = target.stem.encode("utf-8")[: max(room, 1)].decode("utf-8", errors="ignore")
    return f"{stem}{tail}"


# --- file operations relative to a held folder ------------------------------------------------

_KEPT_MODE = 0o666  # an edit keeps the read and write bits, never execute, setuid or setgid
_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)


def temp_name() -> str:
    """A temp file's name: ``.skillrt-<pid>-<random>.tmp``. The pid lets the next start tell a
    dead writer's leftovers from a live one's (``tempfiles``)."""
    return f".skillrt-{os.getpid()}-{secrets.token_hex(8)}.tmp"


def _mode_at(folder: int, name: str, rel: str) -> int | None:
    """The permission bits the new file keeps from the one it replaces (None when new)."""
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(info.st_mode):
        raise UserError(f"{rel} is a folder, not a file")
    return stat.S_IMODE(info.st_mode) & _KEPT_MODE if stat.S_ISREG(info.st_mode) else None


def _write_temp_at(folder: int, data: bytes, mode: int | None) -> str:
    """A new temp file in ``folder`` holding ``data``, flushed and fsynced; its name."""
    name = temp_name()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(name, flags, 0o666, dir_fd=folder)
    _fill(fd, data, mode, lambda: os.unlink(name, dir_fd=folder))
    return name


def _fill(fd: int, data: bytes, mode: int | None, remove: Callable[[], None]) -> None:
    """Write ``data`` to the new temp file ``fd``, set its mode, fsync, close; on failure,
    ``remove`` it."""
    try:
        with os.fdopen(fd, "wb") as fh:
            if mode is not None and hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), mode)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            remove()
        raise


def _hash_at(folder: int, name: str) -> str | None:
    """The sha256 of the regular file ``name`` in ``folder``; None when missing, a symlink or
    not a regular file (never opened then: a FIFO would block)."""
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode):
            return None
        fd = os.open(name, _READ_FLAGS | _NOFOLLOW, dir_fd=folder)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # replaced by a symlink since the stat
            return None
        raise
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _exists_error(rel: str) -> UserError:
    return UserError(f"{rel} already exists; not overwriting it (pick another name)")


def _create_at(folder: int, tmp: str, name: str, rel: str) -> None:
    """Put ``tmp`` at ``name`` only if nothing is there (atomic where hard links work)."""
    try:
        os.link(tmp, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
    except FileExistsError:
        raise _exists_error(rel) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        # No hard links on this filesystem: check, then rename (guarded by the lock if any).
        try:
            os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
            return
        raise _exists_error(rel) from None


def _create_by_path(tmp: Path, target: Path, rel: str) -> None:
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise _exists_error(rel) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        if os.path.lexists(target):
            raise _exists_error(rel) from None
        os.replace(tmp, target)


def _copy_out(folder: int, name: str, dest: Path) -> None:
    """Move ``name`` (in ``folder``) to ``dest`` on another filesystem: copy, fsync, unlink."""
    src = os.open(name, _READ_FLAGS | _NOFOLLOW, dir_fd=folder)
    with os.fdopen(src, "rb") as fh, open(dest, "xb") as out:
        shutil.copyfileobj(fh, out)
        out.flush()
        os.fsync(out.fileno())
    os.unlink(name, dir_fd=folder)
