"""Path-scoped allow rules hold against encoded dot-segments and separators (issue 26, item 1).

The server here is a lax one (``Server(lax=True)``): it percent-decodes, reads ``\\`` as ``/``,
drops ``;`` parameters and removes dot-segments before routing, as many real servers do, so
``/app/%2e%2e/secret`` serves ``/secret``. The rule opens ``/app`` only; ``/secret`` must never
be served, whatever the spelling, directly or behind a redirect, in either backend.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt import load_config
from skillrt.exceptions import URLNotAllowed
from skillrt.skills.browsing.config import browser_config
from skillrt.skills.browsing.fetcher import SafeFetcher
from skillrt.skills.browsing.firewall import URLFirewall
from skillrt.skills.browsing.url_path import canonical_path, path_problem
from tests.browsing_support import require_chromium
from tests.netsec_support import ESCAPES, Server

SECRET = b"SECRET-OUTSIDE-APP-5d1e"


def lax_server() -> Server:
    routes = {
        "/app": (200, {}, b"<title>App</title><p>inside the app</p>"),
        "/app/page": (200, {}, b"<title>Page</title><p>an app page</p>"),
        "/secret": (200, {}, SECRET),
    }
    for number, escape in enumerate(ESCAPES):
        routes[f"/app/go/{number}"] = (302, {"Location": escape}, b"")
    return Server(routes, lax=True)


def served_secret(server: Server) -> list[str]:
    return [path for _, path, _ in server.requests if path == "/secret"]


async def fetch(fetcher: SafeFetcher, url: str) -> bytes:
    try:
        return (await fetcher.request("GET", url)).body
    except URLNotAllowed:
        return b""


def test_a_path_is_matched_decoded_and_without_dot_segments() -> None:
    assert canonical_path("/app/%2e%2e/secret") == "/secret"
    assert canonical_path("/app/x/../page") == "/app/page"
    assert canonical_path("/app/./x/.") == "/app/x/"
    assert canonical_path("/%E4%B8%AD?q=../x") == "/中"
    assert path_problem("/app/%2e%2e/secret") is not None
    assert path_problem("/app/..%2fsecret") is not None
    assert path_problem("/app/..;/x") is not None
    assert path_problem("/app/%252e%252e/x") is not None
    assert path_problem("/app/page%20one/%E4%B8%AD") is None
    assert path_problem("/app/.well-known/x..y") is None


@pytest.mark.parametrize("escape", ESCAPES)
async def test_the_firewall_refuses_every_spelling_of_a_path_outside_the_rule(escape: str) -> None:
    fw = URLFirewall(allow_private=["http://127.0.0.1:8000/app"])
    with pytest.raises(URLNotAllowed):
        await fw.check(f"http://127.0.0.1:8000{escape}")


async def test_an_encoded_slash_elsewhere_is_left_alone() -> None:
    """Only where a path rule may apply does an encoded separator matter."""
    fw = URLFirewall(allow_private=["http://127.0.0.1:8000/app", "127.0.0.1:9000"])
    await fw.check("http://127.0.0.1:9000/projects/a%2Fb/%2e%2e")  # another port: no path rule
    with pytest.raises(URLNotAllowed, match="encoded"):
        await fw.check("http://localhost:8000/app/..%2fsecret")  # a name may be the address


async def test_a_deny_path_rule_is_not_dodged_by_dot_segments_either() -> None:
    fw = URLFirewall(allow_private=["127.0.0.1"], deny=["http://127.0.0.1:8000/admin"])
    for url in (
        "http://127.0.0.1:8000/x/%2e%2e/admin",
        "http://127.0.0.1:8000/x/../admin/users",
        "http://127.0.0.1:8000/%61dmin",
    ):
        with pytest.raises(URLNotAllowed):
            await fw.check(url)
    await fw.check("http://127.0.0.1:8000/x/admin")


async def test_the_http_backend_never_serves_the_secret_directly_or_behind_a_redirect() -> None:
    with lax_server() as server:
        fw = URLFirewall(allow_private=[f"http://127.0.0.1:{server.port}/app"])
        fetcher = SafeFetcher(fw, timeout_s=5)
        try:
            got = [await fetch(fetcher, server.url(escape)) for escape in ESCAPES]
            hops = [await fetch(fetcher, server.url(f"/app/go/{n}")) for n in range(len(ESCAPES))]
            inside = await fetch(fetcher, server.url("/app/x/../page"))
        finally:
            await fetcher.aclose()
    assert served_secret(server) == []
    assert all(SECRET not in body for body in got + hops)
    assert b"an app page" in inside  # a literal dot-segment that stays inside still works


@pytest.mark.chromium
async def test_the_chromium_backend_never_serves_the_secret(tmp_path: Path) -> None:
    """goto (checked before the route), redirects (the route checks each hop) and links,
    images and scripts the page asks for (the route checks each request)."""
    require_chromium()
    from skillrt.skills.browsing.chromium_browser import ChromiumBrowser

    with lax_server() as server:
        tags = "".join(
            f"<a href='{e}'>link {n}</a><img src='{e}'><script src='{e}'></script>"
            for n, e in enumerate(ESCAPES)
        )
        server.routes["/app/hostile"] = (200, {}, f"<title>Hostile</title>{tags}".encode())
        fw = URLFirewall(allow_private=[f"http://127.0.0.1:{server.port}/app"])
        browser = ChromiumBrowser(browser_config(load_config(content_root=tmp_path)), fw)
        refused = 0
        try:
            await browser.goto(server.url("/app/hostile"))
            observed = await browser.observe()
            assert "link 0" in observed.render()
            for url in [server.url(e) for e in ESCAPES] + [
                server.url(f"/app/go/{n}") for n in range(len(ESCAPES))
            ]:
                try:
                    await browser.goto(url)
                except URLNotAllowed:
                    refused += 1
            text = await browser.page_text()
        finally:
            await browser.close()
    assert served_secret(server) == []
    assert SECRET.decode() not in text
    assert refused == 2 * len(ESCAPES)
