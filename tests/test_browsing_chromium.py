"""ChromiumBrowser on the local site: the same observations as HTTP, the firewall in the route.

Marked ``chromium``: skipped with the reason when Playwright or Chromium is missing, and a
failure instead when ``SKILLRT_REQUIRE_CHROMIUM=1`` (CI).
"""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from skillrt import load_config
from skillrt.exceptions import BrowserError, HostUnresolved, MissingDependency, URLNotAllowed
from skillrt.skills.browsing import (
    ChromiumBrowser,
    ClickAction,
    HttpBrowser,
    Observation,
    SubmitAction,
    TypeAction,
    URLFirewall,
)
from skillrt.skills.browsing.browser import run_action
from skillrt.skills.browsing.chromium_browser import CHROMIUM_ARGS
from skillrt.skills.browsing.config import browser_config
from tests.browsing_support import require_chromium
from tests.netsec_support import Server
from tests.site import SECRET_NUMBER, TARGET_CODE, TestSite

pytestmark = pytest.mark.chromium


@pytest.fixture(scope="module")
def site() -> Iterator[TestSite]:
    with TestSite() as running:
        yield running


def firewall() -> URLFirewall:
    return URLFirewall(allow_private=["127.0.0.1"], deny=["evil.example"])


@pytest.fixture
async def chromium() -> AsyncIterator[ChromiumBrowser]:
    require_chromium()
    browser = ChromiumBrowser(browser_config(load_config()), firewall())
    yield browser
    await browser.close()


def elements_of(observation: Observation) -> list[str]:
    return [e.render(observation.url) for e in observation.elements]


@pytest.mark.parametrize("path", ["/search", "/login", "/articles/", "/results?q=rust"])
async def test_observations_match_the_http_backend(
    site: TestSite, chromium: ChromiumBrowser, path: str
) -> None:
    http = HttpBrowser(browser_config(load_config()), firewall())
    try:
        await http.goto(site.url(path))
        await chromium.goto(site.url(path))
        plain, rendered = await http.observe(), await chromium.observe()
    finally:
        await http.close()
    assert elements_of(rendered) == elements_of(plain)
    assert rendered.title == plain.title
    assert rendered.text == plain.text


async def test_log_in_and_read_the_account(site: TestSite, chromium: ChromiumBrowser) -> None:
    await chromium.goto(site.url("/login"))
    obs = await chromium.observe()
    assert "prefilled-secret" not in obs.render()
    await chromium.act(TypeAction(index=5, text="alice"), obs.elements[4].signature)
    await chromium.act(TypeAction(index=6, text="wonderland"))
    shown = (await chromium.observe()).render()
    assert "wonderland" not in shown
    assert '[6] textbox "Password" type=password value=<filled>' in shown
    result = await chromium.act(SubmitAction())
    assert result.navigated and chromium.url == site.url("/account")
    assert SECRET_NUMBER in (await chromium.observe()).text


async def test_a_re_rendered_element_is_found_by_signature(
    site: TestSite, chromium: ChromiumBrowser
) -> None:
    await chromium.goto(site.url("/live-reorder"))
    seen = await chromium.observe()
    target = next(e for e in seen.elements if e.text == "Target")
    await asyncio.sleep(0.4)  # being observed, the page rebuilt its list in another order
    result = await run_action(chromium, ClickAction(index=target.index), seen)
    assert result.success and result.resolved_by == "signature"
    assert TARGET_CODE in (await chromium.observe()).text


async def test_refused_navigations_leave_the_page_where_it_was(
    site: TestSite, chromium: ChromiumBrowser
) -> None:
    await chromium.goto(site.url("/news"))
    obs = await chromium.observe()
    prize = next(e for e in obs.elements if e.text == "Claim your prize")
    with pytest.raises(URLNotAllowed, match=r"denied by rule 'evil\.example'"):
        await chromium.act(ClickAction(index=prize.index))
    assert chromium.url == site.url("/news")
    assert "harbour festival" in (await chromium.observe()).text
    for url, why in (
        ("file:///etc/passwd", "scheme file:"),
        ("chrome://settings", "scheme chrome:"),
        (site.url("/go-ten"), "private address"),
    ):
        with pytest.raises(URLNotAllowed, match=why):
            await chromium.goto(url)
    assert chromium.url == site.url("/news")


