"""Installed distributions read from their folders, as ``importlib.metadata`` reads them, for
``skillrt doctor``: a version, a group's entry points, the files a distribution lists.

``importlib.metadata`` imports ``email``, ``csv``, ``zipfile``, ``calendar`` and more (~50 M
instructions where pydantic is loaded), and parses ``METADATA`` with the email parser at the
first version: doctor asked it for two versions, the shipped model's file and the
``skillrt.settings`` entry points. Each function here answers only where its answer is plainly
``importlib.metadata``'s: the distributions are the ``*.dist-info`` / ``*.egg-info`` folders of
the ``sys.path`` folders, found by its path finder alone, in its order (``sys.path``, then the
folder's listing), each folder named ``name-version.dist-info`` (lower-case suffix), the files
UTF-8, ``METADATA``'s headers plain ``Name: value`` lines, ``RECORD`` without quotes. Anything
else (another finder that lists distributions, a zip file or an egg on ``sys.path``, an
``.egg-info`` distribution's metadata, a header folded over lines, a malformed entry point...)
raises ``Undecided``, and the caller asks ``importlib.metadata``, whose answer or error is then
the one given. ``tests/test_cli_distributions.py`` compares both on many layouts.
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
from pathlib import Path, PurePosixPath

__all__ = ["Undecided", "entry_point_texts", "entry_points", "files", "hold", "version"]

_SUFFIXES = (".dist-info", ".egg-info")
# Line ends str.splitlines honours besides "\n" (the email parser splits on them too).
_OTHER_LINE_ENDS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


class Undecided(Exception):
    """The folders alone do not tell what ``importlib.metadata`` would answer: ask it."""


def _normalize(name: str) -> str:
    """``importlib.metadata``'s ``Prepared.normalize``: PEP 503, dashes as underscores."""
    found = name.lower().replace("-", "_").replace(".", "_")  # (a regex's compile: ~1 M)
    while "__" in found:
        found = found.replace("__", "_")
    return found


_Listing = tuple[tuple[str, str], ...]  # (sys.path folder, distribution folder's name)
_listed: tuple[tuple[object, ...], _Listing] | None = None
_texts: dict[tuple[str, str], bytes | None] = {}
_held = False


def hold() -> None:
    """Read the folders' listing and each ``entry_points.txt`` once from now on, for a
    command that starts, reads and ends (``skillrt tasks``, ``doctor``): pydantic's plug-in
    check and the ``skillrt.settings`` entry points then share one read. Without it, every
    call reads the folders again, as ``importlib.metadata`` does."""
    global _held
    _held = True


def _folders() -> _Listing:
    """Every distribution folder (``sys.path`` folder, its name), in the order
    ``importlib.metadata`` finds them (``sys.path``, then each folder's listing). Listed once
    per ``sys.path`` and working folder once ``hold`` was called."""
    global _listed
    for finder in sys.meta_path:  # another finder may list distributions of its own
        if finder is not importlib.machinery.PathFinder and hasattr(finder, "find_distributions"):
            raise Undecided
    key = (os.getcwd(), *sys.path)
    if _held and _listed is not None and _listed[0] == key:
        return _listed[1]
    found: list[tuple[str, str]] = []
    for root in sys.path:
        if not isinstance(root, str) or os.path.basename(root).lower().endswith(".egg"):
            raise Undecided
        try:
            names = os.listdir(root or ".")
        except OSError:
            if os.path.isfile(root):  # a zip file: read by importlib.metadata as a folder
                raise Undecided from None
            continue  # missing, or not listable: importlib.metadata finds nothing there
        for child in names:
            low = child.lower()
            if low.endswith(_SUFFIXES):
                # Its name is the part before "-" (else importlib.metadata reads it from the
                # metadata): a lower-case suffix after a name (os.path.splitext's rules).
                stem = child[: -10 if low.endswith(".dist-info") else -9]
                if not child.endswith(_SUFFIXES) or not stem.strip(".") or stem[0] == "-":
                    raise Undecided
                found.append((root, child))
    _listed = (key, tuple(found))
    _texts.clear()
    return _listed[1]


def _key(child: str) -> str:
    """A distribution folder's normalized name (``PathDistribution._normalized_name``)."""
    return _normalize(child.rpartition(".")[0].partition("-")[0])


