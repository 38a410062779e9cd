"""Content-Encoding decoding with a cap on every step (no decompression bombs).

httpx decodes a compressed body one network chunk at a time with no bound on what a chunk
may become: 64 KB of gzipped zeros is 64 MB once decoded, made in one call on the event loop.
``CappedDecoder`` decodes the raw bytes in pieces of at most ``PIECE`` bytes (zlib's
``max_length``) and never past ``limit`` in all; the caller yields to the loop between
pieces. Only what the fetcher asks for is decoded (``gzip``, ``deflate``, or none); a body in
another encoding, or in several stacked, raises ``BrowserError`` rather than being read.

A gzip body may be several gzip members one after another (RFC 1952; what ``cat a.gz b.gz``
makes, and what some servers stream): each member is decoded in turn, as ``gzip.decompress``
does, where one inflater would stop silently at the end of the first and cut the page there.
Bytes after the last member that start no other (zero padding) are ignored.

``guess_text`` decodes a page whose charset nothing says (``Fetched.text``).
"""

from __future__ import annotations

import codecs
import re
import zlib
from collections.abc import Iterator

from skillrt.exceptions import BrowserError

__all__ = ["PIECE", "CappedDecoder", "guess_text"]

PIECE = 256 * 1024
"""The most one decompression step produces (bytes)."""


class CappedDecoder:
    """Decodes one body (``encoding`` is its Content-Encoding header), at most ``limit`` bytes.

    ``feed(raw)`` yields the decoded pieces of a raw chunk; ``full`` turns true when ``limit``
    was reached (the rest of the body is not decoded: the page is cut there).
    """

    def __init__(self, encoding: str, limit: int) -> None:
        kinds = [k.strip().lower() for k in encoding.split(",") if k.strip()]
        kinds = [k for k in kinds if k != "identity"]
        if len(kinds) > 1:
            raise BrowserError(f"the page is encoded {len(kinds)} times over ({encoding}); refused")
        self.kind = kinds[0] if kinds else ""
        if self.kind not in ("", "gzip", "x-gzip", "deflate"):
            raise BrowserError(f"the page's Content-Encoding {encoding!r} is not supported")
        self.limit = limit
        self.size = 0
        self.full = False
        self._zlib: zlib._Decompress | None = None
        self._raw_deflate = False
        if self.kind in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif self.kind == "deflate":
            self._zlib = zlib.decompressobj()

    def feed(self, raw: bytes) -> Iterator[bytes]:
        """The decoded pieces of ``raw``, each at most ``PIECE`` bytes, none past ``limit``."""
        if self.full or not raw:
            return
        if self._zlib is None:
            yield self._take(raw)
            return
        data = raw
        while data and not self.full:
            if self._zlib.eof:  # the member before ended: what follows is the next one
                data = self._next_member(data)
                if not data:
                    break
            room = min(PIECE, self.limit - self.size + 1)  # one byte over: "there was more"
            try:
                piece = self._decompress(self._zlib, data, room)
            except zlib.error as exc:
                raise BrowserError(f"the page's {self.kind} body is corrupt: {exc}") from exc
            data = self._zlib.unconsumed_tail
            if self._zlib.eof:
                data = self._zlib.unused_data + data
            if piece:
                yield self._take(piece)
            elif not data:
                break

    def _next_member(self, data: bytes) -> bytes:
        """``data`` to decode as the start of the next gzip member; empty when there is none to
        decode: zero padding, bytes that do not start a gzip member (ignored, as they were
        before), or anything after a deflate body's end."""
        if self.kind == "deflate" or not data.startswith(b"\x1f"):
            return b""
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16)
        return data

    def _decompress(self, inflater: zlib._Decompress, data: bytes, room: int) -> bytes:
        try:
            return inflater.decompress(data, room)
        except zlib.error:
            if self.kind != "deflate" or self._raw_deflate or self.size:
                raise
            self._raw_deflate = True  # a server that sends raw deflate (no zlib header)
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
            return self._zlib.decompress(data, room)

    def _take(self, piece: bytes) -> bytes:
        room = self.limit - self.size
        if len(piece) > room:
            self.full = True
            piece = piece[:room]
        self.size += len(piece)
        return piece


# --- a page's text, its charset unsaid ----------------------------------------------------------

_KANA = re.compile("[\u3040-\u30ff]")
_CJK = re.compile("[\u3000-\u303f\u4e00-\u9fff\uff01-\uff5e]")  # (and CJK punctuation)
_JUDGED_CHARS = 65_536  # of the decoded text, scored
_LEGACY = (  # codec, the characters most of a page's non-ASCII text is in when it is right
    ("cp932", _KANA, 0.2),  # Shift_JIS (Japanese always writes kana)
    ("euc_jp", _KANA, 0.2),
    ("gb18030", _CJK, 0.6),  # GBK, GB2312
    ("big5", _CJK, 0.6),
)


def _strict(body: bytes, codec: str) -> str | None:
    """``body`` decoded with ``codec``, or None when it is not valid in it (a character cut
    off at its end, where the body was capped, is left out, not held against it)."""
    try:
        return codecs.getincrementaldecoder(codec)(errors="strict").decode(body, final=False)
    except UnicodeDecodeError:
        return None


def guess_text(body: bytes) -> str:
    """``body`` as text when nothing says its charset (no header, no ``<meta>``, no
    byte-order mark): UTF-8 when it is valid UTF-8, else the legacy CJK encoding whose
    decoding is mostly that script's characters, else Windows-1252. A GBK page served as
    ``text/html`` was read as UTF-8, every Chinese character a "�", and a Chinese answer to
    it shown as done; a Shift_JIS one too."""
    text = _strict(body, "utf-8")
    if text is not None:
        return text
    for codec, script, share in _LEGACY:
        text = _strict(body, codec)
        if text is None:
            continue
        judged = text[:_JUDGED_CHARS]
        other = sum(1 for ch in judged if ord(ch) > 0x7F)
        if other and len(script.findall(judged)) >= share * other:
            return text
    return _strict(body, "cp1252") or body.decode("latin-1")
