"""Observation size: what the browsing agent sends the model, against raw HTML and Markdown.

For each page, fetched through ``HttpBrowser`` from a local server:

- **raw HTML**: the page as served;
- **Markdown**: a plain HTML-to-Markdown conversion of the whole page (``markdownify``, from
  the ``bench`` extra), what a naive agent would send;
- **observation**: ``Observation.render()`` at the configured budget
  (``browser.observation_tokens``, 2,000 by default), what the model gets per step;
- **full observation**: every element and all readable text, no budget (compaction alone);
- **addressable**: the share of the page's interactive elements the first window makes
  reachable (listed with an index the model can act on, or a repeat of a listed link with the
  same text and target), and how many windows ``scroll`` needs to reach all.

Pages: the local test site (``tests/site.py``) and real documentation, the HTML that Debian's
``python3-doc`` package installs under ``/usr/share/doc/python3*/html``, served on 127.0.0.1
(skipped with a note when the package is not installed: ``apt-get install python3-doc``).
Tokens are ``skillrt``'s estimate (about four characters a token, one a CJK character).

Run alone: ``python -m benchmarks.bench_observation``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import statistics
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from benchmarks._common import row

__all__ = ["observation_size", "python_docs_root"]

SITE_PAGES = [
    "/",
    "/search",
    "/login",
    "/articles/",
    "/articles/atlantis",
    "/results?q=the",
    "/many",
]
DOC_PAGES = [
    "index.html",
    "library/index.html",
    "library/functions.html",
    "library/stdtypes.html",
    "library/asyncio-task.html",
    "library/os.html",
    "library/re.html",
    "tutorial/classes.html",
    "reference/datamodel.html",
    "howto/logging.html",
]


def python_docs_root() -> Path | None:
    """Where python3-doc put its HTML, or None when it is not installed."""
    for candidate in sorted(Path("/usr/share/doc").glob("python3*/html"), reverse=True):
        if (candidate / "library" / "functions.html").is_file():
            return candidate
    return None


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def _serve(root: Path) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _markdown(html: str) -> str | None:
    try:
        from markdownify import markdownify
    except ImportError:
        return None
    text: str = markdownify(html, heading_style="ATX")
    return text


async def _measure(urls: list[str], budget: int) -> list[dict[str, Any]]:
    from skillrt import load_config
    from skillrt.llm.base import estimate_tokens
    from skillrt.skills.browsing import HttpBrowser, ScrollAction, URLFirewall, browser_config
    from skillrt.skills.browsing.observation import compose_observation

    config = browser_config(load_config(browser={"observation_tokens": budget}))
    browser = HttpBrowser(config, URLFirewall(allow_private=["127.0.0.1"]))
    out = []
    try:
        for url in urls:
            await browser.goto(url)
            page = browser._page  # the parsed page, to count and to convert
            if page is None:
                continue
            html = page.fetched.text()
            observation = await browser.observe()
            windows = 1
            while observation.elements_below and windows < 1000:
                await browser.act(ScrollAction(direction="down"))
                observation_next = await browser.observe()
                if observation_next.elements_above == observation.elements_above:
                    break
                observation, windows = observation_next, windows + 1
            await browser.goto(url)
            first = await browser.observe()
            parsed = page.parsed
            full = compose_observation(
                url, parsed.title, parsed.elements, parsed.text, budget_tokens=10**9
            )
            markdown = _markdown(html)
            total = len(parsed.elements)
            listed = {(e.role, e.text, e.href) for e in first.elements}
            covered = sum((e.role, e.text, e.href) in listed for e in parsed.elements)
            out.append(
                {
                    "url": url,
                    "raw_tokens": estimate_tokens(html),
                    "markdown_tokens": estimate_tokens(markdown) if markdown is not None else None,
                    "observation_tokens": estimate_tokens(first.render()),
                    "full_observation_tokens": estimate_tokens(full.render()),
                    "elements": total,
                    "listed_first_window": len(first.elements),
                    "addressable_first_window": covered,
                    "windows_for_all_elements": windows,
                    "truncated": first.truncated,
                }
            )
    finally:
        await browser.close()
    return out


def _summary(label: str, pages: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    if not pages:
        return []
    raw = sum(p["raw_tokens"] for p in pages)
    obs = sum(p["observation_tokens"] for p in pages)
    full = sum(p["full_observation_tokens"] for p in pages)
    md_values = [p["markdown_tokens"] for p in pages if p["markdown_tokens"] is not None]
    elements = sum(p["elements"] for p in pages)
    first = sum(p["addressable_first_window"] for p in pages)
    median_share = statistics.median(
        p["addressable_first_window"] / max(p["elements"], 1) for p in pages
    )
    most_windows = max(p["windows_for_all_elements"] for p in pages)
    rows = [
        row(f"{label}: raw HTML", raw / len(pages), "tokens/page", note=f"{len(pages)} pages"),
        row(
            f"{label}: Markdown (markdownify)",
            sum(md_values) / len(md_values) if md_values else None,
            "tokens/page",
            note=None if md_values else "markdownify not installed (pip install 'skillrt[bench]')",
        ),
        row(
            f"{label}: observation",
            obs / len(pages),
            "tokens/page",
            target=f"<= {budget}",
            met=max(p["observation_tokens"] for p in pages) <= budget * 1.1,
            note=f"{raw / max(obs, 1):.0f}x smaller than the HTML"
            + (f", {sum(md_values) / max(obs, 1):.1f}x than Markdown" if md_values else ""),
        ),
        row(
            f"{label}: full observation (no budget)",
            full / len(pages),
            "tokens/page",
            note=f"{raw / max(full, 1):.1f}x smaller than the HTML with nothing cut",
        ),
        row(
            f"{label}: elements addressable in the first window",
            100.0 * first / max(elements, 1),
            "%",
            note=(
                f"{first} of {elements}; median page {median_share:.0%}; all reachable by"
                f" scrolling (max {most_windows} windows)"
            ),
        ),
    ]
    return rows


def observation_size(budget: int = 2000) -> dict[str, Any]:
    """Observation tokens vs raw HTML vs Markdown over the test site and Python's docs."""
    from tests.site import TestSite

    details: dict[str, Any] = {"budget_tokens": budget}
    with TestSite() as site:
        details["test_site"] = asyncio.run(_measure([site.url(p) for p in SITE_PAGES], budget))
    docs = python_docs_root()
    if docs is None:
        details["python_docs"] = []
        details["python_docs_note"] = "python3-doc is not installed (apt-get install python3-doc)"
    else:
        with _serve(docs) as base:
            urls = [f"{base}/{p}" for p in DOC_PAGES if (docs / p).is_file()]
            details["python_docs"] = asyncio.run(_measure(urls, budget))
        details["python_docs_root"] = str(docs)
    rows = _summary("test site", details["test_site"], budget)
    rows += _summary("Python docs", details["python_docs"], budget)
    if docs is None:
        rows.append(row("Python docs", None, note=details["python_docs_note"]))
    return {
        "name": "observation",
        "title": "Browsing: observation size vs raw HTML vs Markdown",
        "params": {"budget_tokens": budget},
        "rows": rows,
        "details": details,
    }


if __name__ == "__main__":
    result = observation_size()
    for r in result["rows"]:
        value = r["value"]
        shown = f"{value:,.1f}" if isinstance(value, float) else str(value)
        print(f"{r['metric']:<55} {shown:>10} {r['unit']:<12} {r['note'] or ''}")
    print(json.dumps(result["details"], indent=1)[:4000])