def entry_point_texts() -> list[bytes]:
    """The bytes of every distribution's ``entry_points.txt`` (read once; ``b""`` for none),
    ``Undecided`` where one is not UTF-8 (``importlib.metadata`` fails on it): what pydantic's
    plug-in lookup and the ``skillrt.settings`` entry points read."""
    texts = [_entry_points_bytes(root, child) or b"" for root, child in _folders()]
    for data in texts:
        if not data.isascii():
            _decode(data)
    return texts


def _entry_points_bytes(root: str, child: str) -> bytes | None:
    if not _held or (root, child) not in _texts:
        _texts[root, child] = _read_bytes(os.path.join(root, child, "entry_points.txt"))
    return _texts[root, child]


def _read_bytes(path: str) -> bytes | None:
    """A metadata file's bytes, ``None`` where ``PathDistribution.read_text`` gives ``None``;
    ``Undecided`` where it would raise."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return None
    except OSError:
        raise Undecided from None


def _decode(data: bytes) -> str:
    """Bytes read as ``read_text(encoding="utf-8")`` reads them (universal newlines)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Undecided from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read(path: str) -> str | None:
    """A metadata file's text as ``PathDistribution.read_text`` gives it (``None`` when it
    is not there); ``Undecided`` where that read would raise."""
    data = _read_bytes(path)
    return None if data is None else _decode(data)


def _first(name: str) -> Path | None:
    """The folder ``importlib.metadata.distribution(name)`` reads, or ``None`` (not found)."""
    if not name:
        raise Undecided
    wanted = _normalize(name)
    return next((Path(root, child) for root, child in _folders() if _key(child) == wanted), None)


def version(name: str) -> str | None:
    """``importlib.metadata.version(name)``, ``None`` where it raises ``PackageNotFoundError``."""
    folder = _first(name)
    if folder is None:
        return None
    if not folder.name.endswith(".dist-info"):
        raise Undecided
    text = _read(os.path.join(folder, "METADATA"))
    if not text:  # it would read PKG-INFO, then the folder itself
        raise Undecided
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if not line or any(end in line for end in _OTHER_LINE_ENDS):
            break  # the headers end (or lines end elsewhere too): not found plainly
        if line[0] in " \t" and index:  # another header's next line
            continue
        header, colon, value = line.partition(":")
        # A header as the email parser reads one: a name of printable ASCII but " " and ":".
        if not (colon and header.isascii() and header.isprintable()) or " " in header:
            break
        if header.lower() == "version":
            after = lines[index + 1] if index + 1 < len(lines) else ""
            if after[:1] in (" ", "\t"):  # folded over lines
                break
            return value.lstrip(" \t")
    raise Undecided


def files(name: str) -> list[tuple[PurePosixPath, Path]] | None:
    """``importlib.metadata.files(name)`` as (the listed path, where it is), ``None`` where
    it raises ``PackageNotFoundError``."""
    folder = _first(name)
    if folder is None:
        return None
    text = _read(os.path.join(folder, "RECORD"))
    if not text or '"' in text or "\0" in text:  # egg-info's lists, or CSV quoting
        raise Undecided
    listed = []
    for line in text.splitlines():
        fields = line.split(",")
        if not line or len(fields) > 3 or len(line) > 100_000:
            raise Undecided
        if len(fields) == 3 and fields[2]:
            try:
                int(fields[2])  # importlib.metadata reads the size: a bad one raises there
            except ValueError:
                raise Undecided from None
        path = PurePosixPath(fields[0])
        listed.append((path, folder.parent / path))
    return listed


def entry_points(group: str) -> list[tuple[str, str]]:
    """``importlib.metadata.entry_points(group=group)`` as (name, value) pairs, in its order:
    the first distribution of each normalized name, in the order they are found."""
    seen: set[str] = set()
    found: list[tuple[str, str]] = []
    for root, child in _folders():
        key = _key(child)
        if key in seen:
            continue
        seen.add(key)
        section = None
        data = _entry_points_bytes(root, child)
        for raw in (_decode(data) if data else "").splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line.strip("[]")
                continue
            if section is None:
                continue
            if "=" not in line:  # importlib.metadata fails on it: its error, not ours
                raise Undecided
            ep_name, _, value = line.partition("=")
            if section == group:
                found.append((ep_name.strip(), value.strip()))
    return found
