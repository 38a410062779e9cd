"""ChromiumBrowser on the local site: the same observations as HTTP, the firewall in the route.

Marked ``chromium``: skipped with the reason when Playwright or Chromium is missing, and a
failure instead when ``SKILLRT_REQUIRE_CHROMIUM=1`` (CI).
"""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import AsyncIterator, Iterator

import pytest

from skillrt import load_config
from skillrt.exceptions import MissingDependency, URLNotAllowed
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