async def test_subresources_the_firewall_refuses_do_not_break_the_page(
    site: TestSite, chromium: ChromiumBrowser
) -> None:
    await chromium.goto(site.url("/embeds"))
    obs = await chromium.observe()
    assert obs.title == "Embeds" and "should not" in obs.text
    assert "GET /go-private" in site.requests  # the image's redirect was fetched, its hop refused


async def test_allowed_redirects_are_followed_hop_by_hop(
    site: TestSite, chromium: ChromiumBrowser
) -> None:
    await chromium.goto(site.url("/hop1"))
    assert chromium.url == site.url("/articles/lighthouses")
    assert chromium.title == "Lighthouses"


def test_launch_arguments() -> None:
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    ):
        assert flag in CHROMIUM_ARGS


async def test_without_playwright_the_backend_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "playwright.async_api", None)
    browser = ChromiumBrowser(browser_config(load_config()), firewall())
    with pytest.raises(MissingDependency, match=r"pip install 'skillrt\[browser\]'"):
        await browser.goto("http://127.0.0.1:9/")


WEBRTC_PAGE = """<title>Call</title><p>calling</p><script>
window.outcome = "started";
try {
  const pc = new RTCPeerConnection({iceServers: [{urls: "stun:127.0.0.1:%d"}]});
  pc.createDataChannel("x");
  pc.createOffer().then(o => pc.setLocalDescription(o)).then(() => { window.outcome = "offered"; });
} catch (e) { window.outcome = "refused: " + e; }
</script>"""


async def test_a_page_sends_no_webrtc_packets_past_the_firewall(
    chromium: ChromiumBrowser,
) -> None:
    """WebRTC's STUN goes to an IP literal over UDP, past the route and the resolver rules:
    a page could probe 127.0.0.1 or the LAN. Before, this page sent four packets to the
    listening port; now it has no RTCPeerConnection, and Chromium sends no UDP without a
    proxy."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.bind(("127.0.0.1", 0))
    listener.setblocking(False)
    page = WEBRTC_PAGE % listener.getsockname()[1]
    try:
        with Server({"/call": (200, {"Content-Type": "text/html"}, page.encode())}) as server:
            await chromium.goto(server.url("/call"))
            await asyncio.sleep(2.0)  # ICE gathering sends its STUN request at once
            assert chromium.title == "Call"
            page_obj = chromium._page
            assert page_obj is not None
            outcome = await page_obj.evaluate("window.outcome")
        with pytest.raises(BlockingIOError):
            listener.recv(2048)  # nothing arrived
    finally:
        listener.close()
    assert outcome.startswith("refused")


# --- the route's own fetch: cookies, redirects and bodies pass as the browser sent them -------


def scoped(server: Server) -> URLFirewall:
    """Only this server's port of 127.0.0.1."""
    return URLFirewall(allow_private=[f"127.0.0.1:{server.port}"])


async def settled(browser: ChromiumBrowser, gone: str) -> Observation:
    """The page once its scripts replaced ``gone`` (a few seconds at most)."""
    for _ in range(50):
        observed = await browser.observe()
        if gone not in observed.text:
            return observed
        await asyncio.sleep(0.1)
    return observed


