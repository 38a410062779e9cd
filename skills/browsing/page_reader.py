"""Decoding and parsing pages off the event loop, within a time and a size cap.

A hostile page (5 MB of NUL bytes, 300,000 links) costs selectolax and the readable-text walk
seconds of CPU. ``read_page`` and ``read_text`` do that work in a worker thread, so the loop
(other tasks, the watchdog, the server) keeps running; the walk stops at ``timeout_s`` and
keeps what it read (``ParsedPage.cut`` says so, and the observation shows it). The size is
capped before: the fetcher's ``max_page_bytes``, ``MAX_PARSE_CHARS`` for the rendered DOM
Chromium hands over, and ``MAX_PARSE_TAGS`` for both (the C parser holds the GIL while it
builds the tree, so only a smaller tree keeps the loop free of it). If even the C parser
overruns by ``GRACE_S``, the caller gets a recoverable ``BrowserError`` and the thread
finishes on its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from selectolax.lexbor import LexborHTMLParser

from skillrt.exceptions import BrowserError
from skillrt.skills.browsing.html_extract import ParsedPage, parse_page, readable_text

if TYPE_CHECKING:
    from skillrt.skills.browsing.fetcher import Fetched

__all__ = ["GRACE_S", "MAX_PARSE_CHARS", "MAX_PARSE_TAGS", "read_page", "read_text"]

MAX_PARSE_CHARS = 5_000_000
# The C parser holds the GIL while it builds the tree, so a thread does not keep the loop free
# of it: 5 MB of "<li>\0" (a million elements) froze the loop for 0.4-0.8 s on a 2-core VM.
# Parsing time follows the tags, so a page is cut to its first ~150,000 (~60 ms of parsing
# here); a real page's HTML, even a 2 MB one, has a fraction of that.
MAX_PARSE_TAGS = 150_000
GRACE_S = 5.0
MAX_PLAIN_CHARS = 200_000
T = TypeVar("T")


def _capped(html: str) -> tuple[str, bool]:
    """``html`` within ``MAX_PARSE_CHARS`` and about ``MAX_PARSE_TAGS`` tags (cut in
    proportion to its tags: counting them is a few ms, finding the exact place would not be),
    and whether it was cut for its tags."""
    html = html[:MAX_PARSE_CHARS]
    tags = html.count("<")
    if tags <= MAX_PARSE_TAGS:
        return html, False
    return html[: len(html) * MAX_PARSE_TAGS // tags], True


def _parse(fetched: Fetched, deadline: float) -> ParsedPage:
    """The page ``fetched`` holds; a body that is no text, whatever its type says
    (``Fetched.looks_binary``: a PNG served as ``text/html`` was parsed and shown to the
    navigator as a page of mojibake), is a file of so many bytes."""
    if fetched.is_html and not fetched.looks_binary:
        html, cut = _capped(fetched.text())
        page = parse_page(html, fetched.url, deadline=deadline)
        if cut and not page.cut:
            page.cut = f"the page has too many tags: only the first {MAX_PARSE_TAGS:,} are read"
        return page
    title = urlsplit(fetched.url).path.rsplit("/", 1)[-1] or fetched.url
    parsed = ParsedPage(LexborHTMLParser(""), fetched.url, fetched.url, title)
    if fetched.is_text and not fetched.looks_binary:
        parsed.text = fetched.text()[:MAX_PLAIN_CHARS]
    else:
        kind = fetched.content_type or "binary"
        parsed.text = f"(a {kind} file of {len(fetched.body)} bytes, not text)"
    return parsed


async def _off_loop(what: str, timeout_s: float, fn: Callable[[], T]) -> T:
    try:
        async with asyncio.timeout(timeout_s + GRACE_S):
            return await asyncio.to_thread(fn)
    except TimeoutError:
        raise BrowserError(
            f"reading {what} took over {timeout_s + GRACE_S:g} s; it is not shown"
        ) from None


async def read_page(fetched: Fetched, *, timeout_s: float) -> ParsedPage:
    """``fetched`` decoded and parsed in a thread, the walk stopped at ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    return await _off_loop(fetched.url, timeout_s, partial(_parse, fetched, deadline))


async def read_text(html: str, url: str, *, timeout_s: float) -> str:
    """The readable text of ``html`` (a rendered DOM), worked out in a thread."""
    deadline = time.monotonic() + timeout_s

    def work() -> str:
        return readable_text(_capped(html)[0], deadline=deadline)

    return await _off_loop(url, timeout_s, work)
