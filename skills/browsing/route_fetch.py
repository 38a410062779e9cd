"""The Chromium route's fetch: one request sent to the addresses the firewall approved.

Playwright's ``route.fetch`` resolves the host name again after the firewall's check, so a
DNS server answering a public address to the check and ``127.0.0.1`` a moment later (DNS
rebinding) moved the fetch onto a private host. ``RouteFetcher.send`` takes the firewall's
``Approval`` instead and sends through the HTTP backend's ``PinnedTransport`` inside
``pinned(approval)``: the connection goes to an approved address, and the URL (so the
``Host`` header, TLS SNI and the certificate check) keeps the real host name.

It is a bare transport, not a client: no redirects followed, no cookie jar, no default
headers. The request carries Chromium's own headers (``forwarded_headers``: its ``Cookie``
among them, less the hop-by-hop ones, with ``Accept-Encoding: identity``), and the answer is
handed back to Chromium with ``route.fulfill`` (``RouteAnswer.fulfill_headers``: each
``Set-Cookie`` kept, joined by newlines as Playwright expects, so the browser stores every
cookie itself). The body is read raw, at most ``limit + 1`` bytes (``RouteAnswer.read``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import httpx

from skillrt.skills.browsing.firewall import Approval
from skillrt.skills.browsing.pinning import PinnedTransport, pinned

__all__ = [
    "HOP_BY_HOP",
    "RouteAnswer",
    "RouteFetcher",
    "cookie_header",
    "forwarded_headers",
    "next_hop",
]

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
"""Headers of one connection (RFC 9110 7.6.1): never forwarded either way."""
_SET_BY_TRANSPORT = frozenset({"host", "content-length"})
_NOT_FULFILLED = frozenset({"content-length", "content-encoding"})
"""``route.fulfill`` sets the length of the body it is given; an encoded body is refused."""


def forwarded_headers(headers: dict[str, str]) -> dict[str, str]:
    """Chromium's request headers (``request.all_headers()``), fit to send again: no HTTP/2
    pseudo-headers, no hop-by-hop headers, no ``Host`` or ``Content-Length`` (the transport
    writes those from the URL and the body), and ``Accept-Encoding: identity``."""
    kept = {
        name: value
        for name, value in headers.items()
        if not name.startswith(":")
        and name.lower() not in HOP_BY_HOP
        and name.lower() not in _SET_BY_TRANSPORT
        and name.lower() != "accept-encoding"
    }
    kept["accept-encoding"] = "identity"
    return kept


def cookie_header(cookies: Sequence[Mapping[str, object]]) -> str:
    """A ``Cookie`` header from Playwright's ``context.cookies(url)`` list."""
    return "; ".join(f"{c['name']}={c['value']}" for c in cookies)


def next_hop(
    status: int,
    method: str,
    body: bytes | None,
    headers: dict[str, str],
    source: str,
    target: str,
) -> tuple[str, bytes | None, dict[str, str]]:
    """The request a redirect from ``source`` to ``target`` calls for, as a browser sends it:
    301, 302 and 303 make it a GET without a body (a HEAD stays a HEAD), 307 and 308 keep both;
    no ``Cookie`` (the caller adds the browser's cookies for ``target``), and to another origin
    no ``Authorization`` either."""
    drop = {"cookie"}
    if status in (301, 302, 303) and method != "HEAD":
        method, body = "GET", None
        drop |= {"content-type"}
    if _origin(source) != _origin(target):
        drop |= {"authorization"}
    return method, body, {k: v for k, v in headers.items() if k.lower() not in drop}


def _origin(url: str) -> tuple[str, str, int | None]:
    parsed = httpx.URL(url)
    return parsed.scheme, parsed.host, parsed.port


@dataclass(slots=True)
class RouteAnswer:
    """A response whose head has arrived; its body is read with ``read`` (then ``aclose``)."""

    status: int
    headers: httpx.Headers
    _response: httpx.Response

    def header(self, name: str, default: str = "") -> str:
        return str(self.headers.get(name, default))

    def fulfill_headers(self) -> dict[str, str]:
        """The headers for ``route.fulfill``: each ``Set-Cookie`` on its own line (Playwright
        splits a newline-joined ``set-cookie`` back into one header per cookie), others joined
        by commas, hop-by-hop headers, the length and the encoding left out."""
        joined: dict[str, list[str]] = {}
        for name, value in self.headers.multi_items():
            key = name.lower()
            if key not in HOP_BY_HOP and key not in _NOT_FULFILLED:
                joined.setdefault(key, []).append(value)
        return {
            key: ("\n" if key == "set-cookie" else ", ").join(values)
            for key, values in joined.items()
        }

    def set_cookies(self) -> dict[str, str]:
        """Only the ``Set-Cookie`` headers, for a page that stands in for this answer."""
        values = self.headers.get_list("set-cookie")
        return {"set-cookie": "\n".join(values)} if values else {}

    async def read(self, limit: int) -> bytes:
        """The raw body, at most ``limit + 1`` bytes (one more than ``limit`` says it is over)."""
        chunks: list[bytes] = []
        size = 0
        async for chunk in self._response.aiter_raw():
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                break
        return b"".join(chunks)[: limit + 1]

    async def aclose(self) -> None:
        await self._response.aclose()


class RouteFetcher:
    """Sends the route's requests through one pinned connection pool; ``aclose()`` ends it."""

    def __init__(self) -> None:
        self._transport = PinnedTransport()

    async def send(
        self,
        approval: Approval,
        method: str,
        url: str,
        headers: dict[str, str],
        body: bytes | None,
        *,
        timeout_s: float,
    ) -> RouteAnswer:
        """Send one request to ``approval``'s addresses and return when its head arrived.

        Raises ``httpx.HTTPError`` when it cannot connect or the answer is not HTTP; the
        caller bounds the whole of it (``timeout_s`` bounds each connect, read and write)."""
        request = httpx.Request(
            method,
            url,
            headers=headers,
            content=body,
            extensions={"timeout": httpx.Timeout(timeout_s).as_dict()},
        )
        with pinned(approval):  # connect to the checked addresses, never to a new DNS answer
            response = await self._transport.handle_async_request(request)
        return RouteAnswer(response.status_code, response.headers, response)

    async def aclose(self) -> None:
        await self._transport.aclose()
