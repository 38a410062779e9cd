"""A URL path as a server will see it, for the firewall's path-scoped rules.

A path rule (``allow_private = ["http://127.0.0.1:8000/app"]``) is matched against the path
after percent-decoding and RFC 3986 dot-segment removal (``canonical_path``): servers decode
``%2e%2e`` and then normalise, so ``/app/%2e%2e/secret`` is ``/secret`` to them, and must be
``/secret`` to the rule. Servers do not all agree on the rest (``..%2f``, ``%5c``, ``..;``,
decoding twice), so a path where an encoded ``.``, ``/`` or ``\\`` could form a segment is
refused outright (``path_problem``) whenever a path rule is in force: no reading of it can be
trusted to match the one the server makes.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["canonical_path", "path_problem", "remove_dot_segments"]

_STILL_ENCODED = re.compile(r"%(2e|2f|5c|25)", re.IGNORECASE)
_DOTS = (".", "..")


def remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4 for an absolute path: ``/a/b/../c/./d`` -> ``/a/c/d``."""
    if not path.startswith("/"):
        path = "/" + path
    segments = path.split("/")[1:]
    kept: list[str] = []
    for segment in segments:
        if segment == "..":
            if kept:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    trailing = segments[-1] in _DOTS and bool(kept)
    return "/" + "/".join(kept) + ("/" if trailing else "")


def canonical_path(raw_path: str) -> str:
    """The percent-encoded path (no query) decoded, then its dot-segments removed."""
    return remove_dot_segments(unquote(raw_path.split("?", 1)[0].split("#", 1)[0] or "/"))


def path_problem(raw_path: str) -> str | None:
    """Why a percent-encoded path cannot be matched safely against a path rule, or None.

    Refused: an encoded ``/`` or ``\\`` (``%2f``, ``%5c``; a server may split on it), a literal
    backslash (browsers and some servers read it as ``/``), a segment that is ``.`` or ``..``
    once decoded but was not written so (``%2e%2e``, ``.%2e``), one that is a dot-segment before
    a ``;`` parameter (``..;``, read as ``..`` by some servers), a NUL, and a segment still
    encoded after one decoding (``%252e``: a server decoding twice would see a dot).
    """
    path = raw_path.split("?", 1)[0].split("#", 1)[0]
    if "\\" in path:
        return "a backslash in the path"
    for segment in path.split("/"):
        decoded = unquote(segment)
        if "/" in decoded or "\\" in decoded:
            return f"an encoded / or \\ in the path segment {segment!r}"
        if "\x00" in decoded:
            return f"a NUL in the path segment {segment!r}"
        if decoded in _DOTS and segment != decoded:
            return f"an encoded dot-segment {segment!r} in the path"
        if decoded.split(";", 1)[0] in _DOTS and ";" in decoded:
            return f"a dot-segment with a parameter {segment!r} in the path"
        if _STILL_ENCODED.search(decoded):
            return f"a doubly encoded path segment {segment!r}"
    return None