async def test_cookies_a_page_sets_are_sent_on_the_next_navigations() -> None:
    """Two Set-Cookie headers on one answer (one HttpOnly), one on a redirect: the browser
    stores each, sends them on the next navigations and keeps HttpOnly from scripts."""
    require_chromium()
    server = Server(
        {
            "/set": (
                200,
                [("Set-Cookie", "a=1; Path=/"), ("Set-Cookie", "b=2; Path=/; HttpOnly")],
                b"<title>Set</title><p>two cookies</p>",
            ),
            "/login": (302, [("Location", "/show"), ("Set-Cookie", "c=3; Path=/")], b""),
            "/show": (
                200,
                {},
                b"<title>Show</title><p id=seen>reading</p>"
                b"<script>document.getElementById('seen').textContent ="
                b" 'script sees ' + document.cookie;</script>",
            ),
        }
    )
    with server:
        browser = ChromiumBrowser(browser_config(load_config()), scoped(server))
        try:
            await browser.goto(server.url("/set"))
            await browser.goto(server.url("/show"))
            first = await settled(browser, "reading")
            await browser.goto(server.url("/login"))
            second = await settled(browser, "reading")
        finally:
            await browser.close()
    sent = dict(server.cookies)  # the last Cookie header each path got
    assert server.cookies[0] == ("/set", "")
    assert [path for path, _ in server.cookies] == ["/set", "/show", "/login", "/show"]
    assert server.cookies[1] == ("/show", "a=1; b=2")
    assert server.cookies[2] == ("/login", "a=1; b=2")
    assert sent["/show"] == "a=1; b=2; c=3"  # the redirect's cookie, stored from its stub
    assert "script sees a=1" in first.text and "b=2" not in first.text  # HttpOnly held
    assert "script sees a=1; c=3" in second.text and "b=2" not in second.text


async def test_a_script_s_redirect_chain_is_checked_at_every_hop() -> None:
    """A fetch the page makes is followed in the route: each hop checked (a hop to another
    port of 127.0.0.1 is refused, that service gets nothing), cookies for each hop's URL."""
    require_chromium()
    with Server({"/": (200, {}, b"secret service")}) as secret:
        server = Server(
            {
                "/page": (
                    200,
                    [("Set-Cookie", "s=1; Path=/")],
                    b"<title>Chain</title><p id=ok>pending</p><p id=bad>pending</p><script>"
                    b"const show = (id, t) => { document.getElementById(id).textContent = t; };"
                    b"fetch('/c1').then(r => r.text()).then(t => show('ok', t));"
                    b"fetch('/b1').then(r => r.text()).then(t => show('bad', t),"
                    b" e => show('bad', 'refused: ' + e.name));</script>",
                ),
                "/c1": (301, {"Location": "/c2"}, b""),
                "/c2": (307, {"Location": "/c3"}, b""),
                "/c3": (200, {"Content-Type": "text/plain"}, b"end of the chain"),
                "/b1": (302, {"Location": "/b2"}, b""),
                "/b2": (302, {"Location": secret.url("/")}, b""),
            }
        )
        with server:
            browser = ChromiumBrowser(browser_config(load_config()), scoped(server))
            try:
                await browser.goto(server.url("/page"))
                observed = await settled(browser, "pending")
            finally:
                await browser.close()
    assert "end of the chain" in observed.text
    assert "refused: TypeError" in observed.text
    paths = [path for _, path, _ in server.requests]
    assert sorted(paths) == ["/b1", "/b2", "/c1", "/c2", "/c3", "/page"]
    assert secret.requests == []
    assert {path: cookie for path, cookie in server.cookies if path != "/page"} == {
        path: "s=1" for path in ("/b1", "/b2", "/c1", "/c2", "/c3")
    }


