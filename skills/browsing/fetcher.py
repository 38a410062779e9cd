"""``SafeFetcher``: HTTP requests that pass the firewall at every hop and stay within a size cap.

httpx is created with ``follow_redirects=False``; redirects are followed here (at most
``max_redirects``), each ``Location`` checked by the firewall before it is requested. Each
request and hop connects only to the addresses the firewall approved for it
(``PinnedTransport``; a ``transport`` given for tests replaces it). 301, 302
and 303 turn a POST into a GET, 307 and 308 keep the method and body. Bodies are read raw as a
stream and decoded here (``decoding.CappedDecoder``: gzip and deflate, each step at most
256 KB) and cut at ``max_bytes`` decoded (the page is marked truncated, not refused). ``timeout_s``
is a total deadline per request: all hops and the whole body. Cookies live in
the client and so survive across requests. With a ``guard`` (``SecretGuard``), every request
and hop is checked for a secret in its URL or body before the firewall sees it.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urljoin

import httpx

from skillrt.exceptions import BrowserError
from skillrt.skills.browsing.decoding import CappedDecoder, guess_text
from skillrt.skills.browsing.firewall import URLFirewall
from skillrt.skills.browsing.pinning import PinnedTransport, pinned

if TYPE_CHECKING:
    from skillrt.skills.browsing.secret_guard import SecretGuard

__all__ = ["DEFAULT_USER_AGENT", "Fetched", "SafeFetcher"]

DEFAULT_USER_AGENT = "Mozilla/5.0 (compatible; skillrt/0.1)"
MAX_REDIRECTS = 10
_META_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


@dataclass(slots=True)
class Fetched:
    """A response, after redirects: final URL, status, content type and (capped) body."""

    url: str
    status: int
    content_type: str
    body: bytes
    truncated: bool = False
    redirects: list[str] = field(default_factory=list)
    encoding: str | None = None

    @property
    def is_html(self) -> bool:
        return self.content_type in ("text/html", "application/xhtml+xml", "")

    @property
    def is_text(self) -> bool:
        ct = self.content_type
        return ct.startswith("text/") or ct.endswith(("json", "xml", "javascript"))

    @property
    def looks_binary(self) -> bool:
        """Whether the body is no text, whatever its type says: a NUL byte in its first KiB
        (a PNG served as ``text/html`` reached the model as text), a UTF-16 one aside, and
        markup aside (a page that opens with a tag is parsed, NUL bytes and all: a hostile
        page's, read within the parser's limits, says so)."""
        head = self.body[:1024]
        if b"\x00" not in head or head.startswith(_UTF16_BOMS):
            return False
        return not head.lstrip(b" \t\r\n\xef\xbb\xbf").startswith(b"<")

    def text(self) -> str:
        for bom, codec in _BOMS:  # a byte-order mark says it first (a UTF-16 page was read
            if self.body.startswith(bom):  # as UTF-8, "��<html>…")
                return self.body[len(bom) :].decode(codec, errors="replace")
        encoding = self.encoding
        if encoding is None and self.is_html:
            found = _META_CHARSET.search(self.body[:4096])
            encoding = found.group(1).decode("ascii") if found else None
        if encoding is None:
            return guess_text(self.body)
        try:
            return self.body.decode(encoding, errors="replace")
        except LookupError:
            return guess_text(self.body)


class SafeFetcher:
    """Firewalled, size-capped, redirect-checked requests through one httpx client."""

    def __init__(
        self,
        firewall: URLFirewall,
        *,
        timeout_s: float = 20.0,
        max_bytes: int = 5_000_000,
        user_agent: str = DEFAULT_USER_AGENT,
        max_redirects: int = MAX_REDIRECTS,
        transport: httpx.AsyncBaseTransport | None = None,
        guard: SecretGuard | None = None,
    ) -> None:
        self.firewall = firewall
        self.guard = guard
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.client = httpx.AsyncClient(
            follow_redirects=False,
            timeout=httpx.Timeout(timeout_s),
            headers={
                "User-Agent": user_agent,
                "Accept-Language": "en, zh;q=0.8, *;q=0.5",
                "Accept-Encoding": "gzip, deflate",
            },
            transport=transport if transport is not None else PinnedTransport(),
            trust_env=False,
        )

    async def aclose(self) -> None:
        await self.client.aclose()

    async def request(
        self,
        method: str,
        url: str,
        *,
        data: list[tuple[str, str]] | None = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Fetched:
        """Send a request; follow redirects, checking each hop; read at most ``max_bytes``.

        ``timeout_s`` bounds the whole of it: every hop, and the body to its last byte (a page
        trickling its body is cut there, not only when it pauses longer than that). Raises
        ``URLNotAllowed`` when the firewall refuses the URL or a hop, and ``BrowserError`` for
        network failures, timeouts and redirect loops.
        """
        request_url = str(httpx.URL(url, params=params)) if params else url
        try:
            async with asyncio.timeout(self.timeout_s):
                return await self._follow(method, request_url, data, headers)
        except TimeoutError:
            raise BrowserError(
                f"timed out fetching {request_url}: no complete answer within "
                f"{self.timeout_s:g} s (browser.timeout_s)"
            ) from None

    async def _follow(
        self,
        method: str,
        url: str,
        data: list[tuple[str, str]] | None,
        headers: dict[str, str] | None,
    ) -> Fetched:
        hops: list[str] = []
        request_url = url
        for _ in range(self.max_redirects + 1):
            if self.guard is not None:  # first: a refusal must not show the secret in its URL
                self.guard.check_request(request_url, urlencode(data).encode() if data else None)
            approval = await self.firewall.approve(request_url)
            try:
                with pinned(approval):  # connect to the checked addresses, not to a new answer
                    response = await self._send(method, request_url, data, headers)
            except httpx.TimeoutException as exc:
                raise BrowserError(f"timed out fetching {request_url}: {exc!r}") from exc
            except httpx.HTTPError as exc:
                raise BrowserError(f"could not fetch {request_url}: {exc}") from exc
            if isinstance(response, Fetched):
                response.redirects = hops
                return response
            status, location = response
            hops.append(request_url)
            request_url = urljoin(request_url, location)
            if status in (301, 302, 303) and method != "HEAD":
                method, data = "GET", None
        raise BrowserError(f"more than {self.max_redirects} redirects from {url}")

    async def _send(
        self,
        method: str,
        url: str,
        data: list[tuple[str, str]] | None,
        headers: dict[str, str] | None,
    ) -> Fetched | tuple[int, str]:
        body = None
        send_headers = dict(headers or {})
        if data is not None:
            body = urlencode(data).encode()
            send_headers["Content-Type"] = "application/x-www-form-urlencoded"
        request = self.client.build_request(method, url, content=body, headers=send_headers)
        response = await self.client.send(request, stream=True)
        try:
            location = response.headers.get("location")
            if response.is_redirect and location:
                return response.status_code, location
            decoder = CappedDecoder(response.headers.get("content-encoding", ""), self.max_bytes)
            chunks: list[bytes] = []
            async for raw in response.aiter_raw():
                for piece in decoder.feed(raw):  # each piece capped: no bomb in one call
                    chunks.append(piece)
                    await asyncio.sleep(0)
                if decoder.full:
                    break
            content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
            return Fetched(
                url=str(response.url),
                status=response.status_code,
                content_type=content_type,
                body=b"".join(chunks),
                truncated=decoder.full,
                encoding=response.charset_encoding,
            )
        finally:
            await response.aclose()
