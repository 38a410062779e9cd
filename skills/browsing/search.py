"""Web search for ResearchWeb: SearXNG, DuckDuckGo's HTML endpoint or the Brave Search API.

Chosen by ``[browser.search] provider``; every request goes through the ``SafeFetcher`` (so the
firewall, the timeout and the size cap apply). ``url`` overrides the endpoint: required for
SearXNG (the instance, e.g. ``http://127.0.0.1:8888``; ``/search`` is appended), optional for
the others (tests point them at a local server). Brave needs ``api_key``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Protocol
from urllib.parse import parse_qs, urljoin, urlsplit

from selectolax.lexbor import LexborHTMLParser

from skillrt.exceptions import BrowserError, ConfigError
from skillrt.skills.browsing.config import SearchConfig
from skillrt.skills.browsing.fetcher import SafeFetcher

__all__ = [
    "BraveSearch",
    "DuckDuckGoSearch",
    "SearchProvider",
    "SearchResult",
    "SearxngSearch",
    "search_provider",
]

DUCKDUCKGO_URL = "https://html.duckduckgo.com/html/"
BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"


@dataclass(frozen=True, slots=True)
class SearchResult:
    title: str
    url: str
    snippet: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


class SearchProvider(Protocol):
    name: str

    async def search(self, query: str, max_results: int) -> list[SearchResult]: ...


def _clean(text: str) -> str:
    if "<" in text:
        body = LexborHTMLParser(f"<body>{text}</body>").body
        text = body.text(deep=True) if body is not None else text
    return " ".join(text.split())


def _keep(results: list[SearchResult], max_results: int) -> list[SearchResult]:
    seen: set[str] = set()
    kept = []
    for r in results:
        if urlsplit(r.url).scheme in ("http", "https") and r.url not in seen:
            seen.add(r.url)
            kept.append(r)
    return kept[:max_results]


def _json(body: bytes, provider: str) -> Any:
    try:
        return json.loads(body)
    except ValueError as exc:
        raise BrowserError(f"{provider} answered with something that is not JSON: {exc}") from exc


def _json_results(items: Any, snippet_key: str) -> list[SearchResult]:
    """The hits of a JSON search API: objects with ``title``, ``url`` and a snippet."""
    return [
        SearchResult(
            _clean(str(r.get("title", ""))),
            str(r.get("url", "")),
            _clean(str(r.get(snippet_key, ""))),
        )
        for r in items
        if isinstance(r, dict)
    ]


class SearxngSearch:
    """A SearXNG instance's JSON API (``format=json`` must be enabled on the instance)."""

    name = "searxng"

    def __init__(self, fetcher: SafeFetcher, url: str) -> None:
        self.fetcher = fetcher
        self.endpoint = url.rstrip("/") + "/search"

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        params = {"q": query, "format": "json"}
        fetched = await self.fetcher.request("GET", self.endpoint, params=params)
        if fetched.status != 200:
            raise BrowserError(f"searxng answered HTTP {fetched.status}")
        data = _json(fetched.body, "searxng")
        return _keep(_json_results(data.get("results", []), "content"), max_results)


class DuckDuckGoSearch:
    """DuckDuckGo's HTML endpoint (no key). Result links come wrapped in ``/l/?uddg=``."""

    name = "duckduckgo"

    def __init__(self, fetcher: SafeFetcher, url: str | None = None) -> None:
        self.fetcher = fetcher
        self.endpoint = url or DUCKDUCKGO_URL

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        fetched = await self.fetcher.request("GET", self.endpoint, params={"q": query})
        if fetched.status != 200:
            raise BrowserError(f"duckduckgo answered HTTP {fetched.status}")
        tree = LexborHTMLParser(fetched.text())
        results = []
        for item in tree.css(".result"):
            if "result--ad" in (item.attributes.get("class") or ""):
                continue
            link = item.css_first("a.result__a")
            if link is None:
                continue
            url = self._unwrap(link.attributes.get("href") or "", fetched.url)
            snippet = item.css_first(".result__snippet")
            results.append(
                SearchResult(
                    _clean(link.text(deep=True)),
                    url,
                    _clean(snippet.text(deep=True)) if snippet is not None else "",
                )
            )
        return _keep(results, max_results)

    @staticmethod
    def _unwrap(href: str, base: str) -> str:
        absolute = urljoin(base, href)
        parts = urlsplit(absolute)
        if parts.path.endswith("/l/"):
            target = parse_qs(parts.query).get("uddg")
            if target:
                return target[0]
        if parts.netloc.endswith("duckduckgo.com"):
            return ""  # an ad or an internal link
        return absolute


class BraveSearch:
    """The Brave Search API (``X-Subscription-Token``)."""

    name = "brave"

    def __init__(self, fetcher: SafeFetcher, api_key: str, url: str | None = None) -> None:
        self.fetcher = fetcher
        self.api_key = api_key
        self.endpoint = url or BRAVE_URL

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        fetched = await self.fetcher.request(
            "GET",
            self.endpoint,
            params={"q": query, "count": max_results},
            headers={"X-Subscription-Token": self.api_key, "Accept": "application/json"},
        )
        if fetched.status != 200:
            raise BrowserError(
                f"brave answered HTTP {fetched.status}", recoverable=fetched.status != 401
            )
        data = _json(fetched.body, "brave")
        web = data.get("web", {}) if isinstance(data, dict) else {}
        return _keep(_json_results(web.get("results", []), "description"), max_results)


def search_provider(config: SearchConfig, fetcher: SafeFetcher) -> SearchProvider:
    """The provider ``config`` names, sharing ``fetcher`` (and so the firewall)."""
    if config.provider == "searxng":
        if not config.url:
            raise ConfigError("config", "browser.search.url", "the SearXNG instance URL")
        return SearxngSearch(fetcher, config.url)
    if config.provider == "brave":
        if config.api_key is None:
            raise ConfigError("config", "browser.search.api_key", "a Brave Search API key")
        return BraveSearch(fetcher, config.api_key.get_secret_value(), config.url)
    return DuckDuckGoSearch(fetcher, config.url)