async def test_post_bodies_reach_the_server_as_the_page_sent_them() -> None:
    """A form's POST (the navigation) and a script's JSON POST, bodies byte for byte."""
    require_chromium()
    server = Server(
        {
            "/form": (
                200,
                {},
                b"<title>Form</title><p id=api>pending</p>"
                b"<form method=post action=/submit><input name=q value='caf\xc3\xa9 & co'>"
                b"<input name=n value=42><button>Send</button></form><script>"
                b"fetch('/api', {method: 'POST', headers: {'Content-Type': 'application/json'},"
                b" body: JSON.stringify({x: [1, 2], y: 'z'})}).then(r => r.text())"
                b".then(t => { document.getElementById('api').textContent = t; })"
                b".then(() => fetch('/keep', {method: 'POST', body: 'kept body'}))"
                b".then(() => fetch('/turn', {method: 'POST', body: 'turned body'}))"
                b".then(() => { document.getElementById('api').textContent += ', all sent'; });"
                b"</script>",
            ),
            "/api": (200, {"Content-Type": "text/plain"}, b"api answered"),
            "/keep": (307, {"Location": "/kept"}, b""),  # the method and the body kept
            "/kept": (200, {"Content-Type": "text/plain"}, b"kept"),
            "/turn": (303, {"Location": "/turned"}, b""),  # a GET without the body
            "/turned": (200, {"Content-Type": "text/plain"}, b"turned"),
            "/submit": (200, {}, b"<title>Thanks</title><p>received</p>"),
        }
    )
    with server:
        browser = ChromiumBrowser(browser_config(load_config()), scoped(server))
        try:
            await browser.goto(server.url("/form"))
            for _ in range(50):
                observed = await browser.observe()
                if "all sent" in observed.text:
                    break
                await asyncio.sleep(0.1)
            assert "api answered, all sent" in observed.text
            button = next(e for e in observed.elements if e.text == "Send")
            result = await browser.act(ClickAction(index=button.index))
            assert result.navigated and browser.title == "Thanks"
        finally:
            await browser.close()
    assert ("/api", b'{"x":[1,2],"y":"z"}') in server.posts
    assert ("/keep", b"kept body") in server.posts and ("/kept", b"kept body") in server.posts
    assert ("/turn", b"turned body") in server.posts and ("GET", "/turned") in {
        (method, path) for method, path, _ in server.requests
    }
    assert [path for path, _ in server.posts if path == "/turned"] == []
    assert ("/submit", b"q=caf%C3%A9+%26+co&n=42") in server.posts
    assert ("POST", "/submit", f"127.0.0.1:{server.port}") in server.requests


async def test_a_link_to_a_name_that_does_not_resolve_is_a_network_error() -> None:
    """The route's firewall could not resolve the link's host: the click fails at once with
    ``HostUnresolved`` (before, the route raised and the navigation hung to its deadline)."""
    require_chromium()

    async def no_dns(host: str, port: int) -> list[str]:
        raise OSError(-3, "Temporary failure in name resolution")

    server = Server(
        {"/": (200, {}, b"<title>Links</title><a href='http://nowhere.test/'>Away</a>")}
    )
    with server:
        fw = URLFirewall(allow_private=[f"127.0.0.1:{server.port}"], resolver=no_dns)
        browser = ChromiumBrowser(browser_config(load_config()), fw)
        try:
            await browser.goto(server.url("/"))
            link = next(e for e in (await browser.observe()).elements if e.text == "Away")
            with pytest.raises(HostUnresolved, match=r"cannot resolve host nowhere\.test"):
                await browser.act(ClickAction(index=link.index))
            assert browser.url == server.url("/")
        finally:
            await browser.close()


class CutShort:
    """A loopback server promising 100 bytes of HTML, sending 5 and hanging up."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.served = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n<p>cu")
                self.served += 1

    def __enter__(self) -> CutShort:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._listener.close()


async def test_a_body_cut_short_fails_the_navigation_at_once(tmp_path: Path) -> None:
    """The server hangs up mid-body: the navigation fails saying so, well before its deadline
    (the error in the route's read used to leave the request unanswered until then)."""
    require_chromium()
    config = browser_config(load_config(content_root=tmp_path, browser={"timeout_s": 20}))
    with CutShort() as server:
        fw = URLFirewall(allow_private=[f"127.0.0.1:{server.port}"])
        browser = ChromiumBrowser(config, fw)
        try:
            await browser._ensure()  # Chromium started: time the fetch alone
            started = time.monotonic()
            with pytest.raises(BrowserError, match=r"could not fetch http://127\.0\.0\.1:\d+/cut"):
                await browser.goto(f"http://127.0.0.1:{server.port}/cut")
            took = time.monotonic() - started
        finally:
            await browser.close()
    assert server.served >= 1
    assert took < 10, took  # the deadline is 20 s
